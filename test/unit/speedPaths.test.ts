/**
 * The fast paths of issue 26 give what the slow ones gave: `commonPrefixLength` (chunked native comparisons)
 * equals a character-by-character loop, and the tokenizer length a loaded tokenizer reports (`TargetTokenizer.size`,
 * from its id map) equals the one read from `tokenizer.json` (`tokenizerSizeOf`), which `token_counts.json` records.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commonPrefixLength } from '../../src/core/records/specialTokens';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { tokenizerSizeOf } from '../../src/core/run/tokenCounts';
import { lenmlModelDir } from '../helpers';

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

test('a loaded tokenizer says its length, equal to the one read from tokenizer.json', () => {
  for (const [name, expected] of [
    ['qwen3', 151669],
    ['llama3_1', 128256],
  ] as const) {
    const dir = lenmlModelDir(name);
    assert.equal(loadTokenizer(dir).size, expected, name);
    assert.equal(tokenizerSizeOf(dir), expected, name);
  }
});
