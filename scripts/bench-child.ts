/**
 * One benchmark measurement in a fresh process (spawned by scripts/bench.mjs
 * with `node --import tsx`, so that peak RSS belongs to this measurement only).
 * Argument: a JSON task; prints one JSON line with the figures.
 *
 * Tasks:
 * - `prepare`: runs `prepare` with `workers`; reports wall time, totals, peak
 *   RSS, the main thread's event-loop delay (max, p99) while it ran, and the
 *   time spent inside the tokenizer library's `encode` on the rendered record
 *   texts (the raw tokenizer throughput on exactly those texts). With
 *   `cpuProfile` / `heapProfile`, a CPU / allocation profile of that measured window alone (this thread).
 *   With `warm` and `warmupInput`, an untimed `prepare` of that other input (the same shape, tokenizer and grouping)
 *   runs first, so that the measured run is warm without having seen its own text (the issue 26 ratios' warm figure);
 *   with `sameAs`, the measured run is checked to do exactly the work of a cold run of the same input in another
 *   process (`assertSameWork`). The encode's counts include the tokenizer caches' lookups and hits (`pieces`, `found`).
 * - `host`: the extension host's view: `prepare` runs in a worker thread (as
 *   src/vscode/workerClient.ts starts it) while this main thread only waits;
 *   reports this thread's event-loop delay.
 * Pool workers and the host's worker run the built bundle (`dist/worker.js`);
 * bench.mjs builds it first.
 * - `memory`: `prepare` on a large file, sampling RSS every 250 ms; reports
 *   peak RSS and the RSS at each quarter of the run.
 * - `rust`: the raw Rust tokenizer (npm `tokenizers`, the test oracle) encoding the texts of `texts` (a JSON
 *   array written by a `prepare` task's `texts`), one call at a time, ids only, after a warm-up on the texts of
 *   `warmupTexts` (another input's: the warm figure; without it, on the first 30; none with `cold`: the clock starts
 *   at the first call); reports tokens and CPU ms of the process (the binding's thread included).
 * - `trl`: a re-creation of TRL's cost (its SFT data preparation renders each conversation once with
 *   `apply_chat_template` and tokenizes it once with the Rust tokenizer): every conversation of `input`,
 *   normalized beforehand (not timed), rendered whole with this project's template engine and encoded by the
 *   Rust binding (ids), after the same on every conversation of `warmupInput` (another input: the warm figure; without
 *   it, 10 of `input`'s; none with `cold`); reports tokens and CPU ms of render + encode.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Session } from 'node:inspector/promises';
import { assertSameWork, type EncodeStats, type RunWork } from './benchSameWork';
import { wordCacheStatsOf, type WordCacheStats } from '../src/core/tokenizers/wordCache';

interface Task {
  task: 'prepare' | 'host' | 'memory' | 'rust' | 'trl';
  /** prepare task: run the built CLI (`dist/cli.js`) even with 1 worker, as shipped (no tokenizer timing). */
  dist?: boolean;
  /** prepare task from source: write every text the run encodes (a JSON array) to this file, for the `rust` task. rust task: the file read. */
  texts?: string;
  input: string;
  tokenizerDir?: string;
  workers: number;
  out: string;
  /** host task: pool workers at lower priority, as the extension runs them (default true). */
  lowPriority?: boolean;
  /** prepare task: record grouping (default exact). */
  grouping?: 'exact' | 'merged';
  /** prepare task from source: false renders every prefix on its own (EAGLE3_NO_LINEAR_PREFIXES), the path before linear-time rendering. */
  linear?: boolean;
  /** prepare task from source: load the tokenizer before the clock starts (its CPU time is reported apart as loadCpuMs). */
  warm?: boolean;
  /** prepare and host tasks: `--tokenizer-backend` (default: the run's default, auto). */
  backend?: 'auto' | 'rust' | 'js';
  /**
   * prepare task: write a CPU profile (`.cpuprofile`, this thread) of the measured window alone — after the tokenizer's
   * load with `warm`, until the run returns — to this file; `cpuProfileUs`: its sampling interval (µs, default 100).
   */
  cpuProfile?: string;
  cpuProfileUs?: number;
  /** prepare task: write a sampling heap profile (`.heapprofile`) of what the measured window allocated, collected objects included. */
  heapProfile?: string;
  /**
   * prepare task from source with `warm`: after the tokenizer load, an untimed `prepare` of this other input (same
   * shape, tokenizer and grouping; into `<out>-warmup`, removed), then the measured run of `input`: warm (V8's compiled
   * row path, the run's one-time work) without the tokenizer caches holding the measured text (only the pieces the two
   * inputs share). The warm-up's figures are in the output's `warmup`; the profiles cover the measured run.
   * trl task: the conversations rendered and encoded before the clock starts (instead of 10 of `input`'s).
   */
  warmupInput?: string;
  /** prepare task with `warmupInput`: write every text its warm-up run encoded (a JSON array) here. rust task: the texts encoded before the clock starts. */
  warmupTexts?: string;
  /** prepare task from source: write the measured run's work (`RunWork`, scripts/benchSameWork.ts) to this JSON file. */
  work?: string;
  /**
   * prepare task from source: after the measured run, check that it did exactly the work of another run of the same
   * input (its `work` and `texts` files and output folder `out`: the cold run, another process) — the same encode calls,
   * encoded characters and texts, cache lookups, renders, totals and byte-identical outputs (report times and paths
   * aside); the task fails otherwise (`assertSameWork`).
   */
  sameAs?: { work: string; texts: string; out: string };
  /** rust and trl tasks: no warm-up, the clock starts at the first call (a fresh process, cold). */
  cold?: boolean;
}

