/**
 * Our own encode (src/core/tokenizers/pieceEncoder.ts) gives what the old path gave (tokenizers.js's steps through the
 * word cache, then the offset aligner: `EAGLE3_NO_PIECE_ENCODER=1`) and what the Rust `tokenizers` oracle gives: ids,
 * each token's UTF-16 start and `exactOffsets`, on texts aimed at its steps — added tokens beside text and whitespace,
 * DeepSeek-V3's normalized added tokens, `lstrip` / `rstrip`, whitespace runs, CR LF, digit runs, CJK, emoji, lone
 * surrogates, combining marks under Qwen3's NFC, words long enough for the uncached and the unscratched merges — each
 * encoded twice (the second time from its cache). It must answer most of them itself (counted), hand the others back
 * (NFC that changes the text, a strip), and refuse the tokenizer.json shapes it does not reproduce.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { pieceEncode, pieceEncoder, type PieceEncoderStats } from '../../src/core/tokenizers/pieceEncoder';
import { PIECE_TABLE_ENTRIES, PieceTable, pieceTableLimits } from '../../src/core/tokenizers/pieceTable';
import { installWordCache } from '../../src/core/tokenizers/wordCache';
import { installLongWordBpe } from '../../src/core/tokenizers/longWordBpe';
import type { EncodedText, TargetTokenizer } from '../../src/core/tokenizers/types';
import { rng } from '../fuzzCorpus';
import { buildModelFolder, cutVocabularyJson, lenmlModelDir, oracleEncode, oracleEncodeBatch } from '../helpers';

/** The tokenizer of `dir` with our own encode, and the same folder's tokenizer on the old path. */
function bothPaths(dir: string): { own: TargetTokenizer; old: TargetTokenizer } {
  const own = loadTokenizer(dir);
  process.env.EAGLE3_NO_PIECE_ENCODER = '1';
  try {
    return { own, old: loadTokenizer(dir) };
  } finally {
    delete process.env.EAGLE3_NO_PIECE_ENCODER;
  }
}

/** Counts the texts our own encode answered and handed back while `fn` runs. */
function counted<T>(fn: () => Promise<T>): Promise<{ result: T; answered: number; handedBack: number }> {
  const run = pieceEncode.run;
  let answered = 0;
  let handedBack = 0;
  pieceEncode.run = (e, text) => {
    const r = run(e, text);
    if (r) answered++;
    else handedBack++;
    return r;
  };
  return fn()
    .then((result) => ({ result, answered, handedBack }))
    .finally(() => (pieceEncode.run = run));
}

/** Texts aimed at the encoder's steps, with `specials` (added-token contents) beside text, whitespace and each other. */
function corpus(specials: string[], seed: number): string[] {
  const r = rng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)];
  const fragments = [
    'Hello world',
    "I'm sure you're right; they'd've said. DON'T",
    'x = 12345678901234567890; y=3.14159e-10 # 1 22 333 4444 55555',
    '    indented\n\tTabbed\r\n\r\nCRLF lines   \n\n\n   trailing   ',
    '漢字かなカナ한국어 mixed 中文English混合 ١٢٣ ٤٥٦',
    'café naïve Ångström Ωmega', // precomposed: NFC leaves it as it is
    'e\u0301 cafe\u0301 n\u0303 A\u030A', // combining marks: Qwen3's NFC changes them
    'emoji 😀😀 👩‍💻 🇫🇷 ZWJ‍s ✓✓',
    'lone \ud800 surrogate \udc00 end',
    '\u00a0nbsp\u3000ideographic\u2003em space',
    '```python\ndef f(a, b):\n    return a/b  # ZeroDivisionError?\n```\n',
    ' '.repeat(37),
    '\n'.repeat(6),
    '\r\n\r\n',
    '0'.repeat(41),
    '!!!???...,,,;;;',
    '{"key": "value", "list": [1, 2, 3]}',
  ];
  const texts: string[] = [];
  for (let k = 0; k < 120; k++) {
    let t = '';
    const parts = 1 + Math.floor(r() * 6);
    for (let p = 0; p < parts; p++) {
      const sep = pick(['', ' ', '  ', '\n', ' \n ', '\t', '\r\n']);
      t += (r() < 0.45 ? pick(specials) : pick(fragments)) + sep;
    }
    texts.push(t);
  }
  // Adjacent added tokens, added tokens alone, and at both ends.
  texts.push(specials.join(''), specials.join(' '), specials.join('\n\n'), ...specials.slice(0, 4), `${specials[0]}x${specials[1]}`);
  // Long words: past the cached length (4096 units) and past the merge's scratch arrays (1365), one letter, mixed, CJK, emoji.
  texts.push('a'.repeat(5000), 'ab'.repeat(2600) + ' tail', 'x' + 'Zq9'.repeat(700), '漢'.repeat(1500), '😀'.repeat(800), 'é'.repeat(3000));
  return texts;
}

