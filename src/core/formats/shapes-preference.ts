/**
 * Shape handlers for preference and rated data — only the preferred answer is
 * ever trained, and the turns before it are context (docs/loss-mask-rules.md
 * "Targets"):
 * - `chosen` / `rejected` rows (TRL preference datasets, LLaMA-Factory ranking
 *   data, Anthropic HH-RLHF, UltraFeedback binarized);
 * - OpenAI preference fine-tuning rows: `input.messages` (+ `input.tools`),
 *   `preferred_output`, `non_preferred_output`
 *   (platform.openai.com/docs/guides/direct-preference-optimization);
 * - LLaMA-Factory v1 DPO samples: `chosen_messages` / `rejected_messages`
 *   (LLaMA-Factory `v1/extras/types.py` `DPOSample`);
 * - KTO rows (TRL "unpaired preference"): `prompt` (or `messages`) +
 *   `completion` + boolean `label`; `label: false` marks an undesirable
 *   completion, never trained: its prompt is set aside for the target model to
 *   answer (`kto_undesirable_set_aside`). LLaMA-Factory's
 *   KTO layout (`messages` + `label`, the last assistant turn judged) too.
 */
import type { Message, RowOutcome } from '../types';
import { convertTurns, toMessages, type TurnOptions } from './common';
import {
  drop,
  errored,
  fieldValue,
  isObject,
  isTurnError,
  nonEmptyString,
  roleSpelling,
  type NormalizeContext,
  type Row,
  type ShapeHandler,
  type TurnError,
} from './base';
import { finish, markContextTurns } from './rowEnd';
import { mapRole } from './roles';
import { promptText } from './shapes-instruct';
import { HH_MARKERS, hhPromptTurns, splitByMarkers } from './transcript';

/**
 * Converts `list`, marking the assistant turns among its first `contextTurns`
 * source turns as context (`trainable: false`).
 */
function convertWithContext(list: unknown[], contextTurns: number, ctx: NormalizeContext, opts: TurnOptions, where: string): Message[] | TurnError {
  const out: Message[] = [];
  for (let i = 0; i < list.length; i++) {
    const m = toMessages(list[i], i + 1, ctx, opts);
    if (isTurnError(m)) return m;
    out.push(...(i < contextTurns ? markContextTurns(m, ctx, where) : m));
  }
  return out;
}

/** How many leading source turns two lists share (same JSON): the implicit prompt of a preference pair. */
function sharedPrefix(a: unknown[], b: unknown): number {
  if (!Array.isArray(b)) return 0;
  let k = 0;
  while (k < a.length && k < b.length && JSON.stringify(a[k]) === JSON.stringify(b[k])) k++;
  return Math.min(k, a.length - 1); // the last chosen turn is the answer even when rejected repeats it
}

// ------------------------------------------------------------------ chosen / rejected

/**
 * Preference rows: the conversation is the prompt followed by `chosen`;
 * `rejected` is never trained on (noted).
 *
 * `chosen` may be: a string (the answer; or an HH transcript with
 * `\n\nHuman:`/`\n\nAssistant:` markers holding the whole conversation), one
 * turn object (`{from, value}` / `{role, content}`), or a list of turns — the
 * whole conversation when it starts with a user/system turn, else the answer
 * turns appended to the prompt. The prompt comes from `prompt` (string or turn
 * list), `messages`/`conversations` turn lists, or `instruction` (+ `input`) /
 * `question` / `query`. Context turns: the prompt's assistant turns, and when
 * `chosen` holds the whole conversation, the assistant turns it shares with
 * `rejected` (TRL's implicit prompt: the common prefix), are not trained.
 */
