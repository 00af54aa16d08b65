/**
 * Shape handlers for instruction and single-exchange data: xLAM-style
 * `query`/`tools`/`answers`, prompt +
 * response rows (Alpaca `instruction`/`input`/`output` with `history`, Dolly
 * `instruction`/`context`/`response`, `question`/`answer`, `query`/`response`,
 * `prompt`/`completion`) and prompt-only rows.
 */
import type { Message, RowOutcome } from '../types';
import { convertTurns } from './common';
import { markContextTurns, finish, splitOutcome } from './rowEnd';
import {
  errored,
  fieldValue,
  isObject,
  isTurnError,
  nonEmptyString,
  roleSpelling,
  wasJsonString,
  type NormalizeContext,
  type Row,
  type ShapeHandler,
} from './base';
import { parseToolCalls, toText } from './content';
import { isLabelValue, outweighsLabel } from './labels';
import { isAssignedField } from './fieldRoles';
import { chatMlPromptTurns, hhPromptTurns, withoutChatMlEnd } from './transcript';
import { isMetadataField } from './fields';
import { mapRole } from './roles';

/** Single-prompt fields (Alpaca `instruction`, plain `prompt`, QA `question`, `query`). */
export const PROMPT_KEYS = ['prompt', 'instruction', 'question', 'query', 'problem', 'input_text'];
/** Response fields paired with a prompt field. */
export const RESPONSE_KEYS = ['response', 'completion', 'output', 'answer', 'solution', 'generated_solution', 'output_text'];

// ------------------------------------------------------------------ xLAM-style function calling

/**
 * `query` + `tools` + `answers` rows (Salesforce xlam-function-calling-60k;
 * `tools`/`answers` are JSON strings): the user's query, then one assistant
 * turn calling the tools of `answers` (`[{name, arguments}]`). Tool
 * definitions are wrapped into OpenAI form.
 */
export const queryToolsAnswersHandler: ShapeHandler = {
  name: 'query-tools-answers',
  matches: (row) => nonEmptyString(row.query) && 'answers' in row && 'tools' in row && Array.isArray(fieldValue(row, 'answers')),
  describe: (row) => `"query" + "tools" + "answers"${wasJsonString(row, 'answers') ? ' (JSON strings)' : ''}: one user query, one tool-calling answer`,
  roles: () => [],
  normalize(row, ctx) {
    ctx.fields.use(row, 'query', 'answers');
    const calls = parseToolCalls(fieldValue(row, 'answers'), 2, ctx);
    if (isTurnError(calls)) return errored(ctx, calls.code, `"answers": ${calls.message}`);
    if (wasJsonString(row, 'answers')) ctx.note('answers_json_string', '"answers" given as a JSON string (parsed into tool calls)');
    const messages: Message[] = [
      { role: 'user', content: row.query as string },
      calls.length ? { role: 'assistant', content: null, tool_calls: calls } : { role: 'assistant', content: '' },
    ];
    return finish(row, messages, ctx);
  },
};

// ------------------------------------------------------------------ prompt (+ response) rows

function promptField(row: Row): string | undefined {
  return PROMPT_KEYS.find((k) => nonEmptyString(row[k]));
}
/**
 * The response field: the first of {@link RESPONSE_KEYS} present, except that a short label there (`"answer": "27"`,
 * `labels.ts`) never wins over a model-written answer in another response field of the row (`"solution"`), unless
 * eagle3prep.jsonc "fieldRoles" made it the answer (then it is read, and the other fields are reported unread).
 */
function responseField(row: Row): string | undefined {
  const present = RESPONSE_KEYS.filter((k) => nonEmptyString(row[k]) || typeof row[k] === 'number' || isTurnValue(row[k]));
  // A field eagle3prep.jsonc "fieldRoles" made the answer is the answer, however short (fieldRoles.ts).
  const assigned = present.find((k) => isAssignedField(row, k));
  if (assigned !== undefined) return assigned;
  const first = present[0];
  if (first !== undefined && isLabelValue(row[first])) return present.find((k) => outweighsLabel(row[k], row[first])) ?? first;
  return first;
}

