/**
 * A pool worker's record lines cross to the run's thread as UTF-8 bytes in one transferred buffer per batch
 * (records/rowResult.ts packRecordLines), and are written as they are: the same bytes as the texts written in the
 * run's thread, the same counts, the same renamed ids.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packRecordLines, recordLineCount, recordLineTexts, type RowResult } from '../../src/core/records/rowResult';
import { UniqueIds } from '../../src/core/run/prepare/uniqueIds';
import { AtomicOutput } from '../../src/core/run/outputs/output';
import { RecordSpan } from '../../src/core/run/outputs/recordSpan';
import { NULL_SINK, type Sink } from '../../src/core/run/outputs/runOutputs';
import { prepare } from '../../src/core/run/prepare/pipeline';
import type { PrepareOptions } from '../../src/core/run/contract';
import { lenmlModelDir, tempDir, testWorkerScript, writeJsonl } from '../helpers';

/** A written row's result with these record lines (the other fields as a row processor fills them). */
const written = (line: number, records: string[], recordConvIds?: string[]): RowResult => ({
  line,
  fate: 'written',
  notes: [],
  records,
  ...(recordConvIds ? { recordConvIds } : {}),
  trainableTokens: 0,
  totalTokens: 0,
  recordTokens: records.map(() => 1),
  recordTrainable: records.map(() => 1),
  renderedTokens: 0,
});

test('packRecordLines: one buffer for the batch, one view per line holding its UTF-8 bytes; rows without lines untouched', () => {
  const lines = [
    ['{"id":"a","input_ids":[1,2,3]}\n', '{"id":"a#1","input_ids":[4]}\n'],
    [],
    // Non-ASCII past the first guess of one byte per UTF-16 unit: 2-, 3- and 4-byte characters (a surrogate pair).
    ['{"id":"é中😀","text":"ñ ü 日本語 🚀🚀"}\n'],
    ['{"id":"z"}\n'],
  ];
  const results = lines.map((l, k) => written(k + 1, [...l]));
  const transfer = packRecordLines(results);
  assert.equal(transfer.length, 1);
  const buffer = transfer[0];
  assert.deepEqual(
    results.map((r) => [r.records.length, r.recordBytes?.length, recordLineCount(r)]),
    [
      [0, 2, 2],
      [0, undefined, 0],
      [0, 1, 1],
      [0, 1, 1],
    ],
  );
  results.forEach((r, k) => {
    assert.deepEqual(recordLineTexts(r), lines[k]);
    (r.recordBytes ?? []).forEach((view, i) => {
      assert.equal(view.buffer, buffer);
      assert.deepEqual(Buffer.from(view), Buffer.from(lines[k][i], 'utf8'));
    });
  });
  // The views follow one another in the buffer, in record order.
  const all = results.flatMap((r) => r.recordBytes ?? []);
  for (let i = 1; i < all.length; i++) assert.equal(all[i].byteOffset, all[i - 1].byteOffset + all[i - 1].byteLength);
  assert.equal(all[0].byteOffset, 0);
  assert.equal(Buffer.concat(all.map((v) => Buffer.from(v))).toString('utf8'), lines.flat().join(''));
});

test('packRecordLines: `--format messages` rows (an empty line per record) keep their count and transfer nothing', () => {
  const results = [written(1, ['', '']), written(2, [''])];
  assert.deepEqual(packRecordLines(results), []);
  assert.deepEqual(
    results.map((r) => [r.records, r.recordBytes, recordLineCount(r)]),
    [
      [['', ''], undefined, 2],
      [[''], undefined, 1],
    ],
  );
});