export const preferenceHandler: ShapeHandler = {
  name: 'preference',
  matches: (row) => 'chosen' in row && (typeof row.chosen === 'string' || isObject(row.chosen) || Array.isArray(fieldValue(row, 'chosen'))),
  describe(row) {
    const c = fieldValue(row, 'chosen');
    const kind = typeof c === 'string' ? (isHh(c) ? 'HH transcript string' : 'string') : Array.isArray(c) ? 'list of turns' : 'turn object';
    const p = preferencePromptField(row);
    return `"chosen" (${kind})${'rejected' in row ? ' + "rejected"' : ''}${p ? ` with prompt in "${p}"` : ''}`;
  },
  roles(row) {
    const c = fieldValue(row, 'chosen');
    return Array.isArray(c) ? c.filter(isObject).map((t) => String(roleSpelling(t))) : [];
  },
  normalize(row, ctx) {
    ctx.fields.use(row, 'chosen', 'rejected');
    if ('rejected' in row) ctx.note('rejected_not_used', 'preference row: trained on "chosen"; "rejected" not used');
    const chosen = fieldValue(row, 'chosen');
    const rejected = fieldValue(row, 'rejected');
    if (typeof chosen === 'string' && isHh(chosen)) {
      const split = splitByMarkers(chosen, HH_MARKERS)!;
      const messages: Message[] = split.turns.map((t) => ({ role: t.role, content: t.content }));
      // HH-RLHF: "chosen" and "rejected" repeat the whole dialogue; only the turns after what they share are the preferred answer.
      const other = typeof rejected === 'string' ? splitByMarkers(rejected, HH_MARKERS) : null;
      const shared = other ? sharedPrefix(split.turns, other.turns) : 0;
      markContextTurns(messages.slice(0, shared), ctx, 'the dialogue "chosen" shares with "rejected"');
      if (split.preamble) messages.unshift({ role: 'system', content: split.preamble });
      ctx.note('transcript_split', '"chosen" split into turns at Human:/Assistant: markers');
      return finish(row, messages, ctx);
    }
    const prompt = preferencePrompt(row, ctx);
    if (isTurnError(prompt)) return errored(ctx, prompt.code, prompt.message);
    markContextTurns(prompt, ctx, 'the prompt of a preference row');
    let answer: Message[];
    if (typeof chosen === 'string') answer = [{ role: 'assistant', content: hhPrompt.has(prompt) ? chosen.trim() : chosen }];
    else {
      const list = Array.isArray(chosen) ? chosen : [chosen];
      const first = isObject(list[0]) ? mapRole(roleSpelling(list[0])) : undefined;
      const whole = prompt.length === 0 && first !== undefined && first !== 'assistant';
      const conv = whole
        ? convertWithContext(list, sharedPrefix(list, rejected), ctx, { label: 'chosen[]' }, 'the dialogue "chosen" shares with "rejected"')
        : convertTurns(list, ctx, { label: 'chosen[]' });
      if (isTurnError(conv)) return errored(ctx, conv.code, `"chosen": ${conv.message}`);
      answer = conv;
      if (answer.length && answer[0].role !== 'assistant') {
        ctx.note('chosen_is_whole_conversation', '"chosen" holds the whole conversation (prompt turns included)');
        return finish(row, answer, ctx);
      }
    }
    return finish(row, [...prompt, ...answer], ctx);
  },
};

function isHh(s: string): boolean {
  return /(^|\n)\s*Human:/.test(s) && /\n\s*Assistant:/.test(s);
}

function preferencePromptField(row: Row): string | undefined {
  return ['prompt', 'messages', 'conversations', 'instruction', 'question', 'query', 'input'].find(
    (k) => nonEmptyString(row[k]) || (Array.isArray(fieldValue(row, k)) && (fieldValue(row, k) as unknown[]).length > 0),
  );
}

function preferencePrompt(row: Row, ctx: NormalizeContext): Message[] | TurnError {
  const f = preferencePromptField(row);
  if (!f) return [];
  ctx.fields.use(row, f);
  const v = fieldValue(row, f);
  if (Array.isArray(v)) {
    const m = convertTurns(v, ctx, { label: `${f}[]` });
    if (isTurnError(m)) return { code: m.code, message: `"${f}": ${m.message}` };
    return m;
  }
  const turns = promptText(row, f, ctx);
  if (typeof v === 'string' && hhPromptTurns(v)) hhPrompt.add(turns);
  return turns;
}

/** Prompts that were HH transcripts (their answers are trimmed: HH answers start with the space after "Assistant:"). */
const hhPrompt = new WeakSet<object>();

// ------------------------------------------------------------------ OpenAI preference fine-tuning

function openAiInput(row: Row): Row | undefined {
  const input = fieldValue(row, 'input');
  return isObject(input) && Array.isArray(input.messages) && Array.isArray(fieldValue(row, 'preferred_output')) ? input : undefined;
}

