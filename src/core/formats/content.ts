/**
 * A turn's content → text, reasoning and tool calls: content-part lists (OpenAI
 * chat / Responses parts, Anthropic blocks, Gemini parts, LLaMA-Factory v1
 * `{type, value}` parts), tool calls in their several spellings (OpenAI
 * `tool_calls`, flat `{name, arguments}`, Hermes `<tool_call>` text), and the
 * reasoning layouts written inside answers (`<think>`, thought markers).
 */
import type { Message, ToolCall } from '../types';
import { describeJsonType, isObject, type NormalizeContext, type TurnError } from './base';
import { jsonBreakDescription, parseJsonLimited } from '../jsonDepth';

/** Content-part types whose `text` is rendered (OpenAI chat + Responses API, Anthropic spellings). */
const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);

/**
 * The text of a text content part, or undefined: `text` of a part typed as text (or untyped); a text-typed part
 * without `text` whose text is under `content` (`{"type": "text", "content": "…"}`, as some exporters write it).
 */
function textOfPart(part: Record<string, unknown>, ctx: NormalizeContext): string | undefined {
  const typed = part.type === undefined || TEXT_PART_TYPES.has(String(part.type));
  if (!typed) return undefined;
  if (typeof part.text === 'string') return part.text;
  if (part.text === undefined && part.type !== undefined && typeof part.content === 'string') {
    ctx.note('text_part_content_read', 'text content parts with their text under "content" (no "text") read as text');
    return part.content;
  }
  return undefined;
}

/** Notes a turn whose every content part was skipped as non-text: it goes out with no text. */
function noteEmptiedTurn(parts: number, skipped: number, kept: boolean, ctx: NormalizeContext): void {
  if (parts > 0 && skipped === parts && !kept)
    ctx.note('turn_empty_after_skipped_parts', 'a turn whose every content part was skipped (not text) goes out with empty text');
}

/** Anthropic Messages API content blocks → text, reasoning, tool calls and tool-result messages. */
export function contentBlocks(blocks: unknown[], ctx: NormalizeContext): { text: string; reasoning?: string; toolCalls: ToolCall[]; toolResults: Message[] } {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  const toolResults: Message[] = [];
  let skipped = 0;
  for (const b of blocks) {
    const partText = isObject(b) ? textOfPart(b, ctx) : undefined;
    if (typeof b === 'string') texts.push(b);
    else if (isObject(b) && b.type === 'thinking' && typeof b.thinking === 'string') reasoning.push(b.thinking);
    else if (isObject(b) && b.thought === true && typeof b.text === 'string')
      reasoning.push(b.text); // Gemini thought part
    else if (isObject(b) && isObject(b.functionCall) && typeof b.functionCall.name === 'string') {
      // Gemini `functionCall` part (ai.google.dev, function calling): {name, args}.
      const fc = b.functionCall;
      const call: ToolCall = { type: 'function', function: { name: fc.name as string, arguments: isObject(fc.args) ? fc.args : {} } };
      if (typeof fc.id === 'string') call.id = fc.id;
      toolCalls.push(call);
      ctx.note('function_call_parts_converted', 'Gemini "functionCall" parts converted to tool calls');
    } else if (isObject(b) && isObject(b.functionResponse)) {
      const fr = b.functionResponse;
      const m: Message = { role: 'tool', content: typeof fr.response === 'string' ? fr.response : JSON.stringify(fr.response ?? null) };
      if (typeof fr.name === 'string') m.name = fr.name;
      if (typeof fr.id === 'string') m.tool_call_id = fr.id;
      toolResults.push(m);
    } else if (isObject(b) && b.type === 'tool_use' && typeof b.name === 'string') {
      const call: ToolCall = {
        type: 'function',
        function: { name: b.name, arguments: isObject(b.input) ? b.input : typeof b.input === 'string' ? b.input : {} },
      };
      if (typeof b.id === 'string') call.id = b.id;
      toolCalls.push(call);
      ctx.note('tool_use_blocks_converted', 'Anthropic "tool_use" content blocks converted to tool calls');
    } else if (isObject(b) && b.type === 'tool_result') {
      const saved = ctx.current;
      const m: Message = { role: 'tool', content: '' };
      ctx.current = m;
      m.content = toText(b.content ?? '', ctx);
      ctx.current = saved;
      if (typeof b.tool_use_id === 'string') m.tool_call_id = b.tool_use_id;
      toolResults.push(m);
    } else if (partText !== undefined) texts.push(partText);
    else {
      reportNonText(b, ctx);
      skipped++;
    }
  }
  noteEmptiedTurn(blocks.length, skipped, reasoning.length + toolCalls.length + toolResults.length > 0, ctx);
  return { text: texts.join('\n'), reasoning: reasoning.length ? reasoning.join('\n') : undefined, toolCalls, toolResults };
}

