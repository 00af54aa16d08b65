/**
 * Executors for the `prepare` run's row batches: in the calling thread, or in a
 * pool of `worker_threads` (Node.js `worker_threads` documentation). Each pool
 * worker holds its own {@link RowProcessor} (tokenizer and compiled chat
 * templates, loaded once) and answers one message per batch; the run's single
 * writer (`prepare`) consumes the answers in submission order, so the output
 * order never depends on the number of workers or on their timing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { NormalizeOptions } from '../../formats/base';
import type { RowProcessor } from '../../records/rowProcessor';
import type { RunSetup } from '../contract';
import type { RowResult, RowSettings } from '../../records/rowResult';
import type { RawRow } from '../../read/readers';
import { parsedRow, type RowConfigData } from '../../formats/rowSource';
import { isFromPoolWorkerMessage, type PoolWorkerData, type RowBatchMessage } from './workerProtocol';
import { limitRustThreads } from '../../tokenizers/rustTokenizer';

/**
 * One row of a {@link RowBatch}: `{line, value}` or `{line, error}` as the reader yielded them, or `{line, raw}`, its
 * line's bytes unparsed (read/readers `RawRow.raw`), which the thread that processes the batch parses
 * ({@link batchRows}).
 */
export type BatchRow = Pick<RawRow, 'line' | 'element' | 'value' | 'error' | 'raw' | 'truncated'>;

/** Rows of one file sent together. */
export interface RowBatch {
  file: string;
  /** Basename of `file` (default record ids are `<fileBase>:<line>`). */
  fileBase: string;
  /** The file's reading choices (`eagle3prep.jsonc` "reading"). */
  normalize?: NormalizeOptions;
  /** The mapping entry and project config the rows sent unparsed get once parsed (parsed rows have them applied). */
  config?: RowConfigData;
  rows: BatchRow[];
}

/** The rows of `batch` to process: those sent unparsed parsed, with the file's config applied (formats/rowSource.ts parsedRow). */
export function batchRows(batch: Pick<RowBatch, 'rows' | 'config'>): Pick<RawRow, 'line' | 'element' | 'value' | 'error'>[] {
  return batch.rows.some((r) => r.raw) ? batch.rows.map((r) => parsedRow(r, batch.config)) : batch.rows;
}

/**
 * Copies the unparsed rows' bytes of `rows` into one new buffer, in place (each `raw` becomes a view of it), so that
 * a batch crosses to a pool worker as one buffer, transferred or copied once (a structured clone copies the whole
 * buffer under each view: the read chunks the rows' views came from, otherwise).
 * @returns the buffer, or undefined when no row is unparsed
 */
export function packRowLines(rows: BatchRow[]): ArrayBuffer | undefined {
  let size = 0;
  for (const r of rows) if (r.raw) size += r.raw.byteLength;
  if (size === 0) return undefined;
  const buf = new Uint8Array(size);
  let at = 0;
  for (const r of rows) {
    if (!r.raw) continue;
    buf.set(r.raw, at);
    r.raw = buf.subarray(at, at + r.raw.byteLength);
    at += r.raw.byteLength;
  }
  return buf.buffer;
}

/** Runs batches of rows; results come back one per row, in row order. */
export interface RowExecutor {
  /** @returns the rows' results in order; rejects when a worker failed (the run must then abort) */
  run(batch: RowBatch): Promise<RowResult[]>;
  /** Stops the workers (pending batches reject); safe to call twice. */
  close(): Promise<void>;
  /**
   * Called by a caller about to wait for a batch: processes, in the calling thread, one batch sent earlier that no
   * worker has started yet (the waiting thread works instead of idling). @returns false when there was none
   */
  help?(): Promise<boolean>;
}

/** Processes each batch synchronously in the calling thread when `run` is called. */
export class InlineExecutor implements RowExecutor {
  constructor(private readonly processor: RowProcessor) {}

