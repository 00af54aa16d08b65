/** The memory trace of a run (EAGLE3_MEM_TRACE, src/core/run/prepare/memTrace.ts): off by default, its period, its line. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { memSampleLine, memTracePeriod } from '../../src/core/run/prepare/memTrace';

test('EAGLE3_MEM_TRACE: unset or 0 is off; 1 (or a value under 20) samples every 250 ms; a number is the period in ms', () => {
  assert.equal(memTracePeriod({}), 0);
  assert.equal(memTracePeriod({ EAGLE3_MEM_TRACE: '' }), 0);
  assert.equal(memTracePeriod({ EAGLE3_MEM_TRACE: '0' }), 0);
  assert.equal(memTracePeriod({ EAGLE3_MEM_TRACE: '1' }), 250);
  assert.equal(memTracePeriod({ EAGLE3_MEM_TRACE: 'yes' }), 250);
  assert.equal(memTracePeriod({ EAGLE3_MEM_TRACE: '5' }), 250);
  assert.equal(memTracePeriod({ EAGLE3_MEM_TRACE: '1000' }), 1000);
});

test('a sample line names the thread and gives rss, heap used/total, external and ArrayBuffer memory in MB, then the note', () => {
  const line = memSampleLine('main', Date.now() - 1500, 'data.jsonl');
  const m = /^mem main t=(\d+\.\d) rss=(\d+) heap=(\d+)\/(\d+) ext=(\d+) ab=(\d+) malloc=(\d+) data\.jsonl$/.exec(line);
  assert.ok(m, line);
  assert.ok(Number(m[1]) >= 1.5 && Number(m[1]) < 60, line);
  const rss = Number(m[2]);
  const [used, total] = [Number(m[3]), Number(m[4])];
  assert.ok(rss > 10 && rss < 100_000, line);
  assert.ok(used > 0 && used <= total && total <= rss, line);
});

test('startMemTrace prints samples to stderr only when EAGLE3_MEM_TRACE is set, and never keeps the process alive', () => {
  const src = join(__dirname, '..', '..', 'src', 'core', 'run', 'prepare', 'memTrace.ts');
  const script = `const { startMemTrace } = require(${JSON.stringify(src)}); startMemTrace('main', () => 'x'); setTimeout(() => {}, 300);`;
  const run = (env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  const on = run({ EAGLE3_MEM_TRACE: '50' });
  assert.equal(on.status, 0, on.stderr);
  assert.match(on.stderr, /^mem main t=\d+\.\d rss=\d+ heap=\d+\/\d+ ext=\d+ ab=\d+ malloc=\d+ x$/m);
  const off = run({ EAGLE3_MEM_TRACE: '' });
  assert.equal(off.status, 0, off.stderr);
  assert.doesNotMatch(off.stderr, /^mem /m);
});
