/**
 * The Rust tokenizer backend (src/core/tokenizers/rustTokenizer.ts, backend.ts): the code point → UTF-16 offset
 * conversion, the backend choice and its fallback, and the same ids, starts and records as the JavaScript backend.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { loadRustBinding, loadRustTokenizer, rustBinding, utf16Starts, type RustBinding } from '../../src/core/tokenizers/rustTokenizer';
import { loadTokenizerWithBackend, tokenizerBackendChoice, TOKENIZER_BACKEND_ENV } from '../../src/core/tokenizers/backend';
import { TokenizerLoadError } from '../../src/core/tokenizers/types';
import { RowProcessor } from '../../src/core/records/rowProcessor';
import { checkTemplate, checkTemplateAsync } from '../../src/core/records/checkTemplate';
import { cutVocabularyJson, lenmlModelDir, oracleEncode, sharedTokenizer, tempDir } from '../helpers';

const binding = (): RustBinding => {
  const b = rustBinding();
  if ('error' in b) throw new Error(`the tokenizers binding does not load here: ${b.error}`);
  return b.binding;
};

test('utf16Starts: code point offsets become UTF-16 indices (ASCII, CJK, astral emoji, a lone surrogate)', () => {
  // ASCII and CJK (BMP): one unit per code point.
  assert.deepEqual(
    utf16Starts('ab 中文', [
      [0, 2],
      [2, 3],
      [3, 4],
      [4, 5],
    ]),
    [0, 2, 3, 4],
  );
  // "a😀b🎉c": 😀 and 🎉 are two UTF-16 units each; code points a=0 😀=1 b=2 🎉=3 c=4 → units 0 1 3 4 6.
  assert.deepEqual(
    utf16Starts('a😀b🎉c', [
      [0, 1],
      [1, 2],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 5],
    ]),
    [0, 1, 1, 3, 4, 6],
  );
  // A lone high surrogate counts as one code point (the binding sees U+FFFD there), and the end maps to the length.
  assert.deepEqual(
    utf16Starts('x\uD83Dy😀', [
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      [4, 4],
    ]),
    [0, 1, 2, 3, 5],
  );
});

test('utf16Starts agrees with the binding on texts with emoji, CJK and combining marks (Qwen3)', async () => {
  const dir = lenmlModelDir('qwen3');
  const rust = binding().Tokenizer.fromString(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  for (const text of ['héllo 👋🏽 wörld', '数学题：𝑥² + 𝑦² = 1 🎉🎉', 'e\u0301 and 🇫🇷 flags', '<|im_start|>user\n你好 😀<|im_end|>']) {
    const [enc] = await rust.encodeBatch([text], { addSpecialTokens: false });
    const want = await oracleEncode(join(dir, 'tokenizer.json'), text);
    assert.deepEqual(utf16Starts(text, enc.getOffsets()), want.starts, text);
    assert.ok(
      want.starts.some((s, k) => k > 0 && s !== want.starts[k - 1] + 1),
      'the text has tokens of several units',
    );
  }
});

test('loadRustBinding: a binding that does not load, or lacks Tokenizer.fromString, is the reason, not an exception', () => {
  const missing = loadRustBinding(() => {
    throw new Error("Cannot find module 'tokenizers'\nRequire stack:\n- /x/dist/cli.js");
  });
  assert.deepEqual(missing, { error: "Cannot find module 'tokenizers'" });
  assert.deepEqual(
    loadRustBinding(() => ({})),
    { error: 'the tokenizers package has no Tokenizer.fromString' },
  );
  assert.ok('binding' in rustBinding(), 'the installed binding loads');
});

test('tokenizerBackendChoice: the option, else EAGLE3_TOKENIZER_BACKEND, else auto; an unknown value is an error', () => {
  assert.equal(tokenizerBackendChoice(undefined, {}), 'auto');
  assert.equal(tokenizerBackendChoice(undefined, { [TOKENIZER_BACKEND_ENV]: 'js' }), 'js');
  assert.equal(tokenizerBackendChoice('rust', { [TOKENIZER_BACKEND_ENV]: 'js' }), 'rust');
  assert.throws(
    () => tokenizerBackendChoice(undefined, { [TOKENIZER_BACKEND_ENV]: 'python' }),
    (e: Error) => {
      assert.ok(e instanceof TokenizerLoadError);
      assert.match(e.message, /EAGLE3_TOKENIZER_BACKEND=python: expected one of auto, rust, js/);
      return true;
    },
  );
});

/** A model folder whose tokenizer the word cache does not fit (Qwen3's with `byte_fallback`: SentencePiece-style BPE has it), so `auto` takes the Rust binding. */
function folderWithoutWordCache(): string {
  const dir = tempDir();
  // Qwen3's tokenizer on 10,000 ids of its vocabulary (the backend choice reads its shape, not its size; each of the
  // four loads below builds it whole): with byte fallback, which the word cache does not take.
  const tj = cutVocabularyJson(lenmlModelDir('qwen3'), 10_000);
  tj.model.byte_fallback = true;
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tj));
  writeFileSync(join(dir, 'tokenizer_config.json'), readFileSync(join(lenmlModelDir('qwen3'), 'tokenizer_config.json')));
  return dir;
}

