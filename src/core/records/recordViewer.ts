/** The record viewer: builds a row's {@link RecordView} (see recordView.ts for what it shows and the work cap). */
import { parseTree } from 'jsonc-parser';
import { rowConfigFor } from '../formats/rowSource';
import { normalizeDetailed } from '../formats/normalize';
import { rowsOfLineValue } from '../read/readers';
import { isRecordDrop, partsFate, recordFate, rowFate } from './fate';
import { maskFromSpans, type TextRecord } from './mask';
import { RecordBuilder, type BuildOutcome } from './recordBuilder';
import type { NormalizeOptions, ShapeHandler } from '../formats/base';
import { ASSIGNED_ROLES_KEY, type AssignedRoles } from '../formats/fieldRoles';
import { describeError } from '../errors';
import type { TargetTokenizer } from '../tokenizers/types';
import type { Conversation, MaskPolicy, Message } from '../types';
import { codeMeaning, isDataChanging } from '../codes';
import { jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../jsonDepth';
import { EncodingCache, TokenBudget, trainableChars, turnText } from './recordViewBudget';
import { detailOf } from './recordViewDetail';
import { fieldRanges, turnRanges } from './recordViewSource';
import { type FileRow, type RecordSummary, type RecordView, type RecordViewOptions, type RowInput, type RowVerdict } from './recordViewTypes';

/**
 * Turns one row into a {@link RecordView} with a loaded tokenizer. Keeps the
 * compiled chat templates between calls (per template and template kwargs), so
 * create one per tokenizer and reuse it.
 */
export class RecordViewer {
  /** prepare's record builder (records/recordBuilder.ts): the same template choice, records, notes and errors. */
  private readonly builder: RecordBuilder;
  private readonly specialSet: Set<string>;
  private readonly encodings = new EncodingCache();
  /** What recently viewed rows built (by line text, policy, kwargs and shortening), and their prefix renders, most recent last. */
  private readonly builtCache = new Map<string, { outcome: BuildOutcome; prefixRenders: Map<string, string> }>();

  constructor(readonly tokenizer: TargetTokenizer) {
    this.builder = new RecordBuilder(tokenizer);
    this.specialSet = new Set(tokenizer.specialTokens);
  }

  /**
   * Builds the view of one row: parse → the `eagle3prep.jsonc` that covers `input.file`, as
   * `inspect` / `prepare` apply it (its field-mapping entry, `formats/mapping.ts`, then role aliases
   * and field renames, `projectConfig.ts`) → normalize (shape, turns) → records
   * (`buildRecords` with the policy and kwargs) → tokens and loss mask
   * (`encode` + `maskFromSpans`), within the work cap.
   *
   * Never throws for bad data: an invalid JSON line, an unrecognized shape or an
   * unknown role give `status` `errored` / `dropped` with the pipeline's message
   * (and, for an unknown role, a warning on that turn); an invalid `eagle3prep.jsonc` gives
   * `errored` with the config's message (file and line). Throws only what
   * `checkCancelled` throws, and {@link NoChatTemplateError}.
   */
  view(input: RowInput, options: RecordViewOptions = {}): RecordView {
    const rest: Conversation[] = [];
    const restKinds: ('conversation' | 'prompt')[] = [];
    const view = this.viewShown(input, options, (parts) => {
      for (const p of parts) {
        rest.push(p.conversation);
        restKinds.push(p.kind);
      }
    });
    if (!rest.length) return view;
    // The other conversations of the row decide its fate with the shown one, as prepare's row processor combines them.
    const verdicts = [
      view.verdict,
      ...rest.map((c, i) => (restKinds[i] === 'prompt' ? ({ fate: 'setAside' } as const) : this.conversationVerdict(c, options))),
    ];
    view.verdict = partsFate(verdicts, (v) => (v.fate === 'written' ? v.records : 0))!;
    const w = view.warnings.find((x) => x.code === 'several_conversations');
    if (w && view.verdict.fate === 'written')
      w.message += `; prepare writes ${view.verdict.records.toLocaleString('en-US')} record${view.verdict.records === 1 ? '' : 's'} from the row`;
    return view;
  }

  /**
   * The view of a message row inside the conversations of other rows of a file read whole (run/fileRows.ts): no
   * record of its own; its verdict follows theirs as prepare's file pass decides it (`oasstRun.ts`): written (with
   * no record of its own) when one of them is written, else set aside when one is, else dropped with the pass's reason.
   */
  private partView(view: RecordView, planned: Extract<FileRow, { kind: 'part' }>, input: RowInput, options: RecordViewOptions): RecordView {
    const leafOptions = { ...options, detailRecord: undefined, element: undefined };
    const verdicts = planned.leaves.map((l) =>
      l.value === undefined
        ? ({ fate: 'dropped', code: planned.partReason } as const)
        : this.view(
            { text: JSON.stringify(l.value), file: input.file, line: l.line, fileRow: { kind: 'row', format: planned.format, value: l.value } },
            leafOptions,
          ).verdict,
    );
    const written = verdicts.some((v) => v.fate === 'written');
    const setAside = !written && verdicts.some((v) => v.fate === 'setAside');
    view.verdict = written ? { fate: 'written', records: 0 } : setAside ? { fate: 'setAside' } : { fate: 'dropped', code: planned.partReason };
    view.status = written ? 'conversation' : setAside ? 'prompt' : 'dropped';
    if (view.verdict.fate === 'dropped') view.reason = planned.partReason;
    const lines = planned.leaves.map((l) => (l.element === undefined ? `${l.line}` : `${l.line}[${l.element}]`));
    const shown = lines.length > 6 ? `${lines.slice(0, 6).join(', ')} and ${lines.length - 6} more` : lines.join(', ');
    view.message = `line ${input.line} is a message inside the conversation${lines.length === 1 ? '' : 's'} of line${lines.length === 1 ? '' : 's'} ${shown} (${planned.format}: the file is read whole); it is ${written ? 'written with them, in their records' : setAside ? 'set aside with them' : 'dropped: none of them is written'}`;
    view.warnings.push({ code: 'part_of', message: view.message });
    this.finishTotals(view);
    return view;
  }

  /**
   * The verdict of one conversation of a row that holds several (not the one shown): its records built and
   * counted within the work cap, each record's fate decided as for the shown one.
   */
  private conversationVerdict(conv: Conversation, options: RecordViewOptions): RowVerdict {
    const mask = options.mask ?? 'assistant';
    const b = this.builder.build(conv, options, { rethrowNoTemplate: true });
    if (b.kind === 'errored') return { fate: 'errored', code: b.code };
    const { built } = b;
    if (built.prompt) return { fate: 'setAside' };
    const budget = new TokenBudget(options.maxTokenizedChars ?? Infinity, this.tokenizer, this.encodings);
    const fates = built.records.map((rec) => {
      const enc = budget.encode(rec.text);
      const m = maskFromSpans(enc.starts, rec.spans);
      const c = countRecord(rec, enc, m, budget);
      return recordFateOf(c.tokens, trainableInOf(m, c.tokens, c.trainable), options, mask).summary;
    });
    return verdictOfFates(fates, built.targetErrors);
  }

  private viewShown(
    input: RowInput,
    options: RecordViewOptions,
    more: (parts: { kind: 'conversation' | 'prompt'; conversation: Conversation }[]) => void,
  ): RecordView {
    const mask = options.mask ?? 'assistant';
    const kwargs = options.templateKwargs ?? {};
    const cap = options.maxTokenizedChars ?? Infinity;
    const check = options.checkCancelled ?? (() => {});
    const text = input.text.charCodeAt(0) === 0xfeff ? input.text.slice(1) : input.text;
    const view: RecordView = {
      file: input.file,
      line: input.line,
      lineChars: input.text.length,
      status: 'errored',
      turns: [],
      records: [],
      totals: { tokens: 0, trainableTokens: 0, records: 0, estimated: false },
      warnings: [],
      notes: [],
      tokenizer: { name: this.tokenizer.name, dir: this.tokenizer.dir },
      mask,
      templateKwargs: kwargs,
      verdict: { fate: 'errored', code: 'invalid_json' },
    };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      view.message = `line ${input.line} is not valid JSON: ${(e as Error).message}`;
      view.warnings.push({ code: 'invalid_json', message: view.message });
      return view;
    }
    // As readers.ts refuses it: later steps (jsonc-parser's tree below, templates) recurse once per level.
    if (text.length > MAX_JSON_DEPTH && jsonTextDepth(text) > MAX_JSON_DEPTH) {
      view.message = `line ${input.line}: ${tooDeepMessage()}`;
      view.warnings.push({ code: 'invalid_json', message: view.message });
      return view;
    }
    const planned = input.fileRow;
    if (planned?.kind === 'part') return this.partView(view, planned, input, options);
    if (planned) value = planned.value;
    // A line that is a list: its turns (one conversation), or several rows, as the readers read it.
    const lineRows = planned ? undefined : rowsOfLineValue(value);
    let element: number | undefined;
    if (lineRows) {
      const k = Math.min(Math.max(0, options.element ?? 0), lineRows.length - 1);
      value = lineRows[k].value;
      element = lineRows[k].element;
      if (lineRows.length > 1)
        view.warnings.push({
          code: 'line_holds_rows',
          message: `line ${input.line} holds ${lineRows.length} rows (a list of objects): the view shows the ${k === 0 ? 'first' : `row ${k + 1}`}; prepare reads each as its own row`,
        });
    }
    // The eagle3prep.jsonc of the file, as readRows + inspect / prepare apply it: the field mapping
    // entry (formats/mapping.ts) first, then role aliases and field renames (projectConfig.ts).
    let configKey: string;
    const fieldSource: Record<string, string> = {};
    let reading: NormalizeOptions;
    try {
      // The one row source's config (formats/rowSource.ts), as prepare, inspect and Problems apply it.
      const config = rowConfigFor(input.file, { answers: options.answers });
      const { mapping, project } = config;
      reading = config.reading;
      configKey = config.key;
      // A planned row of a file read whole has the config applied already (run/fileRows.ts).
      const raw = planned ? value : config.map(value);
      if (!planned) value = config.apply(raw, true);
      // A field mapping renames only when the row does not already have the target (projectConfig.ts).
      const had = (k: string) => !planned && raw !== null && typeof raw === 'object' && k in raw;
      for (const [from, to] of Object.entries(project?.fieldMappings ?? {})) if (!had(to)) fieldSource[to] = from;
      if (mapping && !mapping.entry.turns.includes('.')) fieldSource.messages = mapping.entry.turns;
      if (mapping?.entry.system && !mapping.entry.system.includes('.')) fieldSource.system = mapping.entry.system;
      // Fields eagle3prep.jsonc "fieldRoles" moved to where their role is read (`response` ← `worked_solution`).
      const roled = (value as Record<string, unknown> | null)?.[ASSIGNED_ROLES_KEY] as AssignedRoles | undefined;
      for (const [to, from] of Object.entries(roled?.renamed ?? {})) if (!from.includes('.')) fieldSource[to] = from;
    } catch (e) {
      view.message = describeError(e);
      view.warnings.push({ code: 'errored', message: view.message });
      view.verdict = { fate: 'errored', code: 'errored' };
      return view;
    }
    check();
    const fileBase = input.file.split(/[\\/]/).pop() ?? input.file;
    const source = element === undefined ? { file: input.file, line: input.line } : { file: input.file, line: input.line, element };
    const detailed = normalizeDetailed(value, source, fileBase, reading);
    const { outcome, handler } = detailed;
    // The row the shape matched (a double-encoded line's decoded object), as normalization read it.
    const row = (detailed.row ?? value) as Record<string, unknown>;
    if (handler) view.shape = { format: handler.name, description: describeShape(handler, row) };
    if (outcome.kind === 'dropped') {
      view.status = 'dropped';
      view.reason = outcome.reason;
      view.message = outcome.message;
      view.warnings.push({ code: 'dropped', message: `dropped (${outcome.reason}): ${outcome.message}` });
      view.verdict = { fate: 'dropped', code: outcome.reason };
      return view;
    }
    if (outcome.kind === 'errored') {
      view.message = outcome.message;
      view.warnings.push(
        outcome.code === 'unknown_role' && outcome.turn !== undefined
          ? { code: 'unknown_role', message: outcome.message, turn: outcome.turn }
          : { code: 'errored', message: outcome.message },
      );
      view.verdict = { fate: 'errored', code: outcome.code ?? 'errored' };
      return view;
    }
    // A row holding several conversations (Self-Instruct instances, conversation lists): the first is shown.
    const shown = outcome.kind === 'split' ? outcome.parts[0] : outcome;
    if (outcome.kind === 'split') {
      more(outcome.parts.slice(1));
      view.warnings.push({
        code: 'several_conversations',
        message: `the row holds ${outcome.parts.length} conversations (one record each); the first is shown`,
      });
    }
    const conv = shown.conversation;
    view.status = shown.kind;
    if (conv.unreadFields?.length) {
      view.warnings.push({ code: 'fields_not_read', message: `fields not read (neither a known field nor metadata): ${conv.unreadFields.join(', ')}` });
    }
    view.id = conv.id;
    view.notes.push(...(conv.notes ?? []));
    const ranges = turnRanges(text, view.shape?.description, conv.messages, row, fieldSource);
    check();

    const budget = new TokenBudget(cap, this.tokenizer, this.encodings);
    // Over 4x the cap, shorten each turn's texts before rendering (see the module comment).
    const shorten = input.text.length > 4 * cap;
    const removed: number[] = conv.messages.map(() => 0);
    let renderConv: Conversation = conv;
    if (shorten) {
      const keep = Math.max(256, Math.floor(cap / Math.max(1, conv.messages.length)));
      const cut = (s: string | undefined, i: number): string | undefined => {
        if (s === undefined || s.length <= keep) return s;
        removed[i] += s.length - keep;
        return s.slice(0, keep);
      };
      renderConv = {
        ...conv,
        messages: conv.messages.map((m, i) => {
          const c: Message = { ...m, content: m.content === null ? null : cut(m.content, i)! };
          if (m.reasoning_content !== undefined) c.reasoning_content = cut(m.reasoning_content, i);
          return c;
        }),
      };
      view.warnings.push({
        code: 'estimated',
        message: `the line has ${input.text.length.toLocaleString('en-US')} characters, over 4 × the work cap (${cap.toLocaleString('en-US')}): turns were shortened to ${keep.toLocaleString('en-US')} characters for rendering; token counts are estimates`,
      });
    }

    // Field positions are for the mask view's "reveal in source" (one parse of the line).
    const tree = options.detailRecord !== undefined ? parseTree(text) : undefined;
    conv.messages.forEach((m, i) => {
      const t = turnText(m);
      const c = budget.count(t);
      const fields = tree ? fieldRanges(tree, ranges[i], m) : undefined;
      view.turns.push({
        index: i,
        role: m.role,
        chars: t.length,
        tokens: c.tokens,
        estimated: c.estimated,
        target: false,
        range: ranges[i],
        ...(fields ? { fields } : {}),
      });
      if (m.role === 'assistant' && !(m.content ?? '').trim() && !(m.reasoning_content ?? '').trim() && !m.tool_calls?.length) {
        view.warnings.push({
          code: 'empty_assistant_turn',
          message: `turn ${i + 1} (assistant) is empty: it has no text, reasoning or tool call, so it is not trained`,
          turn: i,
        });
      }
    });
    check();

    if (shown.kind === 'prompt') {
      view.warnings.push({ code: 'set_aside', message: 'no assistant turn: the row is set aside in prompts_to_generate.jsonl for the target model to answer' });
      view.verdict = { fate: 'setAside' };
      this.finishTotals(view);
      return view;
    }

    // The template is part of the key through the text and config (its tools) and the kwargs.
    const key = `${mask}\0${options.grouping ?? 'exact'}\0${options.reasoning ?? 'keep'}\0${JSON.stringify(kwargs)}\0${shorten ? cap : ''}\0${configKey}\0${text}`;
    let entry = this.builtCache.get(key);
    if (entry) this.builtCache.delete(key);
    else entry = { outcome: this.builder.build(renderConv, options, { rethrowNoTemplate: true }), prefixRenders: new Map() };
    // A template that raised or ran out of budget is tried again on the next view (its budget has a time limit).
    if (entry.outcome.kind === 'built' || entry.outcome.from === 'rules') this.builtCache.set(key, entry);
    while (this.builtCache.size > 8) this.builtCache.delete(this.builtCache.keys().next().value!);
    const { outcome: got, prefixRenders } = entry;
    if (got.template) view.template = got.template.named.name;
    if (got.kind === 'errored' && got.from === 'template') {
      view.status = 'errored';
      view.message = got.message;
      view.warnings.push({ code: 'template_error', message: view.message });
      view.verdict = { fate: 'errored', code: got.code };
      return view;
    }
    check();
    for (const n of got.kind === 'built' ? got.built.notes : got.notes) if (!view.notes.includes(n)) view.notes.push(n);
    if (got.kind === 'errored') {
      view.status = 'errored';
      view.message = got.message;
      view.warnings.push({ code: got.code, message: view.message });
      view.verdict = { fate: 'errored', code: got.code };
      return view;
    }
    const { built, template } = got;
    if (built.prompt) {
      view.status = 'prompt';
      view.warnings.push({
        code: 'set_aside',
        message:
          'the trailing empty assistant turn is a generation placeholder and no turn is left to train: the row is set aside in prompts_to_generate.jsonl for the target model to answer',
      });
      view.verdict = { fate: 'setAside' };
      this.finishTotals(view);
      return view;
    }
    // Data-changing notes of the rules are warnings here, with their meaning (core/codes.ts).
    for (const n of built.notes) if (isDataChanging(n)) view.warnings.push({ code: n, message: `${n}: ${codeMeaning(n)}` });
    for (const te of built.targetErrors) view.warnings.push({ code: te.reason, message: te.message, turn: te.index });
    if (built.targetCount === 0)
      view.warnings.push({ code: 'no_trainable_tokens', message: `no turn is a target under the "${mask}" policy: the row is dropped (no_trainable_tokens)` });
    for (const r of built.records) for (const t of r.targets) if (view.turns[t]) view.turns[t].target = true;
    if (mask === 'non-system') for (const t of view.turns) t.target = t.role !== 'system';

    built.records.forEach((rec, r) => {
      check();
      const detail = r === options.detailRecord;
      const enc = detail ? this.encodeExact(rec.text) : budget.encode(rec.text);
      const m = maskFromSpans(enc.starts, rec.spans);
      let { tokens, trainable, estimated } = countRecord(rec, enc, m, budget);
      if (shorten) {
        // Characters removed before rendering, each turn's at that turn's own rate (its counted text's).
        const lastMsg = Math.max(...rec.targets, 0);
        const rate = (i: number) => (view.turns[i]?.chars ? view.turns[i].tokens / view.turns[i].chars : budget.rate());
        for (let i = 0; i <= lastMsg && i < removed.length; i++) tokens += Math.round(removed[i] * rate(i));
        for (const t of rec.targets) trainable += Math.round(removed[t] * rate(t));
        if (mask === 'non-system')
          for (let i = 0; i < removed.length; i++)
            if (conv.messages[i].role !== 'system' && !rec.targets.includes(i)) trainable += Math.round(removed[i] * rate(i));
        estimated = true;
      }
      view.records.push({
        index: r,
        id: built.records.length > 1 ? `${conv.id}#${r}` : conv.id,
        tokens,
        trainableTokens: trainable,
        estimated,
        targets: [...rec.targets],
        chars: rec.text.length,
        fate: 'written',
      });
      // The record's fate as prepare decides it (records/fate.ts), from these counts: the trainable
      // tokens of a cut record from the mask where it was tokenized, in proportion past that.
      const trainableIn = trainableInOf(m, tokens, trainable);
      const count = `${estimated ? '≈' : ''}${tokens.toLocaleString('en-US')}`;
      const { fate, splitUp, summary } = recordFateOf(tokens, trainableIn, options, mask);
      view.records[view.records.length - 1].fate = summary;
      if (splitUp) {
        view.warnings.push({
          code: 'record_split',
          message: `record ${r + 1} has ${count} tokens, over the max length ${options.maxLength!.toLocaleString('en-US')}: prepare splits the conversation into records that fit (long records: split)`,
        });
      } else if (!fate.written && fate.reason === 'too_long') {
        view.warnings.push({
          code: 'too_long',
          message: `record ${r + 1} has ${count} tokens, over the max length ${options.maxLength!.toLocaleString('en-US')}: prepare drops it (too_long) unless truncate is set`,
        });
      } else if (fate.truncated) {
        view.warnings.push({
          code: 'record_truncated',
          message: `record ${r + 1} has ${count} tokens: prepare keeps its first ${options.maxLength!.toLocaleString('en-US')} (truncate)`,
        });
      }
      if (!fate.written && fate.reason === 'no_trainable_tokens')
        view.warnings.push({
          code: 'no_trainable_tokens',
          message: `record ${r + 1} has no trainable token${fate.truncated ? ' after the cut' : ''}: prepare drops it`,
        });
      if (!fate.written && fate.reason === 'too_few_trainable_tokens')
        view.warnings.push({
          code: 'too_few_trainable_tokens',
          message: `record ${r + 1} has ${trainableIn(fate.truncated ? options.maxLength! : tokens)} trainable tokens, fewer than the minimum ${options.minTrainableTokens}: prepare drops it`,
        });
      else if (!fate.written && fate.reason !== 'too_long' && fate.reason !== 'no_trainable_tokens') {
        // Another record rule of records/fate.ts: its reason code, with the counts it decides on.
        const kept = fate.truncated ? options.maxLength! : tokens;
        view.warnings.push({
          code: fate.reason,
          message: `record ${r + 1} has ${trainableIn(kept)} trainable tokens of ${fate.truncated ? kept.toLocaleString('en-US') : count}: prepare drops it (${fate.reason})`,
        });
      }
      if (detail)
        view.detail = detailOf(
          this.tokenizer,
          this.specialSet,
          r,
          rec,
          enc.ids,
          enc.starts,
          m,
          renderConv,
          built.messages,
          template,
          view.turns,
          prefixRenders,
        );
    });
    if (options.detailRecord !== undefined && !view.detail && built.records.length > 0) {
      // Out of range: clamp to the last record.
      const r = Math.min(Math.max(0, options.detailRecord), built.records.length - 1);
      const rec = built.records[r];
      const enc = this.encodeExact(rec.text);
      view.detail = detailOf(
        this.tokenizer,
        this.specialSet,
        r,
        rec,
        enc.ids,
        enc.starts,
        maskFromSpans(enc.starts, rec.spans),
        renderConv,
        built.messages,
        template,
        view.turns,
        prefixRenders,
      );
    }
    this.finishTotals(view);
    view.verdict = verdictOfFates(
      view.records.map((r) => r.fate),
      built.targetErrors,
    );
    if (view.totals.estimated && !shorten) {
      view.warnings.push({
        code: 'estimated',
        message: `token counts are estimates: the work cap tokenizes ${cap.toLocaleString('en-US')} characters per hover (setting eagle3prep.hover.maxTokenizedCharacters)`,
      });
    }
    return view;
  }

  /** Encodes a whole text (no cap), through the encoding cache. */
  private encodeExact(text: string): { ids: number[]; starts: number[]; cut: number } {
    let e = this.encodings.get(text);
    if (!e) {
      const enc = this.tokenizer.encode(text);
      e = { ids: enc.ids, starts: enc.starts };
      this.encodings.set(text, e);
    }
    return { ...e, cut: text.length };
  }

  private finishTotals(view: RecordView): void {
    view.totals = {
      tokens: view.records.reduce((a, r) => a + r.tokens, 0),
      trainableTokens: view.records.reduce((a, r) => a + r.trainableTokens, 0),
      records: view.records.length,
      estimated: view.records.some((r) => r.estimated) || view.turns.some((t) => t.estimated),
    };
  }
}

