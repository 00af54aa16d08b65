// What a second row-processing isolate costs (issue 26, docs/scale.md "1 → 2 workers"): the rows of a JSONL file
// processed by RowProcessor in worker threads without the pool (no structured clone of results, no reading thread),
// as one worker doing every batch of 16 rows, or as two workers each doing every other batch (what the pool gives them),
// at once or one after the other. Prints, per worker, the CPU s of its thread (Linux: /proc/thread-self/schedstat, so
// other load on the machine shows in the wall time, not here) for the tokenizer load and for the rows, and the rows'
// CPU s per 1,008 rows (`--every N`: per N, a multiple of 16) in order: the first thousand rows of a fresh isolate cost about twice the later ones (JIT
// tier-up, caches filling), and each isolate pays that once.
//   node --import tsx scripts/isolate-warmup.ts FILE.jsonl [one|two|two-in-turn] [--tokenizer DIR] [--every N] [--repeat-head]
// --repeat-head: the file's first 1,008 rows four times (the same rows again: what remains once the caches hold them).
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { RowProcessor } from '../src/core/records/rowProcessor';

interface Job {
  file: string;
  tokenizerDir?: string;
  part: number;
  parts: number;
  repeatHead: boolean;
  every: number;
}

/** This thread's CPU seconds so far. */
function threadCpu(): number {
  return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e9;
}

const round = (x: number) => Math.round(x * 100) / 100;

async function work(job: Job): Promise<{ load: number; rows: number; n: number; perEvery: number[] }> {
  const lines = readFileSync(job.file, 'utf8').split('\n').filter(Boolean);
  let rows = lines.map((l, i) => ({ line: i + 1, value: JSON.parse(l) as unknown }));
  if (job.repeatHead) rows = [0, 1, 2, 3].flatMap(() => rows.slice(0, 1008));
  const batches = [];
  for (let i = 16 * job.part; i < rows.length; i += 16 * job.parts) batches.push(rows.slice(i, i + 16));
  const t0 = threadCpu();
  const processor = new RowProcessor(job.tokenizerDir ? { tokenizerDir: job.tokenizerDir } : {});
  const t1 = threadCpu();
  const perEvery: number[] = [];
  let n = 0;
  let last = t1;
  for (const b of batches) {
    n += (await processor.processRows(b, job.file, 'bench.jsonl')).length;
    if (n % job.every === 0) {
      const t = threadCpu();
      perEvery.push(round(t - last));
      last = t;
    }
  }
  return { load: round(t1 - t0), rows: round(threadCpu() - t1), n, perEvery };
}

async function main(): Promise<void> {
  if (!isMainThread) {
    parentPort!.postMessage(await work(workerData as Job));
    return;
  }
  const args = process.argv.slice(2);
  const file = args[0];
  const mode = args[1] ?? 'one';
  const t = args.indexOf('--tokenizer');
  const tokenizerDir = t >= 0 ? args[t + 1] : undefined;
  const e = args.indexOf('--every');
  const every = e >= 0 ? Number(args[e + 1]) : 1008;
  if (!file || !['one', 'two', 'two-in-turn'].includes(mode) || !(every > 0 && every % 16 === 0)) {
    console.error('usage: node --import tsx scripts/isolate-warmup.ts FILE.jsonl [one|two|two-in-turn] [--tokenizer DIR] [--every N] [--repeat-head]');
    process.exit(2);
  }
  const parts = mode === 'one' ? 1 : 2;
  const run = (part: number) =>
    new Promise<void>((resolve, reject) => {
      const job: Job = { file, tokenizerDir, part, parts, repeatHead: args.includes('--repeat-head'), every };
      const w = new Worker(`require('tsx/cjs'); require(${JSON.stringify(__filename)});`, { eval: true, workerData: job });
      w.once('error', reject);
      w.once('message', (m) => {
        console.log(JSON.stringify({ mode, worker: part, ...m }));
        void w.terminate().then(() => resolve());
      });
    });
  if (mode === 'two-in-turn') for (let part = 0; part < parts; part++) await run(part);
  else await Promise.all(Array.from({ length: parts }, (_, part) => run(part)));
}

void main();
