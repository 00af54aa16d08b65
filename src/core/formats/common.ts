/**
 * Shared normalization steps used by every shape handler (`shapes-*.ts`):
 * one source turn → messages. The common end of a row (system field, tools,
 * id, conversation vs prompt vs dropped, context turns, rows holding several
 * conversations) is `rowEnd.ts`; content parts, tool calls and reasoning
 * layouts are `content.ts`; the shared types and helpers `base.ts` (shape
 * files import each from its own module).
 *
 * Rules implemented (docs/loss-mask-rules.md "What the template is given" and "Targets"):
 * - `null` content → `""`, except an assistant turn with tool calls and no text,
 *   which keeps `null` (the template adapter decides per template).
 * - Before a turn is declared empty, the other fields that hold its text are
 *   looked at: another text key (`text` beside `content: null`), OpenAI
 *   `refusal` (assistant), a per-turn `system_prompt` (system; SWE-agent runs).
 * - A per-turn training flag (`weight: 0`, `loss: false`, `train: false`,
 *   `trainable: false`, LLaMA-Factory `loss_weight: 0`) → `trainable: false`.
 * - Roles are mapped through the alias table of `roles.ts`; an unknown role is
 *   an error, never silently trained on or dropped.
 * - Tool-call arguments are kept as the source gave them; arguments that are
 *   not valid JSON are kept verbatim (noted), never replaced by `{}`.
 * - Every field of a turn that is read is marked (`fields.ts`); the others are
 *   reported as unread unless they are known metadata.
 * - A row without any answer (no assistant turn with text, reasoning or tool
 *   calls) is a prompt; empty assistant turns between its user turns stay as the
 *   places `generate` answers, in order (docs/loss-mask-rules.md "Empty turns": at the end they are
 *   generation placeholders and are removed).
 */
import type { Message, Role, ToolCall } from '../types';
import {
  describeJsonType,
  isObject,
  isTurnError,
  nonEmptyString,
  nullSourced,
  ROLE_KEYS,
  TEXT_KEYS,
  type NormalizeContext,
  type Row,
  type TurnError,
} from './base';
import { contentBlocks, hermesToolCalls, inlineThinkParts, isPartList, partListContent, parseToolCalls, splitThoughtMarkers, toText } from './content';
import { knownRoleSpellings, mapRole, roleSpellingKey } from './roles';
import { hasNonEmptyList, readSideCall, resultText, sideCallList, type SideCall } from './turnCalls';
import { parseJsonLimited } from '../jsonDepth';

/** Keys holding a turn's reasoning, in priority order (`thoughts`: ShareGPT-style tool-use sets that carry the model's thoughts beside `value`). */
const REASONING_KEYS = ['reasoning_content', 'reasoning', 'thinking', 'thoughts'];
/** Per-turn training flags; the turn is not trainable when one is `false` or `0` (`loss_weight`: LLaMA-Factory v1 messages). */
const TRAIN_FLAG_KEYS = ['weight', 'loss', 'train', 'trainable', 'loss_weight'];
/** Role spellings of a turn that holds a function call as JSON text (LLaMA-Factory `function_call`, function-calling ShareGPT `function-call`). */
const FUNCTION_CALL_ROLES = new Set(['function_call', 'tool_call', 'tool_calls']);

/** How {@link convertTurns} reads a list of turns. */
export interface TurnOptions {
  /** Path of the list in the row, for unread-field reports (`messages[]`, `input.messages[]`); default `turns[]`. */
  label?: string;
  /** Turn fields that only repeat what another field holds (SWE-agent `history` `thought` / `action` repeat `content`): read, never reported. */
  derived?: readonly string[];
  /** The key holding the speaker, when it is not `role` / `from` (a conversation found by `discovery.ts`). */
  roleKey?: string;
  /** The key holding the text, when it is not one of the usual text keys. */
  textKey?: string;
}

// ------------------------------------------------------------------ turns

const NON_BLANK = /\S/; // `\s` is the set `trim` removes (WhiteSpace and LineTerminator)

/** A value that holds text: a non-blank string (tested without `trim`'s copy of the text), a number, a non-empty list or an object. */
function holdsText(v: unknown): boolean {
  if (typeof v === 'string') return NON_BLANK.test(v);
  if (typeof v === 'number' || typeof v === 'boolean') return true;
  if (Array.isArray(v)) return v.length > 0;
  return isObject(v);
}

