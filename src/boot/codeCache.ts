/**
 * A V8 code cache for the shipped Node bundles (issue 26 item 3, "small inputs start fast"; docs/scale.md "The
 * bundles' code cache"). `dist/cli.js` and `dist/worker.js` are small loaders (`src/boot/cli.ts`,
 * `src/boot/worker.ts`) that run the real bundles beside them (`cli-bundle.js`, `worker-bundle.js`) through
 * {@link runBundle}: the bundle is compiled with `vm.Script` and the `cachedData` V8 made of it in an earlier process
 * or thread, so a CLI run, each pool worker and the VS Code command's and service workers skip V8's parse and compile
 * of the bundle and of the functions the earlier run compiled lazily. Node 20 has no `module.enableCompileCache`
 * (Node 22.1).
 *
 * An entry lives in the tokenizer cache's folder (`cacheDir.ts`: written atomically, read only when this user's),
 * named by the bundle's path and the runtime (Node version, architecture, platform, `process.execArgv`,
 * `NODE_OPTIONS`: V8 rejects a cache made under other flags), and holds in its header the full key (the same plus the
 * sha256 of the source compiled, the bundle in its wrapper: V8 itself checks only the source's length), the sha256 of the body and how long the
 * producing thread had worked. A missing, damaged, foreign, stale or rejected entry is a miss: the bundle compiles as
 * without the cache, and a fresh entry is written at the thread's end (`exit`), and in a worker thread (which a pool
 * or VS Code may terminate, with no `exit`) also by a periodic check. An accepted entry made by a short run (a
 * `--version`) is rewritten once a thread has worked twice as long, up to {@link RICH_WORK_MS}, when the new cache is
 * larger: a cache made after a `prepare` holds the functions `prepare` compiled. Nothing here throws into the run: any failure of the cache
 * leaves the plain load (Node's own `Module.prototype._compile`, as `require` does).
 *
 * `EAGLE3_CODE_CACHE_TRACE=1` says on stderr how each bundle loaded and when an entry was written (for measuring).
 * Off: `EAGLE3_NO_CODE_CACHE=1`, or the tokenizer cache off (`EAGLE3_TOKENIZER_CACHE=off`); and with source maps on
 * (`--enable-source-maps`: Node 20 maps the stack traces of the code its own loader compiled only).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Script, constants as vmConstants } from 'node:vm';
import { isMainThread } from 'node:worker_threads';
import { readOwnCacheFile, tokenizerCacheDir, writeCacheFile } from '../core/tokenizers/cacheDir';

/** The environment variable that turns the code cache off (`1`); the tokenizer cache off turns it off too. */
export const NO_CODE_CACHE_ENV = 'EAGLE3_NO_CODE_CACHE';

/** The environment variable that makes the loader say on stderr how each bundle loaded and when it wrote its entry (`1`). */
export const CODE_CACHE_TRACE_ENV = 'EAGLE3_CODE_CACHE_TRACE';

/** The entry format; a change of the header or of what the key covers changes it. */
const FORMAT = 'eagle3-code-cache 1';

/**
 * `import()` inside the bundle resolves as in a module Node loaded (Node ≥ 20.12 / 21.7; an older Node, or an
 * Electron without it, leaves the option out: the bundles hold no `import()`).
 */
const DYNAMIC_IMPORT = (vmConstants as Partial<typeof vmConstants> | undefined)?.USE_MAIN_CONTEXT_DEFAULT_LOADER;

/** A thread that has worked this long (event-loop active ms) made a rich enough entry: no rewrite after it. */
export const RICH_WORK_MS = 2000;

/** A rewrite waits for at least this much more work than the entry's producer did (ms), beside twice its work. */
const GROW_MIN_MS = 250;

/** How often a worker thread checks whether to write its entry (ms; unref'd: it keeps no thread alive). */
const WORKER_CHECK_MS = 1000;