const task: Task = JSON.parse(process.argv[2]);
const ROOT = join(__dirname, '..');

/**
 * Wraps the tokenizer library's `encode_text` (tokenizers.js: added tokens, normalizer, pre-tokenizer and model, the
 * work of an encode; `TargetTokenizer.encode` calls it directly, the library's `encode` through it; with the word
 * cache, textIds.ts's `run`, the same steps ending in ids) to total its
 * time and output tokens (and keep the texts in `saved` when given), and the tokenizer caches' lookups and hits
 * inside those calls (`pieces`, `found`: pieceEncoder.ts's piece cache, the encoder's `stats`; wordCache.ts's word
 * cache, `wordCacheStatsOf`; none with the Rust backend).
 */
function instrumentEncode(saved?: string[]): EncodeStats {
  const stats: EncodeStats = { ms: 0, cpuMs: 0, tokens: 0, calls: 0, chars: 0, pieces: 0, found: 0 };
  /** Runs `f`, adding the lookups and hits of `cache` (when there is one) while it runs to `stats`. */
  const counted = <T>(cache: WordCacheStats | undefined, f: () => T): T => {
    if (!cache) return f();
    const h = cache.hits;
    const m = cache.misses;
    try {
      return f();
    } finally {
      stats.found += cache.hits - h;
      stats.pieces += cache.hits - h + cache.misses - m;
    }
  };
  /** Runs `f`, adding its wall ms and this process's CPU ms to `stats`. */
  const timed = <T>(f: () => T): T => {
    const t = performance.now();
    const c = process.cpuUsage();
    try {
      return f();
    } finally {
      const d = process.cpuUsage(c);
      stats.ms += performance.now() - t;
      stats.cpuMs += (d.user + d.system) / 1000;
    }
  };
  // The Rust backend (src/core/tokenizers/rustTokenizer.ts) encodes with the binding's encodeBatch: its time is the
  // process's CPU while the call runs (the binding's thread; the run's thread waits), its texts are saved alike.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const rust = require('tokenizers').Tokenizer.prototype;
  const batch = rust.encodeBatch;
  rust.encodeBatch = async function (this: unknown, texts: string[], options: unknown) {
    const t = performance.now();
    const c = process.cpuUsage();
    const r = await batch.call(this, texts, options);
    const d = process.cpuUsage(c);
    stats.ms += performance.now() - t;
    stats.cpuMs += (d.user + d.system) / 1000;
    for (const e of r) stats.tokens += e.getLength();
    stats.calls += texts.length;
    for (const s of texts) stats.chars += s.length;
    saved?.push(...texts);
    return r;
  };
  // With the word cache, `TargetTokenizer.encode` runs encode_text's steps itself, ending in ids
  // (src/core/tokenizers/textIds.ts `textIds.run`): that call is the library's share then (counted once: it does not call encode_text).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ids = require('../src/core/tokenizers/textIds').textIds as { run: (...args: unknown[]) => number[] };
  const run = ids.run;
  ids.run = (...args: unknown[]) => {
    const r = timed(() => counted(wordCacheStatsOf(args[0] as object), () => run(...args)));
    stats.tokens += r.length;
    stats.calls++;
    stats.chars += (args[args.length - 1] as string).length;
    saved?.push(args[args.length - 1] as string);
    return r;
  };
  // Our own encode (src/core/tokenizers/pieceEncoder.ts `pieceEncode.run`, ids and starts in one pass) where it applies:
  // the tokenizer's whole share then. A text it hands back (undefined) goes to textIds.run, timed and saved there.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const own = require('../src/core/tokenizers/pieceEncoder').pieceEncode as { run: (...args: unknown[]) => { ids: number[] } | undefined };
  const ownRun = own.run;
  own.run = (...args: unknown[]) => {
    const r = timed(() => counted((args[0] as { stats: WordCacheStats }).stats, () => ownRun(...args)));
    if (r) {
      stats.tokens += r.ids.length;
      stats.calls++;
      stats.chars += (args[args.length - 1] as string).length;
      saved?.push(args[args.length - 1] as string);
    }
    return r;
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Tokenizer } = require('@huggingface/tokenizers');
  const orig = Tokenizer.prototype.encode_text;
  Tokenizer.prototype.encode_text = function (this: unknown, text: string | null) {
    if (text === null) return orig.call(this, text);
    const t = performance.now();
    const c = process.cpuUsage();
    const r = counted(wordCacheStatsOf(this as object), () => orig.call(this, text));
    const d = process.cpuUsage(c);
    stats.ms += performance.now() - t;
    stats.cpuMs += (d.user + d.system) / 1000;
    stats.tokens += r.length;
    stats.calls++;
    stats.chars += text.length;
    saved?.push(text);
    return r;
  };
  return stats;
}

