/**
 * Python values as jinja2 sees them, for the chat-template renderer ({@link ./jinjaCompat}).
 *
 * A render must equal `transformers`' Python render character for character, so values keep their Python
 * type and their Python text: `str(1.0)` is `1.0`, `str(None)` is `None`, `str({'a': 1})` is `{'a': 1}`,
 * `str((1,))` is `(1,)`, a dict keeps its insertion order and may have integer keys.
 *
 * Representation (a template value is `unknown`, one of):
 * - `str` → JS string; `bool` → JS boolean; `None` → `null`;
 * - `int` → JS number (always an integer; a result beyond 2^53 raises instead of losing digits);
 * - `float` → {@link PyFloat} (so `2.0` stays a float); a non-integer JS number read from data is one too;
 * - `list` → JS array; `tuple` → {@link PyTuple};
 * - `dict` → a plain JS object (data: messages, tools; string keys) or a {@link PyDict} (made by the template,
 *   any hashable key);
 * - jinja2's `Undefined` → {@link Undef}; `Markup` (`|safe`) → {@link Markup}; `namespace()` → {@link Namespace};
 * - generators and iterators (`|selectattr`, `|map`, `|reverse`, `|items`, …) → {@link PyIter}: one pass,
 *   always true, no `len()`, exactly as in Python;
 * - `range` → {@link PyRange}; `dict.keys()`/`values()`/`items()` → {@link DictView};
 * - macros, builtins and bound methods → {@link PyCallable}.
 *
 * Values read out of data (arrays and plain objects) are passed through {@link norm} on every access, so data is
 * never copied or converted up front.
 */

/** A Python exception the renderer raises: `pyType` is the Python class jinja2 would raise. */
export class PyError extends Error {
  constructor(
    readonly pyType: string,
    message: string,
  ) {
    super(message);
  }
}

/** Raised where Python's output would hold a memory address (`<generator object … at 0x7f…>`): no render can equal it. */
export function unreproducible(what: string): never {
  throw new PyError('Unreproducible', `the template prints ${what}, whose Python text holds a memory address; the Python render is not reproducible`);
}

/** A Python `float`. */
export class PyFloat {
  constructor(readonly v: number) {}
}

/** A Python `tuple`. */
export class PyTuple {
  constructor(readonly items: unknown[]) {}
}

/** markupsafe's `Markup`: a string marked safe; `+`, `%` and its methods escape plain-string operands. */
export class Markup {
  constructor(readonly s: string) {}
}

/**
 * jinja2's default `Undefined`: prints as `""`, iterates as empty, has length 0 and is false; attribute or item
 * access, arithmetic, ordering and calls raise `UndefinedError` with its message (`SecurityError` for the
 * sandbox's unsafe-attribute undefined).
 */
export class Undef {
  private msg: string | (() => string);

  /** @param hint the error message, or a function that builds it (most undefined values are never used, so built lazily) */
  constructor(
    hint: string | (() => string),
    readonly exc: 'UndefinedError' | 'SecurityError' = 'UndefinedError',
  ) {
    this.msg = hint;
  }

  /** The message `fail` raises. */
  get hint(): string {
    if (typeof this.msg === 'function') this.msg = this.msg();
    return this.msg;
  }

  fail(): never {
    throw new PyError(this.exc, this.hint);
  }
}

/** jinja2's `namespace()`: attributes assignable with `{% set ns.x = … %}`. */
export class Namespace {
  constructor(readonly attrs: Map<string, unknown> = new Map()) {}
}

/** A dict built by the template (literal, `dict()`, `.copy()`): keys of any hashable type, in insertion order. */
export class PyDict {
  /** hash key ({@link hashKey}) → [the key as first inserted, value] */
  readonly m = new Map<unknown, [unknown, unknown]>();

  set(key: unknown, value: unknown): void {
    const h = hashKey(key);
    const had = this.m.get(h);
    this.m.set(h, [had ? had[0] : key, value]);
  }
}

/** A one-pass Python iterator (a generator, `reversed()`, …). Always true; no `len()`; printing it is unreproducible. */
export class PyIter {
  constructor(
    private readonly it: Iterator<unknown>,
    /** Python type name: `generator`, `list_reverseiterator`, … */
    readonly typeName: string,
  ) {}

