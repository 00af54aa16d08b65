/**
 * A binary cache of parsed rank tables, keyed by the sha256 of `tiktoken.model`,
 * so that a second load skips parsing the base64 rank file.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseTiktokenModel, RankTable } from './rankTable';
import { readOwnCacheFile, tokenizerCacheDir } from '../cacheDir';

const CACHE_MAGIC = 0x45335454; // "E3TT"
const CACHE_VERSION = 1;

/**
 * Folder for converted tokenizer caches, the tokenizer cache folder (cacheDir.ts `tokenizerCacheDir`:
 * EAGLE3_TOKENIZER_CACHE, else `$XDG_CACHE_HOME/eagle3-prep`, else `os.tmpdir()/eagle3-prep-cache`); null when
 * EAGLE3_TOKENIZER_CACHE is `off`.
 */
export function tiktokenCacheDir(): string | null {
  return tokenizerCacheDir();
}

/** The cache file of the rank table whose `tiktoken.model` has sha256 hex `sha256`, in the cache folder `dir`. */
export function rankCachePath(dir: string, sha256: string): string {
  return join(dir, `tiktoken-${sha256.slice(0, 32)}.bin`);
}

/**
 * The rank table cached at `path`, when this user wrote it (cacheDir.ts `readOwnCacheFile`: in a shared temporary
 * folder another user's file could hold any ranks; a read marks the entry used for the folder's size bound). Null when
 * missing, foreign or damaged.
 */
function readCache(path: string): RankTable | null {
  try {
    const buf = readOwnCacheFile(path);
    if (!buf) return null;
    const head = new Uint32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + 16));
    if (head[0] !== CACHE_MAGIC || head[1] !== CACHE_VERSION) return null;
    const n = head[2];
    const tableLen = head[3];
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
    let o = 16;
    const offs = new Uint32Array(ab, o, n + 1);
    o += (n + 1) * 4;
    const table = new Int32Array(ab, o, tableLen);
    o += tableLen * 4;
    const bytes = new Uint8Array(ab, o, offs[n]);
    if (o + offs[n] !== buf.length) return null;
    return new RankTable(bytes, offs, table);
  } catch {
    return null;
  }
}

function writeCache(path: string, t: RankTable): void {
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    const head = new Uint32Array([CACHE_MAGIC, CACHE_VERSION, t.size, t.table.length]);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(
      tmp,
      Buffer.concat([
        Buffer.from(head.buffer),
        Buffer.from(t.offs.buffer, t.offs.byteOffset, t.offs.byteLength),
        Buffer.from(t.table.buffer, t.table.byteOffset, t.table.byteLength),
        Buffer.from(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength),
      ]),
    );
    renameSync(tmp, path);
  } catch {
    /* a cache that cannot be written only costs time */
  }
}

/**
 * Loads the rank table of a `tiktoken.model`, from the cache when a cache file
 * for its sha256 exists (see {@link tiktokenCacheDir}), else by parsing it and
 * writing the cache. Cache failures are silent (only time is lost).
 * @param useCache false = always parse (tests, benchmarks).
 * @returns the table and the file's sha256 (hex).
 * @throws TokenizerLoadError from {@link parseTiktokenModel}.
 */
export function loadRankTable(modelPath: string, useCache = true): { ranks: RankTable; sha256: string; fromCache: boolean } {
  const data = readFileSync(modelPath);
  const sha256 = createHash('sha256').update(data).digest('hex');
  const dir = useCache ? tiktokenCacheDir() : null;
  const cachePath = dir === null ? '' : rankCachePath(dir, sha256);
  if (dir !== null) {
    const cached = readCache(cachePath);
    if (cached) return { ranks: cached, sha256, fromCache: true };
  }
  const ranks = parseTiktokenModel(modelPath, data);
  if (dir !== null) writeCache(cachePath, ranks);
  return { ranks, sha256, fromCache: false };
}
