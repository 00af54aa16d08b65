/**
 * Our own encode of a text to token ids and each token's UTF-16 start, for the byte-level BPE tokenizers the word
 * cache fits (wordCache.ts `wordCacheFits`: Qwen2/3, DeepSeek-V3, Llama-3, gpt-oss), without tokenizers.js's
 * `encode_text` and without the offset aligner (docs/scale.md "Our own encode").
 *
 * Why: in `prepare` the tokenizer was 60–67 % of the row work and most of the garbage (the arrays `encode_text`
 * builds per section and pre-tokenizer step, its iterators, then the aligner's UTF-8 copy of every text). Here the
 * steps run in one pass over the text with no array per step:
 * - the added tokens are split off as tokenizers.js 0.2 `encode_text` does (`DictionarySplitter`: at each position,
 *   left to right, the longest added token starting there; first the tokens matched in the raw text, then, in each
 *   piece between them, those matched after the normalizer), with a RegExp of the tokens, longest first;
 * - the pre-tokenizer's `Split` regexes (tokenizers.js's own compiled patterns) are run with `exec` on each piece
 *   as tokenizers.js's `regex_split` cuts it (the matches and the text between them, in order), one level per
 *   `Split` of the `Sequence`;
 * - each piece (before the byte-level mapping) is looked up in this encoder's cache, which holds its ids and each
 *   token's UTF-16 offset in the piece (one number for a one-token piece; else an entry of a packed Int32Array):
 *   a piece seen before costs one Map lookup and a copy of its ids; the byte-level mapping and BPE run on a miss only
 *   (the word cache's miss: wordCache.ts `pieceTokensOf`);
 * - a token's start is its piece's start plus its cached offset: the offset aligner's work (a UTF-8 copy of the
 *   text, its byte → UTF-16 map, a walk over every token's surface) is gone where it would have aligned exactly.
 *
 * It answers only what it does exactly as the path it replaces (tokenizer.ts: `textIds.ts` then `OffsetAligner`):
 * the shape is decided once from the `tokenizer.json` the library was built from ({@link pieceEncoder} returns
 * undefined for any other shape), and a text it cannot do exactly — an added token's `lstrip` / `rstrip` that
 * strips something, NFC that changes the text, a piece whose tokens do not map back to ids or do not spell its
 * bytes — gets `undefined`, and the caller runs the old path on it. Same ids and starts: test/unit/pieceEncoder.test.ts
 * compares both paths and the Rust `tokenizers` oracle; scripts/compare-tokenizers.ts the shared real files.
 */
import { normalizeLikeRust } from './rustText';
import { everyWordTableOf, mergeSymbols, scratchSymbols, type MergeTable } from './longWordBpe';
import { byteLevelDecoder } from './modelFolder';
import { ownCopy, pieceTokensOf, wordCacheFits, type PieceTokens } from './wordCache';
import { passesTokensThrough } from './textIds';
import type { EncodedText } from './types';

/** Entries kept before the cache is cleared (as wordCache.ts: ~100k pieces, a few MB with their ids and offsets). */
const MAX_ENTRIES = 100_000;
/** Pieces longer than this (UTF-16 units) are not cached: a 5 MiB run of one letter is one piece (docs/scale.md "Long words"). */
const MAX_CACHED_PIECE = 4096;
/** Packed ints kept before the cache is cleared (4 bytes each). */
const MAX_POOL = 1 << 22;

/** The parts of a tokenizers.js 0.2 `Tokenizer` read here (not in its type declarations). */
interface TokenizerInside {
  added_tokens?: { content: string; id: number; lstrip: boolean; rstrip: boolean; normalized: boolean }[];
  added_tokens_map?: Map<string, { id?: number }>;
  model?: {
    tokens_to_ids?: Map<string, number>;
    vocab?: string[];
    end_of_word_suffix?: string | null;
    continuing_subword_suffix?: string | null;
    ignore_merges?: boolean;
  };
  normalizer?: ((text: string) => string) | null;
  pre_tokenizer?: { tokenizers?: { pattern?: unknown }[] } | null;
  remove_space?: boolean;
  do_lowercase_and_remove_accent?: boolean;
}

/** An added-token matcher of one level (raw text, or normalized text): its RegExp and whether any of its tokens strips. */
interface AddedLevel {
  re: RegExp;
  strips: boolean;
}

/** Statistics of an encoder (for the benchmark and the tests). */
export interface PieceEncoderStats {
  texts: number;
  /** Texts handed back to the old path. */
  fallbacks: number;
  hits: number;
  misses: number;
}