test('loadTokenizerWithBackend: auto takes JavaScript where the word cache fits, else Rust, falling back with the reason; rust then fails', () => {
  const qwen = lenmlModelDir('qwen3');
  const other = folderWithoutWordCache();
  const broken = () => ({ error: 'no binary for this platform' });
  const autoQwen = loadTokenizerWithBackend(qwen, 'auto', broken);
  assert.equal(autoQwen.tok.backend, 'js');
  assert.equal(autoQwen.fallback, undefined, 'a choice, not a fallback: the binding is not even loaded');
  const auto = loadTokenizerWithBackend(other, 'auto');
  assert.equal(auto.tok.backend, 'rust');
  assert.equal(auto.fallback, undefined);
  assert.equal(typeof auto.tok.encodeBatch, 'function');
  const rust = loadTokenizerWithBackend(qwen, 'rust');
  assert.equal(rust.tok.backend, 'rust');
  const js = loadTokenizerWithBackend(other, 'js', broken);
  assert.equal(js.tok.backend, 'js');
  assert.equal(js.tok.encodeBatch, undefined);
  assert.equal(js.fallback, undefined, 'asking for js is no fallback');
  const fell = loadTokenizerWithBackend(other, 'auto', broken);
  assert.equal(fell.tok.backend, 'js');
  assert.equal(fell.fallback, 'the Rust tokenizers binding does not load (no binary for this platform)');
  assert.throws(
    () => loadTokenizerWithBackend(other, 'rust', broken),
    /--tokenizer-backend rust: the Rust tokenizers binding does not load: no binary for this platform/,
  );
  // The folder's own problem is reported whatever the backend.
  assert.throws(() => loadTokenizerWithBackend(join(qwen, 'nope'), 'auto'), /tokenizer folder not found/);
  // The same facts as the JavaScript loader.
  const { encode: _a, decode: _b, idToToken: _c, encodeBatch: _d, backend: _e, ...rustFacts } = rust.tok;
  const { encode: _f, decode: _g, idToToken: _h, encodeBatch: _i, backend: _j, ...jsFacts } = autoQwen.tok;
  assert.deepEqual(rustFacts, jsFacts);
});

/** Texts where ids or starts are easy to get wrong: special tokens inside text, astral characters, NFC, whitespace runs, lone surrogates. */
const EDGE_TEXTS = [
  '<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n4<|im_end|>\n',
  '😀😃😄 emoji 👩‍👩‍👧‍👦 family, 🇯🇵 flag, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '中文、日本語のテキスト、한국어 텍스트 — mixed with English.',
  'Cafe\u0301 vs Café; A\u030a; \u1100\u1161\u11a8',
  '    indented\n\n\n\t\ttabs   and   spaces   ',
  'lone \uD800 high and \uDC00 low surrogates',
  '<s>[INST] literal special-looking text [/INST]</s> <|endoftext|>',
];

