/**
 * The fast paths of issue 26 give what the slow ones gave: `commonPrefixLength` (chunked native comparisons)
 * equals a character-by-character loop, and the tokenizer length a loaded tokenizer reports (`TargetTokenizer.size`,
 * from its id map) equals the one read from `tokenizer.json` (`tokenizerSizeOf`), which `token_counts.json` records;
 * `groupedInt` prints what `toLocaleString('en-US')` prints, and `joinedRender` is `P + C`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commonPrefixLength, endsWithFast, startsWithAt } from '../../src/core/records/specialTokens';
import { addRecordCut, emptyTrainerCuts, recordCut, TRAINER_IDS, TRAINERS } from '../../src/core/trainers/trainers';
import { passesTokensThrough } from '../../src/core/tokenizers/textIds';
import { Tokenizer } from '@huggingface/tokenizers';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { countRowTokens } from '../../src/core/records/rowResult';
import { TokenCounter, tokenizerSizeOf, type TokenCountsFile } from '../../src/core/run/outputs/tokenCounts';
import { lenmlModelDir, sharedTokenizer } from '../helpers';
import { groupedInt } from '../../src/core/numberText';
import { joinedRender } from '../../src/core/records/targetRules';

/** The definition: compare one code unit at a time. */
function slowCommonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

test('commonPrefixLength equals the character loop at every length and difference position', () => {
  // Deterministic LCG; strings of a 3-letter alphabet, so chunks often agree far into the text.
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let t = 0; t < 3000; t++) {
    const len = Math.floor(rand() ** 3 * 9000);
    let a = '';
    for (let k = 0; k < len; k++) a += String.fromCharCode(97 + Math.floor(rand() * 3));
    const at = Math.floor(rand() * (len + 1));
    let b = a.slice(0, at) + (rand() < 0.5 ? 'z' : '') + a.slice(at + (rand() < 0.5 ? 1 : 0)) + (rand() < 0.3 ? 'q' : '');
    if (rand() < 0.2) b = b.slice(0, Math.floor(rand() * b.length));
    assert.equal(commonPrefixLength(a, b), slowCommonPrefix(a, b), `a ${a.length}, b ${b.length}, cut at ${at}`);
    assert.equal(commonPrefixLength(b, a), slowCommonPrefix(b, a));
  }
  // A difference at every position of a 1,500-unit text (every chunk and half-window edge), and the same text cut there.
  const base = 'ab'.repeat(750);
  for (let p = 0; p <= base.length; p++) {
    const other = base.slice(0, p) + 'z' + base.slice(p + 1);
    assert.equal(commonPrefixLength(base, other), p, `difference at ${p}`);
    assert.equal(commonPrefixLength(base.slice(0, p), base), p);
  }
  // Hand-checked edges: empty, equal, one a prefix of the other, a difference right after a power-of-two chunk,
  // and surrogate pairs (counted in UTF-16 units, as String.prototype.slice counts).
  assert.equal(commonPrefixLength('', 'abc'), 0);
  assert.equal(commonPrefixLength('x'.repeat(5000), 'x'.repeat(5000)), 5000);
  assert.equal(commonPrefixLength('x'.repeat(5000), 'x'.repeat(3000)), 3000);
  assert.equal(commonPrefixLength('x'.repeat(192) + 'a', 'x'.repeat(192) + 'b'), 192);
  assert.equal(commonPrefixLength('x'.repeat(100) + '😀a', 'x'.repeat(100) + '😀b'), 102);
  assert.equal(commonPrefixLength('x'.repeat(100) + '😀', 'x'.repeat(100) + '😁'), 101);
});

test('startsWithAt and endsWithFast equal startsWith and endsWith at every position, short and long', () => {
  let seed = 5;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let t = 0; t < 2000; t++) {
    const len = Math.floor(rand() ** 2 * 3000);
    let s = '';
    for (let k = 0; k < len; k++) s += String.fromCharCode(97 + Math.floor(rand() * 2));
    const a = Math.floor(rand() * (len + 1));
    const b = a + Math.floor(rand() * (len - a + 40));
    // A slice of s (true), or one with a character changed or added (mostly false).
    let p = s.slice(a, b);
    if (rand() < 0.4 && p.length) {
      const at = Math.floor(rand() * p.length);
      p = p.slice(0, at) + 'z' + p.slice(at + 1);
    } else if (rand() < 0.2) p += 'b';
    for (const at of [0, a, Math.max(0, a - 1), a + 1, len, len + 3])
      assert.equal(startsWithAt(s, p, at), s.startsWith(p, at), `${s.length} ${p.length} at ${at}`);
    assert.equal(startsWithAt(s, p), s.startsWith(p));
    assert.equal(endsWithFast(s, p), s.endsWith(p));
    assert.equal(endsWithFast(s, s.slice(a)), true);
  }
  assert.equal(startsWithAt('x'.repeat(100) + '😀', 'x'.repeat(100) + '\uD83D'), true);
  assert.equal(startsWithAt('x'.repeat(40), 'x'.repeat(40), 1), false);
  assert.equal(endsWithFast('y' + 'x'.repeat(40), 'x'.repeat(41)), false);
});

