/**
 * Pre-tokenizer steps that tokenizers.js 0.2 cuts otherwise than the Rust `tokenizers` library (the reference, docs/
 * fidelity.md), made to cut as Rust does, in place, at load (tokenizer.ts): a `Punctuation` step's `behavior`, and a
 * `Split` step's `behavior` and `invert` beyond the `Isolated` split tokenizers.js does. Both encode paths go through
 * these steps (pieceEncoder.ts takes only `Isolated`, not inverted `Split`s, whose cut was already Rust's).
 */

/** The parts of a tokenizers.js pre-tokenizer or normalizer step read here (`Sequence`s hold their steps in `tokenizers` / `normalizers`). */
export interface JsStep {
  config?: { type?: unknown; behavior?: unknown; invert?: unknown };
  pattern?: unknown;
  tokenizers?: unknown;
  normalizers?: unknown;
  pre_tokenize_text?: (text: string) => string[];
}

/**
 * Calls `fn` on every step under `root` (a tokenizers.js `Tokenizer`'s `pre_tokenizer` or `normalizer`): `root`
 * itself, then the steps of its `Sequence`s (`tokenizers`, `normalizers`), depth first, at most 16 levels deep.
 */
export function eachStep(root: unknown, fn: (s: JsStep) => void): void {
  const visit = (step: unknown, depth: number): void => {
    if (!step || (typeof step !== 'object' && typeof step !== 'function') || depth > 16) return;
    const s = step as JsStep;
    fn(s);
    for (const list of [s.tokenizers, s.normalizers]) if (Array.isArray(list)) for (const x of list) visit(x, depth + 1);
  };
  visit(root, 0);
}

/** The pre-tokenizer of a tokenizers.js `Tokenizer`. */
const preTokenizerOf = (tok: object): unknown => (tok as { pre_tokenizer?: unknown }).pre_tokenizer;

/** tokenizers.js 0.2's class of punctuation (its `PUNCTUATION_REGEX`: `\p{P}` and ASCII's punctuation and symbols, as Rust's `is_punc`). */
const PUNCTUATION_CLASS = '\\p{P}\\u0021-\\u002F\\u003A-\\u0040\\u005B-\\u0060\\u007B-\\u007E';

/**
 * The pieces of a `Punctuation` pre-tokenizer by its `behavior`, as Rust's `split(is_punc, behavior)` cuts them
 * (tokenizers.js 0.2 cuts every behavior as `Contiguous`: `a...b` as `a`, `...`, `b` where Rust's default, `Isolated`,
 * gives `a`, `.`, `.`, `.`, `b`: other ids, silently). Matched with `text.match(pattern)`.
 */
const PUNCTUATION_PATTERNS: Record<string, string> = {
  Isolated: `[^${PUNCTUATION_CLASS}]+|[${PUNCTUATION_CLASS}]`,
  Contiguous: `[^${PUNCTUATION_CLASS}]+|[${PUNCTUATION_CLASS}]+`,
  Removed: `[^${PUNCTUATION_CLASS}]+`,
  MergedWithPrevious: `[^${PUNCTUATION_CLASS}]*[${PUNCTUATION_CLASS}]|[^${PUNCTUATION_CLASS}]+`,
  MergedWithNext: `[${PUNCTUATION_CLASS}][^${PUNCTUATION_CLASS}]*|[^${PUNCTUATION_CLASS}]+`,
};

/**
 * Gives every `Punctuation` step of a tokenizers.js `Tokenizer`'s pre-tokenizer (inside `Sequence`s too) the pattern
 * of its `behavior` ({@link PUNCTUATION_PATTERNS}; absent: `Isolated`, Rust's default), in place. Call it before
 * {@link alignTokenizerRegexes}. A behavior Rust does not have (its own load refuses the file) is left as it was.
 */
