/** The worker pool: same outputs for any number of workers, cancel and crash leave no output behind. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { type PrepareResult } from '../../src/core/run/contract';
import { comparableResult, lenmlModelDir, tempDir, testWorkerScript, writeJsonl } from '../helpers';
import { SHARED_ROWS_ENV } from '../../src/core/run/prepare/sharedExecutor';

/** The pool's worker script: the run's bundled worker.js, else the pool's own choice (src/worker.ts under tsx). */
const workerScript = testWorkerScript();

const SAMPLES = join(__dirname, '..', '..', 'samples');

/** 120 rows of mixed fates and sizes, so that batches finish out of order across workers. */
function mixedRows(): (object | string)[] {
  const rows: (object | string)[] = [];
  const traj = readFileSync(join(SAMPLES, 'agentic-trajectories.jsonl'), 'utf8').split('\n').filter(Boolean);
  for (let i = 0; i < 120; i++) {
    if (i % 40 === 7) rows.push(traj[(i / 40) | 0]);
    else if (i % 11 === 3) rows.push('{"broken": ');
    else if (i % 13 === 5) rows.push({ prompt: `p${i}` });
    else
      rows.push({
        messages: [
          { role: 'user', content: `question ${i} `.repeat(1 + (i % 5)) },
          { role: 'assistant', content: `reply ${i}` },
        ],
      });
  }
  return rows;
}

const strip = comparableResult;

/**
 * {@link mixedRows} in a file, prepared once per process in this thread (1 worker) on DeepSeek-V3's tokenizer: the
 * reference two tests compare pool runs with (read-only: the tests compare their outputs, never change them).
 */
let mixedOneWorker: Promise<{ file: string; out: string; result: PrepareResult }> | undefined;
function mixedInThisThread() {
  return (mixedOneWorker ??= (async () => {
    const file = writeJsonl(mixedRows());
    const out = tempDir();
    return { file, out, result: await prepare({ inputs: [file], outDir: out, workers: 1, tokenizerDir: lenmlModelDir('deepseek_v3') }) };
  })());
}

test('1, 2 and 3 workers write byte-identical outputs and reports (input order)', async () => {
  const one = await mixedInThisThread();
  const file = one.file;
  const outs: string[] = [one.out];
  const results: PrepareResult[] = [one.result];
  // 2 and 3 as N pool workers, then as this thread and N − 1 pool workers (EAGLE3_SHARED_ROWS, sharedExecutor.ts).
  for (const [workers, shared] of [
    [2, false],
    [3, false],
    [2, true],
    [3, true],
  ] as const) {
    const out = tempDir();
    outs.push(out);
    process.env[SHARED_ROWS_ENV] = shared ? '1' : '';
    try {
      results.push(await prepare({ inputs: [file], outDir: out, workers, workerScript, tokenizerDir: lenmlModelDir('deepseek_v3') }));
    } finally {
      delete process.env[SHARED_ROWS_ENV];
    }
  }
  const data = outs.map((o) => readFileSync(join(o, 'data', 'tokenized_data.jsonl'), 'utf8'));
  const prompts = outs.map((o) => readFileSync(join(o, 'prompts_to_generate.jsonl'), 'utf8'));
  const counts = outs.map((o) => readFileSync(join(o, 'token_counts.json'), 'utf8'));
  for (let k = 1; k < outs.length; k++) {
    assert.equal(data[k], data[0], `run ${k}`);
    assert.equal(prompts[k], prompts[0], `run ${k}`);
    assert.equal(counts[k], counts[0], `run ${k}`);
    assert.deepEqual(strip(results[k]), strip(results[0]), `run ${k}`);
  }
  // Input order: source lines never go down.
  const lines = data[0]
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).source.line);
  assert.deepEqual(
    lines,
    [...lines].sort((a, b) => a - b),
  );
  assert.equal(results[0].files[0].rowsRead, 120);
  assert.equal(results[0].files[0].rowsErrored, 10); // i % 11 == 3 except i = 47 (a trajectory row)
});

test('cancel while the pool runs: rejects, no output file appears, earlier outputs stay', async () => {
  const file = writeJsonl(mixedRows());
  const out = tempDir();
  writeFileSync(join(out, 'tokenized_data.jsonl'), 'previous\n'); // a run of the layout before data/
  const ac = new AbortController();
  let progressed = 0;
  await assert.rejects(
    prepare(
      { inputs: [file], outDir: out, workers: 2, workerScript },
      {
        signal: ac.signal,
        onProgress: () => {
          if (++progressed === 1) ac.abort(new Error('cancelled mid-run'));
        },
      },
    ),
    /cancelled mid-run/,
  );
  assert.ok(progressed >= 1);
  assert.deepEqual(readdirSync(out), ['tokenized_data.jsonl']);
  assert.equal(readFileSync(join(out, 'tokenized_data.jsonl'), 'utf8'), 'previous\n');
});

