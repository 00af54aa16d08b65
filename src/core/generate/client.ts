/**
 * One chat turn against an OpenAI-compatible `/v1/chat/completions` endpoint
 * (SGLang, vLLM): the request body, the answer parsed into a message, and the
 * generated token ids when the server returns them.
 *
 * Generated token ids (issue 6 "Exactly what the model produced"), read in this order:
 * 1. `choices[0].token_ids` — requested with `"return_token_ids": true`:
 *    vLLM ≥ 0.10.2 (vllm-project/vllm#22587; `prompt_token_ids` at the response root)
 *    and SGLang (sgl-project/sglang#30917; `prompt_token_ids` on the choice; non-streaming only).
 *    They are the raw sampled ids, before reasoning/tool-call parsing, ending with
 *    the stop token when generation stopped on it.
 * 2. `choices[0].logprobs.content[i].token` of the form `token_id:<n>` — vLLM's older
 *    way, with `"logprobs": true` and `"return_tokens_as_token_ids": true` (only sent
 *    when {@link ChatRequestOptions.logprobTokenIds} is set).
 * 3. `choices[0].meta_info.output_token_logprobs[i][1]` — SGLang with
 *    `"return_meta_info": true` and `"logprobs": true` (same option).
 * Servers ignore request fields they do not know (both accept extra fields).
 */
import { HttpStatusError, isTransient, requestJson } from './http';
import type { Message, ToolCall } from '../types';

/** `--reasoning`: keep the server's `reasoning_content`, drop it from the output, or ask the template to disable thinking (the default first). */
export const REASONING_MODES = ['keep', 'drop', 'disable'] as const;

/** One of {@link REASONING_MODES}. */
export type ReasoningMode = (typeof REASONING_MODES)[number];

/** Options shared by every request of a run. */
export interface ChatRequestOptions {
  model: string;
  /** `max_tokens` cap per turn (tokens). */
  maxTokens: number;
  temperature?: number;
  reasoning: ReasoningMode;
  /** Ask for generated token ids (`return_token_ids`); default true. */
  returnTokenIds?: boolean;
  /** Also ask through logprobs (vLLM `return_tokens_as_token_ids`, SGLang `return_meta_info`); costs bandwidth. */
  logprobTokenIds?: boolean;
  /** Merged last into the body (e.g. `{"top_p": 0.95}`). */
  extraBody?: Record<string, unknown>;
}

/** The answer to one turn. */
export interface ChatTurnResult {
  message: Message;
  /** `stop`, `length`, `tool_calls`, … as the server says; `unknown` when absent. */
  finishReason: string;
  /** Generated token ids when the server returned them (see module doc). */
  tokenIds?: number[];
  promptTokens: number;
  completionTokens: number;
}

/** An answer that is 2xx but not a chat completion (no `choices[0].message`). */
export class BadResponseError extends Error {}

/** A message as sent on the wire: `tool_calls[].function.arguments` as a JSON string (OpenAI wire format). */
export function toWireMessage(m: Message, includeReasoning: boolean): Record<string, unknown> {
  const w: Record<string, unknown> = { role: m.role, content: m.content };
  if (m.tool_calls?.length) {
    w.tool_calls = m.tool_calls.map((c, i) => ({
      id: c.id ?? `call_${i}`,
      type: 'function',
      function: { name: c.function.name, arguments: typeof c.function.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function.arguments) },
    }));
  }
  if (m.tool_call_id !== undefined) w.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) w.name = m.name;
  if (includeReasoning && m.reasoning_content) w.reasoning_content = m.reasoning_content;
  return w;
}

/**
 * The `/v1/chat/completions` body for one turn. `--reasoning disable` adds
 * `chat_template_kwargs: {"enable_thinking": false}` (read by vLLM and SGLang and
 * passed to the chat template, as Qwen3's template documents).
 */
export function buildChatBody(messages: Message[], tools: unknown[] | undefined, opts: ChatRequestOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: opts.model,
    messages: messages.map((m) => toWireMessage(m, opts.reasoning === 'keep')),
    max_tokens: opts.maxTokens,
    stream: false,
  };
  if (tools?.length) body.tools = tools;
  if (opts.temperature !== undefined) body.temperature = opts.temperature;
  if (opts.reasoning === 'disable') body.chat_template_kwargs = { enable_thinking: false };
  if (opts.returnTokenIds !== false) body.return_token_ids = true;
  if (opts.logprobTokenIds) Object.assign(body, { logprobs: true, top_logprobs: 0, return_tokens_as_token_ids: true, return_meta_info: true });
  if (opts.extraBody) Object.assign(body, opts.extraBody);
  return body;
}

/** A JSON object's field by path (`field(o, 'a', 0, 'b')` = `o?.a?.[0]?.b`); undefined where the path leaves the JSON. */
function field(v: unknown, ...path: (string | number)[]): unknown {
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

function intArray(v: unknown): number[] | undefined {
  return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x)) ? (v as number[]) : undefined;
}