/** Marks the short labels left beside the chosen response field as read (noted: never trained). */
function readLabels(row: Row, field: string, ctx: NormalizeContext): void {
  for (const k of RESPONSE_KEYS) {
    if (k === field || !isLabelValue(row[k])) continue;
    ctx.fields.use(row, k);
    ctx.note(
      'short_label_not_trained',
      `"${k}" holds a short label (a ground truth such as a number or a letter) beside the model-written answer "${field}": read as a label, not trained`,
    );
  }
}

/** A response given as one turn object or a list of turn objects (`{role, content}` / `{from, value}`). */
function isTurnValue(v: unknown): boolean {
  const isTurn = (t: unknown) => isObject(t) && ('role' in t || 'from' in t);
  return isTurn(v) || (Array.isArray(v) && v.length > 0 && v.every(isTurn));
}

function describePrompt(row: Row): string {
  const p = promptField(row)!;
  const extra = ['input', 'context']
    .filter((k) => nonEmptyString(row[k]) && p !== k)
    .map((k) => ` + "${k}"`)
    .join('');
  const hist = Array.isArray(row.history) && row.history.length ? ' + "history"' : '';
  return `"${p}"${extra}${hist}`;
}

/**
 * Prompt + response rows: Alpaca (`instruction`, optional `input`, `output`,
 * optional `history` of `[prompt, response]` pairs, optional `system`), Dolly
 * (`instruction`, `context`, `response`), `question`/`answer`,
 * `query`/`response`, `prompt`/`completion`|`response`.
 */
export const promptResponseHandler: ShapeHandler = {
  name: 'prompt-response',
  matches: (row) => promptField(row) !== undefined && responseField(row) !== undefined,
  describe: (row) => `${describePrompt(row)} + "${responseField(row)}": strings`,
  roles: () => [],
  normalize(row, ctx) {
    const user = promptText(row, promptField(row)!, ctx);
    const field = responseField(row)!;
    ctx.fields.use(row, field);
    readLabels(row, field, ctx);
    const value = row[field];
    if (isTurnValue(value)) {
      const turns = convertTurns(Array.isArray(value) ? value : [value], ctx, { label: `${field}[]` });
      if (isTurnError(turns)) return errored(ctx, turns.code, `"${field}": ${turns.message}`);
      return finish(row, [...historyTurns(row, ctx), ...user, ...turns], ctx);
    }
    const raw = answerAfterPrompt(user, String(value), field, ctx);
    const text = hhPrompt(user) ? raw.trim() : raw; // after an HH transcript prompt
    const answer = convertTurns([{ role: 'assistant', content: text, ...rowReasoning(row, ctx) }], ctx, { label: `${field}.` });
    if (isTurnError(answer)) return errored(ctx, answer.code, `"${field}": ${answer.message}`);
    return finish(row, [...historyTurns(row, ctx), ...user, ...answer], ctx);
  },
};

/** Row-level fields that hold the answer's reasoning beside a prompt and a response (`{question, reasoning, answer}`); a one-word switch (Nemotron `"reasoning": "on"`) is not reasoning. */
const ROW_REASONING_KEYS = ['reasoning_content', 'reasoning', 'thinking'];

/** The answer's reasoning given at the row level, as a turn field (`{reasoning_content}`), marked read; `{}` when there is none. */
function rowReasoning(row: Row, ctx: NormalizeContext): { reasoning_content?: string } {
  // One word is a switch, not reasoning, unless eagle3prep.jsonc "fieldRoles" made the field the reasoning.
  const k = ROW_REASONING_KEYS.find(
    (x) => typeof row[x] === 'string' && (/\s/.test((row[x] as string).trim()) || (isAssignedField(row, x) && (row[x] as string).trim() !== '')),
  );
  if (!k) return {};
  ctx.fields.use(row, k);
  if (k !== 'reasoning_content') ctx.note('reasoning_field_used', `"${k}" row field used as the answer's reasoning_content`);
  return { reasoning_content: row[k] as string };
}