/**
 * One source turn → one or more messages, or a {@link TurnError} naming the
 * 1-based source turn `index`.
 *
 * Handles: role aliases (`roles.ts`); text, `null`, numbers and content-part
 * lists (OpenAI parts, Anthropic blocks: `text`, `thinking` → reasoning,
 * `tool_use` → tool calls, `tool_result` → a `tool` message each; LLaMA-Factory
 * v1 `{type, value}` parts: `text`, `reasoning`, `tool_call`, `tools`; other
 * parts reported as non-text); the turn's other text fields when its usual one
 * is empty (`refusal`, `system_prompt`, another text key); reasoning fields
 * (`reasoning_content`, `reasoning`, `thinking`, `thoughts`); OpenAI
 * `tool_calls`, legacy `function_call`, `actions: [{API_name, API_params}]`; lists of call objects
 * beside the text under any key, with or without results (`turnCalls.ts`: each call with a result → an
 * assistant turn and a `tool` turn, the text after them);
 * LLaMA-Factory `function_call` turns (JSON text → tool calls); Hermes
 * `<tool_call>{json}</tool_call>` in assistant text; per-turn training flags.
 * Inline `<think>R</think>C` reasoning becomes `reasoning_content` R and content C, the text around R kept in
 * `reasoning_inline` (the template adapter gives a template that does not render reasoning the text as written).
 */
export function toMessages(turn: unknown, index: number, ctx: NormalizeContext, opts: TurnOptions = {}): Message[] | TurnError {
  if (!isObject(turn)) return { code: 'bad_turn', message: `message ${index} is ${describeJsonType(turn)}, not an object with a role` };
  const f = ctx.fields;
  f.track(turn, `${opts.label ?? 'turns[]'}.`);
  if (opts.derived) f.use(turn, ...opts.derived.filter((k) => k in turn));
  const speaker = turnSpeaker(turn, index, ctx, opts);
  if (isTurnError(speaker)) return speaker;
  if (speaker === 'function_call') return functionCallTurn(turn, index, ctx);
  const { role, roleKey } = speaker;

  let toolCalls = namedToolCalls(turn, role, index, ctx);
  if (isTurnError(toolCalls)) return toolCalls;
  const side = role === 'assistant' ? readSideCalls(turn, roleKey, ctx, opts) : undefined;
  if (side && !side.withResults) {
    toolCalls = [...(toolCalls ?? []), ...side.calls.map((c) => c.call)];
    ctx.note('side_tool_calls_read', `"${side.key}" beside the turn text holds tool calls without results: they are the turn's tool calls`);
  }

  const msg: Message = { role, content: '' };
  ctx.current = msg;
  const text = turnText(turn, role, index, ctx, opts);
  if (isTurnError(text)) return text;
  if (text.toolCalls.length) toolCalls = [...(toolCalls ?? []), ...text.toolCalls];
  msg.content = settledContent(text, role, toolCalls !== undefined, ctx);
  if (text.rawNull) nullSourced.add(msg);
  readReasoning(turn, msg, text.reasoning, ctx);
  if (role === 'assistant') splitWrittenReasoning(msg, ctx);
  if (role === 'assistant' && !toolCalls && typeof msg.content === 'string' && msg.content.includes('<tool_call>')) {
    const h = hermesToolCalls(msg.content, ctx);
    if (h) {
      toolCalls = h.calls;
      msg.content = h.text === '' ? null : h.text;
    }
  }
  if (toolCalls) msg.tool_calls = toolCalls;
  readCallIdAndName(turn, msg, ctx);
  readTrainingFlags(turn, msg, ctx);
  ctx.current = undefined;
  if (side?.withResults) return [...text.toolResults, ...expandSideCalls(msg, side, ctx)];
  if (text.toolResults.length) {
    ctx.note('tool_result_blocks_as_tool_turns', 'tool results inside content (Anthropic "tool_result", Gemini "functionResponse") became "tool" turns');
    if (msg.role === 'tool') return text.toolResults; // Gemini role "function" holding functionResponse parts
    return msg.content === null ? text.toolResults : [...text.toolResults, msg];
  }
  return [msg];
}

