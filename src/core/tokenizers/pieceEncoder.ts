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
 * - the pre-tokenizer's `Split` regexes (tokenizers.js's own compiled patterns) cut each piece as tokenizers.js's
 *   `regex_split` cuts it (the matches and the text between them, in order), one level per `Split` of the
 *   `Sequence`; the last level without a substring or a match array per piece (a sticky copy of its pattern);
 * - each piece (before the byte-level mapping) is looked up by its range of the text in this encoder's cache
 *   (pieceTable.ts), which holds its ids and each token's UTF-16 offset in the piece (the id itself for a one-token
 *   piece; else an entry of a packed Int32Array): a piece seen before costs one hash lookup and a copy of its ids,
 *   with no allocation; the byte-level mapping and BPE run on a miss only, over byte ids on the model's merge table
 *   (pieceMiss.ts);
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
import { pieceTokensOf, wordCacheFits } from './wordCache';
import { PieceTable } from './pieceTable';
import { PieceMiss, type BpeModelInside } from './pieceMiss';
import { passesTokensThrough } from './textIds';
import { differsFromRust, type GuardedRegex } from './rustUnicode';
import type { EncodedText } from './types';

/** Pieces longer than this (UTF-16 units) are not cached: a 5 MiB run of one letter is one piece (docs/scale.md "Long words"). */
const MAX_CACHED_PIECE = 4096;
/** Packed ints kept before the cache is cleared (4 bytes each). */
const MAX_POOL = 1 << 22;

/** The parts of a tokenizers.js 0.2 `Tokenizer` read here (not in its type declarations). */
interface TokenizerInside {
  added_tokens?: { content: string; id: number; lstrip: boolean; rstrip: boolean; normalized: boolean }[];
  added_tokens_map?: Map<string, { id?: number }>;
  model?: BpeModelInside;
  normalizer?: ((text: string) => string) | null;
  pre_tokenizer?: { tokenizers?: { pattern?: unknown }[] } | null;
  remove_space?: boolean;
  do_lowercase_and_remove_accent?: boolean;
}

/** An added-token matcher of one level (raw text, or normalized text): its RegExp, and the tokens that strip whitespace beside them. */
interface AddedLevel {
  re: RegExp;
  strip: Map<string, { lstrip: boolean; rstrip: boolean }> | null;
}

/** Both levels of added tokens, and each content's id as tokenizers.js's `encode` maps it. */
interface AddedLevels {
  raw: AddedLevel | null;
  normalized: AddedLevel | null;
  ids: Map<string, number>;
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
 * @param guarded the `Split` patterns left as the runtime has them (rustUnicode.ts `alignTokenizerRegexes`): a text
 *   with a piece holding a character the runtime's and Rust's tables disagree on is cut again with their `exact` form
 */
export function pieceEncoder(
  tok: object,
  tokConfig: any,
  ownNfc: boolean,
  normalizedAround: (text: string) => string,
  guarded: GuardedRegex[] = [],
): PieceEncode | undefined {
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
  if (!levels || !t.added_tokens_map) return undefined;
  const miss = new PieceMiss(model, t.added_tokens_map!, pieceTokens);
  const exact = guarded.length ? splits.map((re) => guarded.find((g) => g.fast.source === re.source && g.fast.flags === re.flags)?.exact ?? re) : null;
  const encoder = new PieceEncoder(splitMode(splits), exact && splitMode(exact), levels, miss, ownNfc, normalizedAround);
  const encode = ((text: string) => encoder.encode(text)) as PieceEncode;
  encode.stats = encoder.stats;
  return encode;
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
function addedLevels(t: TokenizerInside): AddedLevels | undefined {
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
    const strip = new Map<string, { lstrip: boolean; rstrip: boolean }>();
    for (const a of list) if (a.lstrip || a.rstrip) strip.set(a.content, { lstrip: a.lstrip, rstrip: a.rstrip });
    return { re, strip: strip.size ? strip : null };
  };
  return { raw: level(raw), normalized: level(normalized), ids };
}

/** The `Split` patterns a pass cuts with: each level's (copied: `lastIndex` is ours), the last one's sticky copy too. */
interface SplitMode {
  splits: RegExp[];
  /** The last `Split`'s pattern, sticky (a match at the position itself) and as it is (the next match). */
  sticky: RegExp | null;
  lastSplit: RegExp | null;
}

/** The {@link SplitMode} of `splits`. */
function splitMode(splits: RegExp[]): SplitMode {
  const own = splits.map((re) => new RegExp(re.source, re.flags));
  const lastSplit = own.length ? own[own.length - 1] : null;
  return { splits: own, lastSplit, sticky: lastSplit ? new RegExp(lastSplit.source, lastSplit.flags + 'y') : null };
}

/** Whether `text` has a character NFC may change (U+0300 is the first code point whose NFC quick check is not Yes). */
const MAY_CHANGE_UNDER_NFC = /[\u0300-\uffff]/;

/** The encode's state: the piece cache and the output of the text in progress. */
class PieceEncoder {
  readonly stats: PieceEncoderStats = { texts: 0, fallbacks: 0, hits: 0, misses: 0 };
  /**
   * Each piece's entry: its one id (a one-token piece, offset 0), or −(at + 2) for `pool[at]` = n, then the n ids,
   * then the UTF-16 offsets in the piece of tokens 1 … n−1.
   */
  private readonly cache = new PieceTable();
  private pool = new Int32Array(1 << 14);
  private used = 0;
  /** The text in progress: its ids and starts, and whether a part of it could not be done exactly. */
  private ids: number[] = [];
  private starts: number[] = [];
  private failed = false;
  /** The patterns of the pass in progress: {@link fast}, or {@link exact} for a text that needs it. */
  private mode: SplitMode;
  /** Set in a pass with {@link fast} when a piece holds a character the runtime's and Rust's tables disagree on. */
  private needsExact = false;

