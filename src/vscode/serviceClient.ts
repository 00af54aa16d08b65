/**
 * The extension host's side of the service workers (src/core/run/serviceProtocol.ts):
 * everything heavy the editor asks for while a person looks at a dataset runs in
 * `dist/worker.js` threads, never on the extension host's thread.
 *
 * Two lanes, one worker each, started on first use:
 * - `interactive`: a row's view for the hover and the mask view, the template check
 *   (tokenizer loaded once, compiled templates kept). A request that runs past its
 *   time budget terminates the worker (a hostile template cannot loop forever) and
 *   is answered with a {@link ServiceBudgetError}; the next request starts a new one.
 * - `background`: row checks for Problems, output statistics and exact counts (I/O
 *   bound, requests interleave); no tokenizer.
 * Each worker has a heap limit ({@link WORKER_HEAP_MB}): a huge row that exhausts it
 * ends the worker, not VS Code's extension host; its requests fail with a message.
 */
import { Worker } from 'node:worker_threads';
import * as vscode from 'vscode';
import { isServiceReply, type ServiceCall, type ServiceRequest, type ServiceResults, type ServiceWorkerData } from '../core/run/serviceProtocol';
import { workerScriptPath } from './workerClient';

/** Old-generation heap limit of a service worker, MB. */
export const WORKER_HEAP_MB = 2048;

/** A request that ran past its budget (the worker was restarted). */
export class ServiceBudgetError extends Error {}

/** An error the worker answered with; `name` is the core's error class (`TokenizerLoadError`, `NoChatTemplateError`, …). */
export class ServiceError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

type Lane = 'interactive' | 'background';

/** Which lane an operation runs in. */
const LANE: Record<ServiceRequest['op'], Lane> = {
  view: 'interactive',
  checkTemplate: 'interactive',
  rowProblems: 'background',
  stats: 'background',
  rowRecords: 'background',
};

interface Pending {
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
    const w = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const p: Pending = { resolve, reject };
      if (budgetMs !== undefined) {
        // The clock runs from the worker's `started` (time queued behind other calls, or loading the tokenizer, is not counted).
        p.start = () =>
          (p.timer ??= setTimeout(() => {
            if (!this.pending.has(id)) return;
            this.pending.delete(id);
            if (this.lane === 'interactive') {
              // The worker may be stuck in a template loop: end it; other requests fail and are asked again.
              this.worker = undefined;
              void w.terminate();
              for (const [oid, o] of this.pending) {
                if (o.timer) clearTimeout(o.timer);
                o.reject(new ServiceBudgetError('the service worker was restarted'));
                this.pending.delete(oid);
              }
            }
            reject(new ServiceBudgetError(`took longer than ${(budgetMs / 1000).toFixed(1)} s (the work was stopped)`));
          }, budgetMs));
      }
      this.pending.set(id, p);
      const msg: ServiceCall = { type: 'call', id, request };
      w.postMessage(msg);
    });
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
    this.lanes = { interactive: new LaneWorker(script, 'interactive'), background: new LaneWorker(script, 'background') };
  }

  /**
   * Runs one request in its lane's worker.
   * @param budgetMs wall-clock budget of the call's own work (from the worker's `started`: queueing and
   *   loading the tokenizer are not counted): past it the promise rejects with {@link ServiceBudgetError}
   *   (and an interactive worker is terminated). A `view` request also stops itself between steps at the deadline.
   * @throws ServiceError with the core's error (name and message), ServiceBudgetError
   */
  call<R extends ServiceRequest>(request: R, budgetMs?: number): Promise<ServiceResults[R['op']]> {
    const req = request.op === 'view' && budgetMs !== undefined ? { ...request, budgetMs } : request;
    return this.lanes[LANE[request.op]].call(req, budgetMs) as Promise<ServiceResults[R['op']]>;
  }

  /** Worker starts per lane so far. */
  starts(): Record<Lane, number> {
    return { interactive: this.lanes.interactive.starts, background: this.lanes.background.starts };
  }

  dispose(): void {
    this.lanes.interactive.dispose();
    this.lanes.background.dispose();
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
