/**
 * The extension host's side of the service workers (src/core/run/serviceProtocol.ts):
 * everything heavy the editor asks for while a person looks at a dataset runs in
 * `dist/worker.js` threads, never on the extension host's thread.
 *
 * Three lanes, one worker each, started on first use, so that one kind of work cannot end another:
 * - `render`: a row's view for the hover and the mask view (tokenizer loaded once);
 * - `template`: the chat template check (compiled templates kept);
 * - `background`: row checks for Problems, output statistics and exact counts (I/O
 *   bound, requests interleave); no tokenizer.
 * A `render` or `template` request that runs past its time budget terminates its lane's worker
 * (a hostile template cannot loop forever) and is answered with a {@link ServiceBudgetError}
 * naming the work; the other requests of that lane are sent again, once, to a new worker (they
 * did not overrun), so a long mask-view render never fails a template check or a hover.
 * Each worker has a heap limit ({@link WORKER_HEAP_MB}): a huge row that exhausts it
 * ends the worker, not VS Code's extension host; its requests fail with a message.
 */
import { Worker } from 'node:worker_threads';
import * as vscode from 'vscode';
import {
  describeServiceRequest,
  isServiceReply,
  type ServiceCall,
  type ServiceRequest,
  type ServiceResults,
  type ServiceWorkerData,
} from '../core/run/serviceProtocol';
import { workerScriptPath } from './workerClient';

/** Old-generation heap limit of a service worker, MB. */
export const WORKER_HEAP_MB = 2048;

/** A request that ran past its budget; the message names the work and the budget (`rendering line 3 of a.jsonl took longer than 30.0 s and was stopped`). */
export class ServiceBudgetError extends Error {
  constructor(
    /** What timed out ({@link describeServiceRequest}). */
    readonly what: string,
    readonly budgetMs: number,
  ) {
    super(`${what} took longer than ${(budgetMs / 1000).toFixed(1)} s and was stopped`);
  }
}

/** An error the worker answered with; `name` is the core's error class (`TokenizerLoadError`, `NoChatTemplateError`, …). */
export class ServiceError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

type Lane = 'render' | 'template' | 'background';

/** Which lane an operation runs in. */
const LANE: Record<ServiceRequest['op'], Lane> = {
  view: 'render',
  checkTemplate: 'template',
  rowProblems: 'background',
  stats: 'background',
  rowRecords: 'background',
};

interface Pending {
  request: ServiceRequest;
  budgetMs: number | undefined;
  /** Sent again after another request's overrun ended the worker (once). */
  resent: boolean;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
  /** Starts the budget's clock (when the worker says the call's own work began). */
  start?: () => void;
}

class LaneWorker {
  private worker: Worker | undefined;
  private pending = new Map<number, Pending>();
  private nextId = 1;
  /** Workers started so far (tests: a restart after a budget overrun). */
  starts = 0;

  constructor(
    private readonly script: string,
    private readonly lane: Lane,
  ) {}

