/**
 * Provider batch results (issue 20 "Batch outputs"):
 * - Gemini / Vertex AI batch prediction lines that hold the request and its response together:
 *   `{"request": {"contents": [{role, parts}], "systemInstruction"?: {parts}, "tools"?: [{functionDeclarations}]},
 *   "response": {"candidates": [{"content": {role: "model", parts}, "finishReason"}]}}`
 *   (cloud.google.com/vertex-ai/generative-ai/docs/multimodal/batch-prediction-gemini): the request's turns,
 *   then each candidate's content as the answer (one record per candidate when there are several);
 * - batch result lines that hold answers without the request they answer — OpenAI Batch API output
 *   `{"custom_id", "response": {"body": {"choices": [{"message"}]}}}` (platform.openai.com/docs/guides/batch),
 *   Gemini Batch API output `{"key", "response": {"candidates"}}` — are errored `answers_without_prompt`,
 *   never read as prompts or as answers to nothing: the message names the field and how to join them with their
 *   requests (OpenAI batch input lines with the same `custom_id`, read as a chat-completions log).
 * An OpenAI batch input line joined with its output (`body.messages` + `response.body`) is the
 * `chat-completions-log` shape (`shapes-instruct.ts`).
 */
import type { Message, RowOutcome } from '../types';
import { convertTurns } from './common';
import { errored, isObject, isTurnError, type NormalizeContext, type Row, type ShapeHandler } from './base';
import { finish, splitOutcome } from './rowEnd';
import { toText } from './content';

/** The Gemini request of a row: `request.contents` (a non-empty list of turns). */
function geminiRequest(row: Row): Row | undefined {
  const r = row.request;
  return isObject(r) && Array.isArray(r.contents) && r.contents.length > 0 ? r : undefined;
}

/** The Gemini candidates of a row's `response` (a list, possibly empty), or undefined when the response has none. */
function geminiCandidates(row: Row): unknown[] | undefined {
  const r = row.response;
  return isObject(r) && Array.isArray(r.candidates) ? r.candidates : undefined;
}

/** Where a row keeps answers with no request beside them: `response.body.choices`, `response.choices`, `response.candidates`. */
function answersOnlyPath(row: Row): string | undefined {
  if (row.request !== undefined || row.body !== undefined || row.messages !== undefined) return undefined;
  const r = row.response;
  if (!isObject(r)) return undefined;
  if (isObject(r.body) && Array.isArray(r.body.choices) && r.body.choices.some((c) => isObject(c) && isObject(c.message)))
    return 'response.body.choices[].message';
  if (Array.isArray(r.choices) && r.choices.some((c) => isObject(c) && isObject(c.message))) return 'response.choices[].message';
  if (Array.isArray(r.candidates) && r.candidates.some((c) => isObject(c) && isObject(c.content))) return 'response.candidates[].content';
  return undefined;
}

/** Gemini `tools: [{functionDeclarations: [{name, description, parameters}]}]` → OpenAI tool definitions. */
function geminiTools(tools: unknown): unknown[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const out: unknown[] = [];
  for (const t of tools) {
    const decls = isObject(t) ? (t.functionDeclarations ?? t.function_declarations) : undefined;
    if (Array.isArray(decls)) for (const d of decls) if (isObject(d)) out.push({ type: 'function', function: d });
  }
  return out.length ? out : undefined;
}

/**
 * Gemini / Vertex AI batch prediction lines (request and response in one line): the system instruction, the
 * request's `contents`, then a candidate's content as the assistant turn; several candidates → one record each
 * (ids `<id>/<k>`). A response without candidates (blocked, failed) leaves the request as a prompt to answer.
 */
export const geminiBatchHandler: ShapeHandler = {
  name: 'gemini-batch',
  matches: (row) => geminiRequest(row) !== undefined && geminiCandidates(row) !== undefined,
  describe: () => '"request.contents" + "response.candidates" (Gemini / Vertex AI batch prediction line)',
  roles: (row) => (geminiRequest(row)!.contents as unknown[]).filter(isObject).map((t) => String(t.role)),
  normalize(row, ctx) {
    const req = geminiRequest(row)!;
    ctx.fields.use(row, 'request', 'response', 'status');
    const prompt = convertTurns(req.contents as unknown[], ctx, { label: 'request.contents[]' });
    if (isTurnError(prompt)) return errored(ctx, prompt.code, `"request.contents": ${prompt.message}`);
    const sys = req.systemInstruction ?? req.system_instruction;
    const system = isObject(sys) ? toText(sys.parts, ctx) : typeof sys === 'string' ? sys : '';
    const head: Message[] = system.trim() !== '' ? [{ role: 'system', content: system }] : [];
    const tools = geminiTools(req.tools);
    const opts = tools ? { tools } : {};
    const answers = geminiCandidates(row)!.filter((c): c is Row => isObject(c) && isObject(c.content));
    if (answers.length === 0) return finish(row, [...head, ...prompt.map((m) => ({ ...m }))], ctx, opts);
    if (answers.length > 1) ctx.note('batch_candidates_split', `"response.candidates" holds ${answers.length} answers: one record each, the request shared`);
    const parts: RowOutcome[] = [];
    for (const [k, c] of answers.entries()) {
      const a = convertTurns([{ role: 'model', ...(c.content as Row) }], ctx, { label: 'response.candidates[].content.' });
      if (isTurnError(a)) return errored(ctx, a.code, `"response.candidates[${k}].content": ${a.message}`);
      parts.push(finish(row, [...head.map((m) => ({ ...m })), ...prompt.map((m) => ({ ...m })), ...a], ctx, opts));
    }
    return splitOutcome(parts, ctx);
  },
};

/**
 * Batch result lines holding answers without their request (OpenAI Batch API output, Gemini Batch API output):
 * errored `answers_without_prompt`, the message naming the field and the join that makes them readable.
 */
export const answersWithoutPromptHandler: ShapeHandler = {
  name: 'batch-output',
  matches: (row) => answersOnlyPath(row) !== undefined,
  describe: (row) => `"${answersOnlyPath(row)}" without its request (batch output line)`,
  roles: () => [],
  normalize(row, ctx: NormalizeContext) {
    const path = answersOnlyPath(row)!;
    ctx.fields.use(row, 'response');
    const join =
      'custom_id' in row
        ? 'join each line with the batch input line of the same "custom_id" into one row {"custom_id", "body": <the input line\'s body>, "response": <this line\'s response>} (read as a chat-completions log)'
        : 'give lines that hold the request beside its response ({"request": {…}, "response": {…}})';
    return errored(ctx, 'answers_without_prompt', `batch output without its request: the answer at "${path}" has no prompt in this row; ${join}`);
  },
};
