/**
 * What is specific to Kimi's `tokenization_kimi.py`: its pre-tokenizer pattern,
 * the number of special ids after the ranks, and the cutting of long texts into
 * chunks and of long whitespace / non-whitespace runs into pieces before tiktoken
 * encodes them.
 */

/**
 * Kimi's pre-tokenizer pattern, verbatim from `TikTokenTokenizer.pat_str` in
 * `tokenization_kimi.py` as published with Kimi-K2 (fancy-regex syntax: `&&` is
 * character-class intersection, `\p{Han}` the Han script, `(?i:…)` case-insensitive).
 */
export const KIMI_PAT_STR = [
  String.raw`[\p{Han}]+`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join('|');

/** Number of special ids after the ranks (`TikTokenTokenizer.num_reserved_special_tokens` in tokenization_kimi.py). */
export const KIMI_NUM_RESERVED_SPECIAL = 256;
/** tokenization_kimi.py `TIKTOKEN_MAX_ENCODE_CHARS`: chunk length, in code points. */
export const TIKTOKEN_MAX_ENCODE_CHARS = 400_000;
/** tokenization_kimi.py `MAX_NO_WHITESPACES_CHARS`: longest run of whitespace / non-whitespace code points encoded in one piece. */
export const MAX_NO_WHITESPACES_CHARS = 25_000;

/**
 * Python `str.isspace()` for one code point (characters of bidi class WS, B or S,
 * or category Zs): tokenization_kimi.py uses it to find whitespace runs.
 */
export function pythonIsSpace(cp: number): boolean {
  if (cp <= 0x20) return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f);
  if (cp < 0x85) return false;
  return (
    cp === 0x85 ||
    cp === 0xa0 ||
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

/**
 * The substrings `tokenization_kimi.py` `TikTokenTokenizer.encode` hands to
 * tiktoken one by one: chunks of {@link TIKTOKEN_MAX_ENCODE_CHARS} code points,
 * each cut by `_split_whitespaces_or_nonwhitespaces` so that no piece holds
 * more than {@link MAX_NO_WHITESPACES_CHARS} consecutive whitespace or
 * non-whitespace code points (a cut falls before the code point that would
 * exceed the limit). Lengths are counted in code points as Python does.
 * @returns `[start, end)` ranges in UTF-16 units covering `text` in order (one
 *   empty range for the empty string, as Python yields `''`).
 */
export function kimiSubstrings(text: string, maxChunk = TIKTOKEN_MAX_ENCODE_CHARS, maxRun = MAX_NO_WHITESPACES_CHARS): [number, number][] {
  if (text.length <= maxRun) return [[0, text.length]];
  const out: [number, number][] = [];
  let u = 0;
  while (u < text.length) {
    // One chunk: up to maxChunk code points starting at u.
    let sliceStart = u;
    let runLen = 0;
    let runIsSpace = pythonIsSpace(text.codePointAt(u)!);
    let n = 0;
    while (u < text.length && n < maxChunk) {
      const cp = text.codePointAt(u)!;
      const sp = pythonIsSpace(cp);
      if (sp !== runIsSpace) {
        runLen = 1;
        runIsSpace = sp;
      } else if (++runLen > maxRun) {
        out.push([sliceStart, u]);
        sliceStart = u;
        runLen = 1;
      }
      u += cp > 0xffff ? 2 : 1;
      n++;
    }
    out.push([sliceStart, u]);
  }
  return out;
}