export const promptOnlyHandler: ShapeHandler = {
  name: 'prompt-only',
  matches: (row) => promptField(row) !== undefined && responseField(row) === undefined,
  describe: (row) => `${describePrompt(row)}: string, no response field`,
  roles: () => [],
  normalize(row, ctx) {
    const present = RESPONSE_KEYS.find((k) => k in row);
    if (present) {
      ctx.fields.use(row, present);
      ctx.note('empty_response', `empty "${present}" treated as no response (prompt to answer)`);
    }
    return finish(row, [...historyTurns(row, ctx), ...promptText(row, promptField(row)!, ctx)], ctx);
  },
};

/** Alpaca / LLaMA-Factory `history`: `[[prompt, response], …]` before the current exchange. */
function historyTurns(row: Row, ctx: NormalizeContext): Message[] {
  if (!Array.isArray(row.history)) return [];
  ctx.fields.use(row, 'history');
  const out: Message[] = [];
  for (const pair of row.history) {
    if (Array.isArray(pair) && pair.length >= 1) {
      out.push({ role: 'user', content: toText(pair[0], ctx) });
      if (pair.length >= 2) out.push({ role: 'assistant', content: toText(pair[1], ctx) });
    }
  }
  if (out.length) ctx.note('history_pairs_used', '"history" [prompt, response] pairs placed before the current exchange');
  return out;
}

/** Prompt turns read from a rendered ChatML prompt string ({@link promptText}): their response may end with `<|im_end|>`. */
const chatMlPrompt = new WeakSet<Message[]>();

/**
 * An answer string as it follows the prompt turns {@link promptText} returned: after a rendered ChatML prompt, the
 * `<|im_end|>` the model wrote at its end is removed (noted `chatml_end_removed`: the template writes the turn's end);
 * otherwise the text as given. `field` names the answer's field in the note.
 */
export function answerAfterPrompt(prompt: Message[], text: string, field: string, ctx: NormalizeContext): string {
  if (!chatMlPrompt.has(prompt) || withoutChatMlEnd(text) === text) return text;
  ctx.note('chatml_end_removed', `the end-of-turn marker <|im_end|> written at the end of "${field}" removed (the template writes the turn's end)`);
  return withoutChatMlEnd(text);
}

/** Whether prompt turns came from an HH transcript (several turns, not from ChatML): HH answers start with the space after "Assistant:". */
function hhPrompt(user: Message[]): boolean {
  return user.length > 1 && !chatMlPrompt.has(user);
}

/**
 * The user turn of a prompt row: `instruction` + `input` (Alpaca) or
 * `instruction` + `context` (Dolly) joined by a blank line, instruction first;
 * `question` with a `context` gets the context first (reading-comprehension
 * layout); a prompt that is an HH transcript ending in an open `Assistant:`, or a
 * rendered ChatML prompt ending in an open assistant header, becomes its turns;
 * anything else is the field's text.
 */
export function promptText(row: Row, field: string, ctx: NormalizeContext): Message[] {
  ctx.fields.use(row, field);
  let text = row[field] as string;
  const hh = hhPromptTurns(text);
  if (hh && hh.length) {
    ctx.note('transcript_split', `"${field}" split into turns at Human:/Assistant: markers`);
    return hh.map((t) => ({ role: t.role, content: t.content }));
  }
  const chatMl = chatMlPromptTurns(text);
  if (chatMl) {
    ctx.note('transcript_split', `"${field}" split into turns at ChatML <|im_start|> markers (a rendered prompt ending in an open assistant turn)`);
    const turns: Message[] = chatMl.map((t) => ({ role: t.role, content: t.content }));
    chatMlPrompt.add(turns);
    return turns;
  }
  if (field === 'instruction') {
    for (const k of ['input', 'context']) {
      if (k in row) ctx.fields.use(row, k);
      if (nonEmptyString(row[k])) {
        text = `${text}\n\n${row[k]}`;
        ctx.note(
          k === 'input' ? 'instruction_input_joined' : 'instruction_context_joined',
          `"instruction" and "${k}" joined into the user turn (blank line between)`,
        );
      }
    }
  } else if (field === 'question' && nonEmptyString(row.context)) {
    ctx.fields.use(row, 'context');
    text = `${row.context}\n\n${text}`;
    ctx.note('question_context_joined', '"context" and "question" joined into the user turn (context first, blank line between)');
  }
  return [{ role: 'user', content: text }];
}

