// CPU seconds per test file: runs each file alone (`node --import tsx --test <file>`, as one file is run by hand)
// under GNU time and prints a table sorted by user + sys seconds (the CPU the file costs, children included),
// with its wall time, test count and anything it left in its temporary folder. Wall time on a loaded machine
// says little; CPU seconds are what the suite's wall time is made of (wall ≈ total CPU / cores).
//   node scripts/test-cpu.mjs [--jobs N] [--json out.json] [--logs dir] [--save] [files...]
// Default files: every test/unit/*.test.ts. --jobs: files measured side by side (default 1; 2 on an idle 2-core
// machine changes the numbers little). --logs: each file's test output (spec reporter, with per-test durations).
// --save: merges the CPU seconds into scripts/test-cpu-seconds.json, which balances the unit runner's groups
// (scripts/test-groups.mjs). Needs /usr/bin/time (GNU time; Debian package `time`).
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { CPU_TABLE } from './test-groups.mjs';
import { buildTestBundle, removeTestBundle, TEST_CLI_ENV } from './test-bundle.mjs';

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const jobs = Number(opt('--jobs') ?? 1);
const jsonOut = opt('--json');
const logs = opt('--logs');
const save = argv.includes('--save');
if (save) argv.splice(argv.indexOf('--save'), 1);
const files = argv.length
  ? argv
  : readdirSync('test/unit')
      .filter((f) => /\.test\.(ts|mjs)$/.test(f))
      .sort()
      .map((f) => join('test/unit', f));
if (!existsSync('/usr/bin/time')) {
  console.error('test-cpu: /usr/bin/time (GNU time) is needed');
  process.exit(2);
}
if (logs) mkdirSync(logs, { recursive: true });

// The CLI bundle, as the unit runner builds it (scripts/test-bundle.mjs): the files' CLI children and pool workers start
// it, so that a file's CPU seconds here are what it costs in a run.
const bundle = await buildTestBundle();

/** Runs one file under GNU time in a temp folder of its own; resolves to its measurement. */
function measure(file) {
  return new Promise((resolvePromise) => {
    const tmp = mkdtempSync(join(tmpdir(), 'eagle3-cpu-'));
    chmodSync(tmp, 0o1777); // as scripts/test.mjs: a test runs a child as another user (runPolicy.test.ts)
    const timeFile = join(tmp, '.time');
    const child = spawn('/usr/bin/time', ['-f', '%e %U %S %M', '-o', timeFile, process.execPath, '--import', 'tsx', '--test', '--test-reporter=spec', file], {
      env: { ...process.env, TMPDIR: tmp, TMP: tmp, TEMP: tmp, ...(bundle ? { [TEST_CLI_ENV]: join(bundle, 'cli.js') } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => {
      const [wall, user, sys, maxKb] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(' ').map(Number);
      const leftovers = readdirSync(tmp).filter((n) => n !== '.time' && n !== 'eagle3-prep-cache' && !/^tsx-\d+$/.test(n));
      rmSync(tmp, { recursive: true, force: true });
      const tests = Number(/^ℹ tests (\d+)/m.exec(out)?.[1] ?? NaN);
      if (logs) writeFileSync(join(logs, basename(file) + '.log'), out);
      resolvePromise({ file, cpu: user + sys, user, sys, wall, maxRssMb: Math.round(maxKb / 1024), tests, exit: code, leftovers });
    });
  });
}

const t0 = Date.now();
const load0 = loadavg()[0];
const results = [];
const queue = [...files];
await Promise.all(
  Array.from({ length: Math.max(1, jobs) }, async () => {
    for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
      const r = await measure(f);
      results.push(r);
      console.error(`${r.cpu.toFixed(1).padStart(7)} CPU s ${r.wall.toFixed(1).padStart(7)} s  ${r.file}${r.exit ? `  exit ${r.exit}` : ''}`);
    }
  }),
);
removeTestBundle(bundle);
results.sort((a, b) => b.cpu - a.cpu);
const total = results.reduce((s, r) => s + r.cpu, 0);
console.log('| file | CPU s | user | sys | wall s | tests | max RSS MB |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of results) {
  const name = basename(r.file) + (r.exit ? ` (exit ${r.exit})` : '') + (r.leftovers.length ? ` (left: ${r.leftovers.join(', ')})` : '');
  console.log(`| ${name} | ${r.cpu.toFixed(1)} | ${r.user.toFixed(1)} | ${r.sys.toFixed(1)} | ${r.wall.toFixed(1)} | ${r.tests} | ${r.maxRssMb} |`);
}
console.log(
  `\n${results.length} files, ${results.reduce((s, r) => s + (r.tests || 0), 0)} tests, ${total.toFixed(1)} CPU s in total; ` +
    `${((Date.now() - t0) / 1000).toFixed(0)} s wall with ${jobs} job(s), load average ${load0.toFixed(2)} → ${loadavg()[0].toFixed(2)}`,
);
if (save) {
  const table = existsSync(CPU_TABLE) ? JSON.parse(readFileSync(CPU_TABLE, 'utf8')) : {};
  const seconds = { ...table.seconds };
  const maxRssMb = { ...table.maxRssMb };
  for (const r of results.filter((x) => x.exit === 0)) {
    seconds[basename(r.file)] = Math.round(r.cpu * 10) / 10;
    maxRssMb[basename(r.file)] = r.maxRssMb;
  }
  const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  // Written as Prettier writes it (`npm run format:check` covers the file).
  const prettier = await import('prettier');
  const format = async (text) => prettier.format(text, { ...(await prettier.resolveConfig(CPU_TABLE)), filepath: CPU_TABLE });
  writeFileSync(
    CPU_TABLE,
    await format(
      JSON.stringify(
        {
          about: 'CPU seconds (user + sys) and peak RSS (MB) of each test file run alone: node scripts/test-cpu.mjs --save',
          measured: new Date().toISOString().slice(0, 10),
          seconds: sorted(seconds),
          maxRssMb: sorted(maxRssMb),
          together: table.together ?? [],
        },
        null,
        2,
      ),
    ),
  );
}
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ date: new Date().toISOString(), jobs, total, results }, null, 1) + '\n');
process.exit(results.some((r) => r.exit !== 0 || r.leftovers.length) ? 1 : 0);
