/**
 * Chat-template rendering with Python jinja2's semantics (jinja/: our
 * evaluator over `@huggingface/jinja`'s lexer and parser, under a render
 * budget), and the adaptation of normalized messages to what a particular
 * template reads.
 */
import type { Code } from '../codes';
import { asWrittenInline, splitInlineThink } from '../formats/content';
import { CompiledTemplate } from './jinja';
import { TemplateRenderError } from './errors';
import { pythonFloatRepr } from './jinja';
import { PyFloat } from './jinja/values';
import type { RenderBudget } from './renderBudget';
import type { Message } from '../types';
import type { NamedTemplate, SpecialTokenVars } from '../tokenizers/types';
import { probeTemplate, type TemplateProbes } from './probes';
import { jsonTextDepth, MAX_JSON_DEPTH } from '../jsonDepth';

/** Options of a {@link ChatTemplate}. */
export interface ChatTemplateOptions {
  /** Limits of one render (renderBudget.ts; unset fields keep their defaults). */
  budget?: Partial<RenderBudget>;
  /** The clock `strftime_now` reads (default: the current local time); fixed for reproducible renders in tests. */
  now?: () => Date;
  /**
   * Prefix renders of a conversation (prefixRenderer.ts) from one traced render where proven equal (default true,
   * unless the environment sets `EAGLE3_NO_LINEAR_PREFIXES=1` when the template is made); false renders every prefix on
   * its own (the reference path, for comparisons).
   */
  linearPrefixes?: boolean;
  /**
   * Within those, prefix renders whose template header depends on the number of messages (Qwen3's
   * `messages|length`) from the same traced render by header replay (jinja/prefixTrace.ts; default true, unless the
   * environment sets `EAGLE3_NO_HEADER_REPLAY=1` when the template is made); false renders them on their own.
   */
  headerReplay?: boolean;
}

/** The prefix renders one traced render serves ({@link ChatTemplate.tracePrefixes}). */
export interface TracedPrefixes {
  /** The text {@link ChatTemplate.render} gives for `messages.slice(0, n)`, or undefined when not proven. */
  render(n: number, addGenerationPrompt: boolean): string | undefined;
  /** The template read `add_generation_prompt` before its message loop: renders with the other value need a trace of their own. */
  readonly flagReadEarly: boolean;
}

/** Options of one render. */
export interface RenderOptions {
  /** `add_generation_prompt`: append the header the server writes before the model's turn. */
  addGenerationPrompt: boolean;
}

/**
 * A compiled chat template bound to a tokenizer's special tokens, the run's
 * template kwargs and (optionally) a record's tools.
 *
 * Rendering follows `transformers` `apply_chat_template(tokenize=False)`:
 * variables `messages`, `tools` (None when the record has none or an empty
 * list), `documents` (None), `add_generation_prompt`, the special tokens
 * (`bos_token`, `eos_token`, …) and the template kwargs (`enable_thinking`, …)
 * at top level, rendered by the engine of `jinja/` (jinja2's
 * semantics) within a render budget (`renderBudget.ts`).
 */
/**
 * Markers the `{% generation %}` / `{% endgeneration %}` tags write in the second, marked compilation of a template
 * that has them (Unicode private-use characters). Only {@link ChatTemplate.renderWithGenerationSpans} renders with
 * them; a conversation that itself holds one of them gets no spans (the blocks cannot be told from its text).
 */
const GEN_START = '\uE000';
const GEN_END = '\uE001';

export class ChatTemplate {
  private readonly template: CompiledTemplate;
  /** The same source with the generation tags writing {@link GEN_START} / {@link GEN_END}; only when it has the tags. */
  private readonly marked: CompiledTemplate | undefined;
  /**
   * Whether the template marks the assistant's output with `{% generation %}` …
   * `{% endgeneration %}` (a `transformers` extension behind
   * `return_assistant_tokens_mask`); trainable spans then come from those blocks.
   */
  readonly hasGenerationBlocks: boolean;
  /**
   * What this template is given and how it writes reasoning, decided once by probe renders
   * (probes.ts; docs/loss-mask-rules.md "What the template is given").
   */
  readonly probes: TemplateProbes;

