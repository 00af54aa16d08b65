/**
 * Shared normalization steps used by every shape handler (`shapes-*.ts`):
 * one source turn → messages, content → text, tool calls, the common end of a
 * row (system field, tools, id, conversation vs prompt vs dropped).
 *
 * Rules implemented (docs/loss-mask-rules.md "No text" and "Targets"):
 * - `null` content → `""`, except an assistant turn with tool calls and no text,
 *   which keeps `null` (the template adapter decides per template).
 * - A per-turn training flag (`weight: 0`, `loss: false`, `train: false`,
 *   `trainable: false`) → `trainable: false` on that message.
 * - Roles are mapped through the alias table of `roles.ts`; an unknown role is
 *   an error, never silently trained on or dropped.
 * - Tool-call arguments are kept as the source gave them; arguments that are
 *   not valid JSON are kept verbatim (noted), never replaced by `{}`.
 */
import type { Conversation, DropReason, ErrorCode, Message, Role, RowOutcome, Source, ToolCall } from '../types';
import { knownRoleSpellings, mapRole } from './roles';

/** A row that is a JSON object. */
export type Row = Record<string, unknown>;

/** Collects the notes (codes, stored on the conversation) and facts (human-readable, used as detection evidence) of one row. */
export interface NormalizeContext {
  readonly source: Source;
  readonly fileBase: string;
  /** Record a note code on the conversation, and optionally a human-readable fact for detection evidence. */
  note(code: string, fact?: string): void;
  /** Record a human-readable fact (evidence only, no note on the conversation). */
  fact(text: string): void;
  /** Non-text content parts met while converting turns; `message` is filled in by {@link finish} (index into the final messages). */
  readonly nonText: { message: Message | undefined; type: string }[];
  /** The message being built (set by {@link toMessages}), for {@link NormalizeContext.nonText}. */
  current?: Message;
}

/** One recognized row shape. */
export interface ShapeHandler {
  /** Format id reported by detection, e.g. `openai-messages`. */
  readonly name: string;
  /** Whether this handler owns the row. Cheap: looks at keys and the first turns only. */
  matches(row: Row): boolean;
  /** The row's shape as an evidence phrase, e.g. `"conversations": list of {from, value}`. */
  describe(row: Row): string;
  /** Role spellings as the source writes them (`human`, `gpt`, …), in order of appearance; empty when the shape has no turns. */
  roles(row: Row): string[];
  /** Convert the row. Never throws for bad data: returns `errored` / `dropped`. */
  normalize(row: Row, ctx: NormalizeContext): RowOutcome;
}

// ------------------------------------------------------------------ tables

/** Fields that carry the row's own id, in priority order. */
export const ID_KEYS = [
  'id',
  'instance_id',
  'conversation_id',
  'uuid',
  'sample_id',
  'example_id',
  'task_id',
  'trajectory_id',
  'session_id',
  'question_id',
  'message_tree_id',
  'prompt_id',
  'custom_id',
  'idx',
  '_id',
];

/** Keys naming a turn's speaker, in priority order. */
export const ROLE_KEYS = ['role', 'from'];
/** Keys holding a turn's text, in priority order (`parts`: Gemini `contents`; `message`: Cohere `chat_history`). */
export const TEXT_KEYS = ['content', 'value', 'text', 'parts', 'message'];
/** Keys holding a turn's reasoning, in priority order. */
const REASONING_KEYS = ['reasoning_content', 'reasoning', 'thinking'];
/** Per-turn training flags; the turn is not trainable when one is `false` or `0`. */
const TRAIN_FLAG_KEYS = ['weight', 'loss', 'train', 'trainable'];
/** Top-level fields that carry the system prompt, in priority order. */
const SYSTEM_KEYS = ['system_prompt', 'system', 'systemInstruction', 'system_instruction'];
/** Content-part types whose `text` is rendered (OpenAI chat + Responses API, Anthropic spellings). */
const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);
/** Role spellings of a turn that holds a function call as JSON text (LLaMA-Factory `function_call`). */
const FUNCTION_CALL_ROLES = new Set(['function_call', 'tool_call', 'tool_calls']);

