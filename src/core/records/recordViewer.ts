/**
 * What one dataset row becomes, for a person looking at it (the record hover and the mask view): its detected shape,
 * its turns (with where each one lies in the JSON line), the records it yields as tokens with their loss mask, totals
 * and warnings.
 *
 * Pure (no `vscode`). The row goes through `prepare`'s one row path, records/rowTrace.ts `traceRow` (normalize →
 * records → tokens and loss mask → `--long split` → fate), so what is shown is what `prepare` writes; the viewer reads
 * the line (JSON, the `eagle3prep.jsonc` that covers the file, formats/rowSource.ts) and decorates the trace: turn
 * positions inside the line (`jsonc-parser`'s syntax tree, recordViewSource.ts), the mask view's token detail
 * (recordViewDetail.ts), warnings with their meaning.
 *
 * Work cap: a hover must answer fast even on a 1 MB line, so the trace tokenizes at most `maxTokenizedChars`
 * characters per conversation (recordViewBudget.ts); beyond that, counts are extrapolated (records/tokenEstimate.ts)
 * and flagged `estimated`. A line longer than `4 × maxTokenizedChars` has its turn texts shortened before rendering
 * (the template's structure, hence the number of records, does not depend on text length); the removed characters are
 * counted back in at each turn's rate.
 */
import { resolve } from 'node:path';
import { parseTree } from 'jsonc-parser';
import type { ShapeHandler } from '../formats/base';
import { cachedTokenizer } from '../tokenizers/loadedTokenizers';
import type { TargetTokenizer } from '../tokenizers/types';
import type { Conversation } from '../types';
import { codeMeaning, isDataChanging } from '../codes';
import { RecordBuilder, type BuildOutcome, type BuildSettings } from './recordBuilder';
import { EncodingCache } from './recordViewBudget';
import { detailOf } from './recordViewDetail';
import { fieldRanges, turnRanges } from './recordViewSource';
import { traceRow } from './rowTrace';
import { trainableInOf } from './traceCounter';
import type { ConversationTrace, RowTrace, TraceSettings, TracedRecord } from './rowTraceTypes';
import { parseLine, readLine, type ReadLine } from './recordViewRead';
import type { FileRow, RecordDetail, RecordSummary, RecordView, RecordViewOptions, RowInput, RowVerdict, TurnView } from './recordViewTypes';

/**
 * Turns one row into a {@link RecordView} with a loaded tokenizer. Keeps the compiled chat templates and what recent
 * rows built between calls, so create one per tokenizer ({@link recordViewerFor}) and reuse it.
 */
export class RecordViewer {
  /** prepare's record builder (records/recordBuilder.ts): the same template choice, records, notes and errors. */
  private readonly builder: RecordBuilder;
  private readonly specialSet: Set<string>;
  private readonly encodings = new EncodingCache();
  /** What recently viewed conversations built (by conversation and settings), most recent last. */
  private readonly builtCache = new Map<string, BuildOutcome>();
  /** The prefix renders of the mask view's turn boundaries, per build. */
  private readonly prefixRenders = new WeakMap<BuildOutcome, Map<string, string>>();

  constructor(readonly tokenizer: TargetTokenizer) {
    this.builder = new RecordBuilder(tokenizer);
    this.specialSet = new Set(tokenizer.specialTokens);
  }

