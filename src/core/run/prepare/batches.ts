/** How `prepare`'s per-file loop sends rows out (docs/scale.md): batch sizes, a row's key in its file, and waiting on a batch under a cancel. */

/**
 * Resolves as `p` does, or rejects with the signal's reason as soon as it
 * aborts (a cancel does not wait for a long batch; the pool is then closed).
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Rows per batch sent to a worker, and the input bytes at which a batch is sent early (a large row goes alone). */
export const BATCH_ROWS = 16;
export const BATCH_BYTES = 64 * 1024;

/** A row's place in its file: its line, and its index on that line when several rows share it. */
export function rowKey(r: { line: number; element?: number }): string {
  return r.element === undefined ? String(r.line) : `${r.line}[${r.element}]`;
}
