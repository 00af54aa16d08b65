/**
 * Pre-tokenizer steps tokenizers.js 0.2 cut otherwise than the Rust `tokenizers` library (src/core/tokenizers/jsSteps.ts):
 * `Punctuation` by its behavior, `Split` by its behavior and `invert`. Ids against the Rust oracle on both encode paths
 * (our own encode and tokenizers.js's steps), on a cut Qwen3 vocabulary with the step before its ByteLevel.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rustSplit } from '../../src/core/tokenizers/jsSteps';
import { bothEncodePaths, cutVocabularyJson, lenmlModelDir, oracleEncodeBatch, tempDir } from '../helpers';

/** Asserts that Qwen3's vocabulary with `step` before its ByteLevel gives the oracle's ids on `texts`, both paths. */
let cut: ReturnType<typeof cutVocabularyJson> | undefined; // Qwen3's 11 MB tokenizer.json parsed and cut once per file
async function sameIdsAsRust(step: object, texts: string[]): Promise<void> {
  const base = lenmlModelDir('qwen3');
  cut ??= cutVocabularyJson(base, 10_000);
  const json = structuredClone(cut);
  json.pre_tokenizer = { type: 'Sequence', pretokenizers: [step, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] };
  json.normalizer = null;
  const dir = tempDir('eagle3-steps-');
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  writeFileSync(join(dir, 'tokenizer_config.json'), readFileSync(join(base, 'tokenizer_config.json')));
  const want = await oracleEncodeBatch(join(dir, 'tokenizer.json'), texts);
  for (const tok of bothEncodePaths(dir))
    texts.forEach((t, k) => assert.deepEqual(tok.encode(t).ids, want[k].ids, `${JSON.stringify(step)}: ${JSON.stringify(t)}`));
}

const BEHAVIORS = ['Isolated', 'Contiguous', 'Removed', 'MergedWithPrevious', 'MergedWithNext'];

test('a Punctuation pre-tokenizer cuts by its behavior as Rust does (tokenizers.js cut every behavior as Contiguous: `a...b` as one `...`), both paths', async () => {
  const texts = ['q?! a...b', 'x--y, $5+3=8 ^_^ ~', '.a «¿»x', 'end.', "it's (ok)!?"];
  for (const behavior of [...BEHAVIORS, undefined]) await sameIdsAsRust({ type: 'Punctuation', ...(behavior ? { behavior } : {}) }, texts);
});

test('a Split pre-tokenizer cuts by its behavior and invert as Rust does (regex, string and empty-match patterns), both paths', async () => {
  const texts = ['a--b--', 'x 12  y-z', '--q 3--4 ', '  lead  trail  ', '----', 'HelloWorld xx yXz', 'aBcDxxE'];
  for (const pattern of [{ Regex: '\\s+|[0-9]' }, { String: '--' }, { Regex: '(?=[A-Z])|x*' }])
    for (const behavior of BEHAVIORS) for (const invert of [false, true]) await sameIdsAsRust({ type: 'Split', pattern, behavior, invert }, texts);
});

test('rustSplit: hand-checked cuts of each behavior (Rust `NormalizedString::split`)', () => {
  const re = /-/gu;
  assert.deepEqual(rustSplit('a--b-', re, 'Isolated', false), ['a', '-', '-', 'b', '-']);
  assert.deepEqual(rustSplit('a--b-', re, 'Removed', false), ['a', 'b']);
  assert.deepEqual(rustSplit('a--b-', re, 'Contiguous', false), ['a', '--', 'b', '-']);
  assert.deepEqual(rustSplit('a--b-', re, 'MergedWithPrevious', false), ['a-', '-', 'b-']);
  assert.deepEqual(rustSplit('-a--b', re, 'MergedWithNext', false), ['-a', '-', '-b']);
  // Inverted: the text between the matches is the delimiter (`a`, `b`), joined to the part before it.
  assert.deepEqual(rustSplit('a--b-', re, 'Removed', true), ['-', '-', '-']);
  assert.deepEqual(rustSplit('a--b-', re, 'MergedWithPrevious', true), ['a', '-', '-b', '-']);
  assert.deepEqual(rustSplit('', re, 'Isolated', false), []);
});