export function reportNonText(part: unknown, ctx: NormalizeContext): void {
  const type = isObject(part) && typeof part.type === 'string' ? part.type : describeJsonType(part);
  ctx.nonText.push({ message: ctx.current, type });
  ctx.note('non_text_parts_skipped', `non-text content parts skipped (not rendered; listed per record)`);
}

/**
 * Hermes-style tool calls written in assistant text: `<tool_call>{"name", "arguments"}</tool_call>`
 * (NousResearch Hermes function-calling format). All blocks must parse as
 * JSON objects with a name; otherwise null (the text stays verbatim, noted).
 * @returns the calls and the text outside the blocks (trimmed)
 */
export function hermesToolCalls(text: string, ctx: NormalizeContext): { calls: ToolCall[]; text: string } | null {
  const re = /<tool_call>([\s\S]*?)<\/tool_call>/g;
  const calls: ToolCall[] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    let v: unknown;
    try {
      v = parseJsonLimited(m[1]);
    } catch {
      ctx.note('tool_call_text_not_json', 'a <tool_call> block whose JSON does not parse is kept verbatim as assistant text');
      return null;
    }
    if (!isObject(v) || typeof v.name !== 'string') {
      ctx.note('tool_call_text_not_json', 'a <tool_call> block whose JSON does not parse is kept verbatim as assistant text');
      return null;
    }
    const args = v.arguments ?? v.parameters ?? {};
    calls.push({
      type: 'function',
      function: { name: v.name, arguments: isObject(args) || typeof args === 'string' ? (args as string | Record<string, unknown>) : JSON.stringify(args) },
    });
  }
  if (!calls.length) return null;
  ctx.note('hermes_tool_calls_parsed', 'Hermes <tool_call>{json}</tool_call> blocks in assistant text converted to tool calls');
  return { calls, text: text.replace(re, '').trim() };
}

/**
 * Splits the Bespoke-Stratos / OpenThoughts answer layout
 * `<|begin_of_thought|>R<|end_of_thought|> <|begin_of_solution|>S<|end_of_solution|>`
 * into reasoning R and content S (the markers dropped, surrounding newlines
 * trimmed), so the target model's chat template places the reasoning where it
 * renders reasoning. Text after `<|end_of_thought|>` without solution markers is
 * the content. Returns null unless the content starts with `<|begin_of_thought|>`
 * and holds `<|end_of_thought|>`.
 */
export function splitThoughtMarkers(content: string): { reasoning: string; content: string } | null {
  const m = /^\s*<\|begin_of_thought\|>([\s\S]*?)<\|end_of_thought\|>([\s\S]*)$/.exec(content);
  if (!m) return null;
  const trim = (t: string) => t.replace(/^\n+/, '').replace(/\n+$/, '');
  const rest = m[2].trim();
  const sol = /^<\|begin_of_solution\|>([\s\S]*?)<\|end_of_solution\|>$/.exec(rest);
  return { reasoning: trim(m[1]), content: trim(sol ? sol[1] : rest) };
}

/**
 * Splits reasoning written inline in an assistant's content: `<think>R</think>C`
 * or a lone closing `R</think>C` (reasoning models whose opening tag was in the
 * generation prompt). Same rule as the Qwen3 chat template's own split:
 * reasoning = the text before the last `</think>`, after the last `<think>`,
 * newlines trimmed at its ends; content = the text after the last `</think>`,
 * leading newlines trimmed.
 * @returns null when the content has no `</think>`
 */
export function splitInlineThink(content: string): { reasoning: string; content: string } | null {
  const close = content.lastIndexOf('</think>');
  if (close < 0) return null;
  const before = content.slice(0, close);
  const open = before.lastIndexOf('<think>');
  if (open < 0 && before.includes('<think')) return null;
  const reasoning = (open >= 0 ? before.slice(open + '<think>'.length) : before).replace(/^\n+/, '').replace(/\n+$/, '');
  if (open > 0 && before.slice(0, open).trim() !== '') return null; // text before <think>: not a reasoning prefix
  return { reasoning, content: content.slice(close + '</think>'.length).replace(/^\n+/, '') };
}

