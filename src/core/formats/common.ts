/**
 * Shared normalization steps used by every shape handler (`shapes-*.ts`):
 * one source turn → messages, and the common end of a row (system field,
 * tools, id, conversation vs prompt vs dropped). Content parts, tool calls and
 * reasoning layouts are `content.ts`; the shared types and helpers `base.ts`
 * (both re-exported here).
 *
 * Rules implemented (spec loss-mask.md "What the template is given" and "Targets"):
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
 *   places `generate` answers, in order (spec "Empty turns": at the end they are
 *   generation placeholders and are removed).
 */
import type { Conversation, Message, Role, RowOutcome, ToolCall } from '../types';
import {
  describeJsonType,
  drop,
  errored,
  ID_KEYS,
  isObject,
  isTurnError,
  nonEmptyString,
  ROLE_KEYS,
  TEXT_KEYS,
  type NormalizeContext,
  type Row,
  type TurnError,
} from './base';
import {
  contentBlocks,
  hermesToolCalls,
  isPartList,
  jsonBreakDescription,
  partListContent,
  parseToolCalls,
  splitInlineThink,
  splitThoughtMarkers,
  toText,
} from './content';
import { knownRoleSpellings, mapRole } from './roles';

export * from './base';
export { contentBlocks, hermesToolCalls, jsonBreakDescription, parseToolCalls, reportNonText, splitInlineThink, splitThoughtMarkers, toText } from './content';

/** Keys holding a turn's reasoning, in priority order (`thoughts`: ShareGPT-style tool-use sets that carry the model's thoughts beside `value`). */
const REASONING_KEYS = ['reasoning_content', 'reasoning', 'thinking', 'thoughts'];
/** Per-turn training flags; the turn is not trainable when one is `false` or `0` (`loss_weight`: LLaMA-Factory v1 messages). */
const TRAIN_FLAG_KEYS = ['weight', 'loss', 'train', 'trainable', 'loss_weight'];
/** Top-level fields that carry the system prompt, in priority order. */
const SYSTEM_KEYS = ['system_prompt', 'system', 'systemInstruction', 'system_instruction'];
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

