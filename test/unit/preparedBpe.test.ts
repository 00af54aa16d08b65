/**
 * The prepared tokenizer load (src/core/tokenizers/preparedBpe.ts) changes no id and no state: a tokenizer built
 * without the library's merge ranks, and one read back from the tokenizer cache, hold exactly the vocabulary `Map`
 * (entries and order), vocabulary array, unknown-token id and merge table that tokenizers.js's constructor and
 * `buildMergeTable` give, and encode as the Rust `tokenizers` oracle does. A damaged or foreign cache entry is a miss.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { buildMergeTable, type MergeTable } from '../../src/core/tokenizers/longWordBpe';
import { PREPARED_FOR_LIBRARY, preparedKey, preparedPath, readPrepared } from '../../src/core/tokenizers/preparedBpe';
import { TOKENIZER_CACHE_ENV, tokenizerCacheDir } from '../../src/core/tokenizers/cacheDir';
import { defaultTokenizerDir, loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { loadTokenizerWithBackend } from '../../src/core/tokenizers/backend';
import { cachedTokenizer } from '../../src/core/tokenizers/loadedTokenizers';
import { cutVocabularyJson, lenmlModelDir, oracleEncode, tempDir } from '../helpers';

const CACHE = tempDir('eagle3-tokcache-');
// Test files share a process (scripts/test.mjs groups): this file's cache folder only while its tests run.
const savedCacheEnv = process.env[TOKENIZER_CACHE_ENV];
before(() => {
  process.env[TOKENIZER_CACHE_ENV] = CACHE;
});
after(() => {
  if (savedCacheEnv === undefined) delete process.env[TOKENIZER_CACHE_ENV];
  else process.env[TOKENIZER_CACHE_ENV] = savedCacheEnv;
});

const TEXTS = [
  'Hello world! Hello  world!!  Hello   world',
  "I'm sure you're right; we'll see. x = 12345678901234567890",
  '漢字かなカナ한국어 mixed 中文English混合 e\u0301 cafe\u0301 😀👩‍💻',
  '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nok<|im_end|>',
  '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>',
  '<｜begin▁of▁sentence｜>sys<｜User｜>q<｜Assistant｜>a<｜end▁of▁sentence｜>',
  '    indented\n\tTabbed\r\n\r\nCRLF   \n\n ' + 'z'.repeat(600),
];

const FOLDERS: [string, string][] = [
  ['Qwen3 (embedded)', defaultTokenizerDir()],
  ['Llama-3.1', lenmlModelDir('llama3_1')],
  ['DeepSeek-V3', lenmlModelDir('deepseek_v3')],
];

type Model = { tokens_to_ids: Map<string, number>; vocab: string[]; unk_token_id: number | undefined };
const modelOf = (tok: unknown) => (tok as { model: Model }).model;

/** The state the library's own constructor and buildMergeTable give (the reference). */
function libraryState(dir: string): { model: Model; table: MergeTable } {
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  const tok = new Tokenizer(json, config) as unknown as { model: Model & { merges: [string, string][] } };
  return { model: tok.model, table: buildMergeTable(tok.model.merges, tok.model.tokens_to_ids)! };
}

function assertSameState(name: string, got: { model: Model; table: MergeTable }, want: { model: Model; table: MergeTable }): void {
  assert.deepEqual([...got.model.tokens_to_ids], [...want.model.tokens_to_ids], `${name}: vocabulary map`);
  assert.equal(got.model.vocab.length, want.model.vocab.length, `${name}: vocabulary array length`);
  assert.deepEqual(got.model.vocab, want.model.vocab, `${name}: vocabulary array`);
  assert.equal(got.model.unk_token_id, want.model.unk_token_id, `${name}: unknown token id`);
  assert.equal(got.table.mask, want.table.mask, `${name}: table size`);
  for (const k of ['left', 'right', 'rank', 'merged'] as const) assert.deepEqual(got.table[k], want.table[k], `${name}: table ${k}`);
  assert.deepEqual(got.table.strings, want.table.strings, `${name}: table strings`);
}