// ------------------------------------------------------------------ prompt turns + completion

const TURN_PROMPT_KEYS = ['prompt', 'input', 'context_messages'];
const TURN_COMPLETION_KEYS = ['completion', 'output', 'response', 'answer'];

function turnPromptField(row: Row): string | undefined {
  return TURN_PROMPT_KEYS.find((k) => {
    const v = fieldValue(row, k);
    return Array.isArray(v) && v.length > 0 && v.every((t) => isObject(t) && ('role' in t || 'from' in t));
  });
}

/**
 * A prompt given as a list of turns with its completion beside it: TRL
 * "prompt-completion" conversational rows (`prompt` list + `completion` list
 * of assistant turns), Nemotron post-training rows (`input` list + `output`
 * string), `prompt` list + `response`. Without a completion the row is a prompt.
 * Context turns (docs/loss-mask-rules.md "Targets"): the prompt's assistant turns are not
 * trained; only the completion is the answer being taught.
 */
export const promptTurnsHandler: ShapeHandler = {
  name: 'prompt-turns-completion',
  matches: (row) => turnPromptField(row) !== undefined,
  describe(row) {
    const p = turnPromptField(row)!;
    const c = TURN_COMPLETION_KEYS.find((k) => k in row && row[k] !== null);
    return `"${p}": list of turns${c ? ` + "${c}"` : ', no completion'}`;
  },
  roles: (row) => (fieldValue(row, turnPromptField(row)!) as Row[]).map((t) => String(roleSpelling(t))),
  normalize: (row, ctx) => promptCompletion(row, turnPromptField(row)!, ctx),
};

/**
 * OpenAI-style `messages` with a `completion` beside them (the messages are the
 * prompt, the completion the answer: prompt-completion rows written with the
 * chat field name). Same rules as {@link promptTurnsHandler}.
 */
export const messagesCompletionHandler: ShapeHandler = {
  name: 'messages-completion',
  matches: (row) =>
    Array.isArray(fieldValue(row, 'messages')) &&
    (fieldValue(row, 'messages') as unknown[]).length > 0 &&
    row.completion !== undefined &&
    row.completion !== null &&
    row.completion !== '',
  describe: () => '"messages": list of turns + "completion"',
  roles: (row) => (fieldValue(row, 'messages') as unknown[]).filter(isObject).map((t) => String(roleSpelling(t))),
  normalize: (row, ctx) => promptCompletion(row, 'messages', ctx),
};

function promptCompletion(row: Row, p: string, ctx: NormalizeContext): RowOutcome {
  ctx.fields.use(row, p);
  const prompt = convertTurns(fieldValue(row, p) as unknown[], ctx, { label: `${p}[]` });
  if (isTurnError(prompt)) return errored(ctx, prompt.code, `"${p}": ${prompt.message}`);
  const c = TURN_COMPLETION_KEYS.find((k) => k in row && row[k] !== null && row[k] !== '');
  for (const k of TURN_COMPLETION_KEYS) if (k in row && (row[k] === null || row[k] === '')) ctx.fields.use(row, k);
  if (!c) return finish(row, prompt, ctx);
  ctx.fields.use(row, c);
  markContextTurns(prompt, ctx, `"${p}" (the prompt of a prompt/completion row)`);
  const v = fieldValue(row, c);
  let answer: Message[];
  if (typeof v === 'string' || typeof v === 'number') {
    // An answer given as plain text: inline `<think>` split, Hermes `<tool_call>` blocks read (same rules as turn lists).
    const m = convertTurns([{ role: 'assistant', content: String(v), ...rowReasoning(row, ctx) }], ctx, { label: `${c}.` });
    if (isTurnError(m)) return errored(ctx, m.code, `"${c}": ${m.message}`);
    answer = m;
  } else {
    const turns = convertTurns(Array.isArray(v) ? v : [v], ctx, { label: `${c}[]` });
    if (isTurnError(turns)) return errored(ctx, turns.code, `"${c}": ${turns.message}`);
    answer = turns;
  }
  return finish(row, [...prompt, ...answer], ctx);
}

