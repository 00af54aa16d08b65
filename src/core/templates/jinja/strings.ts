/**
 * Python `str` helpers for the chat-template renderer: code points, whitespace, strip/split/replace as CPython does them.
 */
import { PyError } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Strings: Python counts code points; JS strings are UTF-16.

const SURROGATE = /[\uD800-\uDFFF]/;

/** Whether indexing `s` by UTF-16 units equals indexing it by code points. */
export function isBmp(s: string): boolean {
  return !SURROGATE.test(s);
}

/** The code points of `s`, as strings. */
export function codePoints(s: string): string[] {
  return Array.from(s);
}

/** `len(s)` in code points. */
export function strLen(s: string): number {
  if (isBmp(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Characters Python's `str.isspace()` accepts (and `str.split()` / `strip()` without an argument remove). */
const PY_SPACE =
  '\t\n\u000b\u000c\r\u001c\u001d\u001e\u001f \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';
const PY_SPACE_SET = new Set(PY_SPACE);

/** Whether one character is whitespace for Python's `str` methods. */
export function isPySpace(ch: string): boolean {
  return PY_SPACE_SET.has(ch);
}

/** Python `str.strip` / `lstrip` / `rstrip` with `chars` (undefined/None = whitespace). */
export function pyStrip(s: string, chars: string | null | undefined, left: boolean, right: boolean): string {
  const set = chars === null || chars === undefined ? PY_SPACE_SET : new Set(codePoints(chars));
  const cps = isBmp(s) ? null : codePoints(s);
  const arr = cps ?? s;
  let i = 0;
  let j = arr.length;
  if (left) while (i < j && set.has(arr[i])) i++;
  if (right) while (j > i && set.has(arr[j - 1])) j--;
  return cps ? cps.slice(i, j).join('') : s.slice(i, j);
}

/** Line boundaries of Python's `str.splitlines()`. */
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u001c\u001d\u001e\u0085\u2028\u2029]/g;

/** Python `str.splitlines(keepends)`. */
export function pySplitlines(s: string, keepends = false): string[] {
  const out: string[] = [];
  let last = 0;
  LINE_BREAK.lastIndex = 0;
  for (let m = LINE_BREAK.exec(s); m; m = LINE_BREAK.exec(s)) {
    out.push(s.slice(last, keepends ? m.index + m[0].length : m.index));
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}

/** Python `str.split(sep, maxsplit)` (`sep` null = runs of whitespace). */
export function pySplit(s: string, sep: string | null, maxsplit: number): string[] {
  if (sep === null) {
    const out: string[] = [];
    const cps = codePoints(s);
    let i = 0;
    while (i < cps.length) {
      while (i < cps.length && isPySpace(cps[i])) i++;
      if (i >= cps.length) break;
      if (maxsplit >= 0 && out.length === maxsplit) {
        out.push(cps.slice(i).join(''));
        return out;
      }
      let j = i;
      while (j < cps.length && !isPySpace(cps[j])) j++;
      out.push(cps.slice(i, j).join(''));
      i = j;
    }
    return out;
  }
  if (sep === '') throw new PyError('ValueError', 'empty separator');
  const parts = s.split(sep);
  if (maxsplit < 0 || parts.length <= maxsplit + 1) return parts;
  return [...parts.slice(0, maxsplit), parts.slice(maxsplit).join(sep)];
}

/** Python `str.rsplit(sep, maxsplit)`. */
export function pyRsplit(s: string, sep: string | null, maxsplit: number): string[] {
  if (maxsplit < 0) return pySplit(s, sep, -1);
  if (sep === null) {
    const cps = codePoints(s);
    const out: string[] = [];
    let j = cps.length;
    while (j > 0) {
      while (j > 0 && isPySpace(cps[j - 1])) j--;
      if (j <= 0) break;
      if (out.length === maxsplit) {
        out.push(cps.slice(0, j).join(''));
        break;
      }
      let i = j;
      while (i > 0 && !isPySpace(cps[i - 1])) i--;
      out.push(cps.slice(i, j).join(''));
      j = i;
    }
    return out.reverse();
  }
  if (sep === '') throw new PyError('ValueError', 'empty separator');
  const parts = s.split(sep);
  if (parts.length <= maxsplit + 1) return parts;
  const cut = parts.length - maxsplit;
  return [parts.slice(0, cut).join(sep), ...parts.slice(cut)];
}

/** Python `str.replace(old, new, count)` (`count` < 0 = all). */
export function pyReplace(s: string, old: string, rep: string, count: number): string {
  if (count === 0) return s;
  if (old === '') {
    const cps = codePoints(s);
    let out = '';
    let n = 0;
    for (let i = 0; i <= cps.length; i++) {
      if (count < 0 || n < count) {
        out += rep;
        n++;
      }
      if (i < cps.length) out += cps[i];
    }
    return out;
  }
  if (count < 0) return s.split(old).join(rep);
  let out = '';
  let from = 0;
  for (let n = 0; n < count; n++) {
    const at = s.indexOf(old, from);
    if (at < 0) break;
    out += s.slice(from, at) + rep;
    from = at + old.length;
  }
  return out + s.slice(from);
}

/** markupsafe's `escape` of a plain string: `& < > ' "` as entities. */
export function htmlEscape(s: string): string {
  return s.replace(/[&<>'"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === "'" ? '&#39;' : '&#34;'));
}