test('a duplicate id is renamed the same in lines that came as bytes as in texts', () => {
  const lines = ['{"id":"c1#0","input_ids":[1]}\n', '{"id":"c1#1","input_ids":[2],"t":"中"}\n'];
  const texts = [written(1, [...lines], ['c1', 'c1']), written(2, [...lines], ['c1', 'c1'])];
  const bytes = [written(1, [...lines], ['c1', 'c1']), written(2, [...lines], ['c1', 'c1'])];
  packRecordLines(bytes);
  const a = new UniqueIds();
  const b = new UniqueIds();
  for (const r of texts) a.apply(r);
  for (const r of bytes) b.apply(r);
  // The first row keeps its lines as bytes (nothing renamed); the second's are renamed, as texts.
  assert.equal(bytes[0].recordBytes?.length, 2);
  assert.equal(bytes[1].recordBytes, undefined);
  assert.deepEqual(bytes[1].records, ['{"id":"c1~2#0","input_ids":[1]}\n', '{"id":"c1~2#1","input_ids":[2],"t":"中"}\n']);
  assert.deepEqual(bytes.map(recordLineTexts), texts.map(recordLineTexts));
  assert.deepEqual(bytes[1].notes, ['duplicate_id_renamed']);
});

test('AtomicOutput writes bytes as they are and counts them in bytesWritten', async () => {
  const dir = tempDir();
  const out = new AtomicOutput(join(dir, 'o.jsonl'));
  await out.write('{"a":"é"}\n');
  await out.write(new Uint8Array(Buffer.from('{"b":"中😀"}\n', 'utf8')));
  assert.equal(out.bytesWritten, Buffer.byteLength('{"a":"é"}\n{"b":"中😀"}\n'));
  await out.commit();
  assert.equal(readFileSync(join(dir, 'o.jsonl'), 'utf8'), '{"a":"é"}\n{"b":"中😀"}\n');
});

test('2 pool workers write what this thread writes: non-ASCII text and repeated ids, in input order', async () => {
  const rows = Array.from({ length: 60 }, (_, i) => ({
    // Ids repeat every 7 rows (renamed `~2`, `~3`… in input order); texts hold 2-, 3- and 4-byte characters.
    id: `conv-${i % 7}`,
    messages: [
      { role: 'user', content: `question ${i}: ñandú, 東京, 🚀 `.repeat(1 + (i % 4)) },
      { role: 'assistant', content: `réponse ${i} — 答え 😀` },
    ],
  }));
  const file = writeJsonl(rows);
  const tokenizerDir = lenmlModelDir('deepseek_v3');
  const outs = [tempDir(), tempDir()];
  const one = await prepare({ inputs: [file], outDir: outs[0], workers: 1, tokenizerDir });
  const two = await prepare({ inputs: [file], outDir: outs[1], workers: 2, workerScript: testWorkerScript(), tokenizerDir });
  const data = outs.map((o) => readFileSync(join(o, 'data', 'tokenized_data.jsonl')));
  assert.ok(data[0].equals(data[1]));
  assert.equal(one.totals.recordsWritten, 60);
  assert.equal(two.totals.recordsWritten, 60);
  assert.equal(two.files[0].notes.duplicate_id_renamed, 53);
  const ids = data[1]
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).id as string);
  assert.deepEqual(ids.slice(0, 9), ['conv-0', 'conv-1', 'conv-2', 'conv-3', 'conv-4', 'conv-5', 'conv-6', 'conv-0~2', 'conv-1~2']);
  assert.equal(readFileSync(join(outs[1], 'token_counts.json'), 'utf8'), readFileSync(join(outs[0], 'token_counts.json'), 'utf8'));
});

test('RecordSpan writes adjacent lines of one buffer as one write, and starts again after a gap or another buffer', async () => {
  const rows = ['{"a":1}\n', '{"b":2}\n', '{"c":"é"}\n', '{"d":4}\n'].map((l, k) => written(k + 1, [l]));
  packRecordLines(rows);
  const other = written(9, ['{"z":9}\n']);
  packRecordLines([other]);
  const writes: string[] = [];
  const sink: Sink = { ...NULL_SINK, write: async (t) => void writes.push(typeof t === 'string' ? t : Buffer.from(t).toString('utf8')) };
  const span = new RecordSpan(sink);
  // Rows 1 and 2 follow one another; row 3 is left out (a repeat under --dedup); row 4, then another batch's line.
  for (const r of [rows[0], rows[1], rows[3], other]) for (const b of r.recordBytes!) await span.add(b);
  await span.flush();
  await span.flush();
  assert.deepEqual(writes, ['{"a":1}\n{"b":2}\n', '{"d":4}\n', '{"z":9}\n']);
});

