// Hover latency benchmark (`npm run bench:hover`): the core path of the record hover
// (src/core/records/recordViewer.ts: parse, jsonc ranges, normalize, chat template, capped tokenization)
// on a 1 MB JSONL line with a warm tokenizer (the embedded Qwen3), and on the longest sample row.
// Every iteration uses a different line text, so no cache of the viewer helps.
//   node --import tsx scripts/bench-hover.mjs [--iterations N] [--cap CHARS] [--mb SIZE]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const { recordViewerFor } = await import('../src/core/records/recordViewer.ts');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const iterations = arg('iterations', 40);
const cap = arg('cap', 8192); // the default of eagle3prep.hover.maxTokenizedCharacters
const mb = arg('mb', 1);

let t = performance.now();
const viewer = recordViewerFor(undefined);
console.log(`tokenizer ${viewer.tokenizer.name} loaded in ${(performance.now() - t).toFixed(0)} ms`);

const para = 'The quick brown fox jumps over the lazy dog; def resize(w, h): return w / max(h, 1)  # 中文 ok\n';
const half = para.repeat(Math.ceil((mb * 500_000) / para.length)).slice(0, mb * 500_000);
const bigLine = (i) =>
  JSON.stringify({
    id: `bench-${i}`,
    messages: [
      { role: 'system', content: `run ${i}` },
      { role: 'user', content: `${i} ${half}` },
      { role: 'assistant', content: `${i} ${half}` },
    ],
  });
const agentic = readFileSync(join(import.meta.dirname, '..', 'samples', 'agentic-trajectories.jsonl'), 'utf8').split('\n')[0];
const agenticLine = (i) => agentic.replace('Fix the failing test', `Fix the failing test (${i})`);

function bench(name, make) {
  for (let i = 0; i < 3; i++) viewer.view({ text: make(-1 - i), file: 'bench.jsonl', line: 1 }, { maxTokenizedChars: cap }); // warm-up
  const ms = [];
  let v;
  for (let i = 0; i < iterations; i++) {
    const text = make(i);
    const t0 = performance.now();
    v = viewer.view({ text, file: 'bench.jsonl', line: 1 }, { maxTokenizedChars: cap });
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const q = (p) => ms[Math.min(ms.length - 1, Math.ceil(p * ms.length) - 1)];
  const len = make(0).length;
  console.log(
    `${name}: ${len.toLocaleString('en-US')} chars, ${v.turns.length} turns, ${v.records.length} records, ${v.totals.estimated ? '≈' : ''}${v.totals.tokens.toLocaleString('en-US')} tokens` +
      ` | ${iterations} runs, cap ${cap}: p50 ${q(0.5).toFixed(1)} ms, p95 ${q(0.95).toFixed(1)} ms, max ${ms[ms.length - 1].toFixed(1)} ms`,
  );
  return q(0.95);
}

const p95 = bench(`${mb} MB line`, bigLine);
bench('agentic sample row 1', agenticLine);
console.log(`target p95 < 50 ms on the ${mb} MB line: ${p95 < 50 ? 'met' : 'NOT met'} (load average ${(await import('node:os')).loadavg()[0].toFixed(2)})`);
