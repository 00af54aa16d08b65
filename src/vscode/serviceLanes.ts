/**
 * The lanes of the service workers (`serviceClient.ts`), without `vscode` and without starting
 * threads itself (unit-tested in plain node with fake workers): which lane an operation runs in,
 * the time budget of a call, and what an overrun does to the other calls.
 *
 * Three lanes, one worker each, started on first use, so that one kind of work cannot end another
 * (issue 24 item 5: a mask-view render past its budget ended the shared worker, and a running "Check
 * chat template" then reported "the template may loop"):
 * - `render`: a row's view for the hover and the mask view (tokenizer loaded once);
 * - `template`: the chat template check (compiled templates kept);
 * - `background`: row checks for Problems, output statistics and exact counts (I/O bound, requests
 *   interleave); no tokenizer.
 *
 * A call's budget runs from the worker's `started` (queueing behind other calls and loading the
 * tokenizer are not counted). A `view` call also stops itself between steps at its deadline and
 * answers `DeadlineExceededError`: only that call ends, reported as past its budget like an overrun
 * (the worker keeps serving the others). A `render` or `template` call past its budget terminates its lane's
 * worker (a hostile template cannot loop forever) and is answered with a {@link ServiceBudgetError}
 * naming the work and the budget; the other calls of that lane are sent again, once, to a new worker
 * (they did not overrun). A `background` call past its budget is answered the same way, its worker
 * left running (its work yields; the others interleave with it). A worker that exits or fails (a
 * huge row exhausting its heap) fails its lane's pending calls with a message; the next call starts
 * a new one.
 */
import { DEADLINE_EXCEEDED_ERROR, describeServiceRequest, isServiceReply, type ServiceCall, type ServiceRequest } from '../core/run/editor/serviceProtocol';

/** A lane: one worker thread. */
export type Lane = 'render' | 'template' | 'background';

/** Which lane each operation runs in. */
export const LANE: Record<ServiceRequest['op'], Lane> = {
  view: 'render',
  checkTemplate: 'template',
  rowProblems: 'background',
  stats: 'background',
  rowRecords: 'background',
};

/** A call that ran past its budget; the message names the work and the budget (`rendering line 3 of a.jsonl took longer than 30.0 s and was stopped`). */
export class ServiceBudgetError extends Error {
  constructor(
    /** What timed out ({@link describeServiceRequest}). */
    readonly what: string,
    readonly budgetMs: number,
  ) {
    super(`${what} took longer than ${(budgetMs / 1000).toFixed(1)} s and was stopped`);
  }
}

/** An error the worker answered with (`errorName` = the core's error class: `TokenizerLoadError`, `NoChatTemplateError`, …), or why the call could not be answered (`WorkerExit`, `WorkerRestart`, `Disposed`). */
export class ServiceError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

/** The part of a `worker_threads` Worker a lane uses (a fake in the unit tests). */
export interface LaneWorkerHandle {
  postMessage(message: ServiceCall): void;
  terminate(): unknown;
  onMessage(listener: (message: unknown) => void): void;
  /** `why`: `failed: <message>` or `exited (code N)`. */
  onEnd(listener: (why: string) => void): void;
}

interface Pending {
  request: ServiceRequest;
  budgetMs: number | undefined;
  /** Sent again after another call's overrun ended the worker (once). */
  resent: boolean;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer?: ReturnType<typeof setTimeout>;
  /** Starts the budget's clock (when the worker says the call's own work began). */
  start?: () => void;
}

/** One lane's worker and its pending calls; see the module comment. */
export class ServiceLane {
  private worker: LaneWorkerHandle | undefined;
  private pending = new Map<number, Pending>();
  private nextId = 1;
  /** Workers started so far (tests: a restart after a budget overrun). */
  starts = 0;

  /**
   * @param lane the lane's name (in messages)
   * @param startWorker starts the lane's worker thread (`serviceClient.ts`: `dist/worker.js` with a heap limit)
   * @param exitHint appended to the message of a worker that exited (e.g. what may have exhausted its heap)
   */
  constructor(
    readonly lane: Lane,
    private readonly startWorker: () => LaneWorkerHandle,
    private readonly exitHint = '',
  ) {}

