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