  next(): IteratorResult<unknown> {
    return this.it.next();
  }
}

/** A Python `range`. */
export class PyRange {
  readonly length: number;
  constructor(
    readonly start: number,
    readonly stop: number,
    readonly step: number,
  ) {
    const n = step > 0 ? Math.ceil((stop - start) / step) : Math.ceil((start - stop) / -step);
    this.length = Math.max(0, n);
  }

  at(i: number): number {
    return this.start + i * this.step;
  }
}

/** `dict.keys()` / `.values()` / `.items()`: re-iterable views with `len()`, printed as `dict_keys([...])`. */
export class DictView {
  constructor(
    readonly kind: 'keys' | 'values' | 'items',
    readonly dict: PyDict | Record<string, unknown>,
  ) {}
}

/** Something callable: a macro, a builtin (`range`, `namespace`, …) or a bound method (`'x'.strip`). */
export class PyCallable {
  constructor(
    /** Python name (for messages, and `<Macro 'name'>` for macros). */
    readonly name: string,
    readonly kind: 'macro' | 'builtin' | 'method',
    readonly call: (args: unknown[], kwargs: Map<string, unknown>) => unknown,
  ) {}
}

/** A plain JS object used as a dict (data from the dataset). */
export type PlainDict = Record<string, unknown>;

