/**
 * Long pre-tokens (src/core/tokenizers/longWordBpe.ts): the heap BPE gives the
 * merges of tokenizers.js's own BPE on random and repetitive words (ties
 * included), the full encode equals the Rust `tokenizers` oracle on long words
 * for Qwen3, DeepSeek-V3, Llama-3.1 and Gemma-3, and a multi-MiB single-word
 * assistant turn runs through `prepare` in a child process with a bounded heap
 * and time, its ids equal to the oracle's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BPE, Tokenizer } from '@huggingface/tokenizers';
import { buildMergeTable, heapBpe, installLongWordBpe, LONG_WORD_CHARS } from '../../src/core/tokenizers/longWordBpe';
import { cliNodeArgs, lenmlModelDir, oracleEncode, sharedTokenizer, tempDir } from '../helpers';

const MODELS = ['qwen3', 'deepseek_v3', 'llama3_1', 'gemma3'] as const;

/** A deterministic pseudo-random generator (LCG), so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomWord(r: () => number, alphabet: string[], length: number): string {
  let w = '';
  while (w.length < length) w += alphabet[Math.floor(r() * alphabet.length)];
  return w;
}

/** Words in each model's BPE alphabet: repetitive (ties everywhere), random over few or many symbols, pieces of real tokens. */
function wordsFor(model: any, seed: number): string[] {
  const r = rng(seed);
  const vocab: string[] = [...(model.tokens_to_ids as Map<string, number>).keys()];
  const sym = (s: string) => s.replace(/ /g, model.tokens_to_ids.has('Ġ') ? 'Ġ' : '\u2581');
  const singles = vocab.filter((t) => [...t].length === 1).slice(0, 200);
  const words: string[] = [];
  for (const len of [2, 3, 5, 17, 64, 255, 256, 300, 1000, 3000]) {
    words.push('a'.repeat(len), 'ab'.repeat(Math.ceil(len / 2)), sym(' ').repeat(len), '0'.repeat(len));
    words.push(randomWord(r, ['a', 'b'], len), randomWord(r, ['a', 'b', 'c', 'aa', 'ab'], len), randomWord(r, singles, len));
    words.push(randomWord(r, vocab.slice(1000, 3000), len).slice(0, len));
  }
  return words;
}

for (const name of MODELS) {
  test(`${name}: heapBpe gives tokenizers.js's merges on random and repetitive words (lengths 2–3000)`, () => {
    const json = JSON.parse(readFileSync(join(lenmlModelDir(name), 'tokenizer.json'), 'utf8'));
    const model = (new Tokenizer(json, {}) as any).model;
    const table = buildMergeTable(model.merges, model.tokens_to_ids);
    assert.ok(table, 'the model fits the packed tables');
    let tokens = 0;
    for (const w of wordsFor(model, 7)) {
      model.clear_cache();
      const want = model.bpe(w);
      const got = heapBpe(w, table!, model.end_of_word_suffix, model.continuing_subword_suffix);
      assert.deepEqual(got, want, `${name}: ${JSON.stringify(w.slice(0, 40))}… (${w.length})`);
      tokens += got.length;
    }
    assert.ok(tokens > 1000, `${tokens}`);
  });
}

test('heapBpe: suffixes, unknown characters, a pair listed twice and a merge result outside the vocabulary behave as tokenizers.js', () => {
  const vocab = new Map(Object.entries({ a: 0, b: 1, ab: 2, 'b</w>': 3, 'ab</w>': 4, aa: 5 }));
  const merges: [string, string][] = [
    ['a', 'b'],
    ['a', 'b</w>'],
    ['a', 'a'],
    ['aa', 'aa'], // "aaaa" is not in the vocabulary: tokenizers.js still merges by string
    ['a', 'b'], // listed twice: the last rank counts
  ];
  const table = buildMergeTable(merges, vocab)!;
  const model = new (BPE as any)({ type: 'BPE', vocab: Object.fromEntries(vocab), merges: merges.map((m) => m.join(' ')) });
  for (const w of ['ab', 'aab', 'abab', 'aaaa', 'aaaaab', 'xaby', 'aaxaa', 'b', 'aaaaaaaaa', 'abababababa']) {
    assert.deepEqual(heapBpe(w, table), model.bpe(w), w);
  }
  assert.deepEqual(heapBpe('aab', table, '</w>'), ['a', 'ab</w>']);
  assert.deepEqual(heapBpe('aab', table, null, '##'), ['aa##', 'b']);
  assert.deepEqual(heapBpe('', table), []);
});