  /**
   * @param named the template source and its name
   * @param specialTokenVars `bos_token`, `eos_token`, … strings
   * @param kwargs template kwargs of the run
   * @param options the render budget
   * @throws TemplateRenderError when the template does not parse
   */
  constructor(
    readonly named: NamedTemplate,
    private readonly specialTokenVars: SpecialTokenVars,
    private readonly kwargs: Record<string, unknown> = {},
    private readonly options: ChatTemplateOptions = {},
  ) {
    this.hasGenerationBlocks = /\{%-?\s*generation\s*-?%\}/.test(named.source);
    try {
      // Generation tags render nothing (jinja2's whitespace control); the marked copy writes markers where they stand,
      // so the blocks' positions survive rendering, and every other render is the template's own text, untouched.
      this.template = new CompiledTemplate(named.source);
      this.marked = this.hasGenerationBlocks ? new CompiledTemplate(named.source, { generationMarkers: { start: GEN_START, end: GEN_END } }) : undefined;
    } catch (e) {
      throw new TemplateRenderError(`chat template "${named.name}" does not parse: ${(e as Error).message}`, (e as TemplateRenderError).pythonType);
    }
    this.linear = options.linearPrefixes ?? !process.env.EAGLE3_NO_LINEAR_PREFIXES;
    this.headerReplay = options.headerReplay ?? !process.env.EAGLE3_NO_HEADER_REPLAY;
    this.renderOpts = { budget: options.budget, now: options.now };
    this.traceOpts = { ...this.renderOpts, headerReplay: this.headerReplay };
    this.probes = probeTemplate((messages, gen) => this.render(messages, undefined, { addGenerationPrompt: gen }));
  }

  /** Decided once, when the template is made (the environment is not read per render): {@link linearPrefixes}, header replay. */
  private readonly linear: boolean;
  private readonly headerReplay: boolean;
  /** Made once: the engine's options of every render and traced render; the special tokens' and kwargs' variables (kwargs win). */
  private readonly renderOpts: { budget?: Partial<RenderBudget>; now?: () => Date };
  private readonly traceOpts: { budget?: Partial<RenderBudget>; now?: () => Date; headerReplay: boolean };
  private baseVars: Record<string, unknown> | undefined;

  /** The template kwargs every render gets (`enable_thinking`, …). */
  get templateKwargs(): Readonly<Record<string, unknown>> {
    return this.kwargs;
  }

  /** Whether an assistant turn with tool calls and no text keeps `content: null` (docs/loss-mask-rules.md "No text"). */
  get keepNullToolCallContent(): boolean {
    return this.probes.nullContent.form === 'null';
  }

  /** Whether tool-call `arguments` are given as objects rather than JSON strings (docs/loss-mask-rules.md "Tool-call arguments"). */
  get objectToolArguments(): boolean {
    return this.probes.toolArguments.form === 'object';
  }

  /**
   * Whether the template also writes a string `arguments` verbatim (Qwen3's and Kimi-K2's `is string` branch).
   * Such a template gets a JSON-string `arguments` re-serialized the way Python's `tojson` writes the parsed
   * object ({@link pythonJsonRedump}): the same text as an object would give, but numbers as Python writes
   * them (`1.0` stays `1.0`, big integers stay exact), which a JS object cannot carry.
   */
  get verbatimStringArguments(): boolean {
    return this.probes.toolArguments.verbatimStrings;
  }

  /**
   * Renders messages (already adapted with {@link adaptMessages}) to text.
   * @param tools the record's tool definitions, or undefined
   * @throws TemplateRenderError with the template's own message when it raises
   * @throws TemplateBudgetError (a TemplateRenderError) when the render runs past the render budget
   */
  render(messages: readonly Message[], tools: unknown[] | undefined, opts: RenderOptions): string {
    return this.renderRaw(messages, tools, opts);
  }

  /**
   * Renders and returns the text (equal to {@link render}'s) with the `{% generation %}` blocks as spans
   * (`[start, end)` JS string indices into the returned text, in order).
   * Without generation blocks the span list is empty; `spans` is null when the rendered text itself holds a
   * marker character (U+E000 / U+E001, from the data), so the blocks cannot be told apart from it.
   * @throws TemplateRenderError as {@link render}
   */
  renderWithGenerationSpans(
    messages: readonly Message[],
    tools: unknown[] | undefined,
    opts: RenderOptions,
  ): { text: string; spans: [number, number][] | null } {
    const plain = this.renderRaw(messages, tools, opts);
    if (!this.marked) return { text: plain, spans: [] };
    if (/[\uE000\uE001]/.test(plain)) return { text: plain, spans: null };
    const raw = this.marked.render(this.variables(messages, tools, opts.addGenerationPrompt), this.renderOpts);
    const spans: [number, number][] = [];
    let text = '';
    let open = -1;
    for (const ch of raw) {
      if (ch === GEN_START) open = text.length;
      else if (ch === GEN_END) {
        if (open >= 0 && text.length > open) spans.push([open, text.length]);
        open = -1;
      } else text += ch;
    }
    // The marked render differs from the plain one only by its markers (a template that reads the clock twice may not).
    return text === plain ? { text, spans } : { text: plain, spans: null };
  }

