/**
 * A word-level cache for `@huggingface/tokenizers` (tokenizers.js 0.2) byte-level
 * BPE tokenizers.
 *
 * Why: tokenizers.js spends most of an encode mapping every pre-token to its
 * byte-level alphabet and running BPE on it (its own LRU cache only skips the
 * merges). In byte-level BPE as the Hugging Face `tokenizers` library defines it
 * (pre-tokenizers split the normalized text into pieces; `ByteLevel` with
 * `use_regex: false` maps each piece on its own; the BPE model encodes each
 * piece on its own), the tokens of a piece depend on the piece alone, so the
 * tokens of a piece seen before can be reused. Real text repeats its words, so
 * most pieces are hits.
 *
 * How: on the tokenizer instance, the pre-tokenizer `Sequence` stops before its
 * final `ByteLevel` step, and the model's `_call` maps each piece through the
 * cache (a miss runs that `ByteLevel` step and the original model on the piece).
 * Nothing else changes (added-token splitting, normalizer, id lookup).
 * Installed only when the tokenizer has exactly that shape; ids are checked
 * against the Rust `tokenizers` library in test/unit/wordCache.test.ts.
 */

/**
 * Entries kept before the cache is cleared. An entry costs about 150 bytes of heap (key, value, map slot), in each
 * pool worker: 100,000 entries are ~15 MB. 200,000 (before) grew to ~45 MB per worker on varied text, and missed
 * about 0.1 % fewer pieces (docs/scale.md "Memory").
 */
const MAX_ENTRIES = 100_000;

/** Statistics of an installed cache (for the benchmark). */
export interface WordCacheStats {
  hits: number;
  misses: number;
}

/**
 * Whether a parsed `tokenizer.json` has the shape the cache is installed on (below): byte-level BPE with a pre-tokenizer
 * `Sequence` ending in `ByteLevel` (`use_regex: false`), no byte fallback, no unknown-token fusing.
 */
export function wordCacheFits(tokenizerJson: any): boolean {
  const pre = tokenizerJson?.pre_tokenizer;
  const model = tokenizerJson?.model;
  if (pre?.type !== 'Sequence' || !Array.isArray(pre.pretokenizers) || model?.type !== 'BPE') return false;
  const last = pre.pretokenizers[pre.pretokenizers.length - 1];
  return last?.type === 'ByteLevel' && last.use_regex === false && !model.byte_fallback && !model.fuse_unk;
}

/**
 * Installs the cache on a tokenizers.js `Tokenizer` instance when its
 * `tokenizer.json` is byte-level BPE with a pre-tokenizer `Sequence` ending in
 * `ByteLevel` (`use_regex: false`) and a model without byte fallback or unknown-token fusing
 * (Qwen2/3, DeepSeek-V3, Llama-3 and most current models).
 * @param tok the `Tokenizer` built from `tokenizerJson`
 * @returns the cache's statistics, or null when the tokenizer does not have that shape (left unchanged)
 */
