// The unit test files' groups (scripts/test.mjs): each group is one node process that imports several test files,
// so node + tsx start, the modules load and the tokenizers are parsed once per group instead of once per file
// (docs/development.md, "What the unit tests cost"). Groups are balanced by each file's CPU seconds as last measured
// alone (scripts/test-cpu-seconds.json, written by `node scripts/test-cpu.mjs --save`), within a memory budget per
// group (GROUP_RSS_BUDGET_MB); a file not in that table counts as the median file. Each file's tests become a suite named after the file, so a file's top-level hooks
// (`before`, `after`) stay its own, and its tests run after the previous file's, one file at a time.
//   node scripts/test-groups.mjs [N]   prints the plan for N groups (default: cores × GROUPS_PER_CORE)
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The folder (inside the run's temp folder) the group files are written to. */
export const GROUP_DIR = 'unit-groups';
/**
 * Groups per core: more groups than cores let the runner even out a group that runs longer than its measure
 * (a loaded machine, a changed file), at the cost of one more process start and tokenizer load per group.
 */
export const GROUPS_PER_CORE = 3;
/** The measured CPU seconds per test file (basename → seconds). */
export const CPU_TABLE = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, 'test-cpu-seconds.json');

/**
 * The measured table ({@link CPU_TABLE}): CPU seconds and peak RSS (MB) per test file basename, and `together`: lists
 * of files that load the same model folders (through `sharedTokenizer`), planned as one unit so that a group loads
 * them once. Empty when it is missing.
 */
export function readCpuTable() {
  if (!existsSync(CPU_TABLE)) return { seconds: {}, maxRssMb: {}, together: [] };
  const t = JSON.parse(readFileSync(CPU_TABLE, 'utf8'));
  return { seconds: t.seconds ?? {}, maxRssMb: t.maxRssMb ?? {}, together: t.together ?? [] };
}

/**
 * What a group's files may hold together, in MB of peak RSS above a bare test process's (RSS_BASE_MB), summed: files
 * that keep many tokenizers loaded (the oracle sets: ~20 model folders each) would together pass node's default heap
 * limit (~4 GB) in one process. A file over the budget alone gets a group of its own share.
 */
export const GROUP_RSS_BUDGET_MB = 2500;
const RSS_BASE_MB = 250;

/**
 * Splits `files` into at most `n` groups of nearly equal CPU seconds: the costliest file (or `together` list) first, each into the group
 * with the least so far whose memory budget ({@link GROUP_RSS_BUDGET_MB}) it fits, else the one with the least memory
 * (longest processing time first). Groups come costliest first (the runner starts them in that order); the files of a
 * group in name order. A file not in the table counts as the median file, and as a bare process for memory.
 * @returns [{ files, seconds, rssMb }]
 */
export function planGroups(files, n, table = readCpuTable()) {
  const median = (m) => {
    const v = files.map((f) => m[basename(f)]).filter((x) => typeof x === 'number');
    return v.length ? v.sort((a, b) => a - b)[Math.floor(v.length / 2)] : 1;
  };
  const cpuMedian = median(table.seconds);
  const cost = (f) => table.seconds[basename(f)] ?? cpuMedian;
  const rss = (f) => Math.max(0, (table.maxRssMb[basename(f)] ?? RSS_BASE_MB) - RSS_BASE_MB);
  // Units: a `together` list (of the files given), else one file.
  const units = [];
  const placed = new Set();
  for (const list of table.together ?? []) {
    const unit = files.filter((f) => list.includes(basename(f)) && !placed.has(f));
    unit.forEach((f) => placed.add(f));
    if (unit.length) units.push(unit);
  }
  for (const f of files) if (!placed.has(f)) units.push([f]);
  const sum = (unit, of) => unit.reduce((a, f) => a + of(f), 0);
  const groups = Array.from({ length: Math.max(1, Math.min(n, units.length)) }, () => ({ files: [], seconds: 0, rssMb: 0 }));
  for (const unit of units.sort((a, b) => sum(b, cost) - sum(a, cost) || a[0].localeCompare(b[0]))) {
    const fits = groups.filter((g) => g.rssMb + sum(unit, rss) <= GROUP_RSS_BUDGET_MB);
    const g = fits.length ? fits.reduce((a, b) => (b.seconds < a.seconds ? b : a)) : groups.reduce((a, b) => (b.rssMb < a.rssMb ? b : a));
    g.files.push(...unit);
    g.seconds += sum(unit, cost);
    g.rssMb += sum(unit, rss);
  }
  for (const g of groups) g.files.sort();
  return groups.filter((g) => g.files.length > 0).sort((a, b) => b.seconds - a.seconds);
}

/**
 * Writes one CommonJS entry file per group into `dir` (`group-<k>.cjs`: a `describe` per test file that requires it)
 * and returns their paths, costliest group first. The entries load under `--import tsx` like the test files. With
 * `cpuLog`, each file's CPU seconds in its group's process (loading it and running its tests; not the processes its
 * tests start) are appended there as JSON lines `{ file, cpu }`.
 */
export function writeGroupFiles(files, n, dir, cpuLog) {
  mkdirSync(dir, { recursive: true });
  return planGroups(files, n).map((g, k) => {
    const path = join(dir, `group-${k + 1}.cjs`);
    const lines = [
      `// Written by scripts/test-groups.mjs: ${g.files.length} unit test files in one process (~${Math.round(g.seconds)} CPU s measured alone).`,
      "const { after, before, describe } = require('node:test');",
      "const { appendFileSync } = require('node:fs');",
      `const cpuLog = ${JSON.stringify(cpuLog ?? null)};`,
      'const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };',
      'function file(name, path) {',
      '  describe(name, () => {',
      '    let spent = 0;',
      '    let t0 = cpu();',
      '    before(() => { t0 = cpu(); });',
      '    require(path);',
      '    spent += cpu() - t0;',
      '    after(() => { if (cpuLog) appendFileSync(cpuLog, JSON.stringify({ file: name, cpu: spent + cpu() - t0 }) + "\\n"); });',
      '  });',
      '}',
      ...g.files.map((f) => `file(${JSON.stringify(f)}, ${JSON.stringify(resolve(f))});`),
    ];
    writeFileSync(path, lines.join('\n') + '\n');
    return path;
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const files = readdirSync('test/unit')
    .filter((f) => /\.test\.(ts|mjs)$/.test(f))
    .sort()
    .map((f) => join('test/unit', f));
  const n = Number(process.argv[2]) || availableParallelism() * GROUPS_PER_CORE;
  for (const [k, g] of planGroups(files, n).entries())
    console.log(`group ${k + 1}: ${g.seconds.toFixed(1)} CPU s, +${g.rssMb} MB, ${g.files.length} files: ${g.files.map((f) => basename(f)).join(' ')}`);
}