export function punctuationAsRust(tok: object): void {
  eachStep(preTokenizerOf(tok), (s) => {
    if (s.config?.type !== 'Punctuation' || !(s.pattern instanceof RegExp)) return;
    const source = PUNCTUATION_PATTERNS[typeof s.config.behavior === 'string' ? s.config.behavior : 'Isolated'];
    if (source !== undefined) s.pattern = new RegExp(source, s.pattern.flags);
  });
}

/**
 * The pieces of `text` as Rust's `NormalizedString::split(pattern, behavior)` cuts them (tokenizers `normalizer.rs`,
 * `pattern.rs`): the matches of `re` (global) and the text between them, each flagged a match or not (`invert`:
 * flags flipped), then `Isolated` keeps every part, `Removed` the parts that are not matches, `Contiguous` joins
 * adjacent matches, `MergedWithPrevious` / `MergedWithNext` join a match to the part before / after it; empty pieces
 * are left out (`PreTokenizedString::split`).
 */
export function rustSplit(text: string, re: RegExp, behavior: string, invert: boolean): string[] {
  if (text === '') return [];
  const parts: { from: number; to: number; match: boolean }[] = [];
  let prev = 0;
  for (const m of text.matchAll(re)) {
    const at = m.index;
    if (prev !== at) parts.push({ from: prev, to: at, match: invert });
    parts.push({ from: at, to: at + m[0].length, match: !invert });
    prev = at + m[0].length;
  }
  if (prev !== text.length) parts.push({ from: prev, to: text.length, match: invert });
  let kept: { from: number; to: number }[];
  if (behavior === 'Removed') kept = parts.filter((p) => !p.match);
  else if (behavior === 'Isolated') kept = parts;
  else {
    // Contiguous, MergedWithPrevious: forward; MergedWithNext: backward (then reversed), as Rust folds them.
    const next = behavior === 'MergedWithNext';
    const order = next ? [...parts].reverse() : parts;
    const acc: { from: number; to: number }[] = [];
    let previousMatch = false;
    for (const p of order) {
      const join = behavior === 'Contiguous' ? p.match === previousMatch : p.match && !previousMatch;
      const last = acc[acc.length - 1];
      if (join && last) {
        if (next) last.from = p.from;
        else last.to = p.to;
      } else acc.push({ from: p.from, to: p.to });
      previousMatch = p.match;
    }
    kept = next ? acc.reverse() : acc;
  }
  const out: string[] = [];
  for (const p of kept) if (p.to > p.from) out.push(text.slice(p.from, p.to));
  return out;
}

/** The `Split` behaviors of Rust's `SplitDelimiterBehavior`. */
const SPLIT_BEHAVIORS = new Set(['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous']);

/**
 * Makes every `Split` step of a tokenizers.js `Tokenizer`'s pre-tokenizer that tokenizers.js cuts otherwise than Rust
 * cut with {@link rustSplit}, in place: an inverted one whose behavior is not `Removed` (tokenizers.js keeps the
 * matches alone), a `String` pattern with `Removed` (its capture group kept the delimiters), and `Contiguous`,
 * `MergedWithPrevious`, `MergedWithNext` (cut as `Isolated`). The step's `pattern` is read at each call (rustUnicode.ts
 * `withExactRegexes` swaps it). A behavior Rust does not have (its own load refuses the file) is left as it was.
 */
export function splitAsRust(tok: object): void {
  eachStep(preTokenizerOf(tok), (s) => {
    if (s.config?.type !== 'Split' || !(s.pattern instanceof RegExp)) return;
    const behavior = s.config.behavior;
    if (typeof behavior !== 'string' || !SPLIT_BEHAVIORS.has(behavior)) return;
    const invert = s.config.invert === true;
    if (behavior === 'Isolated' && !invert) return; // tokenizers.js's regex_split: Rust's cut
    s.pre_tokenize_text = (text: string) => rustSplit(text, s.pattern as RegExp, behavior, invert);
  });
}