  private start(): Worker {
    const data: ServiceWorkerData = { job: 'service', lowPriority: this.lane === 'background' };
    const w = new Worker(this.script, { workerData: data, name: `eagle3-${this.lane}`, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    this.starts++;
    w.unref();
    w.on('message', (m: unknown) => {
      if (!isServiceReply(m)) return;
      const p = this.pending.get(m.id);
      if (!p) return;
      if (m.type === 'started') {
        p.start?.();
        return;
      }
      this.pending.delete(m.id);
      if (p.timer) clearTimeout(p.timer);
      if ('error' in m) p.reject(new ServiceError(m.error.name, m.error.message));
      else p.resolve(m.result);
    });
    const fail = (why: string) => {
      if (this.worker !== w) return;
      this.worker = undefined;
      for (const [id, p] of this.pending) {
        if (p.timer) clearTimeout(p.timer);
        p.reject(new ServiceError('WorkerExit', why));
        this.pending.delete(id);
      }
    };
    w.on('error', (e) => fail(`the ${this.lane} worker failed: ${e.message}`));
    w.on('exit', (code) => fail(`the ${this.lane} worker exited (code ${code}); a very large row may have exhausted its ${WORKER_HEAP_MB} MB heap`));
    return w;
  }

  call(request: ServiceRequest, budgetMs: number | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => this.send({ request, budgetMs, resent: false, resolve, reject }));
  }

  /** Posts a pending call to the lane's worker (started when there is none), its budget armed to start on `started`. */
  private send(p: Pending): void {
    const w = (this.worker ??= this.start());
    const id = this.nextId++;
    if (p.budgetMs !== undefined) {
      const budgetMs = p.budgetMs;
      // The clock runs from the worker's `started` (time queued behind other calls, or loading the tokenizer, is not counted).
      p.start = () =>
        (p.timer ??= setTimeout(() => {
          if (!this.pending.has(id)) return;
          this.pending.delete(id);
          if (this.lane !== 'background') this.restart(w);
          p.reject(new ServiceBudgetError(describeServiceRequest(p.request), budgetMs));
        }, budgetMs));
    }
    this.pending.set(id, p);
    const msg: ServiceCall = { type: 'call', id, request: p.request };
    w.postMessage(msg);
  }

  /**
   * Ends a worker that may be stuck (a template loop) and sends the lane's other calls again to a
   * new one: they did not overrun. A call already sent again fails instead (it was caught in a second restart).
   */
  private restart(w: Worker): void {
    this.worker = undefined;
    void w.terminate();
    const others = [...this.pending.values()];
    this.pending.clear();
    for (const o of others) {
      if (o.timer) clearTimeout(o.timer);
      o.timer = undefined;
      o.start = undefined;
      if (o.resent)
        o.reject(new ServiceError('WorkerRestart', `${describeServiceRequest(o.request)} was stopped twice by other work that ran past its budget: try again`));
      else {
        o.resent = true;
        this.send(o);
      }
    }
  }

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

/** The service workers of the extension (one per lane). */
export class ServiceClient implements vscode.Disposable {
  private readonly lanes: Record<Lane, LaneWorker>;

  /** @param location extension root, its dist/ folder or the worker.js path (see `workerScriptPath`). */
  constructor(location: vscode.Uri | string) {
    const script = workerScriptPath(location);
    this.lanes = { render: new LaneWorker(script, 'render'), template: new LaneWorker(script, 'template'), background: new LaneWorker(script, 'background') };
  }

  /**
   * Runs one request in its lane's worker.
   * @param budgetMs wall-clock budget of the call's own work (from the worker's `started`: queueing and
   *   loading the tokenizer are not counted): past it the promise rejects with {@link ServiceBudgetError}
   *   naming the work (and a render or template worker is terminated, its other calls sent again). A `view` request
   *   also stops itself between steps at the deadline.
   * @throws ServiceError with the core's error (name and message), ServiceBudgetError
   */
  call<R extends ServiceRequest>(request: R, budgetMs?: number): Promise<ServiceResults[R['op']]> {
    const req = request.op === 'view' && budgetMs !== undefined ? { ...request, budgetMs } : request;
    return this.lanes[LANE[request.op]].call(req, budgetMs) as Promise<ServiceResults[R['op']]>;
  }

  /** Worker starts per lane so far. */
  starts(): Record<Lane, number> {
    return { render: this.lanes.render.starts, template: this.lanes.template.starts, background: this.lanes.background.starts };
  }

  dispose(): void {
    for (const l of Object.values(this.lanes)) l.dispose();
  }
}

let shared: ServiceClient | undefined;

/** The extension's service client (created by `initServiceClient` at activation). */
export function serviceClient(): ServiceClient {
  if (!shared) throw new Error('the service client is not initialized (initServiceClient at activation)');
  return shared;
}

/** Creates the extension's service client; returns it (dispose it with the extension). */
export function initServiceClient(extensionUri: vscode.Uri): ServiceClient {
  shared?.dispose();
  shared = new ServiceClient(extensionUri);
  return shared;
}
