/**
 * The check before a generation run: one `GET /v1/models` per server, no retry, a short deadline.
 * A server that refuses the connection fails in milliseconds, one that does not answer within the
 * deadline in seconds — instead of the run's start-up retries (a minute or more) — and each
 * failure says what is wrong in words a person can act on.
 */
import { HttpStatusError, requestJson, TransportError } from './http';
import { normalizeServerUrl } from './options';

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

/** Where the editor keeps the API key (the CLI passes its own words: the environment variable). */
const EDITOR_KEY_HINT = 'set it with "Set generation server API key…"';

/** A failure's words, from the transport / status error. */
function explain(url: string, e: unknown, timeoutMs: number, keyHint: string): { code: string; error: string } {
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
        return {
          code: e.code,
          error: `no answer from ${host} within ${(timeoutMs / 1000).toFixed(1)} s: something accepts connections there but does not answer GET /v1/models (server still loading, a proxy or a firewall, or not an HTTP server)`,
        };
      case 'invalid_json':
        return { code: e.code, error: `${url}/v1/models did not answer JSON: not an OpenAI-compatible server?` };
      default:
        return { code: e.code, error: e.message };
    }
  }
  if (e instanceof HttpStatusError) {
    if (e.status === 401 || e.status === 403) return { code: `http_${e.status}`, error: `the server refused the API key (${e.message}): ${keyHint}` };
    if (e.status === 404) return { code: 'http_404', error: `${url}/v1/models not found (HTTP 404): not an OpenAI-compatible server root?` };
    return { code: `http_${e.status}`, error: `HTTP ${e.status}: ${e.serverMessage}` };
  }
  return { code: 'error', error: e instanceof Error ? e.message : String(e) };
}

/**
 * Checks each server once, in parallel.
 * @param opts.timeoutMs deadline per server (default 3000)
 * @param opts.keyHint what to do about a refused API key (default: the editor's command)
 */
export async function preflightServers(
  servers: string[],
  opts: { apiKey?: string; timeoutMs?: number; signal?: AbortSignal; keyHint?: string } = {},
): Promise<ServerCheck[]> {
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
        return { url, ok: false, models: [], ...explain(url, e, timeoutMs, opts.keyHint ?? EDITOR_KEY_HINT), ms: Date.now() - t0 };
      }
    }),
  );
}

/**
 * {@link preflightServers} until every server passes or `waitMs` is over (a server still starting
 * refuses connections or does not answer yet): checked again every `retryMs` (default 1000).
 * `waitMs` 0 checks once. Resolves with the last round's checks.
 */
export async function awaitServers(
  servers: string[],
  opts: { apiKey?: string; timeoutMs?: number; signal?: AbortSignal; keyHint?: string; waitMs?: number; retryMs?: number; log?: (line: string) => void } = {},
): Promise<ServerCheck[]> {
  const until = Date.now() + (opts.waitMs ?? 0);
  for (;;) {
    const checks = await preflightServers(servers, opts);
    const bad = checks.filter((c) => !c.ok);
    // A refused key or a bad URL does not get better by waiting.
    const hopeless = bad.some((c) => c.code === 'bad_url' || c.code === 'http_401' || c.code === 'http_403' || c.code === 'http_404');
    if (bad.length === 0 || hopeless || Date.now() >= until) return checks;
    opts.log?.(`waiting for ${bad.map((c) => `${c.url} (${c.code})`).join(', ')}: ${Math.ceil((until - Date.now()) / 1000)} s left`);
    await new Promise<void>((ok, fail) => {
      const t = setTimeout(ok, Math.min(opts.retryMs ?? 1000, Math.max(0, until - Date.now())));
      opts.signal?.addEventListener('abort', () => (clearTimeout(t), fail(opts.signal!.reason)), { once: true });
    });
  }
}