/**
 * {@link splitInlineThink} with the exact text around the reasoning, so that `open + reasoning + close + content`
 * is the content as written (`open`: any leading whitespace, `<think>` and the newlines after it; `close`: the
 * newlines before `</think>`, the tag, the newlines after it). Null when there is no reasoning block, or when the
 * block holds no reasoning (an empty `<think></think>` stays in the content as written).
 */
export function inlineThinkParts(content: string): { open: string; reasoning: string; close: string; content: string } | null {
  const split = splitInlineThink(content);
  if (!split || split.reasoning.trim() === '') return null;
  const closeAt = content.lastIndexOf('</think>');
  const openTag = content.slice(0, closeAt).lastIndexOf('<think>');
  let start = openTag >= 0 ? openTag + '<think>'.length : 0;
  while (content[start] === '\n') start++;
  const open = content.slice(0, start);
  const close = content.slice(start + split.reasoning.length, content.length - split.content.length);
  if (open + split.reasoning + close + split.content !== content) return null;
  return { open, reasoning: split.reasoning, close, content: split.content };
}

/**
 * A message whose reasoning was read from inline text ({@link inlineThinkParts}, `Message.reasoning_inline`) given
 * back as written: content = open + reasoning + close + content, no `reasoning_content`. When the reasoning was
 * removed since (`--reasoning drop`), only the marker goes. Any other message is returned as it is.
 */
export function asWrittenInline<M extends { content: string | null; reasoning_content?: string; reasoning_inline?: { open: string; close: string } }>(m: M): M {
  if (!m.reasoning_inline) return m;
  const { reasoning_inline: wrap, ...rest } = m;
  if (rest.reasoning_content === undefined) return rest as M;
  const { reasoning_content: r, ...out } = rest;
  return { ...out, content: `${wrap.open}${r}${wrap.close}${out.content ?? ''}` } as M;
}

/**
 * Tool calls in OpenAI shape; also accepts flat `{name, arguments}` items and a
 * JSON string holding the list. Arguments are kept as given: a string that is
 * not valid JSON stays that string (noted `tool_call_arguments_not_json`), never `{}`.
 */
export function parseToolCalls(value: unknown, index: number, ctx: NormalizeContext): ToolCall[] | TurnError {
  let list = value;
  if (typeof list === 'string') {
    if (list.trim() === '') return [];
    try {
      list = parseJsonLimited(list);
    } catch {
      return {
        code: 'bad_tool_calls',
        message: `message ${index}: "tool_calls" is a string but not valid JSON (${jsonBreakDescription(value as string)}); give a list of {"function": {"name", "arguments"}}`,
      };
    }
  }
  if (isObject(list)) list = [list];
  if (!Array.isArray(list)) return { code: 'bad_tool_calls', message: `message ${index}: "tool_calls" must be a list, got ${describeJsonType(list)}` };
  const out: ToolCall[] = [];
  for (let j = 0; j < list.length; j++) {
    const item = list[j];
    if (!isObject(item)) return { code: 'bad_tool_calls', message: `message ${index}: tool call ${j + 1} is ${describeJsonType(item)}, not an object` };
    const fn = isObject(item.function) ? item.function : item;
    const name = fn.name;
    if (typeof name !== 'string' || name === '') return { code: 'bad_tool_calls', message: `message ${index}: tool call ${j + 1} has no function name` };
    const args = fn.arguments ?? fn.parameters ?? fn.input;
    let argsOut: string | Record<string, unknown>;
    if (typeof args === 'string') {
      argsOut = args;
      if (args.trim() !== '' && !isJson(args)) {
        ctx.note('tool_call_arguments_not_json', 'tool-call arguments that are not valid JSON kept verbatim as text');
      }
    } else if (isObject(args)) argsOut = args;
    else if (args === undefined || args === null) argsOut = {};
    else argsOut = JSON.stringify(args);
    const call: ToolCall = { type: 'function', function: { name, arguments: argsOut } };
    if (typeof item.id === 'string') call.id = item.id;
    out.push(call);
  }
  return out;
}

function isJson(s: string): boolean {
  try {
    parseJsonLimited(s);
    return true;
  } catch {
    return false;
  }
}