/** Whether `v` is a plain JS object (a dict from data), not an array or one of the classes here. */
export function isPlainDict(v: unknown): v is PlainDict {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** Whether `v` is a Python dict. */
export function isDict(v: unknown): v is PyDict | PlainDict {
  return v instanceof PyDict || isPlainDict(v);
}

/** Normalizes a value read from data: a non-integer number becomes a {@link PyFloat}; everything else is kept. */
export function norm(v: unknown): unknown {
  return typeof v === 'number' && !Number.isInteger(v) ? new PyFloat(v) : v;
}

/** Whether `v` is an `int` (Python `bool` is an int subclass but is answered separately by callers). */
export function isInt(v: unknown): v is number {
  return typeof v === 'number';
}

/** Whether `v` is a number in Python's sense (`int`, `float` or `bool`). */
export function isNumberLike(v: unknown): v is number | boolean | PyFloat {
  return typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat;
}

/** The numeric value of an int, bool or float. */
export function numValue(v: number | boolean | PyFloat): number {
  return typeof v === 'number' ? v : typeof v === 'boolean' ? (v ? 1 : 0) : v.v;
}

/** Whether `v` is a Python `str` (`Markup` included). */
export function isStr(v: unknown): v is string | Markup {
  return typeof v === 'string' || v instanceof Markup;
}

/** The characters of a `str` or `Markup`. */
export function strOf(v: string | Markup): string {
  return typeof v === 'string' ? v : v.s;
}

/** An int result, checked to be exactly representable. @throws PyError beyond 2^53 */
export function pyInt(n: number): number {
  if (!Number.isSafeInteger(n)) {
    if (Number.isNaN(n)) throw new PyError('ValueError', 'cannot convert float NaN to integer');
    throw new PyError('OverflowError', `integer ${n} is beyond 2**53, which the renderer cannot represent exactly`);
  }
  return n === 0 ? 0 : n; // no -0 for ints
}

// ---------------------------------------------------------------------------------------------------------------
// Dicts

/** The hash identity of a dict key: equal keys in Python (`1`, `1.0`, `True`) share it. @throws PyError for unhashable keys */
export function hashKey(k: unknown): unknown {
  if (typeof k === 'string' || k === null || typeof k === 'number') return k;
  if (typeof k === 'boolean') return k ? 1 : 0;
  if (k instanceof PyFloat) return k.v;
  if (k instanceof Markup) return k.s;
  if (k instanceof PyTuple) return '\u0000tuple' + k.items.map((x) => String(hashKey(x)) + typeof hashKey(x)).join('\u0000');
  if (k instanceof Undef) return k; // Undefined is hashable by identity-ish; never equal to data keys
  throw new PyError('TypeError', `unhashable type: '${typeName(k)}'`);
}

/** `d[key]` without fallbacks; undefined when the key is absent. */
export function dictGet(d: PyDict | PlainDict, key: unknown): unknown {
  if (d instanceof PyDict) {
    const e = d.m.get(hashKey(key));
    return e === undefined ? undefined : e[1];
  }
  const k = key instanceof Markup ? key.s : key;
  if (typeof k !== 'string') {
    hashKey(k); // unhashable keys raise even against a plain dict
    return undefined;
  }
  if (!Object.prototype.hasOwnProperty.call(d, k)) return undefined;
  const v = d[k];
  return v === undefined ? undefined : norm(v);
}

/** Whether `key in d`. */
export function dictHas(d: PyDict | PlainDict, key: unknown): boolean {
  return dictGet(d, key) !== undefined;
}

/** Keys of a dict in order. */
export function dictKeys(d: PyDict | PlainDict): unknown[] {
  if (d instanceof PyDict) return [...d.m.values()].map((e) => e[0]);
  return Object.keys(d).filter((k) => d[k] !== undefined);
}

/** `[key, value]` pairs of a dict in order. */
export function dictEntries(d: PyDict | PlainDict): [unknown, unknown][] {
  if (d instanceof PyDict) return [...d.m.values()].map((e) => [e[0], e[1]]);
  const out: [unknown, unknown][] = [];
  for (const k of Object.keys(d)) {
    const v = d[k];
    if (v !== undefined) out.push([k, norm(v)]);
  }
  return out;
}

/** `len(d)`. */
export function dictSize(d: PyDict | PlainDict): number {
  return d instanceof PyDict ? d.m.size : dictKeys(d).length;
}

/** A new {@link PyDict} from `[key, value]` pairs. */
export function makeDict(entries: Iterable<[unknown, unknown]>): PyDict {
  const d = new PyDict();
  for (const [k, v] of entries) d.set(k, v);
  return d;
}

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

/** markupsafe `escape(v)`: a Markup stays as is, anything else is `str()`-ed and escaped. */
export function markupEscape(v: unknown): Markup {
  return v instanceof Markup ? v : new Markup(htmlEscape(pyStr(v)));
}

// ---------------------------------------------------------------------------------------------------------------
// Type names, truth, length, iteration

/** Python's `type(v).__name__`. */
export function typeName(v: unknown): string {
  if (typeof v === 'string') return 'str';
  if (typeof v === 'number') return 'int';
  if (typeof v === 'boolean') return 'bool';
  if (v === null) return 'NoneType';
  if (v === undefined) return 'Undefined';
  if (v instanceof PyFloat) return 'float';
  if (Array.isArray(v)) return 'list';
  if (v instanceof PyTuple) return 'tuple';
  if (isDict(v)) return 'dict';
  if (v instanceof Markup) return 'Markup';
  if (v instanceof Undef) return 'Undefined';
  if (v instanceof Namespace) return 'Namespace';
  if (v instanceof PyIter) return v.typeName;
  if (v instanceof PyRange) return 'range';
  if (v instanceof DictView) return `dict_${v.kind}`;
  if (v instanceof PyCallable) return v.kind === 'macro' ? 'Macro' : v.kind === 'method' ? 'builtin_function_or_method' : 'function';
  return (v as object).constructor?.name ?? 'object';
}

/** Python truth value. */
export function truthy(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'number') return v !== 0;
  if (v === null || v === undefined) return false;
  if (v instanceof PyFloat) return v.v !== 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Undef) return false;
  if (v instanceof Markup) return v.s.length > 0;
  if (v instanceof PyTuple) return v.items.length > 0;
  if (isDict(v)) return dictSize(v) > 0;
  if (v instanceof PyRange) return v.length > 0;
  if (v instanceof DictView) return dictSize(v.dict) > 0;
  return true; // iterators, namespaces, callables
}

/** Python `len(v)`. @throws PyError for values without a length */
export function pyLen(v: unknown): number {
  if (typeof v === 'string') return strLen(v);
  if (Array.isArray(v)) return v.length;
  if (v instanceof Markup) return strLen(v.s);
  if (v instanceof PyTuple) return v.items.length;
  if (isDict(v)) return dictSize(v);
  if (v instanceof Undef) return 0;
  if (v instanceof PyRange) return v.length;
  if (v instanceof DictView) return dictSize(v.dict);
  throw new PyError('TypeError', `object of type '${typeName(v)}' has no len()`);
}

