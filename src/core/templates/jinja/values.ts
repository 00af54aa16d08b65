/**
 * Python values as jinja2 sees them, for the chat-template renderer ({@link ./compiledTemplate}).
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
import { bornStamp, journalConsume, type Born } from './journal';

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
  /** In JSON.stringify (display of adapted messages): the number. */
  toJSON(): number {
    return this.v;
  }
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
export class Namespace implements Born {
  readonly born = bornStamp();
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
export class PyIter implements Born {
  readonly born = bornStamp();
  constructor(
    private readonly it: Iterator<unknown>,
    /** Python type name: `generator`, `list_reverseiterator`, … */
    readonly typeName: string,
  ) {}

  /** Advances the iterator (noted in the journal of a traced render: it cannot be undone). */
  next(): IteratorResult<unknown> {
    journalConsume(this);
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
