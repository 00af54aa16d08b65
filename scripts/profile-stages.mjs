// Where `prepare`'s CPU time goes, by pipeline stage (issue 26 item 2).
//
// Runs the built CLI (`dist/cli.js`, its pool workers `dist/worker.js`) under `node --cpu-prof` (every thread
// writes its own profile), maps each sample's stack through the bundles' source maps to the original files, and
// charges the sample to a stage: the innermost frame that belongs to one (leaf first), so the template engine
// called from the mask rules counts as render, and JSON.parse called by a reader as read/parse. Setup
// (tokenizer load, template compilation and the run's template check) is charged to its own rows by the
// outermost frame instead. Samples of the garbage collector are reported apart; idle samples are left out.
//
// Usage: node scripts/profile-stages.mjs INPUT [--tokenizer DIR] [--workers N] [--grouping exact|merged]
//                                        [--format jsonl|parquet|both] [--runs 3] [--top 8] [--json]
// Prints per stage the CPU ms (median over --runs runs) and its share; --top lists the hottest functions
// (self time) of each stage of the last run. The profiles' sampling interval is node's default (~1 ms).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    tokenizer: { type: 'string' },
    workers: { type: 'string', default: '1' },
    grouping: { type: 'string', default: 'exact' },
    format: { type: 'string', default: 'jsonl' },
    runs: { type: 'string', default: '3' },
    top: { type: 'string', default: '0' },
    json: { type: 'boolean', default: false },
  },
});
if (positionals.length === 0) {
  console.error('usage: node scripts/profile-stages.mjs INPUT [--tokenizer DIR] [--workers N] [--grouping exact|merged] [--runs 3] [--top 8]');
  process.exit(2);
}

/** Source maps of the bundles, by the file URL the profile names. */
const maps = new Map();
function sourceOf(frame) {
  const url = frame.url;
  if (!url) return '';
  if (!url.startsWith('file://')) return url;
  const file = fileURLToPath(url);
  if (!maps.has(url)) {
    let m;
    try {
      m = new SourceMap(JSON.parse(readFileSync(file + '.map', 'utf8')));
    } catch {
      m = null;
    }
    maps.set(url, m);
  }
  const m = maps.get(url);
  if (!m || frame.lineNumber < 0) return file;
  const e = m.findEntry(frame.lineNumber, frame.columnNumber);
  return e && e.originalSource ? e.originalSource : file;
}
/** `file:line` of a frame in its original source (1-based line), for anonymous functions. */
function placeOf(frame) {
  const src = sourceOf(frame);
  const m = frame.url?.startsWith('file://') ? maps.get(frame.url) : null;
  const e = m && frame.lineNumber >= 0 ? m.findEntry(frame.lineNumber, frame.columnNumber) : null;
  return `${basename(src)}${e && e.originalLine !== undefined ? ':' + (e.originalLine + 1) : ''}`;
}