export function installWordCache(tok: any, tokenizerJson: any): WordCacheStats | null {
  if (!wordCacheFits(tokenizerJson)) return null;
  const pre = tokenizerJson.pre_tokenizer;
  const seq = tok?.pre_tokenizer;
  const bpe = tok?.model;
  if (!seq || !Array.isArray(seq.tokenizers) || seq.tokenizers.length !== pre.pretokenizers.length || typeof bpe?._call !== 'function') return null;
  const byteLevel = seq.tokenizers[seq.tokenizers.length - 1];
  if (typeof byteLevel?.pre_tokenize_text !== 'function' || bpe.fuse_unk) return null;

  const original = bpe._call.bind(bpe) as (tokens: string[]) => string[];
  const addedMap = tok.added_tokens_map as Map<string, { id?: number }> | undefined;
  const toIds = bpe.tokens_to_ids as Map<string, number> | undefined;
  const vocab = bpe.vocab as unknown;
  const unk = bpe.unk_token_id as number;
  if (!(addedMap instanceof Map) || !(toIds instanceof Map) || !Array.isArray(vocab)) return null;
  // The cache holds each piece's ids: one id (most pieces) as the number itself, several as an array. A piece is
  // cached only when every token maps to an id whose vocabulary string is that token (always, in byte-level BPE),
  // so the library's path below gets back exactly the tokens the model gave.
  const cache = new Map<string, number | number[]>();
  const stats: WordCacheStats = { hits: 0, misses: 0 };
  statsByTokenizer.set(tok, stats);
  /** The id of a token as tokenizers.js's `encode` maps it (added tokens first, then the model's vocabulary), -1 when neither has it. */
  const idOf = (t: string): number => addedMap.get(t)?.id ?? toIds.get(t) ?? -1;
  /** The ids of a piece the cache has not seen (the final `ByteLevel` step, then the model), cached when they map back. */
  const miss = (piece: string): number | number[] | string[] => {
    stats.misses++;
    const tokens = original(byteLevel.pre_tokenize_text(piece)) as string[];
    const ids = new Array<number>(tokens.length);
    for (let k = 0; k < tokens.length; k++) {
      const id = idOf(tokens[k]);
      if (id < 0 || vocab[id] !== tokens[k]) return tokens;
      ids[k] = id;
    }
    if (cache.size >= MAX_ENTRIES) cache.clear();
    const v = ids.length === 1 ? ids[0] : ids;
    cache.set(ownCopy(piece), v);
    return v;
  };
  seq.tokenizers = seq.tokenizers.slice(0, -1);
  pieceTokenFns.set(tok, (piece) => {
    const mapped = byteLevel.pre_tokenize_text(piece) as string[];
    return mapped.length === 1 ? { mapped: mapped[0], tokens: original(mapped) as string[] } : undefined;
  });
  bpe._call = (pieces: string[]): string[] => {
    const out: string[] = [];
    for (const piece of pieces) {
      let v: number | number[] | string[] | undefined = cache.get(piece);
      if (v === undefined) v = miss(piece);
      else stats.hits++;
      if (typeof v === 'number') out.push(vocab[v]);
      else for (const x of v) out.push(typeof x === 'number' ? vocab[x] : x);
    }
    return out;
  };
  appenders.set(tok, (pieces, out) => {
    for (let p = 0; p < pieces.length; p++) {
      let v: number | number[] | string[] | undefined = cache.get(pieces[p]);
      if (v === undefined) v = miss(pieces[p]);
      else stats.hits++;
      if (typeof v === 'number') out.push(v);
      else if (typeof v[0] === 'number') for (let k = 0; k < v.length; k++) out.push(v[k] as number);
      else
        for (let k = 0; k < v.length; k++) {
          const id = idOf(v[k] as string);
          out.push(id < 0 ? unk : id);
        }
    }
  });
  return stats;
}

/**
 * Appends the token ids of pre-tokenized pieces (the pre-tokenizer `Sequence` without its final `ByteLevel` step, as
 * installed) to `out`, through the word cache: the ids tokenizers.js's `encode` gives their tokens (added tokens first,
 * then the model's vocabulary, else the unknown token).
 */
export type PieceIdsAppender = (pieces: readonly string[], out: number[]) => void;

const appenders = new WeakMap<object, PieceIdsAppender>();

const statsByTokenizer = new WeakMap<object, WordCacheStats>();

/**
 * The running counts of the cache installed on a tokenizers.js `Tokenizer` ({@link installWordCache}; the object it
 * returned, read live): pieces found and pieces computed. Undefined when no cache is installed on `tok`. For the
 * benchmark (scripts/bench-child.ts: the cache's hit rate in a measured window, docs/scale.md "Warm and cold").
 */
export function wordCacheStatsOf(tok: object): WordCacheStats | undefined {
  return statsByTokenizer.get(tok);
}

/**
 * A pre-tokenized piece's byte-level form (`mapped`: the final `ByteLevel` step's one output, one character per UTF-8
 * byte) and the model's tokens of it, computed (no cache): what the word cache runs on a miss. Undefined when the
 * `ByteLevel` step did not give exactly one string.
 */
export type PieceTokens = (piece: string) => { mapped: string; tokens: string[] } | undefined;

const pieceTokenFns = new WeakMap<object, PieceTokens>();

/** The {@link PieceTokens} of a tokenizers.js `Tokenizer` the cache is installed on ({@link installWordCache}); undefined otherwise. */
export function pieceTokensOf(tok: object): PieceTokens | undefined {
  return pieceTokenFns.get(tok);
}

/** The {@link PieceIdsAppender} of a tokenizers.js `Tokenizer` the cache is installed on ({@link installWordCache}); undefined otherwise. */
export function pieceIdsOf(tok: object): PieceIdsAppender | undefined {
  return appenders.get(tok);
}

/**
 * `piece` as a string that holds only its own characters. A piece is a substring of the text being encoded, and V8
 * makes substrings of 13 or more characters "sliced strings" that keep their whole parent alive: as cache keys they
 * held every rendered conversation they came from (12 MB per pool worker on the shared real files, up to 0.5 MB per
 * text; docs/scale.md "Memory"). Concatenating forces a flat copy of the piece; slicing it keeps that copy only.
 */
export function ownCopy(piece: string): string {
  return piece.length < 13 ? piece : (' ' + piece).slice(1);
}