/**
 * OpenAI preference fine-tuning (DPO) rows: `{"input": {"messages": [...],
 * "tools": [...], "parallel_tool_calls": true}, "preferred_output": [assistant
 * message], "non_preferred_output": [assistant message]}`. The conversation is
 * `input.messages` (its assistant turns are context) then `preferred_output`;
 * `non_preferred_output` is never trained (noted `rejected_not_used`).
 */
export const openAiPreferenceHandler: ShapeHandler = {
  name: 'openai-preference',
  matches: (row) => openAiInput(row) !== undefined,
  describe: (row) => `"input.messages" + "preferred_output"${'non_preferred_output' in row ? ' + "non_preferred_output"' : ''} (OpenAI preference fine-tuning)`,
  roles: (row) => (openAiInput(row)!.messages as unknown[]).filter(isObject).map((t) => String(roleSpelling(t))),
  normalize(row, ctx) {
    const input = openAiInput(row)!;
    ctx.fields.use(row, 'input', 'preferred_output', 'non_preferred_output');
    ctx.fields.track(input, 'input.');
    ctx.fields.use(input, 'messages', 'tools', 'parallel_tool_calls');
    if ('non_preferred_output' in row) ctx.note('rejected_not_used', 'OpenAI preference row: trained on "preferred_output"; "non_preferred_output" not used');
    const prompt = convertTurns(input.messages as unknown[], ctx, { label: 'input.messages[]' });
    if (isTurnError(prompt)) return errored(ctx, prompt.code, `"input.messages": ${prompt.message}`);
    markContextTurns(prompt, ctx, '"input.messages" (the prompt of an OpenAI preference row)');
    const answer = convertTurns(fieldValue(row, 'preferred_output') as unknown[], ctx, { label: 'preferred_output[]' });
    if (isTurnError(answer)) return errored(ctx, answer.code, `"preferred_output": ${answer.message}`);
    return finish(row, [...prompt, ...answer], ctx, input.tools !== undefined ? { tools: input.tools } : {});
  },
};

// ------------------------------------------------------------------ LLaMA-Factory v1 DPO samples

/**
 * LLaMA-Factory v1 DPO samples: `chosen_messages` / `rejected_messages`, each
 * the whole conversation in v1 messages (`{role, content: [{type, value}],
 * loss_weight}`). The turns the two share are the prompt (context); the rest of
 * `chosen_messages` is the preferred answer; `rejected_messages` is never trained.
 */
export const llamaFactoryPreferenceHandler: ShapeHandler = {
  name: 'llamafactory-preference',
  matches: (row) => Array.isArray(fieldValue(row, 'chosen_messages')) && (fieldValue(row, 'chosen_messages') as unknown[]).length > 0,
  describe: (row) => `"chosen_messages"${'rejected_messages' in row ? ' + "rejected_messages"' : ''} (LLaMA-Factory v1 preference sample)`,
  roles: (row) => (fieldValue(row, 'chosen_messages') as unknown[]).filter(isObject).map((t) => String(roleSpelling(t))),
  normalize(row, ctx) {
    ctx.fields.use(row, 'chosen_messages', 'rejected_messages');
    if ('rejected_messages' in row) ctx.note('rejected_not_used', 'preference sample: trained on "chosen_messages"; "rejected_messages" not used');
    const chosen = fieldValue(row, 'chosen_messages') as unknown[];
    const shared = sharedPrefix(chosen, fieldValue(row, 'rejected_messages'));
    const messages = convertWithContext(chosen, shared, ctx, { label: 'chosen_messages[]' }, 'the turns "chosen_messages" shares with "rejected_messages"');
    if (isTurnError(messages)) return errored(ctx, messages.code, `"chosen_messages": ${messages.message}`);
    return finish(row, messages, ctx);
  },
};

// ------------------------------------------------------------------ KTO

function ktoPromptField(row: Row): string | undefined {
  return ['prompt', 'messages'].find((k) => nonEmptyString(row[k]) || (Array.isArray(fieldValue(row, k)) && (fieldValue(row, k) as unknown[]).length > 0));
}

/**
 * KTO rows (TRL unpaired preference: `prompt` + `completion` + `label`, prompt
 * and completion as strings or turn lists; also `messages` + `completion`, and
 * LLaMA-Factory's `messages` + `label` whose last assistant turn is the judged
 * completion). `label: false` → the prompt set aside, the completion never used
 * (`ktoUndesirable`); `label: true` → the prompt (its assistant
 * turns are context) then the completion, noted `kto_desirable`.
 */