/** Python `iter(v)` as a JS iterable (consuming a {@link PyIter}). @throws PyError for non-iterables */
export function pyIter(v: unknown): Iterable<unknown> {
  if (Array.isArray(v)) return v.map(norm);
  if (typeof v === 'string') return isBmp(v) ? v.split('') : codePoints(v);
  if (v instanceof PyTuple) return v.items;
  if (isDict(v)) return dictKeys(v);
  if (v instanceof Undef) return [];
  if (v instanceof Markup) return codePoints(v.s);
  if (v instanceof PyIter) return { [Symbol.iterator]: () => ({ next: () => v.next() }) };
  if (v instanceof PyRange) {
    const out: number[] = [];
    for (let i = 0; i < v.length; i++) out.push(v.at(i));
    return out;
  }
  if (v instanceof DictView) {
    const e = dictEntries(v.dict);
    return v.kind === 'keys' ? e.map((x) => x[0]) : v.kind === 'values' ? e.map((x) => x[1]) : e.map((x) => new PyTuple([x[0], x[1]]));
  }
  throw new PyError('TypeError', `'${typeName(v)}' object is not iterable`);
}

/** `list(v)`. */
export function toList(v: unknown): unknown[] {
  return Array.from(pyIter(v));
}

/** Whether `iter(v)` would succeed. */
export function isIterable(v: unknown): boolean {
  return (
    typeof v === 'string' ||
    Array.isArray(v) ||
    v instanceof PyTuple ||
    isDict(v) ||
    v instanceof Undef ||
    v instanceof Markup ||
    v instanceof PyIter ||
    v instanceof PyRange ||
    v instanceof DictView
  );
}

/** jinja2's `object_type_repr`: `None`, `dict object`, `jinja2.utils.Namespace object`, … */
function objectTypeRepr(obj: unknown): string {
  if (obj === null) return 'None';
  if (obj instanceof Namespace) return 'jinja2.utils.Namespace object';
  if (obj instanceof Markup) return 'markupsafe.Markup object';
  return `${typeName(obj)} object`;
}

/** The message of the Undefined that a missing attribute or item gives (jinja2 `Undefined._undefined_message`). */
export function undefinedMessage(obj: unknown, name: unknown): string {
  if (typeof name === 'string') return `${reprStr(objectTypeRepr(obj))} has no attribute ${reprStr(name)}`;
  return `${objectTypeRepr(obj)} has no element ${pyRepr(name)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Equality and ordering

/** Python `a == b`. */
export function pyEq(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isNumberLike(a)) return isNumberLike(b) && numValue(a) === numValue(b);
  if (isStr(a)) return isStr(b) && strOf(a) === strOf(b);
  if (a === null || b === null) return false;
  if (a instanceof Undef) return b instanceof Undef;
  if (Array.isArray(a)) return Array.isArray(b) && seqEq(a.map(norm), b.map(norm));
  if (a instanceof PyTuple) return b instanceof PyTuple && seqEq(a.items, b.items);
  if (isDict(a)) {
    if (!isDict(b) || dictSize(a) !== dictSize(b)) return false;
    for (const [k, v] of dictEntries(a)) {
      const w = dictGet(b, k);
      if (w === undefined || !pyEq(v, w)) return false;
    }
    return true;
  }
  if (a instanceof PyRange) return b instanceof PyRange && seqEq(toList(a), toList(b));
  return false;
}

function seqEq(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!pyEq(a[i], b[i])) return false;
  return true;
}

/** Code-point order of two strings (Python's), which differs from UTF-16 order above U+D7FF. */
export function compareStr(a: string, b: string): number {
  if (isBmp(a) && isBmp(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = codePoints(a);
  const y = codePoints(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    if (x[i] !== y[i]) return x[i].codePointAt(0)! - y[i].codePointAt(0)!;
  }
  return x.length - y.length;
}

/**
 * Python ordering of `a` and `b` (`<` and friends): numbers, strings, lists and tuples; anything else raises.
 * @param op the operator for the error message
 * @returns negative, zero or positive
 * @throws PyError `TypeError` for unorderable types; `UndefinedError` for an undefined operand
 */
export function pyCompare(a: unknown, b: unknown, op = '<'): number {
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  if (isNumberLike(a) && isNumberLike(b)) {
    const x = numValue(a);
    const y = numValue(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (isStr(a) && isStr(b)) return compareStr(strOf(a), strOf(b));
  const seqA = Array.isArray(a) ? a.map(norm) : a instanceof PyTuple ? a.items : null;
  const seqB = Array.isArray(b) ? b.map(norm) : b instanceof PyTuple ? b.items : null;
  if (seqA && seqB && Array.isArray(a) === Array.isArray(b)) {
    const n = Math.min(seqA.length, seqB.length);
    for (let i = 0; i < n; i++) {
      if (!pyEq(seqA[i], seqB[i])) return pyCompare(seqA[i], seqB[i], op);
    }
    return seqA.length - seqB.length;
  }
  throw new PyError('TypeError', `'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

// ---------------------------------------------------------------------------------------------------------------
// Text: str() and repr()

/** Python's `repr(float)`: the shortest round-trip digits, fixed notation for exponents -4…15 (with `.0` when integral), else `d.ddde±XX`; NaN and infinities as JSON writes them. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  const sign = mant.startsWith('-') ? '-' : '';
  const digits = mant.replace('-', '').replace('.', '');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    return `${sign}${intPart}.${frac || '0'}`;
  }
  const e = Math.abs(exp);
  return `${sign}${digits[0]}${digits.length > 1 ? '.' + digits.slice(1) : ''}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' + e : e}`;
}

/** `str(float)` / `repr(float)` in Python (`inf`, `nan` spelled as Python does). */
export function floatStr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  return pythonFloatRepr(x);
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python `repr(str)`. */
export function reprStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      const cp = ch.codePointAt(0)!;
      out += cp < 0x100 ? '\\x' + hex(cp, 2) : cp < 0x10000 ? '\\u' + hex(cp, 4) : '\\U' + hex(cp, 8);
    } else out += ch;
  }
  return out + quote;
}

