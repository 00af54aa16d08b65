// `npm run bench`: throughput, scaling, memory and responsiveness of `prepare` on
// generated datasets in the seed shapes (scripts/bench-data.mjs), with the embedded
// Qwen3 tokenizer (rewrites history) and DeepSeek-V3 (prefix-stable).
//
// For each tokenizer and data shape, in fresh processes (scripts/bench-child.ts):
//   raw tokenizer tok/s  tokens / time inside the tokenizer library's encode on the
//                        rendered record texts (measured during the 1-worker run)
//   pipeline tok/s       tokens written / wall time of `prepare` with 1 worker
//   ratio                pipeline / raw (target ≥ 75 % on chat data)
//   rows/s at 1 and 2 workers, speed-up (target ≥ 1.8×), peak RSS of each run,
//   max event-loop delay of the run's main thread with 2 workers
// then the extension host's view (prepare in a worker thread, 2 pool workers): the
// host thread's max event-loop delay (target < 50 ms).
//
// Then the cost of long conversations (issue 13), one core, from source with the tokenizer timed:
// agent runs of 10, 40, 80 and 160 messages with the same total (--scaling N messages, default 1,600),
// with DeepSeek-V3 and Llama-3.1 (prefix-stable) and Qwen3 (rewrites history) under grouping exact and
// merged: tokens written, the conversations' tokens rendered once, amplification, CPU seconds (the
// tokenizer's load excluded, reported apart), microseconds per rendered token (its growth from 10 to 160
// messages), raw tokenizer tok/s on the same record texts, the pipeline / raw ratio, and the share of
// prefix renders served from each conversation's one traced render. --linear on,off also runs the path
// before linear-time rendering (every prefix rendered on its own) for comparison.
//
// Then issue 26's ratios, in the same run (--ratios, default on): on 80-message agent runs (--ratio-runs of them,
// default 20) with DeepSeek-V3 and Llama-3.1 (prefix-stable) and Qwen3 merged, and on 4,000 short chats
// (--ratio-chats) with DeepSeek-V3 and Qwen3 merged, medians of --repeat runs (default 3), each in a fresh process,
// every figure warm and cold:
//   prepare tok/CPU s    tokens written ÷ CPU s of `prepare` with 1 worker: cold = the first run after the tokenizer is
//                        loaded in a fresh process (and with its load); warm = in another process, after an untimed
//                        prepare of other data of the same shape (another seed, 1/10 of the rows, at least 2 agent runs
//                        / 200 chats), never the measured text; checked to do exactly the cold run's work
//                        (bench-child.ts sameAs); the tokenizer caches' hits in each measured window are printed
//   raw Rust tok/CPU s   the Rust `tokenizers` binding encoding exactly the texts the run encoded, one at a time: warm =
//                        after encoding the texts prepare encoded on that other data, cold = from the first call in a
//                        fresh process
//   ratio                prepare ÷ raw Rust (targets: ≥ 0.75 on agent runs, ≥ 0.6 on chats, ≥ 0.5 for Qwen3 merged)
//   TRL render-once      tokens of each conversation rendered once ÷ CPU s of rendering it once and encoding it once
//                        (Rust), TRL's cost (warm = after doing the same on the other data's conversations, cold = from
//                        the first); prepare's speed on the same measure (conversation tokens ÷ its CPU s) ÷ it
//   warm ratios pair warm with warm, cold ratios cold with cold (--cold-comparators off: cold prepare with the warm
//   comparators, the measure before the warm run; it is printed with the rounds either way)
// then 1 → 2 workers (--speedup, default on): the built CLI with 1 and 2 workers on --speedup-runs agent runs of 80
// messages (default 600, DeepSeek-V3) and --speedup-chats chats (default 20,000, Qwen3), large enough that each worker's
// set-up is not what is measured: wall and CPU s, medians of --repeat, the load average around each run;
// and small inputs (--start, default on; scripts/bench-start.mjs, plain node, built bundles): on the bundled
// samples and on 160 agent runs of 10 messages, the time to the first record (prepare in a worker thread, as the
// VS Code command runs it) and the whole CLI run's wall and CPU time, from process start, medians of --repeat.
//
// Usage: npm run bench [-- --rows N] [--shapes chat,reasoning,agent|none] [--tokenizers qwen3,deepseek_v3]
//                      [--workers 1,2] [--memory 2G] [--real DIR] [--scaling N|0] [--linear on|off|on,off] [--keep DIR]
//                      [--ratios on|off] [--ratio-runs 20] [--ratio-chats 4000] [--ratio-sets S] [--repeat 3] [--start on|off]
//                      [--backend auto|rust|js] [--speedup on|off] [--speedup-runs 600] [--speedup-chats 20000]
//                      [--cold-comparators on|off]
//   --child bundle|tsx  how the measuring processes run scripts/bench-child.ts: bundled by esbuild and run from the V8 code cache like dist/cli.js (default:
//                 the code as it ships; .cache/bench-child.js) or from source under tsx (its loader wraps every
//                 call between modules, so from-source figures are lower than the shipped code's)
//   --ratio-sets S  only these rows of the ratios (comma-separated data:tokenizer, e.g. agent80:deepseek_v3,agent80:llama3_1;
//                 data agent80 or chats, tokenizer qwen3, deepseek_v3 or llama3_1); default: every row
//   --cold-comparators off  the ratios without the comparators' cold processes (the cold prepare is then divided by
//                 the warm comparators); default on
//   --backend B   every prepare with --tokenizer-backend B (default: the run's default, auto); the "tokenizer library"
//                 column is then that library's encode inside the run (tokenizers.js encode_text, or the Rust encodeBatch)
//   --rows N      chat rows (default 10000); reasoning rows N/10, agent runs N/500 (at least 8);
//                 the extension-host view runs on the first N/5 chats
//   --memory SIZE also prepare a generated mixed file of SIZE (e.g. 2G) with 2 workers and
//                 DeepSeek-V3, printing peak RSS and RSS at each quarter of the input
//   --real DIR    also prepare a folder of real dataset files (e.g. the real-data/files folder of the shared material) with the built
//                 CLI as a user runs it (`prepare DIR --skip-failed-files --quiet`, embedded tokenizer), once per
//                 count of --workers, printing each run's peak RSS (the whole process: every thread, the heaps
//                 and the memory outside them) and CPU seconds (target: under 400 MB with 2 workers).
//                 `--shapes none --scaling 0 --real DIR` runs only this.
// Prints a Markdown table ready for the README, with the command line and the machine.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem, availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parseBytes, writeAgentRuns, writeDataset } from './bench-data.mjs';
import { NODE_BUNDLE } from './bundle-options.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    shapes: { type: 'string', default: 'chat,reasoning,agent' },
    tokenizers: { type: 'string', default: 'qwen3,deepseek_v3' },
    workers: { type: 'string', default: '1,2' },
    memory: { type: 'string' },
    real: { type: 'string' },
    scaling: { type: 'string', default: '1600' },
    linear: { type: 'string', default: 'on' },
    keep: { type: 'string' },
    ratios: { type: 'string', default: 'on' },
    'ratio-runs': { type: 'string', default: '20' },
    'ratio-chats': { type: 'string', default: '4000' },
    'ratio-sets': { type: 'string' },
    repeat: { type: 'string', default: '3' },
    start: { type: 'string', default: 'on' },
    speedup: { type: 'string', default: 'on' },
    'speedup-runs': { type: 'string', default: '600' },
    'speedup-chats': { type: 'string', default: '20000' },
    backend: { type: 'string' },
    'cold-comparators': { type: 'string', default: 'on' },
    child: { type: 'string', default: 'bundle' },
  },
});
const rows = Number(values.rows);
const counts = { chat: rows, reasoning: Math.max(1, Math.round(rows / 10)), agent: Math.max(8, Math.round(rows / 500)), mixed: rows };
const workerCounts = values.workers.split(',').map(Number);
const tokenizers = values.tokenizers.split(',');
const tokDir = (t) => (t === 'qwen3' ? undefined : join(dirname(require.resolve(`@lenml/tokenizer-${t}`)), '..', 'models'));
const tokName = (t) => ({ qwen3: 'Qwen3 (embedded)', deepseek_v3: 'DeepSeek-V3', llama3_1: 'Llama-3.1' })[t] ?? t;
const median = (xs) => {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return v.length === 0 ? NaN : v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

// Pool workers run dist/worker.js, as the shipped CLI does.
const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

// The measuring process: bench-child.ts bundled as the CLI is (scripts/bundle-options.mjs), at the same depth as dist/
// so that paths relative to the bundle (the embedded tokenizer, dist/worker.js) resolve alike; or from source.
if (values.child !== 'tsx' && values.child !== 'bundle') throw new Error(`--child: bundle or tsx, not ${values.child}`);
let childArgs; // built on the first measurement (a run of the built CLI alone needs no bundle)
function childCommand() {
  if (childArgs) return childArgs;
  if (values.child === 'tsx') return (childArgs = ['--import', 'tsx', join(ROOT, 'scripts', 'bench-child.ts')]);
  // As dist/cli.js is: a loader (src/boot/codeCache.ts) running the bundle from the V8 code cache an earlier process
  // wrote (the first process of a new build compiles it and writes the entry; EAGLE3_NO_CODE_CACHE=1: compiled each time).
  const out = join(ROOT, '.cache', 'bench-child.js');
  require('esbuild').buildSync({
    entryPoints: [join(ROOT, 'scripts', 'bench-child.ts')],
    outfile: join(ROOT, '.cache', 'bench-child-bundle.js'),
    ...NODE_BUNDLE,
  });
  require('esbuild').buildSync({
    stdin: {
      contents:
        "import { join } from 'node:path'; import { runBundle } from './src/boot/codeCache'; runBundle(join(__dirname, 'bench-child-bundle.js'), module);",
      resolveDir: ROOT,
      sourcefile: 'bench-child-loader.ts',
      loader: 'ts',
    },
    outfile: out,
    ...NODE_BUNDLE,
  });
  return (childArgs = [out]);
}

const work = values.keep ?? mkdtempSync(join(tmpdir(), 'eagle3-bench-'));
mkdirSync(work, { recursive: true });
const log = (s) => process.stderr.write(s + '\n');

function child(task, env) {
  // --backend: every prepare (from source, the built CLI, the host's worker) with that --tokenizer-backend.
  if (values.backend && (task.task === 'prepare' || task.task === 'host' || task.task === 'memory')) task = { ...task, backend: values.backend };
  const r = spawnSync(process.execPath, [...childCommand(), JSON.stringify(task)], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  if (r.status !== 0) throw new Error(`bench child failed (${JSON.stringify(task)}):\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** A measured window's tokenizer-cache hits: `found / looked up = rate`, or – without a cache (the Rust backend). */
const cacheRate = (e) => (e?.pieces ? `${fmt(e.found)} / ${fmt(e.pieces)} = ${fmt((100 * e.found) / e.pieces, 1)} %` : '–');
const fmt = (n, d = 0) =>
  n === undefined || n === null || Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const t0 = Date.now();
const rowsOut = [];
const hostOut = [];
for (const shape of values.shapes === 'none' ? [] : values.shapes.split(',')) {
  const input = join(work, `${shape}.jsonl`);
  const g = await writeDataset(input, shape, { rows: counts[shape] });
  log(`data: ${shape} ${g.rows} rows, ${(g.bytes / 1e6).toFixed(1)} MB`);
  for (const tk of tokenizers) {
    const res = {};
    for (const w of workerCounts) {
      const out = join(work, `out-${shape}-${tk}-${w}`);
      res[w] = child({ task: 'prepare', input, tokenizerDir: tokDir(tk), workers: w, out });
      rmSync(out, { recursive: true, force: true });
      log(
        `  ${tk} ${w} worker(s): ${(res[w].ms / 1000).toFixed(1)} s, ${fmt(res[w].rows / (res[w].ms / 1000))} rows/s, ${fmt(res[w].tokens / (res[w].ms / 1000))} tok/s, peak RSS ${res[w].peakRssMB} MB, lag max ${res[w].lagMaxMs.toFixed(0)} ms`,
      );
    }
    const one = res[1] ?? res[workerCounts[0]];
    const two = res[2];
    const rawTps = one.raw ? one.raw.tokens / (one.raw.ms / 1000) : NaN;
    const pipeTps = one.tokens / (one.ms / 1000);
    rowsOut.push({
      tokenizer: tokName(tk),
      shape,
      rows: one.rows,
      records: one.records,
      tokens: one.tokens,
      rawTps,
      pipeTps,
      ratio: pipeTps / rawTps,
      rps1: one.rows / (one.ms / 1000),
      rps2: two ? two.rows / (two.ms / 1000) : NaN,
      rss1: one.peakRssMB,
      rss2: two?.peakRssMB,
      lag2: two?.lagMaxMs,
    });
  }
  if (shape === 'chat' && workerCounts.includes(2)) {
    const hostInput = join(work, 'chat-host.jsonl');
    await writeDataset(hostInput, 'chat', { rows: Math.max(1, Math.round(rows / 5)) });
    for (const tk of tokenizers) {
      const h = child({ task: 'host', input: hostInput, tokenizerDir: tokDir(tk), workers: 2, out: join(work, `out-host-${tk}`) });
      rmSync(join(work, `out-host-${tk}`), { recursive: true, force: true });
      hostOut.push({ tokenizer: tokName(tk), shape, ...h });
      log(
        `  host view, ${tk}: run ${(h.ms / 1000).toFixed(1)} s, host event loop max delay ${h.lagMaxMs.toFixed(1)} ms (p99 ${h.lagP99Ms.toFixed(1)} ms; idle baseline ${h.idleLagMaxMs.toFixed(1)} ms; longest timer delay ${h.worstDelay.ms.toFixed(0)} ms at ${(h.worstDelay.at / 1000).toFixed(1)} s)`,
      );
    }
  }
}

// Long conversations: the same total messages in runs of 10 … 160 messages, one core.
const scaling = [];
const scalingTotal = Number(values.scaling);
if (scalingTotal > 0) {
  for (const n of [10, 40, 80, 160]) {
    const input = join(work, `agent-${n}.jsonl`);
    const g = await writeAgentRuns(input, n, scalingTotal);
    log(`data: ${g.rows} agent runs of ${n} messages, ${(g.bytes / 1e6).toFixed(2)} MB`);
    for (const [tk, grouping, linear] of [
      ['deepseek_v3', 'exact'],
      ['llama3_1', 'exact'],
      ['qwen3', 'exact'],
      ['qwen3', 'merged'],
    ].flatMap(([tk, g]) => values.linear.split(',').map((l) => [tk, g, l]))) {
      const out = join(work, `out-scaling-${n}-${tk}-${grouping}-${linear}`);
      const r = child({ task: 'prepare', input, tokenizerDir: tokDir(tk), workers: 1, out, grouping, linear: linear !== 'off', warm: true });
      rmSync(out, { recursive: true, force: true });
      // CPU time of the process (one thread does all the work): robust to other load on the machine.
      const rawTps = r.raw ? r.raw.tokens / (r.raw.cpuMs / 1000) : NaN;
      const pipeTps = r.tokens / (r.cpuMs / 1000);
      scaling.push({
        n,
        tokenizer: tokName(tk),
        grouping,
        linear,
        rows: r.rows,
        records: r.records,
        tokens: r.tokens,
        rendered: r.rendered,
        ms: r.ms,
        cpuMs: r.cpuMs,
        loadCpuMs: r.loadCpuMs,
        prefixes: r.prefixes,
        rawTps,
        pipeTps,
      });
      log(
        `  ${n} messages, ${tk} ${grouping}, linear ${linear}: ${(r.cpuMs / 1000).toFixed(1)} s CPU (${(r.ms / 1000).toFixed(1)} s wall; tokenizer load ${(r.loadCpuMs / 1000).toFixed(1)} s apart), ${fmt(r.tokens)} tokens written (${fmt(r.rendered)} rendered once), ${fmt(pipeTps)} tok per CPU s, raw ${fmt(rawTps)}; prefix renders from one pass ${r.prefixes.proven}/${r.prefixes.proven + r.prefixes.fallback}`,
      );
    }
  }
}

// Issue 26's ratios: prepare against the raw Rust tokenizer on the same texts, against TRL's render-once cost, 1 → 2 workers.
const ratios = [];
if (values.ratios !== 'off') {
  const repeat = Math.max(1, Number(values.repeat));
  const agentInput = join(work, 'ratio-agent80.jsonl');
  const ga = await writeAgentRuns(agentInput, 80, 80 * Number(values['ratio-runs']));
  const chatInput = join(work, 'ratio-chat.jsonl');
  const gc = await writeDataset(chatInput, 'chat', { rows: Number(values['ratio-chats']) });
  // The warm figures' warm-up: other data of the same shape (another seed), 1/10 of the rows, at least 2 agent runs /
  // 200 chats — never the measured text, which a real run does not see twice (docs/scale.md "Warm and cold").
  const WARMUP_SEED = 1009;
  const warmupOf = { agent80: join(work, 'ratio-agent80-warmup.jsonl'), chats: join(work, 'ratio-chat-warmup.jsonl') };
  const wa = await writeAgentRuns(warmupOf.agent80, 80, 80 * Math.max(2, Math.round(Number(values['ratio-runs']) / 10)), WARMUP_SEED);
  const wc = await writeDataset(warmupOf.chats, 'chat', { rows: Math.max(200, Math.round(Number(values['ratio-chats']) / 10)), seed: WARMUP_SEED });
  log(
    `ratios: ${ga.rows} agent runs of 80 messages (${(ga.bytes / 1e6).toFixed(2)} MB), ${gc.rows} chats (${(gc.bytes / 1e6).toFixed(2)} MB); ${repeat} runs each; ` +
      `warm-ups on ${wa.rows} other agent runs, ${wc.rows} other chats (seed ${WARMUP_SEED})`,
  );
  const cases = [
    ['agent80', agentInput, 'deepseek_v3', 'exact'],
    ['agent80', agentInput, 'llama3_1', 'exact'],
    ['agent80', agentInput, 'qwen3', 'merged'],
    ['chats', chatInput, 'deepseek_v3', 'exact'],
    ['chats', chatInput, 'qwen3', 'merged'],
  ];
  const sets = values['ratio-sets']?.split(',').map((x) => x.trim());
  const picks = (x, data, tk) => x === data || x === `${data}:${tk}`; // a data set's rows, or one row
  const unknown = sets?.filter((x) => !cases.some(([data, , tk]) => picks(x, data, tk)));
  if (unknown?.length) throw new Error(`--ratio-sets: no ratio row ${unknown.join(', ')} (rows: ${cases.map(([d, , t]) => `${d}:${t}`).join(', ')})`);
  const coldComparators = values['cold-comparators'] !== 'off';
  const perCpu = (tokens, cpuMs) => tokens / (cpuMs / 1000);
  for (const [data, input, tk, grouping] of cases.filter(([data, , tk]) => !sets || sets.some((x) => picks(x, data, tk)))) {
    // Untimed: the template check's cache entry (records/templateCheckCache.ts; keyed by the tokenizer, the options, the
    // code) written by a run of one row with the rounds' options, so that both runs of every round below read it alike
    // (a cold run that wrote it would do the check's work and the warm run not: bench-child.ts sameAs refuses that).
    const prime = join(work, `prime-${data}.jsonl`);
    writeFileSync(prime, readFileSync(input, 'utf8').split('\n')[0] + '\n');
    child({ task: 'prepare', input: prime, tokenizerDir: tokDir(tk), workers: 1, out: join(work, 'out-prime'), grouping, warm: true });
    rmSync(join(work, 'out-prime'), { recursive: true, force: true });
    const warmupInput = warmupOf[data];
    const p = [];
    const w = [];
    const rust = [];
    const trl = [];
    const rustCold = [];
    const trlCold = [];
    const loads = []; // the 1-minute load average before each round and after the last
    for (let k = 0; k < repeat; k++) {
      loads.push(loadavg()[0]);
      const coldOut = join(work, `out-ratio-${data}-${tk}-cold`);
      const warmOut = join(work, `out-ratio-${data}-${tk}-warm`);
      const texts = join(work, `texts-${data}-${tk}.json`);
      const warmupTexts = join(work, `texts-${data}-${tk}-warmup.json`);
      const coldWork = join(work, `work-${data}-${tk}.json`);
      const task = { input, tokenizerDir: tokDir(tk), workers: 1 };
      // Cold: a fresh process, prepare right after the tokenizer load; its encoded texts (the Rust encode's input) and
      // its work kept for the warm run's check; then the comparators cold (fresh processes, no warm-up).
      p.push(child({ task: 'prepare', ...task, out: coldOut, grouping, warm: true, texts, work: coldWork }));
      if (coldComparators) {
        rustCold.push(child({ task: 'rust', ...task, out: coldOut, texts, cold: true }));
        trlCold.push(child({ task: 'trl', ...task, out: coldOut, cold: true }));
      }
      // Warm: another process warmed up on the other input (untimed), then prepare of the measured input, checked to do
      // exactly the cold run's work (bench-child.ts sameAs); then the comparators warmed up on that other input's
      // texts (the ones its prepare encoded) and conversations.
      w.push(
        child({ task: 'prepare', ...task, out: warmOut, grouping, warm: true, warmupInput, warmupTexts, sameAs: { work: coldWork, texts, out: coldOut } }),
      );
      for (const d of [coldOut, warmOut, coldWork]) rmSync(d, { recursive: true, force: true });
      rust.push(child({ task: 'rust', ...task, out: warmOut, texts, warmupTexts }));
      trl.push(child({ task: 'trl', ...task, out: warmOut, warmupInput }));
      for (const f of [texts, warmupTexts]) rmSync(f, { force: true });
    }
    loads.push(loadavg()[0]);
    // The cold prepare against the cold comparators (fresh processes, no warm-up), or without them (--cold-comparators
    // off) against the warm ones, the measure before the warm run.
    const rustC = coldComparators ? rustCold : rust;
    const trlC = coldComparators ? trlCold : trl;
    const r = {
      data,
      tokenizer: tokName(tk),
      grouping,
      rows: p[0].rows,
      records: p[0].records,
      tokens: p[0].tokens,
      rendered: p[0].rendered,
      prepTps: median(w.map((x) => perCpu(x.tokens, x.cpuMs))),
      prepColdTps: median(p.map((x) => perCpu(x.tokens, x.cpuMs))),
      prepLoadTps: median(p.map((x) => perCpu(x.tokens, x.cpuMs + x.loadCpuMs))),
      prepConvTps: median(w.map((x) => perCpu(x.rendered, x.cpuMs))),
      // The tokenizer caches in the measured window (the same every round: same texts, same warm-up).
      cache: { warm: w[0].raw, cold: p[0].raw, warmup: w[0].warmup },
      loads,
      prepConvColdTps: median(p.map((x) => perCpu(x.rendered, x.cpuMs))),
      jsTps: median(w.map((x) => perCpu(x.raw.tokens, x.raw.cpuMs))),
      jsColdTps: median(p.map((x) => perCpu(x.raw.tokens, x.raw.cpuMs))),
      rustTps: median(rust.map((x) => perCpu(x.tokens, x.cpuMs))),
      rustColdTps: median(rustCold.map((x) => perCpu(x.tokens, x.cpuMs))),
      trlTps: median(trl.map((x) => perCpu(x.tokens, x.cpuMs))),
      trlColdTps: median(trlCold.map((x) => perCpu(x.tokens, x.cpuMs))),
      trlRenderShare: median(trl.map((x) => x.renderCpuMs / x.cpuMs)),
      trlColdRenderShare: median(trlCold.map((x) => x.renderCpuMs / x.cpuMs)),
      // The ratios are paired per round (prepare, then Rust and TRL right after it, in the same minute) and their
      // median taken: the machine's speed drifts by up to 2x over a run, which a ratio of two medians taken from
      // different rounds would carry into the result.
      rustRounds: w.map((x, k) => perCpu(x.tokens, x.cpuMs) / perCpu(rust[k].tokens, rust[k].cpuMs)),
      trlRounds: w.map((x, k) => perCpu(x.rendered, x.cpuMs) / perCpu(trl[k].tokens, trl[k].cpuMs)),
      rustColdRounds: p.map((x, k) => perCpu(x.tokens, x.cpuMs) / perCpu(rustC[k].tokens, rustC[k].cpuMs)),
      trlColdRounds: p.map((x, k) => perCpu(x.rendered, x.cpuMs) / perCpu(trlC[k].tokens, trlC[k].cpuMs)),
      // Cold prepare ÷ warm comparators: the measure before the warm run (for comparison with earlier tables).
      rustMixedRounds: p.map((x, k) => perCpu(x.tokens, x.cpuMs) / perCpu(rust[k].tokens, rust[k].cpuMs)),
      trlMixedRounds: p.map((x, k) => perCpu(x.rendered, x.cpuMs) / perCpu(trl[k].tokens, trl[k].cpuMs)),
    };
    for (const k of ['rust', 'trl', 'rustCold', 'trlCold', 'rustMixed', 'trlMixed']) r[`${k}Ratio`] = median(r[`${k}Rounds`]);
    ratios.push(r);
    log(
      `  ${data} ${tk} ${grouping}: tokenizer caches, pieces found / looked up: warm ${cacheRate(r.cache.warm)}, cold ${cacheRate(r.cache.cold)} (warm-up: ${fmt(r.cache.warmup.rows)} rows, ${fmt(r.cache.warmup.tokens)} tokens, ${fmt(r.cache.warmup.cpuMs / 1000, 1)} CPU s untimed)`,
    );
    log(
      `  ${data} ${tk} ${grouping}: prepare warm ${fmt(r.prepTps)} / cold ${fmt(r.prepColdTps)} tok/CPU s (${fmt(r.prepLoadTps)} cold with the load), raw Rust warm ${fmt(r.rustTps)} / cold ${fmt(r.rustColdTps)}; TRL warm ${fmt(r.trlTps)} / cold ${fmt(r.trlColdTps)}; ` +
        `÷ Rust warm ${fmt(r.rustRatio, 2)} (rounds ${r.rustRounds.map((x) => fmt(x, 2)).join(', ')}), cold ${fmt(r.rustColdRatio, 2)} (${r.rustColdRounds.map((x) => fmt(x, 2)).join(', ')}); ` +
        `÷ TRL warm ${fmt(r.trlRatio, 2)} (${r.trlRounds.map((x) => fmt(x, 2)).join(', ')}), cold ${fmt(r.trlColdRatio, 2)} (${r.trlColdRounds.map((x) => fmt(x, 2)).join(', ')})`,
    );
  }
}

// Issue 26's 1 → 2 workers: the built CLI on inputs large enough that the second thread's set-up (its start and
// tokenizer load: ~0.5 s of CPU once the tokenizer cache holds the tokenizer) and the run's serial part (process start,
// the first tokenizer load, the template check, the commit: ~0.6 s of wall) are a few percent of the run: 600 agent runs
// of 80 messages (21 MB, ~12 s with 1 worker on the idle machine; 200 runs were ~4 s, where the serial part alone capped
// the speed-up near 1.6×) and 20,000 chats (Qwen3 embedded, ~23 s), 1 and 2 workers
// interleaved, --repeat times; the load average is read before and after each run (the machine's other load shows in
// the wall time, not in the CPU s).
const speedups = [];
if (values.speedup !== 'off') {
  const agentInput = join(work, 'speedup-agent80.jsonl');
  const ga = await writeAgentRuns(agentInput, 80, 80 * Number(values['speedup-runs']));
  const chatInput = join(work, 'speedup-chat.jsonl');
  const gc = await writeDataset(chatInput, 'chat', { rows: Number(values['speedup-chats']) });
  log(`1 → 2 workers: ${ga.rows} agent runs of 80 messages (${(ga.bytes / 1e6).toFixed(1)} MB), ${gc.rows} chats (${(gc.bytes / 1e6).toFixed(1)} MB)`);
  for (const [data, input, tk, g] of [
    [`${ga.rows} agent runs of 80 messages`, agentInput, 'deepseek_v3', ga],
    [`${gc.rows} chats`, chatInput, 'qwen3', gc],
  ]) {
    // Untimed: the tokenizer cache gets the tokenizer's prepared form (a first run on a machine writes it once).
    child({
      task: 'prepare',
      input: join(ROOT, 'samples', 'chat-sharegpt-human-gpt.jsonl'),
      tokenizerDir: tokDir(tk),
      workers: 1,
      out: join(work, 'out-warm'),
      dist: true,
    });
    rmSync(join(work, 'out-warm'), { recursive: true, force: true });
    // '2s': 2 workers as the run's thread and one pool worker (EAGLE3_SHARED_ROWS=1, src/core/run/prepare/sharedExecutor.ts).
    const runs = { 1: [], 2: [], '2s': [] };
    for (let k = 0; k < Math.max(1, Number(values.repeat)); k++) {
      for (const n of [1, 2, '2s']) {
        const out = join(work, `out-speedup-${n}`);
        const before = loadavg()[0];
        const r = child(
          { task: 'prepare', input, tokenizerDir: tokDir(tk), workers: n === '2s' ? 2 : n, out, dist: true },
          n === '2s' ? { EAGLE3_SHARED_ROWS: '1' } : undefined,
        );
        rmSync(out, { recursive: true, force: true });
        runs[n].push({ ...r, load: [before, loadavg()[0]] });
        log(
          `  ${data}, ${tk}, ${n} worker(s): ${fmt(r.ms / 1000, 1)} s wall, ${fmt(r.cpuMs / 1000, 1)} s CPU, load average ${before.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
        );
      }
    }
    const s = {
      data,
      tokenizer: tokName(tk),
      mb: g.bytes / 1e6,
      rows: runs[1][0].rows,
      tokens: runs[1][0].tokens,
      wall1: median(runs[1].map((x) => x.ms)),
      wall2: median(runs[2].map((x) => x.ms)),
      cpu1: median(runs[1].map((x) => x.cpuMs)),
      cpu2: median(runs[2].map((x) => x.cpuMs)),
      wall2s: median(runs['2s'].map((x) => x.ms)),
      cpu2s: median(runs['2s'].map((x) => x.cpuMs)),
      loads: [...runs[1], ...runs[2], ...runs['2s']].flatMap((x) => x.load),
    };
    speedups.push(s);
    log(
      `  ${data}: 1 → 2 workers ${fmt(s.wall1 / s.wall2, 2)}× wall (shared: ${fmt(s.wall1 / s.wall2s, 2)}×); CPU ${fmt(s.cpu1 / 1000, 1)} → ${fmt(s.cpu2 / 1000, 1)} s (shared: ${fmt(s.cpu2s / 1000, 1)} s)`,
    );
  }
}

