/** The folder where converted tokenizers are cached (preparedBpe.ts, tiktoken/rankCache.ts), and how it is chosen. */
import { lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { threadId } from 'node:worker_threads';

/** The environment variable naming the tokenizer cache folder; `off` (or `0`) turns the cache off. */
export const TOKENIZER_CACHE_ENV = 'EAGLE3_TOKENIZER_CACHE';

/**
 * The tokenizer cache folder, shared with the tiktoken rank cache (tiktoken/rankCache.ts): {@link TOKENIZER_CACHE_ENV}
 * when set (`off` or `0`: no cache), else `$XDG_CACHE_HOME/eagle3-prep` when XDG_CACHE_HOME is set, else
 * `<os.tmpdir()>/eagle3-prep-cache`. The VS Code extension sets the variable to `<its global storage>/tokenizer-cache`
 * when it is unset, for the threads it starts.
 * @returns an absolute folder (created when an entry is written), or null when the cache is off
 */
export function tokenizerCacheDir(env: NodeJS.ProcessEnv = process.env): string | null {
  const v = env[TOKENIZER_CACHE_ENV];
  if (v !== undefined && v !== '') return v === 'off' || v === '0' ? null : resolve(v);
  return env.XDG_CACHE_HOME ? join(env.XDG_CACHE_HOME, 'eagle3-prep') : join(tmpdir(), 'eagle3-prep-cache');
}

/**
 * Writes `data` as the cache file `path` (inside `dir`), atomically: to a temporary name of this process and thread,
 * then renamed into place, `dir` created readable by its owner only. Never throws: a cache that cannot be written is
 * skipped and its temporary file removed. Used by every entry of this folder (preparedBpe.ts, records/templateCheckCache.ts,
 * src/boot/codeCache.ts). After a write the folder is pruned to `maxBytes` (default {@link CACHE_DIR_MAX_BYTES}; least
 * recently used first: {@link pruneCacheDir}). `path`'s file name must be one of {@link CACHE_ENTRY_NAME}'s (a new kind of
 * entry adds its pattern there and to test/unit/cacheDir.test.ts): the prune bounds those only.
 * @returns whether the file was written
 */
export function writeCacheFile(dir: string, path: string, data: string | Uint8Array, maxBytes = CACHE_DIR_MAX_BYTES): boolean {
  const tmp = `${path}.${process.pid}-${threadId}-${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, data);
    renameSync(tmp, path);
    pruneCacheDir(dir, maxBytes, path);
    return true;
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      /* nothing to clean */
    }
    return false;
  }
}

/**
 * The bytes of the cache file `path` when this user wrote it: in a shared temporary folder another user's file could
 * hold anything (ids, findings). Undefined when it is missing, unreadable or another user's; never throws.
 */
export function readOwnCacheFile(path: string): Buffer | undefined {
  try {
    if (process.getuid && statSync(path).uid !== process.getuid()) return undefined;
    const bytes = readFileSync(path);
    touch(path);
    return bytes;
  } catch {
    return undefined;
  }
}

/**
 * The size the cache folder is kept under, in bytes (512 MiB: a prepared tokenizer is 6–10 MB, a template check a few
 * kB). Every new entry would otherwise stay forever: a tokenizer folder edited, cut or replaced, a new build's
 * template checks (their key holds the build).
 */
export const CACHE_DIR_MAX_BYTES = 512 * 1024 * 1024;

/**
 * The names of this folder's own entries: preparedBpe.ts `bpe-<40 hex>.e3tk`, records/templateCheckCache.ts
 * `check-<40 hex>.json`, src/boot/codeCache.ts `code-<bundle file>-<32 hex>.v8`, tiktoken/rankCache.ts
 * `tiktoken-<32 hex>.bin`. The folder is user-settable ({@link TOKENIZER_CACHE_ENV}): {@link pruneCacheDir} counts and
 * removes only these (and their temporary files), never a file of the user's that shares the folder.
 */
export const CACHE_ENTRY_NAME = /^(?:bpe-[0-9a-f]{40}\.e3tk|check-[0-9a-f]{40}\.json|code-[\w.-]+-[0-9a-f]{32}\.v8|tiktoken-[0-9a-f]{32}\.bin)$/;

/** The temporary name of an entry being written: {@link writeCacheFile}'s `<entry>.<pid>-<thread>-<random>.tmp`, rankCache.ts's `<entry>.<pid>.tmp`. */
const TEMPORARY_SUFFIX = /\.\d+(?:-\d+-[0-9a-z]*)?\.tmp$/;

/** Whether `name` is one of this folder's entries or an entry's temporary file (`tmp`), else null: not ours. */
function cacheFileKind(name: string): 'entry' | 'tmp' | null {
  if (CACHE_ENTRY_NAME.test(name)) return 'entry';
  const m = TEMPORARY_SUFFIX.exec(name);
  return m && CACHE_ENTRY_NAME.test(name.slice(0, m.index)) ? 'tmp' : null;
}

/** A temporary file older than this (ms) is a leftover of a process that died between write and rename. */
const STALE_TEMPORARY_MS = 60 * 60 * 1000;

/** Marks a cache file used now (its modification time), for {@link pruneCacheDir}'s least-recently-used order; never throws. */
function touch(path: string): void {
  try {
    const now = new Date();
    utimesSync(path, now, now);
  } catch {
    /* a read-only entry is still read; it only ages */
  }
}

/**
 * Keeps the cache folder `dir` under `maxBytes`: when this user's files in it add up to more, the least recently
 * used (oldest modification time: a read touches its entry) are removed until they fit, never `keep` (the entry just
 * written). Temporary files of an interrupted write older than an hour are removed too. Only regular files this user
 * owns and named as the cache's entries ({@link CACHE_ENTRY_NAME}) or their temporary files are counted or removed:
 * in a shared temporary folder other users' entries are theirs, and a folder the user pointed
 * {@link TOKENIZER_CACHE_ENV} at may hold their own files. Never throws; a file
 * that cannot be removed is skipped. Cost: one listing and one `stat` per entry, paid after a cache write (a miss).
 */
export function pruneCacheDir(dir: string, maxBytes: number, keep?: string): void {
  try {
    const uid = process.getuid?.();
    const now = Date.now();
    const files: { path: string; size: number; used: number }[] = [];
    let total = 0;
    for (const name of readdirSync(dir)) {
      const kind = cacheFileKind(name);
      if (kind === null) continue; // not a cache file: the user's own, in a folder they chose
      const path = join(dir, name);
      try {
        const st = lstatSync(path); // a symbolic link is not an entry this cache wrote: neither counted (its target's size) nor removed
        if (!st.isFile() || (uid !== undefined && st.uid !== uid)) continue;
        if (kind === 'tmp') {
          if (now - st.mtimeMs > STALE_TEMPORARY_MS) rmSync(path, { force: true });
          continue;
        }
        total += st.size;
        if (path !== keep) files.push({ path, size: st.size, used: st.mtimeMs });
      } catch {
        /* gone meanwhile (another process pruned it) */
      }
    }
    files.sort((a, b) => a.used - b.used);
    for (const f of files) {
      if (total <= maxBytes) break;
      try {
        rmSync(f.path, { force: true });
        total -= f.size;
      } catch {
        /* in use or not ours to remove: skipped */
      }
    }
  } catch {
    /* no listing: nothing pruned */
  }
}