// ------------------------------------------------------------------ small helpers

export function isObject(v: unknown): v is Row {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

/** `a JSON number`, `a JSON list`, `null`, … for messages. */
export function describeJsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a JSON list';
  if (typeof v === 'object') return 'a JSON object';
  if (typeof v === 'string') return 'a JSON string';
  if (typeof v === 'number') return 'a JSON number';
  if (typeof v === 'boolean') return 'a JSON boolean';
  return typeof v;
}

export function drop(source: Source, reason: DropReason, message: string): RowOutcome {
  return { kind: 'dropped', source, reason, message };
}

export function errored(ctx: NormalizeContext, code: ErrorCode, message: string): RowOutcome {
  return { kind: 'errored', source: ctx.source, message, code };
}

/** A turn-conversion failure: the error code and a message naming the 1-based source turn. */
export interface TurnError {
  code: ErrorCode;
  message: string;
}

export function isTurnError(v: unknown): v is TurnError {
  return isObject(v) && typeof v.code === 'string' && typeof v.message === 'string' && !('role' in v);
}

const parsedStrings = new WeakMap<Row, Map<string, unknown>>();

/**
 * The value of `row[field]`, with a JSON string holding a list or object parsed
 * (datasets that store `messages` / `tools` / `answers` as JSON text). Parsed
 * once per row and field. A string that is not JSON is returned as is.
 */
export function fieldValue(row: Row, field: string): unknown {
  const v = row[field];
  if (typeof v !== 'string') return v;
  const t = v.trimStart();
  if (!(t.startsWith('[') || t.startsWith('{'))) return v;
  let cache = parsedStrings.get(row);
  if (!cache) parsedStrings.set(row, (cache = new Map()));
  if (cache.has(field)) return cache.get(field);
  let out: unknown = v;
  try {
    out = JSON.parse(v);
  } catch {
    /* not JSON: the string itself */
  }
  cache.set(field, out);
  return out;
}

/** Whether `row[field]` was a JSON string (so the caller can note it). */
export function wasJsonString(row: Row, field: string): boolean {
  return typeof row[field] === 'string' && typeof fieldValue(row, field) !== 'string';
}

export function roleSpelling(turn: Row): unknown {
  for (const k of ROLE_KEYS) if (k in turn) return turn[k];
  return undefined;
}

// ------------------------------------------------------------------ turns

/**
 * One source turn → one or more messages, or a {@link TurnError} naming the
 * 1-based source turn `index`.
 *
 * Handles: role aliases (`roles.ts`); text, `null`, numbers and content-part
 * lists (OpenAI parts, Anthropic blocks: `text`, `thinking` → reasoning,
 * `tool_use` → tool calls, `tool_result` → a `tool` message each, other parts
 * reported as non-text); reasoning fields; OpenAI `tool_calls`, legacy
 * `function_call`; LLaMA-Factory `function_call` turns (JSON text → tool
 * calls); Hermes `<tool_call>{json}</tool_call>` in assistant text; inline
 * `<think>`; per-turn training flags.
 */