/**
 * A turn's speaker: its role through the alias table (`roles.ts`) and the key it was read from, `'function_call'` for a
 * turn whose role says it holds a function call as JSON text ({@link functionCallTurn}), or a {@link TurnError}:
 * `missing_role`, or `unknown_role` (its facts also set on `ctx.turnError`; never trained on or dropped silently).
 */
function turnSpeaker(turn: Row, index: number, ctx: NormalizeContext, opts: TurnOptions): { role: Role; roleKey: string } | 'function_call' | TurnError {
  const roleKey = opts.roleKey ?? ROLE_KEYS.find((k) => k in turn);
  const spelling = roleKey === undefined ? undefined : turn[roleKey];
  if (roleKey === undefined || spelling === undefined || spelling === null) {
    return {
      code: 'missing_role',
      message: `message ${index} has no role (looked for ${ROLE_KEYS.map((k) => `"${k}"`).join(', ')}; keys found: ${Object.keys(turn).join(', ') || 'none'})`,
    };
  }
  ctx.fields.use(turn, roleKey);
  if (typeof spelling === 'string' && FUNCTION_CALL_ROLES.has(roleSpellingKey(spelling))) return 'function_call';
  const role: Role | undefined = mapRole(spelling);
  if (role) return { role, roleKey };
  const shown = typeof spelling === 'string' ? `"${spelling}"` : JSON.stringify(spelling);
  ctx.turnError = { code: 'unknown_role', role: typeof spelling === 'string' ? spelling : JSON.stringify(spelling), turn: index - 1 };
  return {
    code: 'unknown_role',
    message: `unknown role ${shown} in message ${index} (known: ${knownRoleSpellings()}, function_call); add it to "roleAliases" in eagle3prep.jsonc`,
  };
}

/** A list of call objects that keep their results (`[{name, arguments, result}]`, `[{request, response}]`): read with them by {@link readSideCalls} (turnCalls.ts). */
function callsWithResults(v: unknown): boolean {
  return Array.isArray(v) && v.some((c) => (isObject(c) && isObject(c.request)) || (readSideCall(c) !== undefined && 'result' in readSideCall(c)!));
}

/**
 * The turn's tool calls under the keys that name them, in this order: OpenAI `tool_calls` (unless they keep their
 * results), the legacy single `function_call` (noted `function_call_converted`), and an assistant turn's
 * `actions: [{API_name, API_params}]` (ShareGPT-style tool use; noted `api_actions_converted`). `undefined` when
 * none of the keys is there; arguments kept as the source gave them (`content.ts` `parseToolCalls`).
 */
function namedToolCalls(turn: Row, role: Role, index: number, ctx: NormalizeContext): ToolCall[] | undefined | TurnError {
  const f = ctx.fields;
  let toolCalls: ToolCall[] | undefined;
  if (turn.tool_calls !== undefined && turn.tool_calls !== null && !(role === 'assistant' && callsWithResults(turn.tool_calls))) {
    f.use(turn, 'tool_calls');
    const tc = parseToolCalls(turn.tool_calls, index, ctx);
    if (isTurnError(tc)) return tc;
    if (tc.length) toolCalls = tc;
  }
  if (isObject(turn.function_call)) {
    f.use(turn, 'function_call');
    const tc = parseToolCalls([turn.function_call], index, ctx);
    if (isTurnError(tc)) return tc;
    toolCalls = [...(toolCalls ?? []), ...tc];
    ctx.note('function_call_converted', 'legacy "function_call" converted to "tool_calls"');
  }
  if (
    role === 'assistant' &&
    Array.isArray(turn.actions) &&
    turn.actions.length > 0 &&
    turn.actions.every((a) => isObject(a) && typeof a.API_name === 'string') &&
    !callsWithResults(turn.actions)
  ) {
    f.use(turn, 'actions');
    const tc = parseToolCalls(
      (turn.actions as Row[]).map((a) => ({ name: a.API_name, arguments: a.API_params ?? {} })),
      index,
      ctx,
    );
    if (isTurnError(tc)) return tc;
    toolCalls = [...(toolCalls ?? []), ...tc];
    ctx.note('api_actions_converted', '"actions" [{API_name, API_params}] beside the turn text converted to tool calls');
  }
  return toolCalls;
}

/** A list of call objects beside an assistant turn's text, read (`turnCalls.ts`); `withResults` when a call keeps its result. */
interface SideCalls {
  key: string;
  calls: SideCall[];
  withResults: boolean;
}

