/** The record viewer: builds a row's {@link RecordView} (see recordView.ts for what it shows and the work cap). */
import { parseTree } from 'jsonc-parser';
import { applyMapping, mappingFor } from '../formats/mapping';
import { normalizeDetailed } from '../formats/normalize';
import { rowsOfLineValue } from '../read/readers';
import { recordFate } from './fate';
import { buildRecords, maskFromSpans, SpecialTokenFinder, TemplateRenderError } from './mask';
import { applyProjectConfig, loadProjectConfigFor } from '../read/projectConfig';
import { ASSIGNED_ROLES_KEY, type AssignedRoles } from '../formats/fieldRoles';
import { ChatTemplate, pickTemplate } from '../templates/template';
import { describeError } from '../errors';
import type { TargetTokenizer } from '../tokenizers/tokenizer';
import type { Conversation, Message } from '../types';
import { codeMeaning, isDataChanging } from '../codes';
import { jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../jsonDepth';
import { EncodingCache, TokenBudget, trainableChars, turnText } from './recordViewBudget';
import { detailOf } from './recordViewDetail';
import { fieldRanges, turnRanges } from './recordViewSource';
import { NoChatTemplateError, type RecordView, type RecordViewOptions, type RowInput } from './recordViewTypes';

/**
 * Turns one row into a {@link RecordView} with a loaded tokenizer. Keeps the
 * compiled chat templates between calls (per template and template kwargs), so
 * create one per tokenizer and reuse it.
 */
export class RecordViewer {
  private readonly specials: SpecialTokenFinder;
  private readonly specialSet: Set<string>;
  private readonly templates = new Map<string, ChatTemplate>();
  private readonly encodings = new EncodingCache();
  /** The records of recently viewed rows (by line text, policy, kwargs and shortening), and their prefix renders, most recent last. */
  private readonly builtCache = new Map<string, { built: ReturnType<typeof buildRecords>; prefixRenders: Map<string, string> }>();

  constructor(readonly tokenizer: TargetTokenizer) {
    this.specials = new SpecialTokenFinder(tokenizer.specialTokens);
    this.specialSet = new Set(tokenizer.specialTokens);
  }

  /**
   * The chat template for a conversation (with or without tools) and template kwargs, compiled once.
   * @throws NoChatTemplateError when the tokenizer has none; TemplateRenderError when it does not parse
   */
  templateFor(hasTools: boolean, kwargs: Record<string, unknown>): ChatTemplate {
    const named = pickTemplate(this.tokenizer.templates, hasTools);
    if (!named)
      throw new NoChatTemplateError(`tokenizer ${this.tokenizer.dir} has no chat template (tokenizer_config.json "chat_template" or chat_template.jinja)`);
    const key = `${named.name}\0${JSON.stringify(kwargs)}`;
    let t = this.templates.get(key);
    if (!t) {
      t = new ChatTemplate(named, this.tokenizer.specialTokenVars, kwargs);
      this.templates.set(key, t);
    }
    return t;
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
    // A line that is a list: its turns (one conversation), or several rows, as the readers read it.
    const lineRows = rowsOfLineValue(value);
    if (lineRows) {
      value = lineRows[0].value;
      if (lineRows.length > 1)
        view.warnings.push({
          code: 'line_holds_rows',
          message: `line ${input.line} holds ${lineRows.length} rows (a list of objects): the view shows the first; prepare reads each as its own row`,
        });
    }
    // The eagle3prep.jsonc of the file, as readRows + inspect / prepare apply it: the field mapping
    // entry (formats/mapping.ts) first, then role aliases and field renames (projectConfig.ts).
    let configKey = '';
    const fieldSource: Record<string, string> = {};
    try {
      const mapping = mappingFor(input.file);
      const project = loadProjectConfigFor(input.file);
      if (mapping) value = applyMapping(value, mapping.entry, mapping.source);
      const raw = value;
      value = applyProjectConfig(value, project);
      if (mapping || project)
        configKey = JSON.stringify([mapping?.entry ?? null, project?.roleAliases ?? null, project?.fieldMappings ?? null, project?.fieldRoles ?? null]);
      // A field mapping renames only when the row does not already have the target (projectConfig.ts).
      const had = (k: string) => raw !== null && typeof raw === 'object' && k in raw;
      for (const [from, to] of Object.entries(project?.fieldMappings ?? {})) if (!had(to)) fieldSource[to] = from;
      if (mapping && !mapping.entry.turns.includes('.')) fieldSource.messages = mapping.entry.turns;
      if (mapping?.entry.system && !mapping.entry.system.includes('.')) fieldSource.system = mapping.entry.system;
      // Fields eagle3prep.jsonc "fieldRoles" moved to where their role is read (`response` ← `worked_solution`).
      const roled = (value as Record<string, unknown> | null)?.[ASSIGNED_ROLES_KEY] as AssignedRoles | undefined;
      for (const [to, from] of Object.entries(roled?.renamed ?? {})) if (!from.includes('.')) fieldSource[to] = from;
    } catch (e) {
      view.message = describeError(e);
      view.warnings.push({ code: 'errored', message: view.message });
      return view;
    }
    check();
    const fileBase = input.file.split(/[\\/]/).pop() ?? input.file;
    const { outcome, handler } = normalizeDetailed(value, { file: input.file, line: input.line }, fileBase);
    const row = value as Record<string, unknown>;
    if (handler) view.shape = { format: handler.name, description: handler.describe(row) };
    if (outcome.kind === 'dropped') {
      view.status = 'dropped';
      view.reason = outcome.reason;
      view.message = outcome.message;
      view.warnings.push({ code: 'dropped', message: `dropped (${outcome.reason}): ${outcome.message}` });
      return view;
    }
    if (outcome.kind === 'errored') {
      view.message = outcome.message;
      view.warnings.push(
        outcome.code === 'unknown_role' && outcome.turn !== undefined
          ? { code: 'unknown_role', message: outcome.message, turn: outcome.turn }
          : { code: 'errored', message: outcome.message },
      );
      return view;
    }
    // A row holding several conversations (Self-Instruct instances, conversation lists): the first is shown.
    const shown = outcome.kind === 'split' ? outcome.parts[0] : outcome;
    if (outcome.kind === 'split') {
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
      this.finishTotals(view);
      return view;
    }

    let built;
    let template: ChatTemplate;
    let prefixRenders: Map<string, string>;
    try {
      template = this.templateFor((conv.tools?.length ?? 0) > 0, kwargs);
      view.template = template.named.name;
      const grouping = options.grouping ?? 'exact';
      const reasoning = options.reasoning ?? 'keep';
      const key = `${mask}\0${grouping}\0${reasoning}\0${JSON.stringify(kwargs)}\0${shorten ? cap : ''}\0${template.named.name}\0${configKey}\0${text}`;
      let entry = this.builtCache.get(key);
      if (entry) this.builtCache.delete(key);
      else
        entry = {
          built: buildRecords(renderConv, template, this.specials, mask, { grouping, reasoning, stopTokens: this.tokenizer.stopTokens }),
          prefixRenders: new Map(),
        };
      this.builtCache.set(key, entry);
      while (this.builtCache.size > 8) this.builtCache.delete(this.builtCache.keys().next().value!);
      built = entry.built;
      prefixRenders = entry.prefixRenders;
    } catch (e) {
      if (e instanceof TemplateRenderError) {
        view.status = 'errored';
        view.message = `chat template error: ${e.message}`;
        view.warnings.push({ code: 'template_error', message: view.message });
        return view;
      }
      throw e;
    }
    check();
    for (const n of built.notes) if (!view.notes.includes(n)) view.notes.push(n);
    if (built.prompt) {
      view.status = 'prompt';
      view.warnings.push({
        code: 'set_aside',
        message:
          'the trailing empty assistant turn is a generation placeholder and no turn is left to train: the row is set aside in prompts_to_generate.jsonl for the target model to answer',
      });
      this.finishTotals(view);
      return view;
    }
    if (built.rowError) {
      view.status = 'errored';
      view.message = `${built.rowError.code}: ${built.rowError.message}`;
      view.warnings.push({ code: built.rowError.code, message: view.message });
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
      let tokens = enc.ids.length;
      let trainable = m.reduce((a, b) => a + b, 0);
      let estimated = false;
      if (enc.cut < rec.text.length) {
        // Extrapolate past the sample: the last sampled token may be cut, recount from its start.
        const from = enc.starts.length ? enc.starts[enc.starts.length - 1] : 0;
        tokens -= 1;
        trainable -= m.length ? m[m.length - 1] : 0;
        const rate = budget.rate();
        tokens += Math.round((rec.text.length - from) * rate);
        trainable += Math.round(trainableChars(rec.spans, from, rec.text.length) * rate);
        estimated = true;
      }
      if (shorten) {
        // Characters removed before rendering, counted back in at the observed rate.
        const lastMsg = Math.max(...rec.targets, 0);
        const rate = budget.rate();
        for (let i = 0; i <= lastMsg && i < removed.length; i++) tokens += Math.round(removed[i] * rate);
        for (const t of rec.targets) trainable += Math.round(removed[t] * rate);
        if (mask === 'non-system')
          for (let i = 0; i < removed.length; i++)
            if (conv.messages[i].role !== 'system' && !rec.targets.includes(i)) trainable += Math.round(removed[i] * rate);
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
      const trainableIn = (n: number): number =>
        n >= tokens ? trainable : n <= m.length ? m.slice(0, n).reduce((a, b) => a + b, 0) : Math.round((trainable * n) / tokens);
      const count = `${estimated ? '≈' : ''}${tokens.toLocaleString('en-US')}`;
      const splits = options.long === 'split' && mask !== 'non-system';
      const fate = recordFate(tokens, trainableIn, {
        maxLength: splits ? undefined : options.maxLength,
        truncate: options.long === 'truncate',
        minTrainableTokens: options.minTrainableTokens,
      });
      const splitUp = splits && options.maxLength !== undefined && tokens > options.maxLength;
      view.records[view.records.length - 1].fate = splitUp ? 'split' : fate.written ? (fate.truncated ? 'truncated' : 'written') : fate.reason;
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
