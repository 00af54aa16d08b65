/**
 * Releasing the parsed tokenizer.json tables tokenizers.js keeps after loading
 * (src/core/tokenizers/tokenizer.ts `releaseParsedModel`, docs/scale.md "Memory"):
 * the tables are gone, and every tokenizer the project tests still encodes to the
 * Rust `tokenizers` oracle's ids and offsets, long words included (they use the
 * merges list the release keeps, src/core/tokenizers/longWordBpe.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadTokenizer, releaseParsedModel } from '../../src/core/tokenizers/tokenizer';
import { lenmlModelDir, oracleEncode } from '../helpers';

const TEXTS = [
  "Hello world! I'm sure you're right; x = 12345678901234567890",
  '    indented\n\tTabbed\r\n\r\nCRLF   \n\n   trailing   ',
  '漢字かなカナ한국어 mixed 中文English e\u0301 cafe\u0301 ﬁ ｆｕｌｌ 😀 👩‍💻',
  '<|im_start|>user\nhi<|im_end|>\n<｜User｜>q<｜Assistant｜>a<|eot_id|><start_of_turn>model\nok<end_of_turn>',
  // Long pre-tokens: longWordBpe.ts builds its merge table from the model's merges list on the first one.
  'a'.repeat(600) + ' ' + 'ab'.repeat(300) + ' ' + '▁'.repeat(300),
];

test('releaseParsedModel drops the BPE model config tables and keeps the merges list encoding uses', () => {
  const dir = lenmlModelDir('deepseek_v3');
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  assert.equal(typeof json.model.merges[0], 'string'); // string merges: tokenizers.js splits them into a new list
  const tok = new Tokenizer(json, {}) as unknown as { model: { config: Record<string, unknown>; merges: unknown[]; tokens_to_ids: Map<string, number> } };
  assert.ok(tok.model.config.vocab && tok.model.config.merges);
  const before = tok.model.merges.length;
  releaseParsedModel(tok);
  assert.equal(tok.model.config.vocab, undefined);
  assert.equal(tok.model.config.merges, undefined);
  assert.equal(tok.model.merges.length, before);
  assert.equal(tok.model.tokens_to_ids.get('Hello'), 19923);
});

test('releaseParsedModel keeps a merges list the model shares with its config (pair merges), and leaves other models alone', () => {
  const json = JSON.parse(readFileSync(join(lenmlModelDir('qwen3'), 'tokenizer.json'), 'utf8'));
  assert.ok(Array.isArray(json.model.merges[0]));
  const tok = new Tokenizer(json, {}) as unknown as { model: { config: Record<string, unknown>; merges: unknown[] } };
  releaseParsedModel(tok);
  assert.equal(tok.model.config.vocab, undefined);
  assert.equal(tok.model.config.merges, tok.model.merges);
  const other = { model: { config: { type: 'Unigram', vocab: [['a', 0]] }, tokens_to_ids: new Map() } };
  releaseParsedModel(other);
  assert.deepEqual(other.model.config.vocab, [['a', 0]]);
});

for (const name of ['qwen3', 'deepseek_v3', 'llama3_1', 'gemma3'] as const) {
  test(`${name}: loaded with its parsed tables released, ids and offsets equal the Rust oracle`, async () => {
    const dir = lenmlModelDir(name);
    const tok = loadTokenizer(dir);
    for (const text of TEXTS) {
      const got = tok.encode(text);
      const want = await oracleEncode(join(dir, 'tokenizer.json'), text);
      assert.deepEqual(got.ids, want.ids, `${name} ids of ${JSON.stringify(text.slice(0, 40))}`);
      assert.deepEqual(got.starts, want.starts, `${name} starts of ${JSON.stringify(text.slice(0, 40))}`);
    }
  });
}
