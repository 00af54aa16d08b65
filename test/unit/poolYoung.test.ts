/** The pool workers' young generation (src/core/run/prepare/pool.ts): the default, and EAGLE3_POOL_YOUNG_MB for measuring. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { POOL_WORKER_YOUNG_MB, POOL_YOUNG_MB_ENV, poolWorkerYoungMb } from '../../src/core/run/prepare/pool';

test('a pool worker’s young generation: 8 MB unless EAGLE3_POOL_YOUNG_MB names a whole number of MB in 1–256', () => {
  assert.equal(POOL_WORKER_YOUNG_MB, 8);
  assert.equal(poolWorkerYoungMb({}), 8);
  assert.equal(poolWorkerYoungMb({ [POOL_YOUNG_MB_ENV]: '32' }), 32);
  for (const bad of ['', '0', '-4', '2.5', '300', 'lots']) assert.equal(poolWorkerYoungMb({ [POOL_YOUNG_MB_ENV]: bad }), 8, bad);
});
