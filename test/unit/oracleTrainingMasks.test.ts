/**
 * The naive spec oracle of oracleMasks.test.ts on the 18 training templates of test/fixtures/templates-training, in a
 * process of its own (ORACLE_SET=training): the oracle's records must equal prepare's, id for id and bit for bit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

test('naive spec oracle agrees with prepare on every training template (oracleMasks.test.ts, ORACLE_SET=training)', () => {
  // A test run of its own: without NODE_TEST_CONTEXT, which makes node skip a test run started inside a test file.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', join(__dirname, 'oracleMasks.test.ts')], {
    env: { ...env, ORACLE_SET: 'training' },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const out = `${r.stdout}${r.stderr}`;
  for (const line of out.split('\n')) if (/records compared|^not ok/.test(line)) console.log(line);
  assert.equal(r.status, 0, out.slice(-4000));
  // 18 comparisons passed (the other tests of the file are skipped in this set).
  assert.match(out, /^# pass 18$/m);
});