for (const [name, dir] of FOLDERS) {
  test(`prepared load of ${name}: the library's state, from the files and from the cache; ids equal the Rust oracle`, async () => {
    const tjPath = join(dir, 'tokenizer.json');
    const key = preparedKey(readFileSync(tjPath));
    const entry = preparedPath(CACHE, key);
    const cold = loadTokenizer(dir); // a miss: built without the merge ranks, the entry written
    assert.ok(existsSync(entry), `${name}: the cache entry is written`);
    const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
    const hit = readPrepared(CACHE, key, config, (j) => j);
    assert.ok(hit, `${name}: the entry reads back`);
    const want = libraryState(dir);
    assertSameState(name, { model: modelOf(hit.tok), table: hit.table }, want);
    const warm = loadTokenizerWithBackend(dir === defaultTokenizerDir() ? undefined : dir, 'auto').tok; // a hit, no parse
    for (const text of TEXTS) {
      const oracle = await oracleEncode(tjPath, text);
      assert.deepEqual(cold.encode(text).ids, oracle.ids, `${name} cold: ${JSON.stringify(text.slice(0, 40))}`);
      assert.deepEqual(warm.encode(text).ids, oracle.ids, `${name} from the cache: ${JSON.stringify(text.slice(0, 40))}`);
      assert.deepEqual(warm.encode(text).starts, cold.encode(text).starts);
    }
    assert.equal(warm.size, cold.size);
    assert.deepEqual(warm.specialTokens, cold.specialTokens);
    assert.deepEqual(warm.stopTokens, cold.stopTokens);
    assert.equal(warm.hash, cold.hash);
  });
}

/**
 * A model folder of `base`'s tokenizer with its vocabulary cut to `n` ids (helpers.ts `cutVocabularyJson`: the same
 * shape, a load of milliseconds rather than 1–2 CPU s; its cache entry is written and read as any other), its
 * `tokenizer.json` as `change` leaves the parsed object.
 */
function cutFolder(base: string, n: number, change: (json: any) => void = () => {}): string {
  const json = cutVocabularyJson(base, n);
  change(json);
  const dir = tempDir();
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json));
  copyFileSync(join(base, 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
  return dir;
}

test('a damaged, truncated or foreign cache entry is a miss: the tokenizer loads from its files and the entry is rewritten', async () => {
  // DeepSeek-V3's tokenizer on 8,000 ids of its vocabulary (each of the five loads below parses and converts it).
  const dir = cutFolder(lenmlModelDir('deepseek_v3'), 8000);
  const tjPath = join(dir, 'tokenizer.json');
  const key = preparedKey(readFileSync(tjPath));
  const entry = preparedPath(CACHE, key);
  loadTokenizer(dir);
  const good = readFileSync(entry);
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  const flipped = Buffer.from(good);
  flipped[flipped.length - 1000] ^= 0x01; // one bit of the stored strings
  for (const [what, bytes] of [
    ['a flipped bit', flipped],
    ['a truncated file', good.subarray(0, good.length - 4)],
    ['another format', Buffer.concat([good.subarray(0, 4), Buffer.from([99, 0, 0, 0]), good.subarray(8)])],
    ['not an entry', Buffer.from('{"hello": 1}')],
  ] as [string, Buffer][]) {
    writeFileSync(entry, bytes);
    assert.equal(
      readPrepared(CACHE, key, config, (j) => j),
      undefined,
      what,
    );
    const tok = loadTokenizer(dir);
    const oracle = await oracleEncode(tjPath, TEXTS[2]);
    assert.deepEqual(tok.encode(TEXTS[2]).ids, oracle.ids, what);
    assert.deepEqual(readFileSync(entry), good, `${what}: rewritten`);
  }
  // An entry is found by the content of tokenizer.json: another key does not read it.
  assert.equal(
    readPrepared(CACHE, preparedKey(Buffer.from('other')), config, (j) => j),
    undefined,
  );
  assert.equal(readdirSync(CACHE).filter((f) => f.endsWith('.tmp')).length, 0, 'no temporary file is left behind');
});

test('a copy of a tokenizer folder reads the same entry (keyed by content); EAGLE3_TOKENIZER_CACHE=off writes none', () => {
  const src = lenmlModelDir('deepseek_v3');
  const copy = tempDir();
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(src, f), join(copy, f));
  const before = readdirSync(CACHE).length;
  const fromCopy = loadTokenizer(copy);
  assert.equal(readdirSync(CACHE).length, before);
  // The same tokenizer written differently is other content: with the cache off, no entry is written for it.
  const other = tempDir();
  writeFileSync(join(other, 'tokenizer.json'), JSON.stringify(JSON.parse(readFileSync(join(src, 'tokenizer.json'), 'utf8'))));
  copyFileSync(join(src, 'tokenizer_config.json'), join(other, 'tokenizer_config.json'));
  process.env[TOKENIZER_CACHE_ENV] = 'off';
  try {
    assert.equal(tokenizerCacheDir(), null);
    // (the copy's tokenizer is the one read from the entry above: its entry exists, so loading it again writes nothing)
    assert.deepEqual(loadTokenizer(other).encode(TEXTS[1]).ids, fromCopy.encode(TEXTS[1]).ids);
    assert.equal(readdirSync(CACHE).length, before);
  } finally {
    process.env[TOKENIZER_CACHE_ENV] = CACHE;
  }
  loadTokenizer(other);
  assert.equal(readdirSync(CACHE).length, before + 1, 'with the cache on, its entry is written');
});

