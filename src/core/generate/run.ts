/**
 * The `generate` job: reads prompt rows (the `prompts_to_generate.jsonl` that
 * `prepare` writes, or any dataset `prepare` reads), regenerates each
 * conversation with the target model through OpenAI-compatible servers
 * (SGLang, vLLM), and appends the answered conversations as OpenAI `messages`
 * JSONL that `prepare` reads directly.
 *
 * Output row: `{"id", "source", "messages", "tools"?, "generation": {"model",
 * "outcome": "ok"|"tool_call_diverged", "reasoning", "turns": [{"message_index",
 * "finish_reason", "token_ids"?, "prompt_tokens", "completion_tokens"}]}}` —
 * `id` and `source` are the input row's (a `prepare` prompt row carries the
 * original dataset's `source`); `generation.turns[k].token_ids` are the ids the
 * server generated for the assistant message at `message_index` (client.ts).
 *
 * Accounting: every row read ends generated (written now), already done
 * (written or journaled by an earlier run), truncated (`length`), reasoning
 * without an answer, or failed with a reason; they add up to the rows read.
 */
import { setMaxListeners } from 'node:events';
import { existsSync, statSync, unlinkSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { normalizeRow } from '../formats/normalize';
import type { RawRow } from '../read/readers';
import { mappedRows } from '../formats/rowSource';
import type { Conversation, Message } from '../types';
import {
  BadResponseError,
  backoffDelay,
  buildChatBody,
  chatOnce,
  fetchModelName,
  fetchServerConcurrency,
  sleep,
  type ChatRequestOptions,
  type ChatTurnResult,
  type RetryPolicy,
} from './client';
import { regenerateConversation, type ConversationOutcome, type RegeneratedConversation } from './conversation';
import { HttpStatusError, isTransient, TransportError } from './http';
import { openAppendLog, type AppendLog, type LogScan } from './journal';
import { DEFAULT_CONCURRENCY, defaultGenerateOut, normalizeServerUrl, type GenerateHooks, type GenerateOptions } from './options';
import { emptyResult, type GenerateResult } from './report';
import { ServerPool, type ServerState } from './scheduler';

/** Errors that end the whole run: every request would fail the same way. */
const FATAL_STATUSES = new Set([401, 403, 404]);

class FatalRunError extends Error {}

/**
 * Runs `generate`. Conversations are processed concurrently (up to the pool's
 * capacity); each is appended to the output only when all its turns are done.
 * @returns the report; `ok` false when a row failed or nothing was ever written
 * @throws Error for an unreadable input, an output that is not a generate
 *   output, a server whose model cannot be found, or a 401/403/404 (the server's message)
 */
export async function generate(options: GenerateOptions, hooks: GenerateHooks = {}): Promise<GenerateResult> {
  const t0 = Date.now();
  const input = resolve(options.input);
  const out = resolve(options.out ?? defaultGenerateOut(input));
  if (out === input) throw new Error(`--out ${out} is the input; inputs are never overwritten`);
  const urls = [...new Set(options.servers.map(normalizeServerUrl))];
  if (urls.length === 0) throw new Error('no --server given');
  const policy: RetryPolicy = { retries: options.retries ?? 8, baseMs: options.backoffBaseMs ?? 1000, capMs: options.backoffCapMs ?? 60_000 };
  const { model, pool } = await connectServers(urls, options, hooks, policy);
  const job = new GenerateJob(t0, input, out, model, pool, policy, options, hooks);
  await job.run();
  return job.finish();
}

/**
 * The start-up questions to the servers: the model (`--model`, else the first server's first model) and each server's
 * concurrency (`--concurrency`, else what it reports, else {@link DEFAULT_CONCURRENCY}), retried like completions (a
 * server still loading its weights refuses connections).
 */
async function connectServers(
  urls: string[],
  options: GenerateOptions,
  hooks: GenerateHooks,
  policy: RetryPolicy,
): Promise<{ model: string; pool: ServerPool }> {
  const meta = { apiKey: options.apiKey, timeoutMs: Math.min(options.timeoutMs ?? 600_000, 30_000), signal: hooks.signal };
  const retrying = async <T>(what: string, f: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await f();
      } catch (e) {
        if (!isTransient(e) || attempt >= policy.retries || hooks.signal?.aborted) throw e;
        const delay = backoffDelay(attempt, policy, e instanceof HttpStatusError ? e.retryAfterMs : undefined);
        hooks.log?.(`${what}: ${(e as Error).message}; retry ${attempt + 1}/${policy.retries} in ${Math.round(delay)} ms`);
        await sleep(delay, hooks.signal);
      }
    }
  };
  const model = options.model ?? (await retrying('GET /v1/models', () => fetchModelName(urls[0], meta)));
  hooks.log?.(`model: ${model}${options.model ? '' : ` (from ${urls[0]}/v1/models)`}`);
  const limits = await Promise.all(
    urls.map(async (u) => {
      if (options.concurrency) return options.concurrency;
      const n = await fetchServerConcurrency(u, meta);
      hooks.log?.(`${u}: ${n ? `max_running_requests ${n}` : `no concurrency reported, using ${DEFAULT_CONCURRENCY}`}`);
      return n ?? DEFAULT_CONCURRENCY;
    }),
  );
  return { model, pool: new ServerPool(urls.map((url, i) => ({ url, limit: limits[i] }))) };
}

