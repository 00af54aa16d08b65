/**
 * A local OpenAI-compatible test server on 127.0.0.1 (node:http) with fault
 * injection, standing in for SGLang / vLLM in the `generate` tests and bench.
 *
 * Endpoints: `GET /v1/models`, `GET /get_server_info` (`max_running_requests`,
 * as SGLang reports it), `POST /v1/chat/completions` (non-streaming).
 *
 * The answer is deterministic: `content` = `answer to: <last user text>`
 * (prefixed with `turn <n>: ` where n counts assistant turns in the history),
 * `token_ids` = one id per UTF-16 code unit of the content (char code + 1000)
 * followed by {@link EOT_ID} when `return_token_ids` is set. Triggers in the
 * last user text: `THINK_ONLY` → reasoning without content; `CALL name {json}`
 * → a tool call `name(json)`; `LONG` → finish_reason `length`.
 * `reasoning: true` adds `reasoning_content` unless `chat_template_kwargs.enable_thinking` is false.
 *
 * Faults come from `fault(n, body)` (n = 0-based index of the completion
 * request): `{status}` (+ `retryAfter` s), `{drop: true}` (socket destroyed
 * before answering), `{hang: true}` (never answers), `{delayMs}` (extra latency).
 * `restart(downMs)` closes the listener and every connection, and listens again
 * on the same port after `downMs`.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const EOT_ID = 151645;

export type Fault = { status: number; retryAfter?: number; message?: string } | { drop: true } | { hang: true } | { delayMs: number } | undefined;

export interface FakeServerOptions {
  model?: string;
  /** Latency of every completion, ms. */
  latencyMs?: number;
  /** The server's own limit: completions run at most this many at once, the rest queue (like a serving engine's batch). */
  maxRunning?: number;
  /** Report `max_running_requests` at /get_server_info (default: maxRunning when set). */
  reportConcurrency?: boolean;
  reasoning?: boolean;
  /** Required bearer token; requests without it get 401. */
  apiKey?: string;
  fault?: (n: number, body: any) => Fault;
  port?: number;
}

export interface FakeServer {
  url: string;
  port: number;
  /** Bodies of every completion request received, in arrival order. */
  requests: any[];
  /** Authorization headers seen. */
  authHeaders: (string | undefined)[];
  /** Most completions in flight at once (queued + running). */
  maxInFlight: number;
  /** Completions answered 200. */
  answered: number;
  restart(downMs: number): Promise<void>;
  close(): Promise<void>;
}

/** The deterministic content the server answers for a history (see module doc). */
export function expectedAnswer(messages: any[]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');
  const n = messages.filter((m) => m.role === 'assistant').length;
  const text = typeof lastUser?.content === 'string' ? lastUser.content : JSON.stringify(lastUser?.content ?? '');
  return `${n > 0 ? `turn ${n}: ` : ''}answer to: ${text}`;
}

/** Token ids the fake server returns for a content (see module doc). */
export function fakeTokenIds(content: string): number[] {
  return [...Array.from(content, (c) => c.charCodeAt(0) + 1000), EOT_ID];
}

/** Starts the server; resolves once it listens. */
export async function startFakeServer(opts: FakeServerOptions = {}): Promise<FakeServer> {
  const model = opts.model ?? 'fake/target-model';
  const sockets = new Set<Socket>();
  let n = 0;
  let running = 0;
  let inFlight = 0;
  const queue: (() => void)[] = [];
  const state = { requests: [] as any[], authHeaders: [] as (string | undefined)[], maxInFlight: 0, answered: 0 };

  const slot = async () => {
    if (!opts.maxRunning || running < opts.maxRunning) {
      running++;
      return;
    }
    await new Promise<void>((res) => queue.push(res));
    running++;
  };
  const unslot = () => {
    running--;
    queue.shift()?.();
  };
  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const b = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b), ...headers });
    res.end(b);
  };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`)
        return json(res, 401, { error: { message: 'invalid api key', type: 'invalid_request_error' } });
      if (req.method === 'GET' && req.url === '/v1/models')
        return json(res, 200, { object: 'list', data: [{ id: model, object: 'model', max_model_len: 32768 }] });
      if (req.method === 'GET' && req.url === '/get_server_info') {
        if (opts.reportConcurrency === false || !opts.maxRunning) return json(res, 404, { detail: 'Not Found' });
        return json(res, 200, { max_running_requests: opts.maxRunning, model_path: model });
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(res, 404, { detail: 'Not Found' });
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return json(res, 400, { error: { message: 'body is not JSON' } });
      }
      const idx = n++;
      state.requests.push(body);
      state.authHeaders.push(req.headers.authorization);
      if (body.model !== model) return json(res, 404, { error: { message: `The model \`${body.model}\` does not exist.`, type: 'NotFoundError', code: 404 } });
      if (!Array.isArray(body.messages) || body.messages.length === 0) return json(res, 400, { error: { message: 'messages must be a non-empty list' } });
      const fault = opts.fault?.(idx, body);
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      try {
        if (fault && 'status' in fault) {
          return json(
            res,
            fault.status,
            { error: { message: fault.message ?? `injected ${fault.status}` } },
            fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {},
          );
        }
        if (fault && 'drop' in fault) return req.socket.destroy();
        if (fault && 'hang' in fault) return; // never answers; the client times out
        await slot();
        try {
          const delay = (opts.latencyMs ?? 0) + (fault && 'delayMs' in fault ? fault.delayMs : 0);
          if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        } finally {
          unslot();
        }
        if (res.destroyed) return;
        const last = [...body.messages].reverse().find((m: any) => m.role === 'user');
        const lastText: string = typeof last?.content === 'string' ? last.content : '';
        const message: any = { role: 'assistant', content: expectedAnswer(body.messages) };
        let finish = 'stop';
        const thinking = opts.reasoning && body.chat_template_kwargs?.enable_thinking !== false;
        if (thinking) message.reasoning_content = `thinking about: ${lastText}`;
        const call = /CALL (\w+) (\{.*\})/.exec(lastText);
        const lastIsUser = body.messages[body.messages.length - 1].role === 'user';
        if (call && lastIsUser) {
          message.content = null;
          message.tool_calls = [{ id: `call_${idx}`, type: 'function', function: { name: call[1], arguments: call[2] } }];
          finish = 'tool_calls';
        } else if (lastText.includes('THINK_ONLY')) {
          message.content = null;
          message.reasoning_content = `thinking about: ${lastText}`;
          finish = 'stop';
        }
        let ids = fakeTokenIds(message.content ?? '');
        if (lastText.includes('LONG') || ids.length > (body.max_tokens ?? Infinity)) {
          finish = 'length';
          ids = ids.slice(0, body.max_tokens ?? 16);
        }
        const choice: any = { index: 0, message, finish_reason: finish };
        if (body.return_token_ids) choice.token_ids = ids;
        state.answered++;
        json(res, 200, {
          id: `chatcmpl-${idx}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [choice],
          usage: { prompt_tokens: JSON.stringify(body.messages).length, completion_tokens: ids.length, total_tokens: 0 },
        });
      } finally {
        inFlight--;
      }
    });
  };

  let server = http.createServer(handler);
  const track = (s: http.Server) =>
    s.on('connection', (sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
  track(server);
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const closeAll = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      for (const s of sockets) s.destroy();
    });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get requests() {
      return state.requests;
    },
    get authHeaders() {
      return state.authHeaders;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    get answered() {
      return state.answered;
    },
    async restart(downMs: number) {
      await closeAll();
      await new Promise((r) => setTimeout(r, downMs));
      server = http.createServer(handler);
      track(server);
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    },
    close: closeAll,
  };
}
