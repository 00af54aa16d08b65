// The project's test command (`npm test`): the static checks (types, lint, format, import cycles,
// imports down the pipeline), then builds dist/, then runs every test file under node's own test runner, so one
// summary line — the last thing printed — counts them all.
//   --checks  only the static checks
//   --unit    only test/unit (no checks, no build, no VS Code host); `--unit test/unit/a.test.ts …` only those files
//   --host    only test/host (the extension in a real VS Code; see test/host/README.md)
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { GROUP_DIR, GROUPS_PER_CORE, writeGroupFiles } from './test-groups.mjs';
import { buildTestBundle, removeTestBundle, TEST_CLI_ENV } from './test-bundle.mjs';

const args = process.argv.slice(2);
const only = args.includes('--checks') ? 'checks' : args.includes('--unit') ? 'unit' : args.includes('--host') ? 'host' : null;

/** Runs one npm script; exits with its status when it fails. */
function step(name) {
  const t0 = Date.now();
  const r = spawnSync('npm', ['run', '--silent', name], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[test] ${name} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
  console.error(`[test] ${name} ok (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

if (only === null || only === 'checks') {
  for (const s of ['typecheck', 'lint', 'format:check', 'cycles', 'layers']) step(s);
  if (only === 'checks') process.exit(0);
}

const dirs = only ? [`test/${only}`] : ['test/unit', 'test/host'];
if (only !== 'unit') {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
const named = only === 'unit' ? args.filter((a) => !a.startsWith('--')).map((f) => relative('.', resolve(f))) : [];
const files = named.length
  ? named
  : dirs.flatMap((d) =>
      readdirSync(d, { recursive: true })
        .map(String)
        .filter((f) => /\.test\.(ts|mjs)$/.test(f))
        .sort()
        .map((f) => join(d, f)),
    );
if (files.length === 0) {
  console.error('no test files found in', dirs.join(', '));
  process.exit(1);
}
// Unit test files run in groups, a few node processes that each import several files
// (scripts/test-groups.mjs: balanced by the CPU seconds in scripts/test-cpu-seconds.json), so the
// start of node + tsx, the modules and the tokenizers a process loads are paid once per group, not
// once per file; each file's tests are a suite named after the file. EAGLE3_TEST_GROUPS=N sets the
// number of groups (0: one process per file, as `node --import tsx --test <file>` runs one file).
// Groups and the host test files run side by side, one per core (the VS Code host file among them:
// it starts its own VS Code and runs its suites there one after another).
// EAGLE3_TEST_CONCURRENCY overrides the number.
const concurrency = Number(process.env.EAGLE3_TEST_CONCURRENCY) || Math.max(1, availableParallelism());
// Each run gets a temp folder of its own (TMPDIR for every test process): whatever a test leaves
// there is a defect, reported after the summary and failing the run; the folder is then removed.
// Caches are not leftovers: the tiktoken rank cache (eagle3-prep-cache) and tsx's compile cache (tsx-<uid>);
// nor are the group files this runner writes there (GROUP_DIR).
const runTmp = mkdtempSync(join(tmpdir(), 'eagle3-tests-'));
chmodSync(runTmp, 0o1777); // like /tmp: a test runs a child as another user (the EACCES case of runPolicy.test.ts)
// EAGLE3_TEST_CPU=1: after the summary, the CPU seconds of all test processes and each unit file's in its group.
const cpuLog = process.env.EAGLE3_TEST_CPU ? join(runTmp, GROUP_DIR, 'cpu.jsonl') : undefined;
const t0 = Date.now();
const unitFiles = files.filter((f) => f.startsWith(join('test', 'unit') + sep) && f.endsWith('.ts')); // an .mjs file is ESM: its own process
const groupCount = process.env.EAGLE3_TEST_GROUPS === undefined ? concurrency * GROUPS_PER_CORE : Number(process.env.EAGLE3_TEST_GROUPS);
const runFiles =
  groupCount > 0 && unitFiles.length > 1
    ? [...writeGroupFiles(unitFiles, groupCount, join(runTmp, GROUP_DIR), cpuLog), ...files.filter((f) => !unitFiles.includes(f))]
    : files;
// The host tests' screenshots outlive the run: .cache/screenshots unless EAGLE3_SCREENSHOT_DIR says.
const screenshots = resolve(process.env.EAGLE3_SCREENSHOT_DIR || join('.cache', 'screenshots'));
// A group holds what all its files load (the tokenizers of tens of model folders in some): node's default heap limit
// (~4 GB) is raised for the test processes (node --test passes its flags on to them), not the memory they use.
const heap = runFiles === files ? [] : ['--max-old-space-size=6144'];
// The CLI bundled once for the run (scripts/test-bundle.mjs): the tests' CLI processes and pool workers start it
// instead of src/cli.ts under tsx (~1.3 CPU s less each).
const bundle = unitFiles.length > 0 ? await buildTestBundle() : null;
if (unitFiles.length > 0 && !bundle) console.error('[test] the CLI bundle was not built: the tests start src/cli.ts under tsx');
const r = spawnSync(process.execPath, [...heap, '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...runFiles], {
  stdio: 'inherit',
  env: {
    ...process.env,
    TMPDIR: runTmp,
    TMP: runTmp,
    TEMP: runTmp,
    EAGLE3_SCREENSHOT_DIR: screenshots,
    // The tokenizer cache (converted tokenizers, by content) is the run's temp folder's eagle3-prep-cache for every
    // test process (test/helpers.ts isolateTokenizerCache): a tokenizer one group converted, the others read.
    EAGLE3_TEST_SHARED_CACHE: '1',
    ...(bundle ? { [TEST_CLI_ENV]: join(bundle, 'cli.js') } : {}),
  },
});
removeTestBundle(bundle);
if (cpuLog) {
  // Linux: the CPU time of the child processes waited for (all test processes), /proc/self/stat fields 16–17.
  const stat = existsSync('/proc/self/stat') ? readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ') : null;
  const children = stat ? (Number(stat[13]) + Number(stat[14])) / 100 : NaN;
  const perFile = existsSync(cpuLog)
    ? readFileSync(cpuLog, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .sort((a, b) => b.cpu - a.cpu)
    : [];
  console.error(`[test] ${children.toFixed(1)} CPU s in the test processes, ${((Date.now() - t0) / 1000).toFixed(0)} s wall, ${runFiles.length} processes`);
  console.error(`[test] CPU s per unit file in its group (not counting processes its tests start): ${perFile.length} files`);
  for (const x of perFile) console.error(`${x.cpu.toFixed(1).padStart(8)}  ${x.file}`);
}
const leftovers = readdirSync(runTmp).filter((n) => n !== 'eagle3-prep-cache' && n !== GROUP_DIR && !/^tsx-\d+$/.test(n));
rmSync(runTmp, { recursive: true, force: true });
if (leftovers.length > 0) {
  console.error(`[test] ${leftovers.length} temporary item(s) left behind by the tests: ${leftovers.slice(0, 20).join(', ')}`);
  if (r.status === 0) process.exit(1);
}
process.exit(r.status ?? 1);