// Small inputs: time to the first record and the whole run, from process start (plain node, built bundles).
const starts = [];
if (values.start !== 'off') {
  const agent10 = join(work, 'start-agent10.jsonl');
  await writeAgentRuns(agent10, 10, 1600);
  for (const [label, input] of [
    ['bundled samples (samples/)', join(ROOT, 'samples')],
    ['160 agent runs of 10 messages', agent10],
  ]) {
    const first = [];
    const cli = [];
    for (let k = 0; k < Math.max(1, Number(values.repeat)); k++) {
      for (const mode of ['first', 'cli']) {
        const out = join(work, `out-start-${mode}`);
        const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'bench-start.mjs'), JSON.stringify({ input, out, mode })], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`bench-start failed:\n${r.stderr}`);
        (mode === 'first' ? first : cli).push(JSON.parse(r.stdout.trim().split('\n').pop()));
        rmSync(out, { recursive: true, force: true });
      }
    }
    const s = {
      label,
      firstMs: median(first.map((x) => x.firstRecordMs)),
      workerMs: median(first.map((x) => x.ms)),
      cliMs: median(cli.map((x) => x.ms)),
      cliCpuMs: median(cli.map((x) => x.cpuMs)),
      records: first[0].records,
    };
    starts.push(s);
    log(
      `  start, ${label}: first record at ${fmt(s.firstMs)} ms (run in a worker thread done at ${fmt(s.workerMs)} ms); CLI run ${fmt(s.cliMs)} ms wall, ${fmt(s.cliCpuMs)} ms CPU`,
    );
  }
}

