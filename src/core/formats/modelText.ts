/**
 * Unread model-written text (issue 20, "Unread model text is a data-changing warning"): a field nobody read
 * whose value looks written by a model — long prose or code — may be the answer, its reasoning or its tool
 * calls, so the records may train the wrong text or lose it. Such a field is named with its own note
 * (`model_text_not_read`, data-changing: the file ends WARNINGS and `--strict` fails). Metadata (ids,
 * timestamps, model names, scores, URLs) never gets here: `fields.ts` filters known metadata, and values
 * without words (numbers, single tokens, URLs) are not prose.
 */

/** Shortest text (characters, trimmed) that counts as model-written. */
export const MIN_MODEL_TEXT_CHARS = 200;
/** Fewest words of prose. */
const MIN_PROSE_WORDS = 30;
/** Fewest lines of code. */
const MIN_CODE_LINES = 4;

/** The text a value holds: a string, or the strings of a list joined by newlines; undefined for anything else. */
function textOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v.join('\n');
  return undefined;
}

/**
 * Whether `v` looks written by a model: a string (or list of strings) of at least {@link MIN_MODEL_TEXT_CHARS}
 * characters that is prose (at least 30 words) or code (at least 4 lines with brackets, parentheses or `=`).
 * A URL, a hash, a base64 blob or a number never qualifies (no words, no lines).
 */
export function looksModelWritten(v: unknown): boolean {
  const t = textOf(v)?.trim();
  if (t === undefined || t.length < MIN_MODEL_TEXT_CHARS) return false;
  if (t.split(/\s+/).length >= MIN_PROSE_WORDS) return true;
  return t.split('\n').length >= MIN_CODE_LINES && /[{}()[\]=;]/.test(t);
}

/**
 * The unread fields whose values look model-written (in most of the values a path has in the row), each
 * with the mean and the largest length of its text in characters; in the order given. A value whose text the records already
 * hold (`read`: the texts of the row's messages; a row-level copy of a turn) is not unread text.
 */
export function modelTextFields(unread: Map<string, unknown[]>, read: readonly string[] = []): { path: string; chars: number; longest: number }[] {
  const out: { path: string; chars: number; longest: number }[] = [];
  const isRead = (v: unknown) => {
    const t = (textOf(v) ?? '').trim();
    return t !== '' && read.some((r) => r.includes(t));
  };
  for (const [path, values] of unread) {
    const texts = values.filter((v) => looksModelWritten(v) && !isRead(v));
    if (texts.length * 2 <= values.length) continue;
    const lengths = texts.map((v) => (textOf(v) ?? '').trim().length);
    out.push({ path, chars: Math.round(lengths.reduce((a, b) => a + b, 0) / lengths.length), longest: Math.max(...lengths) });
  }
  return out;
}