  private renderRaw(messages: readonly Message[], tools: unknown[] | undefined, opts: RenderOptions): string {
    return this.template.render(this.variables(messages, tools, opts.addGenerationPrompt), this.renderOpts);
  }

  /** The template's variables, as transformers' render_jinja_template passes them: `tools` and `documents` always, None when absent. */
  private variables(messages: readonly Message[], tools: unknown[] | undefined, addGenerationPrompt: boolean): Record<string, unknown> {
    return {
      ...(this.baseVars ??= { ...this.specialTokenVars, ...this.kwargs }),
      messages: messages.map(toTemplateMessage),
      tools: tools && tools.length > 0 ? tools : null,
      documents: null,
      add_generation_prompt: addGenerationPrompt,
    };
  }

  /** Whether prefix renders come from one traced render where proven ({@link ChatTemplateOptions.linearPrefixes}). */
  get linearPrefixes(): boolean {
    return this.linear;
  }

  /**
   * Renders `messages` once, traced, with `add_generation_prompt` = `addGenerationPrompt`, and serves the renders of
   * its prefixes (jinja/prefixTrace.ts: each proven equal to {@link render} of `messages.slice(0, n)`, or not
   * served). Use it through prefixRenderer.ts, which falls back to {@link render} where this cannot serve.
   */
  tracePrefixes(messages: readonly Message[], tools: unknown[] | undefined, addGenerationPrompt = false): TracedPrefixes {
    const trace = this.template.tracePrefixes(this.variables(messages, tools, addGenerationPrompt), 'messages', 'add_generation_prompt', this.traceOpts);
    return {
      render: (n, gen) => trace.render(n, gen),
      get flagReadEarly() {
        return trace.flagReadEarly;
      },
    };
  }

  /**
   * Maps normalized messages to what this template is given (docs/loss-mask-rules.md "What the template is
   * given"), with the facts the loss-mask rules need per turn. See {@link adaptTurns}.
   */
  adaptMessages(messages: readonly Message[]): Message[] {
    return this.adaptTurns(messages).messages;
  }

  /**
   * Maps normalized messages to what this template is given (docs/loss-mask-rules.md "What the template is given"):
   * - an assistant turn with tool calls and no text (`null`, `""`, whitespace) gets `null` when this template
   *   renders tool calls only that way, else `""`; every other `null` content becomes `""`;
   * - tool-call arguments as objects, or as JSON strings for a template that cannot render objects (Python
   *   `json.dumps` form); arguments that are not a JSON object stay the string they are;
   * - reasoning written inline at the start of an assistant's content (`<think>R</think>C`, or `R</think>C`)
   *   is split into `reasoning_content` and content only when this template renders `reasoning_content`;
   *   otherwise the content stays exactly as written.
   */
  adaptTurns(messages: readonly Message[]): AdaptedTurns {
    const notes = new Set<Code>();
    const reasoning: (string | undefined)[] = [];
    const inline: (InlineReasoning | undefined)[] = [];
    const out = messages.map((given) => {
      // Reasoning read from inline text starts again from the text as written: the rules below split it or keep it.
      const m = asWrittenInline(given);
      let o: Message = m;
      let r = nonBlank(m.reasoning_content);
      let found: InlineReasoning | undefined;
      if (m.role === 'assistant' && r === undefined && typeof m.content === 'string') {
        const split = splitInlineThink(m.content);
        if (split && split.reasoning.trim() !== '') {
          found = { reasoning: split.reasoning, content: split.content, written: m.content };
          r = split.reasoning;
          if (this.probes.reasoning.rendered) {
            o = { ...o, content: split.content, reasoning_content: split.reasoning };
            notes.add('inline_think_split');
          } else notes.add('inline_think_kept');
        }
      }
      const hasCalls = o.role === 'assistant' && (o.tool_calls?.length ?? 0) > 0;
      if (hasCalls && (o.content === null || o.content.trim() === '')) o = { ...o, content: this.keepNullToolCallContent ? null : '' };
      else if (o.content === null) o = { ...o, content: '' };
      if (hasCalls) {
        o = {
          ...o,
          tool_calls: o.tool_calls!.map((tc) => ({ ...tc, function: { ...tc.function, arguments: this.argumentsForm(tc.function.arguments) } })),
        };
      }
      reasoning.push(r);
      inline.push(found && !this.probes.reasoning.rendered ? found : undefined);
      return o;
    });
    return { messages: out, notes: [...notes], reasoning, inline };
  }

