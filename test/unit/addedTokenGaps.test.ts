/**
 * Added tokens tokenizers.js matches otherwise than the Rust `tokenizers` (src/core/tokenizers/addedTokenGaps.ts):
 * `single_word`, and `normalized` tokens that NFC changes under the NFC normalizer. Every backend refuses such a
 * folder (it would give other ids silently); `lstrip` / `rstrip` and NFC-stable normalized tokens load, with the
 * oracle's ids.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { jsAddedTokenGap } from '../../src/core/tokenizers/addedTokenGaps';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { loadTokenizerWithBackend } from '../../src/core/tokenizers/backend';
import { TOKENIZER_CACHE_ENV } from '../../src/core/tokenizers/cacheDir';
import { lenmlModelDir, oracleEncode, tempDir } from '../helpers';

/** A fresh tokenizer cache folder for test `t`, the variable put back after it (test files may share a process). */
function freshCache(t: { after(fn: () => void): void }): string {
  const saved = process.env[TOKENIZER_CACHE_ENV];
  t.after(() => {
    if (saved === undefined) delete process.env[TOKENIZER_CACHE_ENV];
    else process.env[TOKENIZER_CACHE_ENV] = saved;
  });
  return (process.env[TOKENIZER_CACHE_ENV] = tempDir('eagle3-tokcache-'));
}

const BASE = JSON.parse(readFileSync(join(lenmlModelDir('qwen3'), 'tokenizer.json'), 'utf8'));

/** A Qwen3 folder (NFC normalizer) with `tokens` added after its last id. */
function folderWith(tokens: Record<string, unknown>[]): string {
  const json = structuredClone(BASE);
  let id = 0;
  for (const t of json.added_tokens) id = Math.max(id, t.id + 1);
  for (const t of tokens) json.added_tokens.push({ id: id++, single_word: false, lstrip: false, rstrip: false, normalized: false, special: false, ...t });
  const dir = tempDir();
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  copyFileSync(join(lenmlModelDir('qwen3'), 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
  return dir;
}

const TEXTS = ['ab abqz abqzx xabqz abqz.', 'caf\u00e9qzk e\u0301qzk x', 'a  <tool>  b </tool>  c', 'hello world\u00e9qzk'];

async function assertOracleIds(dir: string, encode: (t: string) => number[]): Promise<void> {
  for (const text of TEXTS) assert.deepEqual(encode(text), (await oracleEncode(join(dir, 'tokenizer.json'), text)).ids, JSON.stringify(text));
}

test('single_word and NFC-changed normalized added tokens: the JavaScript tokenizer gives other ids than the oracle, so every backend refuses the folder', async (t) => {
  const cache = freshCache(t);
  for (const [token, text, why] of [
    [{ content: 'abqz', single_word: true }, 'xabqz', /single_word/],
    [{ content: 'e\u0301qzk', normalized: true }, 'caf\u00e9qzk', /NFC changes it/],
  ] as const) {
    const dir = folderWith([token]);
    const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    assert.match(jsAddedTokenGap(json) ?? '', why);
    // What the JavaScript library gives for it (the ids the load used to serve): not the oracle's.
    const lib = new Tokenizer({ ...json, normalizer: null }, {}).encode(text.normalize('NFC'), { add_special_tokens: false }).ids;
    assert.notDeepEqual(lib, (await oracleEncode(join(dir, 'tokenizer.json'), text)).ids);
    assert.throws(() => loadTokenizer(dir), why);
    for (const backend of ['auto', 'js', 'rust'] as const) assert.throws(() => loadTokenizerWithBackend(dir, backend), why, backend);
  }
  assert.deepEqual(readdirSync(cache), [], 'no prepared form written for them');
});

test('lstrip / rstrip and NFC-stable normalized added tokens stay JavaScript, with the oracle ids', async (t) => {
  freshCache(t);
  const dir = folderWith([
    { content: '<tool>', lstrip: true, rstrip: true },
    { content: '</tool>', rstrip: true, special: true },
    { content: 'hello world', normalized: true },
    { content: '\u00e9qzk', normalized: true },
  ]);
  assert.equal(jsAddedTokenGap(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'))), undefined);
  const tok = loadTokenizer(dir);
  await assertOracleIds(dir, (t) => tok.encode(t).ids);
  assert.equal(loadTokenizerWithBackend(dir, 'auto').tok.backend, 'js');
});
