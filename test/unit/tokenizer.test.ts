import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { TokenizerLoadError } from '../../src/core/tokenizers/types';
import { lenmlModelDir, oracleEncode, tempDir } from '../helpers';

const renders: { model: string; full: string | null }[] = require('../fixtures/renders/renders.json').renders;
const samples = (model: string) => renders.filter((r) => r.model === model && r.full).map((r) => r.full!);
const extra = ['plain ascii with  double  spaces and\ttabs\n\n\nnewlines', 'CJK 你好，世界！ emoji 👋🏽👩‍👩‍👧 Arabic مرحبا بالعالم combining é (e\u0301)', ''];

for (const [model, renderModel] of [
  ['qwen3', 'qwen3'],
  ['deepseek_v3', 'deepseek_v3'],
  ['llama3_1', 'llama3_1'],
] as const) {
  test(`${model}: ids and token starts equal the Rust tokenizers oracle`, async () => {
    const dir = lenmlModelDir(model);
    const tok = loadTokenizer(dir);
    const texts = [...samples(renderModel), ...extra];
    assert.ok(texts.length >= 7);
    for (const text of texts) {
      const ours = tok.encode(text);
      const oracle = await oracleEncode(join(dir, 'tokenizer.json'), text);
      assert.deepEqual(ours.ids, oracle.ids, `ids differ for ${JSON.stringify(text.slice(0, 60))}`);
      assert.deepEqual(ours.starts, oracle.starts, `starts differ for ${JSON.stringify(text.slice(0, 60))}`);
      assert.equal(ours.exactOffsets, true);
    }
  });
}

test('embedded default is Qwen3 with its special tokens and known ids', () => {
  const tok = loadTokenizer();
  assert.equal(tok.embeddedDefault, true);
  assert.match(tok.name, /Qwen3/);
  assert.match(tok.hash, /^[0-9a-f]{16}$/);
  assert.equal(tok.specialTokenVars.eos_token, '<|im_end|>');
  assert.ok(tok.specialTokens.includes('<|im_end|>'));
  assert.ok(!tok.specialTokens.includes('<think>'), '<think> is an added token but not special');
  assert.deepEqual(tok.encode('<|im_start|>assistant\n').ids, [151644, 77091, 198]);
  assert.equal(tok.templates.length, 1);
  assert.equal(tok.templates[0].name, 'default');
});

test('DeepSeek-V3 bos_token given as an AddedToken object is read as its content', () => {
  const tok = loadTokenizer(lenmlModelDir('deepseek_v3'));
  assert.equal(tok.specialTokenVars.bos_token, '<｜begin▁of▁sentence｜>');
  assert.equal(tok.specialTokenVars.eos_token, '<｜end▁of▁sentence｜>');
  // The template writes the BOS itself; encoding adds none.
  assert.deepEqual(tok.encode('<｜begin▁of▁sentence｜>hi').ids.slice(0, 1), [0]);
  assert.equal(tok.encode('hi').ids.includes(0), false);
});

test('a folder without tokenizer.json is a clear error naming the folder', () => {
  const dir = tempDir();
  assert.throws(
    () => loadTokenizer(dir),
    (e: unknown) => e instanceof TokenizerLoadError && (e as Error).message.includes(dir) && /no tokenizer\.json/.test((e as Error).message),
  );
  assert.throws(() => loadTokenizer(join(dir, 'missing')), /tokenizer folder not found/);
});
