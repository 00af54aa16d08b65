/**
 * Attributes of builtin values under transformers' `ImmutableSandboxedEnvironment`: `str`, `list`, `tuple` and
 * `dict` methods; mutating ones are refused (jinja2 `sandbox.py`).
 */
import { asIndex, bind, MISSING } from './args';
import { Env } from './env';
import { pyEq } from './protocols';
import { pyRepr } from './repr';
import { strMethod } from './strMethods';
import {
  dictEntries,
  dictGet,
  DictView,
  isDict,
  isStr,
  makeDict,
  norm,
  numValue,
  PlainDict,
  PyCallable,
  PyDict,
  PyError,
  PyFloat,
  PyRange,
  PyTuple,
} from './values';

// ---------------------------------------------------------------------------------------------------------------
// list / tuple / dict methods (ImmutableSandboxedEnvironment: mutating ones are unsafe)

/** A group of `|groupby`: a tuple `(grouper, list)` with those two attributes (jinja2 `_GroupTuple`). */
export class GroupTuple extends PyTuple {}

/** Attribute names of `list`, `dict` and `set` that the immutable sandbox refuses (jinja2 `sandbox._mutable_spec`). */
const UNSAFE_LIST = new Set(['append', 'clear', 'extend', 'insert', 'pop', 'remove', 'reverse', 'sort']);
const UNSAFE_DICT = new Set(['clear', 'pop', 'popitem', 'setdefault', 'update']);

/** Marker: the attribute exists but the sandbox refuses it. */
export const UNSAFE = Symbol('unsafe');

function seqMethod(recv: unknown[] | PyTuple, name: string): PyCallable | typeof UNSAFE | undefined {
  const items = () => (Array.isArray(recv) ? recv.map(norm) : recv.items);
  const tname = Array.isArray(recv) ? 'list' : 'tuple';
  if (Array.isArray(recv) && UNSAFE_LIST.has(name)) return UNSAFE;
  switch (name) {
    case 'index':
      return new PyCallable(`${tname}.index`, 'method', (a, k) => {
        const [x, st, en] = bind('index', a, k, ['value', 'start', 'stop'], { start: MISSING, stop: MISSING });
        const arr = items();
        const from = st === MISSING ? 0 : asIndex(st, '');
        const to = en === MISSING ? arr.length : asIndex(en, '');
        const lo = from < 0 ? Math.max(0, from + arr.length) : from;
        const hi = to < 0 ? Math.max(0, to + arr.length) : Math.min(to, arr.length);
        for (let i = lo; i < hi; i++) if (pyEq(arr[i], x)) return i;
        throw new PyError('ValueError', `${pyRepr(x)} is not in ${tname}`);
      });
    case 'count':
      return new PyCallable(`${tname}.count`, 'method', (a, k) => {
        const [x] = bind('count', a, k, ['value']);
        return items().filter((y) => pyEq(y, x)).length;
      });
    case 'copy':
      return Array.isArray(recv) ? new PyCallable('list.copy', 'method', (a, k) => (bind('copy', a, k, []), items())) : undefined;
  }
  return undefined;
}

function dictMethod(recv: PyDict | PlainDict, name: string): PyCallable | typeof UNSAFE | undefined {
  if (UNSAFE_DICT.has(name)) return UNSAFE;
  switch (name) {
    case 'get':
      return new PyCallable('dict.get', 'method', (a, k) => {
        if (k.size) throw new PyError('TypeError', 'get() takes no keyword arguments');
        if (a.length < 1 || a.length > 2) throw new PyError('TypeError', `get expected at least 1 argument, got ${a.length}`);
        const v = dictGet(recv, a[0]);
        return v === undefined ? (a.length > 1 ? a[1] : null) : v;
      });
    case 'items':
    case 'keys':
    case 'values':
      return new PyCallable(`dict.${name}`, 'method', (a, k) => (bind(name, a, k, []), new DictView(name, recv)));
    case 'copy':
      return new PyCallable('dict.copy', 'method', (a, k) => (bind('copy', a, k, []), makeDict(dictEntries(recv))));
  }
  return undefined;
}

/**
 * Python attribute lookup `getattr(obj, name)` for the builtin types (methods and a few attributes).
 * @returns the attribute, {@link UNSAFE} when the sandbox refuses it, or undefined when there is none
 */
export function builtinAttribute(env: Env, obj: unknown, name: string): unknown {
  if (name.startsWith('__') && name.endsWith('__')) return UNSAFE; // every object has dunder attributes; all unsafe
  if (isStr(obj)) return strMethod(env, obj, name);
  if (obj instanceof GroupTuple && (name === 'grouper' || name === 'list')) return obj.items[name === 'grouper' ? 0 : 1];
  if (Array.isArray(obj) || obj instanceof PyTuple) return seqMethod(obj, name);
  if (isDict(obj)) return dictMethod(obj, name);
  if (obj instanceof PyRange) {
    if (name === 'start' || name === 'stop' || name === 'step') return obj[name];
    return undefined;
  }
  if (obj instanceof PyFloat) {
    if (name === 'real') return obj;
    if (name === 'imag') return new PyFloat(0);
    if (name === 'is_integer') return new PyCallable('float.is_integer', 'method', () => Number.isInteger(obj.v));
    return undefined;
  }
  if (typeof obj === 'number' || typeof obj === 'boolean') {
    if (name === 'real' || name === 'numerator') return numValue(obj);
    if (name === 'imag') return 0;
    if (name === 'denominator') return 1;
    return undefined;
  }
  return undefined;
}
