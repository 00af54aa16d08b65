/** The progress line of `prepare` (src/cli/progress.ts): what it shows in a terminal, and that a short run off a terminal prints nothing. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ETA_WINDOW_MS, ProgressLine, compact, duration, etaSeconds, rate } from '../../src/cli/progress';
import { defaultWorkerCount, SMALL_INPUT_BYTES } from '../../src/core/run/inputs/inputs';
import { tempDir, writeJsonl } from '../helpers';

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

test('ETA: the bytes left over the throughput of the last 30 s, so a run that slows down gets a longer ETA (not the early speed)', () => {
  const total = 1000;
  assert.ok(Number.isNaN(etaSeconds([], total)));
  assert.ok(Number.isNaN(etaSeconds([{ ms: 2000, bytes: 100 }], total)), 'not before 3 s');
  assert.ok(Number.isNaN(etaSeconds([{ ms: 5000, bytes: 10 }], total)), 'not before 2 % of the bytes');
  // Under a third of the window: the average since the start (100 bytes in 5 s → 900 bytes in 45 s).
  assert.equal(etaSeconds([{ ms: 5000, bytes: 100 }], total), 45);
  // 10 bytes/s for 60 s, then 2 bytes/s for 40 s: the window (70 s → 100 s) sees 2 bytes/s only.
  const samples = [];
  for (let s = 1; s <= 60; s++) samples.push({ ms: s * 1000, bytes: s * 10 });
  for (let s = 61; s <= 100; s++) samples.push({ ms: s * 1000, bytes: 600 + (s - 60) * 2 });
  assert.equal(samples.at(-1)?.bytes, 680);
  assert.equal(ETA_WINDOW_MS, 30_000);
  assert.equal(etaSeconds(samples, total), 320 / 2);
  // The average since the start would have said 320 / 6.8 ≈ 47 s.
  assert.ok(
    Number.isNaN(etaSeconds([{ ms: 10_000, bytes: 500 }, ...Array.from({ length: 31 }, (_, i) => ({ ms: 20_000 + i * 1000, bytes: 600 }))], total)),
    'stalled: no ETA',
  );
});

test('--workers auto (the default): the free cores, the available cores less the 1-minute load, at least 1; 1 for a small input', () => {
  const dir = tempDir();
  const big = join(dir, 'big.jsonl');
  writeFileSync(big, Buffer.alloc(SMALL_INPUT_BYTES, 0x20));
  const small = join(dir, 'small.jsonl');
  writeFileSync(small, '{}\n');
  assert.equal(defaultWorkerCount([big], { cpus: 8, load: 0.2 }), 8);
  assert.equal(defaultWorkerCount([big], { cpus: 8, load: 3.4 }), 5);
  assert.equal(defaultWorkerCount([big], { cpus: 2, load: 1.44 }), 1);
  assert.equal(defaultWorkerCount([big], { cpus: 2, load: 0.4 }), 2);
  assert.equal(defaultWorkerCount([big], { cpus: 2, load: 17 }), 1, 'a busy machine: one worker');
  assert.equal(defaultWorkerCount([big], { cpus: 4, load: NaN }), 4);
  assert.equal(defaultWorkerCount([small], { cpus: 8, load: 0 }), 1);
  assert.equal(defaultWorkerCount([join(dir, 'missing.jsonl')], { cpus: 8, load: 0 }), 1);
});
