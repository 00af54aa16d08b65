/**
 * Characters whose Unicode properties differ between the runtime's tables (Node 20.20: Unicode 17.0) and the Rust
 * `tokenizers` library's (its regex engine's General_Category and White_Space, its NFC compositions): the ids of texts
 * holding them are the Rust oracle's, on both of our encode paths (our own encode and tokenizers.js's steps), for each
 * tokenizer the project ships and tests and a gpt-oss-style pattern; the pattern rewrite (src/core/tokenizers/rustUnicode.ts)
 * on hand-checked sources; and the generated table (rustUnicodeData.ts) against the installed package where it matters.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { Tokenizer } from '@huggingface/tokenizers';
import { alignTokenizerRegexes, GC_LEAVES, rustPropertyRanges, rustRegexSource, V8_OPTIMIZED_SOURCE_LIMIT } from '../../src/core/tokenizers/rustUnicode';
import { RUST_NFC_UNCOMPOSED, RUST_UNICODE_SOURCE } from '../../src/core/tokenizers/rustUnicodeData';
import { normalizeLikeRust } from '../../src/core/tokenizers/rustText';
import { bothEncodePaths, cutVocabularyJson, lenmlModelDir, oracleEncodeBatch, tempDir, writeJsonl } from '../helpers';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { isCode, isDataChanging } from '../../src/core/codes';

/**
 * Texts with characters new in Unicode 17.0 (CJK Extension J U+323B0…, U+A7D2 LATIN CAPITAL LETTER DOUBLE THORN, the
 * Sidetic letters U+10940…, Tolong Siki digits U+11DE0…, U+0295 (Ll in Unicode 16, Lo in 17.0)) and with NFC
 * compositions of Unicode 14–16 that Rust's normalizer does not make, beside letters, digits, spaces, punctuation.
 */
const TEXTS = [
  "\u{324A4}'ll",
  "q\u{323B0}'ll 1\u{323B0}2 \u{323B0}\u{323B0} ,\u{323B0}",
  'CJK Ext J: \u{323B0}\u{323B1}\u{33479}abc 123, 漢字\u{323B5}かな!\n',
  "We'll see \u{A7D2}\u{A7D2}ORN and \u{A7D4}x's; 'D\u{A7F1}",
  'Sidetic \u{10940}\u{10941}\u{10959} text. \u{10940}1\u{10941}',
  'digits x\u{11DE0}\u{11DE1}\u{11DE2}\u{11DE3}5 7\u{11DE9}',
  'pha\u{295}r \u{295}\u{295}A',
  '\u{16EA0}\u{16EB8}  \u{1E6C0}\u{1E6DE}-\u{18D09}',
  'emoji 17 \u{1FAEA}\u{1FAEF} ok \u{1F6D8}!',
  'a\u{113C2}\u{113C2}b \u{1611E}\u{1611E}\u{1611F} \u{16D67}\u{16D67} \u{105D2}\u{307}\u{301} \u{11935}\u{11930}',
];

/** Asserts the ids and starts of every text are the oracle's, on both paths. */
async function sameAsRust(dir: string, texts: string[]): Promise<void> {
  const want = await oracleEncodeBatch(join(dir, 'tokenizer.json'), texts);
  for (const tok of bothEncodePaths(dir)) {
    // Twice: the second time from the encoder's caches.
    for (const round of [1, 2]) {
      texts.forEach((t, k) => {
        const got = tok.encode(t);
        assert.deepEqual(got.ids, want[k].ids, `${dir}: ids of ${JSON.stringify(t)} (${round})`);
        assert.deepEqual(got.starts, want[k].starts, `${dir}: starts of ${JSON.stringify(t)} (${round})`);
      });
    }
  }
}

for (const name of ['qwen3', 'deepseek_v3', 'llama3_1', 'gemma3'] as const) {
  test(`${name}: texts with characters newer than the Rust library's tables have the Rust oracle's ids and starts`, async () => {
    await sameAsRust(lenmlModelDir(name), TEXTS);
  });
}

test("a hand-checked case: Qwen3 cuts `\\u{324A4}'ll` as Rust does (the apostrophe with the ideograph, `ll` a word; here `'ll` was the contraction)", async () => {
  const dir = lenmlModelDir('qwen3');
  const [oracle] = await oracleEncodeBatch(join(dir, 'tokenizer.json'), ["\u{324A4}'ll"]);
  const tok = loadTokenizer(dir);
  // U+324A4 is unassigned to Rust: not `\p{L}`, so ` ?[^\s\p{L}\p{N}]+` takes it with the apostrophe, and `ll` follows as a word.
  const got = tok.encode("\u{324A4}'ll");
  assert.deepEqual(got.ids, oracle.ids);
  assert.equal(tok.decode(got.ids.slice(-1)), 'll');
  assert.equal(tok.decode(got.ids.slice(0, -1)), "\u{324A4}'");
});

