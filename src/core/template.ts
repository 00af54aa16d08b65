/**
 * Chat-template rendering with `@huggingface/jinja`, and the adaptation of
 * normalized messages to what a particular template reads.
 */
import { Template } from '@huggingface/jinja';
import type { Message } from './types';
import type { NamedTemplate, SpecialTokenVars } from './tokenizer';

/** Raised when the template itself raises or fails; `message` is the template's own message. */
export class TemplateRenderError extends Error {}

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
 * variables `messages`, `tools` (absent when the record has none or an empty
 * list), `add_generation_prompt`, the special tokens (`bos_token`, `eos_token`, …)
 * and the template kwargs (`enable_thinking`, …) at top level.
 */
/** Markers the `{% generation %}` / `{% endgeneration %}` tags are rewritten to (Unicode private-use characters, never in real text). */
const GEN_START = '\uE000';
const GEN_END = '\uE001';
const GEN_TAG = /\{%(-?)\s*(end)?generation\s*(-?)%\}/g;

export class ChatTemplate {
  private readonly template: Template;
  /**
   * Whether the template marks the assistant's output with `{% generation %}` …
   * `{% endgeneration %}` (a `transformers` extension behind
   * `return_assistant_tokens_mask`); trainable spans then come from those blocks.
   */
  readonly hasGenerationBlocks: boolean;
  /** Whether an assistant turn with tool calls and no text keeps `content: null` (spec loss-mask.md "Content that is null"). */
  readonly keepNullToolCallContent: boolean;
  /** Whether tool-call `arguments` are given as objects (the template serializes them itself) rather than JSON strings. */
  readonly objectToolArguments: boolean;

  /**
   * @param named the template source and its name
   * @param specialTokenVars `bos_token`, `eos_token`, … strings
   * @param kwargs template kwargs of the run
   * @throws TemplateRenderError when the template does not parse
   */
  constructor(
    readonly named: NamedTemplate,
    private readonly specialTokenVars: SpecialTokenVars,
    private readonly kwargs: Record<string, unknown> = {},
  ) {
    this.hasGenerationBlocks = /\{%-?\s*generation\s*-?%\}/.test(named.source);
    // @huggingface/jinja drops generation tags; rewrite them to marker outputs so their positions survive rendering.
    const source = this.hasGenerationBlocks
      ? named.source.replace(GEN_TAG, (_m, l: string, end: string | undefined, r: string) => `{{${l} '${end ? GEN_END : GEN_START}' ${r}}}`)
      : named.source;
    try {
      this.template = new Template(source);
    } catch (e) {
      throw new TemplateRenderError(`chat template "${named.name}" does not parse: ${(e as Error).message}`);
    }
    this.keepNullToolCallContent = this.probeNullContent();
    this.objectToolArguments = this.probeObjectArguments();
  }

  /**
   * Renders messages (already adapted with {@link adaptMessages}) to text.
   * @param tools the record's tool definitions, or undefined
   * @throws TemplateRenderError with the template's own message when it raises
   */
  render(messages: readonly Message[], tools: unknown[] | undefined, opts: RenderOptions): string {
    const raw = this.renderRaw(messages, tools, opts);
    return this.hasGenerationBlocks ? raw.replace(/[\uE000\uE001]/g, '') : raw;
  }

  /**
   * Renders and returns the text with the `{% generation %}` blocks as spans
   * (`[start, end)` JS string indices into the returned text, in order).
   * Without generation blocks the span list is empty.
   * @throws TemplateRenderError as {@link render}
   */
  renderWithGenerationSpans(messages: readonly Message[], tools: unknown[] | undefined, opts: RenderOptions): { text: string; spans: [number, number][] } {
    const raw = this.renderRaw(messages, tools, opts);
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
    return { text, spans };
  }

