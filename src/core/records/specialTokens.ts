/**
 * Special tokens and token edges in rendered text (docs/loss-mask-rules.md "Trainable span": an
 * added token marked special ends a turn; case 2b splits the prompt from the completion at a token edge).
 */

/**
 * Finds the end of the last special token (an added token marked special,
 * e.g. `<|im_end|>`) inside a range of a text. Spec loss-mask.md "Trainable span".
 */
export class SpecialTokenFinder {
  private readonly re: RegExp | null;
  private readonly maxLength: number;
  /** The last UTF-16 unit of each special token: no token ends where the text's unit is none of them. */
  private readonly lastUnits: Set<number>;

  /** @param specialTokens contents of the special added tokens */
  constructor(specialTokens: readonly string[]) {
    const uniq = [...new Set(specialTokens.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
    this.re = uniq.length ? new RegExp(uniq.map(escapeRegExp).join('|'), 'g') : null;
    this.maxLength = uniq.length ? uniq[0].length : 0;
    this.lastUnits = new Set(uniq.map((t) => t.charCodeAt(t.length - 1)));
  }

  /** The special token that ends exactly at `end` in `text` (the longest when several do), or null. */
  tokenEndingAt(text: string, end: number): string | null {
    // A token ending at `end` ends with the unit before it: without one, no scan of the alternation (hundreds of tokens).
    if (!this.re || end <= 0 || end > text.length || !this.lastUnits.has(text.charCodeAt(end - 1))) return null;
    const re = this.re;
    re.lastIndex = Math.max(0, end - this.maxLength);
    let best: string | null = null;
    for (let m = re.exec(text); m && m.index < end; m = re.exec(text)) {
      if (m.index + m[0].length === end && (best === null || m[0].length > best.length)) best = m[0];
      re.lastIndex = m.index + 1;
    }
    return best;
  }

  /** End index (exclusive) of the last special token lying within `text[from, to)`, or -1 when there is none. */
  lastEnd(text: string, from: number, to: number): number {
    if (!this.re) return -1;
    const re = this.re;
    re.lastIndex = from;
    let end = -1;
    for (let m = re.exec(text); m && m.index + m[0].length <= to; m = re.exec(text)) {
      end = m.index + m[0].length;
      if (m[0].length === 0) re.lastIndex++;
    }
    return end;
  }

  /** The special token that `at` falls strictly inside (starts before it, ends after it), or null. */
  around(text: string, at: number): { start: number; end: number } | null {
    if (!this.re) return null;
    this.re.lastIndex = Math.max(0, at - this.maxLength);
    for (let m = this.re.exec(text); m && m.index < at; m = this.re.exec(text)) {
      if (m.index + m[0].length > at) return { start: m.index, end: m.index + m[0].length };
      if (m[0].length === 0) this.re.lastIndex++;
    }
    return null;
  }

  /** The first special token starting at or after `from`: its start, end and text; null when there is none. */
  firstAt(text: string, from: number): { start: number; end: number; token: string } | null {
    if (!this.re) return null;
    this.re.lastIndex = from;
    const m = this.re.exec(text);
    return m ? { start: m.index, end: m.index + m[0].length, token: m[0] } : null;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Below this many code units a common prefix is compared character by character. */
const PREFIX_CHUNK = 64;

/**
 * Length of the longest common prefix of `a` and `b`, in UTF-16 code units.
 * The mask rules compare whole renders of long conversations with each other (tens of thousands of
 * characters, once per target), so equal stretches are compared as chunks of doubling length with the
 * engine's string equality, the chunk that differs is halved down to {@link PREFIX_CHUNK} units, and only
 * those are compared one by one: O(n) work in native comparisons instead of a JavaScript loop per character.
 */
export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  if (n > PREFIX_CHUNK) {
    let step = PREFIX_CHUNK;
    // Doubling: [i, i + step) equal → move on with twice the step.
    while (i + step <= n && a.slice(i, i + step) === b.slice(i, i + step)) {
      i += step;
      step *= 2;
    }
    // The first difference lies in [i, min(n, i + step)): halve that window.
    let w = Math.min(step, n - i);
    while (w > PREFIX_CHUNK) {
      const half = w >> 1;
      if (a.slice(i, i + half) === b.slice(i, i + half)) {
        i += half;
        w -= half;
      } else w = half;
    }
  }
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Below this length a prefix is compared with `startsWith` (a slice would cost more than it saves). */
const SHORT_PREFIX = 32;

/**
 * `s.startsWith(p, at)` for `at ≥ 0`, fast on long strings: V8's `startsWith` compares one character at a time (and
 * flattens a concatenated receiver or argument first), its string equality compares memory; on renders of tens of
 * thousands of characters the equality of a slice is ~20× faster. Same result.
 */
export function startsWithAt(s: string, p: string, at = 0): boolean {
  if (p.length < SHORT_PREFIX) return s.startsWith(p, at);
  return at + p.length <= s.length && s.slice(at, at + p.length) === p;
}

/** `s.endsWith(p)`, fast on long strings as {@link startsWithAt}. */
export function endsWithFast(s: string, p: string): boolean {
  if (p.length < SHORT_PREFIX) return s.endsWith(p);
  return p.length <= s.length && s.slice(s.length - p.length) === p;
}

/**
 * Moves a split point back to the start of the special token or tag it falls inside (the common prefix of
 * `<think>` and `<tool_call>` is `<t`): case 2b's `M` is where the template leaves the prompt, at a token edge.
 */
export function tokenBoundary(text: string, at: number, specials: SpecialTokenFinder): number {
  const sp = specials.around(text, at);
  if (sp) return sp.start;
  const lt = text.lastIndexOf('<', at - 1);
  if (lt >= 0 && at - lt <= 64 && text.lastIndexOf('>', at - 1) < lt && !text.slice(lt, at).includes('\n')) return lt;
  return at;
}
