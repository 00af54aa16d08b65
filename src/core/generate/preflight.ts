/**
 * The check before a generation run: one `GET /v1/models` per server, no retry, a short deadline.
 * A server that refuses the connection fails in milliseconds, one that does not answer within the
 * deadline in seconds — instead of the run's start-up retries (a minute or more) — and each
 * failure says what is wrong in words a person can act on.
 */
import { HttpStatusError, requestJson, TransportError } from './http';
import { normalizeServerUrl } from './run';

/** What the check found for one server. */
export interface ServerCheck {
  /** The server root as given, normalized (`http://host:port`). */
  url: string;
  ok: boolean;
  /** The models the server lists (`data[].id`), when it answered. */
  models: string[];
  /** Why it failed, in words (`connection refused: nothing listens on 127.0.0.1:30000`, …). */
  error?: string;
  /** Machine code: `ECONNREFUSED`, `ENOTFOUND`, `timeout`, `http_401`, `no_models`, `bad_url`, …. */
  code?: string;
  /** Time the check took, ms. */
  ms: number;
}

/** A failure's words, from the transport / status error. */
function explain(url: string, e: unknown, timeoutMs: number): { code: string; error: string } {
  const host = (() => {
    try {
      return new URL(url).host;
    } catch {
      return url;
    }
  })();
  if (e instanceof TransportError) {
    switch (e.code) {
      case 'ECONNREFUSED':
        return { code: e.code, error: `connection refused: nothing listens on ${host} (is the SGLang / vLLM server running?)` };
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return { code: e.code, error: `host not found: ${host}` };
      case 'timeout':
        return { code: e.code, error: `no answer from ${host} within ${(timeoutMs / 1000).toFixed(0)} s (server still loading, or a firewall)` };
      case 'invalid_json':
        return { code: e.code, error: `${url}/v1/models did not answer JSON: not an OpenAI-compatible server?` };
      default:
        return { code: e.code, error: e.message };
    }
  }
  if (e instanceof HttpStatusError) {
    if (e.status === 401 || e.status === 403)
      return { code: `http_${e.status}`, error: `the server refused the API key (HTTP ${e.status}): set it with "Set generation server API key…"` };
    if (e.status === 404) return { code: 'http_404', error: `${url}/v1/models not found (HTTP 404): not an OpenAI-compatible server root?` };
    return { code: `http_${e.status}`, error: `HTTP ${e.status}: ${e.serverMessage}` };
  }
  return { code: 'error', error: e instanceof Error ? e.message : String(e) };
}

/**
 * Checks each server once, in parallel.
 * @param opts.timeoutMs deadline per server (default 3000)
 */
export async function preflightServers(servers: string[], opts: { apiKey?: string; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<ServerCheck[]> {
  const timeoutMs = opts.timeoutMs ?? 3000;
  return Promise.all(
    servers.map(async (given): Promise<ServerCheck> => {
      const t0 = Date.now();
      let url: string;
      try {
        url = normalizeServerUrl(given);
      } catch (e) {
        return { url: given, ok: false, models: [], code: 'bad_url', error: (e as Error).message, ms: 0 };
      }
      try {
        const j = (await requestJson(`${url}/v1/models`, { apiKey: opts.apiKey, timeoutMs, signal: opts.signal })) as { data?: { id?: unknown }[] };
        const models = (Array.isArray(j?.data) ? j.data : []).map((m) => m?.id).filter((x): x is string => typeof x === 'string');
        if (models.length === 0) return { url, ok: false, models, code: 'no_models', error: `${url}/v1/models lists no model`, ms: Date.now() - t0 };
        return { url, ok: true, models, ms: Date.now() - t0 };
      } catch (e) {
        if (opts.signal?.aborted) throw e;
        return { url, ok: false, models: [], ...explain(url, e, timeoutMs), ms: Date.now() - t0 };
      }
    }),
  );
}
