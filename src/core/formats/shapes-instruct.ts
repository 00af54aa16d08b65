/**
 * Shape handlers for instruction and single-exchange data: preference rows
 * (`chosen`/`rejected`), xLAM-style `query`/`tools`/`answers`, prompt +
 * response rows (Alpaca `instruction`/`input`/`output` with `history`, Dolly
 * `instruction`/`context`/`response`, `question`/`answer`, `query`/`response`,
 * `prompt`/`completion`) and prompt-only rows.
 */
import type { Message } from '../types';
import {
  convertTurns,
  errored,
  fieldValue,
  finish,
  isObject,
  isTurnError,
  nonEmptyString,
  parseToolCalls,
  roleSpelling,
  toText,
  wasJsonString,
  type NormalizeContext,
  type Row,
  type ShapeHandler,
  type TurnError,
} from './common';
import { HH_MARKERS, hhPromptTurns, splitByMarkers } from './transcript';

/** Single-prompt fields (Alpaca `instruction`, plain `prompt`, QA `question`, `query`). */
export const PROMPT_KEYS = ['prompt', 'instruction', 'question', 'query', 'problem', 'input_text'];
/** Response fields paired with a prompt field. */
export const RESPONSE_KEYS = ['response', 'completion', 'output', 'answer', 'solution', 'generated_solution', 'output_text'];

// ------------------------------------------------------------------ preference rows

/**
 * Preference rows (DPO/RLHF; TRL "preference" datasets, LLaMA-Factory ranking
 * data, Anthropic HH-RLHF, UltraFeedback binarized): the conversation is the
 * prompt followed by `chosen`; `rejected` is never trained on (noted).
 *
 * `chosen` may be: a string (the answer; or an HH transcript with
 * `\n\nHuman:`/`\n\nAssistant:` markers holding the whole conversation), one
 * turn object (`{from, value}` / `{role, content}`), or a list of turns — the
 * whole conversation when it starts with a user/system turn, else the answer
 * turns appended to the prompt. The prompt comes from `prompt` (string or turn
 * list), `messages`/`conversations` turn lists, or `instruction` (+ `input`) /
 * `question` / `query`.
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
    if ('rejected' in row) ctx.note('rejected_not_used', 'preference row: trained on "chosen"; "rejected" not used');
    const chosen = fieldValue(row, 'chosen');
    if (typeof chosen === 'string' && isHh(chosen)) {
      const split = splitByMarkers(chosen, HH_MARKERS)!;
      const messages: Message[] = split.turns.map((t) => ({ role: t.role, content: t.content }));
      if (split.preamble) messages.unshift({ role: 'system', content: split.preamble });
      ctx.note('transcript_split', '"chosen" split into turns at Human:/Assistant: markers');
      return finish(row, messages, ctx);
    }
    const prompt = preferencePrompt(row, ctx);
    if (isTurnError(prompt)) return errored(ctx, prompt.code, prompt.message);
    let answer: Message[];
    if (typeof chosen === 'string') answer = [{ role: 'assistant', content: hhPrompt.has(prompt) ? chosen.trim() : chosen }];
    else {
      const list = Array.isArray(chosen) ? chosen : [chosen];
      const conv = convertTurns(list, ctx);
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
  const v = fieldValue(row, f);
  if (Array.isArray(v)) {
    const m = convertTurns(v, ctx);
    if (isTurnError(m)) return { code: m.code, message: `"${f}": ${m.message}` };
    return m;
  }
  const turns = promptText(row, f, ctx);
  if (typeof v === 'string' && hhPromptTurns(v)) hhPrompt.add(turns);
  return turns;
}

/** Prompts that were HH transcripts (their answers are trimmed: HH answers start with the space after "Assistant:"). */
const hhPrompt = new WeakSet<object>();

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
function responseField(row: Row): string | undefined {
  return RESPONSE_KEYS.find((k) => nonEmptyString(row[k]) || typeof row[k] === 'number' || isTurnValue(row[k]));
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
    const value = row[field];
    if (isTurnValue(value)) {
      const turns = convertTurns(Array.isArray(value) ? value : [value], ctx);
      if (isTurnError(turns)) return errored(ctx, turns.code, `"${field}": ${turns.message}`);
      return finish(row, [...historyTurns(row, ctx), ...user, ...turns], ctx);
    }
    const raw = String(value);
    const answer = user.length > 1 ? raw.trim() : raw; // after an HH transcript prompt
    return finish(row, [...historyTurns(row, ctx), ...user, { role: 'assistant', content: answer }], ctx);
  },
};

export const promptOnlyHandler: ShapeHandler = {
  name: 'prompt-only',
  matches: (row) => promptField(row) !== undefined && responseField(row) === undefined,
  describe: (row) => `${describePrompt(row)}: string, no response field`,
  roles: () => [],
  normalize(row, ctx) {
    const present = RESPONSE_KEYS.find((k) => k in row);
    if (present) ctx.note('empty_response', `empty "${present}" treated as no response (prompt to answer)`);
    return finish(row, [...historyTurns(row, ctx), ...promptText(row, promptField(row)!, ctx)], ctx);
  },
};

