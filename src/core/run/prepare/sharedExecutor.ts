/**
 * `--workers N` as N threads of row work: the run's own thread and a pool of N − 1 workers (docs/scale.md
 * "1 → 2 workers"). The run's thread reads and writes, and between those it processes batches itself whenever every
 * pool worker already has {@link POOL_QUEUE_DEPTH} batches waiting or running; when it would wait for a batch, it
 * takes back a batch that waits in a worker's queue and processes it ({@link SharedRowExecutor.help}). So two
 * workers are two isolates (one tokenizer load, one JIT warm-up and word cache less than a pool of two), and the
 * reading thread never idles while a worker holds work. The results keep the order the batches were sent in
 * (`fileJob.ts` applies them in that order), so the outputs are those of one thread, byte for byte.
 */
import type { RowProcessor } from '../../records/rowProcessor';
import type { RowResult } from '../../records/rowResult';
import { batchRows, type RowBatch, type RowExecutor, type WorkerPool } from './pool';

/**
 * Batches a pool worker holds (the one it processes and those queued behind it) before the run's thread keeps a batch
 * for itself: 3 covers a batch of the run's thread that takes twice a worker's without the worker running dry; a
 * deeper queue is taken back when the run's thread would wait, so it costs only a structured clone.
 */
export const POOL_QUEUE_DEPTH = 3;

/** The environment variable that sets {@link POOL_QUEUE_DEPTH} (1–64), for measuring. */
export const POOL_QUEUE_DEPTH_ENV = 'EAGLE3_POOL_QUEUE_DEPTH';

/** The pool workers' queue depth: {@link POOL_QUEUE_DEPTH_ENV} when it holds a whole number in 1–64, else {@link POOL_QUEUE_DEPTH}. */
export function poolQueueDepth(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env[POOL_QUEUE_DEPTH_ENV]);
  return Number.isInteger(v) && v >= 1 && v <= 64 ? v : POOL_QUEUE_DEPTH;
}

/**
 * The environment variable that turns the shared executor on for `--workers N` > 1 (`1`): off by default, because the
 * run's thread doing row work is not held to a pool worker's heap limits (V8 sets the main thread's young generation
 * and heap limit when the process starts): on the 67 shared real files the 2-thread run peaked at 490 MB against
 * 370 MB for a reader and 2 pool workers (docs/scale.md "1 → 2 workers"), over the 400 MB target, for a CPU cost
 * that counted the same in instructions. Its wall speed-up is to be measured on an idle machine.
 */
export const SHARED_ROWS_ENV = 'EAGLE3_SHARED_ROWS';

/** Whether `--workers N` > 1 runs as this thread and N − 1 pool workers ({@link SHARED_ROWS_ENV} is `1`) rather than N pool workers beside a reading thread. */
export function sharedRows(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SHARED_ROWS_ENV] === '1';
}

/** The run's thread and a {@link WorkerPool} sharing the batches (see the module comment). */
export class SharedRowExecutor implements RowExecutor {
  /** A batch of this thread is being processed (only ever true across an `await`: the Rust backend's encodeBatch). */
  private busy = false;
  private closed = false;
  /** Batches kept here when every worker was full (`own`), sent to the pool (`sent`), and taken back from a worker's queue (`takenBack`, of `sent`). */
  readonly counts = { own: 0, sent: 0, takenBack: 0 };

  /**
   * @param processor this thread's row processor (its tokenizer loaded)
   * @param pool the other N − 1 threads; closed with this executor
   * @param depth a worker's queue before this thread keeps a batch ({@link poolQueueDepth})
   * @param log where {@link close} says how the batches were shared (the run's log)
   */
  constructor(
    readonly processor: RowProcessor,
    private readonly pool: WorkerPool,
    private readonly depth = poolQueueDepth(),
    private readonly log?: (line: string) => void,
  ) {}

  run(batch: RowBatch): Promise<RowResult[]> {
    const failed = this.pool.failed;
    if (failed) return Promise.reject(failed);
    const { index, queued } = this.pool.leastLoaded();
    if (queued < this.depth || this.busy) {
      this.counts.sent++;
      return this.pool.runOn(index, batch);
    }
    this.counts.own++;
    return this.here(batch);
  }

  async help(): Promise<boolean> {
    if (this.busy) return false;
    const taken = this.pool.takeBack();
    if (!taken) return false;
    this.counts.takenBack++;
    try {
      taken.resolve(await this.here(taken.batch));
    } catch (e) {
      taken.reject(e as Error);
    }
    return true;
  }

  /** Processes `batch` in this thread (synchronously with the JavaScript tokenizer, across its encodeBatch with the Rust one). */
  private here(batch: RowBatch): Promise<RowResult[]> {
    this.busy = true;
    let p: Promise<RowResult[]>;
    try {
      p = this.processor.processRows(batchRows(batch), batch.file, batch.fileBase, batch.normalize);
    } catch (e) {
      this.busy = false;
      return Promise.reject(e);
    }
    if (!this.processor.tok.encodeBatch) {
      // The JavaScript tokenizer: the work is done when processRows returns.
      this.busy = false;
      return p;
    }
    return p.finally(() => (this.busy = false));
  }

  close(): Promise<void> {
    const { own, sent, takenBack } = this.counts;
    if (own + sent > 0 && !this.closed)
      this.log?.(`  row batches: ${own + takenBack} of ${own + sent} in this thread (${takenBack} taken back from a pool worker's queue)`);
    this.closed = true;
    return this.pool.close();
  }
}
