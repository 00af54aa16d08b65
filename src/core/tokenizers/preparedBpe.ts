/**
 * The load of a byte-level BPE tokenizer (the word-cache shape, wordCache.ts `wordCacheFits`: Qwen2/3, DeepSeek-V3,
 * Llama-3) without the work that is thrown away, and from an on-disk cache of its prepared form.
 *
 * Where a load went (CPU ms in one fresh process, 2026-12-07, load average 1–2; docs/scale.md "Tokenizer load"):
 * Qwen3 1,503 = read 93 + `JSON.parse` 463 + tokenizers.js's constructor 732 (its vocabulary `Map` from an object of
 * 151k keys ~390, its merge ranks `Map` keyed by `JSON.stringify` of each pair ~420) + our merge table 352; the
 * others alike (Llama-3.1 1,834 with 280k merges). The merge ranks are dropped as soon as they are built (behind
 * the word cache every word goes to longWordBpe.ts's heap BPE), so they are no longer built.
 *
 * The prepared form, written once per `tokenizer.json` content and read by every later load (each pool worker,
 * each CLI process): the `tokenizer.json` without its vocabulary and merges (JSON), the vocabulary's keys in
 * their object order (JSON) and ids (binary), and the merge table (binary). A load from it rebuilds exactly the
 * state the library's constructor and `buildMergeTable` give (the same `Map` entries in the same order, the same
 * vocabulary array, the same table; test/unit/preparedBpe.test.ts compares them field by field and the ids with
 * the Rust `tokenizers` oracle).
 *
 * The cache: one file per `tokenizer.json` content (sha256 of its bytes and of {@link PREPARED_FORMAT}), in
 * cacheDir.ts `tokenizerCacheDir`; written to a temporary name and renamed into place (atomic: concurrent runs and pool
 * workers write the same bytes, a reader sees a whole file or none); each file carries the sha256 of its body,
 * checked on read; an entry another user owns is not read (the default folder may be in a shared temporary folder).
 * Anything unreadable, foreign or damaged is a miss (the tokenizer is loaded from its files and
 * the entry rewritten); a cache that cannot be written is skipped. Speed only: it never decides an id.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { buildMergeTable, type MergeTable } from './longWordBpe';
import { TokenizerLoadError } from './types';
import { readOwnCacheFile, tokenizerCacheDir, writeCacheFile } from './cacheDir';
import { fileStampOf, readFileStamped, stampOfRead } from '../read/fileStamp';
import { wordCacheFits } from './wordCache';
import { jsAddedTokenGap } from './addedTokenGaps';

/**
 * The version of the prepared form. Part of every entry's key: bump it when the form, the way it is rebuilt, or
 * the tokenizers.js version ({@link PREPARED_FOR_LIBRARY}) changes, and older entries are simply not found.
 */
export const PREPARED_FORMAT = 1;

/** The `@huggingface/tokenizers` version whose constructor the prepared form reproduces (a test pins it to the installed one). */
export const PREPARED_FOR_LIBRARY = '0.2.0';

const MAGIC = 0x4b543345; // "E3TK" little-endian

/** A byte-level BPE tokenizers.js `Tokenizer` ready for the word cache, and the merge table its words are merged with. */
export interface PreparedBpe {
  /** The parsed `tokenizer.json`, without `model.vocab` and `model.merges` when it came from the cache. */
  json: any;
  tok: Tokenizer;
  table: MergeTable;
}

/** The cache key of a `tokenizer.json`'s bytes: sha256 hex of the format, the library version and the bytes. */
export function preparedKey(bytes: Uint8Array): string {
  return createHash('sha256').update(`eagle3-prepared-bpe ${PREPARED_FORMAT} ${PREPARED_FOR_LIBRARY}\0`).update(bytes).digest('hex');
}

/** The cache file of `key` in `dir`. */
export function preparedPath(dir: string, key: string): string {
  return join(dir, `bpe-${key.slice(0, 40)}.e3tk`);
}