/** A value that holds text: a non-blank string, a number, a non-empty list or an object. */
function holdsText(v: unknown): boolean {
  if (typeof v === 'string') return v.trim() !== '';
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
 * `tool_calls`, legacy `function_call`, `actions: [{API_name, API_params}]`;
 * LLaMA-Factory `function_call` turns (JSON text → tool calls); Hermes
 * `<tool_call>{json}</tool_call>` in assistant text; inline `<think>`; per-turn
 * training flags.
 */
export function toMessages(turn: unknown, index: number, ctx: NormalizeContext, opts: TurnOptions = {}): Message[] | TurnError {
  if (!isObject(turn)) return { code: 'bad_turn', message: `message ${index} is ${describeJsonType(turn)}, not an object with a role` };
  const f = ctx.fields;
  f.track(turn, `${opts.label ?? 'turns[]'}.`);
  if (opts.derived) f.use(turn, ...opts.derived.filter((k) => k in turn));
  const roleKey = opts.roleKey ?? ROLE_KEYS.find((k) => k in turn);
  const spelling = roleKey === undefined ? undefined : turn[roleKey];
  if (spelling === undefined || spelling === null) {
    return {
      code: 'missing_role',
      message: `message ${index} has no role (looked for ${ROLE_KEYS.map((k) => `"${k}"`).join(', ')}; keys found: ${Object.keys(turn).join(', ') || 'none'})`,
    };
  }
  f.use(turn, roleKey!);
  if (typeof spelling === 'string' && FUNCTION_CALL_ROLES.has(spelling.trim().toLowerCase().replace(/-/g, '_'))) return functionCallTurn(turn, index, ctx);
  const role: Role | undefined = mapRole(spelling);
  if (!role) {
    const shown = typeof spelling === 'string' ? `"${spelling}"` : JSON.stringify(spelling);
    return {
      code: 'unknown_role',
      message: `unknown role ${shown} in message ${index} (known: ${knownRoleSpellings()}, function_call); add it to "roleAliases" in eagle3prep.jsonc`,
    };
  }

  // Tool calls (OpenAI) and the legacy single `function_call`.
  let toolCalls: ToolCall[] | undefined;
  if (turn.tool_calls !== undefined && turn.tool_calls !== null) {
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
    turn.actions.every((a) => isObject(a) && typeof a.API_name === 'string')
  ) {
    // ShareGPT-style tool-use turns: `actions: [{API_name, API_params}]` beside the turn's `value`.
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

  const msg: Message = { role, content: '' };
  ctx.current = msg;
  const extra: Message[] = []; // tool messages from Anthropic tool_result blocks
  // The turn's text: the first text key that holds text (else the first present); another key holding the text is noted.
  const present = opts.textKey !== undefined ? [opts.textKey] : TEXT_KEYS.filter((k) => k in turn);
  const textKey = present.find((k) => holdsText(turn[k])) ?? present[0];
  for (const k of present) if (!holdsText(turn[k])) f.use(turn, k); // empty: nothing to report
  if (textKey !== undefined) {
    f.use(turn, textKey);
    if (textKey !== present[0]) ctx.note('text_field_fallback', `the turn's "${present[0]}" is empty: its text is in "${textKey}"`);
  }
  const raw = textKey === undefined ? undefined : turn[textKey];
  let content: string | null;
  let rawNull = false;
  let blockReasoning: string | undefined;
  if (isPartList(raw)) {
    // LLaMA-Factory v1 messages: content = [{type: text|reasoning|tool_call|tools|image_url, value}].
    const p = partListContent(raw, index, ctx);
    if (isTurnError(p)) return p;
    content = p.text;
    blockReasoning = p.reasoning;
    if (p.toolCalls.length) toolCalls = [...(toolCalls ?? []), ...p.toolCalls];
    if (p.tools.length) ctx.partTools = [...(ctx.partTools ?? []), ...p.tools];
  } else if (
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
  // The text is elsewhere when the usual field is empty: OpenAI `refusal`, a per-turn `system_prompt` (SWE-agent runs).
  if (content === '' && role === 'assistant' && nonEmptyString(turn.refusal)) {
    f.use(turn, 'refusal');
    content = turn.refusal;
    rawNull = false;
    ctx.note('refusal_as_content', 'an assistant turn without content whose text is in "refusal" (OpenAI): the refusal is the content');
  } else if (content === '' && role === 'system' && nonEmptyString(turn.system_prompt)) {
    f.use(turn, 'system_prompt');
    content = turn.system_prompt;
    rawNull = false;
    ctx.note(
      'turn_system_prompt_used',
      'a system turn without text whose prompt is in its own "system_prompt" field (SWE-agent runs): that prompt is the content',
    );
  }
  const noText = (raw === null || raw === undefined || (Array.isArray(raw) && content === '')) && content === '';
  if (noText && role === 'assistant' && toolCalls) {
    content = null;
    ctx.note('tool_call_content_null', 'assistant turns with tool calls and no text keep content null (the template adapter decides)');
  } else if (content === '' && rawNull && role !== 'system') {
    ctx.note('null_content', 'null content replaced by ""');
  }
  msg.content = content;
  if (rawNull) nullSourced.add(msg);

  const reasoningKey = REASONING_KEYS.find((k) => turn[k] !== undefined && turn[k] !== null);
  if (reasoningKey) {
    f.use(turn, reasoningKey);
    const r = toText(turn[reasoningKey], ctx);
    if (r !== '') {
      msg.reasoning_content = blockReasoning && blockReasoning !== r ? `${blockReasoning}\n${r}` : r;
      if (reasoningKey !== 'reasoning_content') ctx.note('reasoning_field_used', `"${reasoningKey}" turn field used as reasoning_content`);
    } else if (blockReasoning) msg.reasoning_content = blockReasoning;
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

  const flags = TRAIN_FLAG_KEYS.filter((k) => k in turn);
  if (flags.length) f.use(turn, ...flags);
  // LLaMA-Factory writes `loss_weight: 0.0` on every non-assistant turn: only an assistant turn's weight says anything.
  const flag = flags.find((k) => (turn[k] === false || turn[k] === 0) && (k !== 'loss_weight' || role === 'assistant'));
  if (flag) {
    msg.trainable = false;
    ctx.note(
      'untrainable_turn',
      'per-turn training flag (weight: 0 / loss: false / train: false / trainable: false / loss_weight: 0) marks turns not trainable',
    );
  } else if (role === 'assistant' && typeof turn.loss_weight === 'number' && turn.loss_weight > 0 && turn.loss_weight !== 1) {
    ctx.note('fractional_loss_weight', 'a "loss_weight" between 0 and 1: the turn is trained with weight 1 (a loss mask has no fractional weights)');
  }
  ctx.current = undefined;
  if (extra.length) {
    ctx.note('tool_result_blocks_as_tool_turns', 'tool results inside content (Anthropic "tool_result", Gemini "functionResponse") became "tool" turns');
    if (msg.role === 'tool') return extra; // Gemini role "function" holding functionResponse parts
    return msg.content === null ? extra : [...extra, msg];
  }
  return [msg];
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

/**
 * One row holding several conversations (Self-Instruct `instances`, a list of
 * conversation lists) → a `split` outcome: each part keeps its kind, gets the
 * id `<row id>/<k>` (1-based) and the row's source. Errored parts make the row
 * errored (first one); dropped parts are left out (noted `split_part_dropped`),
 * and a row whose parts are all dropped is dropped with the first reason. One
 * part is returned as it is (no split, its own id).
 */
export function splitOutcome(parts: RowOutcome[], ctx: NormalizeContext): RowOutcome {
  const err = parts.find((p) => p.kind === 'errored');
  if (err) return err;
  const kept = parts.filter((p): p is Extract<RowOutcome, { kind: 'conversation' | 'prompt' }> => p.kind === 'conversation' || p.kind === 'prompt');
  if (kept.length === 0) return parts.find((p) => p.kind === 'dropped') ?? drop(ctx.source, 'empty_conversation', 'no conversation in the row');
  if (kept.length < parts.length)
    ctx.note('split_part_dropped', 'a row holding several conversations: some of them have no user or assistant turn and were left out');
  if (kept.length === 1 && parts.length === 1) return kept[0];
  kept.forEach((p, k) => (p.conversation.id = `${p.conversation.id}/${k + 1}`));
  return { kind: 'split', source: ctx.source, parts: kept.map((p) => ({ kind: p.kind, conversation: p.conversation })) };
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

/**
 * Context turns (spec loss-mask.md "Targets", "Context turns"): in a row that
 * separates a prompt from its completion, the assistant turns of the prompt are
 * context, not targets: marked `trainable: false` (noted when there is one).
 */
export function markContextTurns(messages: Message[], ctx: NormalizeContext, where: string): Message[] {
  let n = 0;
  for (const m of messages) {
    if (m.role === 'assistant' && m.trainable !== false) {
      m.trainable = false;
      n++;
    }
  }
  if (n) ctx.note('context_turns_not_trained', `assistant turns inside ${where} are context, not the answer being taught: not trained`);
  return messages;
}

/** An assistant turn that says something: text, reasoning or tool calls. */
export function isAnswer(m: Message): boolean {
  return m.role === 'assistant' && ((m.content ?? '').trim() !== '' || (m.reasoning_content ?? '').trim() !== '' || (m.tool_calls?.length ?? 0) > 0);
}

// ------------------------------------------------------------------ end of a row

/**
 * Common end of every handler: top-level system prompt, tools, id, non-text
 * parts, and conversation vs prompt vs dropped:
 * - `dropped` (`no_assistant_turn`) when there is neither a user nor an assistant turn;
 * - `prompt` when no assistant turn says anything (text, reasoning or tool
 *   calls): the target model answers first. Empty assistant turns at the end are
 *   generation placeholders and are removed; empty assistant turns between user
 *   turns stay, as the places where `generate` answers in order (noted
 *   `multi_turn_prompt`);
 * - `conversation` otherwise.
 * Marks the row fields it reads (system, tools, media).
 */
export function finish(row: Row, messages: Message[], ctx: NormalizeContext, opts: { tools?: unknown } = {}): RowOutcome {
  applySystemField(row, messages, ctx);

  let tools: unknown[] | undefined;
  if (opts.tools === undefined && 'tools' in row) ctx.fields.use(row, 'tools');
  const rawTools = opts.tools !== undefined ? opts.tools : row.tools;
  if (rawTools !== null && rawTools !== undefined) {
    let t = rawTools;
    if (typeof t === 'string') {
      if (t.trim() === '') t = [];
      else {
        try {
          t = JSON.parse(t);
          ctx.note('tools_json_string', '"tools" given as a JSON string (parsed)');
        } catch {
          return errored(
            ctx,
            'bad_field',
            `"tools" is a string but not valid JSON (${jsonBreakDescription(rawTools as string)}); give a JSON list of tool definitions`,
          );
        }
      }
    }
    if (isObject(t)) t = [t];
    if (!Array.isArray(t)) return errored(ctx, 'bad_field', `"tools" must be a list of tool definitions, got ${describeJsonType(t)}`);
    if (t.length) tools = t.map(openAiTool);
  }
  if (ctx.partTools?.length) tools = [...(tools ?? []), ...ctx.partTools.map(openAiTool)];

  const hasAssistant = messages.some((m) => m.role === 'assistant');
  const hasUser = messages.some((m) => m.role === 'user');
  if (!hasAssistant && !hasUser) {
    return drop(ctx.source, 'no_assistant_turn', `no user or assistant turn (roles: ${[...new Set(messages.map((m) => m.role))].join(', ') || 'none'})`);
  }
  const answered = messages.some(isAnswer);
  if (!answered && hasAssistant) {
    // No answer anywhere: a prompt. Trailing empty assistant turns are placeholders; the ones between user turns are where generate answers.
    while (messages.length && messages[messages.length - 1].role === 'assistant') messages.pop();
    if (messages.some((m) => m.role === 'assistant')) {
      ctx.note(
        'multi_turn_prompt',
        'a prompt with several user turns: empty assistant turns between them mark where the target model answers, in order (generate asks each user turn after the previous answer)',
      );
    } else ctx.note('empty_response', 'empty assistant turns only: the row is a prompt to answer');
  }
  const last = messages[messages.length - 1];
  if (answered && last.role !== 'assistant') ctx.fact(`conversation ends with a ${last.role} turn (trailing turns are context only)`);
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
  return { kind: answered ? 'conversation' : 'prompt', conversation };
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
    if (field in row) ctx.fields.use(row, field);
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
  for (const k of SYSTEM_KEYS) if (k in row && !(nonEmptyString(row[k]) || isObject(row[k]) || Array.isArray(row[k]))) ctx.fields.use(row, k);
  if (!key) return;
  ctx.fields.use(row, key);
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
    if ((typeof v === 'string' && v.trim() !== '') || (typeof v === 'number' && Number.isFinite(v))) {
      ctx.fields.use(row, k);
      return String(v);
    }
  }
  return ctx.source.element === undefined ? `${ctx.fileBase}:${ctx.source.line}` : `${ctx.fileBase}:${ctx.source.line}[${ctx.source.element}]`;
}

/** Messages whose source content was `null` (for the wording of the system-field note only). */
const nullSourced = new WeakSet<Message>();