/** Encodes a well-formed text (lone surrogates already replaced: rustText.ts `toWellFormed`); undefined: use the old path. */
export type PieceEncode = ((text: string) => EncodedText | undefined) & { stats: PieceEncoderStats };

/**
 * The encode, as an object property so that the benchmark (scripts/bench-child.ts) can time the tokenizer's share
 * of a run by wrapping `run`.
 */
export const pieceEncode = { run: (encoder: PieceEncode, text: string): EncodedText | undefined => encoder(text) };

/**
 * Builds the encoder of a tokenizers.js `Tokenizer` with the word cache installed, or undefined when the
 * `tokenizer.json` it was built from has a shape this encoder does not reproduce exactly. Handled: the word cache's
 * shape (byte-level BPE, wordCache.ts `wordCacheFits`) whose pre-tokenizer `Sequence` is `Split`s with
 * `behavior: "Isolated"` and no `invert`, then `ByteLevel` without `add_prefix_space`; no normalizer or an empty
 * `Sequence` of them (the NFC this project applies itself is `ownNfc`); a post-processor that passes the tokens
 * through (textIds.ts `passesTokensThrough`); no BPE word suffixes; no `remove_space` / lowercasing config.
 * @param tok the `Tokenizer` built from `tokConfig`, with the word cache installed (wordCache.ts `installWordCache`)
 * @param tokConfig the `tokenizer.json` the library was given (tokenizer.ts: the NFC normalizer taken out when `ownNfc`)
 * @param ownNfc whether this project applies NFC to the text (rustText.ts `appliesOwnNfc`): texts NFC changes go to the old path
 * @param normalizedAround the old path's normalization of a text (OffsetAligner `normalized`), checked with `ownNfc`
 */
export function pieceEncoder(tok: object, tokConfig: any, ownNfc: boolean, normalizedAround: (text: string) => string): PieceEncode | undefined {
  const t = tok as TokenizerInside;
  const pieceTokens = pieceTokensOf(tok);
  if (!pieceTokens || !wordCacheFits(tokConfig) || !passesTokensThrough(tokConfig.post_processor ?? null)) return undefined;
  if (t.remove_space || t.do_lowercase_and_remove_accent) return undefined;
  const model = t.model;
  if (!model?.tokens_to_ids || !Array.isArray(model.vocab) || model.end_of_word_suffix || model.continuing_subword_suffix) return undefined;
  const norm = tokConfig.normalizer ?? null;
  const emptyNormalizer = norm === null || (norm.type === 'Sequence' && Array.isArray(norm.normalizers) && norm.normalizers.length === 0);
  if (!emptyNormalizer) return undefined;
  const splits = splitPatterns(tokConfig.pre_tokenizer, t.pre_tokenizer);
  if (!splits) return undefined;
  const levels = addedLevels(t);
  if (!levels) return undefined;
  return makeEncoder(t, splits, levels, pieceTokens, ownNfc, normalizedAround);
}

/**
 * The `Split` patterns of a pre-tokenizer `Sequence` (tokenizers.js's compiled RegExps, copied so that their
 * `lastIndex` is ours), when every step but the final `ByteLevel` is a `Split` this encoder cuts as tokenizers.js's
 * `regex_split` does (`behavior: "Isolated"`, no `invert`) and that `ByteLevel` adds no prefix space; else undefined.
 */
function splitPatterns(json: any, lib: TokenizerInside['pre_tokenizer']): RegExp[] | undefined {
  const steps = json?.pretokenizers;
  const built = lib?.tokenizers;
  // The word cache took the final ByteLevel step out of the library's sequence.
  if (!Array.isArray(steps) || !Array.isArray(built) || built.length !== steps.length - 1) return undefined;
  const last = steps[steps.length - 1];
  if (last?.type !== 'ByteLevel' || last.add_prefix_space || last.use_regex !== false) return undefined;
  const out: RegExp[] = [];
  for (let k = 0; k < built.length; k++) {
    const s = steps[k];
    const re = built[k]?.pattern;
    if (s?.type !== 'Split' || s.behavior !== 'Isolated' || s.invert || !(re instanceof RegExp) || !re.global) return undefined;
    out.push(new RegExp(re.source, re.flags));
  }
  return out;
}

/**
 * The added tokens as tokenizers.js 0.2's constructor sorts them: matched in the raw text (`normalized` false, or no
 * normalizer), else after the normalizer (which is empty here, so a token's normalized content is its content);
 * each level as one RegExp of the contents, longest first (the `DictionarySplitter`'s longest match at the leftmost
 * position), or null when the level has none. Undefined when an added token has no integer id.
 */
