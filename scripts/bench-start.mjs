// Small inputs (issue 26 item 3): how soon a `prepare` run has its first record and how long the whole run takes,
// in a fresh plain-node process (no tsx) running the built bundles. Spawned by scripts/bench.mjs; argument: a JSON
// task { input (a file, or a folder of dataset files), out, tokenizerDir?, mode }; prints one JSON line.
//   mode "cli":   dist/cli.js `prepare --workers 1 --quiet`: `ms` since this process started at the end of the
//                 run, `cpuMs` of the process
//   mode "first": `prepare` in a worker thread (dist/worker.js, as the VS Code command runs it; 1 row worker):
//                 `firstRecordMs` since this process started at the first progress event with a record
//                 written (events come at most every 100 ms: up to 100 ms late), `ms` at its end
import { readdirSync, statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const task = JSON.parse(process.argv[2]);
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

if (task.mode === 'cli') {
  const cli = createRequire(import.meta.url)(join(ROOT, 'dist', 'cli.js'));
  const argv = ['prepare', task.input, '--out', task.out, '--workers', '1', '--quiet', ...(task.tokenizerDir ? ['--tokenizer', task.tokenizerDir] : [])];
  // --quiet still prints the summary: keep this process's stdout for the result line.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = () => true;
  const code = await cli.main(argv);
  const ms = performance.now();
  process.stdout.write = write;
  process.stdout.write(JSON.stringify({ code, ms, cpuMs: cpuMs() }) + '\n');
  process.exit(0);
} else {
  // The worker's job takes files: a folder's dataset files, sorted (the bundled samples are flat).
  const inputs = statSync(task.input).isDirectory()
    ? readdirSync(task.input)
        .filter((f) => /\.(jsonl|ndjson|json|traj|parquet)(\.gz|\.zst)?$/.test(f))
        .sort()
        .map((f) => join(task.input, f))
    : [task.input];
  const w = new Worker(join(ROOT, 'dist', 'worker.js'), {
    workerData: { job: 'prepare', options: { inputs, outDir: task.out, tokenizerDir: task.tokenizerDir, workers: 1 } },
  });
  let first = null;
  const result = await new Promise((res, rej) => {
    w.on('message', (m) => {
      if (m.type === 'progress' && first === null && m.progress.recordsWritten > 0) first = performance.now();
      if (m.type === 'done') res(m.result);
      if (m.type === 'error') rej(new Error(m.message));
    });
    w.on('error', rej);
  });
  const ms = performance.now();
  await w.terminate();
  process.stdout.write(JSON.stringify({ ok: result.ok, firstRecordMs: first, ms, cpuMs: cpuMs(), records: result.totals.recordsWritten }) + '\n');
}