export function toMessages(turn: unknown, index: number, ctx: NormalizeContext): Message[] | TurnError {
  if (!isObject(turn)) return { code: 'bad_turn', message: `message ${index} is ${describeJsonType(turn)}, not an object with a role` };
  const spelling = roleSpelling(turn);
  if (spelling === undefined || spelling === null) {
    return {
      code: 'missing_role',
      message: `message ${index} has no role (looked for ${ROLE_KEYS.map((k) => `"${k}"`).join(', ')}; keys found: ${Object.keys(turn).join(', ')})`,
    };
  }
  if (typeof spelling === 'string' && FUNCTION_CALL_ROLES.has(spelling.trim().toLowerCase())) return functionCallTurn(turn, index, ctx);
  const role: Role | undefined = mapRole(spelling);
  if (!role) {
    const shown = typeof spelling === 'string' ? `"${spelling}"` : JSON.stringify(spelling);
    return { code: 'unknown_role', message: `unknown role ${shown} in message ${index} (known: ${knownRoleSpellings()}, function_call); add a role alias` };
  }

  // Tool calls (OpenAI) and the legacy single `function_call`.
  let toolCalls: ToolCall[] | undefined;
  if (turn.tool_calls !== undefined && turn.tool_calls !== null) {
    const tc = parseToolCalls(turn.tool_calls, index, ctx);
    if (isTurnError(tc)) return tc;
    if (tc.length) toolCalls = tc;
  }
  if (isObject(turn.function_call)) {
    const tc = parseToolCalls([turn.function_call], index, ctx);
    if (isTurnError(tc)) return tc;
    toolCalls = [...(toolCalls ?? []), ...tc];
    ctx.note('function_call_converted', 'legacy "function_call" converted to "tool_calls"');
  }

  const msg: Message = { role, content: '' };
  ctx.current = msg;
  const extra: Message[] = []; // tool messages from Anthropic tool_result blocks
  const textKey = TEXT_KEYS.find((k) => k in turn);
  const raw = textKey === undefined ? undefined : turn[textKey];
  let content: string | null;
  let rawNull = false;
  let blockReasoning: string | undefined;
  if (
    Array.isArray(raw) &&
    raw.some(
      (p) =>
        isObject(p) &&
        (p.type === 'tool_use' ||
          p.type === 'tool_result' ||
          p.type === 'thinking' ||
          isObject(p.functionCall) ||
          isObject(p.functionResponse) ||
          p.thought === true),
    )
  ) {
    const b = contentBlocks(raw, ctx);
    content = b.text;
    blockReasoning = b.reasoning;
    if (b.toolCalls.length) toolCalls = [...(toolCalls ?? []), ...b.toolCalls];
    extra.push(...b.toolResults);
    if (b.toolResults.length && b.text === '') content = null; // only tool results: no user turn of its own
  } else if (raw === null || raw === undefined) {
    rawNull = raw === null;
    content = '';
  } else {
    content = toText(raw, ctx);
  }
  const noText = raw === null || raw === undefined || (Array.isArray(raw) && content === '');
  if (noText && content === '' && role === 'assistant' && toolCalls) {
    content = null;
    ctx.note('tool_call_content_null', 'assistant turns with tool calls and no text keep content null (the template adapter decides)');
  } else if (content === '' && rawNull && role !== 'system') {
    ctx.note('null_content', 'null content replaced by ""');
  }
  msg.content = content;
  if (rawNull) nullSourced.add(msg);

  const reasoningKey = REASONING_KEYS.find((k) => turn[k] !== undefined && turn[k] !== null);
  if (reasoningKey) {
    const r = toText(turn[reasoningKey], ctx);
    if (r !== '') {
      msg.reasoning_content = r;
      if (reasoningKey !== 'reasoning_content') ctx.note('reasoning_field_used', `"${reasoningKey}" turn field used as reasoning_content`);
    }
  } else if (blockReasoning) {
    msg.reasoning_content = blockReasoning;
  }
  if (role === 'assistant' && msg.reasoning_content === undefined && typeof msg.content === 'string') {
    const marked = splitThoughtMarkers(msg.content);
    if (marked) {
      msg.content = marked.content;
      if (marked.reasoning !== '') msg.reasoning_content = marked.reasoning;
      ctx.note(
        'thought_markers_split',
        '<|begin_of_thought|>…<|end_of_thought|> split into reasoning_content, <|begin_of_solution|>…<|end_of_solution|> kept as content',
      );
    }
  }
  if (role === 'assistant' && msg.reasoning_content === undefined && typeof msg.content === 'string') {
    const split = splitInlineThink(msg.content);
    if (split) {
      msg.content = split.content;
      if (split.reasoning !== '') msg.reasoning_content = split.reasoning;
      ctx.note('inline_think_split', 'inline <think>…</think> (or a lone closing </think>) split into reasoning_content + content');
    }
  }
  if (role === 'assistant' && !toolCalls && typeof msg.content === 'string' && msg.content.includes('<tool_call>')) {
    const h = hermesToolCalls(msg.content, ctx);
    if (h) {
      toolCalls = h.calls;
      msg.content = h.text === '' ? null : h.text;
    }
  }
  if (toolCalls) msg.tool_calls = toolCalls;
  if (typeof turn.tool_call_id === 'string') msg.tool_call_id = turn.tool_call_id;
  else if (Array.isArray(turn.tool_call_ids) && typeof turn.tool_call_ids[0] === 'string') msg.tool_call_id = turn.tool_call_ids[0]; // SWE-agent
  if (typeof turn.name === 'string' && turn.name !== '') msg.name = turn.name;

  const flag = TRAIN_FLAG_KEYS.find((k) => turn[k] === false || turn[k] === 0);
  if (flag) {
    msg.trainable = false;
    ctx.note('untrainable_turn', 'per-turn training flag (weight: 0 / loss: false / train: false / trainable: false) marks turns not trainable');
  }
  ctx.current = undefined;
  if (extra.length) {
    ctx.note('tool_result_blocks_as_tool_turns', 'tool results inside content (Anthropic "tool_result", Gemini "functionResponse") became "tool" turns');
    if (msg.role === 'tool') return extra; // Gemini role "function" holding functionResponse parts
    return msg.content === null ? extra : [...extra, msg];
  }
  return [msg];
}