  /**
   * Builds the view of one row: parse → the `eagle3prep.jsonc` that covers `input.file` (formats/rowSource.ts, as
   * `inspect` / `prepare` apply it) → the row's trace (records/rowTrace.ts, within the work cap) → decorations.
   *
   * Never throws for bad data: an invalid JSON line, an unrecognized shape or an unknown role give `status` `errored`
   * / `dropped` with the pipeline's message (and, for an unknown role, a warning on that turn); an invalid
   * `eagle3prep.jsonc` gives `errored` with the config's message (file and line). Throws only what `checkCancelled`
   * throws, and {@link NoChatTemplateError}.
   */
  view(input: RowInput, options: RecordViewOptions = {}): RecordView {
    const view = emptyView(input, options, this.tokenizer);
    const text = input.text.charCodeAt(0) === 0xfeff ? input.text.slice(1) : input.text;
    const parsed = parseLine(text, input.line, view);
    if (!parsed) return view;
    const planned = input.fileRow;
    if (planned?.kind === 'part') return this.partView(view, planned, input, options);
    const read = readLine(planned ? planned.value : parsed.value, input, options, view, planned !== undefined);
    if (!read) return view;
    options.checkCancelled?.();
    const shorten = input.text.length > 4 * (options.maxTokenizedChars ?? Infinity);
    const trace = this.trace(input, read, shorten, options);
    const part = trace.parts[0];
    if (!decorateOutcome(view, trace) || !part) return view;
    if (trace.parts.length > 1)
      view.warnings.push({
        code: 'several_conversations_found',
        message: `the row holds ${trace.parts.length} conversations (one record each); the first is shown`,
      });
    const row = (trace.detailed?.row ?? read.value) as Record<string, unknown>;
    decorateTurns(view, part, text, row, read.fieldSource, options);
    if (this.decorateBuild(view, part, options)) this.decorateRecords(view, part, options);
    finishTotals(view);
    view.verdict = verdictOf(trace);
    const w = view.warnings.find((x) => x.code === 'several_conversations_found');
    if (w && view.verdict.fate === 'written')
      w.message += `; prepare writes ${view.verdict.records.toLocaleString('en-US')} record${view.verdict.records === 1 ? '' : 's'} from the row`;
    if (view.totals.estimated && !shorten)
      view.warnings.push({
        code: 'estimated',
        message: `token counts are estimates: the work cap tokenizes ${(options.maxTokenizedChars ?? Infinity).toLocaleString('en-US')} characters per hover (setting eagle3prep.hover.maxTokenizedCharacters)`,
      });
    return view;
  }

  /** The row's trace under the view's options and work cap (records/rowTrace.ts), through the build cache. */
  private trace(input: RowInput, read: ReadLine, shorten: boolean, options: RecordViewOptions): RowTrace {
    const cap = options.maxTokenizedChars ?? Infinity;
    // The view's options are prepare's row settings (mask, grouping, reasoning, kwargs, length, record rules); the rest is the view's.
    const settings: TraceSettings = options;
    const fileBase = input.file.split(/[\\/]/).pop() ?? input.file;
    return traceRow({ line: input.line, element: read.element, value: read.value }, input.file, fileBase, read.reading, settings, {
      tok: this.tokenizer,
      builder: this.builder,
      build: (conv, s) => this.cachedBuild(conv, s),
      rethrowNoTemplate: true,
      cap: { chars: cap, encodings: this.encodings, shorten, ...(options.detailRecord === undefined ? {} : { exactRecord: options.detailRecord }) },
      ...(options.checkCancelled ? { checkCancelled: options.checkCancelled } : {}),
    });
  }

  /** prepare's build (records/recordBuilder.ts) of a conversation, kept for the next views (a template that raised or ran out of budget is tried again). */
  private cachedBuild(conv: Conversation, settings: BuildSettings): BuildOutcome {
    const key = JSON.stringify([settings.mask ?? 'assistant', settings.grouping ?? 'exact', settings.reasoning ?? 'keep', settings.templateKwargs ?? {}, conv]);
    let outcome = this.builtCache.get(key);
    if (outcome) this.builtCache.delete(key);
    else outcome = this.builder.build(conv, settings, { rethrowNoTemplate: true });
    if (outcome.kind === 'built' || outcome.from === 'rules') this.builtCache.set(key, outcome);
    while (this.builtCache.size > 8) this.builtCache.delete(this.builtCache.keys().next().value!);
    return outcome;
  }

  /**
   * The build of the shown conversation: its template, its error (the view is done), a prompt to generate (done), or
   * its records' notes and target errors as warnings and its targets marked on the turns.
   * @returns whether there are records to show
   */
  private decorateBuild(view: RecordView, part: ConversationTrace, options: RecordViewOptions): boolean {
    const got = part.build;
    if (part.kind === 'prompt' || !got) {
      view.warnings.push({ code: 'set_aside', message: 'no assistant turn: the row is set aside in prompts_to_generate.jsonl for the target model to answer' });
      return false;
    }
    if (got.template) view.template = got.template.named.name;
    if (got.kind === 'errored') {
      if (got.from === 'rules') for (const n of got.notes) if (!view.notes.includes(n)) view.notes.push(n);
      view.status = 'errored';
      view.message = got.message;
      view.warnings.push({ code: got.from === 'template' ? 'template_error' : got.code, message: view.message });
      return false;
    }
    const { built } = got;
    for (const n of built.notes) if (!view.notes.includes(n)) view.notes.push(n);
    if (built.prompt) {
      view.status = 'prompt';
      view.warnings.push({
        code: 'set_aside',
        message:
          'the trailing empty assistant turn is a generation placeholder and no turn is left to train: the row is set aside in prompts_to_generate.jsonl for the target model to answer',
      });
      return false;
    }
    // Data-changing notes of the rules are warnings here, with their meaning (core/codes.ts).
    for (const n of built.notes) if (isDataChanging(n)) view.warnings.push({ code: n, message: `${n}: ${codeMeaning(n)}` });
    for (const te of built.targetErrors) view.warnings.push({ code: te.reason, message: te.message, turn: te.index });
    const mask = options.mask ?? 'assistant';
    if (built.targetCount === 0)
      view.warnings.push({ code: 'no_trainable_tokens', message: `no turn is a target under the "${mask}" policy: the row is dropped (no_trainable_tokens)` });
    for (const r of built.records) for (const t of r.targets) if (view.turns[t]) view.turns[t].target = true;
    if (mask === 'non-system') for (const t of view.turns) t.target = t.role !== 'system';
    return true;
  }