test('the cache folder: the variable, else XDG_CACHE_HOME, else the temp folder', () => {
  assert.equal(tokenizerCacheDir({ [TOKENIZER_CACHE_ENV]: '/x/y' }), '/x/y');
  assert.equal(tokenizerCacheDir({ [TOKENIZER_CACHE_ENV]: '0' }), null);
  assert.equal(tokenizerCacheDir({ XDG_CACHE_HOME: '/c' }), join('/c', 'eagle3-prep'));
  assert.ok(tokenizerCacheDir({})!.endsWith('eagle3-prep-cache'));
});

test('the prepared form is pinned to the installed tokenizers.js version (bump PREPARED_FORMAT with the library)', () => {
  const pkg = JSON.parse(readFileSync(join(require.resolve('@huggingface/tokenizers'), '..', '..', 'package.json'), 'utf8'));
  assert.equal(pkg.version, PREPARED_FOR_LIBRARY);
});

test('a tokenizer.json rewritten with other content of the same size and modification time is not read from its old entry', async () => {
  // Two vocabularies of the same byte size: the ids of "Hello" and "Ġworld" (both 4 digits) swapped in the second;
  // Qwen3's tokenizer on 10,000 ids of its vocabulary (both words kept).
  const src = cutFolder(lenmlModelDir('qwen3'), 10_000);
  const json = JSON.parse(readFileSync(join(src, 'tokenizer.json'), 'utf8'));
  const before = JSON.stringify(json);
  const v = json.model.vocab as Record<string, number>;
  [v.Hello, v['Ġworld']] = [v['Ġworld'], v.Hello];
  const after = JSON.stringify(json);
  assert.equal(Buffer.byteLength(after), Buffer.byteLength(before));
  assert.notEqual(after, before);
  const dir = tempDir();
  const ref = tempDir(); // the oracle reads the second content from its own path
  for (const d of [dir, ref]) copyFileSync(join(src, 'tokenizer_config.json'), join(d, 'tokenizer_config.json'));
  writeFileSync(join(dir, 'tokenizer.json'), before);
  writeFileSync(join(ref, 'tokenizer.json'), after);
  const stamp = new Date('2026-01-02T03:04:05Z'); // whole seconds: set back exactly below
  utimesSync(join(dir, 'tokenizer.json'), stamp, stamp);
  const text = 'Hello world';
  const old = cachedTokenizer(dir, 'js').tok.encode(text).ids;
  assert.deepEqual(loadTokenizer(dir).encode(text).ids, old);
  assert.deepEqual(old, (await oracleEncode(join(src, 'tokenizer.json'), text)).ids);
  // Rewritten in place (rsync --inplace, a restore), its modification time set back: only its change time moved.
  const st = statSync(join(dir, 'tokenizer.json'));
  writeFileSync(join(dir, 'tokenizer.json'), after);
  utimesSync(join(dir, 'tokenizer.json'), stamp, stamp);
  assert.equal(statSync(join(dir, 'tokenizer.json')).mtimeMs, st.mtimeMs);
  const want = (await oracleEncode(join(ref, 'tokenizer.json'), text)).ids;
  assert.notDeepEqual(want, old);
  assert.deepEqual(loadTokenizer(dir).encode(text).ids, want, 'ids of the new content');
  assert.deepEqual(cachedTokenizer(dir, 'js').tok.encode(text).ids, want, 'the in-memory tokenizer cache too');
});
