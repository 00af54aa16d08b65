/**
 * Minimal JSON-over-HTTP transport for OpenAI-compatible servers, on `node:http`
 * / `node:https` (no dependency). Used instead of `fetch` because undici's
 * default 300 s headers/body timeouts would cut long generations; here the only
 * timeout is the caller's per-request one.
 *
 * Errors are classified for the retry policy (issue 6 "Faults"):
 * - {@link HttpStatusError}: the server answered with a non-2xx status;
 *   transient when 408, 409, 425, 429 or 5xx (RFC 9110 §15; 425 RFC 8470).
 * - {@link TransportError}: no complete answer (connection refused/reset,
 *   dropped mid-body, timeout, unparseable body); always transient.
 */
import * as http from 'node:http';
import * as https from 'node:https';

/** Status codes retried with backoff; every other 4xx fails fast. */
export const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([408, 409, 425, 429]);

/** The server answered with a non-2xx status. `message` carries the server's own error text. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly serverMessage: string,
    /** From a `Retry-After` header (seconds or HTTP date), in ms; undefined when absent or unparseable. */
    readonly retryAfterMs: number | undefined,
    url: string,
  ) {
    super(`HTTP ${status} from ${url}: ${serverMessage}`);
  }
  get transient(): boolean {
    return TRANSIENT_STATUSES.has(this.status) || this.status >= 500;
  }
}

/** No usable answer arrived: `code` is the socket error code (`ECONNREFUSED`, `ECONNRESET`, …), `timeout`, `incomplete_body` or `invalid_json`. */
export class TransportError extends Error {
  readonly transient = true;
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** True for failures worth retrying: transport errors and transient statuses. */
export function isTransient(e: unknown): boolean {
  return e instanceof TransportError || (e instanceof HttpStatusError && e.transient);
}

/** The error text of a server answer: OpenAI `{"error": {"message"}}`, `{"message"}`, FastAPI `{"detail"}`, else the raw text (first 500 chars). */
export function serverErrorMessage(body: string): string {
  try {
    const o = JSON.parse(body);
    const m = o?.error?.message ?? (typeof o?.error === 'string' ? o.error : undefined) ?? o?.message ?? o?.detail;
    if (m !== undefined) return typeof m === 'string' ? m : JSON.stringify(m);
  } catch {
    /* not JSON */
  }
  return body.trim().slice(0, 500) || '(empty body)';
}

function parseRetryAfter(v: string | string[] | undefined): number | undefined {
  if (typeof v !== 'string') return undefined;
  const s = Number(v);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  const d = Date.parse(v);
  return Number.isNaN(d) ? undefined : Math.max(0, d - Date.now());
}

const agents = { http: new http.Agent({ keepAlive: true, maxSockets: Infinity }), https: new https.Agent({ keepAlive: true, maxSockets: Infinity }) };

/** Options of {@link requestJson}. */
export interface RequestOptions {
  method?: 'GET' | 'POST';
  /** Serialized as JSON. */
  body?: unknown;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged. */
  apiKey?: string;
  /** Whole-request deadline in ms (connect + server time + body). */
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Sends one request and parses the JSON answer.
 * @returns the parsed 2xx body
 * @throws HttpStatusError (non-2xx), TransportError (no complete JSON answer), the signal's reason when aborted
 */
export function requestJson(url: string, opts: RequestOptions): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(opts.signal.reason);
    const u = new URL(url);
    const lib = u.protocol === 'https:' ? https : http;
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
    let settled = false;
    const done = (err: unknown, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(value);
    };
    const req = lib.request(
      u,
      { method: opts.method ?? (payload ? 'POST' : 'GET'), headers, agent: u.protocol === 'https:' ? agents.https : agents.http },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('aborted', () => done(new TransportError('incomplete_body', `connection to ${u.origin} dropped while reading the answer`)));
        res.on('error', (e: NodeJS.ErrnoException) => done(new TransportError(e.code ?? 'incomplete_body', `${u.origin}: ${e.message}`)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300)
            return done(new HttpStatusError(status, serverErrorMessage(text), parseRetryAfter(res.headers['retry-after']), url));
          try {
            done(null, JSON.parse(text));
          } catch {
            done(new TransportError('invalid_json', `${url} answered ${status} with a body that is not JSON (${text.length} bytes)`));
          }
        });
      },
    );
    const timer = setTimeout(() => {
      done(new TransportError('timeout', `no answer from ${u.origin} within ${opts.timeoutMs} ms`));
      req.destroy();
    }, opts.timeoutMs);
    const onAbort = () => {
      done(opts.signal!.reason);
      req.destroy();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (e: NodeJS.ErrnoException) => done(new TransportError(e.code ?? 'ECONNRESET', `${u.origin}: ${e.message}`)));
    req.end(payload);
  });
}
