/**
 * A memory sampler for finding where a run's memory goes (docs/scale.md "Memory"): with the environment variable
 * `EAGLE3_MEM_TRACE` set (`1`, or a sampling period in milliseconds), each thread of a `prepare` run prints one line
 * to stderr every period: `mem <thread> t=<s> rss=<MB> heap=<used>/<total> ext=<MB> ab=<MB> [<what it is doing>]`.
 * `rss` is the whole process's (`process.memoryUsage()`); `heap`, `ext` and `ab` are the thread's own V8 heap
 * (`v8.getHeapStatistics()`), external memory and ArrayBuffers. Off (no timer, no output) without the variable.
 */
import { getHeapStatistics } from 'node:v8';

const MB = 1024 * 1024;

/** The sampling period (ms) asked for by `EAGLE3_MEM_TRACE`, or 0 when tracing is off. */
export function memTracePeriod(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.EAGLE3_MEM_TRACE;
  if (!v || v === '0') return 0;
  const n = Number(v);
  return Number.isFinite(n) && n >= 20 ? Math.floor(n) : 250;
}

/** One sample of the calling thread (sizes in MB, rounded), as {@link startMemTrace} prints it. */
export function memSampleLine(thread: string, t0: number, note = ''): string {
  const u = process.memoryUsage();
  const h = getHeapStatistics();
  const f = (n: number) => (n / MB).toFixed(0);
  return (
    `mem ${thread} t=${((Date.now() - t0) / 1000).toFixed(1)} rss=${f(u.rss)} heap=${f(h.used_heap_size)}/${f(h.total_heap_size)} ` +
    `ext=${f(u.external)} ab=${f(u.arrayBuffers)} malloc=${f(h.malloced_memory)}${note ? ' ' + note : ''}`
  );
}

/**
 * Starts sampling the calling thread when `EAGLE3_MEM_TRACE` is set; `note()` says what the thread is doing (the
 * file being read). @returns a stop function (also unrefs the timer so it never keeps the process alive).
 */
export function startMemTrace(thread: string, note: () => string = () => ''): () => void {
  const period = memTracePeriod();
  if (!period) return () => {};
  const t0 = Date.now();
  const timer = setInterval(() => process.stderr.write(memSampleLine(thread, t0, note()) + '\n'), period);
  timer.unref();
  return () => clearInterval(timer);
}
