/**
 * Python `json.dumps` as transformers' `tojson` filter calls it.
 */
import { pyCompare } from './protocols';
import { hex, intStr, pythonFloatRepr } from './repr';
import { dictEntries, isDict, isStr, norm, PyError, PyFloat, PyTuple, strOf, typeName } from './values';

// ---------------------------------------------------------------------------------------------------------------
// JSON: transformers' `tojson` is `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.

/** Options of Python `json.dumps` that `tojson` passes through. */
export interface JsonOptions {
  /** null = one line; a number of spaces or a string per level (Python: `0` still breaks lines). */
  indent: number | string | null;
  ensureAscii: boolean;
  /** [item, key] separators; null = Python's defaults (`", "` or `","` with indent, and `": "`). */
  separators: [string, string] | null;
  sortKeys: boolean;
}

/** Python `json.dumps(v, …)`. @throws PyError `TypeError` for values JSON cannot hold (Undefined, generators, …) */
export function pyJsonDumps(v: unknown, opts: JsonOptions): string {
  const indent = opts.indent === null ? null : typeof opts.indent === 'number' ? ' '.repeat(Math.max(0, opts.indent)) : opts.indent;
  const [itemSep, keySep] = opts.separators ?? [indent === null ? ', ' : ',', ': '];
  const str = (s: string) => jsonStr(s, opts.ensureAscii);
  const rec = (x: unknown, level: number): string => {
    x = norm(x);
    if (x === null) return 'null';
    if (typeof x === 'boolean') return x ? 'true' : 'false';
    if (typeof x === 'number') return intStr(x);
    if (x instanceof PyFloat) return pythonFloatRepr(x.v);
    if (isStr(x)) return str(strOf(x));
    const nl = indent === null ? '' : '\n' + indent.repeat(level + 1);
    const close = indent === null ? '' : '\n' + indent.repeat(level);
    if (Array.isArray(x) || x instanceof PyTuple) {
      const items = Array.isArray(x) ? x : x.items;
      if (items.length === 0) return '[]';
      return `[${nl}${items.map((i) => rec(i, level + 1)).join(itemSep + nl)}${close}]`;
    }
    if (isDict(x)) {
      let entries = dictEntries(x);
      if (entries.length === 0) return '{}';
      if (opts.sortKeys) entries = [...entries].sort((p, q) => pyCompare(p[0], q[0]));
      const parts = entries.map(([k, val]) => `${str(jsonKey(k))}${keySep}${rec(val, level + 1)}`);
      return `{${nl}${parts.join(itemSep + nl)}${close}}`;
    }
    throw new PyError('TypeError', `Object of type ${typeName(x)} is not JSON serializable`);
  };
  return rec(v, 0);
}

function jsonKey(k: unknown): string {
  if (isStr(k)) return strOf(k);
  if (typeof k === 'number') return intStr(k);
  if (k instanceof PyFloat) return pythonFloatRepr(k.v);
  if (typeof k === 'boolean') return k ? 'true' : 'false';
  if (k === null) return 'null';
  throw new PyError('TypeError', `keys must be str, int, float, bool or None, not ${typeName(k)}`);
}

/** A JSON string literal as Python's `json` writes it. */
export function jsonStr(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) out += '\\u' + hex(c, 4);
    else out += s[i];
  }
  return out + '"';
}