/**
 * Other lists of call objects beside an assistant turn's text (`apis: [{request, response}]`, `calls: [{name,
 * parameters, result}]`), found by structure among the keys not read yet (`turnCalls.ts` `sideCallList`); each call's
 * fields marked read. Undefined when there is none.
 */
function readSideCalls(turn: Row, roleKey: string, ctx: NormalizeContext, opts: TurnOptions): SideCalls | undefined {
  if (!hasNonEmptyList(turn)) return undefined; // sideCallList looks at lists only: no key set built without one
  const f = ctx.fields;
  const side = sideCallList(turn, new Set([roleKey, ...TEXT_KEYS, ...REASONING_KEYS, ...(opts.textKey ? [opts.textKey] : []), ...(f.usedKeys(turn) ?? [])]));
  if (!side) return undefined;
  f.use(turn, side.key);
  const label = `${opts.label ?? 'turns[]'}.${side.key}[]`;
  side.calls.forEach((c, i) => {
    const item = (turn[side.key] as unknown[])[i] as Row;
    f.track(item, `${label}.`);
    f.use(item, ...c.read);
    if (c.request !== item) {
      f.track(c.request, `${label}.request.`);
      f.use(c.request, ...c.requestRead);
    }
  });
  return { ...side, withResults: side.calls.some((c) => 'result' in c) };
}

/** A turn's text field, read (see {@link turnText}). */
interface TurnText {
  /** The text; `null` when the field held only tool results (no turn of its own). */
  content: string | null;
  /** The field was JSON `null` (and no other field gave the text). */
  rawNull: boolean;
  /** The field was missing, `null` or a list: with no text found, the turn holds no text of its own. */
  emptyField: boolean;
  /** Reasoning from content parts (`thinking` blocks, LLaMA-Factory `reasoning` parts). */
  reasoning?: string;
  /** Tool calls from content parts (`tool_use`, `functionCall`, `tool_call` parts). */
  toolCalls: ToolCall[];
  /** `tool` messages from tool-result parts (Anthropic `tool_result`, Gemini `functionResponse`), placed before the turn. */
  toolResults: Message[];
}

/** A content-part list that carries more than text: Anthropic / Gemini blocks of tool use, tool results or thinking. */
function isBlockList(raw: unknown): raw is unknown[] {
  return (
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
  );
}

/**
 * A turn's text: the first text key that holds text (else the first present; another key holding the text is noted
 * `text_field_fallback`), read as a LLaMA-Factory v1 part list, a list of content blocks (`content.ts`), `null`, or
 * text. When it is empty, the text is looked for where the source keeps it instead: an assistant's OpenAI `refusal`,
 * a system turn's own `system_prompt` (SWE-agent runs).
 */
function turnText(turn: Row, role: Role, index: number, ctx: NormalizeContext, opts: TurnOptions): TurnText | TurnError {
  const f = ctx.fields;
  const present = opts.textKey !== undefined ? [opts.textKey] : TEXT_KEYS.filter((k) => k in turn);
  const textKey = present.find((k) => holdsText(turn[k])) ?? present[0];
  for (const k of present) if (!holdsText(turn[k])) f.use(turn, k); // empty: nothing to report
  if (textKey !== undefined) {
    f.use(turn, textKey);
    if (textKey !== present[0]) ctx.note('text_field_fallback', `the turn's "${present[0]}" is empty: its text is in "${textKey}"`);
  }
  const raw = textKey === undefined ? undefined : turn[textKey];
  const text: TurnText = { content: '', rawNull: false, emptyField: raw === null || raw === undefined || Array.isArray(raw), toolCalls: [], toolResults: [] };
  if (isPartList(raw)) {
    // LLaMA-Factory v1 messages: content = [{type: text|reasoning|tool_call|tools|image_url, value}].
    const p = partListContent(raw, index, ctx);
    if (isTurnError(p)) return p;
    text.content = p.text;
    text.reasoning = p.reasoning;
    text.toolCalls = p.toolCalls;
    if (p.tools.length) ctx.partTools = [...(ctx.partTools ?? []), ...p.tools];
  } else if (isBlockList(raw)) {
    const b = contentBlocks(raw, ctx);
    text.content = b.text;
    text.reasoning = b.reasoning;
    text.toolCalls = b.toolCalls;
    text.toolResults = b.toolResults;
    if (b.toolResults.length && b.text === '') text.content = null; // only tool results: no user turn of its own
  } else if (raw === null || raw === undefined) {
    text.rawNull = raw === null;
  } else {
    text.content = toText(raw, ctx);
  }
  if (text.content === '' && role === 'assistant' && nonEmptyString(turn.refusal)) {
    f.use(turn, 'refusal');
    text.content = turn.refusal;
    text.rawNull = false;
    ctx.note('refusal_as_content', 'an assistant turn without content whose text is in "refusal" (OpenAI): the refusal is the content');
  } else if (text.content === '' && role === 'system' && nonEmptyString(turn.system_prompt)) {
    f.use(turn, 'system_prompt');
    text.content = turn.system_prompt;
    text.rawNull = false;
    ctx.note(
      'turn_system_prompt_used',
      'a system turn without text whose prompt is in its own "system_prompt" field (SWE-agent runs): that prompt is the content',
    );
  }
  return text;
}

