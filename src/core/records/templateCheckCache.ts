/**
 * An on-disk cache of the chat-template check's result (checkTemplate.ts), so that a `prepare` after the first with
 * the same tokenizer, options and code skips the probe renders and their encodes (~50 ms of CPU with DeepSeek-V3's
 * template, ~27 ms with Llama-3.1's; docs/scale.md "The template check, cached").
 *
 * The check is a pure function of the loaded tokenizer (its files, by `TargetTokenizer.hash`, and what the loader
 * made of them: templates, special tokens, stop tokens, folder, name, backend), its options (template kwargs, mask
 * policy, grouping, render budget, whether the caller's compiled templates are used), the `EAGLE3_NO_*` switches of
 * the process and the code. The key is the sha256 of all of them ({@link templateCheckKey}); the code's part is the
 * running bundle's identity ({@link codeIdentity}: a hash of `src/` and `package-lock.json` defined at build time,
 * scripts/bundle-options.mjs), and there is no cache without one (from source under `tsx`, or a watch build), so a
 * changed check is never answered by an older one's entry.
 *
 * Entries follow the tokenizer cache's conventions (tokenizers/preparedBpe.ts): in cacheDir.ts `tokenizerCacheDir`
 * (`EAGLE3_TOKENIZER_CACHE=off` turns both off), one file per key, written to a temporary name and renamed into place,
 * carrying the sha256 of its body, its format version and its full key, checked on read; an entry another user owns is
 * not read. Anything missing, foreign, damaged or of another version is a miss (the check runs and the entry is
 * rewritten); a cache that cannot be read or written is skipped, never an error. A result is only written when its
 * JSON reads back deep-equal to it, so a hit returns exactly what the check computed.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { checkTemplateAsync } from './checkTemplate';
import type { CheckTemplateOptions, TemplateCheck } from './checkTemplateTypes';
import type { TargetTokenizer } from '../tokenizers/types';
import { readOwnCacheFile, tokenizerCacheDir, writeCacheFile } from '../tokenizers/cacheDir';

/** The version of an entry's form and of the key's parts. Part of every key: bump it when either changes. */
export const TEMPLATE_CHECK_CACHE_FORMAT = 1;

const MAGIC = 'eagle3-template-check';

// Defined by esbuild in every Node bundle (scripts/bundle-options.mjs); absent when running from source.
declare const __EAGLE3_CODE_ID__: string | null | undefined;

/**
 * The running code's identity for cache keys: the hash of `src/` and `package-lock.json` the bundle was built from
 * (scripts/bundle-options.mjs `CODE_ID`), or null when there is none (running from source under `tsx`, a watch build):
 * then nothing is cached.
 */
export function codeIdentity(): string | null {
  return typeof __EAGLE3_CODE_ID__ === 'string' && __EAGLE3_CODE_ID__ !== '' ? __EAGLE3_CODE_ID__ : null;
}