  run(batch: RowBatch): Promise<RowResult[]> {
    try {
      return this.processor.processRows(batchRows(batch), batch.file, batch.fileBase, batch.normalize);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async close(): Promise<void> {}
}

/**
 * The pool worker script: `worker.js` beside the running bundle (`dist/cli.js`,
 * `dist/worker.js`), else `src/worker.ts` when running from source under tsx
 * (the worker inherits the parent's `--import tsx`).
 * @throws Error naming the places looked in when neither exists
 */
export function poolWorkerScript(): string {
  const candidates = [
    join(__dirname, 'worker.js'),
    join(__dirname, '..', '..', '..', 'worker.ts'),
    join(__dirname, '..', '..', '..', '..', 'dist', 'worker.js'),
  ];
  for (const c of candidates) if (existsSync(c)) return c;
  throw new Error(`pool worker script not found (looked in ${candidates.join(', ')}); run "npm run build"`);
}

/**
 * Old-generation heap limit of a pool worker (MB). Without it V8 lets each
 * worker's heap grow to several times its live size (the tokenizer, ~50 MB)
 * before collecting; with it a worker stays near 250 MB RSS. Rows larger than
 * `PrepareOptions.largeRowBytes` never go to a worker (the run's own thread,
 * without this limit, processes them).
 */
export const POOL_WORKER_HEAP_MB = 256;

/**
 * Young-generation size of a pool worker (MB). V8's default (up to 3 × 16 MB
 * semi-spaces on 64-bit) is kept resident by each worker once reached; a row
 * batch's short-lived objects (rendered texts, token arrays, JSON lines) fit in
 * 8 MB, so scavenges stay cheap and each worker holds about 20 MB less
 * (docs/scale.md "Memory": 2-worker peak 391 → 352 MB on 5 MB of mixed rows).
 */
export const POOL_WORKER_YOUNG_MB = 8;

/**
 * The environment variable that sets a pool worker's young generation (MB, 1–256) instead of
 * {@link POOL_WORKER_YOUNG_MB}, for measuring (docs/scale.md "1 → 2 workers": with 2 workers V8's background
 * threads, mostly the workers' scavenges, took 2–3× the CPU they take with 1; 32 MB cut it, at ~25 MB more RSS per
 * worker, on a loaded machine).
 */
export const POOL_YOUNG_MB_ENV = 'EAGLE3_POOL_YOUNG_MB';

/** A pool worker's young generation (MB): {@link POOL_YOUNG_MB_ENV} when it holds a whole number in 1–256, else {@link POOL_WORKER_YOUNG_MB}. */
export function poolWorkerYoungMb(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env[POOL_YOUNG_MB_ENV]);
  return Number.isInteger(v) && v >= 1 && v <= 256 ? v : POOL_WORKER_YOUNG_MB;
}

interface Slot {
  worker: Worker;
  /** Batches sent to this worker so far (its cell of the pool's `done` counters trails it by its queue). */
  sent: number;
  /** Batches sent and not answered, by id, with their claim cell (the batch is kept so that it can be taken back). */
  pending: Map<number, PendingBatch>;
}

interface PendingBatch {
  batch: RowBatch;
  claim: number;
  resolve: (r: RowResult[]) => void;
  reject: (e: Error) => void;
}

/** A batch sent to a pool worker and taken back before the worker started it (`WorkerPool.takeBack`): process it, then settle it. */
export interface TakenBatch {
  batch: RowBatch;
  resolve: (r: RowResult[]) => void;
  reject: (e: Error) => void;
}

/**
 * A fixed pool of `size` worker threads running {@link RowProcessor}s with the
 * same settings. A batch goes to the worker with the fewest unanswered batches
 * (counted in shared memory: a worker counts each batch it answered, so the
 * count is current even while this thread is busy). A batch a worker has not
 * started yet can be taken back ({@link WorkerPool.takeBack}) by the calling
 * thread, which then processes it itself; the worker skips it.
 * A worker that fails (an exception, an `error` event, an exit) fails every
 * batch it holds and the pool: later `run` calls reject with the same error.
 */
export class WorkerPool implements RowExecutor {
  private readonly slots: Slot[] = [];
  private nextId = 0;
  private failure: Error | null = null;
  private closed = false;
  /** Per worker, the batches it answered (`Atomics`; see `PoolWorkerData.done`). */
  private readonly done: Int32Array;
  /** The claim cells of the batches in flight (`PoolWorkerData.claims`), a ring indexed by batch id. */
  private readonly claims: Int32Array;
  /** Batches' unparsed rows cross as a transferred buffer (no batch is ever taken back), else as a copy of it. */
  private readonly transferRows: boolean;
  /**
   * The run's tokenizer facts and template check, from the first worker once
   * it has loaded the tokenizer (only when `reportSetup` is on); rejects when it could not (e.g. TokenizerLoadError's message).
   */
  readonly setup: Promise<RunSetup>;
  private setupSettle!: { resolve: (s: RunSetup) => void; reject: (e: Error) => void };