test("a gpt-oss-style pattern (o200k: \\p{Lu} \\p{Lt} \\p{Lm} \\p{Lo} \\p{Ll} \\p{M} apart) on Qwen3's vocabulary has the Rust oracle's ids", async () => {
  const base = lenmlModelDir('qwen3');
  const json = JSON.parse(readFileSync(join(base, 'tokenizer.json'), 'utf8'));
  const contractions = "(?i:'s|'t|'re|'ve|'m|'ll|'d)?";
  const o200k = [
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${contractions}`,
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${contractions}`,
    '\\p{N}{1,3}',
    ' ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*',
    '\\s*[\\r\\n]+',
    '\\s+(?!\\S)',
    '\\s+',
  ].join('|');
  json.pre_tokenizer.pretokenizers[0].pattern = { Regex: o200k };
  json.normalizer = null;
  const dir = tempDir('eagle3-o200k-');
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  writeFileSync(join(dir, 'tokenizer_config.json'), readFileSync(join(base, 'tokenizer_config.json')));
  // Its rewrite is over V8's 20 KB limit: the runtime's pattern is kept, and a text with a character the tables
  // disagree on is cut again on Rust's (rustUnicode.ts `guarded`). U+0295 is Ll to Rust and Lo here.
  const tok = new Tokenizer(json, {});
  const aligned = alignTokenizerRegexes(tok);
  assert.equal(aligned.guarded.length, 1);
  assert.ok(aligned.guarded[0].exact.source.length > V8_OPTIMIZED_SOURCE_LIMIT);
  await sameAsRust(dir, [...TEXTS, 'Xʕʕ Aʕ ʕA', "ʕ's \u{A7D2}\u{A7D3}'S", 'plain text first', "q\u{323B0}'ll again", 'Aʕ']);
});

test("rustRegexSource: General_Category and White_Space escapes become Rust's ranges, in and out of classes, u and v", () => {
  const letters = rustPropertyRanges('L')!;
  // Unicode 17.0's CJK Extension J is not a letter to Rust; Extension I (Unicode 15.1) is.
  assert.ok(!letters.some(([a, b]) => a <= 0x323b0 && 0x323b0 <= b));
  assert.ok(letters.some(([a, b]) => a <= 0x2ebf0 && 0x2ebf0 <= b));
  const u = rustRegexSource('[^\\r\\n\\p{L}]?\\p{L}+|\\P{White_Space}|\\p{Script=Han}', 'gu');
  assert.deepEqual(u.unverified, ['Script=Han']);
  const re = new RegExp(u.source, 'gu');
  assert.deepEqual("x\u{323B0}y \u{2EBF0}'".match(re), ['x', '\u{323B0}y', ' \u{2EBF0}', "'"]);
  // Inside a `v` class a property is an operand: it becomes a nested class.
  const v = rustRegexSource('[\\p{L}--[a-z]]+', 'gv');
  assert.deepEqual(v.unverified, []);
  assert.deepEqual('abcXYZ\u{323B0}Q'.match(new RegExp(v.source, 'gv')), ['XYZ', 'Q']);
  // Escaped backslashes and long names.
  assert.equal(rustRegexSource('\\\\p{L}', 'u').source, '\\\\p{L}');
  assert.equal(new RegExp(rustRegexSource('^\\p{Letter}$', 'u').source, 'u').test('\u{A7D2}'), false);
  assert.equal(new RegExp(rustRegexSource('^\\p{gc=Lu}$', 'u').source, 'u').test('A'), true);
});

test("rustRegexSource: a class's literal `^` or trailing `-` stays a literal when its properties' ranges are written at the class's end", () => {
  // `[\p{L}^]` is letters or a caret: with the property taken out, the caret must not become the class's negation.
  const caret = new RegExp(rustRegexSource('[\\p{L}^]+', 'gu').source, 'gu');
  assert.deepEqual('a^b 12 ^'.match(caret), ['a^b', '^']);
  const negated = new RegExp(rustRegexSource('[^\\p{L}^]+', 'gu').source, 'gu');
  assert.deepEqual('a^b 12 ^'.match(negated), [' 12 ']);
  // `[.\p{L}-]` is a dot, letters or a dash: the dash must not become a range `.-A` (which holds the digits).
  const dash = new RegExp(rustRegexSource('[.\\p{L}-]+', 'gu').source, 'gu');
  assert.deepEqual('a.b-c 12 /'.match(dash), ['a.b-c']);
});

test('rustRegexSource: a `v` pattern of punctuation or symbol properties compiles (its class syntax characters escaped) and matches as Rust', () => {
  // In a `v` class `(`, `{`, `|`, `/` are syntax characters and `&&`, `!!`, `##`… are reserved: `\p{Ps}` holds `(` and `{`.
  for (const src of ['\\p{Ps}+', '[\\p{P}\\p{S}]+', '[\\p{Sm}--[+]]+']) {
    const re = new RegExp(rustRegexSource(src, 'gv').source, 'gv');
    assert.deepEqual('a({[|]})/!!&&b'.match(re), src === '\\p{Ps}+' ? ['({['] : src.includes('Sm') ? ['|'] : ['({[|]})/!!&&']);
  }
});

