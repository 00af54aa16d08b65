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
// Usage: npm run bench [-- --rows N] [--shapes chat,reasoning,agent|none] [--tokenizers qwen3,deepseek_v3]
//                      [--workers 1,2] [--memory 2G] [--real DIR] [--scaling N|0] [--linear on|off|on,off] [--keep DIR]
//   --rows N      chat rows (default 10000); reasoning rows N/10, agent runs N/500 (at least 8);
//                 the extension-host view runs on the first N/5 chats
//   --memory SIZE also prepare a generated mixed file of SIZE (e.g. 2G) with 2 workers and
//                 DeepSeek-V3, printing peak RSS and RSS at each quarter of the input
//   --real DIR    also prepare a folder of real dataset files (e.g. ../shared/real-data/files) with the built
//                 CLI as a user runs it (`prepare DIR --skip-failed-files --quiet`, embedded tokenizer), once per
//                 count of --workers, printing each run's peak RSS (the whole process: every thread, the heaps
//                 and the memory outside them) and CPU seconds (target: under 400 MB with 2 workers).
//                 `--shapes none --scaling 0 --real DIR` runs only this.
// Prints a Markdown table ready for the README, with the command line and the machine.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem, availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parseBytes, writeAgentRuns, writeDataset } from './bench-data.mjs';

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
  },
});
const rows = Number(values.rows);
const counts = { chat: rows, reasoning: Math.max(1, Math.round(rows / 10)), agent: Math.max(8, Math.round(rows / 500)), mixed: rows };
const workerCounts = values.workers.split(',').map(Number);
const tokenizers = values.tokenizers.split(',');
const tokDir = (t) => (t === 'qwen3' ? undefined : join(dirname(require.resolve(`@lenml/tokenizer-${t}`)), '..', 'models'));
const tokName = (t) => ({ qwen3: 'Qwen3 (embedded)', deepseek_v3: 'DeepSeek-V3', llama3_1: 'Llama-3.1' })[t] ?? t;

// Pool workers run dist/worker.js, as the shipped CLI does.
const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const work = values.keep ?? mkdtempSync(join(tmpdir(), 'eagle3-bench-'));
mkdirSync(work, { recursive: true });
const log = (s) => process.stderr.write(s + '\n');

function child(task) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'bench-child.ts'), JSON.stringify(task)], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`bench child failed (${JSON.stringify(task)}):\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

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
