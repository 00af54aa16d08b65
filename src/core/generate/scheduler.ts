/**
 * Bounded concurrency over several servers: each server has its own limit of
 * requests in flight; a request takes the free server with the lowest load
 * (in flight / limit); a server that failed at the transport level (refused,
 * reset, timed out) or answered 429/5xx is set aside until its backoff ends,
 * so requests go to the others meanwhile and come back to it without intervention.
 */

/** One server of the pool. */
export interface ServerState {
  /** Server root, e.g. `http://127.0.0.1:30000` (no trailing slash, no `/v1`). */
  url: string;
  /** Most requests in flight at once. */
  limit: number;
  inFlight: number;
  /** Epoch ms before which the server gets no new request (0 = available). */
  downUntil: number;
  /** Requests sent, failures seen (for the report). */
  sent: number;
  failures: number;
}

/** A pool of servers with per-server limits. */
export class ServerPool {
  readonly servers: ServerState[];
  private waiters: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;

  /** @param servers url + limit (≥ 1) each */
  constructor(servers: { url: string; limit: number }[]) {
    if (servers.length === 0) throw new Error('no server given');
    this.servers = servers.map((s) => ({ url: s.url, limit: Math.max(1, Math.floor(s.limit)), inFlight: 0, downUntil: 0, sent: 0, failures: 0 }));
  }

  /** Sum of the limits: the most requests the pool keeps in flight. */
  get capacity(): number {
    return this.servers.reduce((a, s) => a + s.limit, 0);
  }

  get inFlight(): number {
    return this.servers.reduce((a, s) => a + s.inFlight, 0);
  }

  private pick(now: number): ServerState | undefined {
    let best: ServerState | undefined;
    for (const s of this.servers) {
      if (s.inFlight >= s.limit || s.downUntil > now) continue;
      if (!best || s.inFlight / s.limit < best.inFlight / best.limit) best = s;
    }
    return best;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private armTimer(now: number): void {
    const next = Math.min(...this.servers.filter((s) => s.downUntil > now).map((s) => s.downUntil));
    if (!Number.isFinite(next) || this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.wake();
      },
      Math.max(1, next - now),
    );
  }

  /**
   * Waits for a server with a free slot that is not backing off, and takes the slot.
   * @throws the signal's reason when aborted while waiting
   */
  async acquire(signal?: AbortSignal): Promise<ServerState> {
    for (;;) {
      signal?.throwIfAborted();
      const now = Date.now();
      const s = this.pick(now);
      if (s) {
        s.inFlight++;
        s.sent++;
        return s;
      }
      this.armTimer(now);
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal!.reason);
        this.waiters.push(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  /** Gives the slot back. */
  release(s: ServerState): void {
    s.inFlight--;
    this.wake();
  }

  /** Sets a server aside for `ms` (its backoff after a transient failure). */
  backOff(s: ServerState, ms: number): void {
    s.failures++;
    s.downUntil = Math.max(s.downUntil, Date.now() + ms);
  }

  /** Marks a server healthy again after a successful answer. */
  ok(s: ServerState): void {
    s.downUntil = 0;
  }

  /** Stops the wake-up timer (end of run). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.wake();
  }
}
