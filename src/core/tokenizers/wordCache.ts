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
  // A piece of one token (most of them) is cached as that token's string, not as a one-element array (~60 bytes less).
  const cache = new Map<string, string | string[]>();
  const stats: WordCacheStats = { hits: 0, misses: 0 };
  seq.tokenizers = seq.tokenizers.slice(0, -1);
  bpe._call = (pieces: string[]): string[] => {
    const out: string[] = [];
    for (const piece of pieces) {
      const cached = cache.get(piece);
      if (cached === undefined) {
        stats.misses++;
        const tokens = original(byteLevel.pre_tokenize_text(piece)) as string[];
        if (cache.size >= MAX_ENTRIES) cache.clear();
        cache.set(ownCopy(piece), tokens.length === 1 ? tokens[0] : tokens);
        for (const t of tokens) out.push(t);
      } else {
        stats.hits++;
        if (typeof cached === 'string') out.push(cached);
        else for (const t of cached) out.push(t);
      }
    }
    return out;
  };
  return stats;
}

/**
 * `piece` as a string that holds only its own characters. A piece is a substring of the text being encoded, and V8
 * makes substrings of 13 or more characters "sliced strings" that keep their whole parent alive: as cache keys they
 * held every rendered conversation they came from (12 MB per pool worker on the shared real files, up to 0.5 MB per
 * text; docs/scale.md "Memory"). Concatenating forces a flat copy of the piece; slicing it keeps that copy only.
 */
function ownCopy(piece: string): string {
  return piece.length < 13 ? piece : (' ' + piece).slice(1);
}
