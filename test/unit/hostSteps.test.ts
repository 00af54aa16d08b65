import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HostSteps } from '../host/steps';

test('host suite steps: a failing step is reported and the next runs; finish fails naming every failed step', async () => {
  const lines: string[] = [];
  const steps = new HostSteps((l) => lines.push(l));
  const ran: string[] = [];
  assert.equal(await steps.run('one', () => (ran.push('one'), 1)), 1);
  assert.equal(
    await steps.run('two', async () => {
      ran.push('two');
      throw new Error('two broke\nsecond line');
    }),
    undefined,
  );
  assert.equal(await steps.run('three', async () => (ran.push('three'), 'x')), 'x');
  await steps.run('four', () => {
    throw 'not an Error';
  });
  assert.deepEqual(ran, ['one', 'two', 'three']);
  assert.deepEqual(steps.passed, ['one', 'three']);
  assert.deepEqual(
    steps.failures.map((f) => [f.name, f.message]),
    [
      ['two', 'two broke\nsecond line'],
      ['four', 'not an Error'],
    ],
  );
  assert.ok(lines.some((l) => /^\[host-suite\] FAILED: two \(\d+ ms\): two broke/.test(l)));
  assert.throws(() => steps.finish(), { message: '2 of 4 host-suite steps failed:\n- two: two broke\n- four: not an Error' });
});

test('host suite steps: finish passes when every step passed', async () => {
  const lines: string[] = [];
  const steps = new HostSteps((l) => lines.push(l));
  await steps.run('only', async () => undefined);
  steps.finish();
  assert.deepEqual(lines, ['[host-suite] 1 of 1 steps passed']);
});