  /**
   * Tool-call arguments in the form this template reads: an object, or a JSON string as Python's
   * `json.dumps(obj, ensure_ascii=False)` writes it. A string that is not a JSON object stays that string.
   */
  private argumentsForm(args: string | Record<string, unknown>): string | Record<string, unknown> {
    if (this.objectToolArguments) {
      if (typeof args !== 'string') return args;
      if (this.verbatimStringArguments) return pythonJsonRedump(args) ?? args;
      // Parsed as Python does (vLLM and SGLang parse with json.loads): `10.0` stays a float, `1e5` is `100000.0`.
      const v = parsePythonJsonObject(args);
      return v === null ? args : (engineValue(v) as Record<string, unknown>);
    }
    return typeof args === 'string' ? (pythonJsonRedump(args) ?? args) : pythonJsonDumps(args);
  }
}

/** Reasoning written inline in an assistant's content that the template was given as written (it does not render `reasoning_content`). */
export interface InlineReasoning {
  /** The reasoning R (newlines trimmed at its ends). */
  reasoning: string;
  /** The content after the reasoning block (leading newlines trimmed). */
  content: string;
  /** The content exactly as written. */
  written: string;
}

/** Messages adapted to a template ({@link ChatTemplate.adaptTurns}) and what the loss-mask rules need to know per turn. */
export interface AdaptedTurns {
  /** What the template is given, one per input message (same indices). */
  messages: Message[];
  /** `inline_think_split` (inline reasoning moved to `reasoning_content`), `inline_think_kept` (kept in the content as written). */
  notes: Code[];
  /** Per message: the turn's reasoning (its `reasoning_content`, or reasoning written inline at the start of its content), undefined when it has none. */
  reasoning: (string | undefined)[];
  /** Per message: inline reasoning kept in the content as written (the template does not render `reasoning_content`). */
  inline: (InlineReasoning | undefined)[];
}

function nonBlank(s: string | undefined): string | undefined {
  return s !== undefined && s.trim() !== '' ? s : undefined;
}