/** Where two encodings first differ, for the failure message; undefined when equal. */
function firstDifference(a: EncodedText, b: { ids: number[]; starts: number[] }): string | undefined {
  if (JSON.stringify(a.ids) === JSON.stringify(b.ids) && JSON.stringify(a.starts) === JSON.stringify(b.starts)) return undefined;
  let k = 0;
  while (a.ids[k] === b.ids[k] && a.starts[k] === b.starts[k]) k++;
  return `token ${k}: ${a.ids[k]}@${a.starts[k]} vs ${b.ids[k]}@${b.starts[k]} (of ${a.ids.length} / ${b.ids.length})`;
}

for (const name of ['qwen3', 'deepseek_v3', 'llama3_1'] as const) {
  test(`${name}: our own encode equals the old path and the Rust oracle (ids, starts), and answers most texts itself`, async () => {
    const dir = lenmlModelDir(name);
    const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    const added: { content: string; special: boolean; normalized: boolean }[] = json.added_tokens;
    // Special tokens and, for DeepSeek-V3, the normalized (non-special) ones matched after the normalizer.
    const specials = [...added.filter((t) => t.special).slice(0, 12), ...added.filter((t) => t.normalized)].map((t) => t.content);
    const { own, old } = bothPaths(dir);
    const texts = corpus(specials, name.length);
    // The references (the old path, the oracle) are computed once per text: the second pass is our encode from its cache.
    const wants = await oracleEncodeBatch(join(dir, 'tokenizer.json'), texts);
    const refs: { before: EncodedText; want: { ids: number[]; starts: number[] } }[] = [];
    const { answered, handedBack } = await counted(async () => {
      for (let pass = 0; pass < 2; pass++)
        for (const [k, text] of texts.entries()) {
          const got = own.encode(text);
          if (pass === 0) refs.push({ before: old.encode(text), want: wants[k] });
          const { before, want } = refs[k];
          const where = firstDifference(got, before);
          assert.equal(where, undefined, `old path: ${where} on ${JSON.stringify(text.slice(0, 80))}`);
          assert.equal(got.exactOffsets, before.exactOffsets);
          assert.equal(firstDifference(got, want), undefined, `oracle: ${firstDifference(got, want)} on ${JSON.stringify(text.slice(0, 80))}`);
        }
    });
    // Qwen3 hands back the texts its NFC changes (the combining marks); the others answer every text.
    const changedByNfc = name === 'qwen3' ? texts.filter((t) => t.includes('e\u0301')).length * 2 : 0;
    assert.equal(answered + handedBack, 2 * texts.length);
    assert.equal(handedBack, changedByNfc);
  });
}

test('an added token that strips whitespace beside it: answered where it strips nothing, handed back where it does (same ids and starts)', async () => {
  // Qwen3's vocabulary with two more added tokens: <mask> (lstrip, as RoBERTa's) and <rs> (rstrip).
  const dir = buildModelFolder({
    template: '{{ messages }}',
    tokenizerConfig: {
      ...JSON.parse(readFileSync(join(lenmlModelDir('qwen3'), 'tokenizer_config.json'), 'utf8')),
      added_tokens_decoder: {
        '151669': { content: '<mask>', lstrip: true, rstrip: false, normalized: false, special: true },
        '151670': { content: '<rs>', lstrip: false, rstrip: true, normalized: false, special: true },
      },
    },
  });
  const { own, old } = bothPaths(dir);
  const cases: [string, boolean][] = [
    ['a<mask>b', true],
    ['a <mask> b', false],
    ['<mask>', true],
    ['x\n\t<mask>', false],
    ['a<rs>b <rs>', true],
    ['a<rs> b', false],
    ['<rs>\n\nz', false],
    ['<mask><rs>', true],
  ];
  for (const [text, answers] of cases) {
    const { result, answered } = await counted(async () => own.encode(text));
    assert.equal(answered, answers ? 1 : 0, text);
    const before = old.encode(text);
    assert.deepEqual(result, before, text);
    assert.deepEqual(result.ids, (await oracleEncode(join(dir, 'tokenizer.json'), text)).ids, text);
  }
});

test('tokenizer.json shapes it does not reproduce are refused (the old path encodes them)', () => {
  // Llama-3.1's pre-tokenizer, normalizer, post-processor and added tokens on 4,000 ids of its vocabulary.
  const json = cutVocabularyJson(lenmlModelDir('llama3_1'), 4000);
  assert.ok(json.model.merges.length > 1000, `${json.model.merges.length} merges`);
  const built = (j: any) => {
    const tok = new Tokenizer(j, {});
    assert.ok(installWordCache(tok, j));
    installLongWordBpe(tok, { everyWord: true });
    return pieceEncoder(tok, j, false, (t) => t);
  };
  assert.ok(built(json), 'Llama-3.1 as it is');
  const steps = json.pre_tokenizer.pretokenizers;
  const withStep = (k: number, change: object) => ({
    ...json,
    pre_tokenizer: { ...json.pre_tokenizer, pretokenizers: steps.map((s: object, i: number) => (i === k ? { ...s, ...change } : s)) },
  });
  assert.equal(built(withStep(0, { behavior: 'Removed' })), undefined, 'a Split that removes its matches');
  assert.equal(built(withStep(0, { invert: true })), undefined, 'an inverted Split');
  assert.equal(built(withStep(1, { add_prefix_space: true })), undefined, 'ByteLevel adding a prefix space');
  assert.equal(built({ ...json, normalizer: { type: 'Lowercase' } }), undefined, 'a normalizer');
  assert.equal(built({ ...json, post_processor: { type: 'TemplateProcessing', single: [{ SpecialToken: { id: 'x' } }] } }), undefined);
});

