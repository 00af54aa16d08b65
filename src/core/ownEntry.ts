/**
 * Records keyed by data: a dataset's field names (`unreadFields` of a file's report, `inspect`'s `unread_fields`) are
 * arbitrary strings, `__proto__` and `constructor` included. `rec[key] ??= …` on a plain object reads the inherited
 * `Object.prototype` (or a built-in function) for such a key and changes it for every object of the thread.
 */

/**
 * The entry of `key` in `rec`, made by `make` and added as an own, enumerable property when `rec` has none of its own
 * (`__proto__` too: it then serializes to JSON like any other key).
 * @returns the entry (the same object on every later call with `key`)
 */
export function ownEntry<T>(rec: Record<string, T>, key: string, make: () => T): T {
  if (Object.prototype.hasOwnProperty.call(rec, key)) return rec[key];
  const value = make();
  Object.defineProperty(rec, key, { value, writable: true, enumerable: true, configurable: true });
  return value;
}
