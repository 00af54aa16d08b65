/**
 * Short labels beside model-written answers (issue 20, "A short label beside the real answer"): a ground
 * truth kept for grading (`"answer": "27"`, a number, a letter, an option) is not what a model wrote, and
 * never wins over a long model-written answer in the same row.
 */

/** Longest string (characters, trimmed) that can be a label. */
const MAX_LABEL_CHARS = 24;
/** Most words a label has. */
const MAX_LABEL_WORDS = 3;

/**
 * Whether `v` is a short label rather than model-written text: a number, a boolean, or a one-line string
 * of at most {@link MAX_LABEL_CHARS} characters and {@link MAX_LABEL_WORDS} words (`"27"`, `"B"`,
 * `"(A) Paris"`, `"yes"`). Empty strings are not labels (they hold nothing).
 */
export function isLabelValue(v: unknown): boolean {
  if (typeof v === 'number' || typeof v === 'boolean') return true;
  if (typeof v !== 'string') return false;
  const t = v.trim();
  return t !== '' && !t.includes('\n') && t.length <= MAX_LABEL_CHARS && t.split(/\s+/).length <= MAX_LABEL_WORDS;
}

/**
 * Whether `v` is model-written text that should win over a label: a string with words, longer than
 * {@link MAX_LABEL_CHARS} characters or spanning lines, and at least `factor` times as long as `label`'s text.
 */
export function outweighsLabel(v: unknown, label: unknown, factor = 4): boolean {
  if (typeof v !== 'string' || isLabelValue(v) || !/\s/.test(v.trim())) return false;
  return v.trim().length >= factor * String(label).trim().length;
}