for (const name of MODELS) {
  test(`${name}: encode of long words (64k–200k characters) equals the Rust tokenizers oracle, ids and offsets`, async () => {
    const dir = lenmlModelDir(name);
    const tok = sharedTokenizer(dir);
    const r = rng(11);
    const texts = [
      'a'.repeat(200_000),
      'ab'.repeat(50_000),
      randomWord(r, ['a', 'b', 'c'], 100_000),
      randomWord(r, 'abcdefghijklmnopqrstuvwxyz'.split(''), 64_000),
      '中'.repeat(40_000),
      'é'.repeat(40_000) + ' ' + 'x'.repeat(LONG_WORD_CHARS),
      '='.repeat(70_000),
      'https://example.com/' + randomWord(r, ['a', 'Z', '9', '_', '-'], 80_000),
      'A'.repeat(LONG_WORD_CHARS - 1) + ' ' + 'B'.repeat(LONG_WORD_CHARS),
    ];
    for (const text of texts) {
      const want = await oracleEncode(join(dir, 'tokenizer.json'), text);
      const got = tok.encode(text);
      assert.equal(got.ids.length, want.ids.length, `${name}: token count on ${JSON.stringify(text.slice(0, 30))}…`);
      assert.deepEqual(got.ids, want.ids, `${name}: ids on ${JSON.stringify(text.slice(0, 30))}…`);
      assert.deepEqual(got.starts, want.starts, `${name}: offsets on ${JSON.stringify(text.slice(0, 30))}…`);
    }
  });
}

test('installLongWordBpe: only BPE models are patched; short words keep the library path', () => {
  const json = JSON.parse(readFileSync(join(lenmlModelDir('qwen3'), 'tokenizer.json'), 'utf8'));
  const tok = new Tokenizer(json, {}) as any;
  const before = tok.model.bpe;
  assert.equal(installLongWordBpe(tok), true);
  assert.notEqual(tok.model.bpe, before);
  assert.equal(installLongWordBpe({ model: { type: 'WordPiece' } }), false);
  assert.equal(installLongWordBpe(null), false);
});

test('a multi-MiB single-character assistant turn: prepare in a child process with a 700 MB heap, in bounded time, ids equal to the oracle', async () => {
  const dir = tempDir();
  const input = join(dir, 'turn.jsonl');
  const MiB = 3;
  const content = 'a'.repeat(MiB * 1024 * 1024);
  writeFileSync(
    input,
    JSON.stringify({
      messages: [
        { role: 'user', content: 'say a' },
        { role: 'assistant', content },
      ],
    }) + '\n',
  );
  const out = join(dir, 'out');
  const root = join(__dirname, '..', '..');
  const t0 = Date.now();
  const child = spawnSync(process.execPath, ['--max-old-space-size=700', ...cliNodeArgs(), 'prepare', input, '--out', out, '--workers', '1', '--json'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 480_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const seconds = (Date.now() - t0) / 1000;
  assert.equal(child.status, 0, `exit ${child.status} ${child.signal ?? ''} after ${seconds} s: ${child.stderr.slice(-2000)}`);
  // The heap cap is the sharp bound (before: 0.87 GB at 1 MiB, 3.2 GB at 5 MiB); the time bound is generous for a
  // shared machine (about 5 CPU s; 10–95 s wall here at load 2–20; before: 25 CPU s at 1 MiB, growing faster than the length).
  assert.ok(seconds < 400, `${seconds} s`);
  const rec = JSON.parse(readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8'));
  const tok = sharedTokenizer();
  const text = tok.decode(rec.input_ids);
  assert.ok(text.includes(content), 'the record holds the whole turn');
  const want = await oracleEncode(join(tok.dir, 'tokenizer.json'), text);
  assert.equal(rec.input_ids.length, want.ids.length);
  assert.deepEqual(rec.input_ids, want.ids);
  assert.ok(rec.n_response_tokens > (MiB * 1024 * 1024) / 16, `${rec.n_response_tokens} trainable tokens`);
});