/** Counts the prefix renders served from a conversation's one traced render (proven) and those rendered on their own. */
async function countPrefixRenders(): Promise<{ proven: number; fallback: number }> {
  const counts = { proven: 0, fallback: 0 };
  const { PrefixRenderer } = await import('../src/core/templates/prefixRenderer');
  const orig = PrefixRenderer.prototype.render;
  PrefixRenderer.prototype.render = function (this: InstanceType<typeof PrefixRenderer>, n: number, gen: boolean) {
    const p = this.stats.proven;
    const f = this.stats.fallback;
    try {
      return orig.call(this, n, gen);
    } finally {
      counts.proven += this.stats.proven - p;
      counts.fallback += this.stats.fallback - f;
    }
  };
  return counts;
}

/**
 * Counts the chat template's own renders (ChatTemplate `render`, `renderWithGenerationSpans`, `tracePrefixes`: each a
 * run of the template engine), the template check's included; with {@link countPrefixRenders}, every render a run asks for.
 */
async function countTemplateRenders(): Promise<{ render: number; spans: number; traced: number }> {
  const counts = { render: 0, spans: 0, traced: 0 };
  const { ChatTemplate } = await import('../src/core/templates/template');
  const proto = ChatTemplate.prototype as unknown as Record<'render' | 'renderWithGenerationSpans' | 'tracePrefixes', (...a: unknown[]) => unknown>;
  for (const [name, key] of [
    ['render', 'render'],
    ['renderWithGenerationSpans', 'spans'],
    ['tracePrefixes', 'traced'],
  ] as const) {
    const orig = proto[name];
    proto[name] = function (this: unknown, ...a: unknown[]) {
      counts[key]++;
      return orig.apply(this, a);
    };
  }
  return counts;
}

const mb = (kb: number) => Math.round(kb / 1024);

/** CPU ms of this process (every thread) since `from`. */
function cpuMsSince(from: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
}

/** The `rust` task: the Rust binding encoding saved texts one at a time (ids only). */
async function rustTask(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Tokenizer } = require('tokenizers');
  const { defaultTokenizerDir } = await import('../src/core/tokenizers/tokenizer');
  const texts: string[] = JSON.parse(readFileSync(task.texts!, 'utf8'));
  const c0 = process.cpuUsage();
  const t = Tokenizer.fromFile(join(task.tokenizerDir ?? defaultTokenizerDir(), 'tokenizer.json'));
  const loadCpuMs = cpuMsSince(c0);
  const warmup: string[] = task.cold ? [] : task.warmupTexts ? JSON.parse(readFileSync(task.warmupTexts, 'utf8')) : texts.slice(0, 30);
  for (const s of warmup) await t.encode(s, null, { addSpecialTokens: false });
  const t0 = performance.now();
  const c1 = process.cpuUsage();
  let tokens = 0;
  for (const s of texts) tokens += (await t.encode(s, null, { addSpecialTokens: false })).getIds().length;
  process.stdout.write(
    JSON.stringify({
      texts: texts.length,
      tokens,
      cpuMs: cpuMsSince(c1),
      ms: performance.now() - t0,
      loadCpuMs,
      cold: !!task.cold,
      warmupTexts: warmup.length,
    }) + '\n',
  );
}

