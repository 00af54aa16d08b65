/**
 * Python protocols over template values ({@link ./values}): truth, `len()`, iteration, equality and ordering.
 */
import { viewOf } from './tracedList';
import { codePoints, isBmp, strLen } from './strings';
import {
  dictEntries,
  dictGet,
  dictKeys,
  dictSize,
  DictView,
  isDict,
  isNumberLike,
  isStr,
  Markup,
  norm,
  numValue,
  PyError,
  PyFloat,
  PyIter,
  PyRange,
  PyTuple,
  strOf,
  typeName,
  Undef,
} from './values';

// ---------------------------------------------------------------------------------------------------------------
// Type names, truth, length, iteration

/** Python truth value. */
export function truthy(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.length > 0;
  if (typeof v === 'number') return v !== 0;
  if (v === null || v === undefined) return false;
  if (v instanceof PyFloat) return v.v !== 0;
  if (Array.isArray(v)) {
    const view = viewOf(v); // a traced list observes only whether it is empty (tracedList.ts)
    return view ? view.nonEmpty() : v.length > 0;
  }
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
