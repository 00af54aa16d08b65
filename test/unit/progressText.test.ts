import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PrepareProgress } from '../../src/core/run/contract';
import { progressMessage } from '../../src/vscode/progressText';

const p = (o: Partial<PrepareProgress>): PrepareProgress => ({
  file: '/w/data/chat.jsonl',
  fileIndex: 0,
  fileCount: 1,
  rowsRead: 1200,
  recordsWritten: 2300,
  bytesRead: 0,
  bytesTotal: 0,
  tokensWritten: 0,
  rowsDropped: 0,
  rowsErrored: 0,
  workers: 1,
  ...o,
});

test('progress: a percentage of rows when the row count is known, rows read otherwise', () => {
  assert.equal(progressMessage(p({}), 5000), 'chat.jsonl: 1,200 of 5,000 rows read (24 %), 2,300 records written');
  assert.equal(
    progressMessage(p({ fileIndex: 1, fileCount: 3, rowsRead: 4999 }), 5000),
    'chat.jsonl (2/3): 4,999 of 5,000 rows read (99 %), 2,300 records written',
  );
  assert.equal(progressMessage(p({ rowsRead: 1, recordsWritten: 1 }), undefined), 'chat.jsonl: 1 row read, 1 record written');
  // a count that went out of date is not believed past the end
  assert.equal(progressMessage(p({ rowsRead: 6000 }), 5000), 'chat.jsonl: 6,000 rows read, 2,300 records written');
  assert.equal(progressMessage(p({ rowsRead: 0 }), 0), 'chat.jsonl: 0 rows read, 2,300 records written');
});