  /**
   * @param fast the `Split` patterns every text is cut with first
   * @param exact when some of them are the runtime's (rustUnicode.ts `GuardedRegex`): all of them on Rust's tables, for
   *   the texts with a piece holding a character the two tables disagree on ({@link differsFromRust}; such a piece is
   *   never cached, so every text that has one meets it as a miss)
   */
  constructor(
    private readonly fast: SplitMode,
    private readonly exact: SplitMode | null,
    private readonly levels: AddedLevels,
    private readonly miss: PieceMiss,
    private readonly ownNfc: boolean,
    private readonly normalizedAround: (text: string) => string,
  ) {
    this.mode = fast;
  }

  encode(text: string): EncodedText | undefined {
    this.stats.texts++;
    if (this.ownNfc && MAY_CHANGE_UNDER_NFC.test(text) && (this.normalizedAround(text) !== text || normalizeLikeRust(text, 'NFC') !== text)) {
      this.stats.fallbacks++;
      return undefined;
    }
    let out = this.pass(text, this.fast);
    if (this.needsExact) out = this.pass(text, this.exact!);
    if (out) return out;
    this.stats.fallbacks++;
    return undefined;
  }

  /** The text's ids and starts cut with `mode`'s patterns; undefined when a part of it cannot be done exactly (or needs {@link exact}). */
  private pass(text: string, mode: SplitMode): EncodedText | undefined {
    this.mode = mode;
    this.ids = [];
    this.starts = [];
    this.failed = false;
    this.needsExact = false;
    this.added(this.levels.raw, text, 0);
    const out = { ids: this.ids, starts: this.starts, exactOffsets: true };
    this.ids = [];
    this.starts = [];
    return this.failed ? undefined : out;
  }

  /**
   * The added tokens of `level` in `s` (which starts at `base` in the text), each one's id appended, and the text
   * between them given to the next step: the normalized level's added tokens after the raw level's, then the
   * pre-tokenizer. Each token's `lstrip` / `rstrip` must strip nothing (else the old path).
   */
  private added(level: AddedLevel | null, s: string, base: number): void {
    const normalized = level === this.levels.normalized;
    if (level === null) return normalized ? this.split(0, s, base) : this.added(this.levels.normalized, s, base);
    const re = level.re;
    let prev = 0;
    re.lastIndex = 0;
    for (let m = re.exec(s); m !== null; m = re.exec(s)) {
      const at = m.index;
      const content = m[0];
      if (level.strip !== null && strips(level.strip.get(content), s, at, content.length)) {
        this.failed = true;
        return;
      }
      const after = re.lastIndex;
      if (prev < at) {
        if (normalized) this.split(0, s.slice(prev, at), base + prev);
        else this.added(this.levels.normalized, s.slice(prev, at), base + prev);
        if (this.failed) return;
      }
      this.ids.push(this.levels.ids.get(content)!);
      this.starts.push(base + at);
      prev = at + content.length;
      re.lastIndex = after;
    }
    if (prev === s.length) return;
    const rest = prev === 0 ? s : s.slice(prev);
    if (normalized) this.split(0, rest, base + prev);
    else this.added(this.levels.normalized, rest, base + prev);
  }

  /** The `Split` of level `k` on `s` (starting at `base`), as tokenizers.js's `regex_split` cuts it: the matches and the text between them, in order. */
  private split(k: number, s: string, base: number): void {
    const splits = this.mode.splits;
    if (k >= splits.length - 1) return this.splitLast(s, base);
    const re = splits[k];
    re.lastIndex = 0;
    let prev = 0;
    for (let m = re.exec(s); m !== null; m = re.exec(s)) {
      const at = m.index;
      const len = m[0].length;
      // The next level uses its own RegExp: this one's lastIndex is still ours after the calls.
      if (prev < at) this.split(k + 1, s.slice(prev, at), base + prev);
      if (len > 0) this.split(k + 1, m[0], base + at);
      else re.lastIndex = advance(s, re.lastIndex, re.unicode);
      if (this.failed) return;
      prev = at + len;
    }
    if (prev < s.length) this.split(k + 1, prev === 0 ? s : s.slice(prev), base + prev);
  }