  /** The shown conversation's records (ids, counts, fates as prepare decides them) with a warning per record not written whole, and the record in detail. */
  private decorateRecords(view: RecordView, part: ConversationTrace, options: RecordViewOptions): void {
    const max = options.maxLength;
    part.records.forEach((rec, r) => {
      const summary = recordSummary(rec, r, part);
      view.records.push(summary);
      for (const w of recordWarnings(rec, r, max, options.minTrainableTokens)) view.warnings.push(w);
    });
    const pieces = part.records.filter((r) => r.piece).length;
    if (pieces > 0)
      view.warnings.push({
        code: 'split_into_records',
        message: `records over the max length ${max!.toLocaleString('en-US')} are split into ${pieces} record${pieces === 1 ? '' : 's'} that fit, as prepare writes them (long records: split)`,
      });
    for (const n of part.notes) if (n === 'target_too_long') view.warnings.push({ code: n, message: `${n}: ${codeMeaning(n)}` });
    if (options.detailRecord !== undefined && part.records.length > 0) {
      const r = Math.min(Math.max(0, options.detailRecord), part.records.length - 1);
      view.detail = this.detail(part, r, view.turns);
    }
  }

  /** The mask view's token detail of record `r` of the shown conversation (a piece of `--long split` in its own messages, its turns renumbered). */
  private detail(part: ConversationTrace, r: number, turns: TurnView[]): RecordDetail {
    const rec = part.records[r];
    const got = part.build as Extract<BuildOutcome, { kind: 'built' }>;
    let renders = this.prefixRenders.get(got);
    if (!renders) this.prefixRenders.set(got, (renders = new Map()));
    const p = rec.piece;
    if (!p)
      return detailOf(
        this.tokenizer,
        this.specialSet,
        r,
        rec.text,
        rec.ids,
        rec.starts,
        rec.mask,
        part.rendered,
        got.built.messages,
        got.template,
        turns,
        renders,
      );
    const pieceTurns = p.indices.map((i) => turns[i]);
    const d = detailOf(
      this.tokenizer,
      this.specialSet,
      r,
      rec.text,
      rec.ids,
      rec.starts,
      rec.mask,
      p.conversation,
      p.messages,
      got.template,
      pieceTurns,
      new Map(),
    );
    const at = (k: number) => (k < 0 ? k : p.indices[k]);
    return {
      ...d,
      tokens: d.tokens.map((t) => ({ ...t, turn: at(t.turn) })),
      turnRanges: d.turnRanges.map((t) => ({ ...t, turn: at(t.turn) })),
      fieldSpans: d.fieldSpans.map((f) => ({ ...f, turn: at(f.turn) })),
    };
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
    finishTotals(view);
    return view;
  }
}

/** A view before anything is known of the row (errored `invalid_json` until decided). */
function emptyView(input: RowInput, options: RecordViewOptions, tokenizer: TargetTokenizer): RecordView {
  return {
    file: input.file,
    line: input.line,
    lineChars: input.text.length,
    status: 'errored',
    turns: [],
    records: [],
    totals: { tokens: 0, trainableTokens: 0, records: 0, estimated: false },
    warnings: [],
    notes: [],
    tokenizer: { name: tokenizer.name, dir: tokenizer.dir },
    mask: options.mask ?? 'assistant',
    templateKwargs: options.templateKwargs ?? {},
    verdict: { fate: 'errored', code: 'invalid_json' },
  };
}

