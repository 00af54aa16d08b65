/**
 * The word-level cache (src/core/tokenizers/wordCache.ts) changes no id: encodes with the
 * cache installed equal the Rust `tokenizers` oracle, on texts that hit the
 * cache many times over (the same words in different neighbourhoods) and on
 * the edge cases of the pre-tokenizer regexes (whitespace runs, digits, CJK,
 * combining marks, emoji, contractions, special tokens inside text, CRLF).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { installWordCache, wordCacheStatsOf } from '../../src/core/tokenizers/wordCache';
import { lenmlModelDir, oracleEncode } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');

const EDGE = [
  'Hello world! Hello  world!!  Hello   world',
  "I'm sure you're right; we'll see, they'd've said. DON'T SHOUT'S",
  'x = 12345678901234567890; y=3.14159e-10 # 1 22 333 4444 55555',
  '    indented\n\tTabbed\r\n\r\nCRLF lines   \n\n\n   trailing   ',
  '漢字かなカナ한국어 mixed 中文English混合 ١٢٣ ٤٥٦',
  'e\u0301 cafe\u0301 n\u0303 A\u030A combining; ﬁ ligature, Ⅻ roman, ｆｕｌｌｗｉｄｔｈ',
  'emoji 😀😀 👩‍💻 🇫🇷 and ZWJ‍s',
  '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nok<|im_end|>',
  '<｜begin▁of▁sentence｜>sys<｜User｜>q<｜Assistant｜>a<｜end▁of▁sentence｜>',
  '```python\ndef f(a, b):\n    return a/b  # ZeroDivisionError?\n```\n',
  ' '.repeat(40) + 'x' + '\n'.repeat(5) + ' \n \n',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '',
];

/** Text with heavy repetition: every sample line twice, in different orders, so the second pass is almost all cache hits. */
function repeatedCorpus(): string[] {
  const texts: string[] = [];
  for (const f of ['agentic-trajectories.jsonl', 'chat-sharegpt-human-gpt.jsonl', 'reasoning-sharegpt.jsonl', 'swe-agent-trajectory-field.jsonl']) {
    const lines = readFileSync(join(SAMPLES, f), 'utf8').split('\n').filter(Boolean);
    texts.push(...lines, ...[...lines].reverse(), lines.join(' ').slice(0, 20000));
  }
  return texts;
}

for (const name of ['qwen3', 'deepseek_v3', 'llama3_1'] as const) {
  test(`${name}: ids with the word cache equal the Rust tokenizers oracle`, async () => {
    const dir = lenmlModelDir(name);
    const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    const probe = new Tokenizer(json, {});
    assert.ok(installWordCache(probe, json), `${name} is byte-level BPE: the cache applies`);
    const tok = loadTokenizer(dir);
    // Made-up words, code and numbers from the benchmark generator as well.
    const { generateRows } = await import('../../scripts/bench-data.mjs');
    const generated = [...generateRows('mixed', 120, 3)].map((r: unknown) => JSON.stringify(r).replace(/\\n/g, '\n'));
    let checked = 0;
    for (const text of [...EDGE, ...repeatedCorpus(), ...generated, ...EDGE]) {
      const want = await oracleEncode(join(dir, 'tokenizer.json'), text);
      const got = tok.encode(text);
      assert.deepEqual(got.ids, want.ids, `ids differ on ${JSON.stringify(text.slice(0, 60))}`);
      assert.deepEqual(got.starts, want.starts, `offsets differ on ${JSON.stringify(text.slice(0, 60))}`);
      checked += got.ids.length;
    }
    assert.ok(checked > 60000, `checked ${checked} tokens`);
  });
}

test('the cache is not installed on tokenizers of another shape (left unchanged)', () => {
  const gemma = JSON.parse(readFileSync(join(lenmlModelDir('gemma3'), 'tokenizer.json'), 'utf8'));
  assert.equal(installWordCache(new Tokenizer(gemma, {}), gemma), null);
  const qwen = JSON.parse(readFileSync(join(lenmlModelDir('qwen3'), 'tokenizer.json'), 'utf8'));
  const bytesFallback = { ...qwen, model: { ...qwen.model, byte_fallback: true } };
  assert.equal(installWordCache(new Tokenizer(qwen, {}), bytesFallback), null);
});

test('hits are counted: a repeated text is served from the cache', () => {
  const dir = lenmlModelDir('qwen3');
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  const tok = new Tokenizer(json, {});
  const stats = installWordCache(tok, json)!;
  const text = 'the dog and the dog';
  const first = tok.encode(text, { add_special_tokens: false }).ids;
  assert.deepEqual(stats, { hits: 1, misses: 4 }); // pieces "the", " dog", " and", " the", " dog"
  assert.deepEqual(tok.encode(text, { add_special_tokens: false }).ids, first);
  assert.deepEqual(stats, { hits: 6, misses: 4 });
  // The same counts, read live through the tokenizer (the benchmark's hit rate); none for a tokenizer without the cache.
  assert.equal(wordCacheStatsOf(tok), stats);
  assert.deepEqual(wordCacheStatsOf(tok), { hits: 6, misses: 4 });
  assert.equal(wordCacheStatsOf(new Tokenizer(json, {})), undefined);
});