/** Generated token ids from a choice, in the order the module doc lists; undefined when the server returned none. */
export function extractTokenIds(choice: unknown): number[] | undefined {
  const direct = intArray(field(choice, 'token_ids'));
  if (direct) return direct;
  const content = field(choice, 'logprobs', 'content');
  if (Array.isArray(content) && content.length > 0) {
    const tokens = content.map((c) => field(c, 'token'));
    if (tokens.every((t) => typeof t === 'string' && t.startsWith('token_id:'))) return tokens.map((t) => Number((t as string).slice('token_id:'.length)));
  }
  const meta = field(choice, 'meta_info', 'output_token_logprobs');
  if (Array.isArray(meta) && meta.length > 0 && meta.every((t) => Array.isArray(t) && Number.isInteger(t[1]))) return meta.map((t: number[]) => t[1]);
  return undefined;
}

/**
 * Parses a chat completion into the assistant message. `reasoning_content`
 * (SGLang, vLLM < 0.11) or `reasoning` (vLLM ≥ 0.11) becomes `reasoning_content`.
 * @throws BadResponseError when there is no `choices[0].message`
 */
export function parseChatResponse(json: unknown): ChatTurnResult {
  const choice = field(json, 'choices', 0);
  const msg = field(choice, 'message') as Record<string, unknown> | undefined;
  if (!msg || typeof msg !== 'object') throw new BadResponseError(`answer has no choices[0].message: ${JSON.stringify(json).slice(0, 200)}`);
  const message: Message = { role: 'assistant', content: typeof msg.content === 'string' ? msg.content : null };
  const reasoning = typeof msg.reasoning_content === 'string' ? msg.reasoning_content : typeof msg.reasoning === 'string' ? msg.reasoning : undefined;
  if (reasoning) message.reasoning_content = reasoning;
  if (Array.isArray(msg.tool_calls) && msg.tool_calls.length > 0) {
    message.tool_calls = msg.tool_calls.map((c: unknown): ToolCall => {
      const args = (field(c, 'function', 'arguments') ?? '{}') as ToolCall['function']['arguments'];
      const call: ToolCall = { type: 'function', function: { name: String(field(c, 'function', 'name') ?? ''), arguments: args } };
      const id = field(c, 'id');
      if (typeof id === 'string') call.id = id;
      return call;
    });
  }
  if (message.content === null && !message.tool_calls) message.content = '';
  const finish = field(choice, 'finish_reason');
  const r: ChatTurnResult = {
    message,
    finishReason: typeof finish === 'string' ? finish : 'unknown',
    promptTokens: Number(field(json, 'usage', 'prompt_tokens') ?? 0),
    completionTokens: Number(field(json, 'usage', 'completion_tokens') ?? 0),
  };
  const ids = extractTokenIds(choice);
  if (ids) r.tokenIds = ids;
  return r;
}

/** Retry policy: exponential backoff with full jitter (delay = random × min(cap, base × 2^attempt)). */
export interface RetryPolicy {
  /** Retries after the first attempt (so at most retries + 1 attempts). */
  retries: number;
  baseMs: number;
  capMs: number;
  /** Source of jitter in [0, 1); Math.random by default (tests pass a fixed one). */
  random?: () => number;
}

/**
 * The wait before retry number `attempt` (0-based), in ms: full jitter over
 * min(cap, base·2^attempt); a server's `Retry-After` raises it (capped at `capMs`).
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, retryAfterMs?: number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** attempt);
  const jittered = (policy.random ?? Math.random)() * ceiling;
  return retryAfterMs !== undefined ? Math.min(policy.capMs, Math.max(jittered, retryAfterMs)) : jittered;
}

/** Sleeps `ms`, rejecting with the signal's reason when aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Sends one chat turn to `baseUrl` (the server root, e.g. `http://127.0.0.1:30000`), no retry. */
export async function chatOnce(
  baseUrl: string,
  body: Record<string, unknown>,
  o: { apiKey?: string; timeoutMs: number; signal?: AbortSignal },
): Promise<ChatTurnResult> {
  return parseChatResponse(await requestJson(`${baseUrl}/v1/chat/completions`, { method: 'POST', body, ...o }));
}

/**
 * The model name a server serves: the first `data[].id` of `GET /v1/models`.
 * @throws HttpStatusError / TransportError; Error when the list is empty
 */
export async function fetchModelName(baseUrl: string, o: { apiKey?: string; timeoutMs: number; signal?: AbortSignal }): Promise<string> {
  const id = field(await requestJson(`${baseUrl}/v1/models`, o), 'data', 0, 'id');
  if (typeof id !== 'string') throw new Error(`${baseUrl}/v1/models lists no model`);
  return id;
}

/**
 * How many requests a server runs at once, when it says: SGLang's
 * `GET /get_server_info` → `max_running_requests` (top level, or under
 * `internal_states[0]` in newer versions). vLLM has no such endpoint (its
 * `--max-num-seqs` is not exposed over HTTP), so the answer is undefined there.
 */
export async function fetchServerConcurrency(baseUrl: string, o: { apiKey?: string; timeoutMs: number; signal?: AbortSignal }): Promise<number | undefined> {
  try {
    const j = await requestJson(`${baseUrl}/get_server_info`, o);
    const n = field(j, 'max_running_requests') ?? field(j, 'internal_states', 0, 'max_running_requests');
    return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
  } catch (e) {
    if (e instanceof HttpStatusError && !e.transient) return undefined;
    if (isTransient(e)) return undefined;
    throw e;
  }
}
