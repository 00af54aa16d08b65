/** The progress line of `prepare` (src/cli/progress.ts): what it shows in a terminal, and that a short run off a terminal prints nothing. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { ProgressLine, compact, duration, rate } from '../../src/cli/progress';
import { writeJsonl } from '../helpers';

function fakeStream(tty: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const s = new PassThrough();
  let buf = '';
  s.on('data', (d) => (buf += d));
  Object.assign(s, { isTTY: tty, columns: 200, rows: 40, getWindowSize: () => [200, 40] });
  return { stream: s as unknown as NodeJS.WriteStream, text: () => buf };
}

const event = (file: string, rowsRead: number, bytesRead: number, bytesTotal: number) => ({
  file,
  fileIndex: 0,
  fileCount: 1,
  rowsRead,
  recordsWritten: rowsRead,
  bytesRead,
  bytesTotal,
  tokensWritten: rowsRead * 100,
  rowsDropped: 0,
  rowsErrored: 3,
  workers: 2,
});

test('number formats of the progress line', () => {
  assert.equal(compact(999), '999');
  assert.equal(compact(1234), '1.2k');
  assert.equal(compact(3_100_000), '3.1M');
  assert.equal(compact(250_000), '250k');
  assert.equal(rate(0.3), '0.3');
  assert.equal(rate(12_345), '12.3k');
  assert.equal(duration(80), '1m 20s');
  assert.equal(duration(7322), '2h 2m');
  assert.equal(duration(Number.NaN), '?');
});

test('in a terminal: one live line with the share of bytes, file, rows, tokens, errored rows and workers; cleared at the end', () => {
  const file = writeJsonl([{ a: 1 }, { b: 2 }]);
  const { stream, text } = fakeStream(true);
  const p = new ProgressLine([file], stream);
  const size = statSync(file).size;
  p.update(event(file, 1000, size / 2, size));
  p.stop();
  const out = text();
  assert.match(out, / 50% ▕██████████░░░░░░░░░░▏ file 1\/1 data\.jsonl · 1,000 rows [0-9.kM]+\/s · 3 errored · 100k tok [0-9.kM]+\/s · ETA … · 2 workers/);
  assert.ok(!out.endsWith('\n'), 'the line is cleared, not left behind');
});

test('off a terminal, a run shorter than the log interval prints no progress at all', () => {
  const file = writeJsonl([{ a: 1 }]);
  const { stream, text } = fakeStream(false);
  const p = new ProgressLine([file], stream);
  p.update(event(file, 10, 1, 10));
  p.stop();
  assert.equal(text(), '');
});
