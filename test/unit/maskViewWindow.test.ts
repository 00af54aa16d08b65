// Which tokens of a long record the mask view draws (src/shared/maskViewWindow.ts): the trained
// spans with context, never the first N tokens of a record whose training comes later.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pick, rangesToDraw, trainedSpans } from '../../src/shared/maskViewWindow';

/** A mask of `n` tokens trained on the given [from, to) ranges. */
const mask = (n: number, ...spans: [number, number][]): boolean[] => {
  const m = new Array<boolean>(n).fill(false);
  for (const [a, b] of spans) for (let k = a; k < b; k++) m[k] = true;
  return m;
};

test('trainedSpans: the runs of 1s, in order', () => {
  assert.deepEqual(trainedSpans(mask(10, [2, 4], [4, 5], [7, 9])), [
    { from: 2, to: 5 },
    { from: 7, to: 9 },
  ]);
  assert.deepEqual(trainedSpans(mask(3)), []);
});

test('a record within the budget is drawn whole', () => {
  assert.deepEqual(rangesToDraw(mask(100, [90, 95]), 100), [{ from: 0, to: 100 }]);
  assert.deepEqual(rangesToDraw([], 10), []);
});

test('a long agent record that trains only at its end: the trained span with the budget as context, not the first tokens', () => {
  // 38,015 tokens, 71 trained from index 37,943 (the shape of the editor issue's record).
  const m = mask(38_015, [37_943, 38_014]);
  const r = rangesToDraw(m, 20_000);
  // context c on each side: the span ends 1 before the record does, so after it only 1 token fits;
  // the widest c with (71 + min(c, 37943) + min(c, 1)) <= 20000 is 19928.
  assert.deepEqual(r, [{ from: 37_943 - 19_928, to: 38_015 }]);
  assert.equal(r[0].to - r[0].from, 20_000, 'the whole budget is used: 19,928 before + 71 trained + 1 after');
  assert.ok(pick(m, r).filter(Boolean).length === 71, 'every trained token is drawn');
});

test('spans far apart each get the same context; close ones share it', () => {
  const m = mask(1000, [100, 110], [120, 130], [800, 810]);
  const r = rangesToDraw(m, 100);
  // c: [100-c, 130+c) and [800-c, 810+c): 30 + 2c + 10 + 2c = 40 + 4c <= 100 -> c = 15
  assert.deepEqual(r, [
    { from: 85, to: 145 },
    { from: 785, to: 825 },
  ]);
  assert.equal(pick(m, r).length, 100);
});

test('no trained token: the first tokens; more trained tokens than the budget: from the first trained one on', () => {
  assert.deepEqual(rangesToDraw(mask(500), 50), [{ from: 0, to: 50 }]);
  assert.deepEqual(rangesToDraw(mask(500, [300, 480]), 50), [{ from: 300, to: 350 }]);
});