/** `JSON.stringify` with Python `json.dumps` default separators (`", "`, `": "`) and ASCII escaping off, the form `transformers` users produce. */
export function pythonJsonDumps(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof PyFloat) return pythonFloatRepr(v.v);
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(pythonJsonDumps).join(', ')}]`;
  const entries = v instanceof Map ? [...(v as Map<string, unknown>)] : Object.entries(v as Record<string, unknown>);
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}: ${pythonJsonDumps(x)}`).join(', ')}}`;
}

/**
 * Re-serializes a JSON text as Python's `json.dumps(json.loads(text), ensure_ascii=False)` writes it — what
 * `transformers`' `tojson` filter prints for tool-call arguments parsed by a server: separators `", "` and
 * `": "`, key order kept (a repeated key keeps its first place and last value), integers exact, other numbers
 * as Python's `repr(float)` (`1.0`, `1e-07`, `1e+16`), strings escaped as `JSON.stringify` does (the same
 * escapes as Python for well-formed text).
 * @returns the text, or null when `text` is not a JSON object
 */
export function pythonJsonRedump(text: string): string | null {
  const v = parsePythonJsonObject(text);
  return v === null ? null : pythonJsonDumps(v);
}

/**
 * Parses a JSON object text the way Python's `json.loads` does, into values that keep what JavaScript's
 * `JSON.parse` loses: a number with a fraction or an exponent is a float ({@link PyFloat}: `10.0` stays `10.0`,
 * `1e5` is `100000.0`), an integer stays an integer (a `bigint` past 2^53, exact), an object is a `Map` in the
 * order of its keys' first appearance (a repeated key keeps its first place and last value).
 * @returns the object, or null when `text` is not a JSON object or is nested past {@link MAX_JSON_DEPTH}
 */
export function parsePythonJsonObject(text: string): Map<string, unknown> | null {
  // The reader recurses once per level: a text nested deeper than rows may be is not parsed.
  if (text.length > MAX_JSON_DEPTH && jsonTextDepth(text) > MAX_JSON_DEPTH) return null;
  const r = new PyJsonReader(text);
  try {
    r.ws();
    if (text[r.i] !== '{') return null;
    const out = r.value() as Map<string, unknown>;
    r.ws();
    return r.i === text.length ? out : null;
  } catch {
    return null;
  }
}

/** A recursive-descent reader of JSON text into Python `json.loads` values (see {@link parsePythonJsonObject}); throws SyntaxError at the first thing that is not JSON. */
class PyJsonReader {
  /** The next character to read. */
  i = 0;
  constructor(private readonly text: string) {}

  /** Skips JSON whitespace. */
  ws(): void {
    while (this.i < this.text.length && ' \t\n\r'.includes(this.text[this.i])) this.i++;
  }

  private fail(): never {
    throw new SyntaxError('not JSON');
  }

  /** The value at `i`: an object (a `Map`), a list, a string, a literal or a number. */
  value(): unknown {
    this.ws();
    const c = this.text[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.list();
    if (c === '"') return this.str();
    for (const [lit, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (this.text.startsWith(lit, this.i)) {
        this.i += lit.length;
        return v;
      }
    }
    return this.number();
  }

  /** A string, decoded by `JSON.parse`. */
  private str(): string {
    const { text } = this;
    const start = this.i++;
    while (this.i < text.length && text[this.i] !== '"') this.i += text[this.i] === '\\' ? 2 : 1;
    if (this.i >= text.length) this.fail();
    return JSON.parse(text.slice(start, ++this.i)) as string;
  }

  /** An object as a `Map` in the order of its keys' first appearance (a repeated key keeps its first place and last value). */
  private object(): Map<string, unknown> {
    const { text } = this;
    this.i++;
    const entries = new Map<string, unknown>();
    this.ws();
    if (text[this.i] === '}') {
      this.i++;
      return entries;
    }
    for (;;) {
      this.ws();
      if (text[this.i] !== '"') this.fail();
      const key = this.str();
      this.ws();
      if (text[this.i++] !== ':') this.fail();
      entries.set(key, this.value());
      this.ws();
      if (text[this.i] === ',') this.i++;
      else if (text[this.i] === '}') {
        this.i++;
        return entries;
      } else this.fail();
    }
  }

  private list(): unknown[] {
    const { text } = this;
    this.i++;
    const items: unknown[] = [];
    this.ws();
    if (text[this.i] === ']') {
      this.i++;
      return items;
    }
    for (;;) {
      items.push(this.value());
      this.ws();
      if (text[this.i] === ',') this.i++;
      else if (text[this.i] === ']') {
        this.i++;
        return items;
      } else this.fail();
    }
  }

  /** A number: with a fraction or an exponent a {@link PyFloat}, else an integer (a `bigint` past 2^53, `-0` as 0). */
  private number(): number | bigint | PyFloat {
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i, this.i + 400));
    if (!m) this.fail();
    this.i += m[0].length;
    if (m[1] !== undefined || m[2] !== undefined) return new PyFloat(Number(m[0]));
    const n = Number(m[0]);
    return Number.isSafeInteger(n) ? (Object.is(n, -0) ? 0 : n) : BigInt(m[0]);
  }
}

/**
 * A value of {@link parsePythonJsonObject} as the template engine takes it: objects as plain objects, floats kept
 * as {@link PyFloat}, integers past 2^53 as the nearest number (the engine has no big integers).
 */
function engineValue(v: unknown): unknown {
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, engineValue(x)]));
  if (Array.isArray(v)) return v.map(engineValue);
  return typeof v === 'bigint' ? Number(v) : v;
}

/** The plain object a template sees for one message: only the fields that are set (templates test `is defined`). */
function toTemplateMessage(m: Message): Record<string, unknown> {
  const o: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.reasoning_content !== undefined) o.reasoning_content = m.reasoning_content;
  if (m.tool_calls && m.tool_calls.length > 0) o.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) o.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) o.name = m.name;
  return o;
}

/**
 * Chooses the template for a record the way `transformers` does: the one named
 * `tool_use` when the record has tools and such a template exists, else
 * `default`, else the only one.
 * @returns undefined when the tokenizer has no chat template
 */
export function pickTemplate(templates: NamedTemplate[], hasTools: boolean): NamedTemplate | undefined {
  if (hasTools) {
    const t = templates.find((x) => x.name === 'tool_use');
    if (t) return t;
  }
  return templates.find((x) => x.name === 'default') ?? templates[0];
}