/**
 * Builds the tokenizers.js `Tokenizer` of a parsed byte-level BPE `tokenizer.json` as its constructor does, except
 * the merge ranks (`bpe_ranks`, `merges`), which are replaced by {@link buildMergeTable}'s table.
 * @param json the parsed `tokenizer.json` (read only)
 * @param tokConfig what the constructor is given (`json`, or a copy with another normalizer: tokenizer.ts)
 * @param config the parsed `tokenizer_config.json`
 * @returns undefined when the merges do not fit the table (more than 2^22: never for current vocabularies); then
 *   the caller loads the library's way
 */
export function buildPreparedBpe(json: any, tokConfig: any, config: any): PreparedBpe | undefined {
  const model = tokConfig.model;
  const tok = new Tokenizer({ ...tokConfig, model: { ...model, merges: [] } }, config);
  const merges: [string, string][] = Array.isArray(model.merges[0]) ? model.merges : model.merges.map((x: string) => x.split(' ', 2));
  const m = (tok as unknown as { model: BpeModelState }).model;
  const table = buildMergeTable(merges, m.tokens_to_ids);
  if (!table) return undefined;
  return { json, tok, table };
}

/** The state of tokenizers.js's BPE model that the prepared form restores. */
interface BpeModelState {
  tokens_to_ids: Map<string, number>;
  vocab: string[];
  unk_token_id: number | undefined;
  unk_token?: string;
  merges: unknown;
}

/**
 * Writes the prepared form of `p` (as {@link buildPreparedBpe} built it from `json`) to the cache, atomically.
 * Never throws: a cache that cannot be written is skipped.
 * @param json the full parsed `tokenizer.json` (its vocabulary is read in object order, as the constructor reads it)
 */
export function writePrepared(dir: string, key: string, json: any, p: PreparedBpe): void {
  let data: Buffer;
  try {
    const vocab = json.model.vocab as Record<string, number>;
    const keys = Object.keys(vocab);
    const ids = Int32Array.from(keys, (k) => vocab[k]);
    const t = p.table;
    const next = tableFirstExtra(t.strings, (p.tok as unknown as { model: BpeModelState }).model.tokens_to_ids);
    const extras = t.strings.slice(next);
    const { vocab: _v, merges: _m, ...modelRest } = json.model;
    // Strings as one UTF-16 blob with their lengths: read back by slicing, several times faster than a JSON array.
    const strings = [...keys, ...extras];
    const lens = Int32Array.from(strings, (x) => x.length);
    const blob = Buffer.from(strings.join(''), 'utf16le');
    const header = Buffer.from(JSON.stringify({ key, meta: { ...json, model: modelRest }, extras: extras.length, mask: t.mask }), 'utf8');
    const parts = [ids, lens, t.left, t.right, t.rank, t.merged].map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength));
    const head = Buffer.alloc(8);
    head.writeUInt32LE(header.length, 0);
    head.writeUInt32LE(ids.length, 4);
    const pad = Buffer.alloc((4 - (header.length % 4)) % 4);
    const body = Buffer.concat([head, header, pad, ...parts, blob]);
    const top = Buffer.alloc(8);
    top.writeUInt32LE(MAGIC, 0);
    top.writeUInt32LE(PREPARED_FORMAT, 4);
    data = Buffer.concat([top, createHash('sha256').update(body).digest(), body]);
  } catch {
    return; // a table this form cannot hold: not cached
  }
  writeCacheFile(dir, preparedPath(dir, key), data);
}

/** The first id of the merge table's symbols outside the vocabulary: one past the vocabulary's highest id (buildMergeTable). */
function tableFirstExtra(strings: string[], vocab: ReadonlyMap<string, number>): number {
  let next = 0;
  for (const id of vocab.values()) if (id >= next) next = id + 1;
  return Math.min(next, strings.length);
}

/**
 * Reads the prepared form of `key` from the cache and rebuilds the tokenizer from it: the constructor runs on the
 * `tokenizer.json` without vocabulary and merges (normalizer, pre-tokenizer, decoder, added tokens), then the
 * model's vocabulary `Map`, vocabulary array and unknown-token id are rebuilt as its constructor builds them
 * (the vocabulary in object order, the unknown token looked up before the added tokens, then each added token set
 * in both) and the merge table as {@link buildMergeTable} numbered it.
 * @param tokConfigOf the constructor's `tokenizer.json` from the full one (tokenizer.ts: the NFC normalizer taken out)
 * @returns undefined for a missing, foreign or damaged entry (never throws)
 */
