/**
 * The Datasets view's scan queue: each dataset is queued at most once at a time (its `pending`
 * flag), at most `concurrency` scans run at once, and none starts while the queue is inactive (the
 * view hidden); `whenIdle` resolves once nothing is queued or running.
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/datasetsModel.test.ts).
 */

/** Files scanned at once (streams are I/O bound; the byte loop yields between 1 MiB chunks). */
export const SCAN_CONCURRENCY = 4;

/** A queued item: `pending` is true from `enqueue` until its scan settled. */
export interface Scannable {
  pending: boolean;
}

/** See the module comment. */
export class ScanQueue<T extends Scannable> {
  private queue: T[] = [];
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  /** Whether scans may start. */
  active = false;

  /**
   * @param scan scans one item (must not reject; a failure is the item's state)
   * @param wanted whether a queued item is still to be scanned when its turn comes (a deleted file is not)
   * @param settled called after each item's scan, once its `pending` is false
   */
  constructor(
    private readonly scan: (item: T) => Promise<void>,
    private readonly wanted: (item: T) => boolean,
    private readonly settled: (item: T) => void,
    readonly concurrency = SCAN_CONCURRENCY,
  ) {}

  /** Queues `item` unless it is queued or being scanned already. */
  enqueue(item: T): void {
    if (item.pending) return;
    item.pending = true;
    this.queue.push(item);
    this.pump();
  }

  /** Whether nothing is queued or running. */
  idle(): boolean {
    return this.running === 0 && this.queue.length === 0;
  }

  /** Scans running now. */
  runningCount(): number {
    return this.running;
  }

  /** Starts queued scans while fewer than `concurrency` run and the queue is active. */
  pump(): void {
    while (this.active && this.running < this.concurrency && this.queue.length) {
      const item = this.queue.shift()!;
      if (!this.wanted(item)) {
        item.pending = false;
        continue;
      }
      this.running++;
      void this.scan(item).finally(() => {
        item.pending = false;
        this.settled(item);
        this.running--;
        this.pump();
      });
    }
    if (this.idle()) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves when nothing is queued or running (starts queued scans only while active). */
  whenIdle(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise<void>((r) => {
      this.idleWaiters.push(r);
      this.pump();
    });
  }
}
