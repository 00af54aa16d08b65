/** The cache folder's size bound (src/core/tokenizers/cacheDir.ts): least recently used entries go first. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_ENTRY_NAME, pruneCacheDir, readOwnCacheFile, writeCacheFile } from '../../src/core/tokenizers/cacheDir';
import { preparedKey, preparedPath } from '../../src/core/tokenizers/preparedBpe';
import { templateCheckPath } from '../../src/core/records/templateCheckCache';
import { rankCachePath } from '../../src/core/tokenizers/tiktoken/rankCache';
import { codeCacheEntry } from '../../src/boot/codeCache';
import { createHash } from 'node:crypto';
import { tempDir } from '../helpers';

/** A prepared tokenizer's entry name (preparedBpe.ts `bpe-<40 hex>.e3tk`), its key `c` repeated. */
const E = (c: string): string => `bpe-${c.repeat(40)}.e3tk`;

/** Writes `name` with `size` bytes, last used `ageS` seconds ago. */
function entry(dir: string, name: string, size: number, ageS: number): string {
  const path = join(dir, name);
  writeFileSync(path, Buffer.alloc(size, 1));
  const t = new Date(Date.now() - ageS * 1000);
  utimesSync(path, t, t);
  return path;
}

test('pruneCacheDir removes the least recently used entries until the folder fits, never the one kept', () => {
  const dir = tempDir('eagle3-cachedir-');
  entry(dir, E('a'), 400, 400);
  entry(dir, E('b'), 400, 300);
  entry(dir, E('c'), 400, 200);
  const newest = entry(dir, E('d'), 400, 500); // oldest time, but just written: kept
  pruneCacheDir(dir, 1000, newest);
  assert.deepEqual(readdirSync(dir).sort(), [E('c'), E('d')]);
  pruneCacheDir(dir, 1000, newest); // already under the bound: nothing more goes
  assert.deepEqual(readdirSync(dir).sort(), [E('c'), E('d')]);
});

test('a read marks its entry used: the entry read survives a prune that removes an older-written one', () => {
  const dir = tempDir('eagle3-cachedir-');
  const read = entry(dir, E('1'), 600, 900);
  entry(dir, E('2'), 600, 100);
  assert.equal(readOwnCacheFile(read)?.length, 600);
  pruneCacheDir(dir, 1000);
  assert.deepEqual(readdirSync(dir), [E('1')]);
});

test('an old temporary file of an interrupted write is removed; a fresh one (a write in progress) stays', () => {
  const dir = tempDir('eagle3-cachedir-');
  const stale = entry(dir, `${E('6')}.1-0-abc.tmp`, 10, 2 * 3600);
  const fresh = entry(dir, `${E('7')}.2-0-def.tmp`, 10, 5);
  pruneCacheDir(dir, 1 << 20);
  assert.equal(existsSync(stale), false);
  assert.equal(existsSync(fresh), true);
});

test('writeCacheFile prunes after writing and keeps what it wrote', () => {
  const dir = tempDir('eagle3-cachedir-');
  entry(dir, E('3'), 10, 100);
  const path = join(dir, E('4'));
  writeCacheFile(dir, path, 'x'.repeat(100)); // the default bound (512 MiB): both stay
  assert.deepEqual(readdirSync(dir).sort(), [E('3'), E('4')]);
  const second = join(dir, E('5'));
  writeCacheFile(dir, second, 'y'.repeat(100), 150); // a bound of 150 bytes: only the entry just written fits
  assert.deepEqual(readdirSync(dir), [E('5')]);
  assert.equal(readOwnCacheFile(second)?.toString(), 'y'.repeat(100));
});

test('a folder the user chose keeps their own files: only the cache entries and their temporary files are counted or removed', () => {
  // EAGLE3_TOKENIZER_CACHE may name a folder that holds the user's own files (a project, /tmp, ~/.cache): before, a
  // prune over the bound removed the user's oldest files, and any old `.tmp` file of theirs.
  const dir = tempDir('eagle3-cachedir-');
  const own = ['notes.txt', 'data.jsonl', 'model.safetensors', 'draft.tmp', 'bpe-1234.e3tk', `${E('8')}.bak`, `${E('8')}.tmp`];
  for (const name of own) entry(dir, name, 5000, 10 * 3600); // older and larger than any entry, and than the bound
  entry(dir, E('a'), 400, 300);
  const kept = entry(dir, E('b'), 400, 200);
  const staleTmp = entry(dir, `${E('c')}.99.tmp`, 10, 2 * 3600); // rankCache.ts's temporary name
  pruneCacheDir(dir, 500, kept);
  assert.deepEqual(readdirSync(dir).sort(), [...own, E('b')].sort());
  assert.equal(existsSync(staleTmp), false);
});

test('every writer of the cache folder names its entries as CACHE_ENTRY_NAME says (else the prune would never bound them)', () => {
  const dir = tempDir('eagle3-cachedir-');
  const hex = createHash('sha256').update('x').digest('hex');
  const names = [
    preparedPath(dir, preparedKey(Buffer.from('{}'))),
    templateCheckPath(dir, hex),
    rankCachePath(dir, hex),
    codeCacheEntry(join(dir, 'cli-bundle.js'), Buffer.from('1'), dir).file,
    codeCacheEntry(join(dir, 'worker-bundle.js'), Buffer.from('1'), dir).file,
  ].map((p) => p.slice(dir.length + 1));
  for (const name of names) assert.match(name, CACHE_ENTRY_NAME);
  // and each kind is pruned when over the bound
  for (const name of names) entry(dir, name, 100, 100);
  pruneCacheDir(dir, 0);
  assert.deepEqual(readdirSync(dir), []);
});

test('a symbolic link named like an entry is neither counted (its target may be large) nor removed', () => {
  const dir = tempDir('eagle3-cachedir-');
  const elsewhere = tempDir('eagle3-cachedir-target-');
  const big = entry(elsewhere, 'big.bin', 5000, 10); // used more recently than the entries
  symlinkSync(big, join(dir, E('9')));
  entry(dir, E('a'), 400, 300);
  entry(dir, E('b'), 400, 200);
  pruneCacheDir(dir, 1000); // the two entries fit: the link's target does not count against them
  assert.deepEqual(readdirSync(dir).sort(), [E('9'), E('a'), E('b')].sort());
  assert.equal(existsSync(big), true);
});