/** Alpaca / LLaMA-Factory `history`: `[[prompt, response], …]` before the current exchange. */
function historyTurns(row: Row, ctx: NormalizeContext): Message[] {
  if (!Array.isArray(row.history)) return [];
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

/**
 * The user turn of a prompt row: `instruction` + `input` (Alpaca) or
 * `instruction` + `context` (Dolly) joined by a blank line, instruction first;
 * `question` with a `context` gets the context first (reading-comprehension
 * layout); a prompt that is an HH transcript ending in an open `Assistant:`
 * becomes its turns; anything else is the field's text.
 */
function promptText(row: Row, field: string, ctx: NormalizeContext): Message[] {
  let text = row[field] as string;
  const hh = hhPromptTurns(text);
  if (hh && hh.length) {
    ctx.note('transcript_split', `"${field}" split into turns at Human:/Assistant: markers`);
    return hh.map((t) => ({ role: t.role, content: t.content }));
  }
  if (field === 'instruction') {
    for (const k of ['input', 'context']) {
      if (nonEmptyString(row[k])) {
        text = `${text}\n\n${row[k]}`;
        ctx.note(
          k === 'input' ? 'instruction_input_joined' : 'instruction_context_joined',
          `"instruction" and "${k}" joined into the user turn (blank line between)`,
        );
      }
    }
  } else if (field === 'question' && nonEmptyString(row.context)) {
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
  normalize(row, ctx) {
    const p = turnPromptField(row)!;
    const prompt = convertTurns(fieldValue(row, p) as unknown[], ctx);
    if (isTurnError(prompt)) return errored(ctx, prompt.code, `"${p}": ${prompt.message}`);
    const c = TURN_COMPLETION_KEYS.find((k) => k in row && row[k] !== null && row[k] !== '');
    if (!c) return finish(row, prompt, ctx);
    const v = fieldValue(row, c);
    let answer: Message[];
    if (typeof v === 'string' || typeof v === 'number') {
      const m = toMessagesFromText(String(v), ctx);
      answer = [m];
    } else {
      const turns = convertTurns(Array.isArray(v) ? v : [v], ctx);
      if (isTurnError(turns)) return errored(ctx, turns.code, `"${c}": ${turns.message}`);
      answer = turns;
    }
    return finish(row, [...prompt, ...answer], ctx);
  },
};

/** An assistant answer given as plain text: inline `<think>` split, Hermes `<tool_call>` blocks read (same rules as turn lists). */
function toMessagesFromText(text: string, ctx: NormalizeContext): Message {
  const m = convertTurns([{ role: 'assistant', content: text }], ctx) as Message[];
  return m[0];
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
  for (const k of ['response', 'output']) {
    let r = fieldValue(row, k);
    if (isObject(r) && isObject(r.body)) r = r.body; // OpenAI batch output: response.body
    if (isObject(r) && Array.isArray(r.choices) && isObject(r.choices[0]) && isObject(r.choices[0].message)) return r.choices[0].message;
  }
  return undefined;
}

/**
 * Chat-completions request logs: `request.messages` / OpenAI batch input
 * `body.messages` (a prompt), with the answer from `response.choices[0].message`
 * (or batch output `response.body.choices[0].message`) when present. Request
 * `tools` are kept.
 */
export const requestResponseHandler: ShapeHandler = {
  name: 'chat-completions-log',
  matches: (row) => requestMessages(row) !== undefined,
  describe: (row) => `"${requestMessages(row)!.path}"${responseMessage(row) ? ' + "response.choices[0].message"' : ' (request only)'}: chat-completions log`,
  roles: (row) => rolesOfList(requestMessages(row)!.list),
  normalize(row, ctx) {
    const req = requestMessages(row)!;
    const prompt = convertTurns(req.list, ctx);
    if (isTurnError(prompt)) return errored(ctx, prompt.code, `"${req.path}": ${prompt.message}`);
    const resp = responseMessage(row);
    let answer: Message[] = [];
    if (resp) {
      const a = convertTurns([{ role: 'assistant', ...(resp as Row) }], ctx);
      if (isTurnError(a)) return errored(ctx, a.code, `response message: ${a.message}`);
      answer = a;
    }
    const owner = fieldValue(row, req.path.split('.')[0]) as Row;
    const tools = isObject(owner.body) ? owner.body.tools : owner.tools;
    return finish(row, [...prompt, ...answer], ctx, tools !== undefined ? { tools } : {});
  },
};

function rolesOfList(list: unknown[]): string[] {
  return list.filter(isObject).map((t) => String(roleSpelling(t)));
}

// ------------------------------------------------------------------ input/output pair lists

const PAIR_LIST_FIELDS = ['conversation', 'conversations', 'turns', 'dialog', 'pairs'];

function pairField(row: Row): string | undefined {
  return PAIR_LIST_FIELDS.find((f) => {
    const v = fieldValue(row, f);
    return Array.isArray(v) && v.length > 0 && v.every((t) => isObject(t) && 'input' in t && 'output' in t && !('role' in t) && !('from' in t));
  });
}

/** Lists of `{input, output}` exchanges (Capybara / Puffin): each pair is a user turn then an assistant turn. */
export const pairListHandler: ShapeHandler = {
  name: 'input-output-pairs',
  matches: (row) => pairField(row) !== undefined,
  describe: (row) => `"${pairField(row)}": list of {input, output} exchanges`,
  roles: () => [],
  normalize(row, ctx) {
    const messages: Message[] = [];
    for (const p of fieldValue(row, pairField(row)!) as Row[]) {
      messages.push({ role: 'user', content: toText(p.input, ctx) });
      if (p.output !== null && p.output !== undefined && p.output !== '') messages.push({ role: 'assistant', content: toText(p.output, ctx) });
    }
    ctx.note('pairs_to_turns', '{input, output} exchanges → user / assistant turns');
    return finish(row, messages, ctx);
  },
};