function hex(n: number, w: number): string {
  return n.toString(16).padStart(w, '0');
}

/**
 * An int's digits. An integer beyond 2^53 can only come from data (arithmetic refuses to make one) and has already
 * lost digits to JSON parsing; it is still written in digits, as Python writes an int, never as `1e+21`.
 */
function intStr(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : BigInt(n).toString();
}

/** Python `str(v)` as jinja2 prints it (`{{ v }}`): Undefined prints nothing. */
export function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return intStr(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null) return 'None';
  if (v instanceof Undef || v === undefined) return '';
  if (v instanceof Markup) return v.s;
  if (v instanceof PyFloat) return floatStr(v.v);
  return pyRepr(v);
}

/** Python `repr(v)`. */
export function pyRepr(v: unknown): string {
  if (typeof v === 'string') return reprStr(v);
  if (typeof v === 'number') return intStr(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null) return 'None';
  if (v instanceof PyFloat) return floatStr(v.v);
  if (Array.isArray(v)) return `[${v.map((x) => pyRepr(norm(x))).join(', ')}]`;
  if (v instanceof PyTuple) return v.items.length === 1 ? `(${pyRepr(v.items[0])},)` : `(${v.items.map(pyRepr).join(', ')})`;
  if (isDict(v))
    return `{${dictEntries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  if (v instanceof Undef || v === undefined) return 'Undefined';
  if (v instanceof Markup) return `Markup(${reprStr(v.s)})`;
  if (v instanceof Namespace) return `<Namespace {${[...v.attrs].map(([k, x]) => `${reprStr(k)}: ${pyRepr(x)}`).join(', ')}}>`;
  if (v instanceof PyRange) return v.step === 1 ? `range(${v.start}, ${v.stop})` : `range(${v.start}, ${v.stop}, ${v.step})`;
  if (v instanceof DictView) return `dict_${v.kind}(${pyRepr(toList(v))})`;
  if (v instanceof PyCallable && v.kind === 'macro') return `<Macro ${reprStr(v.name)}>`;
  if (v instanceof PyIter) unreproducible(`a ${v.typeName} object`);
  if (v instanceof PyCallable) unreproducible(`the ${v.kind === 'method' ? 'method' : 'function'} ${v.name}`);
  if (v && typeof v === 'object' && 'pyRepr' in v && typeof (v as { pyRepr: unknown }).pyRepr === 'function') return (v as { pyRepr(): string }).pyRepr();
  unreproducible(`a ${typeName(v)} object`);
}

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