  /**
   * The last `Split` on `s`, cut as {@link split} cuts, its pieces given as ranges of `s` (no substring): the match at
   * the position itself from the sticky copy of the pattern (no match array), else the next one from the pattern.
   */
  private splitLast(s: string, base: number): void {
    const re = this.mode.lastSplit;
    const sticky = this.mode.sticky;
    if (re === null || sticky === null) return this.piece(s, 0, s.length, base);
    const n = s.length;
    let prev = 0;
    for (let pos = 0; pos <= n && !this.failed;) {
      let at: number;
      let end: number;
      sticky.lastIndex = pos;
      if (pos < n && sticky.test(s)) {
        at = pos;
        end = sticky.lastIndex;
      } else {
        re.lastIndex = pos;
        const m = re.exec(s);
        if (m === null) break;
        at = m.index;
        end = at + m[0].length;
      }
      if (prev < at) this.piece(s, prev, at, base);
      if (end > at) this.piece(s, at, end, base);
      prev = end;
      pos = end > at ? end : advance(s, at, re.unicode);
    }
    if (prev < n && !this.failed) this.piece(s, prev, n, base);
  }

  /** One pre-tokenized piece, `s[from … to)` (`s` starts at `base` in the text): its ids and starts from the cache, else computed and cached. */
  private piece(s: string, from: number, to: number, base: number): void {
    const v = this.cache.get(s, from, to);
    if (v === -1) return this.missed(s, from, to, base + from);
    this.stats.hits++;
    if (v >= 0) {
      this.ids.push(v);
      this.starts.push(base + from);
    } else this.emit(-v - 2, base + from);
  }

  /** Appends the ids and starts of the pool entry at `at` for a piece starting at `base`. */
  private emit(at: number, base: number): void {
    const pool = this.pool;
    const n = pool[at];
    this.ids.push(pool[at + 1]);
    this.starts.push(base);
    for (let k = 1; k < n; k++) {
      this.ids.push(pool[at + 1 + k]);
      this.starts.push(base + pool[at + n + k]);
    }
  }

  /**
   * A piece the cache has not seen, `s[from … to)` starting at `start` in the text: its tokens computed (pieceMiss.ts),
   * appended and cached; `failed` when they cannot be given exactly.
   */
  private missed(s: string, from: number, to: number, start: number): void {
    this.stats.misses++;
    const miss = this.miss;
    const piece = from === 0 && to === s.length ? s : s.slice(from, to);
    const n = miss.run(piece);
    if (n === 0) {
      this.failed = true;
      return;
    }
    const len = to - from;
    // A piece with a character the runtime's and Rust's tables disagree on: cut again with the exact patterns, never cached.
    const disagrees = this.exact !== null && differsFromRust(piece);
    if (disagrees && this.mode === this.fast) {
      this.needsExact = this.failed = true;
      return;
    }
    if (len > MAX_CACHED_PIECE || disagrees) {
      for (let k = 0; k < n; k++) {
        this.ids.push(miss.ids[k]);
        this.starts.push(start + miss.offsets[k]);
      }
      return;
    }
    if (this.cache.full(len) || this.used + 2 * n > MAX_POOL) {
      this.cache.clear();
      this.used = 0;
    }
    if (n === 1) {
      this.cache.set(s, from, to, miss.ids[0]);
      this.ids.push(miss.ids[0]);
      this.starts.push(start);
      return;
    }
    if (this.used + 2 * n > this.pool.length) {
      const grown = new Int32Array(Math.min(MAX_POOL, Math.max(this.pool.length * 2, this.used + 2 * n)));
      grown.set(this.pool.subarray(0, this.used));
      this.pool = grown;
    }
    const at = this.used;
    const pool = this.pool;
    pool[at] = n;
    for (let k = 0; k < n; k++) pool[at + 1 + k] = miss.ids[k];
    for (let k = 1; k < n; k++) pool[at + n + k] = miss.offsets[k];
    this.used += 2 * n;
    this.cache.set(s, from, to, -(at + 2));
    this.emit(at, start);
  }
}

/**
 * Whether an added token matched at `at` (length `len`) of `s` would strip whitespace beside it (its `lstrip` /
 * `rstrip`, tokenizers.js `encode_text`: the text before trimmed at its end, the text after at its start).
 */
function strips(a: { lstrip: boolean; rstrip: boolean } | undefined, s: string, at: number, len: number): boolean {
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