/**
 * The row's shape, and for a row the normalizer dropped or errored, its status, message, warning and verdict.
 * @returns whether the row has conversations to show
 */
function decorateOutcome(view: RecordView, trace: RowTrace): boolean {
  const d = trace.detailed;
  if (d?.handler) view.shape = { format: d.handler.name, description: describeShape(d.handler, (d.row ?? {}) as Record<string, unknown>) };
  const f = trace.fate;
  if (trace.parts.length) return true;
  if (f.fate === 'dropped') {
    view.status = 'dropped';
    view.reason = f.reason;
    view.message = f.message;
    view.warnings.push({ code: 'dropped', message: `dropped (${f.reason}): ${f.message}` });
    view.verdict = { fate: 'dropped', code: f.reason };
  } else if (f.fate === 'errored') {
    view.message = f.message;
    view.warnings.push(f.turn !== undefined ? { code: 'unknown_role', message: f.message, turn: f.turn } : { code: 'errored', message: f.message });
    view.verdict = { fate: 'errored', code: f.code ?? 'errored' };
  }
  return false;
}

/** The shown conversation's id, notes and turns: where each lies in the line, its counts within the cap, a warning for an empty assistant turn. */
function decorateTurns(
  view: RecordView,
  part: ConversationTrace,
  text: string,
  row: Record<string, unknown>,
  fieldSource: Record<string, string>,
  options: RecordViewOptions,
): void {
  const conv = part.conversation;
  view.status = part.kind;
  if (conv.unreadFields?.length)
    view.warnings.push({ code: 'fields_not_read', message: `fields not read (neither a known field nor metadata): ${conv.unreadFields.join(', ')}` });
  view.id = conv.id;
  view.notes.push(...(conv.notes ?? []));
  const ranges = turnRanges(text, view.shape?.description, conv.messages, row, fieldSource);
  if (part.removed) {
    const cap = options.maxTokenizedChars ?? Infinity;
    const keep = Math.max(256, Math.floor(cap / Math.max(1, conv.messages.length)));
    view.warnings.push({
      code: 'estimated',
      message: `the line has ${view.lineChars.toLocaleString('en-US')} characters, over 4 × the work cap (${cap.toLocaleString('en-US')}): turns were shortened to ${keep.toLocaleString('en-US')} characters for rendering; token counts are estimates`,
    });
  }
  // Field positions are for the mask view's "reveal in source" (one parse of the line).
  const tree = options.detailRecord !== undefined ? parseTree(text) : undefined;
  conv.messages.forEach((m, i) => {
    const counted = part.turns![i];
    const fields = tree ? fieldRanges(tree, ranges[i], m) : undefined;
    view.turns.push({ index: i, role: m.role, ...counted, target: false, range: ranges[i], ...(fields ? { fields } : {}) });
    if (m.role === 'assistant' && !(m.content ?? '').trim() && !(m.reasoning_content ?? '').trim() && !m.tool_calls?.length)
      view.warnings.push({
        code: 'empty_assistant_turn',
        message: `turn ${i + 1} (assistant) is empty: it has no text, reasoning or tool call, so it is not trained`,
        turn: i,
      });
  });
}

/** One record as the view lists it: prepare's id, its counts, and its fate (`split` when prepare splits it past the work cap). */
function recordSummary(rec: TracedRecord, r: number, part: ConversationTrace): RecordSummary {
  const fate: RecordSummary['fate'] = rec.splitUp ? 'split' : rec.fate.written ? (rec.fate.truncated ? 'truncated' : 'written') : rec.fate.reason;
  return {
    index: r,
    id: part.records.length > 1 ? `${part.conversation.id}#${r}` : part.conversation.id,
    tokens: rec.tokens,
    trainableTokens: rec.trainable,
    estimated: rec.estimated,
    targets: [...rec.targets],
    chars: rec.text.text.length,
    fate,
  };
}

