/**
 * Normalization: one raw dataset row → one {@link RowOutcome} in the message
 * model of `../types.ts`.
 *
 * Table-driven: {@link SHAPES} is an ordered list of {@link ShapeHandler}s, each
 * recognizing one row shape (`matches`), describing it for format detection
 * (`describe`, `roles`) and converting it (`normalize`). The first handler
 * whose `matches` is true owns the row. `detect.ts` uses the same table, so a
 * new shape is added in exactly one place: append (or insert, order matters) a
 * handler here.
 *
 * Rules implemented (spec loss-mask.md "Content that is `null`" and "Targets"):
 * - `null` content → `""`, except an assistant turn with tool calls and no text,
 *   which keeps `null` (the template adapter decides per template).
 * - A per-turn training flag (`weight: 0`, `loss: false`, `train: false`,
 *   `trainable: false`) → `trainable: false` on that message.
 * - Roles are mapped through the alias table of `roles.ts`; an unknown role is
 *   an error, never silently trained on or dropped.
 */
import type { Conversation, DropReason, Message, Role, RowOutcome, Source, ToolCall } from '../types';
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

/** Result of {@link normalizeDetailed}: the outcome plus what detection needs to explain it. */
export interface DetailedOutcome {
  outcome: RowOutcome;
  /** The handler that owned the row; undefined for an unrecognized row. */
  handler?: ShapeHandler;
  /** Human-readable facts observed while normalizing (deduplicated, row-independent wording). */
  facts: string[];
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
  'idx',
  '_id',
];

/** Keys naming a turn's speaker, in priority order. */
const ROLE_KEYS = ['role', 'from'];
/** Keys holding a turn's text, in priority order. */
const TEXT_KEYS = ['content', 'value', 'text'];
/** Keys holding a turn's reasoning, in priority order. */
const REASONING_KEYS = ['reasoning_content', 'reasoning', 'thinking'];
/** Per-turn training flags; the turn is not trainable when one is `false` or `0`. */
const TRAIN_FLAG_KEYS = ['weight', 'loss', 'train', 'trainable'];
/** Top-level fields that carry the system prompt, in priority order. */
const SYSTEM_KEYS = ['system_prompt', 'system'];
/** Fields holding a role/text turn list other than OpenAI `messages` (issue brief). */
const TURN_LIST_FIELDS = ['trajectory', 'history', 'conversation', 'conversations', 'dialog', 'dialogue', 'turns', 'chat'];
/** Single-prompt fields (Alpaca `instruction`, plain `prompt`, QA `question`). */
const PROMPT_KEYS = ['prompt', 'instruction', 'question', 'query'];
/** Response fields paired with a prompt field. */
const RESPONSE_KEYS = ['response', 'completion', 'output', 'answer'];
/** Content-part types whose `text` is rendered (OpenAI chat + Responses API spellings). */
const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);

// ------------------------------------------------------------------ public API

/**
 * Normalize one row (a parsed JSON value) into an outcome.
 *
 * - `conversation`: messages with at least one assistant turn.
 * - `prompt`: no assistant turn yet (prompt-only rows, user-only message lists);
 *   the target model must answer first.
 * - `dropped`: `empty_conversation` (zero turns), `no_assistant_turn` (neither a
 *   user nor an assistant turn), `unrecognized_shape` (message names the keys).
 * - `errored`: bad data in a recognized shape, e.g.
 *   `unknown role "narrator" in message 3 (known: …); add a role alias`.
 *
 * The id is the row's own id field ({@link ID_KEYS}) when it is a string or
 * number, else `${fileBase}:${source.line}`. Never throws.
 */
export function normalizeRow(value: unknown, source: Source, fileBase: string): RowOutcome {
  return normalizeDetailed(value, source, fileBase).outcome;
}