for (const name of ['qwen3', 'deepseek_v3'] as const) {
  test(`${name}: the Rust backend's encodeBatch gives the JavaScript encode's ids and starts`, async () => {
    const dir = lenmlModelDir(name);
    const js = sharedTokenizer(dir); // the reference: loading is not what this test checks
    const rust = loadRustTokenizer(binding(), dir)!;
    const got = await rust.encodeBatch!(EDGE_TEXTS);
    const approximate: string[] = [];
    EDGE_TEXTS.forEach((t, k) => {
      const want = js.encode(t);
      assert.deepEqual(got[k], want, JSON.stringify(t));
      if (!want.exactOffsets) approximate.push(t);
    });
    // Qwen3's NFC normalizer composes the decomposed accents of one text (normalized before the binding sees it, as the
    // JavaScript backend does: the same offsets note); DeepSeek-V3 has no normalizer.
    assert.deepEqual(approximate, name === 'qwen3' ? [EDGE_TEXTS[3]] : []);
    // The synchronous calls go to the JavaScript tokenizer of the same folder.
    assert.deepEqual(rust.encode(EDGE_TEXTS[1]), js.encode(EDGE_TEXTS[1]));
    assert.equal(rust.decode(got[0].ids), js.decode(got[0].ids));
    assert.equal(rust.idToToken(got[2].ids[0]), js.idToToken(got[2].ids[0]));
  });
}

test("where the aligner cannot align (a normalizer it does not know), the starts are the binding's offsets, exact", async () => {
  // Qwen3's vocabulary (10,000 ids of it: the offsets are the question, not the vocabulary's size) with a Lowercase
  // normalizer: token surfaces are lower case, the text is not.
  const dir = tempDir();
  const tj = cutVocabularyJson(lenmlModelDir('qwen3'), 10_000);
  tj.normalizer = { type: 'Lowercase' };
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tj));
  writeFileSync(join(dir, 'tokenizer_config.json'), '{}');
  const text = 'Hello WORLD 😀 Ünïcode';
  const rust = loadRustTokenizer(binding(), dir)!;
  const [got] = await rust.encodeBatch!([text]);
  const want = await oracleEncode(join(dir, 'tokenizer.json'), text);
  assert.deepEqual(got, { ids: want.ids, starts: want.starts, exactOffsets: true });
  assert.equal(loadTokenizer(dir).encode(text).exactOffsets, false, 'the JavaScript backend can only approximate them');
});

test('RowProcessor.processRows with the Rust backend gives processRow results with the JavaScript one, row for row', async () => {
  const rows = [
    {
      line: 1,
      value: {
        messages: [
          { role: 'user', content: 'Hi 😀, 你好' },
          { role: 'assistant', content: 'Hello! 🎉' },
          { role: 'user', content: 'More?' },
          { role: 'assistant', content: 'Sure.' },
        ],
      },
    },
    { line: 2, error: 'Unexpected token } in JSON' },
    { line: 3, value: { messages: [{ role: 'user', content: 'only a prompt' }] } },
    {
      line: 4,
      value: {
        conversations: [
          { from: 'human', value: 'q' },
          { from: 'gpt', value: 'a 𝔘' },
        ],
      },
    },
    { line: 5, value: { text: 42 } },
  ];
  for (const grouping of ['exact', 'merged'] as const) {
    const js = new RowProcessor({ tokenizerBackend: 'js', grouping, format: 'both' });
    const rust = new RowProcessor({ tokenizerBackend: 'rust', grouping, format: 'both' });
    assert.equal(rust.tok.backend, 'rust');
    const want = rows.map((r) => js.processRow(r, '/x/data.jsonl', 'data.jsonl'));
    const got = await rust.processRows(rows, '/x/data.jsonl', 'data.jsonl');
    assert.deepEqual(got, want);
    assert.deepEqual(
      want.map((r) => r.fate),
      ['written', 'errored', 'setAside', 'written', 'dropped'],
    );
  }
});