  /**
   * @param size number of worker threads (≥ 1)
   * @param settings row settings every worker uses
   * @param opts.script worker script (default {@link poolWorkerScript})
   * @param opts.lowPriority workers lower their own thread's priority (Linux only, see `PrepareOptions.lowPriority`)
   * @param opts.reportSetup the first worker runs the run's template check and resolves {@link setup} (default true);
   *   false when the calling thread loads the tokenizer and checks the template itself ({@link SharedRowExecutor})
   * @param opts.takeBack batches may be taken back ({@link takeBack}): their unparsed rows' bytes are copied to the
   *   worker, not transferred (a transferred buffer is gone from this thread). Default false
   */
  constructor(
    readonly size: number,
    settings: RowSettings,
    opts: { script?: string; lowPriority?: boolean; reportSetup?: boolean; takeBack?: boolean } = {},
  ) {
    this.transferRows = opts.takeBack !== true;
    const script = opts.script ?? poolWorkerScript();
    // Before the workers load the Rust tokenizer binding: one thread per encode, as many workers as cores (rustTokenizer.ts).
    limitRustThreads();
    const limits = { maxOldGenerationSizeMb: POOL_WORKER_HEAP_MB, maxYoungGenerationSizeMb: poolWorkerYoungMb() };
    this.setup = new Promise<RunSetup>((resolve, reject) => (this.setupSettle = { resolve, reject }));
    this.setup.catch(() => {}); // a caller that never asks must not see an unhandled rejection
    const doneBuffer = new SharedArrayBuffer(4 * size);
    this.done = new Int32Array(doneBuffer);
    // More cells than batches can be in flight (the run's window is 4 per thread), so a cell is reused only after its batch was answered.
    const claimsBuffer = new SharedArrayBuffer(4 * Math.max(CLAIM_CELLS, 64 * size));
    this.claims = new Int32Array(claimsBuffer);
    for (let i = 0; i < size; i++) {
      const data: PoolWorkerData = {
        job: 'rows',
        settings,
        setup: i === 0 && opts.reportSetup !== false,
        index: i,
        done: doneBuffer,
        claims: claimsBuffer,
        ...(opts.lowPriority ? { lowPriority: true } : {}),
      };
      // From source (tests, `node --import tsx`), a .ts worker registers tsx's CommonJS hooks first.
      const worker = script.endsWith('.ts')
        ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(script)});`, {
            eval: true,
            workerData: data,
            name: `eagle3-rows-${i}`,
            resourceLimits: limits,
          })
        : new Worker(script, { workerData: data, name: `eagle3-rows-${i}`, resourceLimits: limits });
      const slot: Slot = { worker, sent: 0, pending: new Map() };
      worker.on('message', (m: unknown) => {
        if (!isFromPoolWorkerMessage(m)) return;
        if (m.type === 'ready') {
          if (m.setup) this.setupSettle.resolve(m.setup);
        } else if (m.type === 'results') {
          // A skipped batch was taken back: its entry is gone and it was settled by the thread that took it.
          const p = slot.pending.get(m.id);
          slot.pending.delete(m.id);
          if (!m.skipped) p?.resolve(m.results);
        } else if (m.type === 'failed') {
          const e = new Error(m.message);
          if (m.stack) e.stack = m.stack;
          this.fail(slot, e);
        }
      });
      worker.on('error', (e) => {
        const oom = (e as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        this.fail(slot, oom ? new Error(`${e.message}: a batch needed more than a pool worker's ${POOL_WORKER_HEAP_MB} MB heap; rerun with --workers 1`) : e);
      });
      worker.on('exit', (code) => {
        if (!this.closed) this.fail(slot, new Error(`pool worker ${i} exited (code ${code}) with ${slot.pending.size} batches unanswered`));
      });
      this.slots.push(slot);
    }
  }

  private fail(slot: Slot, e: Error): void {
    this.failure ??= e;
    this.setupSettle.reject(e);
    for (const p of slot.pending.values()) p.reject(e);
    slot.pending.clear();
  }

  /** The error that failed the pool, or null. */
  get failed(): Error | null {
    return this.failure;
  }

  /** The worker with the fewest batches sent and not answered (read from the shared counters), and that number. */
  leastLoaded(): { index: number; queued: number } {
    let best = { index: 0, queued: Infinity };
    for (let i = 0; i < this.slots.length; i++) {
      const queued = this.slots[i].sent - Atomics.load(this.done, i);
      if (queued < best.queued) best = { index: i, queued };
    }
    return best;
  }

  run(batch: RowBatch): Promise<RowResult[]> {
    return this.runOn(this.leastLoaded().index, batch);
  }

  /** Sends `batch` to worker `index`. @returns its results; rejects when the pool failed or is closed */
  runOn(index: number, batch: RowBatch): Promise<RowResult[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error('the worker pool is closed'));
    const slot = this.slots[index];
    const id = this.nextId++;
    const claim = id % this.claims.length;
    Atomics.store(this.claims, claim, id + 1);
    slot.sent++;
    return new Promise<RowResult[]>((resolve, reject) => {
      slot.pending.set(id, { batch, claim, resolve, reject });
      // The unparsed rows' bytes as one buffer: moved to the worker (this thread never reads them again), or copied once.
      const rowBytes = packRowLines(batch.rows);
      const msg: RowBatchMessage = { type: 'batch', id, claim, ...batch };
      slot.worker.postMessage(msg, rowBytes && this.transferRows ? [rowBytes] : []);
    });
  }

  /**
   * Takes back the oldest batch that waits in a worker's queue (not started): the worker will skip it. Only for a pool
   * made with `takeBack` (otherwise the unparsed rows of the batches sent are no longer readable here: undefined).
   * @returns the batch and its settlement, or undefined when every batch sent has been started (or the pool failed)
   */
  takeBack(): TakenBatch | undefined {
    // A pool that transfers its batches' row bytes has none left here to process: its batches stay with the workers.
    if (this.failure || this.closed || this.transferRows) return undefined;
    const waiting: { slot: Slot; id: number; p: PendingBatch }[] = [];
    for (const slot of this.slots) for (const [id, p] of slot.pending) waiting.push({ slot, id, p });
    waiting.sort((a, b) => a.id - b.id);
    for (const { slot, id, p } of waiting) {
      if (Atomics.compareExchange(this.claims, p.claim, id + 1, -(id + 1)) !== id + 1) continue;
      slot.pending.delete(id);
      return { batch: p.batch, resolve: p.resolve, reject: p.reject };
    }
    return undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const err = new Error('the worker pool was closed');
    this.setupSettle.reject(err);
    for (const s of this.slots) {
      for (const p of s.pending.values()) p.reject(err);
      s.pending.clear();
    }
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

/** Claim cells of a pool (at least; 64 per worker when more): far more than the batches a run keeps in flight. */
const CLAIM_CELLS = 4096;