/** Where and under which code the cache works; tests give their own. */
export interface TemplateCheckCacheOptions {
  /** The cache folder; default cacheDir.ts `tokenizerCacheDir()`; null: no cache. */
  dir?: string | null;
  /** The code's identity; default {@link codeIdentity}(); null: no cache. */
  code?: string | null;
  /** The process environment whose `EAGLE3_NO_*` switches are part of the key (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** What a call of {@link cachedCheckTemplate} did with the cache: `hit`, `miss` (checked, then written if it could be), or `off`. */
export type TemplateCheckCacheUse = 'hit' | 'miss' | 'off';

/**
 * The cache key of a check: sha256 hex of the format, the code's identity, everything of `tok` the check reads besides
 * its encoder (files hash, folder, name, backend, templates, special-token variables, special and stop tokens), the
 * options and the process's `EAGLE3_NO_*` switches. Null when the options are not plain JSON (they would not be told
 * apart by their text) or a template reads the clock (`strftime_now`): such a check is not cached.
 */
export function templateCheckKey(tok: TargetTokenizer, opts: CheckTemplateOptions, code: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const kwargs = opts.templateKwargs ?? {};
  const budget = opts.budget ?? null;
  if (!jsonExact(kwargs) || !jsonExact(budget)) return null;
  // A template that reads the clock (`strftime_now`, e.g. a "Today Date" line) renders otherwise on another day or hour,
  // and so may its probes' counts: such a check is not cached.
  if (tok.templates.some((t) => t.source.includes('strftime_now'))) return null;
  const switches = Object.keys(env)
    .filter((k) => k.startsWith('EAGLE3_NO_'))
    .sort()
    .map((k) => [k, env[k]]);
  const parts = [
    MAGIC,
    TEMPLATE_CHECK_CACHE_FORMAT,
    code,
    tok.hash,
    tok.dir,
    tok.name,
    tok.embeddedDefault,
    tok.backend ?? 'js',
    tok.templates,
    tok.specialTokenVars,
    tok.specialTokens,
    tok.stopTokens,
    tok.stopTokensSource,
    kwargs,
    opts.mask ?? 'assistant',
    opts.grouping ?? 'exact',
    budget,
    opts.templates !== undefined,
    switches,
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** The cache file of `key` in `dir`. */
export function templateCheckPath(dir: string, key: string): string {
  return join(dir, `check-${key.slice(0, 40)}.json`);
}

/**
 * {@link checkTemplateAsync} through the on-disk cache: the entry of the same tokenizer, options and code when there is
 * a sound one, else the check's own result (then written to the cache). The same result either way.
 * @throws TemplateRenderError as checkTemplate does (a check that raises is not cached)
 */
export async function cachedCheckTemplate(
  tok: TargetTokenizer,
  opts: CheckTemplateOptions = {},
  cache: TemplateCheckCacheOptions = {},
): Promise<{ check: TemplateCheck; cache: TemplateCheckCacheUse }> {
  const dir = cache.dir === undefined ? tokenizerCacheDir() : cache.dir;
  const code = cache.code === undefined ? codeIdentity() : cache.code;
  const key = dir && code ? templateCheckKey(tok, opts, code, cache.env) : null;
  if (!dir || !key) return { check: await checkTemplateAsync(tok, opts), cache: 'off' };
  const found = readEntry(dir, key);
  if (found) return { check: found, cache: 'hit' };
  const check = await checkTemplateAsync(tok, opts);
  writeEntry(dir, key, check);
  return { check, cache: 'miss' };
}

/** Whether `v`'s JSON text reads back deep-equal to it (no `undefined`, functions, class instances, non-finite numbers…). */
function jsonExact(v: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(JSON.stringify(v)), v);
  } catch {
    return false;
  }
}

/** The entry of `key` in `dir`, or undefined when it is missing, another user's, damaged or of another version (never throws). */
function readEntry(dir: string, key: string): TemplateCheck | undefined {
  const bytes = readOwnCacheFile(templateCheckPath(dir, key));
  if (!bytes) return undefined;
  try {
    const text = bytes.toString('utf8');
    const nl = text.indexOf('\n');
    if (nl < 0) return undefined;
    const head = JSON.parse(text.slice(0, nl)) as { magic?: unknown; format?: unknown; key?: unknown; sha256?: unknown };
    const body = text.slice(nl + 1);
    if (head.magic !== MAGIC || head.format !== TEMPLATE_CHECK_CACHE_FORMAT || head.key !== key) return undefined;
    if (head.sha256 !== createHash('sha256').update(body).digest('hex')) return undefined;
    const check = JSON.parse(body) as TemplateCheck;
    return check && typeof check === 'object' && !Array.isArray(check) ? check : undefined;
  } catch {
    return undefined;
  }
}

/** Writes `check` as the entry of `key` in `dir`, atomically; skipped when its JSON does not read back equal. Never throws. */
function writeEntry(dir: string, key: string, check: TemplateCheck): void {
  let data: string;
  try {
    const body = JSON.stringify(check);
    if (!isDeepStrictEqual(JSON.parse(body), check)) return;
    const head = JSON.stringify({ magic: MAGIC, format: TEMPLATE_CHECK_CACHE_FORMAT, key, sha256: createHash('sha256').update(body).digest('hex') });
    data = `${head}\n${body}`;
  } catch {
    return; // not JSON (a value JSON cannot hold): not cached
  }
  writeCacheFile(dir, templateCheckPath(dir, key), data);
}
