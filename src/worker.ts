/**
 * worker_threads entry (`dist/worker.js`): runs one `prepare` job off the
 * extension host's thread so tokenizing a large dataset never blocks the UI.
 *
 * Protocol (src/core/run/workerProtocol.ts): `workerData` = `{ job: 'prepare', options }`;
 * the host may post `{ type: 'cancel' }`; the worker posts `progress` / `log`
 * messages, then exactly one `done` (with the PrepareResult) or `error`, and exits.
 * Must not import `vscode` (it is not available inside a worker).
 *
 * The same script is the row pool's worker (`src/core/run/pool.ts`): with
 * `workerData` = `{ job: 'rows', settings }` it loads the tokenizer once and
 * answers each `batch` message with a `results` message (or `failed`).
 *
 * With `workerData` = `{ job: 'service' }` it is one of the extension's service
 * workers (src/core/run/serviceProtocol.ts): it answers `call` messages (a row's
 * view for the hover and the mask view, row checks, the template check, output
 * statistics) until it is terminated.
 */
import { setPriority } from 'node:os';
import { isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import { startMemTrace } from './core/run/prepare/memTrace';
import { batchRows } from './core/run/prepare/pool';
import { prepare } from './core/run/prepare/pipeline';
import { runSetup } from './core/run/prepare/runSetup';
import { RowProcessor } from './core/records/rowProcessor';
import { packRecordLines } from './core/records/rowResult';
import { errorMessage } from './core/errors';
import { handleServiceRequest } from './core/run/editor/service';
import { isServiceCall, type ServiceReply, type ServiceWorkerData } from './core/run/editor/serviceProtocol';
import {
  assertPrepareWorkerData,
  isRowBatchMessage,
  isToWorkerMessage,
  type FromPoolWorkerMessage,
  type FromWorkerMessage,
  type PoolWorkerData,
} from './core/run/prepare/workerProtocol';

function post(port: NonNullable<typeof parentPort>, message: FromWorkerMessage): void {
  port.postMessage(message);
}

async function main(): Promise<void> {
  if (isMainThread || !parentPort) {
    console.error('dist/worker.js is a worker_threads entry; use dist/cli.js from a shell.');
    process.exitCode = 2;
    return;
  }
  const port = parentPort;
  if ((workerData as { job?: unknown } | null)?.job === 'rows') return rowsWorker(port, workerData as PoolWorkerData);
  if ((workerData as { job?: unknown } | null)?.job === 'service') return serviceWorker(port, workerData as ServiceWorkerData);
  const controller = new AbortController();
  const onMessage = (message: unknown): void => {
    if (isToWorkerMessage(message) && message.type === 'cancel' && !controller.signal.aborted) {
      post(port, { type: 'log', line: 'Cancellation requested; stopping…' });
      controller.abort(new Error('cancelled'));
    }
  };
  port.on('message', onMessage);
  try {
    assertPrepareWorkerData(workerData);
    lowerThreadPriority(workerData.options.lowPriority);
    const result = await prepare(workerData.options, {
      signal: controller.signal,
      onProgress: (progress) => post(port, { type: 'progress', progress }),
      log: (line) => post(port, { type: 'log', line }),
    });
    post(port, { type: 'done', result });
  } catch (e) {
    post(port, { type: 'error', message: errorMessage(e), stack: stackOf(e), aborted: controller.signal.aborted });
  } finally {
    // Without a 'message' listener the port no longer keeps the worker alive:
    // it exits once the messages above are flushed.
    port.off('message', onMessage);
  }
}

/**
 * Lowers the calling thread's priority to nice 10 when asked, on Linux only:
 * there `setpriority(PRIO_PROCESS, 0)` (libuv `uv_os_setpriority(0)`) changes
 * the calling thread alone (setpriority(2) NOTES); elsewhere it would lower the
 * whole process, the extension host included.
 */
function lowerThreadPriority(low: boolean | undefined): void {
  if (!low || process.platform !== 'linux') return;
  try {
    setPriority(10);
  } catch {
    /* not permitted: run at normal priority */
  }
}

/** A pool worker: one RowProcessor for the worker's life, one `results` message per `batch`. */
function rowsWorker(port: NonNullable<typeof parentPort>, data: PoolWorkerData): void {
  const send = (m: FromPoolWorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  lowerThreadPriority(data.lowPriority);
  let processor: RowProcessor;
  try {
    processor = new RowProcessor(data.settings);
  } catch (e) {
    send({ type: 'failed', id: -1, message: errorMessage(e), stack: stackOf(e) });
    return;
  }
  let batches = 0;
  const done = data.done && data.index !== undefined ? { cells: new Int32Array(data.done), index: data.index } : null;
  const claims = data.claims ? new Int32Array(data.claims) : null;
  // Batches are answered in the order they came: with an asynchronous tokenizer (processRows awaits its encodeBatch)
  // the next batch waits for the one before (the pool counts a worker's unanswered batches; the run reads them in order).
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (m: unknown) => {
    if (!isRowBatchMessage(m)) return;
    queue = queue.then(async () => {
      // A batch the run's thread took back while it waited here (pool.ts takeBack): answered as skipped.
      const mine = !claims || m.claim === undefined || Atomics.compareExchange(claims, m.claim, m.id + 1, -(m.id + 1)) === m.id + 1;
      let reply: FromPoolWorkerMessage;
      let transfer: ArrayBuffer[] = [];
      if (!mine) reply = { type: 'results', id: m.id, results: [], skipped: true };
      else {
        batches++;
        try {
          // Rows sent as their line's bytes are parsed here, not in the thread that reads the file (pool.ts batchRows).
          const results = await processor.processRows(batchRows(m), m.file, m.fileBase, m.normalize);
          // The record lines cross as UTF-8 bytes in one transferred buffer: no copy, and the run's thread writes them as they are.
          transfer = packRecordLines(results);
          reply = { type: 'results', id: m.id, results };
        } catch (e) {
          reply = { type: 'failed', id: m.id, message: `${m.file}: ${errorMessage(e)}`, stack: stackOf(e) };
        }
      }
      if (done) Atomics.add(done.cells, done.index, 1);
      send(reply, transfer);
    });
  });
  startMemTrace(`worker${threadId}`, () => `batches=${batches}`);
  const ready = async () =>
    send({ type: 'ready', ...(data.setup ? { setup: await runSetup(processor.tok, data.settings, processor.backendFallback, processor.builder) } : {}) });
  queue = queue.then(ready).catch((e: unknown) => send({ type: 'failed', id: -1, message: errorMessage(e), stack: stackOf(e) }));
}

/** A service worker: answers each `call` with one `reply`; calls that await I/O interleave. */
function serviceWorker(port: NonNullable<typeof parentPort>, data: ServiceWorkerData): void {
  lowerThreadPriority(data.lowPriority);
  port.on('message', (m: unknown) => {
    if (!isServiceCall(m)) return;
    const reply = (r: ServiceReply) => port.postMessage(r);
    handleServiceRequest(m.request, () => reply({ type: 'started', id: m.id })).then(
      (result) => reply({ type: 'reply', id: m.id, result }),
      (e: unknown) => {
        const name = e instanceof Error ? (e.constructor?.name ?? 'Error') : 'Error';
        reply({ type: 'reply', id: m.id, error: { name, message: errorMessage(e) } });
      },
    );
  });
}

/** The stack of a thrown Error, if it has a readable one. Never throws. */
function stackOf(e: unknown): string | undefined {
  try {
    return e instanceof Error && typeof e.stack === 'string' ? e.stack : undefined;
  } catch {
    return undefined;
  }
}

void main();
