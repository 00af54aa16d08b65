import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PrepareProgress } from '../../src/core/run/contract';
import { formatBytes, progressMessage } from '../../src/vscode/progressText';

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

test('progress: without a row count, a percentage of the bytes read when the size is known', () => {
  const size = 53 * 1024 * 1024 + 100 * 1024;
  assert.equal(
    progressMessage(p({ bytesRead: Math.floor(size * 0.377), bytesTotal: size }), undefined),
    'chat.jsonl: 1,200 rows read (37 % of 53.1 MB), 2,300 records written',
  );
  assert.equal(progressMessage(p({ bytesRead: size, bytesTotal: size }), undefined), 'chat.jsonl: 1,200 rows read (100 % of 53.1 MB), 2,300 records written');
  // the row percentage wins when both are known
  assert.equal(progressMessage(p({ bytesRead: 10, bytesTotal: 100 }), 5000), 'chat.jsonl: 1,200 of 5,000 rows read (24 %), 2,300 records written');
  // a size that went out of date (the file grew while read) is not believed past the end
  assert.equal(progressMessage(p({ bytesRead: 200, bytesTotal: 100 }), undefined), 'chat.jsonl: 1,200 rows read, 2,300 records written');
  assert.deepEqual([0, 812, 1024, 3482, 1024 * 1024, 1.25 * 1024 ** 3].map(formatBytes), ['0 B', '812 B', '1.0 KB', '3.4 KB', '1.0 MB', '1.3 GB']);
});
