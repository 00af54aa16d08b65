/** `--workers N` as the run's thread and N − 1 pool workers (src/core/run/prepare/sharedExecutor.ts, pool.ts takeBack). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkerPool, type RowBatch } from '../../src/core/run/prepare/pool';
import {
  POOL_QUEUE_DEPTH,
  POOL_QUEUE_DEPTH_ENV,
  SHARED_ROWS_ENV,
  SharedRowExecutor,
  poolQueueDepth,
  sharedRows,
} from '../../src/core/run/prepare/sharedExecutor';
import { RowProcessor } from '../../src/core/records/rowProcessor';
import { recordLineCount, recordLineTexts, type RowResult } from '../../src/core/records/rowResult';
import { lenmlModelDir } from '../helpers';

const batch = (line: number): RowBatch => ({
  file: '/d/chat.jsonl',
  fileBase: 'chat.jsonl',
  rows: [
    {
      line,
      value: {
        messages: [
          { role: 'user', content: `question ${line}` },
          { role: 'assistant', content: `answer ${line}` },
        ],
      },
    },
  ],
});

test('a batch waiting in a worker’s queue is taken back: the worker skips it and answers the others, each counted once', async () => {
  const settings = { tokenizerDir: lenmlModelDir('deepseek_v3') };
  const pool = new WorkerPool(1, settings, { reportSetup: false, takeBack: true });
  try {
    // Sent in the same tick as the pool started: the worker is still loading, so none has started.
    const sent = [1, 2, 3, 4].map((line) => pool.run(batch(line)));
    assert.deepEqual(pool.leastLoaded(), { index: 0, queued: 4 });
    const taken = pool.takeBack();
    assert.ok(taken);
    assert.equal(taken.batch.rows[0].line, 1); // the oldest
    const here = await new RowProcessor(settings).processRows(taken.batch.rows, taken.batch.file, taken.batch.fileBase);
    taken.resolve(here);
    const results = await Promise.all(sent);
    assert.equal(results[0], here);
    assert.deepEqual(
      results.map((r) => r.map((x: RowResult) => [x.line, x.fate, recordLineCount(x)])),
      [1, 2, 3, 4].map((line) => [[line, 'written', 1]]),
    );
    // The worker's records are those of this thread (the same processor code, the same tokenizer); they crossed as
    // UTF-8 bytes (records/rowResult.ts packRecordLines), the batch taken back and processed here as texts.
    const mine = await new RowProcessor(settings).processRows(batch(2).rows, '/d/chat.jsonl', 'chat.jsonl');
    assert.equal(results[1][0].records.length, 0);
    assert.equal(results[1][0].recordBytes?.length, 1);
    assert.equal(Buffer.from(results[1][0].recordBytes![0]).toString('utf8'), mine[0].records[0]);
    assert.deepEqual(recordLineTexts(results[1][0]), mine[0].records);
    assert.equal(results[0][0].recordBytes, undefined);
    // Every batch answered (the skipped one too) before the last result came back; nothing left to take back.
    assert.deepEqual(pool.leastLoaded(), { index: 0, queued: 0 });
    assert.equal(pool.takeBack(), undefined);
  } finally {
    await pool.close();
  }
});

/** A stand-in pool: `queued` batches in its one worker's queue; records what was sent and taken back. */
function fakePool(queued: number, waiting: RowBatch[] = []) {
  const sent: RowBatch[] = [];
  const fake = {
    failed: null as Error | null,
    queued,
    leastLoaded: () => ({ index: 0, queued: fake.queued }),
    runOn: (_i: number, b: RowBatch) => {
      sent.push(b);
      return Promise.resolve([] as RowResult[]);
    },
    takeBack: () => {
      const b = waiting.shift();
      return b && { batch: b, resolve: (r: RowResult[]) => taken.push(r), reject: (e: Error) => assert.fail(e) };
    },
    close: async () => {},
  };
  const taken: RowResult[][] = [];
  return { pool: fake as unknown as WorkerPool, fake, sent, taken };
}

test('the run’s thread keeps a batch only when every worker holds its queue depth, and works off queued batches instead of waiting', async () => {
  const processor = new RowProcessor({ tokenizerDir: lenmlModelDir('deepseek_v3') });
  const { pool, fake, sent, taken } = fakePool(2, [batch(9)]);
  const ex = new SharedRowExecutor(processor, pool, 3);
  await ex.run(batch(1)); // queue 2 < 3: to the worker
  assert.equal(sent.length, 1);
  fake.queued = 3;
  const own = await ex.run(batch(2)); // the worker is full: here
  assert.equal(sent.length, 1);
  assert.deepEqual(
    own.map((r) => [r.line, r.fate]),
    [[2, 'written']],
  );
  assert.equal(await ex.help(), true); // batch 9 taken back and processed here
  assert.deepEqual(
    taken.map((r) => r.map((x) => [x.line, x.fate])),
    [[[9, 'written']]],
  );
  assert.equal(await ex.help(), false); // nothing left to take back
  assert.deepEqual(ex.counts, { own: 1, sent: 1, takenBack: 1 });
  fake.failed = new Error('pool worker 0 exited (code 3)');
  await assert.rejects(ex.run(batch(3)), /exited/);
});

test('the queue depth: 3 unless EAGLE3_POOL_QUEUE_DEPTH names a whole number in 1–64', () => {
  assert.equal(POOL_QUEUE_DEPTH, 3);
  assert.equal(poolQueueDepth({}), 3);
  assert.equal(poolQueueDepth({ [POOL_QUEUE_DEPTH_ENV]: '8' }), 8);
  for (const bad of ['', '0', '65', '1.5', 'deep']) assert.equal(poolQueueDepth({ [POOL_QUEUE_DEPTH_ENV]: bad }), 3, bad);
});

test('the shared executor is on only when EAGLE3_SHARED_ROWS is 1', () => {
  assert.equal(sharedRows({}), false);
  assert.equal(sharedRows({ [SHARED_ROWS_ENV]: '1' }), true);
  for (const other of ['', '0', 'yes', 'true']) assert.equal(sharedRows({ [SHARED_ROWS_ENV]: other }), false, other);
});