// ------------------------------------------------------------------ request / response logs

function requestMessages(row: Row): { path: string; list: unknown[] } | undefined {
  for (const k of ['request', 'body']) {
    const r = fieldValue(row, k);
    if (isObject(r) && Array.isArray(r.messages)) return { path: `${k}.messages`, list: r.messages };
    if (isObject(r) && isObject(r.body) && Array.isArray(r.body.messages)) return { path: `${k}.body.messages`, list: r.body.messages };
  }
  return undefined;
}

function responseMessage(row: Row): unknown {
  return responseMessages(row)[0];
}

/** Every `choices[].message` of the response (`n` > 1 gives several), in order; empty when there is none. */
function responseMessages(row: Row): Row[] {
  for (const k of ['response', 'output']) {
    let r = fieldValue(row, k);
    if (isObject(r) && isObject(r.body)) r = r.body; // OpenAI batch output: response.body
    if (isObject(r) && Array.isArray(r.choices) && isObject(r.choices[0]) && isObject(r.choices[0].message))
      return r.choices.filter((c): c is Row => isObject(c) && isObject(c.message)).map((c) => c.message as Row);
  }
  return [];
}

/**
 * Chat-completions request logs: `request.messages` / OpenAI batch input
 * `body.messages` (a prompt), with the answer from `response.choices[0].message`
 * (or batch output `response.body.choices[0].message`) when present; several
 * choices (`n` > 1) give one record each (`batch_candidates_split`). Request
 * `tools` are kept.
 */
export const requestResponseHandler: ShapeHandler = {
  name: 'chat-completions-log',
  matches: (row) => requestMessages(row) !== undefined,
  describe: (row) => `"${requestMessages(row)!.path}"${responseMessage(row) ? ' + "response.choices[0].message"' : ' (request only)'}: chat-completions log`,
  roles: (row) => rolesOfList(requestMessages(row)!.list),
  normalize(row, ctx) {
    const req = requestMessages(row)!;
    ctx.fields.use(row, req.path.split('.')[0]);
    for (const k of ['response', 'output']) if (k in row && responseMessage(row) !== undefined) ctx.fields.use(row, k);
    const prompt = convertTurns(req.list, ctx, { label: `${req.path}[]` });
    if (isTurnError(prompt)) return errored(ctx, prompt.code, `"${req.path}": ${prompt.message}`);
    const owner = fieldValue(row, req.path.split('.')[0]) as Row;
    const tools = isObject(owner.body) ? owner.body.tools : owner.tools;
    const opts = tools !== undefined ? { tools } : {};
    const answers = responseMessages(row);
    if (answers.length === 0) return finish(row, prompt, ctx, opts);
    // Several choices (n > 1): each answer its own record, the prompt shared.
    if (answers.length > 1) ctx.note('batch_candidates_split', `"response.choices" holds ${answers.length} answers: one record each, the request shared`);
    const parts: RowOutcome[] = [];
    for (const [k, resp] of answers.entries()) {
      const a = convertTurns([{ role: 'assistant', ...resp }], ctx, { label: 'response.choices[].message.' });
      if (isTurnError(a)) return errored(ctx, a.code, `response message${answers.length > 1 ? ` ${k + 1}` : ''}: ${a.message}`);
      parts.push(finish(row, [...prompt.map((m) => ({ ...m })), ...a], ctx, opts));
    }
    return splitOutcome(parts, ctx);
  },
};