/** The warnings of a record that prepare does not write whole (split past the cap, too long, truncated, too little to train). */
function recordWarnings(rec: TracedRecord, r: number, max: number | undefined, minTrainable: number | undefined): RecordView['warnings'] {
  const out: RecordView['warnings'] = [];
  const count = `${rec.estimated ? '≈' : ''}${rec.tokens.toLocaleString('en-US')}`;
  const f = rec.fate;
  const maxText = max?.toLocaleString('en-US');
  if (rec.splitUp)
    out.push({
      code: 'split_into_records',
      message: `record ${r + 1} has ${count} tokens, over the max length ${maxText}: prepare splits the conversation into records that fit (long records: split)`,
    });
  else if (!f.written && f.reason === 'too_long')
    out.push({
      code: 'too_long',
      message: `record ${r + 1} has ${count} tokens, over the max length ${maxText}: prepare drops it (too_long) unless truncate is set`,
    });
  else if (f.truncated) out.push({ code: 'record_truncated', message: `record ${r + 1} has ${count} tokens: prepare keeps its first ${maxText} (truncate)` });
  if (!f.written && f.reason === 'no_trainable_tokens')
    out.push({ code: 'no_trainable_tokens', message: `record ${r + 1} has no trainable token${f.truncated ? ' after the cut' : ''}: prepare drops it` });
  if (!f.written && f.reason === 'too_few_trainable_tokens') {
    const trainable = trainableInOf(rec.mask, rec.tokens, rec.trainable)(f.truncated ? max! : rec.tokens);
    out.push({
      code: 'too_few_trainable_tokens',
      message: `record ${r + 1} has ${trainable} trainable tokens, fewer than the minimum ${minTrainable}: prepare drops it`,
    });
  } else if (!f.written && f.reason !== 'too_long' && f.reason !== 'no_trainable_tokens') {
    // Another record rule of records/fate.ts: its reason code, with the counts it decides on.
    const kept = f.truncated ? max! : rec.tokens;
    const trainable = trainableInOf(rec.mask, rec.tokens, rec.trainable)(kept);
    out.push({
      code: f.reason,
      // Past the work cap the counts are estimates, and so is the verdict they give (the exact counts may keep the record).
      message: rec.estimated
        ? `record ${r + 1} has ≈${trainable.toLocaleString('en-US')} trainable tokens of ≈${kept.toLocaleString('en-US')} (estimated past the work cap): prepare likely drops it (${f.reason})`
        : `record ${r + 1} has ${trainable.toLocaleString('en-US')} trainable tokens of ${kept.toLocaleString('en-US')}: prepare drops it (${f.reason})`,
    });
  }
  return out;
}

/** The row's verdict from its trace: what prepare's outputs say of it. */
function verdictOf(trace: RowTrace): RowVerdict {
  const f = trace.fate;
  if (f.fate === 'written') return { fate: 'written', records: f.records };
  if (f.fate === 'setAside') return { fate: 'setAside' };
  return f.fate === 'dropped' ? { fate: 'dropped', code: f.reason } : { fate: 'errored', code: f.code ?? 'errored' };
}

function finishTotals(view: RecordView): void {
  view.totals = {
    tokens: view.records.reduce((a, r) => a + r.tokens, 0),
    trainableTokens: view.records.reduce((a, r) => a + r.trainableTokens, 0),
    records: view.records.length,
    estimated: view.records.some((r) => r.estimated) || view.turns.some((t) => t.estimated),
  };
}

/** A shape's description of a row; a description that fails on odd data names the shape alone (the view never throws for data). */
function describeShape(handler: ShapeHandler, row: Record<string, unknown>): string {
  try {
    return handler.describe(row);
  } catch {
    return handler.name;
  }
}

/** The viewer of each tokenizer folder ('' = the embedded default), with the tokenizer it was made for. */
const viewers = new Map<string, RecordViewer>();

/**
 * A {@link RecordViewer} for a tokenizer folder: the thread's one loaded tokenizer of that folder
 * (tokenizers/loadedTokenizers.ts `cachedTokenizer`, the JavaScript backend: the views encode synchronously),
 * reloaded when one of its files (`tokenizer.json`, `tiktoken.model`, `tokenizer_config.json`, `chat_template.jinja`,
 * `chat_template.json`, `generation_config.json`) changes by modification time or size; the folder's viewer of the
 * older files is then dropped with its tokenizer.
 * @param dir local model folder; undefined or '' = the embedded default
 * @throws TokenizerLoadError as `loadTokenizer`
 */
export function recordViewerFor(dir: string | undefined): RecordViewer {
  const folder = dir ? resolve(dir) : '';
  const tok = cachedTokenizer(dir || undefined, 'js').tok;
  let v = viewers.get(folder);
  if (!v || v.tokenizer !== tok) {
    v = new RecordViewer(tok);
    viewers.set(folder, v);
  }
  return v;
}
