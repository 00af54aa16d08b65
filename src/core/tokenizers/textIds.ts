/**
 * A text's token ids from a tokenizers.js (0.2) `Tokenizer`, the same as `tok.encode(text, { add_special_tokens: false }).ids`
 * without what that call builds and drops.
 */
import type { Tokenizer } from '@huggingface/tokenizers';
import { pieceIdsOf, type PieceIdsAppender } from './wordCache';

/** The parts of a tokenizers.js `Tokenizer` its `encode_text` reads (not in its type declarations). */
interface TokenizerInside {
  encode_text?: (text: string) => string[] | null;
  added_tokens_map?: Map<string, { id?: number; lstrip?: boolean; rstrip?: boolean }>;
  model?: { tokens_to_ids?: Map<string, number>; unk_token_id?: number };
  splitter_unnormalized?: { split(text: string): string[] };
  splitter_normalized?: { split(text: string): string[] };
  normalizer?: ((text: string) => string) | null;
  pre_tokenizer?: ((text: string, options: { section_index: number }) => string[]) | null;
  remove_space?: boolean;
  do_lowercase_and_remove_accent?: boolean;
}

/**
 * The ids of `text` as `tok.encode(text, { add_special_tokens: false }).ids` gives them, without what that call builds
 * and drops: tokenizers.js (0.2) `encode` runs `encode_text` (added tokens, normalizer, pre-tokenizer, model: the
 * token strings), passes them through the post-processor (which, without special tokens and without a pair, returns
 * them as they are, copied) and maps each to its id (`added_tokens_map`, else the model's `tokens_to_ids`, else the
 * unknown token), with an `attention_mask` array beside. Used when the tokenizer's post-processor is one that passes
 * the tokens through ({@link passesTokensThrough}); otherwise the library's `encode`:
 * - with the word cache (wordCache.ts), {@link cachedTextIds}: `encode_text`'s steps with the pieces' ids taken from
 *   the cache, no token string made or looked up for a piece seen before;
 * - else `encode_text`'s tokens mapped directly, the same lookups in the same order.
 *
 * Same ids: the oracle tests and test/unit/speedPaths.test.ts compare both.
 */
export function idsEncoder(tok: Tokenizer, tokenizerJson: { post_processor?: unknown }): (text: string) => number[] {
  const lib = (text: string) => tok.encode(text, { add_special_tokens: false }).ids;
  const t = tok as unknown as TokenizerInside;
  const added = t.added_tokens_map;
  const ids = t.model?.tokens_to_ids;
  if (typeof t.encode_text !== 'function' || !(added instanceof Map) || !(ids instanceof Map) || !passesTokensThrough(tokenizerJson.post_processor ?? null))
    return lib;
  const pieces = pieceIdsOf(tok);
  if (
    pieces &&
    t.splitter_unnormalized &&
    t.splitter_normalized &&
    typeof t.pre_tokenizer === 'function' &&
    !t.remove_space &&
    !t.do_lowercase_and_remove_accent
  )
    return (text) => textIds.run(t, added, pieces, text);
  const encodeText = t.encode_text.bind(tok);
  const model = t.model!;
  return (text) => {
    const tokens = encodeText(text) ?? [];
    const out = new Array<number>(tokens.length);
    for (let k = 0; k < tokens.length; k++) {
      const s = tokens[k];
      out[k] = (added.get(s)?.id ?? ids.get(s) ?? model.unk_token_id) as number;
    }
    return out;
  };
}

/**
 * The encode with the word cache, as an object property so that the benchmark (scripts/bench-child.ts) can time the
 * tokenizer's own share of a run by wrapping `run`.
 */
export const textIds = { run: cachedTextIds };

/**
 * tokenizers.js 0.2 `encode_text` step by step (the same calls in the same order: the unnormalized added-token split
 * with each added token's `lstrip` / `rstrip`, the normalizer, the normalized added-token split, the pre-tokenizer per
 * section), ending in ids: an added token's id, and each pre-tokenized piece's ids through the word cache
 * (`pieces`). For tokenizers without `remove_space` and `do_lowercase_and_remove_accent` (checked by the caller).
 */
function cachedTextIds(
  t: TokenizerInside,
  added: Map<string, { id?: number; lstrip?: boolean; rstrip?: boolean }>,
  pieces: PieceIdsAppender,
  text: string,
): number[] {
  const out: number[] = [];
  const sections = t.splitter_unnormalized!.split(text);
  stripAround(sections, added);
  for (let i = 0; i < sections.length; i++) {
    let section = sections[i];
    if (section.length === 0) continue;
    const a = added.get(section);
    if (a) {
      out.push(a.id ?? unknownId(t, section));
      continue;
    }
    if (t.normalizer) section = t.normalizer(section);
    if (section.length === 0) continue;
    const subsections = t.splitter_normalized!.split(section);
    stripAround(subsections, added);
    for (const sub of subsections) {
      if (sub.length === 0) continue;
      const b = added.get(sub);
      if (b) out.push(b.id ?? unknownId(t, sub));
      else pieces(t.pre_tokenizer!(sub, { section_index: i }), out);
    }
  }
  return out;
}

/** The id of a token that is not an added token with an id: the model's, else the unknown token's (tokenizers.js `encode`). */
function unknownId(t: TokenizerInside, token: string): number {
  return (t.model!.tokens_to_ids!.get(token) ?? t.model!.unk_token_id) as number;
}

/** An added token's `lstrip` / `rstrip`: the whitespace of the sections beside it trimmed (tokenizers.js `encode_text`). */
function stripAround(sections: string[], added: Map<string, { lstrip?: boolean; rstrip?: boolean }>): void {
  for (let i = 0; i < sections.length; i++) {
    const a = added.get(sections[i]);
    if (!a) continue;
    if (a.lstrip && i > 0) sections[i - 1] = sections[i - 1].trimEnd();
    if (a.rstrip && i < sections.length - 1) sections[i + 1] = sections[i + 1].trimStart();
  }
}

/**
 * Whether a `tokenizer.json` post-processor returns a single text's tokens unchanged when no special tokens are added
 * (tokenizers.js 0.2 `post_process(tokens, null, false)`): none, `ByteLevel`, `BertProcessing`, `RobertaProcessing`,
 * a `TemplateProcessing` whose `single` template holds sequence `A` once (its special tokens are left out), and a
 * `Sequence` of such processors.
 */
export function passesTokensThrough(pp: unknown): boolean {
  if (pp === null) return true;
  const p = pp as { type?: string; single?: unknown; processors?: unknown };
  switch (p.type) {
    case 'ByteLevel':
    case 'BertProcessing':
    case 'RobertaProcessing':
      return true;
    case 'TemplateProcessing': {
      if (!Array.isArray(p.single)) return false;
      const seqs = p.single.filter((x) => x && typeof x === 'object' && 'Sequence' in x);
      return seqs.length === 1 && (seqs[0] as { Sequence: { id?: string } }).Sequence.id === 'A';
    }
    case 'Sequence':
      return Array.isArray(p.processors) && p.processors.every(passesTokensThrough);
    default:
      return false;
  }
}