test('RowProcessor.processRows errors the waiting rows, not the batch, when encodeBatch rejects', async () => {
  const p = new RowProcessor({ tokenizerBackend: 'rust' });
  const failing = Object.create(p) as RowProcessor;
  Object.defineProperty(failing, 'tok', { value: { ...p.tok, encodeBatch: () => Promise.reject(new Error('binding failure')) } });
  const rows = [
    {
      line: 1,
      value: {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: 'a' },
        ],
      },
    },
    { line: 2, error: 'bad json' },
  ];
  const got = await failing.processRows(rows, '/x/d.jsonl', 'd.jsonl');
  assert.equal(got[0].fate, 'errored');
  assert.match(got[0].message!, /binding failure/);
  assert.equal(got[1].code, 'invalid_json');
});

test('checkTemplateAsync with the Rust backend (encodeBatch) gives checkTemplate with the JavaScript one, amplification included', async () => {
  const dir = lenmlModelDir('qwen3');
  const want = checkTemplate(sharedTokenizer(dir), { grouping: 'merged' });
  const got = await checkTemplateAsync(loadRustTokenizer(binding(), dir)!, { grouping: 'merged' });
  assert.deepEqual(got, want);
  assert.ok(want.amplification.renderedTokens > 0 && want.amplification.exact! > 1, 'Qwen3 rewrites history: exact records cost more tokens');
});

test('the row path as steps: processRows encodes each round of a batch in one encodeBatch (a row of three conversations takes three), with processRow results, --long split included', async () => {
  const u = (content: string) => ({ role: 'user', content });
  const a = (content: string) => ({ role: 'assistant', content });
  const long = 'A long answer with many words in it. '.repeat(12);
  const rows = [
    {
      line: 1,
      value: {
        id: 'f',
        messages: [u('One?'), a('1.')],
        episodes: [
          [u('Two?'), a('2.')],
          [u('Three?'), a('3.')],
        ],
      },
    },
    { line: 2, value: { id: 'g', messages: [u('q1'), a(long), u('q2'), a(long), u('q3'), a('short')] } },
    { line: 3, error: 'bad json' },
    { line: 4, value: { id: 'h', messages: [u('only a prompt')] } },
  ];
  const settings = { tokenizerBackend: 'js', maxLength: 160, long: 'split' } as const;
  const p = new RowProcessor(settings);
  const want = rows.map((r) => p.processRow(r, '/x/d.jsonl', 'd.jsonl'));
  const batches: number[] = [];
  const batched = Object.create(p) as RowProcessor;
  const encodeBatch = (texts: string[]) => {
    batches.push(texts.length);
    return Promise.resolve(texts.map((t) => p.tok.encode(t)));
  };
  Object.defineProperty(batched, 'tok', { value: { ...p.tok, encodeBatch } });
  const got = await batched.processRows(rows, '/x/d.jsonl', 'd.jsonl');
  assert.deepEqual(got, want);
  assert.deepEqual(
    want.map((r) => r.fate),
    ['written', 'written', 'errored', 'setAside'],
  );
  assert.ok(want[1].notes.includes('split_into_records'), 'row g is split (its pieces encoded with encode)');
  assert.equal(want[0].records.length, 3);
  // Round 1: f's first conversation and g's records (and g's whole render when no record is it); rounds 2 and 3: f's
  // other two conversations (one record each). h and the bad line need no encoding.
  assert.equal(batches.length, 3);
  assert.deepEqual(batches.slice(1), [1, 1]);
  // The Rust binding's encodeBatch gives the same results.
  const rust = new RowProcessor({ ...settings, tokenizerBackend: 'rust' });
  assert.deepEqual(await rust.processRows(rows, '/x/d.jsonl', 'd.jsonl'), want);
});