let memory = null;
if (values.memory) {
  const input = join(work, 'memory.jsonl');
  const g = await writeDataset(input, 'mixed', { maxBytes: parseBytes(values.memory) });
  log(`memory data: ${g.rows} rows, ${(g.bytes / 1e9).toFixed(2)} GB`);
  const m = child({ task: 'memory', input, tokenizerDir: tokDir('deepseek_v3'), workers: 2, out: join(work, 'out-memory') });
  rmSync(join(work, 'out-memory'), { recursive: true, force: true });
  memory = { ...m, bytes: statSync(input).size };
  if (!values.keep) rmSync(input, { force: true });
}
/**
 * `prepare` of a folder of real files with the built CLI, in a fresh process per worker count: peak RSS
 * (getrusage maxrss of the process, all threads) and CPU seconds (user + system: the machine's other load does not count).
 */
const realOut = [];
if (values.real) {
  // Printed by the CLI process itself as it exits: its own peak RSS (KB on Linux) and CPU time.
  const probe =
    'data:text/javascript,process.on("exit",()=>{const u=process.resourceUsage();process.stderr.write("\\nbench-rss "+u.maxRSS+" "+(u.userCPUTime+u.systemCPUTime)+"\\n")})';
  for (const w of workerCounts) {
    const out = join(work, `out-real-${w}`);
    const t = Date.now();
    const r = spawnSync(
      process.execPath,
      ['--import', probe, join(ROOT, 'dist', 'cli.js'), 'prepare', values.real, '--out', out, '--skip-failed-files', '--workers', String(w), '--quiet'],
      { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    const m = /bench-rss (\d+) (\d+)/.exec(r.stderr ?? '');
    if (r.status !== 0 || !m) throw new Error(`prepare ${values.real} --workers ${w} failed (exit ${r.status}):\n${(r.stderr ?? '').slice(-2000)}`);
    rmSync(out, { recursive: true, force: true });
    realOut.push({ workers: w, peakMB: Math.round(Number(m[1]) / 1024), cpuS: Number(m[2]) / 1e6, wallS: (Date.now() - t) / 1000 });
    log(`real data, ${w} worker(s): peak RSS ${realOut.at(-1).peakMB} MB`);
  }
}
if (!values.keep) rmSync(work, { recursive: true, force: true });

const cpu = cpus()[0]?.model ?? 'unknown CPU';
const lines = [
  `Command: \`npm run bench${process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : ''}\` — ${cpu}, ${availableParallelism()} cores, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}; ${((Date.now() - t0) / 1000).toFixed(0)} s in all.`,
];
if (rowsOut.length)
  lines.push(
    '',
    '| tokenizer | data | rows | records | tokens | raw tokenizer tok/s | pipeline tok/s (1 worker) | ratio | rows/s 1 worker | rows/s 2 workers | speed-up | peak RSS 1 / 2 workers | max main-thread lag, 2 workers |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rowsOut.map(
      (r) =>
        `| ${r.tokenizer} | ${r.shape} | ${fmt(r.rows)} | ${fmt(r.records)} | ${fmt(r.tokens)} | ${fmt(r.rawTps)} | ${fmt(r.pipeTps)} | ${fmt(100 * r.ratio)} % | ${fmt(r.rps1, 1)} | ${fmt(r.rps2, 1)} | ${fmt(r.rps2 / r.rps1, 2)}× | ${r.rss1} / ${r.rss2 ?? '–'} MB | ${r.lag2 === undefined ? '–' : fmt(r.lag2, 0) + ' ms'} |`,
    ),
  );
if (scaling.length) {
  const base = (r) => scaling.find((x) => x.n === 10 && x.tokenizer === r.tokenizer && x.grouping === r.grouping && x.linear === r.linear);
  lines.push(
    '',
    `Long conversations, one core: agent runs of 10 … 160 messages, ${fmt(scalingTotal)} messages per dataset (about the same tokens); load average ${loadavg()[0].toFixed(1)} at the end. ` +
      'Times are CPU seconds of the run after the tokenizer is loaded (wall seconds beside them), so other load on the machine does not count. ' +
      'µs per token = CPU time ÷ the tokens of the conversations rendered once; growth = that figure ÷ the 10-message one; ' +
      'ratio = tokens written per CPU second ÷ the raw tokenizer encode on the same record texts; one pass = prefix renders served from the ' +
      "conversation's one traced render (linear on) ÷ all the prefix renders the records needed (linear off: every prefix rendered on its own).",
    '',
    '| messages per run | tokenizer | grouping | linear | runs | records | tokens written | rendered once | amplification | CPU s (wall s) | µs per token | growth vs 10 | raw tokenizer tok/s | pipeline tok/s | ratio | one pass |',
    '| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...scaling.map((r) => {
      const us = (1000 * r.cpuMs) / r.rendered;
      const b = base(r);
      const p = r.prefixes;
      const onePass = p && p.proven + p.fallback > 0 ? `${fmt((100 * p.proven) / (p.proven + p.fallback))} %` : '–';
      return `| ${r.n} | ${r.tokenizer} | ${r.grouping} | ${r.linear} | ${fmt(r.rows)} | ${fmt(r.records)} | ${fmt(r.tokens)} | ${fmt(r.rendered)} | ${fmt(r.tokens / r.rendered, 2)}× | ${fmt(r.cpuMs / 1000, 1)} (${fmt(r.ms / 1000, 1)}) | ${fmt(us, 1)} | ${b ? fmt(us / ((1000 * b.cpuMs) / b.rendered), 2) + '×' : '–'} | ${fmt(r.rawTps)} | ${fmt(r.pipeTps)} | ${fmt(100 * (r.pipeTps / r.rawTps))} % | ${onePass} |`;
    }),
  );
}
/** The cache column: pieces looked up (the same warm and cold: checked), and the share found, warm / cold. */
const cacheCell = (c) =>
  c.warm?.pieces ? `${fmt(c.warm.pieces)}; ${fmt((100 * c.warm.found) / c.warm.pieces, 1)} % / ${fmt((100 * c.cold.found) / c.cold.pieces, 1)} %` : '–';