/** The `trl` task: render each conversation once (this project's engine), encode it once (Rust), as TRL's SFT preparation does. */
async function trlTask(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Tokenizer } = require('tokenizers');
  const { normalizeRow, conversationsOf } = await import('../src/core/formats/normalize');
  const { RowProcessor } = await import('../src/core/records/rowProcessor');
  const { prepareTurns } = await import('../src/core/records/turns');
  const { defaultTokenizerDir } = await import('../src/core/tokenizers/tokenizer');
  type Tmpl = import('../src/core/templates/template').ChatTemplate;
  const processor = new RowProcessor({ tokenizerDir: task.tokenizerDir });
  const builder = (processor as unknown as { builder: { template(hasTools: boolean): Tmpl } }).builder;
  const templateFor = (hasTools: boolean) => builder.template(hasTools);
  const rust = Tokenizer.fromFile(join(task.tokenizerDir ?? defaultTokenizerDir(), 'tokenizer.json'));
  // Not timed: reading and normalizing (TRL gets a dataset of messages), and what the template is given.
  const conversationsIn = (file: string) => {
    const convs: { template: Tmpl; messages: import('../src/core/types').Message[]; tools: unknown[] | undefined }[] = [];
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!line.trim()) return;
        for (const p of conversationsOf(normalizeRow(JSON.parse(line), { file, line: i + 1 }, 'bench'))) {
          if (p.kind !== 'conversation') continue;
          const template = templateFor((p.conversation.tools?.length ?? 0) > 0);
          const messages = template.adaptTurns(prepareTurns(p.conversation.messages).messages).messages;
          convs.push({ template, messages, tools: p.conversation.tools });
        }
      });
    return convs;
  };
  const convs = conversationsIn(task.input);
  // The warm-up: another input's conversations (the warm figure), else the first 10 of this one's, none when cold.
  const warmup = task.cold ? [] : task.warmupInput ? conversationsIn(task.warmupInput) : convs.slice(0, 10);
  for (const c of warmup) await rust.encode(c.template.render(c.messages, c.tools, { addGenerationPrompt: false }), null, { addSpecialTokens: false });
  const t0 = performance.now();
  const c1 = process.cpuUsage();
  let tokens = 0;
  let renderCpuMs = 0;
  for (const c of convs) {
    const r0 = process.cpuUsage();
    const text = c.template.render(c.messages, c.tools, { addGenerationPrompt: false });
    renderCpuMs += cpuMsSince(r0);
    tokens += (await rust.encode(text, null, { addSpecialTokens: false })).getIds().length;
  }
  process.stdout.write(
    JSON.stringify({
      conversations: convs.length,
      tokens,
      cpuMs: cpuMsSince(c1),
      renderCpuMs,
      ms: performance.now() - t0,
      cold: !!task.cold,
      warmupConversations: warmup.length,
    }) + '\n',
  );
}

/** What `prepare` returned, as far as this task reads it. */
interface PrepareRun {
  ok: boolean;
  totals: { rowsRead: number; recordsWritten: number; totalTokens: number; trainableTokens: number; lengths?: { renderedTokens: number } };
}

