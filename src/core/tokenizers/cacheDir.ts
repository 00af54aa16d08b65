/** The folder where converted tokenizers are cached (preparedBpe.ts, tiktoken/rankCache.ts), and how it is chosen. */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
 * src/boot/codeCache.ts).
 * @returns whether the file was written
 */
export function writeCacheFile(dir: string, path: string, data: string | Uint8Array): boolean {
  const tmp = `${path}.${process.pid}-${threadId}-${Math.random().toString(36).slice(2)}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, data);
    renameSync(tmp, path);
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
    return readFileSync(path);
  } catch {
    return undefined;
  }
}
