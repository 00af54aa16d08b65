/** The cache folder's size bound (src/core/tokenizers/cacheDir.ts): least recently used entries go first. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pruneCacheDir, readOwnCacheFile, writeCacheFile } from '../../src/core/tokenizers/cacheDir';
import { tempDir } from '../helpers';

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
  entry(dir, 'a.e3tk', 400, 400);
  entry(dir, 'b.e3tk', 400, 300);
  entry(dir, 'c.e3tk', 400, 200);
  const newest = entry(dir, 'd.e3tk', 400, 500); // oldest time, but just written: kept
  pruneCacheDir(dir, 1000, newest);
  assert.deepEqual(readdirSync(dir).sort(), ['c.e3tk', 'd.e3tk']);
  pruneCacheDir(dir, 1000, newest); // already under the bound: nothing more goes
  assert.deepEqual(readdirSync(dir).sort(), ['c.e3tk', 'd.e3tk']);
});

test('a read marks its entry used: the entry read survives a prune that removes an older-written one', () => {
  const dir = tempDir('eagle3-cachedir-');
  const read = entry(dir, 'read.e3tk', 600, 900);
  entry(dir, 'unread.e3tk', 600, 100);
  assert.equal(readOwnCacheFile(read)?.length, 600);
  pruneCacheDir(dir, 1000);
  assert.deepEqual(readdirSync(dir), ['read.e3tk']);
});

test('an old temporary file of an interrupted write is removed; a fresh one (a write in progress) stays', () => {
  const dir = tempDir('eagle3-cachedir-');
  const stale = entry(dir, 'x.e3tk.1-0-abc.tmp', 10, 2 * 3600);
  const fresh = entry(dir, 'y.e3tk.2-0-def.tmp', 10, 5);
  pruneCacheDir(dir, 1 << 20);
  assert.equal(existsSync(stale), false);
  assert.equal(existsSync(fresh), true);
});

test('writeCacheFile prunes after writing and keeps what it wrote', () => {
  const dir = tempDir('eagle3-cachedir-');
  entry(dir, 'old.e3tk', 10, 100);
  const path = join(dir, 'new.e3tk');
  writeCacheFile(dir, path, 'x'.repeat(100)); // the default bound (512 MiB): both stay
  assert.deepEqual(readdirSync(dir).sort(), ['new.e3tk', 'old.e3tk']);
  const second = join(dir, 'second.e3tk');
  writeCacheFile(dir, second, 'y'.repeat(100), 150); // a bound of 150 bytes: only the entry just written fits
  assert.deepEqual(readdirSync(dir), ['second.e3tk']);
  assert.equal(readOwnCacheFile(second)?.toString(), 'y'.repeat(100));
});
