/**
 * The one token estimator of the record view (the hover and the mask view): a text longer than the
 * work cap leaves is tokenized at its head and in a few windows spread over the rest, and the rest is
 * counted at the rate of those windows — the text's own rate, not the rate of whatever was tokenized
 * before it. The records of an agent row share their first turns (the system prompt, the task), so a
 * rate taken from the heads alone is the system prompt's rate; windows spread over the rest see the
 * tool output, code and reasoning the record is mostly made of.
 *
 * Deterministic: the result depends on the text and the characters allowed, never on what an
 * encoding cache holds, so the same row gives the same counts in every view.
 */

/** Characters tokenized at least at the head of a text over the cap. */
export const SAMPLE_HEAD_CHARS = 256;
/** Characters tokenized in the windows over the rest of a text over the cap (in all). */
export const SAMPLE_WINDOW_CHARS = 768;
/** Windows sampled over the rest of a text past its head. */
export const SAMPLE_WINDOWS = 8;

/** What the estimator needs of a tokenizer: ids and the UTF-16 start of each token. */
export type Encode = (text: string) => { ids: number[]; starts: number[] };

/** A text tokenized at its head (`cut` characters), with the rate of the rest when the text is longer. */
export interface HeadEncoding {
  ids: number[];
  starts: number[];
  /** Characters of the head tokenized (= the text's length when the whole text was). */
  cut: number;
  /** Tokens per character of the text past the head, from the sampled windows; undefined when the head is the whole text. */
  restRate?: number;
  /** Characters tokenized in all (head and windows): what the work cap is charged. */
  charsTokenized: number;
}

/**
 * Tokenizes `text` whole when it has at most `allowed` characters; else its first
 * `max(allowed, SAMPLE_HEAD_CHARS)` characters and {@link SAMPLE_WINDOWS} windows evenly spread
 * over the rest ({@link SAMPLE_WINDOW_CHARS} characters in all), each window cut at whitespace
 * so that it holds whole words (taken as it is when it has none). The rest's rate is the windows'
 * tokens per character; a rest too short for any window takes the head's rate.
 */
export function encodeHead(encode: Encode, text: string, allowed: number): HeadEncoding {
  if (text.length <= allowed) {
    const e = encode(text);
    return { ids: e.ids, starts: e.starts, cut: text.length, charsTokenized: text.length };
  }
  const cut = Math.min(text.length, Math.max(allowed, SAMPLE_HEAD_CHARS));
  const head = encode(text.slice(0, cut));
  let chars = cut;
  let tokens = 0;
  let windowChars = 0;
  const rest = text.length - cut;
  const size = Math.floor(SAMPLE_WINDOW_CHARS / SAMPLE_WINDOWS);
  if (rest > 0) {
    for (let k = 0; k < SAMPLE_WINDOWS; k++) {
      const from = Math.max(cut, cut + Math.floor(((k + 0.5) * rest) / SAMPLE_WINDOWS - size / 2));
      const to = Math.min(text.length, from + size);
      // Whole words where the window has whitespace; else (a run of digits, base64, CJK) the window as it is.
      const w = wholeWords(text, from, to) ?? (to - from >= 8 ? text.slice(from, to) : undefined);
      if (!w) continue;
      tokens += encode(w).ids.length;
      windowChars += w.length;
      chars += w.length;
    }
  }
  const headRate = cut > 0 ? head.ids.length / cut : 0.3;
  const restRate = windowChars > 0 ? tokens / windowChars : headRate;
  return { ids: head.ids, starts: head.starts, cut, restRate, charsTokenized: chars };
}

/**
 * The token count of a text from its head encoding: exact when the head is the text; else the head's
 * tokens but its last (it may be cut inside a word, so the rest is counted from its start) plus the
 * rest at the sampled rate.
 */
export function estimatedCount(text: string, enc: HeadEncoding): { tokens: number; estimated: boolean } {
  if (enc.cut >= text.length) return { tokens: enc.ids.length, estimated: false };
  const from = enc.starts.length ? enc.starts[enc.starts.length - 1] : 0;
  const kept = Math.max(0, enc.ids.length - 1);
  return { tokens: kept + Math.round((text.length - from) * (enc.restRate ?? 0.3)), estimated: true };
}

/** `text[from, to)` shrunk to whole words: from just after a whitespace to just before one (undefined when none is left). */
function wholeWords(text: string, from: number, to: number): string | undefined {
  let s = from;
  if (s > 0) {
    while (s < to && !/\s/.test(text[s - 1])) s++;
  }
  let e = to;
  if (e < text.length) {
    while (e > s && !/\s/.test(text[e])) e--;
  }
  return e - s >= 8 ? text.slice(s, e) : undefined;
}