for (const shared of [false, true])
  test(`a worker that crashes fails the run with its message and leaves no output${shared ? ' (this thread and a pool worker)' : ''}`, async () => {
    const dir = tempDir();
    const script = join(dir, 'crash.js');
    // Reports a loaded tokenizer when asked, then takes its first batch (as src/worker.ts does: the batch's claim) and
    // exits without answering, as a worker that runs out of memory does.
    const setup = { tokenizer: { dir: '/t', name: 't', hash: 'h', embeddedDefault: false }, hasTemplates: true, templateCheck: null };
    writeFileSync(
      script,
      `const { parentPort, workerData } = require('node:worker_threads');\n` +
        `parentPort.postMessage({ type: 'ready', ...(workerData.setup ? { setup: ${JSON.stringify(setup)} } : {}) });\n` +
        `parentPort.on('message', (m) => { Atomics.compareExchange(new Int32Array(workerData.claims), m.claim, m.id + 1, -(m.id + 1)); process.exit(3); });\n`,
    );
    const out = tempDir();
    // Enough rows that the worker takes a batch before the run's thread could take every batch back (sharedExecutor.ts).
    const chat = readFileSync(join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), 'utf8').split('\n').filter(Boolean);
    const file = writeJsonl(Array.from({ length: 2000 }, (_, i) => chat[i % chat.length]));
    process.env[SHARED_ROWS_ENV] = shared ? '1' : '';
    try {
      await assert.rejects(prepare({ inputs: [file], outDir: out, workers: 2, workerScript: script }), /exited \(code 3\)/);
    } finally {
      delete process.env[SHARED_ROWS_ENV];
    }
    assert.deepEqual(readdirSync(out), []);
  });

test('with a pool, tokenizer problems found by the workers fail the run naming the folder', async () => {
  const file = join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl');
  const missing = join(tempDir(), 'no-such-model');
  await assert.rejects(
    prepare({ inputs: [file], outDir: tempDir(), workers: 2, workerScript, tokenizerDir: missing }),
    (e: Error) => e.message.includes(missing) && /tokenizer folder not found/.test(e.message),
  );
  const dir = tempDir();
  const { copyFileSync } = require('node:fs');
  copyFileSync(join(lenmlModelDir('qwen3'), 'tokenizer.json'), join(dir, 'tokenizer.json'));
  writeFileSync(join(dir, 'tokenizer_config.json'), '{"eos_token": "<|im_end|>"}');
  const out = tempDir();
  await assert.rejects(
    prepare({ inputs: [file], outDir: out, workers: 2, workerScript, tokenizerDir: dir }),
    (e: Error) => e.message.includes(dir) && /no chat template/.test(e.message),
  );
  assert.deepEqual(readdirSync(out), []);
});

test("rows larger than largeRowBytes are processed in the run's own thread, in their place", async () => {
  const { file, result: a } = await mixedInThisThread();
  const ds = lenmlModelDir('deepseek_v3');
  // The three trajectory rows (~8–17 kB) exceed 4 kB: they go to the main thread between pool batches.
  const b = await prepare({ inputs: [file], outDir: tempDir(), workers: 2, workerScript, tokenizerDir: ds, largeRowBytes: 4096 });
  assert.equal(readFileSync(b.outputs.tokenizedData, 'utf8'), readFileSync(a.outputs.tokenizedData, 'utf8'));
  assert.deepEqual(strip(b), strip(a));
  assert.equal(a.files[0].recordsWritten > 90, true);
});

test('the Rust tokenizer backend with 2 pool workers writes what the JavaScript one does in this thread', async () => {
  const file = writeJsonl(mixedRows());
  const runs: { out: string; r: PrepareResult }[] = [];
  for (const [workers, tokenizerBackend] of [
    [1, 'js'],
    [2, 'rust'],
  ] as const) {
    const out = tempDir();
    runs.push({
      out,
      r: await prepare({ inputs: [file], outDir: out, workers, workerScript, tokenizerBackend, tokenizerDir: lenmlModelDir('qwen3'), grouping: 'merged' }),
    });
  }
  assert.deepEqual(
    runs.map((x) => x.r.tokenizer.backend),
    ['js', 'rust'],
  );
  for (const f of [join('data', 'tokenized_data.jsonl'), 'prompts_to_generate.jsonl', 'token_counts.json', 'problems.jsonl'])
    assert.equal(readFileSync(join(runs[1].out, f), 'utf8'), readFileSync(join(runs[0].out, f), 'utf8'), f);
  const same = (r: PrepareResult) => ({ ...strip(r), tokenizer: { ...r.tokenizer, backend: undefined } });
  assert.deepEqual(same(runs[1].r), same(runs[0].r));
  assert.ok(runs[0].r.totals.recordsWritten > 50);
});