test("a pattern with a literal caret after a class's property (`[\\p{L}^]+`) has the Rust oracle's ids on both paths", async () => {
  const base = lenmlModelDir('qwen3');
  const json = cutVocabularyJson(base, 10_000);
  json.pre_tokenizer.pretokenizers[0].pattern = { Regex: '[\\p{L}^]+|\\p{N}+|\\s+|[^\\s\\p{L}\\p{N}]+' };
  json.normalizer = null;
  const dir = tempDir('eagle3-caret-');
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  writeFileSync(join(dir, 'tokenizer_config.json'), readFileSync(join(base, 'tokenizer_config.json')));
  await sameAsRust(dir, ['a^b ^^ c 12', 'x^^y, 3^4 \u{323B0}^\u{295}']);
});

test(`the generated tables are the installed package's (${RUST_UNICODE_SOURCE}) where this runtime's differ, and on a sample`, () => {
  const { Tokenizer, nfcNormalizer } = require('tokenizers');
  const gc = new Map<number, string>();
  for (const leaf of GC_LEAVES) for (const [a, b] of rustPropertyRanges(leaf)!) for (let cp = a; cp <= b; cp++) gc.set(cp, leaf);
  const probes: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (cp % 251 === 0 || !new RegExp(`^\\p{${gc.get(cp)}}$`, 'u').test(String.fromCodePoint(cp))) probes.push(cp);
  }
  assert.ok(probes.length > 4800, `${probes.length} probes`);
  const text = String.fromCodePoint(...probes);
  for (const leaf of GC_LEAVES) {
    if (leaf === 'Cs') continue;
    const json = {
      version: '1.0',
      added_tokens: [],
      normalizer: null,
      pre_tokenizer: { type: 'Split', pattern: { Regex: `\\p{${leaf}}` }, behavior: 'Removed', invert: false },
      post_processor: null,
      decoder: null,
      model: { type: 'WordLevel', vocab: { a: 0 }, unk_token: 'a' },
    };
    // `Removed`: the pieces left are the runs of non-members (offsets in code points).
    const member = new Array<boolean>(probes.length).fill(true);
    const pieces: [string, [number, number]][] = Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer().preTokenizeString(text);
    for (const [, [from, to]] of pieces) for (let k = from; k < to; k++) member[k] = false;
    probes.forEach((cp, k) =>
      assert.equal(gc.get(cp) === leaf, member[k], `U+${cp.toString(16)}: ${leaf} in the table ${gc.get(cp) === leaf}, in Rust ${member[k]}`),
    );
  }
  // Every composition the table says Rust does not make, it does not make.
  const nfc = nfcNormalizer();
  for (const h of RUST_NFC_UNCOMPOSED.split(',')) {
    const ch = String.fromCodePoint(parseInt(h, 16));
    const d = ch.normalize('NFD');
    assert.equal(nfc.normalizeString(d), normalizeLikeRust(d, 'NFC'), `U+${h}`);
  }
});

test("a pattern property outside Rust's tables (\\p{Han}) notes `unicode_tables_unverified` on texts with a character the tables disagree on, and only there; a run counts it", async () => {
  const base = lenmlModelDir('qwen3');
  const json = JSON.parse(readFileSync(join(base, 'tokenizer.json'), 'utf8'));
  json.pre_tokenizer.pretokenizers.unshift({ type: 'Split', pattern: { Regex: '\\p{Han}+' }, behavior: 'Isolated', invert: false });
  const dir = tempDir('eagle3-han-');
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  writeFileSync(join(dir, 'tokenizer_config.json'), readFileSync(join(base, 'tokenizer_config.json')));
  for (const tok of bothEncodePaths(dir)) {
    assert.equal(tok.encode('漢字 and text, 123 ٣ é').unicodeUnverified, undefined);
    assert.equal(tok.encode('CJK Ext J \u{323B0}\u{323B1}').unicodeUnverified, true);
    assert.equal(tok.encode('pha\u{295}r').unicodeUnverified, true);
  }
  // The shipped tokenizers' patterns are all in the tables: nothing is noted.
  assert.equal(loadTokenizer(lenmlModelDir('qwen3')).encode('\u{323B0}').unicodeUnverified, undefined);
  const rows = [
    {
      messages: [
        { role: 'user', content: 'Hi 漢字' },
        { role: 'assistant', content: 'Hello 字.' },
      ],
    },
    {
      messages: [
        { role: 'user', content: 'Ext J?' },
        { role: 'assistant', content: 'Yes: \u{323B0}.' },
      ],
    },
  ];
  const res = await prepare({ inputs: [writeJsonl(rows)], outDir: join(tempDir(), 'out'), tokenizerDir: dir, workers: 1 });
  assert.equal(res.files[0].rowsWritten, 2);
  assert.equal(res.files[0].notes.unicode_tables_unverified, 1);
  assert.ok(isCode('unicode_tables_unverified'));
  assert.ok(isDataChanging('unicode_tables_unverified'));
});
