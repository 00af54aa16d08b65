// The unit test files' groups (scripts/test.mjs): each group is one node process that imports several test files,
// so node + tsx start, the modules load and the tokenizers are parsed once per group instead of once per file
// (docs/development.md, "What the unit tests cost"). Groups are balanced by each file's CPU seconds as last measured
// alone (scripts/test-cpu-seconds.json, written by `node scripts/test-cpu.mjs --save`); a file not in that table
// counts as the median file. Each file's tests become a suite named after the file, so a file's top-level hooks
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

/** CPU seconds per test file basename, from {@link CPU_TABLE} (empty when it is missing). */
export function readCpuSeconds() {
  if (!existsSync(CPU_TABLE)) return {};
  return JSON.parse(readFileSync(CPU_TABLE, 'utf8')).seconds ?? {};
}

/**
 * Splits `files` into at most `n` groups of nearly equal CPU seconds: the costliest file first, each into the group
 * with the least so far (longest processing time first). Groups come costliest first (the runner starts them in
 * that order); the files of a group in name order.
 * @returns [{ files, seconds }]
 */
export function planGroups(files, n, seconds = readCpuSeconds()) {
  const known = files.map((f) => seconds[basename(f)]).filter((s) => typeof s === 'number');
  const median = known.length ? known.sort((a, b) => a - b)[Math.floor(known.length / 2)] : 1;
  const cost = (f) => seconds[basename(f)] ?? median;
  const groups = Array.from({ length: Math.max(1, Math.min(n, files.length)) }, () => ({ files: [], seconds: 0 }));
  for (const f of [...files].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b))) {
    const g = groups.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    g.files.push(f);
    g.seconds += cost(f);
  }
  for (const g of groups) g.files.sort();
  return groups.filter((g) => g.files.length > 0).sort((a, b) => b.seconds - a.seconds);
}

/**
 * Writes one CommonJS entry file per group into `dir` (`group-<k>.cjs`: a `describe` per test file that requires it)
 * and returns their paths, costliest group first. The entries load under `--import tsx` like the test files.
 */
export function writeGroupFiles(files, n, dir) {
  mkdirSync(dir, { recursive: true });
  return planGroups(files, n).map((g, k) => {
    const path = join(dir, `group-${k + 1}.cjs`);
    const lines = [
      `// Written by scripts/test-groups.mjs: ${g.files.length} unit test files in one process (~${Math.round(g.seconds)} CPU s measured alone).`,
      "const { describe } = require('node:test');",
      ...g.files.map((f) => `describe(${JSON.stringify(f)}, () => {\n  require(${JSON.stringify(resolve(f))});\n});`),
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
    console.log(`group ${k + 1}: ${g.seconds.toFixed(1)} CPU s, ${g.files.length} files: ${g.files.map((f) => basename(f)).join(' ')}`);
}
