/**
 * The extension host's side of the service workers (src/core/run/editor/serviceProtocol.ts):
 * everything heavy the editor asks for while a person looks at a dataset runs in
 * `dist/worker.js` threads, never on the extension host's thread.
 *
 * Three lanes, one worker each (`render`: the hover and the mask view; `template`: the chat
 * template check; `background`: row checks, statistics, exact counts), so that one kind of work
 * cannot end another; budgets, overruns and restarts are `serviceLanes.ts` (pure, unit-tested).
 * Each worker has a heap limit ({@link WORKER_HEAP_MB}): a huge row that exhausts it ends the
 * worker, not VS Code's extension host; its calls fail with a message naming them.
 */
import { Worker } from 'node:worker_threads';
import * as vscode from 'vscode';
import type { ServiceRequest, ServiceResults, ServiceWorkerData } from '../core/run/editor/serviceProtocol';
import { ServiceLanes, type Lane, type LaneWorkerHandle } from './serviceLanes';
import { workerScriptPath } from './workerClient';

export { ServiceBudgetError, ServiceError } from './serviceLanes';

/** Old-generation heap limit of a service worker, MB. */
export const WORKER_HEAP_MB = 2048;

/** Starts a lane's worker thread: `dist/worker.js` as a service, unref'd (it never keeps VS Code alive), with the heap limit. */
function startLaneWorker(script: string, lane: Lane): LaneWorkerHandle {
  const data: ServiceWorkerData = { job: 'service', lowPriority: lane === 'background' };
  const w = new Worker(script, { workerData: data, name: `eagle3-${lane}`, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  w.unref();
  return {
    postMessage: (m) => w.postMessage(m),
    terminate: () => w.terminate(),
    onMessage: (listener) => void w.on('message', listener),
    onEnd: (listener) => {
      w.on('error', (e) => listener(`failed: ${e.message}`));
      w.on('exit', (code) => listener(`exited (code ${code})`));
    },
  };
}

/** The service workers of the extension (one per lane). */
export class ServiceClient implements vscode.Disposable {
  private readonly lanes: ServiceLanes;

  /** @param location extension root, its dist/ folder or the worker.js path (see `workerScriptPath`). */
  constructor(location: vscode.Uri | string) {
    const script = workerScriptPath(location);
    this.lanes = new ServiceLanes((lane) => startLaneWorker(script, lane), `; a very large row may have exhausted its ${WORKER_HEAP_MB} MB heap`);
  }

  /**
   * Runs one request in its lane's worker.
   * @param budgetMs wall-clock budget of the call's own work (from the worker's `started`: queueing and
   *   loading the tokenizer are not counted): past it the promise rejects with `ServiceBudgetError`
   *   naming the work (and a render or template worker is terminated, its other calls sent again). A `view` request
   *   also stops itself between steps at the deadline.
   * @throws ServiceError with the core's error (name and message), ServiceBudgetError
   */
  call<R extends ServiceRequest>(request: R, budgetMs?: number): Promise<ServiceResults[R['op']]> {
    return this.lanes.call(request, budgetMs) as Promise<ServiceResults[R['op']]>;
  }

  /** Worker starts per lane so far. */
  starts(): Record<Lane, number> {
    return this.lanes.starts();
  }

  dispose(): void {
    this.lanes.dispose();
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