async function main() {
  if (task.task === 'rust') return rustTask();
  if (task.task === 'trl') return trlTask();
  const lag = monitorEventLoopDelay({ resolution: 10 });
  if (task.task === 'prepare' || task.task === 'memory') {
    // The 1-worker run measures the tokenizer library inside the run, so it runs from source (tsx adds
    // ~40 MB RSS); runs with a pool, and the memory run, use the built CLI (dist/cli.js) as shipped.
    const saved: string[] | undefined = task.texts || task.warmupTexts || task.sameAs ? [] : undefined;
    const raw = task.task === 'prepare' && task.workers <= 1 && !task.dist ? instrumentEncode(saved) : null;
    const fromSource = raw !== null;
    if ((task.warmupInput || task.sameAs || task.work) && !(fromSource && task.warm))
      throw new Error('warmupInput, work, sameAs: a prepare task in this process (1 worker, not dist) with warm');
    if (task.linear === false) process.env.EAGLE3_NO_LINEAR_PREFIXES = '1';
    const prefixes = fromSource ? await countPrefixRenders() : null;
    const renders = fromSource ? await countTemplateRenders() : null;
    let loadCpuMs = 0;
    if (fromSource && task.warm) {
      const { cachedTokenizer } = await import('../src/core/tokenizers/loadedTokenizers');
      const c = process.cpuUsage();
      cachedTokenizer(task.tokenizerDir, task.backend);
      const d = process.cpuUsage(c);
      loadCpuMs = (d.user + d.system) / 1000;
    }
    const { prepare } = fromSource ? await import('../src/core/run/prepare/pipeline') : { prepare: null };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const cli = fromSource ? null : (require(join(ROOT, 'dist', 'cli.js')) as { main(argv: string[]): Promise<number> });
    /** One `prepare` of `input` into `outDir`: in this process from source, or the built CLI. */
    const runOnce = async (input: string, outDir: string): Promise<PrepareRun> => {
      if (prepare)
        return prepare({
          inputs: [input],
          outDir,
          tokenizerDir: task.tokenizerDir,
          workers: task.workers,
          grouping: task.grouping,
          tokenizerBackend: task.backend,
        });
      const code = await cli!.main([
        'prepare',
        input,
        '--out',
        outDir,
        '--workers',
        String(task.workers),
        '--quiet',
        ...(task.grouping ? ['--grouping', task.grouping] : []),
        ...(task.tokenizerDir ? ['--tokenizer', task.tokenizerDir] : []),
        ...(task.backend ? ['--tokenizer-backend', task.backend] : []),
      ]);
      // report.json is snake_case (run/reports/jsonCase.ts): the totals this task prints, in the run's own names.
      const doc = JSON.parse(readFileSync(join(outDir, 'report.json'), 'utf8'));
      const t = doc.totals ?? {};
      return {
        ok: code === 0 && doc.ok !== false,
        totals: {
          rowsRead: t.rows_read,
          recordsWritten: t.records_written,
          totalTokens: t.total_tokens,
          trainableTokens: t.trainable_tokens,
          ...(t.lengths?.rendered_tokens !== undefined ? { lengths: { renderedTokens: t.lengths.rendered_tokens } } : {}),
        },
      };
    };
    // The warm-up on another input (untimed): its encodes and renders are counted, then the counters start again at zero
    // for the measured run; the tokenizer (its word and piece caches, holding the warm-up's pieces) stays loaded.
    let warmup: Record<string, unknown> | null = null;
    if (task.warmupInput) {
      const warmOut = `${task.out}-warmup`;
      const c = process.cpuUsage();
      const w = await runOnce(task.warmupInput, warmOut);
      warmup = {
        ok: w.ok,
        cpuMs: cpuMsSince(c),
        rows: w.totals.rowsRead,
        tokens: w.totals.totalTokens,
        texts: raw!.calls,
        pieces: raw!.pieces,
        found: raw!.found,
      };
      rmSync(warmOut, { recursive: true, force: true });
      if (task.warmupTexts) writeFileSync(task.warmupTexts, JSON.stringify(saved));
      for (const k of Object.keys(raw!) as (keyof EncodeStats)[]) raw![k] = 0;
      for (const x of [renders!, prefixes!] as Record<string, number>[]) for (const k of Object.keys(x)) x[k] = 0;
      saved!.length = 0;
    }
    const profiler = task.cpuProfile || task.heapProfile ? new Session() : null;
    if (profiler) {
      profiler.connect();
      if (task.cpuProfile) {
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.setSamplingInterval', { interval: task.cpuProfileUs ?? 100 });
        await profiler.post('Profiler.start');
      }
      if (task.heapProfile) {
        await profiler.post('HeapProfiler.enable');
        await profiler.post('HeapProfiler.startSampling', {
          samplingInterval: 4096,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        } as object);
      }
    }
    const series: { t: number; rss: number }[] = [];
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const sampler = setInterval(() => series.push({ t: performance.now() - t0, rss: process.memoryUsage().rss }), 250);
    lag.enable();
    const r = await runOnce(task.input, task.out);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    lag.disable();
    clearInterval(sampler);
    if (profiler) {
      if (task.cpuProfile) writeFileSync(task.cpuProfile, JSON.stringify((await profiler.post('Profiler.stop')).profile));
      if (task.heapProfile) writeFileSync(task.heapProfile, JSON.stringify((await profiler.post('HeapProfiler.stopSampling')).profile));
      profiler.disconnect();
    }
    const work: RunWork | null = fromSource
      ? { encode: { ...raw! }, renders: { ...renders!, ...prefixes! }, totals: { ...r.totals, lengths: r.totals.lengths && { ...r.totals.lengths } } }
      : null;
    if (task.work) writeFileSync(task.work, JSON.stringify(work));
    if (task.texts) writeFileSync(task.texts, JSON.stringify(saved));
    // The measured run against another run of the same input (the cold one, another process): the same work, the same outputs.
    if (task.sameAs) {
      const other: RunWork = JSON.parse(readFileSync(task.sameAs.work, 'utf8'));
      const otherTexts: string[] = JSON.parse(readFileSync(task.sameAs.texts, 'utf8'));
      assertSameWork(other, work!, otherTexts, saved!, task.sameAs.out, task.out);
    }
    // RSS at each quarter of the run's time (the input is read at a steady pace).
    const quarters = [0.25, 0.5, 0.75, 1].map((f) => {
      const s = series.filter((x) => x.t <= f * ms).pop();
      return s ? Math.round(s.rss / 1048576) : null;
    });
    process.stdout.write(
      JSON.stringify({
        ok: r.ok,
        ms,
        cpuMs: (cpu.user + cpu.system) / 1000,
        loadCpuMs,
        prefixes: work && { proven: work.renders.proven, fallback: work.renders.fallback },
        rows: r.totals.rowsRead,
        records: r.totals.recordsWritten,
        tokens: r.totals.totalTokens,
        trainable: r.totals.trainableTokens,
        rendered: r.totals.lengths?.renderedTokens ?? null,
        peakRssMB: mb(process.resourceUsage().maxRSS),
        lagMaxMs: lag.max / 1e6,
        lagP99Ms: lag.percentile(99) / 1e6,
        raw: work?.encode ?? null,
        renders: work?.renders ?? null,
        warmup,
        rssQuartersMB: quarters,
        fromSource,
      }) + '\n',
    );
    return;
  }
  // host: prepare in a worker thread, this thread idles like the extension host.
  // First 2 s with nothing running: the delay the machine itself causes (other processes, timers).
  const idle = monitorEventLoopDelay({ resolution: 10 });
  idle.enable();
  await new Promise((r) => setTimeout(r, 2000));
  idle.disable();
  // dist/worker.js, started as src/vscode/workerClient.ts starts it.
  const w = new Worker(join(ROOT, 'dist', 'worker.js'), {
    workerData: {
      job: 'prepare',
      options: {
        inputs: [task.input],
        outDir: task.out,
        tokenizerDir: task.tokenizerDir,
        workers: task.workers,
        lowPriority: task.lowPriority ?? true,
        tokenizerBackend: task.backend,
      },
    },
  });
  lag.enable();
  const t0 = performance.now();
  // Where the longest delay happened (ms since the worker was started): a 10 ms timer's lateness.
  let worst = { ms: 0, at: 0 };
  let expected = performance.now() + 10;
  const ticker = setInterval(() => {
    const now = performance.now();
    if (now - expected > worst.ms) worst = { ms: now - expected, at: now - t0 };
    expected = now + 10;
  }, 10);
  let messages = 0;
  const result = await new Promise<{ ok: boolean; rows: number }>((res, rej) => {
    w.on('message', (m: { type: string; result?: { ok: boolean; totals: { rowsRead: number } }; message?: string }) => {
      messages++;
      if (m.type === 'done') res({ ok: m.result!.ok, rows: m.result!.totals.rowsRead });
      if (m.type === 'error') rej(new Error(m.message));
    });
    w.on('error', rej);
  });
  const ms = performance.now() - t0;
  lag.disable();
  clearInterval(ticker);
  await w.terminate();
  process.stdout.write(
    JSON.stringify({ ...result, ms, messages, lagMaxMs: lag.max / 1e6, lagP99Ms: lag.percentile(99) / 1e6, idleLagMaxMs: idle.max / 1e6, worstDelay: worst }) +
      '\n',
  );
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n');
  process.exit(1);
});
