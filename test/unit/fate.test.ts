/** records/fate.ts: the one decision of a record's and a row's fate (written, too_long, truncated, no_trainable_tokens, errored), used by prepare and the record view. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { maskedRecordFate, recordFate, rowFate } from '../../src/core/records/fate';
import { recordViewerFor } from '../../src/core/records/recordViewer';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir, writeJsonl } from '../helpers';

test('maskedRecordFate: within the limit a record is written whole, with its trainable count', () => {
  assert.deepEqual(maskedRecordFate([0, 0, 1, 1, 0], {}), { written: true, keep: 5, truncated: false, trainable: 2 });
  assert.deepEqual(maskedRecordFate([0, 1, 1], { maxLength: 3 }), { written: true, keep: 3, truncated: false, trainable: 2 }, 'exactly max length: kept');
});

test('maskedRecordFate: over the limit, dropped as too_long, or cut when truncate is on', () => {
  const mask = [0, 0, 0, 1, 1, 1, 0];
  assert.deepEqual(maskedRecordFate(mask, { maxLength: 6 }), { written: false, reason: 'too_long', truncated: false });
  assert.deepEqual(maskedRecordFate(mask, { maxLength: 6, truncate: false }), { written: false, reason: 'too_long', truncated: false });
  assert.deepEqual(maskedRecordFate(mask, { maxLength: 5, truncate: true }), { written: true, keep: 5, truncated: true, trainable: 2 });
});

test('maskedRecordFate: no trainable token (before or after the cut) drops the record as no_trainable_tokens', () => {
  assert.deepEqual(maskedRecordFate([0, 0, 0], {}), { written: false, reason: 'no_trainable_tokens', truncated: false });
  assert.deepEqual(maskedRecordFate([], {}), { written: false, reason: 'no_trainable_tokens', truncated: false });
  // The cut keeps only the prompt: the trainable tokens were all past max length.
  assert.deepEqual(maskedRecordFate([0, 0, 0, 0, 1, 1], { maxLength: 4, truncate: true }), { written: false, reason: 'no_trainable_tokens', truncated: true });
});

test('recordFate on counts asks for the trainable tokens of the kept prefix only', () => {
  const asked: number[] = [];
  const fate = recordFate(
    10_000,
    (n) => {
      asked.push(n);
      return Math.floor(n / 2);
    },
    { maxLength: 4096, truncate: true },
  );
  assert.deepEqual(fate, { written: true, keep: 4096, truncated: true, trainable: 2048 });
  assert.deepEqual(asked, [4096]);
  assert.deepEqual(
    recordFate(10_000, () => assert.fail('not asked when too long'), { maxLength: 4096 }),
    { written: false, reason: 'too_long', truncated: false },
  );
});

test('maskedRecordFate: fewer trainable tokens than the minimum drops the record as too_few_trainable_tokens', () => {
  assert.deepEqual(maskedRecordFate([0, 1, 1, 0], { minTrainableTokens: 3 }), { written: false, reason: 'too_few_trainable_tokens', truncated: false });
  assert.deepEqual(maskedRecordFate([0, 1, 1, 1], { minTrainableTokens: 3 }), { written: true, keep: 4, truncated: false, trainable: 3 });
  assert.deepEqual(maskedRecordFate([0, 0, 1, 1, 1], { maxLength: 4, truncate: true, minTrainableTokens: 3 }), {
    written: false,
    reason: 'too_few_trainable_tokens',
    truncated: true,
  });
  assert.deepEqual(maskedRecordFate([0, 0], { minTrainableTokens: 3 }), { written: false, reason: 'no_trainable_tokens', truncated: false }, 'none at all');
  assert.deepEqual(maskedRecordFate([0, 1], { minTrainableTokens: 0 }), { written: true, keep: 2, truncated: false, trainable: 1 }, 'a minimum below 1 is 1');
});

test('maskedRecordFate: a smaller trainable share than the minimum drops the record as low_trainable_share', () => {
  // 3 of 30 tokens trainable: a share of 0.1 exactly (0.1 × 30 is 3.0000000000000004 in floating point)
  const mask = [...Array<number>(27).fill(0), 1, 1, 1];
  assert.deepEqual(maskedRecordFate(mask, { minTrainableShare: 0.1 }), { written: true, keep: 30, truncated: false, trainable: 3 });
  assert.deepEqual(maskedRecordFate(mask, { minTrainableShare: 0.11 }), { written: false, reason: 'low_trainable_share', truncated: false });
  assert.deepEqual(maskedRecordFate(mask, { minTrainableShare: 0 }), { written: true, keep: 30, truncated: false, trainable: 3 }, '0 is off');
  // the share of the tokens kept: cut to its first 4 tokens, [0, 0, 1, 1, 1, 1] is half trainable
  assert.deepEqual(maskedRecordFate([0, 0, 1, 1, 1, 1], { maxLength: 4, truncate: true, minTrainableShare: 0.6 }), {
    written: false,
    reason: 'low_trainable_share',
    truncated: true,
  });
  assert.deepEqual(maskedRecordFate([0, 0, 1, 1, 1, 1], { minTrainableShare: 0.6 }), { written: true, keep: 6, truncated: false, trainable: 4 });
  // no trainable token stays no_trainable_tokens; the count minimum is checked first
  assert.deepEqual(maskedRecordFate([0, 0], { minTrainableShare: 0.5 }), { written: false, reason: 'no_trainable_tokens', truncated: false });
  assert.deepEqual(maskedRecordFate([0, 1], { minTrainableTokens: 2, minTrainableShare: 0.9 }), {
    written: false,
    reason: 'too_few_trainable_tokens',
    truncated: false,
  });
});

test('rowFate: written wins; else the first target error; else the reason that dropped most records (ties: the later)', () => {
  const te = { reason: 'template_unsupported', message: 'turn 3 not found' };
  assert.deepEqual(rowFate({ written: 1, drops: ['too_long'], targetErrors: [te] }), { fate: 'written' });
  assert.deepEqual(rowFate({ written: 0, drops: ['too_long'], targetErrors: [te, { reason: 'x', message: 'y' }] }), { fate: 'errored', targetError: te });
  assert.deepEqual(rowFate({ written: 0, drops: ['no_trainable_tokens', 'too_long'], targetErrors: [] }), { fate: 'dropped', reason: 'too_long' });
  assert.deepEqual(rowFate({ written: 0, drops: ['too_long', 'no_trainable_tokens'], targetErrors: [] }), { fate: 'dropped', reason: 'no_trainable_tokens' });
  // A rule that emptied the row is named even when another rule dropped its last record (--min-trainable-share beside --max-length).
  assert.deepEqual(rowFate({ written: 0, drops: ['low_trainable_share', 'low_trainable_share', 'too_long'], targetErrors: [] }), {
    fate: 'dropped',
    reason: 'low_trainable_share',
  });
  assert.deepEqual(rowFate({ written: 0, drops: ['too_long', 'low_trainable_share', 'too_long', 'low_trainable_share'], targetErrors: [] }), {
    fate: 'dropped',
    reason: 'low_trainable_share',
  });
  assert.deepEqual(rowFate({ written: 0, drops: [], targetErrors: [] }), { fate: 'dropped', reason: 'no_trainable_tokens' }, 'no target, no record');
});

test('prepare and the record view decide the same fates: too_long, cut, and cut to nothing trainable, on the chat sample', async () => {
  const row = readFileSync(join(__dirname, '..', '..', 'samples', 'chat-sharegpt-human-gpt.jsonl'), 'utf8').split('\n')[0];
  const input = writeJsonl([JSON.parse(row)], 'one.jsonl');
  const viewer = recordViewerFor(undefined);
  // The row renders as 2 records of 46 and 68 tokens (Qwen3 rewrites history); the second one's
  // 14 trainable tokens are its last ones.
  const cases = [
    { maxLength: 60, truncate: false, seqLens: [46], notes: { record_dropped_too_long: 1 }, warnings: ['too_long'] },
    { maxLength: 60, truncate: true, seqLens: [46, 60], notes: { record_truncated: 1 }, warnings: ['record_truncated'] },
    {
      maxLength: 50,
      truncate: true,
      seqLens: [46],
      notes: { record_truncated: 1, record_dropped_no_trainable_tokens: 1 },
      warnings: ['record_truncated', 'no_trainable_tokens'],
    },
    // 16 and 14 trainable tokens: a minimum of 15 drops the second record.
    { minTrainableTokens: 15, seqLens: [46], notes: { record_dropped_few_trainable_tokens: 1 }, warnings: ['too_few_trainable_tokens'] },
    // 16 of 46 (0.35) and 14 of 68 (0.21) trainable: a share of 0.25 drops the second record.
    { minTrainableShare: 0.25, seqLens: [46], notes: { record_dropped_low_trainable_share: 1 }, warnings: ['low_trainable_share'] },
  ];
  for (const c of cases) {
    const res = await prepare({
      inputs: [input],
      outDir: tempDir('e3p-fate-out-'),
      maxLength: c.maxLength,
      truncate: c.truncate,
      minTrainableTokens: c.minTrainableTokens,
      minTrainableShare: c.minTrainableShare,
    });
    const records = readFileSync(res.outputs.tokenizedData, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const view = viewer.view(
      { text: row, file: input, line: 1 },
      { maxLength: c.maxLength, long: c.truncate ? 'truncate' : 'drop', minTrainableTokens: c.minTrainableTokens, minTrainableShare: c.minTrainableShare },
    );
    const what = JSON.stringify(c);
    assert.deepEqual(
      view.records.map((r) => r.tokens),
      [46, 68],
      what,
    );
    assert.deepEqual(
      records.map((r) => r.seq_len),
      c.seqLens,
      what,
    );
    for (const [note, n] of Object.entries(c.notes)) assert.equal(res.files[0].notes[note], n, `${what}: ${note}`);
    assert.deepEqual(
      view.warnings.map((w) => w.code),
      c.warnings,
      what,
    );
  }
});