/** A LLaMA-Factory `function_call` turn: its text is `{"name", "arguments"}` JSON (or a list of them) → an assistant turn with tool calls. */
function functionCallTurn(turn: Row, index: number, ctx: NormalizeContext): Message[] | TurnError {
  const textKey = TEXT_KEYS.find((k) => k in turn);
  const raw = textKey === undefined ? undefined : turn[textKey];
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      ctx.note('tool_call_text_not_json', 'a function-call turn whose text is not valid JSON is kept verbatim as assistant text');
      return [{ role: 'assistant', content: raw }];
    }
  }
  const list = Array.isArray(value) ? value : [value];
  const tc = parseToolCalls(list, index, ctx);
  if (isTurnError(tc)) return tc;
  ctx.note('function_call_turn_converted', '"function_call" turns (JSON text) converted to assistant tool calls');
  return [{ role: 'assistant', content: null, tool_calls: tc }];
}

/** Anthropic Messages API content blocks → text, reasoning, tool calls and tool-result messages. */
function contentBlocks(blocks: unknown[], ctx: NormalizeContext): { text: string; reasoning?: string; toolCalls: ToolCall[]; toolResults: Message[] } {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  const toolResults: Message[] = [];
  for (const b of blocks) {
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
    } else if (isObject(b) && typeof b.text === 'string' && (b.type === undefined || TEXT_PART_TYPES.has(String(b.type)))) texts.push(b.text);
    else reportNonText(b, ctx);
  }
  return { text: texts.join('\n'), reasoning: reasoning.length ? reasoning.join('\n') : undefined, toolCalls, toolResults };
}

