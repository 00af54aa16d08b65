// A model folder's tokenizer.json is read once per load (issue 23): the tokenizer cache's key (sha256 of its bytes,
// preparedBpe.ts `preparedKey`), the parse and the files hash a run records (`tokenizer.hash`, modelFolder.ts
// `tokenizerFilesHashOf`) take the same bytes, with each backend and with the tokenizer cache cold and warm. The key
// and the hash are checked against sha256 computed here from the files on disk.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { mock, test } from 'node:test';
import { loadTokenizerWithBackend } from '../../src/core/tokenizers/backend';
import type { TokenizerBackendChoice } from '../../src/core/tokenizers/types';
import { PREPARED_FOR_LIBRARY, PREPARED_FORMAT, preparedKey, preparedKeyOf, preparedPath } from '../../src/core/tokenizers/preparedBpe';
import { loadRustTokenizer, readTokenizerBytes, rustBinding } from '../../src/core/tokenizers/rustTokenizer';
import { lenmlModelDir, tempDir } from '../helpers';

/** The files hash as report.json records it: sha256 over each present file's name and bytes, in this order; 16 hex. */
function filesHash(folder: string): string {
  const h = createHash('sha256');
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja', 'chat_template.json', 'generation_config.json']) {
    const p = join(folder, f);
    if (fs.existsSync(p)) h.update(f).update('\0').update(fs.readFileSync(p)).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

/** Loads `folder` with `backend`, counting the reads of its tokenizer.json. */
function loadCounting(folder: string, backend: TokenizerBackendChoice): { hash: string; backend: string; reads: number } {
  const tj = resolve(folder, 'tokenizer.json');
  const real = fs.readFileSync;
  let reads = 0;
  const spy = mock.method(fs, 'readFileSync', (...args: Parameters<typeof fs.readFileSync>) => {
    if (typeof args[0] === 'string' && resolve(args[0]) === tj) reads++;
    return real(...args);
  });
  try {
    const { tok } = loadTokenizerWithBackend(folder, backend);
    return { hash: tok.hash, backend: tok.backend ?? 'js', reads };
  } finally {
    spy.mock.restore();
  }
}

test('tokenizer.json is read once per load; the cache key and the files hash are the sha256 of its bytes', (t) => {
  // Test files share a process (scripts/test.mjs groups): put the variable back for the files after this one.
  const saved = process.env.EAGLE3_TOKENIZER_CACHE;
  t.after(() => {
    if (saved === undefined) delete process.env.EAGLE3_TOKENIZER_CACHE;
    else process.env.EAGLE3_TOKENIZER_CACHE = saved;
  });
  const cache = tempDir('eagle3-tokcache-');
  process.env.EAGLE3_TOKENIZER_CACHE = cache;
  // A folder of its own: no key of it is known to this process yet.
  const folder = tempDir();
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(join(lenmlModelDir('qwen3'), f), join(folder, f));
  const bytes = fs.readFileSync(join(folder, 'tokenizer.json'));
  const key = createHash('sha256').update(`eagle3-prepared-bpe ${PREPARED_FORMAT} ${PREPARED_FOR_LIBRARY}\0`).update(bytes).digest('hex');
  const want = filesHash(folder);

  assert.equal(fs.existsSync(preparedPath(cache, key)), false);
  const cold = loadCounting(folder, 'auto');
  assert.deepEqual(cold, { hash: want, backend: 'js', reads: 1 }, 'auto, the tokenizer cache cold');
  assert.ok(fs.existsSync(preparedPath(cache, key)), 'the prepared form is stored under the sha256 of the bytes');
  assert.deepEqual(loadCounting(folder, 'auto'), { hash: want, backend: 'js', reads: 1 }, 'auto, from the tokenizer cache');
  assert.deepEqual(loadCounting(folder, 'js'), { hash: want, backend: 'js', reads: 1 }, 'js');
  if ('binding' in rustBinding()) assert.deepEqual(loadCounting(folder, 'rust'), { hash: want, backend: 'rust', reads: 1 }, 'rust');
  else t.diagnostic('the Rust binding does not load here: its backend not checked');
});

test('a tokenizer.json replaced after its bytes were read: the key of those bytes is not remembered for the new file', () => {
  // backend.ts reads the bytes first and hands them to preparedKeyOf, which remembers its key by the file's stamp. A
  // file replaced (renamed over, as downloads do) between the read and the stamp must not get the old bytes' key: the
  // tokenizer cache would then serve the old tokenizer's prepared form for the new file (other ids, silently).
  const folder = tempDir();
  const tj = join(folder, 'tokenizer.json');
  fs.writeFileSync(tj, '{"model": "old"}');
  const old = readTokenizerBytes(tj);
  const fresh = Buffer.from('{"model": "new!"}');
  fs.writeFileSync(join(folder, 'next.json'), fresh);
  fs.renameSync(join(folder, 'next.json'), tj);
  assert.equal(preparedKeyOf(tj, old), preparedKey(old), 'the key of the bytes given');
  assert.equal(preparedKeyOf(tj), preparedKey(fresh), 'the file as it is now');
  assert.equal(preparedKeyOf(tj, readTokenizerBytes(tj)), preparedKey(fresh));
});

test('the Rust backend: its synchronous encode (a JavaScript tokenizer built later) is of the bytes it was loaded from', async (t) => {
  const b = rustBinding();
  if (!('binding' in b)) return t.skip('the Rust binding does not load here');
  const folder = tempDir();
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(join(lenmlModelDir('qwen3'), f), join(folder, f));
  const tok = loadRustTokenizer(b.binding, folder)!;
  const text = 'Hello world, tokenizers!';
  const [rust] = await tok.encodeBatch!([text]);
  assert.deepEqual(rust.ids, [9707, 1879, 11, 3950, 12230, 0], "the Rust binding's ids of Qwen3");
  // Another model's tokenizer.json put in its place before the first synchronous call (renamed over, as downloads do).
  fs.copyFileSync(join(lenmlModelDir('llama3_1'), 'tokenizer.json'), join(folder, 'next.json'));
  fs.renameSync(join(folder, 'next.json'), join(folder, 'tokenizer.json'));
  assert.deepEqual(tok.encode(text).ids, rust.ids, 'not the ids of the new file under the old files hash');
  assert.deepEqual(tok.decode(rust.ids), text);
});
