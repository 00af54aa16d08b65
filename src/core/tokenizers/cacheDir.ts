/** The folder where converted tokenizers are cached (preparedBpe.ts, tiktoken/rankCache.ts), and how it is chosen. */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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
