/**
 * Messages between the VS Code extension host and the pipeline worker thread
 * (`dist/worker.js`, see `src/worker.ts` and `src/vscode/workerClient.ts`).
 *
 * Everything here crosses a `worker_threads` boundary, so every shape is plain
 * structured-clone data (no functions, no class instances, no AbortSignal).
 * This module has no runtime dependencies and must never import `vscode`.
 */
import type { PrepareOptions, PrepareProgress, PrepareResult, RunSetup } from '../contract';
import type { RowResult, RowSettings } from '../../records/rowResult';
import type { NormalizeOptions } from '../../formats/base';
import type { RowConfigData } from '../../formats/rowSource';
import type { RawRow } from '../../read/readers';

/** `workerData` of a worker started for one `prepare` run. */
export interface PrepareWorkerData {
  job: 'prepare';
  options: PrepareOptions;
}

/** Host → worker: stop the run as soon as possible (the worker aborts `prepare`'s signal). */
export interface CancelMessage {
  type: 'cancel';
}

/** Every message the host may post to the worker. */
export type ToWorkerMessage = CancelMessage;

/** Worker → host: a `PrepareProgress` event (the pipeline throttles these to ~10/s). */
export interface ProgressMessage {
  type: 'progress';
  progress: PrepareProgress;
}

/** Worker → host: one log line for the output channel (no trailing newline). */
export interface LogMessage {
  type: 'log';
  line: string;
}

/** Worker → host: `prepare` resolved; the run is over (`result.ok` may still be false). */
export interface DoneMessage {
  type: 'done';
  result: PrepareResult;
}

/**
 * Worker → host: `prepare` threw (or the worker data was invalid); the run is over.
 * `aborted` is true when the failure is the reaction to a `cancel` message.
 */
export interface ErrorMessage {
  type: 'error';
  message: string;
  stack?: string;
  aborted?: boolean;
}

/** Every message the worker may post to the host. Exactly one `done` or `error` ends a run. */
export type FromWorkerMessage = ProgressMessage | LogMessage | DoneMessage | ErrorMessage;

const FROM_WORKER_TYPES: ReadonlySet<string> = new Set(['progress', 'log', 'done', 'error']);

/**
 * Narrows an untyped `message` event payload to a `FromWorkerMessage`.
 * Checks only the `type` tag (the worker is our own bundle); returns false for anything else.
 */
export function isFromWorkerMessage(value: unknown): value is FromWorkerMessage {
  return typeof value === 'object' && value !== null && FROM_WORKER_TYPES.has((value as { type?: unknown }).type as string);
}

/** Narrows an untyped `message` payload received by the worker to a `ToWorkerMessage`. */
export function isToWorkerMessage(value: unknown): value is ToWorkerMessage {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'cancel';
}

/**
 * Validates `workerData` handed to the worker.
 * @throws Error naming the problem when `value` is not `{ job: 'prepare', options: { inputs: string[], outDir: string, … } }`.
 */
export function assertPrepareWorkerData(value: unknown): asserts value is PrepareWorkerData {
  const v = value as Partial<PrepareWorkerData> | null | undefined;
  if (!v || typeof v !== 'object') throw new Error('worker: workerData is missing');
  if (v.job !== 'prepare') throw new Error(`worker: unknown job ${JSON.stringify(v.job)} (expected "prepare")`);
  const o = v.options as Partial<PrepareOptions> | undefined;
  if (!o || typeof o !== 'object') throw new Error('worker: workerData.options is missing');
  if (!Array.isArray(o.inputs) || o.inputs.some((i) => typeof i !== 'string')) {
    throw new Error('worker: workerData.options.inputs must be an array of file paths');
  }
  if (typeof o.outDir !== 'string' || o.outDir === '') throw new Error('worker: workerData.options.outDir must be a folder path');
}

// ------------------------------------------------------------------ row pool

/**
 * `workerData` of a pool worker (`src/core/run/prepare/pool.ts`): it loads the tokenizer
 * once, then answers `batch` messages until it is terminated.
 */
export interface PoolWorkerData {
  job: 'rows';
  settings: RowSettings;
  /** This worker also runs the run's template check and reports it in its `ready` message (the first worker). */
  setup?: boolean;
  /** Lower this thread's OS priority (nice 10; Linux only, where the nice value is per thread). */
  lowPriority?: boolean;
  /** This worker's index in the pool: its cell of `done`. */
  index?: number;
  /**
   * The pool's batch counters (`Int32Array`, one cell per worker): a worker adds 1 to its cell when it has answered
   * a batch (processed or skipped), so the run's thread sees each worker's queue without waiting for its messages.
   */
  done?: SharedArrayBuffer;
  /**
   * The claims of the batches sent (`Int32Array` ring, cell `RowBatchMessage.claim`): `id + 1` while batch `id` waits,
   * `-(id + 1)` once a thread took it. A worker takes a batch only when it turns the cell from `id + 1`; the run's
   * thread may take a waiting batch back the same way and process it itself (pool.ts `WorkerPool.takeBack`).
   */
  claims?: SharedArrayBuffer;
}

/** Worker → pool: the tokenizer is loaded; with `setup` when the worker was asked for it. */
export interface PoolReadyMessage {
  type: 'ready';
  setup?: RunSetup;
}

/** Pool → worker: process these rows of `file` (see `RowBatch` in pool.ts). */
export interface RowBatchMessage {
  type: 'batch';
  id: number;
  file: string;
  fileBase: string;
  /** The file's reading choices (`eagle3prep.jsonc` "reading", `formats/base.ts` NormalizeOptions). */
  normalize?: NormalizeOptions;
  /** The mapping entry and project config for the rows sent unparsed (`formats/rowSource.ts` RowConfigData). */
  config?: RowConfigData;
  /** Parsed rows, or rows as their line's bytes (`raw`: views of one buffer per batch, pool.ts packRowLines). */
  rows: Pick<RawRow, 'line' | 'element' | 'value' | 'error' | 'raw' | 'truncated'>[];
  /** The batch's cell in `PoolWorkerData.claims`; absent: the worker processes it unconditionally. */
  claim?: number;
}

/** Worker → pool: the results of batch `id`, one per row, in row order; `skipped` (no results) when the run's thread had taken it back. */
export interface RowResultsMessage {
  type: 'results';
  id: number;
  results: RowResult[];
  skipped?: true;
}

/** Worker → pool: the worker cannot go on (tokenizer load failed, an unexpected exception); `id` is -1 at start-up. */
export interface PoolFailedMessage {
  type: 'failed';
  id: number;
  message: string;
  stack?: string;
}

/** Every message a pool worker posts. */
export type FromPoolWorkerMessage = PoolReadyMessage | RowResultsMessage | PoolFailedMessage;

/** Narrows a pool worker's message by its `type` tag. */
export function isFromPoolWorkerMessage(value: unknown): value is FromPoolWorkerMessage {
  const t = (value as { type?: unknown } | null)?.type;
  return typeof value === 'object' && value !== null && (t === 'ready' || t === 'results' || t === 'failed');
}

/** Narrows a message received by a pool worker. */
export function isRowBatchMessage(value: unknown): value is RowBatchMessage {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'batch' && Array.isArray((value as { rows?: unknown }).rows);
}