export function readPrepared(dir: string, key: string, config: any, tokConfigOf: (json: any) => any): PreparedBpe | undefined {
  const buf = readOwnCacheFile(preparedPath(dir, key));
  if (!buf) return undefined;
  try {
    if (buf.length < 48 || buf.readUInt32LE(0) !== MAGIC || buf.readUInt32LE(4) !== PREPARED_FORMAT) return undefined;
    const body = buf.subarray(40);
    if (!createHash('sha256').update(body).digest().equals(buf.subarray(8, 40))) return undefined;
    const headerLen = body.readUInt32LE(0);
    const n = body.readUInt32LE(4);
    const h = JSON.parse(body.toString('utf8', 8, 8 + headerLen)) as { key: string; meta: any; extras: number; mask: number };
    if (h.key !== key) return undefined;
    let at = 8 + headerLen + ((4 - (headerLen % 4)) % 4);
    const ints = (count: number): Int32Array => {
      const a = new Int32Array(count);
      Buffer.from(a.buffer).set(body.subarray(at, at + 4 * count));
      at += 4 * count;
      return a;
    };
    const ids = ints(n);
    const lens = ints(n + h.extras);
    const cap = h.mask + 1;
    const left = ints(cap);
    const right = ints(cap);
    const rank = ints(cap);
    const merged = ints(cap);
    let units = 0;
    for (const l of lens) units += l;
    if (at + 2 * units !== body.length) return undefined;
    const all = body.toString('utf16le', at);
    const texts = new Array<string>(lens.length);
    for (let k = 0, u = 0; k < lens.length; u += lens[k++]) texts[k] = all.slice(u, u + lens[k]);

    const json = h.meta;
    const tokConfig = tokConfigOf(json);
    const tok = new Tokenizer({ ...tokConfig, model: { ...tokConfig.model, vocab: {}, merges: [] } }, config);
    const m = (tok as unknown as { model: BpeModelState }).model;
    // BPE's constructor: tokens_to_ids = new Map(Object.entries(vocab)); unk_token_id from it; vocab[id] = key.
    const map = new Map<string, number>();
    for (let k = 0; k < n; k++) map.set(texts[k], ids[k]);
    m.unk_token_id = map.get(json.model.unk_token as string);
    const array = new Array<string>(map.size);
    for (const [s, id] of map) array[id] = s;
    // Tokenizer's constructor: each added token into the model's map and array, in order.
    for (const t of (json.added_tokens ?? []) as { content: string; id: number }[]) {
      map.set(t.content, t.id);
      array[t.id] = t.content;
    }
    m.tokens_to_ids = map;
    m.vocab = array;
    // buildMergeTable: strings[id] for the vocabulary (last key of an id wins), then the extras numbered after it.
    const strings: string[] = [];
    let next = 0;
    for (const [s, id] of map) {
      strings[id] = s;
      if (id >= next) next = id + 1;
    }
    const extra = new Map<string, number>();
    for (let k = 0; k < h.extras; k++) {
      extra.set(texts[n + k], next + k);
      strings[next + k] = texts[n + k];
    }
    const table: MergeTable = { ids: { get: (s: string) => map.get(s) ?? extra.get(s) }, strings, mask: h.mask, left, right, rank, merged };
    return { json, tok, table };
  } catch {
    return undefined;
  }
}

/** The cache key of each `tokenizer.json` met in this thread, by path, with the file stamp (read/fileStamp.ts `fileStamp`) it was read at. */
const keys = new Map<string, { stamp: string; key: string }>();

/**
 * The cache key ({@link preparedKey}) of the `tokenizer.json` at `path`: read and hashed once per thread while its
 * stamp (read/fileStamp.ts `fileStamp`: change time, modification time, size, inode) is unchanged. The modification time and
 * size alone are not enough: a file rewritten in place with other content of the same size and its modification
 * time set back (rsync --inplace, a restore, `touch -r`) kept its old key, and its old entry's ids were served.
 * The stamp is the one the bytes were read at (read/fileStamp.ts `readFileStamped`), not the file's when the key is
 * asked for: a file replaced between the two (renamed over) kept the old bytes' key under its new stamp.
 * @param bytes its bytes, when the caller has read them (by `readFileStamped`; other bytes are hashed every time)
 * @throws the file system's error when it cannot be read
 */