/** How the bundle was loaded, for tests and measurements. */
export interface BundleLoad {
  /** `cache`: compiled with an accepted entry; `miss`: compiled by `vm.Script` without one; `plain`: Node's own load. */
  readonly how: 'cache' | 'miss' | 'plain';
  /** The entry's file, or null when the cache is off. */
  readonly entry: string | null;
  /** Why the entry was not used (missing, damaged, other key, rejected by V8), or why the cache is off. */
  readonly reason?: string;
  /**
   * Writes the entry now when the rule says so (no entry accepted; or the accepted one was made by a run of less than half
   * this thread's work so far, and the new cache is larger);
   * returns whether it wrote. Called by the `exit` listener and the worker's check; never throws.
   */
  flush(): boolean;
}

/**
 * The runtime part of the key: what makes V8 reject a cache made elsewhere. The inspector's options are left out: they
 * change no code, and a host that starts with a fresh `--inspect-port=…` each time would otherwise leave an entry per start.
 */
function runtimeKey(env: NodeJS.ProcessEnv): string {
  const flags = process.execArgv.filter((a) => !/^--(inspect|debug)(-brk|-port|-publish-uid|-wait)?(=|$)/.test(a));
  return JSON.stringify([process.version, process.arch, process.platform, flags, env.NODE_OPTIONS ?? '']);
}

const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/**
 * The entry file of a bundle and the full key its header must carry.
 * @param bundlePath the bundle's absolute path
 * @param bytes the bundle's bytes, or its text
 * @param dir the cache folder
 */