test('addRecordCut adds what recordCut says of each trainer, on random masks around the default lengths', () => {
  let seed = 3;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let t = 0; t < 200; t++) {
    const n = Math.floor(rand() * 10000);
    const p = rand();
    const mask = Array.from({ length: n }, () => (rand() < p ? 1 : 0));
    const got = emptyTrainerCuts();
    const lost = addRecordCut(got, mask);
    const want = emptyTrainerCuts();
    let wantLost = false;
    for (const id of TRAINER_IDS) {
      const r = recordCut(mask, TRAINERS[id].rule, want[id].length);
      if (!r.over) continue;
      want[id].recordsOver++;
      if (r.untrained) want[id].recordsUntrained++;
      want[id].trainableLost += r.lost;
      if (r.lost > 0) wantLost = true;
    }
    assert.deepEqual(got, want, `record of ${n}`);
    assert.equal(lost, n > Math.min(...TRAINER_IDS.map((id) => want[id].length)) && wantLost);
  }
});

test('a loaded tokenizer says its length, equal to the one read from tokenizer.json', () => {
  for (const [name, expected] of [
    ['qwen3', 151669],
    ['llama3_1', 128256],
  ] as const) {
    const dir = lenmlModelDir(name);
    assert.equal(sharedTokenizer(dir).size, expected, name);
    assert.equal(tokenizerSizeOf(dir), expected, name);
  }
});

test('countRowTokens: ids ascending and distinct with their counts, all and trainable, over every record of a row', () => {
  // Hand-checked: id 5 three times (trained twice), id 0 once (untrained), id 262144 once (trained), across two records.
  const d = countRowTokens([
    { ids: [5, 0, 5], mask: [1, 0, 0] },
    { ids: [262144, 5], mask: [1, 1] },
  ]);
  assert.deepEqual([...d.ids], [0, 5, 262144]);
  assert.deepEqual([...d.all], [1, 3, 1]);
  assert.deepEqual([...d.trained], [0, 2, 1]);
  assert.ok(d.ids instanceof Uint32Array && d.all instanceof Uint32Array && d.trained instanceof Uint32Array);
  const empty = countRowTokens([]);
  assert.equal(empty.ids.length, 0);
  // Against a count by maps on random records.
  let seed = 11;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let t = 0; t < 50; t++) {
    const records = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => {
      const n = Math.floor(rand() ** 3 * 9000); // both ways: short rows are sorted, long ones counted by id
      return { ids: Array.from({ length: n }, () => Math.floor(rand() ** 2 * 300000)), mask: Array.from({ length: n }, () => (rand() < 0.3 ? 1 : 0)) };
    });
    const all = new Map<number, number>();
    const trained = new Map<number, number>();
    for (const r of records)
      r.ids.forEach((id, k) => {
        all.set(id, (all.get(id) ?? 0) + 1);
        trained.set(id, (trained.get(id) ?? 0) + r.mask[k]);
      });
    const ids = [...all.keys()].sort((a, b) => a - b);
    const got = countRowTokens(records);
    assert.deepEqual([...got.ids], ids);
    assert.deepEqual(
      [...got.all],
      ids.map((id) => all.get(id)),
    );
    assert.deepEqual(
      [...got.trained],
      ids.map((id) => trained.get(id)),
    );
  }
});

test('countRowTokens: a row whose counting throws leaves no slot of its ids set for the next row', () => {
  // An id past what a typed array can index (2^32: a u32 id of a hand-made tokenizer.json) throws a RangeError after
  // ids 5 and 7 took their per-thread slots; the next row must still count its own 7 as new (was: counts lost).
  assert.throws(() => countRowTokens([{ ids: [5, 7, 2 ** 32], mask: [1, 0, 0] }]), RangeError);
  const d = countRowTokens([{ ids: [7, 9, 7], mask: [1, 0, 0] }]);
  assert.deepEqual([...d.ids], [7, 9]);
  assert.deepEqual([...d.all], [2, 1]);
  assert.deepEqual([...d.trained], [1, 0]);
});

test('TokenCounter.result: the ids with a count over all tokens, ascending, from the ids counted (not a scan of every slot)', () => {
  // Rows and files in an order that is not ascending, an id added again, a file id with 0 over all tokens (left out,
  // as a scan of the dense counts left it out), a file id that only a later row makes non-zero, ids up to 128,000.
  const c = new TokenCounter();
  const delta = (ids: number[], all: number[], trained: number[]) => ({
    ids: Uint32Array.from(ids),
    all: Uint32Array.from(all),
    trained: Uint32Array.from(trained),
  });
  c.add(delta([7, 128000], [3, 1], [1, 0]), 1);
  c.add(delta([2, 7, 500], [1, 2, 4], [0, 2, 4]), 2);
  const file = { records: 4, ids: [900, 3, 7], all: [0, 5, 1], trainable: [0, 5, 0] } as unknown as TokenCountsFile;
  c.addFile(file);
  c.add(delta([900], [2], [1]), 1);
  const r = c.result({ name: 't', hash: 'h' }, null);
  assert.deepEqual(r.ids, [2, 3, 7, 500, 900, 128000]);
  assert.deepEqual(r.all, [1, 5, 6, 4, 2, 1]);
  assert.deepEqual(r.trainable, [0, 5, 3, 4, 1, 0]);
  assert.equal(r.records, 8);
  assert.equal(r.tokens, 19);
  assert.equal(r.trainableTokens, 13);
  // A second counter fed with the first's result (a file job's counts into the run's) gives the same file.
  const run = new TokenCounter();
  run.addFile(r);
  assert.deepEqual(run.result({ name: 't', hash: 'h' }, null), r);
  assert.deepEqual(new TokenCounter().result({ name: 't', hash: 'h' }, null).ids, []);
});