/**
 * The content a turn without text keeps: `null` for an assistant turn with tool calls and no text (the template adapter
 * decides per template; noted `tool_call_content_null`), else the text, a `null` field read as `""` (noted
 * `null_content` outside system turns).
 */
function settledContent(text: TurnText, role: Role, hasToolCalls: boolean, ctx: NormalizeContext): string | null {
  const noText = text.emptyField && text.content === '';
  if (noText && role === 'assistant' && hasToolCalls) {
    ctx.note('tool_call_content_null', 'assistant turns with tool calls and no text keep content null (the template adapter decides)');
    return null;
  }
  if (text.content === '' && text.rawNull && role !== 'system') ctx.note('null_content', 'null content replaced by ""');
  return text.content;
}

/**
 * The turn's reasoning field (the first of {@link REASONING_KEYS} present, noted `reasoning_field_used` unless it is
 * `reasoning_content`) as `msg.reasoning_content`, after any reasoning from content parts (`fromParts`).
 */
function readReasoning(turn: Row, msg: Message, fromParts: string | undefined, ctx: NormalizeContext): void {
  const reasoningKey = REASONING_KEYS.find((k) => turn[k] !== undefined && turn[k] !== null);
  if (reasoningKey) {
    ctx.fields.use(turn, reasoningKey);
    const r = toText(turn[reasoningKey], ctx);
    if (r !== '') {
      msg.reasoning_content = fromParts && fromParts !== r ? `${fromParts}\n${r}` : r;
      if (reasoningKey !== 'reasoning_content') ctx.note('reasoning_field_used', `"${reasoningKey}" turn field used as reasoning_content`);
      return;
    }
  }
  if (fromParts) msg.reasoning_content = fromParts;
}

/**
 * Reasoning written into an assistant turn's text, when it has no reasoning field: thought markers
 * (`<|begin_of_thought|>…<|end_of_thought|>`, the solution markers kept as content) and inline `<think>R</think>C`,
 * read as `reasoning_content` R with content C and the text around R kept in `reasoning_inline`: the template adapter
 * gives the content back as written to a template that does not render reasoning_content (templates/template.ts
 * adaptTurns; docs/loss-mask-rules.md "Reasoning written into the text").
 */