/** {@link normalizeRow} plus the owning handler and the facts observed (used by format detection). Never throws. */
export function normalizeDetailed(value: unknown, source: Source, fileBase: string): DetailedOutcome {
  const notes: string[] = [];
  const facts: string[] = [];
  const ctx: NormalizeContext = {
    source,
    fileBase,
    note(code, fact) {
      if (!notes.includes(code)) notes.push(code);
      if (fact !== undefined && !facts.includes(fact)) facts.push(fact);
    },
    fact(text) {
      if (!facts.includes(text)) facts.push(text);
    },
  };
  if (!isObject(value)) {
    return {
      outcome: drop(source, 'unrecognized_shape', `row is ${describeJsonType(value)}, not an object`),
      facts,
    };
  }
  const handler = findHandler(value);
  if (!handler) {
    return { outcome: drop(source, 'unrecognized_shape', unrecognizedMessage(value)), facts };
  }
  let outcome: RowOutcome;
  try {
    outcome = handler.normalize(value, ctx);
  } catch (err) {
    outcome = { kind: 'errored', source, message: `internal error normalizing ${handler.name} row: ${(err as Error).message}` };
  }
  if ((outcome.kind === 'conversation' || outcome.kind === 'prompt') && notes.length) {
    outcome.conversation.notes = [...(outcome.conversation.notes ?? []), ...notes.filter((n) => !outcome.conversation.notes?.includes(n))];
  }
  return { outcome, handler, facts };
}

/** The first handler of {@link SHAPES} that matches the row, or undefined. */
export function findHandler(row: unknown): ShapeHandler | undefined {
  if (!isObject(row)) return undefined;
  return SHAPES.find((h) => h.matches(row));
}

/**
 * Why a row is not recognized, naming the keys found and what would work, e.g.
 * `unrecognized row shape; keys found: input_ids, labels — the row is already tokenized …`.
 */
export function unrecognizedMessage(row: Row): string {
  const keys = Object.keys(row);
  const found = keys.length ? `keys found: ${keys.slice(0, 20).join(', ')}${keys.length > 20 ? ', …' : ''}` : 'the object is empty';
  if ('input_ids' in row) {
    return `unrecognized row shape; ${found} — the row is already tokenized ("input_ids"); give the untokenized chat data instead`;
  }
  return `unrecognized row shape; ${found} — ${EXPECTED_SHAPES}`;
}

/** What a recognizable row looks like, for error messages. */
export const EXPECTED_SHAPES =
  'expected "messages" (list of {role, content}), "conversations" (list of {from, value}), a list of {role, text|content} under ' +
  TURN_LIST_FIELDS.filter((f) => f !== 'conversations')
    .map((f) => `"${f}"`)
    .join('/') +
  ', or a "prompt"/"instruction"/"question" string (with an optional "response"/"output"/"completion"/"answer")';

// ------------------------------------------------------------------ handlers

/**
 * A handler for a list of turn objects stored under one of `fields`; a turn
 * belongs to the shape when `turnKey` is one of its keys.
 */
function turnListHandler(name: string, fields: string[], turnKey: string): ShapeHandler {
  const listField = (row: Row): string | undefined =>
    fields.find((f) => {
      const v = row[f];
      return Array.isArray(v) && (v.length === 0 || v.some((t) => isObject(t) && turnKey in t));
    });
  return {
    name,
    matches: (row) => listField(row) !== undefined,
    describe(row) {
      const f = listField(row)!;
      const turns = (row[f] as unknown[]).filter(isObject);
      const keys = [ROLE_KEYS.find((k) => turns.some((t) => k in t)), ...TEXT_KEYS.filter((k) => turns.some((t) => k in t))].filter(
        (k): k is string => k !== undefined,
      );
      return `"${f}": list of {${keys.join(', ')}}`;
    },
    roles(row) {
      const f = listField(row);
      if (!f) return [];
      const out: string[] = [];
      for (const t of row[f] as unknown[]) {
        const r = isObject(t) ? roleSpelling(t) : undefined;
        if (typeof r === 'string') out.push(r);
      }
      return out;
    },
    normalize(row, ctx) {
      const f = listField(row)!;
      const list = row[f] as unknown[];
      if (list.length === 0) {
        return drop(ctx.source, 'empty_conversation', `"${f}" is an empty list`);
      }
      const messages: Message[] = [];
      for (let i = 0; i < list.length; i++) {
        const m = toMessage(list[i], i + 1, ctx);
        if (typeof m === 'string') return { kind: 'errored', source: ctx.source, message: m };
        messages.push(m);
      }
      return finish(row, messages, ctx);
    },
  };
}