function reportNonText(part: unknown, ctx: NormalizeContext): void {
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
      v = JSON.parse(m[1]);
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
 * Tool calls in OpenAI shape; also accepts flat `{name, arguments}` items and a
 * JSON string holding the list. Arguments are kept as given: a string that is
 * not valid JSON stays that string (noted `tool_call_arguments_not_json`), never `{}`.
 */
export function parseToolCalls(value: unknown, index: number, ctx: NormalizeContext): ToolCall[] | TurnError {
  let list = value;
  if (typeof list === 'string') {
    if (list.trim() === '') return [];
    try {
      list = JSON.parse(list);
    } catch (err) {
      return { code: 'bad_tool_calls', message: `message ${index}: "tool_calls" is a string but not valid JSON: ${(err as Error).message}` };
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
    JSON.parse(s);
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
    for (const part of value) {
      if (typeof part === 'string') texts.push(part);
      else if (isObject(part) && typeof part.text === 'string' && (part.type === undefined || TEXT_PART_TYPES.has(String(part.type)))) {
        texts.push(part.text);
      } else reportNonText(part, ctx);
    }
    return texts.join('\n');
  }
  if (isObject(value) && typeof value.text === 'string') return value.text;
  ctx.note('content_stringified', 'non-string content (number/boolean/object) converted to text');
  return JSON.stringify(value);
}

/** Converts a list of source turns; the first failure wins (a TurnError). */
export function convertTurns(list: unknown[], ctx: NormalizeContext): Message[] | TurnError {
  const messages: Message[] = [];
  for (let i = 0; i < list.length; i++) {
    const m = toMessages(list[i], i + 1, ctx);
    if (isTurnError(m)) return m;
    messages.push(...m);
  }
  return messages;
}

// ------------------------------------------------------------------ end of a row

/**
 * Common end of every handler: top-level system prompt, tools, id, non-text
 * parts, and conversation vs prompt vs dropped (`no_assistant_turn` when there
 * is neither a user nor an assistant turn).
 */
export function finish(row: Row, messages: Message[], ctx: NormalizeContext, opts: { tools?: unknown } = {}): RowOutcome {
  applySystemField(row, messages, ctx);

  let tools: unknown[] | undefined;
  const rawTools = opts.tools !== undefined ? opts.tools : row.tools;
  if (rawTools !== null && rawTools !== undefined) {
    let t = rawTools;
    if (typeof t === 'string') {
      if (t.trim() === '') t = [];
      else {
        try {
          t = JSON.parse(t);
          ctx.note('tools_json_string', '"tools" given as a JSON string (parsed)');
        } catch (err) {
          return errored(ctx, 'bad_field', `"tools" is a string but not valid JSON: ${(err as Error).message}`);
        }
      }
    }
    if (isObject(t)) t = [t];
    if (!Array.isArray(t)) return errored(ctx, 'bad_field', `"tools" must be a list of tool definitions, got ${describeJsonType(t)}`);
    if (t.length) tools = t.map(openAiTool);
  }

  const hasAssistant = messages.some((m) => m.role === 'assistant');
  const hasUser = messages.some((m) => m.role === 'user');
  if (!hasAssistant && !hasUser) {
    return drop(ctx.source, 'no_assistant_turn', `no user or assistant turn (roles: ${[...new Set(messages.map((m) => m.role))].join(', ') || 'none'})`);
  }
  const last = messages[messages.length - 1];
  if (hasAssistant && last.role !== 'assistant') ctx.fact(`conversation ends with a ${last.role} turn (trailing turns are context only)`);
  for (let i = 1; i < messages.length; i++) {
    if (messages[i].role === messages[i - 1].role && messages[i].role !== 'tool') {
      ctx.note('consecutive_same_role', 'consecutive turns of the same role kept as they are (not merged, not truncated)');
      break;
    }
  }

  const conversation: Conversation = { id: recordId(row, ctx), source: ctx.source, messages };
  if (tools) conversation.tools = tools;
  const parts = ctx.nonText.map((p) => ({ message: p.message ? messages.indexOf(p.message) : -1, type: p.type })).filter((p) => p.message >= 0);
  parts.push(...mediaFields(row, messages, ctx));
  if (parts.length) conversation.nonTextParts = parts;
  return { kind: hasAssistant ? 'conversation' : 'prompt', conversation };
}

/** Top-level media lists of multimodal rows (LLaVA / LLaMA-Factory `images`, `videos`, `audios`). */
const MEDIA_FIELDS: Record<string, string> = { images: 'image', image: 'image', videos: 'video', video: 'video', audios: 'audio', audio: 'audio' };

/**
 * Media given beside the turns (`"images": ["a.jpg"]` with `<image>` placeholders
 * in the text): not rendered, reported as non-text parts on the turn holding
 * the placeholder (else the first user turn). The placeholder text is kept.
 */
function mediaFields(row: Row, messages: Message[], ctx: NormalizeContext): { message: number; type: string }[] {
  const out: { message: number; type: string }[] = [];
  for (const [field, type] of Object.entries(MEDIA_FIELDS)) {
    const v = row[field];
    const n = Array.isArray(v) ? v.length : typeof v === 'string' && v !== '' ? 1 : isObject(v) ? 1 : 0;
    if (!n) continue;
    const withTag = messages.map((m, i) => ({ i, k: (m.content ?? '').split(`<${type}>`).length - 1 })).filter((x) => x.k > 0);
    const firstUser = Math.max(
      0,
      messages.findIndex((m) => m.role === 'user'),
    );
    const slots = withTag.flatMap((x) => Array.from({ length: x.k }, () => x.i));
    for (let j = 0; j < n; j++) out.push({ message: slots[j] ?? slots[slots.length - 1] ?? firstUser, type });
    ctx.note('non_text_parts_skipped', 'non-text content parts skipped (not rendered; listed per record)');
  }
  return out;
}

/** A tool definition in OpenAI form: `{type: "function", function: {...}}`; a bare `{name, description, parameters}` is wrapped (Anthropic `input_schema` → `parameters`). */
function openAiTool(t: unknown): unknown {
  if (isObject(t) && t.type === undefined && typeof t.name === 'string' && !('function' in t)) {
    // Anthropic tool definitions carry the JSON schema as `input_schema`.
    if ('input_schema' in t && !('parameters' in t)) {
      const { input_schema, ...rest } = t;
      return { type: 'function', function: { ...rest, parameters: input_schema } };
    }
    return { type: 'function', function: t };
  }
  return t;
}

/**
 * A top-level `system_prompt` / `system` string (or list of text blocks, Anthropic)
 * becomes the system message when the list's first turn is a system turn with
 * empty/null content (filled in) or there is no leading system turn
 * (prepended). When the list has its own non-empty system turn that differs,
 * the list wins and a note says so.
 */
function applySystemField(row: Row, messages: Message[], ctx: NormalizeContext): void {
  const key = SYSTEM_KEYS.find(
    (k) => nonEmptyString(row[k]) || (Array.isArray(row[k]) && (row[k] as unknown[]).length > 0) || (isObject(row[k]) && Array.isArray((row[k] as Row).parts)),
  );
  if (!key) return;
  const v = row[key];
  const text = typeof v === 'string' ? v : toText(isObject(v) ? v.parts : v, ctx);
  if (text.trim() === '') return;
  const first = messages[0];
  if (first && first.role === 'system') {
    if (first.content === null || first.content === '' || first.content === undefined) {
      const was = first.content === '' && !nullSourced.has(first) ? 'empty' : 'null';
      first.content = text;
      ctx.note('system_prompt_field_used', `"${key}" top-level field used as system message (system turn content is ${was})`);
    } else if (first.content !== text) {
      ctx.note('system_field_ignored', `"${key}" top-level field ignored: the list has its own non-empty system turn`);
    }
    return;
  }
  messages.unshift({ role: 'system', content: text });
  ctx.note('system_prompt_field_used', `"${key}" top-level field used as system message (no system turn in the list)`);
}

function recordId(row: Row, ctx: NormalizeContext): string {
  for (const k of ID_KEYS) {
    const v = row[k];
    if (typeof v === 'string' && v.trim() !== '') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  }
  return ctx.source.element === undefined ? `${ctx.fileBase}:${ctx.source.line}` : `${ctx.fileBase}:${ctx.source.line}[${ctx.source.element}]`;
}

/** Messages whose source content was `null` (for the wording of the system-field note only). */
const nullSourced = new WeakSet<Message>();