function rolesOfList(list: unknown[]): string[] {
  return list.filter(isObject).map((t) => String(roleSpelling(t)));
}

// ------------------------------------------------------------------ input/output pair lists

const PAIR_LIST_FIELDS = ['conversation', 'conversations', 'turns', 'dialog', 'dialogue', 'chat', 'exchanges', 'pairs'];

/** The keys of one exchange object: the user side, the assistant side, and a system key when there is one. */
interface PairKeys {
  user: string;
  assistant: string;
  system?: string;
}

/**
 * The keys of an exchange `{input, output}` (Capybara / Puffin), or of an exchange whose keys are role names,
 * one the user's and one the assistant's by the alias table (`{human, assistant}`, `{user, bot}`, `{human, gpt}`;
 * a `system` key allowed). Undefined for a turn object (`role` / `from`), or when the roles are not one of each.
 */
function pairKeys(t: unknown): PairKeys | undefined {
  if (!isObject(t) || 'role' in t || 'from' in t) return undefined;
  if ('input' in t && 'output' in t) return { user: 'input', assistant: 'output', ...(nonEmptyString(t.system) ? { system: 'system' } : {}) };
  const side = (r: string) => Object.keys(t).filter((k) => mapRole(k) === r && (typeof t[k] === 'string' || t[k] === null) && !isMetadataField(k, t[k]));
  const [user, assistant, system] = [side('user'), side('assistant'), side('system')];
  if (user.length !== 1 || assistant.length !== 1 || system.length > 1 || !nonEmptyString(t[user[0]])) return undefined;
  return { user: user[0], assistant: assistant[0], ...(system.length ? { system: system[0] } : {}) };
}

function pairField(row: Row): string | undefined {
  return PAIR_LIST_FIELDS.find((f) => {
    const v = fieldValue(row, f);
    if (!Array.isArray(v) || v.length === 0) return false;
    const keys = v.map(pairKeys);
    // One layout per list: the same user and assistant keys in every exchange.
    return keys.every((k) => k !== undefined && k.user === keys[0]!.user && k.assistant === keys[0]!.assistant);
  });
}

/**
 * Lists of exchanges: `{input, output}` (Capybara / Puffin) or objects keyed by role names
 * (`{"human": …, "assistant": …}`): each exchange a user turn then an assistant turn (an empty answer leaves
 * the user turn as the prompt); a `system` value becomes a system turn before its exchange. The exchanges'
 * other fields are reported as unread (`conversation[].rating`).
 */
export const pairListHandler: ShapeHandler = {
  name: 'input-output-pairs',
  matches: (row) => pairField(row) !== undefined,
  describe(row) {
    const f = pairField(row)!;
    const k = pairKeys((fieldValue(row, f) as unknown[])[0])!;
    return `"${f}": list of {${k.user}, ${k.assistant}} exchanges`;
  },
  roles(row) {
    const k = pairKeys((fieldValue(row, pairField(row)!) as unknown[])[0])!;
    return k.user === 'input' ? [] : [k.user, k.assistant];
  },
  normalize(row, ctx) {
    const messages: Message[] = [];
    const f = pairField(row)!;
    ctx.fields.use(row, f);
    const list = fieldValue(row, f) as Row[];
    const first = pairKeys(list[0])!;
    for (const p of list) {
      const k = pairKeys(p)!;
      ctx.fields.track(p, `${f}[].`);
      ctx.fields.use(p, k.user, k.assistant, ...(k.system ? [k.system] : []));
      if (k.system && nonEmptyString(p[k.system])) messages.push({ role: 'system', content: p[k.system] as string });
      messages.push({ role: 'user', content: toText(p[k.user], ctx) });
      const out = p[k.assistant];
      if (out !== null && out !== undefined && out !== '') messages.push({ role: 'assistant', content: toText(out, ctx) });
    }
    ctx.note('pairs_to_turns', `{${first.user}, ${first.assistant}} exchanges → user / assistant turns`);
    return finish(row, messages, ctx);
  },
};
