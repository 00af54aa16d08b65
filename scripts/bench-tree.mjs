// Datasets-view population benchmark (`npm run bench:tree`): generates N dataset files (default
// 1,000: JSONL of a few shapes and sizes, some gzip-compressed, some JSON arrays, a tenth with a
// prepared output folder) and times what the view does for them, without VS Code:
//   cold  — scanDataset on every file (format detection, streamed row count, output state),
//           SCAN_CONCURRENCY at a time, as the view does when it first opens;
//   warm  — the same with each file's previous scan (nothing changed: only output states re-read),
//           as after a report.json or tokenizer change;
//   one   — re-scanning a single changed file (per-file invalidation).
//   node --import tsx scripts/bench-tree.mjs [--files 1000] [--rows 200] [--keep]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { mapLimit, scanDataset, tokenizerFilesHash } from '../src/core/run/editor/datasetScan.ts';

const arg = (k, d) => {
  const i = process.argv.indexOf(`--${k}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const N = arg('files', 1000);
const ROWS = arg('rows', 200);
const CONCURRENCY = 4; // = SCAN_CONCURRENCY of src/vscode/scanQueue.ts

const root = mkdtempSync(join(tmpdir(), 'eagle3-bench-tree-'));
const shapes = [
  (i) => ({
    conversations: [
      { from: 'human', value: `Question ${i}: what is ${i} + ${i}?` },
      { from: 'gpt', value: `It is ${2 * i}.` },
    ],
  }),
  (i) => ({
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: `Say ${i}.` },
      { role: 'assistant', content: `${i}` },
    ],
  }),
  (i) => ({
    trajectory: [
      { role: 'user', text: `Fix bug ${i}` },
      { role: 'ai', text: 'DISCUSSION\nopen file' },
      { role: 'user', text: 'ok' },
      { role: 'ai', text: 'submit' },
    ],
  }),
  (i) => ({ prompt: `Write a haiku about ${i}.` }),
];
let bytes = 0;
const hashT = performance.now();
const tokenizerHash = tokenizerFilesHash(undefined);
const hashMs = performance.now() - hashT;
const t0 = performance.now();
for (let f = 0; f < N; f++) {
  const dir = join(root, `group-${Math.floor(f / 50)}`);
  mkdirSync(dir, { recursive: true });
  const rows = ROWS + (f % 7) * 30;
  const shape = shapes[f % shapes.length];
  const lines = Array.from({ length: rows }, (_, i) => JSON.stringify(shape(i)));
  let name;
  let data;
  if (f % 10 === 3) {
    name = `ds-${f}.jsonl.gz`;
    data = gzipSync(lines.join('\n') + '\n');
  } else if (f % 10 === 7) {
    name = `ds-${f}.json`;
    data = '[\n' + lines.join(',\n') + '\n]\n';
  } else {
    name = `ds-${f}.jsonl`;
    data = lines.join('\n') + '\n';
  }
  writeFileSync(join(dir, name), data);
  bytes += data.length;
  if (f % 10 === 0) {
    // a prepared output: the report.json shape the view reads (PrepareResult, one file entry)
    const out = join(dir, `ds-${f}.eagle3`);
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'tokenized_data.jsonl'), '');
    writeFileSync(
      join(out, 'report.json'),
      JSON.stringify({
        ok: true,
        failures: [],
        outDir: out,
        outputs: {
          tokenizedData: join(out, 'tokenized_data.jsonl'),
          promptsToGenerate: join(out, 'prompts_to_generate.jsonl'),
          reportJson: join(out, 'report.json'),
          reportMd: join(out, 'report.md'),
        },
        tokenizer: { dir: '', name: 'Qwen3', hash: tokenizerHash, embeddedDefault: true },
        files: [
          {
            file: join(dir, name),
            format: 'sharegpt',
            evidence: [],
            rowsRead: rows,
            rowsWritten: rows,
            recordsWritten: rows,
            rowsSetAside: 0,
            rowsDropped: 0,
            rowsErrored: 0,
            dropped: {},
            errors: [],
            notes: {},
            trainableTokens: 0,
            totalTokens: 0,
          },
        ],
      }),
    );
  }
}
const files = [];
for (let g = 0; g * 50 < N; g++)
  for (let f = g * 50; f < Math.min(N, (g + 1) * 50); f++) {
    const ext = f % 10 === 3 ? '.jsonl.gz' : f % 10 === 7 ? '.json' : '.jsonl';
    files.push(join(root, `group-${g}`, `ds-${f}${ext}`));
  }
console.log(
  `generated ${N} dataset files (${(bytes / 2 ** 20).toFixed(1)} MB, ${ROWS}-${ROWS + 180} rows each) in ${((performance.now() - t0) / 1000).toFixed(1)} s under ${root}`,
);

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
async function pass(label, previous) {
  const t = performance.now();
  const scans = await mapLimit(files, CONCURRENCY, (f, i) => scanDataset(f, { tokenizerHash, previous: previous?.[i] }));
  const ms = performance.now() - t;
  const per = scans.map((s) => s.elapsedMs);
  const errors = scans.filter((s) => s.error).length;
  const states = scans.reduce((a, s) => ({ ...a, [s.output.state]: (a[s.output.state] ?? 0) + 1 }), {});
  console.log(
    `${label.padEnd(5)} ${N} files in ${ms.toFixed(0)} ms (${(ms / N).toFixed(2)} ms/file; per-file p50 ${pct(per, 50).toFixed(1)} ms, p95 ${pct(per, 95).toFixed(1)} ms; concurrency ${CONCURRENCY}); ${errors} unreadable; output states ${JSON.stringify(states)}`,
  );
  return scans;
}
const cold = await pass('cold');
const sumRows = cold.reduce((a, s) => a + (s.rows ?? 0), 0);
const formats = cold.reduce((a, s) => ({ ...a, [s.format]: (a[s.format] ?? 0) + 1 }), {});
console.log(`      ${sumRows.toLocaleString('en-US')} rows counted; formats ${JSON.stringify(formats)}`);
await pass('warm', cold);
const one = performance.now();
writeFileSync(files[1], `${JSON.stringify(shapes[1](0))}\n`);
const s1 = await scanDataset(files[1], { tokenizerHash, previous: cold[1] });
console.log(`one   re-scan of a changed file: ${(performance.now() - one).toFixed(1)} ms (now ${s1.rows} row)`);
console.log(`tokenizer files hash (embedded Qwen3, first call): ${hashMs.toFixed(0)} ms`);
console.log(
  `machine: ${cpus().length} cores, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} (shared machine: numbers are noisy)`,
);
if (!process.argv.includes('--keep')) rmSync(root, { recursive: true, force: true });
