/**
 * Extension-host side of the pipeline worker: starts `dist/worker.js` in a
 * worker thread for one `prepare` run and turns its messages into callbacks
 * and a promise. See src/core/run/prepare/workerProtocol.ts for the message shapes.
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import * as vscode from 'vscode';
import { defaultWorkerCount } from '../core/run/inputs/inputs';
import { type PrepareOptions, type PrepareProgress, type PrepareResult } from '../core/run/contract';
import { isFromWorkerMessage, type PrepareWorkerData, type ToWorkerMessage } from '../core/run/prepare/workerProtocol';

/** Callbacks and cancellation of one worker run. */
export interface RunInWorkerHooks {
  /** Each progress event of the pipeline (at most ~10 per second). */
  onProgress?: (progress: PrepareProgress) => void;
  /** Each log line of the pipeline (no trailing newline). */
  onLog?: (line: string) => void;
  /** Cancelling posts `{type:'cancel'}`; a worker that has not ended `graceMs` later is terminated. */
  token?: vscode.CancellationToken;
  /** How long a cancelled worker may take to stop on its own, in milliseconds (default 5000). */
  graceMs?: number;
}

/**
 * Path of the worker bundle: `<extension>/dist/worker.js`.
 * @param location the extension's root (`context.extensionUri` / `extensionPath`), its `dist/`
 *   folder, or the path of `worker.js` itself.
 */
export function workerScriptPath(location: vscode.Uri | string): string {
  const p = typeof location === 'string' ? location : location.fsPath;
  if (p.endsWith('.js')) return p;
  return path.basename(p) === 'dist' ? path.join(p, 'worker.js') : path.join(p, 'dist', 'worker.js');
}

/**
 * Runs `prepare(options)` in a new worker thread and resolves with its `PrepareResult`
 * (also when `result.ok` is false: the run completed and its report says why).
 *
 * @param location extension root, its `dist/` folder or the `worker.js` path (see `workerScriptPath`).
 * @param options passed unchanged to `prepare` (must be structured-clone data).
 * @param hooks progress / log callbacks and a cancellation token.
 * @returns the result the worker posted with `{type:'done'}`.
 * @throws vscode.CancellationError when `hooks.token` was cancelled and the worker stopped without a
 *   result; Error with the worker's message when `prepare` threw; Error when the worker could not be
 *   started or exited without a result (e.g. `dist/worker.js` missing, out of memory).
 */
export function runPrepareInWorker(location: vscode.Uri | string, options: PrepareOptions, hooks: RunInWorkerHooks = {}): Promise<PrepareResult> {
  const script = workerScriptPath(location);
  // The run's rows are rendered and tokenized by a pool of threads (one per core) under this worker,
  // at a lower priority than the extension host's thread (Linux; see PrepareOptions.lowPriority).
  const data: PrepareWorkerData = {
    job: 'prepare',
    options: { lowPriority: true, ...options, workers: options.workers ?? defaultWorkerCount(options.inputs) },
  };
  return new Promise<PrepareResult>((resolve, reject) => {
    if (hooks.token?.isCancellationRequested) {
      reject(new vscode.CancellationError());
      return;
    }
    let settled = false;
    let cancelled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let worker: Worker;
    try {
      worker = new Worker(script, { workerData: data, name: 'eagle3-prepare' });
    } catch (e) {
      reject(new Error(`Could not start the pipeline worker ${script}: ${e instanceof Error ? e.message : String(e)}`));
      return;
    }
    const cancelSub = hooks.token?.onCancellationRequested(() => {
      if (settled || cancelled) return;
      cancelled = true;
      const msg: ToWorkerMessage = { type: 'cancel' };
      worker.postMessage(msg);
      killTimer = setTimeout(() => {
        hooks.onLog?.(`The worker did not stop within ${hooks.graceMs ?? 5000} ms of the cancellation; terminating it.`);
        void worker.terminate();
      }, hooks.graceMs ?? 5000);
    });
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      if (killTimer) clearTimeout(killTimer);
      cancelSub?.dispose();
      fn();
    };
    worker.on('message', (message: unknown) => {
      if (!isFromWorkerMessage(message)) return;
      switch (message.type) {
        case 'progress':
          if (!settled) hooks.onProgress?.(message.progress);
          break;
        case 'log':
          hooks.onLog?.(message.line);
          break;
        case 'done':
          finish(() => resolve(message.result));
          break;
        case 'error':
          if (message.stack) hooks.onLog?.(message.stack);
          finish(() => reject(cancelled || message.aborted ? new vscode.CancellationError() : new Error(message.message)));
          break;
      }
    });
    worker.on('error', (e) => {
      finish(() => reject(new Error(`The pipeline worker failed: ${e.message}`)));
    });
    worker.on('exit', (code) => {
      finish(() => reject(cancelled ? new vscode.CancellationError() : new Error(`The pipeline worker exited (code ${code}) without a result.`)));
    });
  });
}
