/**
 * Rows on their way from a file's reader to the row processors (run/prepare/fileJob.ts): batched, sent, and their
 * results applied back in submission order.
 */
import type { RawRow } from '../../read/readers';
import type { RowResult } from '../../records/rowResult';
import { BATCH_BYTES, BATCH_ROWS, untilAborted } from './batches';
import type { BatchRow, RowBatch, RowExecutor } from './pool';

/** The part of a row read that a row processor takes: its place, and its value, its error or its unparsed line. */
export function batchRow(row: RawRow): BatchRow {
  if (row.raw) return row.truncated ? { line: row.line, raw: row.raw, truncated: true } : { line: row.line, raw: row.raw };
  return { line: row.line, element: row.element, value: row.value, error: row.error };
}

/**
 * A row's size in bytes, for its batch's size and the large-row limit (`PrepareOptions.largeRowBytes`): the file's
 * bytes read through it since the row before (`RawRow.bytes`, `lastBytes`), or the row's line's own length when it was
 * read unparsed (`RawRow.raw`) and that is more. In a gzip or zstd file `bytes` counts compressed bytes, read a chunk
 * at a time: 0 for most rows, whatever their size, so a row far over the limit went to a pool worker (and could
 * exhaust its heap) where the same row of a plain file is processed in the run's own thread.
 */
export function rowSizeOf(row: RawRow, lastBytes: number): number {
  const read = Math.max(0, row.bytes - lastBytes);
  return row.raw ? Math.max(read, row.raw.byteLength) : read;
}

/**
 * Batches of rows on their way to the row processors: results come back in submission order; at most `window`
 * batches are in flight, and sending waits for the oldest one (backpressure).
 */
export class RowBatcher {
  private batch: RowBatch | null = null;
  private batchBytes = 0;
  /** Bytes of the file read through the last row sent (or skipped by the shard). */
  lastBytes = 0;
  private readonly inFlight: { batch: Promise<RowResult[]>; bytes: number; settled: boolean }[] = [];
  private readonly window: number;

  constructor(
    private readonly executor: RowExecutor,
    workers: number,
    private readonly signal: AbortSignal | undefined,
    /** Applies one batch's results, in order; `bytes`: the file's bytes read through its last row. */
    private readonly settle: (results: RowResult[], bytes: number) => Promise<void>,
  ) {
    this.window = workers > 1 ? workers * 4 : 1;
  }

  /** Adds a row to the open batch (`rowBytes`: its size), sending the batch when it is full. */
  async add(head: Omit<RowBatch, 'rows'>, row: RawRow, rowBytes: number): Promise<void> {
    this.batch ??= { ...head, rows: [] };
    this.batch.rows.push(batchRow(row));
    this.batchBytes += rowBytes;
    this.lastBytes = row.bytes;
    if (this.batch.rows.length >= BATCH_ROWS || this.batchBytes >= BATCH_BYTES) await this.flush();
  }

  /** Processes one batch by `run` in its place in the order (the batches before it stay in flight). */
  async addAlone(run: () => RowResult[] | Promise<RowResult[]>, bytes: number): Promise<void> {
    await this.flush();
    this.lastBytes = bytes;
    this.push(Promise.resolve().then(run), bytes);
    await this.keepWindow();
  }

  /** Sends the open batch. */
  async flush(): Promise<void> {
    if (!this.batch) return;
    this.push(this.executor.run(this.batch), this.lastBytes);
    this.batch = null;
    this.batchBytes = 0;
    await this.keepWindow();
  }

  /** Sends the open batch and applies every batch in flight. */
  async drain(): Promise<void> {
    await this.flush();
    while (this.inFlight.length) await this.settleOldest();
  }

  private async keepWindow(): Promise<void> {
    while (this.inFlight.length >= this.window) await this.settleOldest();
  }

  private push(batch: Promise<RowResult[]>, bytes: number): void {
    const entry = { batch, bytes, settled: false };
    // Awaited in order by settleOldest; a failure must not surface unhandled meanwhile.
    batch.then(
      () => (entry.settled = true),
      () => (entry.settled = true),
    );
    this.inFlight.push(entry);
  }

  private async settleOldest(): Promise<void> {
    const oldest = this.inFlight[0];
    // Rather than wait, this thread processes batches still queued for a worker (SharedRowExecutor.help).
    while (!oldest.settled && this.executor.help && (await this.executor.help())) this.signal?.throwIfAborted();
    this.inFlight.shift();
    await this.settle(await untilAborted(oldest.batch, this.signal), oldest.bytes);
  }
}