/**
 * A conversation's verdict from its records' fates, as the row processor decides it (records/fate.ts `rowFate`):
 * written when a record is (a record `prepare` splits counts once), else errored with the first target error,
 * else dropped with the last record's reason.
 */
function verdictOfFates(fates: readonly RecordSummary['fate'][], targetErrors: readonly { reason: string; message: string }[]): RowVerdict {
  const written = fates.filter((f) => f === 'written' || f === 'truncated' || f === 'split').length;
  const drops = fates.filter(isRecordDrop);
  const row = rowFate({ written, drops, targetErrors });
  if (row.fate === 'written') return { fate: 'written', records: written };
  if (row.fate === 'errored') return { fate: 'errored', code: row.targetError.reason };
  return { fate: 'dropped', code: row.reason };
}

/** A shape's description of a row; a description that fails on odd data names the shape alone (the view never throws for data). */
function describeShape(handler: ShapeHandler, row: Record<string, unknown>): string {
  try {
    return handler.describe(row);
  } catch {
    return handler.name;
  }
}

/**
 * A record's tokens and trainable tokens from its encoding, extrapolated past the part the work cap tokenized
 * (`estimated`): the last sampled token may be cut, so the rest is counted from its start at the observed rate.
 */
function countRecord(
  rec: TextRecord,
  enc: { ids: number[]; starts: number[]; cut: number; restRate?: number },
  m: readonly number[],
  budget: TokenBudget,
): { tokens: number; trainable: number; estimated: boolean } {
  let tokens = enc.ids.length;
  let trainable = m.reduce((a, b) => a + b, 0);
  if (enc.cut >= rec.text.length) return { tokens, trainable, estimated: false };
  const from = enc.starts.length ? enc.starts[enc.starts.length - 1] : 0;
  tokens -= 1;
  trainable -= m.length ? m[m.length - 1] : 0;
  const rate = enc.restRate ?? budget.rate(); // the record's own sampled rate (tokenEstimate.ts)
  tokens += Math.round((rec.text.length - from) * rate);
  trainable += Math.round(trainableChars(rec.spans, from, rec.text.length) * rate);
  return { tokens, trainable, estimated: true };
}

/** The trainable tokens among a record's first `n` tokens: from the mask where it was tokenized, in proportion past that. */
function trainableInOf(m: readonly number[], tokens: number, trainable: number): (n: number) => number {
  return (n) => (n >= tokens ? trainable : n <= m.length ? m.slice(0, n).reduce((a, b) => a + b, 0) : Math.round((trainable * n) / tokens));
}

/** The record's fate as prepare decides it (records/fate.ts) under the view's options, and its summary (`split` when `--long split` splits it). */
function recordFateOf(
  tokens: number,
  trainableIn: (n: number) => number,
  options: RecordViewOptions,
  mask: MaskPolicy,
): { fate: ReturnType<typeof recordFate>; splitUp: boolean; summary: RecordSummary['fate'] } {
  const splits = options.long === 'split' && mask !== 'non-system';
  const fate = recordFate(tokens, trainableIn, { ...options, maxLength: splits ? undefined : options.maxLength, truncate: options.long === 'truncate' });
  const splitUp = splits && options.maxLength !== undefined && tokens > options.maxLength;
  return { fate, splitUp, summary: splitUp ? 'split' : fate.written ? (fate.truncated ? 'truncated' : 'written') : fate.reason };
}