  private renderRaw(messages: readonly Message[], tools: unknown[] | undefined, opts: RenderOptions): string {
    const vars: Record<string, unknown> = {
      ...this.specialTokenVars,
      ...this.kwargs,
      messages: messages.map(toTemplateMessage),
      add_generation_prompt: opts.addGenerationPrompt,
    };
    if (tools && tools.length > 0) vars.tools = tools;
    try {
      return this.template.render(vars);
    } catch (e) {
      throw new TemplateRenderError((e as Error).message);
    }
  }

  /**
   * Maps normalized messages to what this template is given: every `null`
   * content becomes `""`, except an assistant turn with tool calls and no text,
   * which keeps `null` when this template renders tool calls only that way
   * (DeepSeek-V3). Spec loss-mask.md "Content that is null".
   */
  adaptMessages(messages: readonly Message[]): Message[] {
    return messages.map((m) => {
      const hasCalls = m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0;
      let out = m;
      if (hasCalls && !m.content) out = { ...m, content: this.keepNullToolCallContent ? null : '' };
      else if (m.content === null) out = { ...m, content: '' };
      if (hasCalls) {
        out = {
          ...out,
          tool_calls: out.tool_calls!.map((tc) => ({ ...tc, function: { ...tc.function, arguments: this.argumentsForm(tc.function.arguments) } })),
        };
      }
      return out;
    });
  }

  /** Tool-call arguments in the form this template reads: an object, or a JSON string (Python `json.dumps` spacing). A string that is not JSON stays a string. */
  private argumentsForm(args: string | Record<string, unknown>): string | Record<string, unknown> {
    if (this.objectToolArguments) {
      if (typeof args !== 'string') return args;
      try {
        const v = JSON.parse(args);
        return v && typeof v === 'object' && !Array.isArray(v) ? v : args;
      } catch {
        return args;
      }
    }
    return typeof args === 'string' ? args : pythonJsonDumps(args);
  }

  /**
   * Renders a tool call whose `arguments` is an object; the template takes
   * objects when the render shows them as JSON (it applies `tojson`), and
   * JSON strings otherwise (it concatenates them, as DeepSeek-V3's does).
   */
  private probeObjectArguments(): boolean {
    const call = { id: 'call_probe', type: 'function' as const, function: { name: 'probe_tool_name_7f3a', arguments: { q: 'x' } } };
    for (const content of [null, '']) {
      try {
        const text = this.render([{ role: 'user', content: 'probe' }, { role: 'assistant', content, tool_calls: [call] }], undefined, { addGenerationPrompt: false });
        if (text.includes('probe_tool_name_7f3a')) return /\{\s*"q"\s*:\s*"x"\s*\}/.test(text);
      } catch {
        /* try the other content form */
      }
    }
    return false;
  }

  /**
   * Renders a probe turn (a tool call with `arguments` as a JSON string, the
   * OpenAI wire form) with `content: null` and with `""`; keeps `null` only
   * when the call's name appears in the `null` render and not in the `""` one.
   */
  private probeNullContent(): boolean {
    const name = 'probe_tool_name_7f3a';
    const call = { id: 'call_probe', type: 'function' as const, function: { name, arguments: '{"q": "x"}' } };
    const turn = (content: string | null): Message[] => [
      { role: 'user', content: 'probe' },
      { role: 'assistant', content, tool_calls: [call] },
    ];
    const tryRender = (content: string | null): string | undefined => {
      try {
        return this.render(turn(content), undefined, { addGenerationPrompt: false });
      } catch {
        return undefined;
      }
    };
    const withNull = tryRender(null);
    const withEmpty = tryRender('');
    return withNull !== undefined && withNull.includes(name) && !(withEmpty ?? '').includes(name);
  }
}

/** `JSON.stringify` with Python `json.dumps` default separators (`", "`, `": "`) and ASCII escaping off, the form `transformers` users produce. */
export function pythonJsonDumps(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(pythonJsonDumps).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${JSON.stringify(k)}: ${pythonJsonDumps(x)}`)
    .join(', ')}}`;
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