/**
 * One `generate` run once its servers are known: the output and journal (resumed), the report's counters, the
 * cancellation, and the workers that pull rows from one reader and answer them through the pool.
 */
class GenerateJob {
  private readonly journalPath: string;
  private readonly timeoutMs: number;
  private readonly reqOpts: ChatRequestOptions;
  /** Files this run creates: removed again when it ends with nothing in them (a run that wrote nothing leaves nothing). */
  private readonly fresh: string[];
  private readonly outLog: AppendLog;
  private readonly outScan: LogScan;
  private readonly jLog: AppendLog;
  /** Ids written or journaled, by an earlier run or this one. */
  private readonly done: Set<string>;
  /** Ids read in this input (a repeated id is not generated twice). */
  private readonly seen = new Set<string>();
  private readonly r: GenerateResult;
  /** Cancellation: the caller's signal, or a fatal error, stops dispatch and aborts requests in flight. */
  private readonly ac = new AbortController();
  private readonly onOuterAbort = () => this.ac.abort(this.hooks.signal!.reason);
  private fatal: Error | null = null;
  private lastEmit = 0;

  constructor(
    private readonly t0: number,
    private readonly input: string,
    private readonly out: string,
    private readonly model: string,
    private readonly pool: ServerPool,
    private readonly policy: RetryPolicy,
    private readonly options: GenerateOptions,
    private readonly hooks: GenerateHooks,
  ) {
    this.journalPath = `${out}.journal`;
    this.timeoutMs = options.timeoutMs ?? 600_000;
    this.reqOpts = {
      model,
      maxTokens: options.maxTokens ?? 8192,
      temperature: options.temperature,
      reasoning: options.reasoning ?? 'keep',
      logprobTokenIds: options.logprobTokenIds,
      extraBody: options.extraBody,
    };
    this.fresh = [out, this.journalPath].filter((p) => !existsSync(p));
    const { log: outLog, scan: outScan } = openAppendLog(out, options.fsyncIntervalMs);
    const { log: jLog, scan: jScan } = openAppendLog(this.journalPath, options.fsyncIntervalMs);
    this.outLog = outLog;
    this.outScan = outScan;
    this.jLog = jLog;
    this.done = new Set<string>([...outScan.ids.keys(), ...jScan.ids.keys()]);
    if (this.done.size) hooks.log?.(`resuming: ${outScan.ids.size} rows already in ${out}, ${jScan.ids.size} in ${this.journalPath}`);
    for (const [what, s] of [
      [out, outScan],
      [this.journalPath, jScan],
    ] as const) {
      if (s.truncatedBytes) hooks.log?.(`${what}: cut a torn last line (${s.truncatedBytes} bytes); that row is generated again`);
    }
    this.r = emptyResult(input, out, this.journalPath, model, outScan.truncatedBytes + jScan.truncatedBytes);
    setMaxListeners(0, this.ac.signal); // one listener per request in flight
    hooks.signal?.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  /** Counts a failed row under `reason`, keeping its first 5 messages. */
  private fail(reason: string, message: string): void {
    this.r.failedTotal++;
    const f = (this.r.failed[reason] ??= { count: 0, examples: [] });
    f.count++;
    if (f.examples.length < 5) f.examples.push(message);
  }

  /** Reports progress: at most every 200 ms unless forced. */
  private emit(force = false): void {
    const now = Date.now();
    if (!this.hooks.onProgress || (!force && now - this.lastEmit < 200)) return;
    this.lastEmit = now;
    const r = this.r;
    this.hooks.onProgress({
      rowsRead: r.rowsRead,
      generated: r.generated,
      alreadyDone: r.alreadyDone,
      failed: r.failedTotal,
      notWritten: r.truncated + r.reasoningWithoutAnswer,
      inFlight: this.pool.inFlight,
      completionTokens: r.completionTokens,
      tokensPerSecond: r.completionTokens / Math.max(0.001, (now - this.t0) / 1000),
    });
  }

  /** One chat turn with retries; server choice by the pool. */
  private readonly ask = async (history: Message[], tools: unknown[] | undefined): Promise<ChatTurnResult> => {
    const body = buildChatBody(history, tools, this.reqOpts);
    const { ac, pool, policy } = this;
    for (let attempt = 0; ; attempt++) {
      const server: ServerState = await pool.acquire(ac.signal);
      this.r.requests++;
      try {
        const res = await chatOnce(server.url, body, { apiKey: this.options.apiKey, timeoutMs: this.timeoutMs, signal: ac.signal });
        pool.ok(server);
        return res;
      } catch (e) {
        if (ac.signal.aborted) throw ac.signal.reason;
        if (!isTransient(e) || attempt >= policy.retries) throw e;
        const delay = backoffDelay(attempt, policy, e instanceof HttpStatusError ? e.retryAfterMs : undefined);
        pool.backOff(server, delay);
        this.r.retries++;
        this.hooks.log?.(`retry ${attempt + 1}/${policy.retries} in ${Math.round(delay)} ms: ${(e as Error).message}`);
      } finally {
        pool.release(server);
      }
    }
  };

  /** One conversation: skipped when its id was seen or done, else regenerated and written (or journaled, or failed). */
  private async handle(conv: Conversation, rawSource: unknown): Promise<void> {
    if (this.seen.has(conv.id))
      return this.fail('duplicate_id', `line ${conv.source.line}: id "${conv.id}" appears earlier in the input; ids key resume, so it is not generated twice`);
    this.seen.add(conv.id);
    if (this.done.has(conv.id)) {
      this.r.alreadyDone++;
      return;
    }
    let res;
    try {
      res = await regenerateConversation(conv, this.ask, this.reqOpts.reasoning);
    } catch (e) {
      return this.failed(conv, e);
    }
    this.record(conv, rawSource, res);
  }

  /**
   * Counts a conversation whose regeneration threw: under its HTTP status, transport error or bad response (a
   * 401/403/404 also stops the run); nothing when the run was cancelled.
   * @throws the error when it is none of those
   */
  private failed(conv: Conversation, e: unknown): void {
    if (this.ac.signal.aborted) return;
    const where = `line ${conv.source.line} (id ${conv.id})`;
    if (e instanceof HttpStatusError) {
      if (FATAL_STATUSES.has(e.status)) {
        this.fatal ??= new FatalRunError(e.message);
        this.ac.abort(this.fatal);
      }
      return this.fail(e.transient ? `http_${e.status}_after_retries` : `http_${e.status}`, `${where}: ${e.message}`);
    }
    if (e instanceof TransportError) return this.fail(`${e.code}_after_retries`, `${where}: ${e.message}`);
    if (e instanceof BadResponseError) return this.fail('bad_response', `${where}: ${e.message}`);
    throw e;
  }

  /** A regenerated conversation: its tokens counted; written to the output (`ok`, `tool_call_diverged`) or the journal (the others). */
  private record(conv: Conversation, rawSource: unknown, res: RegeneratedConversation): void {
    const r = this.r;
    for (const t of res.turns) {
      r.promptTokens += t.prompt_tokens;
      r.completionTokens += t.completion_tokens;
    }
    const source = isSource(rawSource) ? rawSource : conv.source;
    const outcome: ConversationOutcome = res.outcome;
    if (outcome === 'length' || outcome === 'reasoning_without_answer') {
      this.jLog.append({ id: conv.id, source, outcome, detail: res.detail });
      if (outcome === 'length') r.truncated++;
      else r.reasoningWithoutAnswer++;
      this.done.add(conv.id);
      return;
    }
    const row: Record<string, unknown> = { id: conv.id, source, messages: res.messages };
    if (conv.tools?.length) row.tools = conv.tools;
    row.generation = { model: this.model, outcome, reasoning: this.reqOpts.reasoning, ...(res.detail ? { detail: res.detail } : {}), turns: res.turns };
    this.outLog.append(row);
    this.done.add(conv.id);
    r.generated++;
    if (outcome === 'tool_call_diverged') r.toolCallDiverged++;
    if (res.turns.every((t) => t.token_ids)) r.withTokenIds++;
    else r.withoutTokenIds++;
  }

  /**
   * Reads and answers every row: workers pull rows from one reader (advanced by one worker at a time), every worker is
   * awaited before the files close (none may append after that), and the files this run created stay only when
   * something was written to them.
   * @throws an unexpected error of a worker, or the fatal error that stopped the run
   */
  async run(): Promise<void> {
    const { ac } = this;
    const rows = mappedRows(this.input, { signal: ac.signal });
    let readChain: Promise<unknown> = Promise.resolve();
    const nextRow = () => {
      const p = readChain.then(() => rows.next());
      readChain = p.catch(() => undefined);
      return p;
    };
    const fileBase = basename(this.input);
    const worker = async () => {
      while (!ac.signal.aborted) {
        const it = await nextRow();
        if (it.done) return;
        await this.handleRow(it.value, fileBase);
        this.emit();
      }
    };
    const ticker = setInterval(() => this.emit(true), 1000);
    try {
      const settled = await Promise.allSettled(
        Array.from({ length: this.pool.capacity }, () =>
          worker().catch((e) => {
            if (!ac.signal.aborted) ac.abort(e); // an unexpected error stops the other workers too
            throw e;
          }),
        ),
      );
      const unexpected = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected' && x.reason !== ac.signal.reason);
      if (unexpected) throw unexpected.reason;
      if (ac.signal.reason instanceof Error && !this.hooks.signal?.aborted && !this.fatal) throw ac.signal.reason;
    } finally {
      clearInterval(ticker);
      this.hooks.signal?.removeEventListener('abort', this.onOuterAbort);
      this.pool.close();
      this.outLog.close();
      this.jLog.close();
      await rows.return(undefined);
      removeEmpty(this.fresh);
    }
    if (this.fatal) throw this.fatal;
  }

  /** One row read: its conversation (or each of the several it holds, counted as rows of their own) handled, or the row failed. */
  private async handleRow(row: RawRow, fileBase: string): Promise<void> {
    const r = this.r;
    r.rowsRead++;
    if (row.error !== undefined) return this.fail('invalid_row', `line ${row.line}: ${row.error}`);
    const o = normalizeRow(row.value, { file: this.input, line: row.line }, fileBase);
    const rawSource = (row.value as { source?: unknown } | null)?.source;
    if (o.kind === 'conversation' || o.kind === 'prompt') await this.handle(o.conversation, rawSource);
    else if (o.kind === 'split') {
      // One row holding several conversations (Self-Instruct instances, …): each is generated and counted as a row of its own.
      r.rowsRead += o.parts.length - 1;
      for (const p of o.parts) await this.handle(p.conversation, rawSource);
    } else this.fail(o.kind === 'dropped' ? o.reason : 'invalid_row', `line ${row.line}: ${o.message}`);
  }

  /** The report once the run ended: servers, time and rates, and its failures (accounting, cancel, failed rows, nothing written). */
  finish(): GenerateResult {
    const r = this.r;
    r.cancelled = this.ac.signal.aborted;
    r.servers = this.pool.servers.map((s) => ({ url: s.url, limit: s.limit, requests: s.sent, failures: s.failures }));
    r.elapsedMs = Date.now() - this.t0;
    r.requestsPerSecond = r.requests / Math.max(0.001, r.elapsedMs / 1000);
    r.completionTokensPerSecond = r.completionTokens / Math.max(0.001, r.elapsedMs / 1000);
    const accounted = r.generated + r.alreadyDone + r.truncated + r.reasoningWithoutAnswer + r.failedTotal;
    if (!r.cancelled && accounted !== r.rowsRead) r.failures.push(`accounting mismatch: ${accounted} accounted, ${r.rowsRead} read`);
    if (r.cancelled) r.failures.push('cancelled; run again with the same --out to continue');
    if (r.failedTotal)
      r.failures.push(
        `${r.failedTotal} rows failed (${Object.entries(r.failed)
          .map(([k, v]) => `${v.count} ${k}`)
          .join(', ')}); run again with the same --out to retry them`,
      );
    if (!r.cancelled && this.outScan.ids.size + r.generated === 0) r.failures.push(`nothing written to ${this.out} (${r.rowsRead} rows read)`);
    r.ok = r.failures.length === 0;
    this.emit(true);
    return r;
  }
}

/** Removes the files of `paths` that exist and are empty (errors ignored: a file that stays is harmless). */
function removeEmpty(paths: string[]): void {
  for (const p of paths) {
    try {
      if (existsSync(p) && statSync(p).size === 0) unlinkSync(p);
    } catch {
      /* left as it is */
    }
  }
}

function isSource(v: unknown): v is { file: string; line: number } {
  const o = v as { file?: unknown; line?: unknown } | null;
  return !!o && typeof o === 'object' && typeof o.file === 'string' && typeof o.line === 'number';
}