export const ktoHandler: ShapeHandler = {
  name: 'kto',
  matches: (row) => typeof row.label === 'boolean' && ktoPromptField(row) !== undefined && ('completion' in row || Array.isArray(fieldValue(row, 'messages'))),
  describe: (row) => `"${ktoPromptField(row)}"${'completion' in row ? ' + "completion"' : ''} + boolean "label" (KTO)`,
  roles: (row) => {
    const v = fieldValue(row, ktoPromptField(row)!);
    return Array.isArray(v) ? v.filter(isObject).map((t) => String(roleSpelling(t))) : [];
  },
  normalize(row, ctx) {
    const p = ktoPromptField(row)!;
    ctx.fields.use(row, 'label', p, 'completion');
    const pv = fieldValue(row, p);
    const hasCompletion = 'completion' in row && row.completion !== null && row.completion !== '';
    if (row.label === false) return ktoUndesirable(row, p, pv, hasCompletion, ctx);
    ctx.note('kto_desirable', 'KTO row labelled desirable ("label": true): its completion is trained, the prompt is context');
    let prompt: Message[];
    if (Array.isArray(pv)) {
      // Without a "completion", the last assistant turn of the list is the judged one (LLaMA-Factory KTO).
      const lastAssistant = hasCompletion ? pv.length : lastAssistantIndex(pv);
      const m = convertWithContext(pv, lastAssistant, ctx, { label: `${p}[]` }, `the prompt of a KTO row`);
      if (isTurnError(m)) return errored(ctx, m.code, `"${p}": ${m.message}`);
      prompt = m;
    } else prompt = promptText(row, p, ctx);
    if (!hasCompletion) return finish(row, prompt, ctx);
    const c = fieldValue(row, 'completion');
    let answer: Message[];
    if (typeof c === 'string' || typeof c === 'number') {
      const m = convertTurns([{ role: 'assistant', content: String(c) }], ctx, { label: 'completion.' });
      if (isTurnError(m)) return errored(ctx, m.code, `"completion": ${m.message}`);
      answer = m;
    } else {
      const m = convertTurns(Array.isArray(c) ? c : [c], ctx, { label: 'completion[]' });
      if (isTurnError(m)) return errored(ctx, m.code, `"completion": ${m.message}`);
      answer = m;
    }
    return finish(row, [...prompt, ...answer], ctx);
  },
};

/**
 * A KTO row labelled undesirable (`"label": false`): its completion (the `completion` field, else the last
 * assistant turn of the list) is what the model should not write and is never trained or kept; its prompt
 * (every turn before the completion, assistant turns as context) is set aside for the target model to answer
 * (a `prompt` outcome, noted `kto_undesirable_set_aside`). A prompt with no user turn is dropped
 * `kto_undesirable`.
 */
function ktoUndesirable(row: Row, p: string, pv: unknown, hasCompletion: boolean, ctx: NormalizeContext): RowOutcome {
  const dropped = () =>
    drop(
      ctx.source,
      'kto_undesirable',
      'KTO row labelled undesirable ("label": false) with no user turn before its completion: nothing to answer, and the completion is never trained',
    );
  let prompt: Message[];
  if (Array.isArray(pv)) {
    const list = hasCompletion ? pv : pv.slice(0, lastAssistantIndex(pv));
    const m = convertWithContext(list, list.length, ctx, { label: `${p}[]` }, 'the prompt of a KTO row');
    if (isTurnError(m)) return errored(ctx, m.code, `"${p}": ${m.message}`);
    prompt = m;
  } else prompt = promptText(row, p, ctx);
  if (!prompt.some((m) => m.role === 'user')) return dropped();
  ctx.note(
    'kto_undesirable_set_aside',
    'KTO row labelled undesirable ("label": false): its completion is what the model should not write, never trained; its prompt is set aside for the target model to answer',
  );
  const out = finish(row, prompt, ctx);
  return out.kind === 'conversation' ? { kind: 'prompt', conversation: out.conversation } : out;
}

function lastAssistantIndex(list: unknown[]): number {
  for (let i = list.length - 1; i >= 0; i--) {
    if (isObject(list[i]) && mapRole(roleSpelling(list[i] as Row)) === 'assistant') return i;
  }
  return list.length;
}