test('--dedup with 2 pool workers writes what this thread writes (repeats left out between lines written together)', async () => {
  const rows = Array.from({ length: 48 }, (_, i) => ({
    messages: [
      { role: 'user', content: `question ${i % 5} ñ` },
      { role: 'assistant', content: `answer ${i % 5} 😀` },
    ],
  }));
  const file = writeJsonl(rows);
  const tokenizerDir = lenmlModelDir('deepseek_v3');
  const outs = [tempDir(), tempDir()];
  const one = await prepare({ inputs: [file], outDir: outs[0], workers: 1, dedup: true, tokenizerDir });
  const two = await prepare({ inputs: [file], outDir: outs[1], workers: 2, dedup: true, workerScript: testWorkerScript(), tokenizerDir });
  const data = outs.map((o) => readFileSync(join(o, 'data', 'tokenized_data.jsonl')));
  assert.ok(data[0].equals(data[1]));
  assert.equal(data[1].toString('utf8').split('\n').filter(Boolean).length, 5);
  assert.equal(one.totals.dropped.duplicate, 43);
  assert.equal(two.totals.dropped.duplicate, 43);
});

test('2 pool workers write every output file as this thread does: --format both, speculators, --long split, --dedup, renamed ids, rows dropped and set aside between', async () => {
  const base: object[] = Array.from({ length: 40 }, (_, i) =>
    i % 7 === 3
      ? { messages: [{ role: 'user', content: 'a question alone' }] } // set aside
      : i % 9 === 5
        ? { bogus: i } // dropped (no known shape)
        : {
            id: `r${i % 6}`, // renamed `~2`, `~3`…
            messages: [
              { role: 'user', content: `question ${i % 11}: ñandú 東京 🚀 `.repeat(1 + (i % 4) * 12) },
              { role: 'assistant', content: `réponse ${i % 11} — 答え 😀 `.repeat(1 + (i % 3) * 15) },
              { role: 'user', content: `and then ${i % 11}?` },
              { role: 'assistant', content: `then ${i % 11} ✓ `.repeat(1 + (i % 5) * 8) },
            ],
          },
  );
  // Repeats of written rows between the others (--dedup drops them; same ids, renamed where written).
  const rows = [...base.slice(0, 20), ...base.slice(0, 6), ...base.slice(20)];
  const file = writeJsonl(rows);
  const tokenizerDir = lenmlModelDir('qwen3');
  const outs = [tempDir(), tempDir()];
  const opts: Omit<PrepareOptions, 'outDir'> = {
    inputs: [file],
    tokenizerDir,
    format: 'both',
    trainer: 'speculators',
    long: 'split',
    maxLength: 400,
    dedup: true,
  };
  const one = await prepare({ ...opts, outDir: outs[0], workers: 1 });
  const two = await prepare({ ...opts, outDir: outs[1], workers: 2, workerScript: testWorkerScript() });
  for (const f of [
    'data/tokenized_data.jsonl',
    'data/tokenized_data.parquet',
    'speculators/data-00000-of-00001.arrow',
    'problems.jsonl',
    'prompts_to_generate.jsonl',
    'token_counts.json',
  ]) {
    const [a, b] = outs.map((o) => readFileSync(join(o, f)));
    assert.ok(a.equals(b), `${f} differs`);
  }
  const lines = readFileSync(join(outs[1], 'data', 'tokenized_data.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  assert.equal(two.totals.recordsWritten, lines.length);
  assert.ok(lines.length > two.totals.rowsWritten, 'long rows were split into several records');
  assert.deepEqual(two.totals.dropped, one.totals.dropped);
  assert.ok(two.totals.dropped.duplicate > 0);
  assert.ok(
    two.totals.dropped.unrecognized_shape > 0 && two.totals.dropped.too_long > 0 && two.totals.rowsWritten > 10,
    JSON.stringify(two.totals.dropped) + two.totals.rowsWritten,
  );
});