/** Prompt (+ optional response) rows: `prompt`, `instruction` (+ `input`), `question`, `query`. */
function promptField(row: Row): string | undefined {
  return PROMPT_KEYS.find((k) => typeof row[k] === 'string' && (row[k] as string).trim() !== '');
}
function responseField(row: Row): string | undefined {
  return RESPONSE_KEYS.find((k) => (typeof row[k] === 'string' && (row[k] as string).trim() !== '') || typeof row[k] === 'number');
}

const promptResponseHandler: ShapeHandler = {
  name: 'prompt-response',
  matches: (row) => promptField(row) !== undefined && responseField(row) !== undefined,
  describe(row) {
    const p = promptField(row)!;
    const withInput = p === 'instruction' && typeof row.input === 'string' && row.input.trim() !== '' ? ' + "input"' : '';
    return `"${p}"${withInput} + "${responseField(row)}": strings`;
  },
  roles: () => [],
  normalize(row, ctx) {
    const user = promptText(row, promptField(row)!, ctx);
    const answer = String(row[responseField(row)!]);
    return finish(row, [user, { role: 'assistant', content: answer }], ctx);
  },
};

const promptOnlyHandler: ShapeHandler = {
  name: 'prompt-only',
  matches: (row) => promptField(row) !== undefined && responseField(row) === undefined,
  describe(row) {
    const p = promptField(row)!;
    const withInput = p === 'instruction' && typeof row.input === 'string' && row.input.trim() !== '' ? ' + "input"' : '';
    return `"${p}"${withInput}: string, no response field`;
  },
  roles: () => [],
  normalize(row, ctx) {
    const present = RESPONSE_KEYS.find((k) => k in row);
    if (present) ctx.note('empty_response', `empty "${present}" treated as no response (prompt to answer)`);
    return finish(row, [promptText(row, promptField(row)!, ctx)], ctx);
  },
};

function promptText(row: Row, field: string, ctx: NormalizeContext): Message {
  let text = row[field] as string;
  if (field === 'instruction' && typeof row.input === 'string' && row.input.trim() !== '') {
    text = `${text}\n\n${row.input}`;
    ctx.note('instruction_input_joined', '"instruction" and "input" joined into the user turn (blank line between)');
  }
  return { role: 'user', content: text };
}

/**
 * The shape table, in match order. Earlier handlers win: `messages` before
 * ShareGPT `conversations` (from/value) before other role/text turn lists
 * before prompt rows. Issue #3 adds shapes here.
 */
export const SHAPES: ShapeHandler[] = [
  // OpenAI chat-completions `messages` (platform.openai.com/docs/api-reference/chat).
  turnListHandler('openai-messages', ['messages'], 'role'),
  // ShareGPT: `conversations` of {from, value} (FastChat / LLaMA-Factory sharegpt format).
  turnListHandler('sharegpt', ['conversations'], 'from'),
  // Trajectories / chats stored under another field with role + text|content keys (SWE-agent `trajectory`, …).
  turnListHandler('role-text-trajectory', TURN_LIST_FIELDS, 'role'),
  promptResponseHandler,
  promptOnlyHandler,
];

// ------------------------------------------------------------------ shared steps

/** Common end of every handler: top-level system prompt, tools, id, and conversation vs prompt vs dropped. */
function finish(row: Row, messages: Message[], ctx: NormalizeContext): RowOutcome {
  applySystemField(row, messages, ctx);

  let tools: unknown[] | undefined;
  if ('tools' in row && row.tools !== null && row.tools !== undefined) {
    let t = row.tools;
    if (typeof t === 'string') {
      if (t.trim() === '') t = [];
      else {
        try {
          t = JSON.parse(t);
          ctx.note('tools_json_string', '"tools" given as a JSON string (parsed)');
        } catch (err) {
          return errored(ctx, `"tools" is a string but not valid JSON: ${(err as Error).message}`);
        }
      }
    }
    if (!Array.isArray(t)) return errored(ctx, `"tools" must be a list of tool definitions, got ${describeJsonType(t)}`);
    if (t.length) tools = t;
  }

  const hasAssistant = messages.some((m) => m.role === 'assistant');
  const hasUser = messages.some((m) => m.role === 'user');
  if (!hasAssistant && !hasUser) {
    return drop(ctx.source, 'no_assistant_turn', `no user or assistant turn (roles: ${[...new Set(messages.map((m) => m.role))].join(', ')})`);
  }
  const last = messages[messages.length - 1];
  if (hasAssistant && last.role !== 'assistant') ctx.fact(`conversation ends with a ${last.role} turn (trailing turns are context only)`);

  const conversation: Conversation = { id: recordId(row, ctx), source: ctx.source, messages };
  if (tools) conversation.tools = tools;
  return { kind: hasAssistant ? 'conversation' : 'prompt', conversation };
}

