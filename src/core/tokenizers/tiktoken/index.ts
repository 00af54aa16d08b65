/**
 * Tokenizers shipped as a tiktoken rank file (`tiktoken.model`), as Moonshot AI
 * publishes Kimi-K2 / K2.5: `tiktoken.model` + `tokenizer_config.json`
 * (`tokenizer_class` `TikTokenTokenizer`, `added_tokens_decoder`) and the
 * model's own `tokenization_kimi.py`.
 *
 * The encoder reproduces, in this order:
 * 0. transformers' split of the text on the added (special) tokens, each matched
 *    as its id (tokenization_kimi.py's tiktoken call would match them too:
 *    `allowed_special="all"`);
 * 1. `tokenization_kimi.py` `TikTokenTokenizer.encode` on the text between them: it is cut into
 *    chunks of at most 400,000 code points, and each chunk wherever a run of
 *    consecutive whitespace (Python `str.isspace`) or non-whitespace characters
 *    exceeds 25,000 code points ({@link kimiSubstrings});
 * 2. tiktoken `Encoding.encode` on each piece: the text is split by the
 *    pre-tokenizer pattern `pat_str` ({@link KIMI_PAT_STR}, translated to a JS
 *    RegExp by {@link translatePattern}) and each pre-token is encoded by
 *    byte-level BPE over the ranks: a pre-token that is itself a rank is one
 *    token, otherwise the adjacent pair whose concatenation has the lowest rank is
 *    merged, leftmost first, until no adjacent pair is a rank ({@link bpeMerge}).
 *
 * Special ids follow tokenization_kimi.py: the 256 ids `n_base … n_base+255`
 * after the `n_base` ranks are named by `added_tokens_decoder` (by id) and the
 * unnamed ones are `<|reserved_token_{id}|>`; nothing is renumbered.
 *
 * The parsed rank table is cached as a binary file keyed by the sha256 of
 * `tiktoken.model` (see {@link tiktokenCacheDir}).
 */

// The tiktoken tokenizer, by concern: pattern.ts (pre-tokenizer pattern → RegExp), kimi.ts (Kimi's
// pattern, constants and pre-splitting), rankTable.ts (the rank file), bpe.ts (the merge), encoder.ts,
// rankCache.ts (parsed tables cached on disk), load.ts (the model folder).
export { translatePattern } from './pattern';
export { KIMI_NUM_RESERVED_SPECIAL, KIMI_PAT_STR, kimiSubstrings, MAX_NO_WHITESPACES_CHARS, pythonIsSpace, TIKTOKEN_MAX_ENCODE_CHARS } from './kimi';
export { parseTiktokenModel, RankTable } from './rankTable';
export { bpeMerge } from './bpe';
export { TiktokenEncoder } from './encoder';
export { loadRankTable, tiktokenCacheDir } from './rankCache';
export { loadTiktokenTokenizer, type TiktokenLoadOptions } from './load';