function addedLevels(t: TokenizerInside): { raw: AddedLevel | null; normalized: AddedLevel | null; ids: Map<string, number> } | undefined {
  const added = t.added_tokens;
  if (!Array.isArray(added)) return undefined;
  const raw: typeof added = [];
  const normalized: typeof added = [];
  const ids = new Map<string, number>();
  for (const a of added) {
    if (typeof a.content !== 'string' || !Number.isInteger(a.id)) return undefined;
    if (a.content.length === 0) continue;
    (a.normalized && t.normalizer ? normalized : raw).push(a);
  }
  // The id of a content as tokenizers.js's `encode` maps it: the added-token map (the last token of that content).
  for (const [content, a] of t.added_tokens_map ?? []) {
    if (!Number.isInteger(a.id)) return undefined;
    ids.set(content, a.id!);
  }
  const level = (list: typeof added): AddedLevel | null => {
    if (list.length === 0) return null;
    const contents = [...new Set(list.map((a) => a.content))].sort((a, b) => b.length - a.length);
    const re = new RegExp(contents.map((c) => c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
    return { re, strips: list.some((a) => a.lstrip || a.rstrip) };
  };
  return { raw: level(raw), normalized: level(normalized), ids };
}

/** Whether `text` has a character NFC may change (U+0300 is the first code point whose NFC quick check is not Yes). */
const MAY_CHANGE_UNDER_NFC = /[\u0300-\uffff]/;

function makeEncoder(
  t: TokenizerInside,
  splits: RegExp[],
  levels: { raw: AddedLevel | null; normalized: AddedLevel | null; ids: Map<string, number> },
  pieceTokens: PieceTokens,
  ownNfc: boolean,
  normalizedAround: (text: string) => string,
): PieceEncode {
  const addedMap = t.added_tokens_map!;
  const toIds = t.model!.tokens_to_ids!;
  const vocab = t.model!.vocab!;
  const addedIds = levels.ids;
  const stats: PieceEncoderStats = { texts: 0, fallbacks: 0, hits: 0, misses: 0 };
  // A piece's entry: its one id (a one-token piece, offset 0), or −(at + 1) for `pool[at]` = n, then n ids, then the
  // UTF-16 offsets of tokens 1 … n−1 in the piece.
  const cache = new Map<string, number>();
  let pool = new Int32Array(1 << 14);
  let used = 0;
  // The encode in progress: its output and whether a piece could not be done exactly.
  let ids: number[] = [];
  let starts: number[] = [];
  let failed = false;

  /** Appends the ids and starts of a piece the cache has not seen, and caches them; `failed` when it cannot be done exactly. */
  const miss = (piece: string, base: number): void => {
    stats.misses++;
    if (bytes) return bytes.miss(piece, base);
    const r = pieceTokens(piece);
    if (!r || r.tokens.length === 0) {
      failed = true;
      return;
    }
    const { mapped, tokens } = r;
    const n = tokens.length;
    // Each token must be the vocabulary's own string of its id (as tokenizers.js's encode maps it: added tokens first)
    // and the tokens must spell the piece's bytes (each byte-level character is one byte).
    let spelled = 0;
    for (let k = 0; k < n; k++) {
      const s = tokens[k];
      const id = addedMap.get(s)?.id ?? toIds.get(s) ?? -1;
      if (id < 0 || vocab[id] !== s || !mapped.startsWith(s, spelled)) {
        failed = true;
        return;
      }
      spelled += s.length;
    }
    if (spelled !== mapped.length) {
      failed = true;
      return;
    }
    if (piece.length > MAX_CACHED_PIECE || 2 * n > MAX_POOL) return uncached(piece, base, tokens, mapped);
    if (n === 1) {
      // One token (most pieces): the id is the entry, offset 0.
      const id = addedMap.get(tokens[0])?.id ?? toIds.get(tokens[0])!;
      if (cache.size >= MAX_ENTRIES) clear();
      cache.set(ownCopy(piece), id);
      ids.push(id);
      starts.push(base);
      return;
    }
    if (cache.size >= MAX_ENTRIES || used + 2 * n > MAX_POOL) clear();
    if (used + 2 * n > pool.length) {
      const grown = new Int32Array(Math.min(MAX_POOL, Math.max(pool.length * 2, used + 2 * n)));
      grown.set(pool.subarray(0, used));
      pool = grown;
    }
    const at = used;
    pool[at] = n;
    for (let k = 0; k < n; k++) pool[at + 1 + k] = addedMap.get(tokens[k])?.id ?? toIds.get(tokens[k])!;
    // Token k's offset in the piece: the UTF-16 index of the character holding its first byte.
    writeOffsets(piece, tokens, mapped.length === piece.length, pool, at + 1 + n);
    used += 2 * n;
    cache.set(ownCopy(piece), -(at + 1));
    emitEntry(at, base);
  };

  /** The miss on the merge table itself, when the model merges every word with it (longWordBpe.ts `everyWordTableOf`). */
  const bytes = tableMiss(t, (piece, base, n, idAt, offsetAt) => {
    if (n === 0) {
      failed = true;
      return;
    }
    if (n === 1) {
      const id = idAt(0);
      if (piece.length <= MAX_CACHED_PIECE) {
        if (cache.size >= MAX_ENTRIES) clear();
        cache.set(ownCopy(piece), id);
      }
      ids.push(id);
      starts.push(base);
      return;
    }
    if (piece.length > MAX_CACHED_PIECE) {
      for (let k = 0; k < n; k++) {
        ids.push(idAt(k));
        starts.push(base + offsetAt(k));
      }
      return;
    }
    if (cache.size >= MAX_ENTRIES || used + 2 * n > MAX_POOL) clear();
    if (used + 2 * n > pool.length) {
      const grown = new Int32Array(Math.min(MAX_POOL, Math.max(pool.length * 2, used + 2 * n)));
      grown.set(pool.subarray(0, used));
      pool = grown;
    }
    const at = used;
    pool[at] = n;
    for (let k = 0; k < n; k++) pool[at + 1 + k] = idAt(k);
    for (let k = 1; k < n; k++) pool[at + n + k] = offsetAt(k);
    used += 2 * n;
    cache.set(ownCopy(piece), -(at + 1));
    emitEntry(at, base);
  });

  /** A piece too long for the pool: its ids and offsets written out directly. */
  const uncached = (piece: string, base: number, tokens: string[], mapped: string): void => {
    const n = tokens.length;
    const tmp = new Int32Array(2 * n);
    tmp[0] = n;
    for (let k = 0; k < n; k++) tmp[1 + k] = addedMap.get(tokens[k])?.id ?? toIds.get(tokens[k])!;
    writeOffsets(piece, tokens, mapped.length === piece.length, tmp, 1 + n);
    ids.push(tmp[1]);
    starts.push(base);
    for (let k = 1; k < n; k++) {
      ids.push(tmp[1 + k]);
      starts.push(base + tmp[n + k]);
    }
  };

  const clear = (): void => {
    cache.clear();
    used = 0;
  };

  /** Appends the ids and starts of the pool entry at `at` for a piece starting at `base`. */
  const emitEntry = (at: number, base: number): void => {
    const n = pool[at];
    ids.push(pool[at + 1]);
    starts.push(base);
    for (let k = 1; k < n; k++) {
      ids.push(pool[at + 1 + k]);
      starts.push(base + pool[at + n + k]);
    }
  };

  /** One pre-tokenized piece (the `Split`s done) starting at UTF-16 index `base` of the text. */
  const piece = (p: string, base: number): void => {
    const v = cache.get(p);
    if (v === undefined) return miss(p, base);
    stats.hits++;
    if (v >= 0) {
      ids.push(v);
      starts.push(base);
    } else emitEntry(-v - 1, base);
  };

  /** The `Split` of level `k` on `s` (starting at `base`), as tokenizers.js's `regex_split`: matches and the text between them. */
  const split = (k: number, s: string, base: number): void => {
    if (k === splits.length) return piece(s, base);
    const re = splits[k];
    re.lastIndex = 0;
    let prev = 0;
    for (let m = re.exec(s); m !== null && !failed; m = re.exec(s)) {
      const at = m.index;
      const len = m[0].length;
      if (prev < at) split(k + 1, s.slice(prev, at), base + prev);
      if (len > 0) split(k + 1, m[0], base + at);
      else re.lastIndex = advance(s, re.lastIndex, re.unicode);
      prev = at + len;
      // split() of the next level may have used another RegExp only: this one's lastIndex is still ours.
    }
    if (prev < s.length && !failed) split(k + 1, prev === 0 ? s : s.slice(prev), base + prev);
  };

  /**
   * The pieces of `s` (from `base`) between the added tokens of `level` (each token's id appended), each given to
   * `next`; the added tokens' `lstrip` / `rstrip` must strip nothing (else the old path).
   */
  const addedSplit = (level: AddedLevel | null, s: string, base: number, next: (s: string, base: number) => void): void => {
    if (level === null) return next(s, base);
    const re = level.re;
    let prev = 0;
    re.lastIndex = 0;
    for (let m = re.exec(s); m !== null; m = re.exec(s)) {
      const at = m.index;
      const content = m[0];
      if (level.strips && strips(addedMap.get(content) as { lstrip?: boolean; rstrip?: boolean }, s, at, content.length)) {
        failed = true;
        return;
      }
      const after = re.lastIndex;
      if (prev < at) next(s.slice(prev, at), base + prev);
      if (failed) return;
      ids.push(addedIds.get(content)!);
      starts.push(base + at);
      prev = at + content.length;
      re.lastIndex = after;
    }
    if (prev < s.length) next(prev === 0 ? s : s.slice(prev), base + prev);
  };

  const afterRaw = (s: string, base: number): void => addedSplit(levels.normalized, s, base, pretokenized);
  const pretokenized = (s: string, base: number): void => split(0, s, base);

  const encode = ((text: string): EncodedText | undefined => {
    stats.texts++;
    if (ownNfc && MAY_CHANGE_UNDER_NFC.test(text) && (normalizedAround(text) !== text || normalizeLikeRust(text, 'NFC') !== text)) {
      stats.fallbacks++;
      return undefined;
    }
    ids = [];
    starts = [];
    failed = false;
    addedSplit(levels.raw, text, 0, afterRaw);
    const out = { ids, starts, exactOffsets: true };
    ids = [];
    starts = [];
    if (failed) {
      stats.fallbacks++;
      return undefined;
    }
    return out;
  }) as PieceEncode;
  encode.stats = stats;
  return encode;
}

/**
 * A miss computed on the model's merge table directly (the byte-level mapping and the BPE of longWordBpe.ts
 * `mergeSymbols`, as the model's `bpe` runs them, over ids: no token string made), when the model merges every word
 * with that table; undefined otherwise. It calls `done(piece, base, n, idAt, offsetAt)` with the piece's n tokens
 * (`idAt(k)`: token k's id; `offsetAt(k)`: the UTF-16 index in the piece of the character holding its first byte),
 * valid during the call; n = 0 when the tokens cannot be given exactly as the old path gives them (a byte or a merged
 * symbol that is not a vocabulary token of its own: the old path then maps it otherwise).
 */
function tableMiss(
  t: TokenizerInside,
  done: (piece: string, base: number, n: number, idAt: (k: number) => number, offsetAt: (k: number) => number) => void,
): { miss: (piece: string, base: number) => void } | undefined {
  const model = t.model!;
  const table: MergeTable | undefined = everyWordTableOf(model);
  if (!table) return undefined;
  const vocab = model.vocab!;
  const toIds = model.tokens_to_ids!;
  const addedMap = t.added_tokens_map!;
  const ignoreMerges = model.ignore_merges === true;
  // The byte-level alphabet: byte → its character, and → its symbol id in the table.
  const byteChar: string[] = [];
  for (const [ch, b] of byteLevelDecoder()) byteChar[b] = ch;
  const byteSym = new Int32Array(256);
  for (let b = 0; b < 256; b++) byteSym[b] = table.ids.get(byteChar[b]) ?? -1;
  const { strings } = table;
  /** The id tokenizers.js's encode gives a token string: the added-token map first, then the model's (-1: neither, or not its own vocabulary entry). */
  const idOf = (s: string): number => {
    const id = addedMap.get(s)?.id ?? toIds.get(s) ?? -1;
    return id >= 0 && vocab[id] === s ? id : -1;
  };
  let bytes = new Uint8Array(256);
  let unitOf = new Int32Array(256);
  const tokenIds: number[] = [];
  const tokenBytes: number[] = [];
  const idAt = (k: number) => tokenIds[k];
  const offsetAt = (k: number) => unitOf[tokenBytes[k]];
  const miss = (piece: string, base: number): void => {
    // The piece's UTF-8 bytes, each with the UTF-16 index of its character.
    const cap = piece.length * 3;
    if (bytes.length < cap) {
      let c = bytes.length;
      while (c < cap) c *= 2;
      bytes = new Uint8Array(c);
      unitOf = new Int32Array(c);
    }
    let nb = 0;
    for (let u = 0; u < piece.length; ) {
      const cp = piece.codePointAt(u)!;
      if (cp < 0x80) {
        unitOf[nb] = u;
        bytes[nb++] = cp;
      } else if (cp < 0x800) {
        unitOf[nb] = unitOf[nb + 1] = u;
        bytes[nb++] = 0xc0 | (cp >> 6);
        bytes[nb++] = 0x80 | (cp & 63);
      } else if (cp < 0x10000) {
        unitOf[nb] = unitOf[nb + 1] = unitOf[nb + 2] = u;
        bytes[nb++] = 0xe0 | (cp >> 12);
        bytes[nb++] = 0x80 | ((cp >> 6) & 63);
        bytes[nb++] = 0x80 | (cp & 63);
      } else {
        unitOf[nb] = unitOf[nb + 1] = unitOf[nb + 2] = unitOf[nb + 3] = u;
        bytes[nb++] = 0xf0 | (cp >> 18);
        bytes[nb++] = 0x80 | ((cp >> 12) & 63);
        bytes[nb++] = 0x80 | ((cp >> 6) & 63);
        bytes[nb++] = 0x80 | (cp & 63);
      }
      u += cp >= 0x10000 ? 2 : 1;
    }
    tokenIds.length = 0;
    tokenBytes.length = 0;
    if (ignoreMerges) {
      // tokenizers.js BPE.encode: a piece that is a vocabulary token as a whole is that token, unmerged.
      let mapped = '';
      for (let b = 0; b < nb; b++) mapped += byteChar[bytes[b]];
      if (toIds.has(mapped)) {
        const id = idOf(mapped);
        if (id >= 0) {
          tokenIds.push(id);
          tokenBytes.push(0);
        }
        return done(piece, base, tokenIds.length, idAt, offsetAt);
      }
    }
    const sym = nb <= 4096 ? scratchSymbols(nb) : new Int32Array(nb);
    for (let b = 0; b < nb; b++) {
      const s = byteSym[bytes[b]];
      if (s < 0) return done(piece, base, 0, idAt, offsetAt);
      sym[b] = s;
    }
    const next = mergeSymbols(sym, nb, table);
    for (let p = 0; p >= 0; p = next[p]) {
      const id = sym[p];
      if (id >= vocab.length || vocab[id] !== strings[id] || idOf(strings[id]) !== id) return done(piece, base, 0, idAt, offsetAt);
      tokenIds.push(id);
      tokenBytes.push(p);
    }
    done(piece, base, tokenIds.length, idAt, offsetAt);
  };
  return { miss };
}

/**
 * Whether an added token matched at `at` (length `len`) of `s` would strip whitespace beside it (its `lstrip` /
 * `rstrip`, tokenizers.js `encode_text`: the text before trimmed at its end, the text after at its start).
 */
function strips(a: { lstrip?: boolean; rstrip?: boolean } | undefined, s: string, at: number, len: number): boolean {
  if (!a) return false;
  if (a.lstrip && at > 0 && /\s/.test(s[at - 1])) return true;
  if (a.rstrip && at + len < s.length && /\s/.test(s[at + len])) return true;
  return false;
}

/** The index after `i` in `s` (one code point with the `u` flag), as `matchAll` steps past an empty match. */
function advance(s: string, i: number, unicode: boolean): number {
  if (!unicode || i + 1 >= s.length) return i + 1;
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff) return i + 1;
  const d = s.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff ? i + 2 : i + 1;
}

/**
 * Writes the UTF-16 offset in `piece` of tokens 1 … n−1 to `out[from …]`: the index of the character holding the
 * token's first byte (as the offset aligner starts a token that begins inside a character). Token k's first byte is
 * the sum of the earlier tokens' lengths (each byte-level character is one byte).
 */
function writeOffsets(piece: string, tokens: string[], ascii: boolean, out: Int32Array, from: number): void {
  let byte = 0;
  if (ascii) {
    for (let k = 1; k < tokens.length; k++) out[from + k - 1] = byte += tokens[k - 1].length;
    return;
  }
  // Walk the piece's characters with their UTF-8 byte offsets.
  let unit = 0;
  let unitByte = 0;
  for (let k = 1; k < tokens.length; k++) {
    byte += tokens[k - 1].length;
    for (;;) {
      const cp = piece.codePointAt(unit)!;
      const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (unitByte + n > byte) break;
      unitByte += n;
      unit += cp >= 0x10000 ? 2 : 1;
    }
    out[from + k - 1] = unit;
  }
}
