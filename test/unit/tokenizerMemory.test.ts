/**
 * Releasing the parsed tokenizer.json tables tokenizers.js keeps after loading
 * (src/core/tokenizers/tokenizer.ts `releaseParsedModel`, docs/scale.md "Memory"):
 * the tables are gone, and every tokenizer the project tests still encodes to the
 * Rust `tokenizers` oracle's ids and offsets, long words included (they use the
 * merges list the release keeps, src/core/tokenizers/longWordBpe.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadTokenizer, releaseParsedModel } from '../../src/core/tokenizers/tokenizer';
import { installLongWordBpe } from '../../src/core/tokenizers/longWordBpe';
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

test('the word cache keeps only its pieces, not the texts they were cut from (V8 sliced strings, docs/scale.md "Memory")', () => {
  // In a child with --expose-gc: encode a 6 MB text of a few long words, drop it, collect; what stays on the heap is
  // the cache's few entries. When the cache keyed pieces by substrings of the text, the whole text stayed (6 MB).
  const src = join(__dirname, '..', '..', 'src', 'core', 'tokenizers', 'tokenizer.ts');
  const script = `
    const { loadTokenizer } = require(${JSON.stringify(src)});
    const tok = loadTokenizer(${JSON.stringify(lenmlModelDir('qwen3'))});
    const words = ['supercalifragilistic', 'antidisestablishment', 'incomprehensibilities', 'uncharacteristically'];
    tok.encode(words.join(' ').repeat(2)); // the tokenizer's own lazy tables, before the baseline
    globalThis.gc(); globalThis.gc();
    const before = process.memoryUsage().heapUsed;
    (() => {
      let text = '';
      for (let i = 0; text.length < 6e6; i++) text += words[i % words.length] + (i % 7 === 0 ? '\\n' : ' ');
      tok.encode(text);
    })();
    /x/.exec('x'); // RegExp's last-match state (RegExp.input) holds the last string a regex ran on
    globalThis.gc(); globalThis.gc();
    process.stdout.write(String(process.memoryUsage().heapUsed - before));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  const retained = Number(r.stdout.trim().split('\n').pop());
  assert.ok(Number.isFinite(retained), r.stdout);
  assert.ok(retained < 1e6, `heap kept ${(retained / 1e6).toFixed(1)} MB after a 6 MB text was encoded and dropped`);
});

test('installLongWordBpe everyWord: the library BPE tables are released and every word encodes to the same ids as the library', () => {
  for (const name of ['qwen3', 'deepseek_v3', 'llama3_1'] as const) {
    const json = JSON.parse(readFileSync(join(lenmlModelDir(name), 'tokenizer.json'), 'utf8'));
    const plain = new Tokenizer(json, {});
    const patched = new Tokenizer(json, {}) as unknown as Tokenizer & { model: Record<string, unknown> };
    assert.equal(installLongWordBpe(patched, { everyWord: true }), true);
    assert.equal(patched.model.bpe_ranks, undefined, name);
    assert.equal(patched.model.merges, undefined, name);
    for (const text of [...TEXTS, 'Tokenization of ordinary words: unbelievable, re-encoded, 3.14159, naïve café, ÜBER 🚀 — done.']) {
      assert.deepEqual(
        patched.encode(text, { add_special_tokens: false }).ids,
        plain.encode(text, { add_special_tokens: false }).ids,
        `${name}: ${text.slice(0, 30)}`,
      );
    }
  }
});