export function codeCacheEntry(
  bundlePath: string,
  bytes: Uint8Array | string,
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): { file: string; key: string } {
  return entryOf(
    bundlePath,
    wrap(typeof bytes === 'string' ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')),
    dir,
    env,
  );
}

/** {@link codeCacheEntry} of the source V8 compiles, `wrapped` ({@link wrap} of the bundle's text). */
function entryOf(bundlePath: string, wrapped: string, dir: string, env: NodeJS.ProcessEnv): { file: string; key: string } {
  const runtime = runtimeKey(env);
  const slot = sha256(`${FORMAT}\0${bundlePath}\0${runtime}`).slice(0, 32);
  // The key covers the source V8 compiles (the bundle in its wrapper), not the bundle alone: V8 checks only the
  // source's length, and a change of the wrapper that keeps it (a space for a line break) must not take an old entry.
  return { file: join(dir, `code-${basename(bundlePath).replace(/[^\w.-]/g, '_')}-${slot}.v8`), key: sha256(`${FORMAT}\0${runtime}\0${sha256(wrapped)}`) };
}

/** An entry's bytes: one header line (format, key, sha256 of the body, the producer's work in ms), then the body. */
export function encodeEntry(key: string, body: Uint8Array, workMs: number): Buffer {
  return Buffer.concat([Buffer.from(`${FORMAT} ${key} ${sha256(body)} ${Math.round(workMs)}\n`), body]);
}

/** The body and producer's work of an entry whose header, key and checksum all hold; else why not. */
export function decodeEntry(data: Buffer, key: string): { body: Buffer; workMs: number } | { reason: string } {
  const nl = data.indexOf(10);
  if (nl < 0 || nl > 400) return { reason: 'no header' };
  const [fmt1, fmt2, k, sum, work, ...rest] = data.subarray(0, nl).toString('latin1').split(' ');
  if (`${fmt1} ${fmt2}` !== FORMAT || rest.length) return { reason: 'another format' };
  if (k !== key) return { reason: 'another bundle or runtime' };
  const body = data.subarray(nl + 1);
  if (sum !== sha256(body)) return { reason: 'damaged (checksum)' };
  const workMs = Number(work);
  return Number.isFinite(workMs) && workMs >= 0 ? { body, workMs } : { reason: 'damaged (work)' };
}

/** Event-loop active ms of this thread so far: how much it has run (per thread, unlike `process.cpuUsage`). */
function threadWorkMs(): number {
  try {
    return performance.eventLoopUtilization().active;
  } catch {
    return 0;
  }
}

/**
 * Node's module wrapper around the bundle (a shebang line, which `vm.Script` cannot parse, blanked), on a line of its
 * own: compiled with {@link WRAPPED_AT} the bundle's lines and columns are the file's in stack traces and error reports
 * (a minified bundle's first line holds thousands of columns of code; the wrapper before it on that line shifted them).
 */
function wrap(text: string): string {
  return `(function (exports, require, module, __filename, __dirname) {\n${withoutShebang(text)}\n});`;
}

/** `text` with a first-line shebang (`#!…`, which V8 cannot parse outside Node's own loader) made a comment of the same length. */
function withoutShebang(text: string): string {
  return text.startsWith('#!') ? `//${text.slice(2)}` : text;
}

/** `vm.Script`'s position options for {@link wrap}'s source: its first line (the wrapper) is line -1, the bundle's first line 0. */
const WRAPPED_AT = { lineOffset: -1 } as const;

type Compilable = NodeJS.Module & { _compile(content: string, filename: string): unknown };

/** Runs the compiled wrapper as the body of `mod`, with `require` resolving from the bundle's folder. */
function runWrapped(script: Script, mod: NodeJS.Module, bundlePath: string): void {
  const fn = script.runInThisContext() as (...args: unknown[]) => unknown;
  fn.call(mod.exports, mod.exports, createRequire(bundlePath), mod, bundlePath, dirname(bundlePath));
}

/**
 * The plain load, as `require` does it: Node compiles the bundle as the body of `mod` (and maps its stack traces when
 * source maps are on). Node's `require` there resolves from `mod`'s folder: a loader elsewhere than its bundle
 * (not dist/'s layout) gets `vm.Script` without a cache instead.
 */
function plainLoad(
  mod: NodeJS.Module,
  bundlePath: string,
  text: string,
  entry: string | null,
  reason: string,
  onCompiled?: LoadOptions['onCompiled'],
): BundleLoad {
  onCompiled?.('plain', reason);
  if (mod.filename && dirname(mod.filename) === dirname(bundlePath)) (mod as Compilable)._compile(withoutShebang(text), bundlePath);
  else runWrapped(new Script(wrap(text), { filename: bundlePath, ...WRAPPED_AT, importModuleDynamically: DYNAMIC_IMPORT }), mod, bundlePath);
  return { how: 'plain', entry, reason, flush: () => false };
}

/**
 * Runs the CommonJS bundle at `bundlePath` as the body of `mod` (the loader's own module: its `exports` become the
 * bundle's, so `require('dist/cli.js')` returns them and `require.main === module` in the bundle holds when the loader
 * is the main module), with `require` resolving from the bundle's folder and `__filename` / `__dirname` the bundle's.
 * Compiled from the code cache when an entry is accepted; see the file's comment for the entry and when it is
 * written. Errors of the bundle's own top level propagate as a `require`'s would; errors of the cache never do.
 * @param opts.env the environment read for the switches and the folder (default `process.env`)
 * @param opts.autoFlush write the entry at the thread's `exit` and, in a worker thread, from a periodic check (default
 *   true; tests call `flush()` themselves)
 * @param opts.sourceMaps whether stack traces are source-mapped (default `process.sourceMapsEnabled`; tsx turns it on)
 */
export function runBundle(bundlePath: string, mod: NodeJS.Module, opts: LoadOptions = {}): BundleLoad {
  const env = opts.env ?? process.env;
  if (!env[CODE_CACHE_TRACE_ENV] || env[CODE_CACHE_TRACE_ENV] === '0') return loadBundle(bundlePath, mod, env, opts);
  const say = (line: string) => process.stderr.write(`code cache: ${basename(bundlePath)} ${line}\n`);
  const t0 = performance.now();
  // Said before the bundle's top level runs (the CLI's starts the command): the time is the read, check and compile.
  const onCompiled = (how: string, reason?: string) =>
    say(
      `${how}${reason ? ` (${reason})` : ''}, ${how === 'plain' ? 'read' : 'compiled'} in ${(performance.now() - t0).toFixed(1)} ms${isMainThread ? '' : ' (worker thread)'}`,
    );
  return loadBundle(bundlePath, mod, env, { ...opts, onWrite: (bytes) => say(`wrote ${bytes} bytes`), onCompiled });
}

interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  autoFlush?: boolean;
  sourceMaps?: boolean;
  /** Called with the entry's size after each write (the trace). */
  onWrite?: (bytes: number) => void;
  /** Called once the bundle is compiled, before its top level runs (the trace). */
  onCompiled?: (how: BundleLoad['how'], reason?: string) => void;
}

