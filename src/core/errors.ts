/**
 * Error text for messages and reports, safe on any thrown value: an `Error`'s
 * message, a string as is, anything else through `String` — and a fixed text
 * when even that throws (a value whose `message` getter or `toString` throws).
 * Reporting an error must never raise another one.
 */
export function errorMessage(e: unknown, fallback = 'unknown error'): string {
  try {
    if (e instanceof Error) return typeof e.message === 'string' && e.message ? e.message : String(e);
    if (typeof e === 'string') return e;
    return String(e);
  } catch {
    return fallback;
  }
}

/**
 * Whether `e` is a JavaScript runtime error — a bug in this code or a dependency meeting data it did not expect
 * (`TypeError` such as "Cannot read properties of undefined (reading 'length')", `RangeError`, `ReferenceError`) —
 * rather than an error whose message was written for the user. Such a message alone says neither where nor what.
 */
export function isInternalError(e: unknown): e is Error {
  return e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError || e instanceof EvalError || e instanceof URIError;
}

/** The first stack frame of `e` as `file:line` (path from `src/` or the bundle's file name), or '' when there is none. */
export function errorLocation(e: Error): string {
  try {
    for (const line of (e.stack ?? '').split('\n').slice(1)) {
      const m = /\(?((?:[A-Za-z]:)?[^\s()]+):(\d+):\d+\)?\s*$/.exec(line.trim());
      if (!m || m[1].startsWith('node:')) continue;
      const file = m[1].replace(/^file:\/\//, '');
      const src = file.lastIndexOf('/src/');
      return `${src >= 0 ? file.slice(src + 1) : file.slice(file.lastIndexOf('/') + 1)}:${m[2]}`;
    }
  } catch {
    /* no location */
  }
  return '';
}

/**
 * A message for any thrown value that never is a bare JavaScript error: an internal error becomes
 * `internal error (TypeError at src/core/x.ts:12: Cannot read properties of undefined (reading 'length')); please report it`,
 * prefixed by `context` when given (what was being done: the file and line); other errors keep their message.
 */
export function describeError(e: unknown, context?: string): string {
  if (!isInternalError(e)) return context ? `${context}: ${errorMessage(e)}` : errorMessage(e);
  const where = errorLocation(e);
  const what = `internal error (${e.name}${where ? ` at ${where}` : ''}: ${errorMessage(e)}); please report it with the input`;
  return context ? `${context}: ${what}` : what;
}