test('the piece table finds ranges of any string by content, and empties itself when told', () => {
  const t = new PieceTable();
  const text = 'the cat; the dog; the cat';
  assert.equal(t.get(text, 0, 3), -1);
  t.set(text, 0, 3, 7);
  assert.equal(t.get('xx the', 3, 6), 7, 'the same characters in another string');
  assert.equal(t.get(text, 4, 7), -1);
  t.set(text, 4, 7, -5);
  assert.equal(t.get(text, 22, 25), -5);
  assert.equal(t.get(text, 4, 6), -1, 'a prefix is another key');
  assert.equal(t.get('', 0, 0), -1);
  t.set('', 0, 0, 3);
  assert.equal(t.get('abc', 1, 1), 3, 'the empty key');
  // Many keys (collisions in the slots), then full: the caller clears.
  for (let k = 0; k < PIECE_TABLE_ENTRIES - 3; k++) {
    const key = `k${k.toString(36)}`;
    assert.equal(t.get(key, 0, key.length), -1);
    t.set(key, 0, key.length, k);
  }
  assert.ok(t.full(1));
  assert.equal(t.get('k1000', 0, 5), parseInt('1000', 36));
  assert.equal(t.get(text, 0, 3), 7);
  t.clear();
  assert.equal(t.get(text, 0, 3), -1);
  assert.equal(t.get('k1000', 0, 5), -1);
});

test('more distinct pieces than the cache holds: it is cleared and refilled, ids and starts unchanged', () => {
  const dir = lenmlModelDir('llama3_1');
  // Encoders whose piece table holds 4,096 entries (PIECE_TABLE_ENTRIES, ~131k, is the same code with larger arrays).
  const entries = 4096;
  const limits = pieceTableLimits.entries;
  pieceTableLimits.entries = entries;
  let paths: { own: TargetTokenizer; old: TargetTokenizer };
  try {
    paths = bothPaths(dir);
  } finally {
    pieceTableLimits.entries = limits;
  }
  const { own, old } = paths;
  // 2.5 tables' worth of distinct words of letters (each one piece, most of several tokens), then the first ones
  // again: evicted when the table was cleared.
  const n = Math.round(2.5 * entries);
  const again = Math.round(entries / 4);
  const words: string[] = [];
  for (let k = 0; words.length < n; k++) words.push(' ' + (k + 26 ** 3).toString(26).replace(/[0-9]/g, (d) => 'qrstuvwxyz'[Number(d)]));
  const texts = [words.slice(0, n / 2).join(''), words.slice(n / 2).join(''), words.slice(0, again).join('')];
  const run = pieceEncode.run;
  let stats: PieceEncoderStats | undefined;
  pieceEncode.run = (e, text) => ((stats = e.stats), run(e, text));
  try {
    for (const text of texts) {
      const got = own.encode(text);
      assert.equal(firstDifference(got, old.encode(text)), undefined);
      assert.ok(got.exactOffsets);
    }
  } finally {
    pieceEncode.run = run;
  }
  // Every word a miss: the first ones again too (evicted when the table was cleared; a table that held them all
  // would find them).
  assert.equal(stats?.misses, n + again);
  assert.equal(stats?.fallbacks, 0);
});

test("without the heap BPE's merge table (EAGLE3_NO_LONG_WORD_BPE), misses go through the library's model: same ids and starts", async () => {
  const dir = lenmlModelDir('llama3_1');
  process.env.EAGLE3_NO_LONG_WORD_BPE = '1';
  let paths: { own: TargetTokenizer; old: TargetTokenizer };
  try {
    paths = bothPaths(dir);
  } finally {
    delete process.env.EAGLE3_NO_LONG_WORD_BPE;
  }
  const { own, old } = paths;
  const texts = corpus(['<|begin_of_text|>', '<|eot_id|>', '<|start_header_id|>'], 3).slice(0, 60);
  const { answered, handedBack } = await counted(async () => {
    for (const text of texts) {
      const got = own.encode(text);
      assert.equal(firstDifference(got, old.encode(text)), undefined, JSON.stringify(text.slice(0, 80)));
      const want = await oracleEncode(join(dir, 'tokenizer.json'), text);
      assert.equal(firstDifference(got, want), undefined, JSON.stringify(text.slice(0, 80)));
    }
  });
  assert.deepEqual({ answered, handedBack }, { answered: texts.length, handedBack: 0 });
});