/**
 * Any content value → text, never `"None"` nor `"[object Object]"`:
 * string as is; number/boolean via `String`; a list of content parts → the text
 * of its text parts joined by `\n` (how vLLM flattens text parts), other parts
 * (images, audio, …) skipped and reported (`ctx.nonText`); an object with a
 * `text` string → that text; any other object → its JSON (noted); null/undefined → `""`.
 */
export function toText(value: unknown, ctx: NormalizeContext): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') {
    ctx.note('content_stringified', 'non-string content (number/boolean/object) converted to text');
    return String(value);
  }
  if (Array.isArray(value)) {
    const texts: string[] = [];
    ctx.note('content_parts_joined', 'content given as a list of parts (text parts joined with "\\n")');
    let skipped = 0;
    for (const part of value) {
      const partText = isObject(part) ? textOfPart(part, ctx) : undefined;
      if (typeof part === 'string') texts.push(part);
      else if (partText !== undefined) texts.push(partText);
      else {
        reportNonText(part, ctx);
        skipped++;
      }
    }
    noteEmptiedTurn(value.length, skipped, false, ctx);
    return texts.join('\n');
  }
  if (isObject(value) && typeof value.text === 'string') return value.text;
  ctx.note('content_stringified', 'non-string content (number/boolean/object) converted to text');
  return JSON.stringify(value);
}

/**
 * A LLaMA-Factory v1 content list: every part an object with a string `type`
 * and a `value` (no `text`), e.g. `[{"type": "text", "value": "Hi"}]`
 * (LLaMA-Factory `v1/extras/types.py`: `Content = {type: text | tools |
 * reasoning | tool_calls | image_url, value: str}`).
 */
export function isPartList(v: unknown): v is Record<string, unknown>[] {
  return Array.isArray(v) && v.length > 0 && v.every((p) => isObject(p) && typeof p.type === 'string' && 'value' in p && !('text' in p));
}

/**
 * A LLaMA-Factory v1 content list → the turn's text, reasoning, tool calls and
 * tool definitions, as LLaMA-Factory's own renderer reads it
 * (`v1/plugins/model_plugins/templates/qwen3.py`): `text` values concatenated
 * as they are (no separator), `reasoning` values concatenated, each
 * `tool_call` value a JSON string `{"name", "arguments"}` (a list of them is
 * accepted), `tools` values JSON tool definitions; other parts (`image_url`, …)
 * reported as non-text. A `tool_call` value that is not JSON is an error
 * (`bad_tool_calls`) naming the turn.
 */
export function partListContent(
  parts: Record<string, unknown>[],
  index: number,
  ctx: NormalizeContext,
): { text: string; reasoning?: string; toolCalls: ToolCall[]; tools: unknown[] } | TurnError {
  let text = '';
  let reasoning = '';
  const calls: unknown[] = [];
  const tools: unknown[] = [];
  for (const [j, p] of parts.entries()) {
    const value = p.value;
    const type = String(p.type);
    if (type === 'text') text += typeof value === 'string' ? value : toText(value, ctx);
    else if (type === 'reasoning' || type === 'thinking') reasoning += typeof value === 'string' ? value : toText(value, ctx);
    else if (type === 'tool_call' || type === 'tool_calls' || type === 'tools') {
      let v: unknown = value;
      if (typeof value === 'string') {
        try {
          v = parseJsonLimited(value);
        } catch {
          return {
            code: type === 'tools' ? 'bad_field' : 'bad_tool_calls',
            message: `message ${index}: content part ${j + 1} ("${type}") is not valid JSON (${jsonBreakDescription(value)}); LLaMA-Factory writes ${type === 'tools' ? 'a JSON list of tool definitions' : 'a JSON string {"name", "arguments"}'}`,
          };
        }
      }
      (type === 'tools' ? tools : calls).push(...(Array.isArray(v) ? v : [v]));
    } else reportNonText(p, ctx);
  }
  let toolCalls: ToolCall[] = [];
  if (calls.length) {
    const tc = parseToolCalls(calls, index, ctx);
    if (isTurnErrorLike(tc)) return tc;
    toolCalls = tc;
  }
  ctx.note(
    'llamafactory_parts_read',
    'LLaMA-Factory v1 content parts read: "text" values joined as written, "reasoning" → reasoning_content, "tool_call" → tool calls',
  );
  return { text, reasoning: reasoning === '' ? undefined : reasoning, toolCalls, tools };
}

function isTurnErrorLike(v: unknown): v is TurnError {
  return isObject(v) && typeof v.code === 'string' && typeof v.message === 'string';
}