function splitWrittenReasoning(msg: Message, ctx: NormalizeContext): void {
  if (msg.reasoning_content === undefined && typeof msg.content === 'string') {
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
  if (msg.reasoning_content === undefined && typeof msg.content === 'string') {
    const parts = inlineThinkParts(msg.content);
    if (parts) {
      msg.content = parts.content;
      msg.reasoning_content = parts.reasoning;
      msg.reasoning_inline = { open: parts.open, close: parts.close };
      ctx.fact(
        'inline <think>…</think> reasoning in assistant content read as reasoning_content (given back as written to a template that does not render reasoning)',
      );
    }
  }
}

/** The turn's `tool_call_id` (or SWE-agent's first `tool_call_ids`) and a non-empty `name`. */
function readCallIdAndName(turn: Row, msg: Message, ctx: NormalizeContext): void {
  const f = ctx.fields;
  if (typeof turn.tool_call_id === 'string') {
    f.use(turn, 'tool_call_id');
    msg.tool_call_id = turn.tool_call_id;
  } else if (Array.isArray(turn.tool_call_ids) && typeof turn.tool_call_ids[0] === 'string') {
    f.use(turn, 'tool_call_ids');
    msg.tool_call_id = turn.tool_call_ids[0]; // SWE-agent
  }
  if (typeof turn.name === 'string' && turn.name !== '') {
    f.use(turn, 'name');
    msg.name = turn.name;
  }
}

/**
 * Per-turn training flags ({@link TRAIN_FLAG_KEYS}): one that is `false` or `0` makes the turn not trainable (noted
 * `untrainable_turn`). LLaMA-Factory writes `loss_weight: 0.0` on every non-assistant turn, so only an assistant turn's
 * `loss_weight` says anything; a fractional one is trained with weight 1 (noted `fractional_loss_weight`).
 */
function readTrainingFlags(turn: Row, msg: Message, ctx: NormalizeContext): void {
  const flags = TRAIN_FLAG_KEYS.filter((k) => k in turn);
  if (flags.length) ctx.fields.use(turn, ...flags);
  const flag = flags.find((k) => (turn[k] === false || turn[k] === 0) && (k !== 'loss_weight' || msg.role === 'assistant'));
  if (flag) {
    msg.trainable = false;
    ctx.note(
      'untrainable_turn',
      'per-turn training flag (weight: 0 / loss: false / train: false / trainable: false / loss_weight: 0) marks turns not trainable',
    );
  } else if (msg.role === 'assistant' && typeof turn.loss_weight === 'number' && turn.loss_weight > 0 && turn.loss_weight !== 1) {
    ctx.note('fractional_loss_weight', 'a "loss_weight" between 0 and 1: the turn is trained with weight 1 (a loss mask has no fractional weights)');
  }
}

/**
 * An assistant turn whose side calls keep their results (turnCalls.ts "Order"): each call its own assistant turn (not
 * trainable when the turn is not), its result the `tool` turn after it, the turn's reasoning on the first call, and the
 * turn's text last (dropped when it has neither text nor tool calls).
 */
function expandSideCalls(msg: Message, side: SideCalls, ctx: NormalizeContext): Message[] {
  const calls: Message[] = [];
  for (const c of side.calls) {
    const m: Message = { role: 'assistant', content: null, tool_calls: [c.call] };
    if (msg.trainable === false) m.trainable = false;
    calls.push(m);
    if ('result' in c) {
      const t: Message = { role: 'tool', content: resultText(c.result) };
      if (c.call.id !== undefined) t.tool_call_id = c.call.id;
      calls.push(t);
    }
  }
  if (msg.reasoning_content !== undefined) {
    calls[0].reasoning_content = msg.reasoning_content;
    if (msg.reasoning_inline) calls[0].reasoning_inline = msg.reasoning_inline;
    delete msg.reasoning_content;
    delete msg.reasoning_inline;
  }
  ctx.note(
    'side_tool_calls_expanded',
    `"${side.key}" beside the turn text holds tool calls with their results: each call an assistant turn followed by a tool turn with its result, the turn's text after them`,
  );
  const text = (msg.content ?? '').trim() !== '' || (msg.tool_calls?.length ?? 0) > 0;
  return [...calls, ...(text ? [msg] : [])];
}

/**
 * A function-call turn (LLaMA-Factory `function_call`, function-calling ShareGPT
 * `function-call`): its text is `{"name", "arguments"}` JSON (or a list of them)
 * → an assistant turn with tool calls.
 */
function functionCallTurn(turn: Row, index: number, ctx: NormalizeContext): Message[] | TurnError {
  const textKey = TEXT_KEYS.find((k) => k in turn);
  if (textKey !== undefined) ctx.fields.use(turn, textKey);
  const raw = textKey === undefined ? undefined : turn[textKey];
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = parseJsonLimited(raw);
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

/** Converts a list of source turns; the first failure wins (a TurnError). */
export function convertTurns(list: unknown[], ctx: NormalizeContext, opts: TurnOptions = {}): Message[] | TurnError {
  const messages: Message[] = [];
  for (let i = 0; i < list.length; i++) {
    const m = toMessages(list[i], i + 1, ctx, opts);
    if (isTurnError(m)) return m;
    messages.push(...m);
  }
  return messages;
}