/** The stage a frame's source belongs to (null: none, look further out). Order matters: first match. */
const STAGES = [
  ['other (start-up, module loading, node internals)', /node:internal\/(modules|bootstrap)\//],
  ['tokenize', /@huggingface\/tokenizers|src\/core\/tokenizers\//],
  ['render', /@huggingface\/jinja|src\/core\/templates\//],
  [
    'mask (rules, token mask)',
    /src\/core\/records\/(mask|maskTypes|targetRules|completion|mergedRecord|generationBlocks|turns|specialTokens|dataTokens|split)\.ts/,
  ],
  ['normalize', /src\/core\/formats\//],
  ['read/parse', /src\/core\/read\/|hyparquet\/|fzstd|node:internal\/(fs|streams)|node:fs|node:zlib|readline/],
  [
    'write (JSON lines, Parquet, report)',
    /src\/core\/run\/(output|parquetOutput|outputStats|report|speculatorsOutput|runOutputs|outputFiles)\.ts|hyparquet-writer|apache-arrow/,
  ],
  ['records (assembly, JSON line, counts)', /src\/core\/records\/|src\/core\/run\/tokenCounts\.ts|src\/core\/trainers\//],
  ['worker messaging', /src\/core\/run\/(pool|workerProtocol)\.ts|src\/worker\.ts|node:internal\/worker|messageport|node:internal\/per_context\/messageport/],
  ['run loop (pipeline, accounting)', /src\/core\/run\//],
];
/** Setup, charged by the outermost frame: whatever these call is setup. */
const SETUP = [
  ['setup: tokenizer load', /^(loadTokenizer|cachedTokenizer|loadRustTokenizer|loadTokenizerWithBackend)$/],
  ['setup: template check', /^(runSetup|checkTemplate|templateCheck)$/],
];

function analyze(profile) {
  const nodes = new Map();
  for (const n of profile.nodes) nodes.set(n.id, n);
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map();
  const selfFn = new Map();
  for (const n of profile.nodes) {
    const name = n.callFrame.functionName;
    if (name === '(idle)') {
      stageOf.set(n.id, null);
      continue;
    }
    if (name === '(garbage collector)') {
      stageOf.set(n.id, 'garbage collector');
      continue;
    }
    if (name === '(program)') {
      stageOf.set(n.id, 'V8/runtime (program)');
      continue;
    }
    const chain = [];
    for (let id = n.id; id !== undefined; id = parent.get(id)) chain.push(nodes.get(id).callFrame);
    let stage = null;
    for (let k = chain.length - 1; k >= 0 && !stage; k--) for (const [s, re] of SETUP) if (re.test(chain[k].functionName)) stage = s;
    for (let k = 0; k < chain.length && !stage; k++) {
      const src = sourceOf(chain[k]);
      for (const [s, re] of STAGES)
        if (re.test(src)) {
          stage = s;
          break;
        }
    }
    stageOf.set(n.id, stage ?? 'other (start-up, module loading, node internals)');
    selfFn.set(n.id, name ? `${name} ${basename(sourceOf(n.callFrame)) || n.callFrame.url}` : `(anonymous) ${placeOf(n.callFrame)}`);
  }
  const ms = new Map();
  const fns = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the time before sample i; charge the time after it (next delta) to it.
    const dt = (timeDeltas[i + 1] ?? 0) / 1000;
    const s = stageOf.get(samples[i]);
    if (!s) continue;
    ms.set(s, (ms.get(s) ?? 0) + dt);
    const f = selfFn.get(samples[i]);
    if (f) {
      const byStage = fns.get(s) ?? new Map();
      byStage.set(f, (byStage.get(f) ?? 0) + dt);
      fns.set(s, byStage);
    }
  }
  return { ms, fns };
}

function runOnce() {
  const dir = mkdtempSync(join(tmpdir(), 'eagle3-prof-'));
  const out = join(dir, 'out');
  const args = [
    '--cpu-prof',
    '--cpu-prof-dir',
    join(dir, 'prof'),
    join(ROOT, 'dist', 'cli.js'),
    'prepare',
    ...positionals,
    '--out',
    out,
    '--workers',
    values.workers,
    '--grouping',
    values.grouping,
    '--format',
    values.format,
    '--quiet',
    ...(values.tokenizer ? ['--tokenizer', values.tokenizer] : []),
  ];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0 && r.status !== 3) throw new Error(`prepare failed (${r.status}):\n${r.stderr}`);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  const total = new Map();
  const fns = new Map();
  for (const f of readdirSync(join(dir, 'prof'))) {
    const a = analyze(JSON.parse(readFileSync(join(dir, 'prof', f), 'utf8')));
    for (const [s, v] of a.ms) total.set(s, (total.get(s) ?? 0) + v);
    for (const [s, m] of a.fns) {
      const t = fns.get(s) ?? new Map();
      for (const [k, v] of m) t.set(k, (t.get(k) ?? 0) + v);
      fns.set(s, t);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return { total, fns, tokens: report.totals.total_tokens, threads: 1 + Number(values.workers > 1 ? values.workers : 0) };
}

const runs = [];
for (let i = 0; i < Number(values.runs); i++) runs.push(runOnce());
const stages = [...new Set(runs.flatMap((r) => [...r.total.keys()]))];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const rows = stages.map((s) => ({ stage: s, ms: median(runs.map((r) => r.total.get(s) ?? 0)) })).sort((a, b) => b.ms - a.ms);
const sum = rows.reduce((a, r) => a + r.ms, 0);
const perRow = rows.filter((r) => !r.stage.startsWith('setup') && !r.stage.startsWith('other'));
const perRowSum = perRow.reduce((a, r) => a + r.ms, 0);
if (values.json) {
  process.stdout.write(JSON.stringify({ rows, sum, perRowSum, tokens: runs[0].tokens }) + '\n');
} else {
  console.log(`| stage | CPU ms (median of ${runs.length}) | share of all | share of the row work |`);
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of rows) {
    const rowShare = perRow.includes(r) ? `${((100 * r.ms) / perRowSum).toFixed(1)} %` : '';
    console.log(`| ${r.stage} | ${r.ms.toFixed(0)} | ${((100 * r.ms) / sum).toFixed(1)} % | ${rowShare} |`);
  }
  console.log(`| **all (idle left out)** | **${sum.toFixed(0)}** | | |`);
  console.log(
    `\nTokens written: ${runs[0].tokens.toLocaleString('en-US')}; row work ${perRowSum.toFixed(0)} ms = ${((runs[0].tokens / perRowSum) * 1000).toFixed(0)} tok per CPU s`,
  );
  const top = Number(values.top);
  if (top > 0) {
    const last = runs[runs.length - 1];
    for (const r of rows) {
      const m = last.fns.get(r.stage);
      if (!m) continue;
      const list = [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
      console.log(`\n${r.stage}: ${list.map(([k, v]) => `${k} ${v.toFixed(0)}`).join('; ')}`);
    }
  }
}