export function preparedKeyOf(path: string, bytes?: Uint8Array): string {
  if (bytes === undefined) {
    const known = keys.get(path);
    if (known && known.stamp === fileStampOf(path)) return known.key;
    bytes = readFileStamped(path);
  }
  // The stamp the bytes were read at, not the file's now: it may have been replaced since they were read.
  const stamp = stampOfRead(bytes);
  if (stamp === undefined) return preparedKey(bytes); // bytes of no known stamp: hashed, not remembered
  const known = keys.get(path);
  if (known && known.stamp === stamp) return known.key;
  const key = preparedKey(bytes);
  keys.set(path, { stamp, key });
  return key;
}

/** Whether the prepared form may be used: the word cache and the heap BPE are on (EAGLE3_NO_WORD_CACHE / EAGLE3_NO_LONG_WORD_BPE unset). */
export function preparedBpeUsable(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.EAGLE3_NO_WORD_CACHE && !env.EAGLE3_NO_LONG_WORD_BPE;
}

/**
 * Whether the tokenizer cache holds the prepared form of the `tokenizer.json` at `path` (tokenizers/backend.ts: `auto`
 * then needs no parse). `bytes`: its bytes, when the caller has read them.
 */
export function hasPreparedBpe(path: string, bytes?: Uint8Array): boolean {
  const dir = preparedBpeUsable() ? tokenizerCacheDir() : null;
  if (!dir) return false;
  try {
    return existsSync(preparedPath(dir, preparedKeyOf(path, bytes)));
  } catch {
    return false;
  }
}

/**
 * The tokenizers.js `Tokenizer` of a `tokenizer.json`: from the tokenizer cache when it holds its prepared form;
 * else parsed, and built without the merge ranks when it has the word cache's shape (its prepared form then
 * written to the cache); else built by the library's constructor as it is.
 * @param given the file's bytes, and the parsed file, when the caller has them (it is read once: the cache key, the
 *   parse and the caller's files hash take the same bytes; with `json`, no cache read)
 * @param tokConfigOf what the constructor is given for a parsed `tokenizer.json` (tokenizer.ts: the NFC normalizer taken out)
 * @returns the parsed `tokenizer.json` (without vocabulary and merges when read from the cache), the `Tokenizer`,
 *   the merge table when it was built here (the library's merge ranks were not), and the file's bytes
 * @throws TokenizerLoadError naming the file when it cannot be read or is not JSON
 */
export function loadJsTokenizer(
  path: string,
  given: { bytes: Buffer; json?: any } | undefined,
  config: any,
  tokConfigOf: (json: any) => any,
): { json: any; tok: Tokenizer; table?: MergeTable; bytes: Buffer } {
  const dir = preparedBpeUsable() ? tokenizerCacheDir() : null;
  let json = given?.json;
  let key: string | undefined;
  let bytes: Buffer;
  try {
    bytes = given?.bytes ?? readFileStamped(path);
  } catch (e) {
    throw new TokenizerLoadError(`${path}: cannot read JSON: ${(e as Error).message}`);
  }
  if (json === undefined) {
    if (dir) {
      key = preparedKeyOf(path, bytes);
      const hit = readPrepared(dir, key, config, tokConfigOf);
      if (hit) return { ...hit, bytes };
    }
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch (e) {
      throw new TokenizerLoadError(`${path}: cannot read JSON: ${(e as Error).message}`);
    }
  } else if (dir) {
    try {
      key = preparedKeyOf(path, bytes);
    } catch {
      key = undefined;
    }
  }
  const tokConfig = tokConfigOf(json);
  // Not for a tokenizer whose ids would differ from the model's (tokenizer.ts refuses it: addedTokenGaps.ts).
  if (preparedBpeUsable() && wordCacheFits(tokConfig) && !jsAddedTokenGap(json)) {
    const p = buildPreparedBpe(json, tokConfig, config);
    if (p) {
      if (dir && key) writePrepared(dir, key, json, p);
      return { ...p, bytes };
    }
  }
  return { json, tok: new Tokenizer(tokConfig, config), bytes };
}