function loadBundle(bundlePath: string, mod: NodeJS.Module, env: NodeJS.ProcessEnv, opts: LoadOptions): BundleLoad {
  const text = readFileSync(bundlePath, 'utf8');
  const dir = env[NO_CODE_CACHE_ENV] && env[NO_CODE_CACHE_ENV] !== '0' ? null : tokenizerCacheDir(env);
  if (!dir) return plainLoad(mod, bundlePath, text, null, 'off', opts.onCompiled);
  // Node 20 maps stack traces only of the code its own loader compiled: with source maps on, the plain load.
  if (opts.sourceMaps ?? (process as { sourceMapsEnabled?: boolean }).sourceMapsEnabled)
    return plainLoad(mod, bundlePath, text, null, 'source maps on', opts.onCompiled);
  let compiled: { script: Script; file: string; key: string; accepted: { workMs: number; size: number } | null; reason?: string };
  try {
    // One wrapped source: hashed for the key, then compiled.
    const wrapped = wrap(text);
    const { file, key } = entryOf(bundlePath, wrapped, dir, env);
    const data = readOwnCacheFile(file);
    const decoded = data ? decodeEntry(data, key) : { reason: 'missing' };
    const cachedData = 'body' in decoded ? decoded.body : undefined;
    const script = new Script(wrapped, { filename: bundlePath, ...WRAPPED_AT, cachedData, importModuleDynamically: DYNAMIC_IMPORT });
    const accepted = 'body' in decoded && script.cachedDataRejected === false ? { workMs: decoded.workMs, size: decoded.body.length } : null;
    const reason = 'reason' in decoded ? decoded.reason : accepted === null ? 'rejected by V8' : undefined;
    compiled = { script, file, key, accepted, ...(reason ? { reason } : {}) };
  } catch (e) {
    return plainLoad(mod, bundlePath, text, null, `the cache failed: ${e instanceof Error ? e.message : String(e)}`, opts.onCompiled);
  }
  const { script, file, key, accepted } = compiled;
  // The entry this thread now stands on (the accepted one, then its own writes): its producer's work (ms) and size.
  let last: { workMs: number; size: number } | null = accepted;
  const flush = (): boolean => {
    try {
      const work = threadWorkMs();
      if (last && (last.workMs >= RICH_WORK_MS || work < Math.max(2 * last.workMs, last.workMs + GROW_MIN_MS))) return false;
      const data = script.createCachedData();
      // A longer run need not have compiled more (a run with a pool leaves the rows to the workers; V8 flushes the
      // bytecode of functions unused for a while): the entry is replaced by a larger one only.
      const replace = !last || data.length > last.size;
      const wrote = replace && writeCacheFile(dir, file, encodeEntry(key, data, work));
      if (wrote) opts.onWrite?.(data.length);
      last = { workMs: work, size: wrote ? data.length : (last?.size ?? 0) };
      return wrote;
    } catch {
      return false;
    }
  };
  if (opts.autoFlush !== false) process.on('exit', flush);
  if (opts.autoFlush !== false && !isMainThread) {
    const timer = setInterval(() => {
      flush();
      if (last && last.workMs >= RICH_WORK_MS) clearInterval(timer);
    }, WORKER_CHECK_MS);
    timer.unref();
  }
  opts.onCompiled?.(accepted === null ? 'miss' : 'cache', compiled.reason);
  runWrapped(script, mod, bundlePath);
  return { how: accepted === null ? 'miss' : 'cache', entry: file, ...(compiled.reason ? { reason: compiled.reason } : {}), flush };
}