  private start(): LaneWorkerHandle {
    const w = this.startWorker();
    this.starts++;
    w.onMessage((m) => {
      if (!isServiceReply(m)) return;
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.type === 'started') {
        p.start?.();
        return;
      }
      this.pending.delete(m.id);
      if (p.timer) clearTimeout(p.timer);
      if (!('error' in m)) p.resolve(m.result);
      // The call stopped itself at its deadline (per-call: the worker goes on serving the others); named like an overrun.
      else if (m.error.name === DEADLINE_EXCEEDED_ERROR && p.budgetMs !== undefined)
        p.reject(new ServiceBudgetError(describeServiceRequest(p.request), p.budgetMs));
      else p.reject(new ServiceError(m.error.name, m.error.message));
    });
    w.onEnd((why) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      for (const [id, p] of this.pending) {
        if (p.timer) clearTimeout(p.timer);
        p.reject(new ServiceError('WorkerExit', `${describeServiceRequest(p.request)} was not answered: the ${this.lane} worker ${why}${this.exitHint}`));
        this.pending.delete(id);
      }
    });
    return w;
  }

  /**
   * Runs one call in the lane's worker (started when there is none).
   * @param budgetMs wall-clock budget from the worker's `started`; undefined = none
   * @returns the worker's result; rejects with {@link ServiceError} or {@link ServiceBudgetError}
   */
  call(request: ServiceRequest, budgetMs: number | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => this.send({ request, budgetMs, resent: false, resolve, reject }));
  }

  /** Pending calls (tests). */
  get size(): number {
    return this.pending.size;
  }

  /** Posts a pending call to the lane's worker, its budget armed to start on `started`. */
  private send(p: Pending): void {
    const w = (this.worker ??= this.start());
    const id = this.nextId++;
    if (p.budgetMs !== undefined) {
      const budgetMs = p.budgetMs;
      p.start = () =>
        (p.timer ??= setTimeout(() => {
          if (!this.pending.has(id)) return;
          this.pending.delete(id);
          if (this.lane !== 'background') this.restart(w);
          p.reject(new ServiceBudgetError(describeServiceRequest(p.request), budgetMs));
        }, budgetMs));
    }
    this.pending.set(id, p);
    w.postMessage({ type: 'call', id, request: p.request });
  }

  /**
   * Ends a worker that may be stuck (a template loop) and sends the lane's other calls again to a
   * new one: they did not overrun. A call already sent again fails instead (it was caught in a second restart).
   */
  private restart(w: LaneWorkerHandle): void {
    if (this.worker === w) this.worker = undefined;
    void w.terminate();
    const others = [...this.pending.values()];
    this.pending.clear();
    for (const o of others) {
      if (o.timer) clearTimeout(o.timer);
      o.timer = undefined;
      o.start = undefined;
      if (o.resent)
        o.reject(
          new ServiceError(
            'WorkerRestart',
            `${describeServiceRequest(o.request)} was stopped twice by other work in its worker that ran past its budget: try again`,
          ),
        );
      else {
        o.resent = true;
        this.send(o);
      }
    }
  }

  /** Fails every pending call (`Disposed`) and terminates the worker. */
  dispose(): void {
    const w = this.worker;
    this.worker = undefined;
    for (const p of this.pending.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new ServiceError('Disposed', 'the extension is shutting down'));
    }
    this.pending.clear();
    void w?.terminate();
  }
}

/** The three lanes, each with its own worker. */
export class ServiceLanes {
  readonly lanes: Record<Lane, ServiceLane>;

  /** @param startWorker starts a worker for a lane; @param exitHint see {@link ServiceLane} */
  constructor(startWorker: (lane: Lane) => LaneWorkerHandle, exitHint = '') {
    const make = (lane: Lane) => new ServiceLane(lane, () => startWorker(lane), exitHint);
    this.lanes = { render: make('render'), template: make('template'), background: make('background') };
  }

  /** Runs `request` in its lane ({@link LANE}); a `view` carries its budget so the worker stops itself between steps at the deadline. */
  call(request: ServiceRequest, budgetMs?: number): Promise<unknown> {
    const req = request.op === 'view' && budgetMs !== undefined ? { ...request, budgetMs } : request;
    return this.lanes[LANE[request.op]].call(req, budgetMs);
  }

  /** Worker starts per lane so far. */
  starts(): Record<Lane, number> {
    return { render: this.lanes.render.starts, template: this.lanes.template.starts, background: this.lanes.background.starts };
  }

  dispose(): void {
    for (const l of Object.values(this.lanes)) l.dispose();
  }
}