if (ratios.length) {
  const coldAgainst =
    values['cold-comparators'] === 'off'
      ? 'against the warm comparators (`--cold-comparators off`: not measured cold)'
      : 'against the comparators measured cold too (a fresh process each, the clock from the first call, no warm-up)';
  lines.push(
    '',
    `Issue 26 ratios, per core (tokenizer backend ${values.backend ?? 'auto'}; CPU seconds of one process; medians of ${values.repeat} runs; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' / ')} at the end). ` +
      '**Warm** (the per-core comparison, each side warmed up on other data of the same shape, never on the measured text): ' +
      'prepare = tokens written ÷ CPU s of `prepare` with 1 worker in a process that first ran an untimed `prepare` of another generated input ' +
      "(another seed, 1/10 of the rows) with the same tokenizer and grouping, checked to do exactly the cold run's encodes, renders and outputs; " +
      'raw Rust = the Rust `tokenizers` binding encoding the same texts (every text the run tokenized), one call at a time, after encoding the texts ' +
      'prepare encoded on the other input; TRL = each conversation rendered once and encoded once (Rust), its tokens ÷ that CPU s (render share in brackets), ' +
      "after the other input's conversations, against prepare's conversation tokens (rendered once) ÷ its CPU s. " +
      `**Cold**: \`prepare\` in a fresh process, right after the tokenizer load (with the load in brackets), ${coldAgainst}. ` +
      "Library = the tokenizer library's encode inside the run (JavaScript or Rust, per the backend). Cache = the pre-tokenized pieces (words) " +
      "the run's encodes looked up in the tokenizer's caches (pieceEncoder.ts's piece cache, wordCache.ts's word cache) and the share found there, " +
      'in the measured window (– with the Rust backend): how much of the warm gain is the cache. 1 → 2 workers: the next table.',
    '',
    '| data | tokenizer | grouping | rows | records | tokens written | prepare tok/CPU s, warm / cold (cold with load) | raw Rust tok/CPU s, warm / cold | **prepare ÷ Rust, warm** | prepare ÷ Rust, cold | tokenizer library tok/CPU s, warm / cold | pieces looked up; found in the cache, warm / cold | TRL render-once tok/CPU s, warm / cold (render share) | prepare (conversation tokens) tok/CPU s, warm / cold | **prepare ÷ TRL, warm** | prepare ÷ TRL, cold |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...ratios.map(
      (r) =>
        `| ${r.data} | ${r.tokenizer} | ${r.grouping} | ${fmt(r.rows)} | ${fmt(r.records)} | ${fmt(r.tokens)} | ${fmt(r.prepTps)} / ${fmt(r.prepColdTps)} (${fmt(r.prepLoadTps)}) | ${fmt(r.rustTps)} / ${fmt(r.rustColdTps)} | **${fmt(r.rustRatio, 2)}** | ${fmt(r.rustColdRatio, 2)} | ${fmt(r.jsTps)} / ${fmt(r.jsColdTps)} | ${cacheCell(r.cache)} | ${fmt(r.trlTps)} / ${fmt(r.trlColdTps)} (${fmt(100 * r.trlRenderShare)} / ${fmt(100 * r.trlColdRenderShare)} %) | ${fmt(r.prepConvTps)} / ${fmt(r.prepConvColdTps)} | **${fmt(r.trlRatio, 2)}** | ${fmt(r.trlColdRatio, 2)} |`,
    ),
    '',
    'Each ratio is the median of per-round ratios (each round: the cold prepare process and the cold comparators, then the warm prepare ' +
      'process and the warm comparators, in the same minutes); the rounds, warm ÷ Rust, ÷ TRL; cold ÷ Rust, ÷ TRL; and cold prepare ÷ warm ' +
      'comparators (medians in brackets), after the 1-minute load average before each round and after the last: ' +
      ratios
        .map(
          (r) =>
            `${r.data} ${r.tokenizer} ${r.grouping}, load ${r.loads.map((x) => fmt(x, 1)).join(' → ')}: ` +
            `warm ${r.rustRounds.map((x) => fmt(x, 2)).join(' / ')}, ${r.trlRounds.map((x) => fmt(x, 2)).join(' / ')}; ` +
            `cold ${r.rustColdRounds.map((x) => fmt(x, 2)).join(' / ')}, ${r.trlColdRounds.map((x) => fmt(x, 2)).join(' / ')}; ` +
            `cold ÷ warm ${r.rustMixedRounds.map((x) => fmt(x, 2)).join(' / ')} (${fmt(r.rustMixedRatio, 2)}), ${r.trlMixedRounds.map((x) => fmt(x, 2)).join(' / ')} (${fmt(r.trlMixedRatio, 2)})`,
        )
        .join('; ') +
      '.',
  );
}
if (speedups.length) {
  lines.push(
    '',
    `1 → 2 workers (issue 26: ≥ 1.8× wall on an idle 2-core machine): the built CLI, \`--workers 1\` and \`--workers 2\` interleaved, medians of ${values.repeat}; ` +
      'wall s and CPU s of the whole process (every thread); the load average (1 min) read before and after each run, its range in the last column — ' +
      "with other processes on the cores the wall speed-up is not the idle machine's; the CPU s say what the second worker costs.",
    '',
    '| data | tokenizer | MB | rows | tokens | wall s, 1 worker | wall s, 2 workers | **speed-up (wall)** | CPU s, 1 worker | CPU s, 2 workers | 2 shared (`EAGLE3_SHARED_ROWS=1`): wall s, **speed-up**, CPU s | load average |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...speedups.map(
      (s) =>
        `| ${s.data} | ${s.tokenizer} | ${fmt(s.mb, 1)} | ${fmt(s.rows)} | ${fmt(s.tokens)} | ${fmt(s.wall1 / 1000, 1)} | ${fmt(s.wall2 / 1000, 1)} | **${fmt(s.wall1 / s.wall2, 2)}×** | ${fmt(s.cpu1 / 1000, 1)} | ${fmt(s.cpu2 / 1000, 1)} | ${fmt(s.wall2s / 1000, 1)}, **${fmt(s.wall1 / s.wall2s, 2)}×**, ${fmt(s.cpu2s / 1000, 1)} | ${fmt(Math.min(...s.loads), 1)}–${fmt(Math.max(...s.loads), 1)} |`,
    ),
  );
}
if (starts.length) {
  lines.push(
    '',
    `Small inputs (Qwen3 embedded, 1 worker, built bundles, plain node; ms since the process started, medians of ${values.repeat}):`,
    '',
    '| input | records | first record (worker thread, as the VS Code command) | whole run there | CLI run, wall | CLI run, CPU |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...starts.map((s) => `| ${s.label} | ${fmt(s.records)} | ${fmt(s.firstMs)} ms | ${fmt(s.workerMs)} ms | ${fmt(s.cliMs)} ms | ${fmt(s.cliCpuMs)} ms |`),
  );
}
if (hostOut.length) {
  lines.push('', 'Extension host view (prepare in a worker thread with 2 pool workers, the host thread idle):', '');
  for (const h of hostOut)
    lines.push(
      `- ${h.tokenizer}, ${h.shape}: ${fmt(h.rows)} rows in ${(h.ms / 1000).toFixed(1)} s; host event loop max delay ${h.lagMaxMs.toFixed(1)} ms (p99 ${h.lagP99Ms.toFixed(1)} ms; the same thread idle before the run: max ${h.idleLagMaxMs.toFixed(1)} ms; longest timer delay at ${(h.worstDelay.at / 1000).toFixed(1)} s of the run), ${h.messages} messages`,
    );
}
if (memory) {
  lines.push(
    '',
    `Memory: ${(memory.bytes / 1e9).toFixed(2)} GB mixed JSONL (${fmt(memory.rows)} rows), DeepSeek-V3, 2 workers: peak RSS ${memory.peakRssMB} MB; RSS at 25/50/75/100 % of the run: ${memory.rssQuartersMB.join(' / ')} MB; ${(memory.ms / 1000).toFixed(0)} s.`,
  );
}
if (realOut.length) {
  lines.push(
    '',
    `Real files: \`prepare ${values.real} --skip-failed-files --quiet\` (embedded Qwen3 tokenizer, built CLI); load average ${loadavg()[0].toFixed(1)} at the end.`,
    '',
    '| workers | peak RSS | CPU s (wall s) |',
    '| ---: | ---: | ---: |',
    ...realOut.map(
      (r) =>
        `| ${r.workers} | ${r.peakMB} MB${r.workers === 2 ? (r.peakMB < 400 ? ' (< 400 MB target: met)' : ' (< 400 MB target: not met)') : ''} | ${fmt(r.cpuS, 1)} (${fmt(r.wallS, 1)}) |`,
    ),
  );
}
process.stdout.write(lines.join('\n') + '\n');
