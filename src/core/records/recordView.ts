/**
 * What one dataset row becomes, for a person looking at it (the record hover
 * and the mask view): its detected shape, its turns (with where each one lies
 * in the JSON line), the records it yields as tokens with their loss mask,
 * totals and warnings.
 *
 * Pure (no `vscode`); it reuses the pipeline's own steps, so what is shown is
 * what `prepare` writes: `normalizeDetailed` (formats/normalize.ts),
 * `buildRecords` / `maskFromSpans` (mask.ts, docs/loss-mask-rules.md) and the
 * tokenizer's `encode` (docs/loss-mask-rules.md "Text to tokens"). Turn positions inside the line
 * come from `jsonc-parser`'s syntax tree.
 *
 * Work cap: a hover must answer fast even on a 1 MB line, so at most
 * `maxTokenizedChars` characters are tokenized per call; beyond that, counts are
 * extrapolated from the part tokenized (tokens per character) and flagged
 * `estimated`. A line longer than `4 × maxTokenizedChars` has its turn texts
 * shortened before rendering (the template's structure, hence the number of
 * records, does not depend on text length); the removed characters are counted
 * back in at the same rate.
 */
import { resolve } from 'node:path';
import { type Node as JsonNode, parseTree } from 'jsonc-parser';
import { applyMapping, mappingFor } from '../formats/mapping';
import { normalizeDetailed } from '../formats/normalize';
import type { LongPolicy } from '../run/contract';
import { recordFate } from './fate';
import { buildRecords, commonPrefixLength, maskFromSpans, SpecialTokenFinder, TemplateRenderError, type Grouping, type Span, type TextRecord } from './mask';
import { applyProjectConfig, loadProjectConfigFor } from '../read/projectConfig';
import { ChatTemplate, pickTemplate } from '../templates/template';
import { loadTokenizer, tokenizerFilesStamp, type TargetTokenizer } from '../tokenizers/tokenizer';
import type { Conversation, MaskPolicy, Message, ReasoningPolicy, Role } from '../types';
import { codeMeaning, isDataChanging } from '../codes';
import { jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../jsonDepth';

/** One row of a dataset file: its JSON text (one JSONL line), and where it is. */
export interface RowInput {
  /** The row's JSON text (without the line break). */
  text: string;
  /** The dataset file (used for the record id fallback `<basename>:<line>` and in messages). */
  file: string;
  /** 1-based line number of the row. */
  line: number;
}

/** Options of {@link RecordViewer.view}. */
export interface RecordViewOptions {
  /** docs/loss-mask-rules.md "Targets"; default `assistant`. */
  mask?: MaskPolicy;
  /** docs/loss-mask-rules.md "Record grouping"; default `exact` — the records `prepare` writes with the same setting. */
  grouping?: Grouping;
  /** Chat template variables (`enable_thinking`, …), as `apply_chat_template(**kwargs)` gets them. */
  templateKwargs?: Record<string, unknown>;
  /** `prepare --reasoning`: keep (default) or drop the data's reasoning before rendering. */
  reasoning?: ReasoningPolicy;
  /** Records longer than this many tokens get a warning saying what prepare does with them (see `long`). */
  maxLength?: number;
  /** What prepare does with a record over `maxLength` (`eagle3prep.longRecords`, CLI `--long`); default `drop`. */
  long?: LongPolicy;
  /** Records with fewer trainable tokens are dropped by prepare (`too_few_trainable_tokens`); default 1. */
  minTrainableTokens?: number;
  /** Work cap: characters tokenized per call (turn texts and record texts together); default Infinity (exact). */
  maxTokenizedChars?: number;
  /** Index of the record whose tokens are returned in `detail` (the mask view); undefined = none. */
  detailRecord?: number;
  /** Called between steps; throw from it to abandon the work (e.g. a cancelled hover). */
  checkCancelled?: () => void;
}

/** A warning about the row, with the turn (index into `turns`) it concerns when there is one. */
export interface RowWarning {
  /** `unknown_role`, `empty_assistant_turn`, `too_long`, `record_truncated`, `record_split`, `too_few_trainable_tokens`, `invalid_json`, `errored`, `dropped`, `no_trainable_tokens`, `estimated`, `template_error`, or a mask note code (`template_rewrites_history`, …). */
  code: string;
  message: string;
  turn?: number;
}

/** One turn of the row after normalization. */
export interface TurnView {
  /** Index into the normalized messages. */
  index: number;
  role: Role;
  /** Characters of the turn's text: content + reasoning + tool-call names and arguments (UTF-16 units). */
  chars: number;
  /** Tokens of that text encoded on its own (no template markup). */
  tokens: number;
  /** True when `tokens` is extrapolated (work cap). */
  estimated: boolean;
  /** Whether the mask policy makes this turn a target (trained on). */
  target: boolean;
  /** `[start, end)` character offsets of the turn inside the JSON line (the source object, or the field it came from); undefined when the turn has no source text (e.g. synthesized). */
  range?: [number, number];
  /** Where each field of the turn lies inside the JSON line (the source property's value), when found. */
  fields?: { field: TurnField; range: [number, number] }[];
}

/** A field of a normalized turn whose text the template renders. */
export type TurnField = 'content' | 'reasoning_content' | 'tool_calls';

/** One record the row becomes (one line of tokenized_data.jsonl). */
export interface RecordSummary {
  index: number;
  /** The id `prepare` writes: the conversation id, `#r` appended when the row becomes several records. */
  id: string;
  tokens: number;
  trainableTokens: number;
  /** True when the counts are extrapolated (work cap). */
  estimated: boolean;
  /** Indices (into `turns`) of the assistant turns trained in this record. */
  targets: number[];
  /** Characters of the rendered text (of the shortened text when the line was over the cap). */
  chars: number;
}

/** One token of the detail record. */
export interface TokenView {
  id: number;
  /** The characters of the rendered text this token covers (`text.slice(start, nextStart)`). */
  text: string;
  /** UTF-16 offset of its first character in the rendered text. */
  start: number;
  /** `loss_mask` value. */
  trainable: boolean;
  /** True for an added token marked special (`<|im_start|>`, `<|im_end|>`, …). */
  special: boolean;
  /** Index of the turn whose rendering holds this token (the last target's turn includes the generation prompt before it); -1 for template text before the first turn. */
  turn: number;
}

/** The tokens of one record, for the mask view. */
export interface RecordDetail {
  index: number;
  tokens: TokenView[];
  /** `[start, end)` of the rendered text each turn occupies (same indexing as `turns`), from prefix renders; absent turns are not in this record. */
  turnRanges: { turn: number; role: Role; start: number; end: number }[];
  /** Trainable character spans of the rendered text (docs/loss-mask-rules.md "Trainable span"). */
  spans: Span[];
  /** Where the text of each turn's fields lies in the rendered text (found by search inside the turn's range), for "reveal in source". */
  fieldSpans: { turn: number; field: TurnField; start: number; end: number }[];
}

/** Everything the hover and the mask view show about one row. */
export interface RecordView {
  file: string;
  line: number;
  /** Characters of the JSON line. */
  lineChars: number;
  /** What the pipeline does with the row. */
  status: 'conversation' | 'prompt' | 'dropped' | 'errored';
  /** The normalizer's shape id (`openai-messages`, `sharegpt`, …) and description of the row; undefined when no shape matched. */
  shape?: { format: string; description: string };
  /** The conversation id (undefined when the row did not normalize). */
  id?: string;
  /** For `dropped`: the reason code; for `errored`: undefined. */
  reason?: string;
  /** For `dropped` / `errored`: the pipeline's message. */
  message?: string;
  turns: TurnView[];
  records: RecordSummary[];
  detail?: RecordDetail;
  totals: { tokens: number; trainableTokens: number; records: number; estimated: boolean };
  warnings: RowWarning[];
  /** Notes of the normalizer and of the mask rules (codes). */
  notes: string[];
  tokenizer: { name: string; dir: string };
  mask: MaskPolicy;
  templateKwargs: Record<string, unknown>;
  /** The template used (its name in the tokenizer's config). */
  template?: string;
}

/** Thrown by {@link RecordViewer.view} when the tokenizer has no chat template. */
export class NoChatTemplateError extends Error {}

const SAMPLE_MIN = 512;

/** Encodings of recent texts (records of a row re-shown with another record, policy or hover), bounded by total characters. */
class EncodingCache {
  private readonly map = new Map<string, { ids: number[]; starts: number[] }>();
  private chars = 0;
  constructor(private readonly maxChars = 8_000_000) {}

  get(text: string): { ids: number[]; starts: number[] } | undefined {
    const e = this.map.get(text);
    if (e) {
      this.map.delete(text);
      this.map.set(text, e);
    }
    return e;
  }

  set(text: string, e: { ids: number[]; starts: number[] }): void {
    if (text.length > this.maxChars || this.map.has(text)) return;
    this.map.set(text, e);
    this.chars += text.length;
    for (const k of this.map.keys()) {
      if (this.chars <= this.maxChars) break;
      this.map.delete(k);
      this.chars -= k.length;
    }
  }
}

/** Counts tokens under a shared character budget; past it, extrapolates from what was tokenized. */
class TokenBudget {
  private tokens = 0;
  private chars = 0;
  constructor(
    private remaining: number,
    private readonly tok: TargetTokenizer,
    private readonly cache: EncodingCache,
  ) {}

  /** Tokens per character seen so far (0.3 before anything was tokenized, a typical BPE rate for English). */
  rate(): number {
    return this.chars > 0 ? this.tokens / this.chars : 0.3;
  }

  /** Encodes `text`, or its first `max(remaining, 512)` characters when over budget (`cut` = where it stopped). */
  encode(text: string): { ids: number[]; starts: number[]; cut: number } {
    const hit = this.cache.get(text);
    if (hit) {
      this.tokens += hit.ids.length;
      this.chars += text.length;
      return { ...hit, cut: text.length };
    }
    const cut = text.length <= this.remaining ? text.length : Math.min(text.length, Math.max(this.remaining, SAMPLE_MIN));
    const enc = this.tok.encode(cut === text.length ? text : text.slice(0, cut));
    if (cut === text.length) this.cache.set(text, enc);
    this.remaining = Math.max(0, this.remaining - cut);
    this.tokens += enc.ids.length;
    this.chars += cut;
    return { ids: enc.ids, starts: enc.starts, cut };
  }

  /** Token count of `text`, extrapolated past the budget. */
  count(text: string): { tokens: number; estimated: boolean } {
    if (text.length === 0) return { tokens: 0, estimated: false };
    const { ids, cut } = this.encode(text);
    if (cut === text.length) return { tokens: ids.length, estimated: false };
    // Drop the last token of the sample: it may be cut in the middle.
    const exact = Math.max(0, ids.length - 1);
    return { tokens: exact + Math.round((text.length - cut) * this.rate()) + 1, estimated: true };
  }
}

/** The text of a turn that counts as its characters and tokens: reasoning, content, tool calls (name + arguments). */
function turnText(m: Message): string {
  const parts: string[] = [];
  if (m.reasoning_content) parts.push(m.reasoning_content);
  if (m.content) parts.push(m.content);
  for (const tc of m.tool_calls ?? []) {
    parts.push(tc.function.name, typeof tc.function.arguments === 'string' ? tc.function.arguments : JSON.stringify(tc.function.arguments));
  }
  return parts.join('\n');
}

/**
 * Source ranges of the normalized messages inside the line, from the jsonc-parser tree.
 * @param fieldSource a field the shape reads → the field of the line it came from (renamed by `eagle3prep.jsonc`).
 */
function turnRanges(
  text: string,
  description: string | undefined,
  messages: readonly Message[],
  row: Record<string, unknown>,
  fieldSource: Record<string, string> = {},
): ([number, number] | undefined)[] {
  const out: ([number, number] | undefined)[] = messages.map(() => undefined);
  if (!description) return out;
  const root: JsonNode | undefined = parseTree(text);
  if (!root || root.type !== 'object') return out;
  const find = (name: string): JsonNode | undefined => root.children?.find((p) => p.children?.[0]?.value === name);
  const prop = (name: string): JsonNode | undefined => find(name) ?? (Object.hasOwn(fieldSource, name) ? find(fieldSource[name]) : undefined);
  const range = (n: JsonNode | undefined): [number, number] | undefined => (n ? [n.offset, n.offset + n.length] : undefined);
  const fields = [...description.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  const list = fields.length ? prop(fields[0])?.children?.[1] : undefined;
  if (list?.type === 'array') {
    const items = list.children ?? [];
    // A top-level system_prompt / system field prepended as message 0 (normalize.ts applySystemField).
    const shift = messages.length === items.length + 1 && messages[0]?.role === 'system' ? 1 : 0;
    if (shift) {
      const sys = ['system_prompt', 'system'].find((k) => typeof row[k] === 'string');
      out[0] = sys ? range(prop(sys)) : undefined;
    }
    items.forEach((item, i) => {
      if (i + shift < out.length) out[i + shift] = range(item);
    });
    return out;
  }
  // prompt(-response) rows: the user turn is the prompt field, the assistant turn the response field.
  const userField = fields[0] ? prop(fields[0]) : undefined;
  const respField = fields.length > 1 ? prop(fields[fields.length - 1]) : undefined;
  messages.forEach((m, i) => {
    if (m.role === 'user') out[i] = range(userField);
    else if (m.role === 'assistant') out[i] = range(respField);
    else if (m.role === 'system') {
      const sys = ['system_prompt', 'system'].find((k) => typeof row[k] === 'string');
      out[i] = sys ? range(prop(sys)) : undefined;
    }
  });
  return out;
}

/** The string value of a property node, or undefined. */
function stringValue(n: JsonNode | undefined): string | undefined {
  return n?.type === 'string' && typeof n.value === 'string' ? n.value : undefined;
}

/**
 * Where each field of a normalized turn lies in the JSON line: the property of the turn's source
 * object whose string value is (or holds) the field's text; tool calls: the first property holding
 * a list or object named like a tool-call field.
 */
function fieldRanges(root: JsonNode | undefined, range: [number, number] | undefined, m: Message): TurnView['fields'] {
  if (!range || !root) return undefined;
  let node: JsonNode | undefined = root;
  // The node spanning exactly `range`.
  while (node && !(node.offset === range[0] && node.length === range[1] - range[0])) {
    node = node.children?.find((c) => c.offset <= range[0] && c.offset + c.length >= range[1]);
  }
  if (!node) return undefined;
  const out: NonNullable<TurnView['fields']> = [];
  const at = (n: JsonNode): [number, number] => [n.offset, n.offset + n.length];
  if (node.type === 'string') {
    // A prompt / response field: the turn is the field.
    out.push({ field: 'content', range: at(node) });
    return out;
  }
  const props = node.type === 'object' ? (node.children ?? []).map((p) => ({ key: String(p.children?.[0]?.value ?? ''), value: p.children?.[1] })) : [];
  const find = (want: string | null | undefined): JsonNode | undefined => {
    if (!want) return undefined;
    const exact = props.find((p) => stringValue(p.value) === want)?.value;
    return exact ?? props.find((p) => (stringValue(p.value) ?? '').includes(want))?.value;
  };
  const c = find(m.content);
  if (c) out.push({ field: 'content', range: at(c) });
  const r = find(m.reasoning_content);
  if (r) out.push({ field: 'reasoning_content', range: at(r) });
  if (m.tool_calls?.length) {
    const t = props.find(
      (p) => /^(tool_calls|function_call|functionCall|tool_use|calls|actions?)$/i.test(p.key) && p.value && p.value.type !== 'string',
    )?.value;
    if (t) out.push({ field: 'tool_calls', range: at(t) });
  }
  return out;
}

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
    // The eagle3prep.jsonc of the file, as readRows + inspect / prepare apply it: the field mapping
    // entry (formats/mapping.ts) first, then role aliases and field renames (projectConfig.ts).
    let configKey = '';
    const fieldSource: Record<string, string> = {};
    try {
      const mapping = mappingFor(input.file);
      const project = loadProjectConfigFor(input.file);
      if (mapping) value = applyMapping(value, mapping.entry, mapping.source);
      value = applyProjectConfig(value, project);
      if (mapping || project) configKey = JSON.stringify([mapping?.entry ?? null, project?.roleAliases ?? null, project?.fieldMappings ?? null]);
      for (const [from, to] of Object.entries(project?.fieldMappings ?? {})) fieldSource[to] = from;
      if (mapping && !mapping.entry.turns.includes('.')) fieldSource.messages = mapping.entry.turns;
      if (mapping?.entry.system && !mapping.entry.system.includes('.')) fieldSource.system = mapping.entry.system;
    } catch (e) {
      view.message = (e as Error).message;
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
      const unknown = /^unknown role .* in message (\d+)/.exec(outcome.message);
      view.warnings.push(
        unknown ? { code: 'unknown_role', message: outcome.message, turn: Number(unknown[1]) - 1 } : { code: 'errored', message: outcome.message },
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
      if (splits && options.maxLength !== undefined && tokens > options.maxLength) {
        view.warnings.push({
          code: 'record_split',
          message: `record ${r + 1} has ${count} tokens, over the max length ${options.maxLength.toLocaleString('en-US')}: prepare splits the conversation into records that fit (long records: split)`,
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
      if (detail) view.detail = this.detailOf(r, rec, enc.ids, enc.starts, m, renderConv, built.messages, template, view.turns, prefixRenders);
    });
    if (options.detailRecord !== undefined && !view.detail && built.records.length > 0) {
      // Out of range: clamp to the last record.
      const r = Math.min(Math.max(0, options.detailRecord), built.records.length - 1);
      const rec = built.records[r];
      const enc = this.encodeExact(rec.text);
      view.detail = this.detailOf(
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

  /** Tokens of one record with their turn, from prefix renders: turn k starts where the render of messages[:k] stops agreeing with the record's text. */
  private detailOf(
    index: number,
    rec: TextRecord,
    ids: number[],
    starts: number[],
    mask: number[],
    conv: Conversation,
    messages: readonly Message[],
    template: ChatTemplate,
    turns: TurnView[],
    prefixRenders: Map<string, string>,
  ): RecordDetail {
    // Where turn k's header starts: render messages[:k] followed by a stand-in turn k (its role, a
    // placeholder text) and the same with another role; the two renders part where the role is
    // written, and the special tokens right before that point (`<|im_start|>`) open the header.
    // History is rendered as history here, as in the record, so templates that rewrite earlier
    // turns (Qwen3 dropping reasoning) do not shift the boundary. Falls back to the plain
    // prefix render when the template refuses a stand-in (e.g. role alternation checks).
    const render = (k: number, role?: Role): string => {
      const key = `${k}:${role ?? ''}`;
      let r = prefixRenders.get(key);
      if (r === undefined) {
        const msgs = role ? [...messages.slice(0, k), { role, content: 'eagle3 turn placeholder' }] : messages.slice(0, k);
        r = template.render(msgs, conv.tools, { addGenerationPrompt: false });
        prefixRenders.set(key, r);
      }
      return r;
    };
    const headerStart = (k: number): number => {
      const role = messages[k].role;
      const other: Role = role === 'user' ? 'assistant' : 'user';
      try {
        const a = render(k, role);
        let p = Math.min(commonPrefixLength(a, render(k, other)), commonPrefixLength(a, rec.text));
        // Inside a special token (`<｜User｜>` vs `<｜Assistant｜>` part after `<｜`): back to its start.
        for (const sp of this.specialSet) {
          const i = sp ? rec.text.lastIndexOf(sp, p) : -1;
          if (i >= 0 && i < p && i + sp.length > p) p = i;
        }
        for (let moved = true; moved;) {
          moved = false;
          for (const sp of this.specialSet) {
            if (sp && p >= sp.length && rec.text.startsWith(sp, p - sp.length)) {
              p -= sp.length;
              moved = true;
              break;
            }
          }
        }
        return p;
      } catch {
        return commonPrefixLength(render(k), rec.text);
      }
    };
    const last = Math.max(...rec.targets, 0);
    const bounds: number[] = [];
    let prev = 0;
    for (let k = 0; k <= last && k < messages.length; k++) {
      let b: number;
      try {
        b = k === 0 ? 0 : headerStart(k);
      } catch {
        b = prev;
      }
      // A boundary inside a token (`<｜User｜>` vs `<｜Assistant｜>` part after `<｜`) moves to that token's start.
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= b) lo = mid;
        else hi = mid - 1;
      }
      if (starts.length && starts[lo] < b && (lo + 1 >= starts.length || starts[lo + 1] > b)) b = starts[lo];
      prev = Math.max(prev, b);
      bounds.push(prev);
    }
    // The last target's completion follows the generation prompt: the target turn runs from its own start to the end of the text.
    const turnRanges: RecordDetail['turnRanges'] = [];
    for (let k = 0; k <= last && k < turns.length; k++) {
      const start = bounds[k];
      const end = k === last ? rec.text.length : bounds[k + 1];
      if (end > start) turnRanges.push({ turn: k, role: turns[k].role, start, end });
    }
    // Within the last target's range, the generation prompt lies between the end of messages[:last] and the completion.
    const tokens: TokenView[] = ids.map((id, k) => {
      const start = starts[k];
      const end = k + 1 < starts.length ? starts[k + 1] : rec.text.length;
      const surface = rec.text.slice(start, end);
      let turn = -1;
      for (const tr of turnRanges) if (start >= tr.start && start < tr.end) turn = tr.turn;
      const content = this.tokenizer.idToToken(id);
      return { id, text: surface, start, trainable: mask[k] === 1, special: content !== undefined && this.specialSet.has(content), turn };
    });
    // Each field's text inside its turn's rendered range (templates write content verbatim; a field not found is left out).
    const fieldSpans: RecordDetail['fieldSpans'] = [];
    for (const tr of turnRanges) {
      const m = conv.messages[tr.turn];
      if (!m) continue;
      const look = (field: TurnField, t: string | null | undefined) => {
        if (!t) return;
        const i = rec.text.indexOf(t, tr.start);
        if (i >= 0 && i + t.length <= tr.end) fieldSpans.push({ turn: tr.turn, field, start: i, end: i + t.length });
      };
      look('reasoning_content', m.reasoning_content);
      look('content', m.content);
      for (const tc of m.tool_calls ?? []) {
        const args = typeof tc.function.arguments === 'string' ? tc.function.arguments : JSON.stringify(tc.function.arguments);
        const i = rec.text.indexOf(tc.function.name, tr.start);
        if (i >= 0 && i < tr.end) {
          const j = args ? rec.text.indexOf(args.slice(0, 40), i) : -1;
          const end = j >= 0 ? Math.min(tr.end, j + args.length) : i + tc.function.name.length;
          fieldSpans.push({ turn: tr.turn, field: 'tool_calls', start: i, end });
        }
      }
    }
    return { index, tokens, turnRanges, spans: rec.spans.map((s) => [s[0], s[1]] as Span), fieldSpans };
  }
}

/** Characters of `spans` that lie in `[from, to)`. */
function trainableChars(spans: readonly Span[], from: number, to: number): number {
  let n = 0;
  for (const [s, e] of spans) n += Math.max(0, Math.min(e, to) - Math.max(s, from));
  return n;
}

const viewers = new Map<string, RecordViewer>();

/**
 * A {@link RecordViewer} for a tokenizer folder, loaded once per process and
 * reloaded when one of its files (`tokenizer.json`, `tiktoken.model`,
 * `tokenizer_config.json`, `chat_template.jinja`, `chat_template.json`) changes
 * (by modification time and size: `tokenizerFilesStamp`).
 * @param dir local model folder; undefined or '' = the embedded default
 * @throws TokenizerLoadError as `loadTokenizer`
 */
export function recordViewerFor(dir: string | undefined): RecordViewer {
  const folder = dir ? resolve(dir) : '';
  const stamp = folder ? tokenizerFilesStamp(folder) : 'embedded';
  const key = `${folder}|${stamp}`;
  let v = viewers.get(key);
  if (!v) {
    for (const k of viewers.keys()) if (k.startsWith(`${folder}|`)) viewers.delete(k);
    v = new RecordViewer(loadTokenizer(dir || undefined));
    viewers.set(key, v);
  }
  return v;
}
