/**
 * The common end of every shape handler (`finish`: system field, tools, id,
 * non-text parts, conversation vs prompt vs dropped), the context-turn rule of
 * prompt/completion layouts, and rows holding several conversations
 * (`splitOutcome`).
 */
import type { Conversation, Message, RowOutcome } from '../types';
import { describeJsonType, drop, errored, ID_KEYS, isObject, nonEmptyString, nullSourced, type NormalizeContext, type Row } from './base';
import { toText } from './content';
import { jsonBreakDescription, parseJsonLimited } from '../jsonDepth';

/** Top-level fields that carry the system prompt, in priority order. */
const SYSTEM_KEYS = ['system_prompt', 'system', 'systemInstruction', 'system_instruction'];

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

/**
 * Context turns (docs/loss-mask-rules.md "Targets"): in a row that
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
 *   turns are removed too and their places kept as `answerAfter`, where
 *   `generate` answers in order (noted `multi_turn_prompt`);
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
          t = parseJsonLimited(t) as typeof t;
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
  let answerAfter: number[] | undefined;
  if (!answered && hasAssistant) {
    // No answer anywhere: a prompt. Trailing empty assistant turns are placeholders; the ones between user turns are where generate answers.
    while (messages.length && messages[messages.length - 1].role === 'assistant') messages.pop();
    if (messages.some((m) => m.role === 'assistant')) {
      answerAfter = removeAnswerPlaceholders(messages);
      ctx.note(
        'multi_turn_prompt',
        'a prompt with several user turns answered in order: generate answers each one before asking the next (empty assistant turns between them, or the turns of a multi-turn prompt set, mark where)',
      );
    } else ctx.note('empty_response', 'empty assistant turns only: the row is a prompt to answer');
  }
  const last = messages[messages.length - 1];
  if (answered && last.role !== 'assistant') ctx.fact(`conversation ends with a ${last.role} turn (trailing turns are context only)`);
  for (let i = 1; i < messages.length; i++) {
    // A multi-turn prompt's user turns follow each other: the model answers between them (answerAfter).
    if (messages[i].role === messages[i - 1].role && messages[i].role !== 'tool' && !answerAfter?.includes(i - 1)) {
      ctx.note('consecutive_same_role', 'consecutive turns of the same role kept as they are (not merged, not truncated)');
      break;
    }
  }

  const conversation: Conversation = { id: recordId(row, ctx), source: ctx.source, messages };
  if (tools) conversation.tools = tools;
  if (answerAfter?.length) conversation.answerAfter = answerAfter;
  const parts = ctx.nonText.map((p) => ({ message: p.message ? messages.indexOf(p.message) : -1, type: p.type })).filter((p) => p.message >= 0);
  parts.push(...mediaFields(row, messages, ctx));
  if (parts.length) conversation.nonTextParts = parts;
  return { kind: answered ? 'conversation' : 'prompt', conversation };
}

/**
 * Removes the empty assistant turns of a prompt (none says anything, none is last) in place and returns where
 * they were: the 0-based index, in the messages left, of the turn before each (ascending, no repeats). A
 * placeholder before any other turn marks nothing and is only removed. Source: the multi-turn prompt form of
 * `prompts_to_generate.jsonl` (docs/formats.md "question-turns").
 */
export function removeAnswerPlaceholders(messages: Message[]): number[] {
  const kept: Message[] = [];
  const after: number[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') {
      const i = kept.length - 1;
      if (i >= 0 && after[after.length - 1] !== i) after.push(i);
      continue;
    }
    kept.push(m);
  }
  messages.splice(0, messages.length, ...kept);
  return after;
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