test("passesTokensThrough: post-processors that return a single text's tokens unchanged without special tokens", () => {
  assert.equal(passesTokensThrough(null), true);
  assert.equal(passesTokensThrough({ type: 'ByteLevel' }), true);
  const bos = { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<bos>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }] };
  assert.equal(passesTokensThrough(bos), true);
  assert.equal(passesTokensThrough({ type: 'Sequence', processors: [{ type: 'ByteLevel' }, bos] }), true);
  // Sequence A twice, or B in the single template: the tokens are not passed through as they are.
  assert.equal(passesTokensThrough({ type: 'TemplateProcessing', single: [{ Sequence: { id: 'A' } }, { Sequence: { id: 'A' } }] }), false);
  assert.equal(passesTokensThrough({ type: 'TemplateProcessing', single: [{ Sequence: { id: 'B' } }] }), false);
  assert.equal(passesTokensThrough({ type: 'Sequence', processors: [{ type: 'Unknown' }] }), false);
});

test('TargetTokenizer.encode ids equal the library encode (add_special_tokens false) on every shipped and tested tokenizer', () => {
  const texts = [
    '',
    'Hello, world!',
    '<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>',
    '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>',
    '<bos><start_of_turn>user\nwhat?<end_of_turn>\n<start_of_turn>model\n',
    '   leading and trailing spaces   \n\n\n\t\ttabs',
    '数学 と 日本語 🙂👍🏽 e\u0301 cafe\u0301 \u00e9',
    'def f(x):\n    return x ** 2  # comment\n' + 'a'.repeat(600),
    '<｜begin▁of▁sentence｜><｜User｜>hi<｜Assistant｜>ok<｜end▁of▁sentence｜>',
  ];
  for (const name of ['qwen3', 'deepseek_v3', 'llama3_1', 'gemma3'] as const) {
    const dir = lenmlModelDir(name);
    const tj = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    const cfg = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
    // The library as it is, no cache or NFC handling of ours (texts here are NFC already where it matters).
    const lib = new Tokenizer(tj, cfg);
    const tok = sharedTokenizer(dir);
    for (const t of texts) {
      const want = lib.encode(t.normalize('NFC'), { add_special_tokens: false }).ids;
      assert.deepEqual(tok.encode(t.normalize('NFC')).ids, want, `${name}: ${JSON.stringify(t.slice(0, 40))}`);
    }
  }
});

test("groupedInt is toLocaleString('en-US') on integers of every length and sign, and on the numbers it hands over", () => {
  const xs = [0, 1, -1, 9, 10, 999, 1000, -1000, 1234, 12345, 123456, 1234567, -1234567, 999999, 1000000, 2 ** 53 - 1, -(2 ** 53 - 1)];
  // Numbers ICU formats itself: fractions, -0, past 2^53, not finite.
  xs.push(1.5, 0.1234, 1234.5678, -0, 2 ** 53, 1e21, NaN, Infinity, -Infinity);
  let seed = 11;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  for (let k = 0; k < 5000; k++) xs.push(Math.floor((rand() - 0.3) * 10 ** Math.floor(rand() * 16)));
  for (const x of xs) assert.equal(groupedInt(x), x.toLocaleString('en-US'), String(x));
  assert.equal(groupedInt(1234567), '1,234,567');
  assert.equal(groupedInt(-1000), '-1,000');
});

test('joinedRender is P + C, a slice of F where F continues P with C', () => {
  let seed = 5;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const text = (n: number) => Array.from({ length: n }, () => 'ab<|\n'[Math.floor(rand() * 5)]).join('');
  let sliced = 0;
  for (let t = 0; t < 2000; t++) {
    const F = text(Math.floor(rand() * 200));
    const p = Math.floor(rand() * (F.length + 1));
    const c = Math.floor(rand() * (F.length - p + 1));
    let P = F.slice(0, p);
    let C = F.slice(p, p + c);
    // Sometimes P or C differs from F (a restored reasoning, an appended stop token, another render): P + C all the same.
    const r = rand();
    if (r < 0.15) C += '</s>';
    else if (r < 0.3 && P.length) P = P.slice(0, -1) + 'z';
    else if (r < 0.4) C = 'x' + C;
    const X = joinedRender(P, C, F);
    assert.equal(X, P + C);
    if (F.startsWith(P + C)) sliced++;
  }
  assert.ok(sliced > 1000, `the slice case was exercised (${sliced})`);
});