/**
 * A top-level `system_prompt` / `system` string becomes the system message when
 * the list's first turn is a system turn with empty/null content (filled in) or
 * there is no leading system turn (prepended). When the list has its own
 * non-empty system turn that differs, the list wins and a note says so.
 */
function applySystemField(row: Row, messages: Message[], ctx: NormalizeContext): void {
  const key = SYSTEM_KEYS.find((k) => typeof row[k] === 'string' && (row[k] as string).trim() !== '');
  if (!key) return;
  const text = row[key] as string;
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
  return `${ctx.fileBase}:${ctx.source.line}`;
}

/** Messages whose source content was `null` (for the wording of the system-field note only). */
const nullSourced = new WeakSet<Message>();

function roleSpelling(turn: Row): unknown {
  for (const k of ROLE_KEYS) if (k in turn) return turn[k];
  return undefined;
}

/**
 * One source turn → a message, or an error string naming the 1-based message
 * index. Handles role aliases, text/parts/null content, reasoning fields,
 * OpenAI `tool_calls`, legacy `function_call`, and per-turn training flags.
 */
function toMessage(turn: unknown, index: number, ctx: NormalizeContext): Message | string {
  if (!isObject(turn)) return `message ${index} is ${describeJsonType(turn)}, not an object with a role`;
  const spelling = roleSpelling(turn);
  if (spelling === undefined || spelling === null) {
    return `message ${index} has no role (looked for ${ROLE_KEYS.map((k) => `"${k}"`).join(', ')}; keys found: ${Object.keys(turn).join(', ')})`;
  }
  const role: Role | undefined = mapRole(spelling);
  if (!role) {
    const shown = typeof spelling === 'string' ? `"${spelling}"` : JSON.stringify(spelling);
    return `unknown role ${shown} in message ${index} (known: ${knownRoleSpellings()}); add a role alias`;
  }

  // Tool calls (OpenAI) and the legacy single `function_call`.
  let toolCalls: ToolCall[] | undefined;
  if (turn.tool_calls !== undefined && turn.tool_calls !== null) {
    const tc = parseToolCalls(turn.tool_calls, index);
    if (typeof tc === 'string') return tc;
    if (tc.length) toolCalls = tc;
  }
  if (isObject(turn.function_call)) {
    const tc = parseToolCalls([turn.function_call], index);
    if (typeof tc === 'string') return tc;
    toolCalls = [...(toolCalls ?? []), ...tc];
    ctx.note('function_call_converted', 'legacy "function_call" converted to "tool_calls"');
  }

  const textKey = TEXT_KEYS.find((k) => k in turn);
  const raw = textKey === undefined ? undefined : turn[textKey];
  let content: string | null;
  let rawNull = false;
  if (raw === null || raw === undefined) {
    rawNull = raw === null;
    if (role === 'assistant' && toolCalls) {
      content = null;
      ctx.note('tool_call_content_null', 'assistant turns with tool calls and no text keep content null (the template adapter decides)');
    } else {
      content = '';
      if (raw === null && role !== 'system') ctx.note('null_content', 'null content replaced by ""');
    }
  } else {
    content = toText(raw, ctx);
  }

  const msg: Message = { role, content };
  if (rawNull) nullSourced.add(msg);

  const reasoningKey = REASONING_KEYS.find((k) => turn[k] !== undefined && turn[k] !== null);
  if (reasoningKey) {
    const r = toText(turn[reasoningKey], ctx);
    if (r !== '') {
      msg.reasoning_content = r;
      if (reasoningKey !== 'reasoning_content') ctx.note('reasoning_field_used', `"${reasoningKey}" turn field used as reasoning_content`);
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
  if (toolCalls) msg.tool_calls = toolCalls;
  if (typeof turn.tool_call_id === 'string') msg.tool_call_id = turn.tool_call_id;
  if (typeof turn.name === 'string' && turn.name !== '') msg.name = turn.name;

  const flag = TRAIN_FLAG_KEYS.find((k) => turn[k] === false || turn[k] === 0);
  if (flag) {
    msg.trainable = false;
    ctx.note('untrainable_turn', 'per-turn training flag (weight: 0 / loss: false / train: false / trainable: false) marks turns not trainable');
  }
  return msg;
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

/** Tool calls in OpenAI shape; also accepts flat `{name, arguments}` items and a JSON string holding the list. */
function parseToolCalls(value: unknown, index: number): ToolCall[] | string {
  let list = value;
  if (typeof list === 'string') {
    if (list.trim() === '') return [];
    try {
      list = JSON.parse(list);
    } catch (err) {
      return `message ${index}: "tool_calls" is a string but not valid JSON: ${(err as Error).message}`;
    }
  }
  if (!Array.isArray(list)) return `message ${index}: "tool_calls" must be a list, got ${describeJsonType(list)}`;
  const out: ToolCall[] = [];
  for (let j = 0; j < list.length; j++) {
    const item = list[j];
    if (!isObject(item)) return `message ${index}: tool call ${j + 1} is ${describeJsonType(item)}, not an object`;
    const fn = isObject(item.function) ? item.function : item;
    const name = fn.name;
    if (typeof name !== 'string' || name === '') return `message ${index}: tool call ${j + 1} has no function name`;
    const args = fn.arguments ?? fn.parameters;
    let argsOut: string | Record<string, unknown>;
    if (typeof args === 'string' || isObject(args)) argsOut = args as string | Record<string, unknown>;
    else if (args === undefined || args === null) argsOut = {};
    else argsOut = JSON.stringify(args);
    const call: ToolCall = { type: 'function', function: { name, arguments: argsOut } };
    if (typeof item.id === 'string') call.id = item.id;
    out.push(call);
  }
  return out;
}

/**
 * Any content value → text, never `"None"` nor `"[object Object]"`:
 * string as is; number/boolean via `String`; a list of content parts → the text
 * of its text parts joined by `\n` (how vLLM flattens text parts), other parts
 * (images, audio, …) skipped with a note; an object with a `text` string → that
 * text; any other object → its JSON (noted); null/undefined → `""`.
 */
function toText(value: unknown, ctx: NormalizeContext): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') {
    ctx.note('content_stringified', 'non-string content (number/boolean/object) converted to text');
    return String(value);
  }
  if (Array.isArray(value)) {
    const texts: string[] = [];
    const skipped: string[] = [];
    for (const part of value) {
      if (typeof part === 'string') texts.push(part);
      else if (isObject(part) && typeof part.text === 'string' && (part.type === undefined || TEXT_PART_TYPES.has(String(part.type)))) {
        texts.push(part.text);
      } else {
        skipped.push(isObject(part) && typeof part.type === 'string' ? part.type : describeJsonType(part));
      }
    }
    ctx.note('content_parts_joined', 'content given as a list of parts (text parts joined with "\\n")');
    if (skipped.length) {
      ctx.note('non_text_parts_skipped', `non-text content parts skipped (${[...new Set(skipped)].join(', ')})`);
    }
    return texts.join('\n');
  }
  if (isObject(value) && typeof value.text === 'string') return value.text;
  ctx.note('content_stringified', 'non-string content (number/boolean/object) converted to text');
  return JSON.stringify(value);
}

// ------------------------------------------------------------------ helpers

function isObject(v: unknown): v is Row {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
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

function drop(source: Source, reason: DropReason, message: string): RowOutcome {
  return { kind: 'dropped', source, reason, message };
}

function errored(ctx: NormalizeContext, message: string): RowOutcome {
  return { kind: 'errored', source: ctx.source, message };
}
