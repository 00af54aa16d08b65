/**
 * jinja2's builtin filters, tests and globals, and the methods of `str`, `list`, `tuple` and `dict`, with the
 * semantics of jinja2 3.1 under `transformers`' `ImmutableSandboxedEnvironment` (Python 3): what each returns,
 * which are lazy generators, and what raises. Used by {@link ./jinjaCompat}.
 *
 * Source of the rules: jinja2 3.1 `filters.py`, `tests.py`, `defaults.py`, `sandbox.py` and `utils.py`
 * (behaviour, not code), checked against Python jinja2 3.1.6 (`scripts/jinja-reference.py`).
 */
import type { BudgetMeter } from './renderBudget';
import { formatValue, percentFormat, roundFloat, strFormat } from './pyFormat';
import {
  codePoints,
  DictView,
  dictEntries,
  dictGet,
  hashKey,
  htmlEscape,
  isBmp,
  isDict,
  isIterable,
  isNumberLike,
  isPySpace,
  isStr,
  makeDict,
  Markup,
  markupEscape,
  Namespace,
  norm,
  numValue,
  PyCallable,
  PyDict,
  PyError,
  PyFloat,
  pyCompare,
  pyEq,
  pyInt,
  PyIter,
  pyIter,
  pyJsonDumps,
  pyLen,
  PyRange,
  pyRepr,
  pyReplace,
  pyRsplit,
  pySplit,
  pySplitlines,
  pyStr,
  pyStrip,
  PyTuple,
  strLen,
  strOf,
  toList,
  truthy,
  typeName,
  Undef,
  undefinedMessage,
  type PlainDict,
} from './pyValues';

/** The sandbox's undefined for a refused attribute: prints as nothing, raises `SecurityError` when used. */
export function unsafeUndef(obj: unknown, name: string): Undef {
  return new Undef(() => `access to attribute '${name}' of '${typeName(obj)}' object is unsafe.`, 'SecurityError');
}

/** What builtins need from the renderer. */
export interface Env {
  /** `obj.name` (jinja2 `Getattr`: attribute first, then item; sandboxed). */
  getattr(obj: unknown, name: string): unknown;
  /** `obj[key]` (jinja2 `Getitem`: item first, then attribute). */
  getitem(obj: unknown, key: unknown): unknown;
  callFilter(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown;
  callTest(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): boolean;
  call(fn: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown;
  /** Python attribute lookup only (`getattr(obj, name)`, no item fallback): the value, {@link UNSAFE}, or undefined when absent. */
  attribute(obj: unknown, name: string): unknown;
  readonly meter: BudgetMeter;
}

type Builtin = (env: Env, value: unknown, args: unknown[], kwargs: Map<string, unknown>) => unknown;

/** No value given for a parameter (distinct from None). */
const MISSING = Symbol('missing');

/**
 * Binds Python call arguments to parameters.
 * @param params parameter names; `defaults[name]` holds each optional one's default
 * @returns one value per parameter (MISSING where neither given nor defaulted)
 * @throws PyError `TypeError` for unknown keywords, duplicates or too many positionals
 */
function bind(fname: string, args: unknown[], kwargs: Map<string, unknown>, params: string[], defaults: Record<string, unknown> = {}): unknown[] {
  if (args.length > params.length) throw new PyError('TypeError', `${fname}() takes at most ${params.length} argument(s) (${args.length} given)`);
  const out: unknown[] = params.map((p, i) => (i < args.length ? args[i] : p in defaults ? defaults[p] : MISSING));
  for (const [k, v] of kwargs) {
    const i = params.indexOf(k);
    if (i < 0) throw new PyError('TypeError', `${fname}() got an unexpected keyword argument '${k}'`);
    if (i < args.length) throw new PyError('TypeError', `${fname}() got multiple values for argument '${k}'`);
    out[i] = v;
  }
  params.forEach((p, i) => {
    if (out[i] === MISSING && !(p in defaults)) throw new PyError('TypeError', `${fname}() missing required argument: '${p}'`);
  });
  return out;
}

/** The int value of an argument Python requires to be an integer (`bool` is one). */
function asIndex(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Undef) v.fail();
  throw new PyError('TypeError', `'${typeName(v)}' object cannot be interpreted as an integer${what ? ` (${what})` : ''}`);
}

function optStr(v: unknown, what: string): string | null {
  if (v === null || v === MISSING) return null;
  if (isStr(v)) return strOf(v);
  throw new PyError('TypeError', `${what} arg must be None or str`);
}

/** jinja2 `soft_str`: a Markup stays Markup, anything else becomes `str(v)`. */
function softStr(v: unknown): string | Markup {
  return v instanceof Markup ? v : pyStr(v);
}

/** Wraps a str result back into Markup when the receiver was Markup. */
function like(receiver: string | Markup, s: string): string | Markup {
  return receiver instanceof Markup ? new Markup(s) : s;
}

function gen(typeName: string, f: () => Generator<unknown>): PyIter {
  return new PyIter(f(), typeName);
}

/**
 * Python `slice(start, stop, step).indices(n)`: the first index, the bound and the step.
 * @throws PyError `ValueError` for a zero step
 */
export function sliceIndices(n: number, start: number | null, stop: number | null, step: number | null): [number, number, number] {
  const st = step ?? 1;
  if (st === 0) throw new PyError('ValueError', 'slice step cannot be zero');
  const adj = (v: number | null, dflt: number, lo: number, hi: number) => {
    if (v === null) return dflt;
    if (v < 0) {
      v += n;
      return v < lo ? lo : v;
    }
    return v > hi ? hi : v;
  };
  return st > 0 ? [adj(start, 0, 0, n), adj(stop, n, 0, n), st] : [adj(start, n - 1, -1, n - 1), adj(stop, -1, -1, n - 1), st];
}

/** Python slice of a sequence. @throws PyError `ValueError` for a zero step */
export function pySlice<T>(arr: readonly T[], start: number | null, stop: number | null, step: number | null): T[] {
  const [a, b, st] = sliceIndices(arr.length, start, stop, step);
  const out: T[] = [];
  if (st > 0) for (let i = a; i < b; i += st) out.push(arr[i]);
  else for (let i = a; i > b; i += st) out.push(arr[i]);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Python str methods

function isCased(ch: string): boolean {
  return /[\p{Lowercase}\p{Uppercase}\p{Lt}]/u.test(ch);
}

/** Title case of one character (Python `str.title()` uses titlecase, not uppercase, for a few digraphs). */
function titleChar(ch: string): string {
  const special: Record<string, string> = { ß: 'Ss', Ǆ: 'ǅ', ǅ: 'ǅ', ǆ: 'ǅ', Ǉ: 'ǈ', ǈ: 'ǈ', ǉ: 'ǈ', Ǌ: 'ǋ', ǋ: 'ǋ', ǌ: 'ǋ', Ǳ: 'ǲ', ǲ: 'ǲ', ǳ: 'ǲ' };
  return special[ch] ?? ch.toUpperCase();
}

/** Python `str.title()`. */
export function pyTitle(s: string): string {
  let out = '';
  let prevCased = false;
  for (const ch of s) {
    const c = prevCased ? ch.toLowerCase() : titleChar(ch);
    out += c;
    prevCased = isCased(ch);
  }
  return out;
}

/** Python `str.capitalize()`: first character title-cased, the rest lower-cased. */
export function pyCapitalize(s: string): string {
  if (!s) return s;
  const cps = codePoints(s);
  return titleChar(cps[0]) + cps.slice(1).join('').toLowerCase();
}

/** Code-point index helpers for find/index/count with optional start/end (Python slice-style bounds). */
function window(s: string, start: unknown, end: unknown): { cps: string[] | null; text: string; offset: number } {
  const n = strLen(s);
  const norm1 = (v: unknown, d: number) => {
    if (v === MISSING || v === null || v === undefined) return d;
    let i = asIndex(v, 'slice index');
    if (i < 0) i = Math.max(0, i + n);
    return Math.min(i, n);
  };
  const a = norm1(start, 0);
  const b = norm1(end, n);
  if (isBmp(s)) return { cps: null, text: b >= a ? s.slice(a, b) : '', offset: a };
  const cps = codePoints(s);
  return { cps, text: b >= a ? cps.slice(a, b).join('') : '', offset: a };
}

function cpIndex(text: string, unitIndex: number): number {
  return isBmp(text) ? unitIndex : codePoints(text.slice(0, unitIndex)).length;
}

function pyCount(s: string, sub: string, start: unknown, end: unknown): number {
  const w = window(s, start, end);
  if (sub === '') return strLen(w.text) + 1;
  let n = 0;
  for (let at = w.text.indexOf(sub); at >= 0; at = w.text.indexOf(sub, at + sub.length)) n++;
  return n;
}

function pyFind(s: string, sub: string, start: unknown, end: unknown, right: boolean): number {
  const w = window(s, start, end);
  const at = right ? w.text.lastIndexOf(sub) : w.text.indexOf(sub);
  return at < 0 ? -1 : w.offset + cpIndex(w.text, at);
}

function affixTest(s: string, affix: unknown, start: unknown, end: unknown, ends: boolean): boolean {
  const name = ends ? 'endswith' : 'startswith';
  const list = affix instanceof PyTuple ? affix.items : [affix];
  if (!(affix instanceof PyTuple) && !isStr(affix)) throw new PyError('TypeError', `${name} first arg must be str or a tuple of str, not ${typeName(affix)}`);
  const w = window(s, start, end);
  for (const a of list) {
    if (!isStr(a)) throw new PyError('TypeError', `tuple for ${name} must only contain str, not ${typeName(a)}`);
    if (ends ? w.text.endsWith(strOf(a)) : w.text.startsWith(strOf(a))) return true;
  }
  return false;
}

function justify(s: string, width: number, fill: string, how: 'l' | 'r' | 'c'): string {
  const n = strLen(s);
  if (width <= n) return s;
  const marg = width - n;
  if (how === 'l') return s + fill.repeat(marg);
  if (how === 'r') return fill.repeat(marg) + s;
  const left = Math.floor(marg / 2) + (marg & width & 1);
  return fill.repeat(left) + s + fill.repeat(marg - left);
}

function fillChar(v: unknown): string {
  if (v === MISSING) return ' ';
  if (!isStr(v) || strLen(strOf(v)) !== 1) throw new PyError('TypeError', 'The fill character must be exactly one character long');
  return strOf(v);
}

function pyExpandtabs(s: string, tab: number): string {
  let out = '';
  let col = 0;
  for (const ch of s) {
    if (ch === '\t') {
      if (tab > 0) {
        const n = tab - (col % tab);
        out += ' '.repeat(n);
        col += n;
      }
    } else {
      out += ch;
      col = ch === '\n' || ch === '\r' ? 0 : col + 1;
    }
  }
  return out;
}

/** Methods of str that markupsafe's Markup re-wraps (escaping their string arguments). */
const MARKUP_WRAPPED = new Set([
  'capitalize',
  'title',
  'lower',
  'upper',
  'replace',
  'ljust',
  'rjust',
  'lstrip',
  'rstrip',
  'center',
  'strip',
  'expandtabs',
  'swapcase',
  'zfill',
  'removeprefix',
  'removesuffix',
  'format',
  'join',
  'split',
  'rsplit',
  'splitlines',
  'partition',
  'rpartition',
]);

/** Python `str.islower()`: some cased character, none upper or title case. */
function pyIsLower(s: string): boolean {
  return /\p{Lowercase}/u.test(s) && !/[\p{Uppercase}\p{Lt}]/u.test(s);
}

/** Python `str.isupper()`. */
function pyIsUpper(s: string): boolean {
  return /\p{Uppercase}/u.test(s) && !/[\p{Lowercase}\p{Lt}]/u.test(s);
}

type StrMethod = (env: Env, s: string, args: unknown[], kwargs: Map<string, unknown>) => unknown;

/** `str` methods that accept keyword arguments (Python 3.11); the others take positional arguments only. */
const STR_KEYWORD_METHODS = new Set(['split', 'rsplit', 'splitlines', 'expandtabs', 'format']);

const strArg = (v: unknown, what: string): string => {
  if (isStr(v)) return strOf(v);
  throw new PyError('TypeError', `${what} must be str, not ${typeName(v)}`);
};

const STR_METHODS: Record<string, StrMethod> = {
  strip: (_e, s, a, k) => pyStrip(s, optStr(bind('strip', a, k, ['chars'], { chars: null })[0], 'strip'), true, true),
  lstrip: (_e, s, a, k) => pyStrip(s, optStr(bind('lstrip', a, k, ['chars'], { chars: null })[0], 'lstrip'), true, false),
  rstrip: (_e, s, a, k) => pyStrip(s, optStr(bind('rstrip', a, k, ['chars'], { chars: null })[0], 'rstrip'), false, true),
  split: (_e, s, a, k) => {
    const [sep, max] = bind('split', a, k, ['sep', 'maxsplit'], { sep: null, maxsplit: -1 });
    return pySplit(s, optStr(sep, 'split'), asIndex(max, 'maxsplit'));
  },
  rsplit: (_e, s, a, k) => {
    const [sep, max] = bind('rsplit', a, k, ['sep', 'maxsplit'], { sep: null, maxsplit: -1 });
    return pyRsplit(s, optStr(sep, 'rsplit'), asIndex(max, 'maxsplit'));
  },
  splitlines: (_e, s, a, k) => pySplitlines(s, truthy(bind('splitlines', a, k, ['keepends'], { keepends: false })[0])),
  replace: (e, s, a, k) => {
    const [o, n, c] = bind('replace', a, k, ['old', 'new', 'count'], { count: -1 });
    const out = pyReplace(s, strArg(o, 'replace() argument 1'), strArg(n, 'replace() argument 2'), asIndex(c, 'count'));
    e.meter.length(out.length);
    return out;
  },
  startswith: (_e, s, a, k) => {
    const [p, st, en] = bind('startswith', a, k, ['prefix', 'start', 'end'], { start: null, end: null });
    return affixTest(s, p, st, en, false);
  },
  endswith: (_e, s, a, k) => {
    const [p, st, en] = bind('endswith', a, k, ['suffix', 'start', 'end'], { start: null, end: null });
    return affixTest(s, p, st, en, true);
  },
  upper: (_e, s, a, k) => (bind('upper', a, k, []), s.toUpperCase()),
  lower: (_e, s, a, k) => (bind('lower', a, k, []), s.toLowerCase()),
  casefold: (_e, s, a, k) => (bind('casefold', a, k, []), s.toLowerCase().replace(/ß/g, 'ss')),
  title: (_e, s, a, k) => (bind('title', a, k, []), pyTitle(s)),
  capitalize: (_e, s, a, k) => (bind('capitalize', a, k, []), pyCapitalize(s)),
  swapcase: (_e, s, a, k) => (bind('swapcase', a, k, []), Array.from(s, (c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join('')),
  count: (_e, s, a, k) => {
    const [sub, st, en] = bind('count', a, k, ['sub', 'start', 'end'], { start: null, end: null });
    return pyCount(s, strArg(sub, 'count() argument 1'), st, en);
  },
  find: (_e, s, a, k) => {
    const [sub, st, en] = bind('find', a, k, ['sub', 'start', 'end'], { start: null, end: null });
    return pyFind(s, strArg(sub, 'find() argument 1'), st, en, false);
  },
  rfind: (_e, s, a, k) => {
    const [sub, st, en] = bind('rfind', a, k, ['sub', 'start', 'end'], { start: null, end: null });
    return pyFind(s, strArg(sub, 'rfind() argument 1'), st, en, true);
  },
  index: (_e, s, a, k) => {
    const [sub, st, en] = bind('index', a, k, ['sub', 'start', 'end'], { start: null, end: null });
    const i = pyFind(s, strArg(sub, 'index() argument 1'), st, en, false);
    if (i < 0) throw new PyError('ValueError', 'substring not found');
    return i;
  },
  rindex: (_e, s, a, k) => {
    const [sub, st, en] = bind('rindex', a, k, ['sub', 'start', 'end'], { start: null, end: null });
    const i = pyFind(s, strArg(sub, 'rindex() argument 1'), st, en, true);
    if (i < 0) throw new PyError('ValueError', 'substring not found');
    return i;
  },
  join: (e, s, a, k) => {
    const [it] = bind('join', a, k, ['iterable']);
    const parts = toList(it).map((x, i) => {
      if (!isStr(x)) throw new PyError('TypeError', `sequence item ${i}: expected str instance, ${typeName(x)} found`);
      return strOf(x);
    });
    const out = parts.join(s);
    e.meter.length(out.length);
    return out;
  },
  center: (e, s, a, k) => {
    const [w, f] = bind('center', a, k, ['width', 'fillchar'], { fillchar: MISSING });
    e.meter.length(asIndex(w, 'width'));
    return justify(s, asIndex(w, 'width'), fillChar(f), 'c');
  },
  ljust: (e, s, a, k) => {
    const [w, f] = bind('ljust', a, k, ['width', 'fillchar'], { fillchar: MISSING });
    e.meter.length(asIndex(w, 'width'));
    return justify(s, asIndex(w, 'width'), fillChar(f), 'l');
  },
  rjust: (e, s, a, k) => {
    const [w, f] = bind('rjust', a, k, ['width', 'fillchar'], { fillchar: MISSING });
    e.meter.length(asIndex(w, 'width'));
    return justify(s, asIndex(w, 'width'), fillChar(f), 'r');
  },
  zfill: (e, s, a, k) => {
    const w = asIndex(bind('zfill', a, k, ['width'])[0], 'width');
    e.meter.length(w);
    const n = strLen(s);
    if (w <= n) return s;
    const sign = s[0] === '+' || s[0] === '-' ? s[0] : '';
    return sign + '0'.repeat(w - n) + s.slice(sign.length);
  },
  partition: (_e, s, a, k) => {
    const sep = strArg(bind('partition', a, k, ['sep'])[0], 'partition() argument');
    if (sep === '') throw new PyError('ValueError', 'empty separator');
    const at = s.indexOf(sep);
    return at < 0 ? new PyTuple([s, '', '']) : new PyTuple([s.slice(0, at), sep, s.slice(at + sep.length)]);
  },
  rpartition: (_e, s, a, k) => {
    const sep = strArg(bind('rpartition', a, k, ['sep'])[0], 'rpartition() argument');
    if (sep === '') throw new PyError('ValueError', 'empty separator');
    const at = s.lastIndexOf(sep);
    return at < 0 ? new PyTuple(['', '', s]) : new PyTuple([s.slice(0, at), sep, s.slice(at + sep.length)]);
  },
  removeprefix: (_e, s, a, k) => {
    const p = strArg(bind('removeprefix', a, k, ['prefix'])[0], 'removeprefix() argument');
    return p && s.startsWith(p) ? s.slice(p.length) : s;
  },
  removesuffix: (_e, s, a, k) => {
    const p = strArg(bind('removesuffix', a, k, ['suffix'])[0], 'removesuffix() argument');
    return p && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
  },
  expandtabs: (_e, s, a, k) => pyExpandtabs(s, asIndex(bind('expandtabs', a, k, ['tabsize'], { tabsize: 8 })[0], 'tabsize')),
  format: (e, s, a, k) =>
    strFormat(
      s,
      a,
      k,
      (o, n) => e.getattr(o, n),
      (o, i) => e.getitem(o, i),
      false,
    ),
  format_map: (e, s, a, k) => {
    const [m] = bind('format_map', a, k, ['mapping']);
    if (!isDict(m)) throw new PyError('TypeError', `'${typeName(m)}' object is not a mapping`);
    return strFormat(
      s,
      [],
      new Map(dictEntries(m).map(([key, v]) => [pyStr(key), v])),
      (o, n) => e.getattr(o, n),
      (o, i) => e.getitem(o, i),
      false,
    );
  },
  isalpha: (_e, s) => s.length > 0 && /^\p{L}+$/u.test(s),
  isalnum: (_e, s) => s.length > 0 && /^[\p{L}\p{N}]+$/u.test(s),
  isdigit: (_e, s) => s.length > 0 && /^[\p{Nd}\u00b2\u00b3\u00b9\u2070-\u2079\u2080-\u2089\u2460-\u2468\u2474-\u247c\u2488-\u2490]+$/u.test(s),
  isdecimal: (_e, s) => s.length > 0 && /^\p{Nd}+$/u.test(s),
  isnumeric: (_e, s) => s.length > 0 && /^\p{N}+$/u.test(s),
  isspace: (_e, s) => s.length > 0 && Array.from(s).every(isPySpace),
  islower: (_e, s) => pyIsLower(s),
  isupper: (_e, s) => pyIsUpper(s),
  istitle: (_e, s) => s.length > 0 && pyTitle(s) === s && /[\p{Lowercase}\p{Uppercase}\p{Lt}]/u.test(s),
  isascii: (_e, s) => /^[\x00-\x7f]*$/.test(s),
  isidentifier: (_e, s) => /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u.test(s),
  isprintable: (_e, s) => !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u.test(s.replace(/ /g, '')),
};

/** `s.name` for a str or Markup receiver: a bound method, or undefined when str has no such method. */
function strMethod(env: Env, recv: string | Markup, name: string): PyCallable | undefined {
  const f = STR_METHODS[name];
  if (!f) return undefined;
  const markup = recv instanceof Markup;
  const s = strOf(recv);
  return new PyCallable(`str.${name}`, 'method', (args, kwargs) => {
    if (kwargs.size && !STR_KEYWORD_METHODS.has(name)) throw new PyError('TypeError', `str.${name}() takes no keyword arguments`);
    if (!markup) return f(env, s, args, kwargs);
    if (name === 'format')
      return new Markup(
        strFormat(
          s,
          args,
          kwargs,
          (o, n) => env.getattr(o, n),
          (o, i) => env.getitem(o, i),
          true,
        ),
      );
    if (!MARKUP_WRAPPED.has(name)) return f(env, s, args, kwargs);
    const esc = (v: unknown) => (isStr(v) ? markupEscape(v).s : v);
    const escArgs = name === 'join' ? [toList(args[0]).map((x) => markupEscape(x).s)] : args.map(esc);
    const r = f(env, s, escArgs, new Map([...kwargs].map(([k, v]) => [k, esc(v)])));
    if (typeof r === 'string') return new Markup(r);
    if (Array.isArray(r)) return r.map((x) => (typeof x === 'string' ? new Markup(x) : x));
    if (r instanceof PyTuple) return new PyTuple(r.items.map((x) => (typeof x === 'string' ? new Markup(x) : x)));
    return r;
  });
}

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

// ---------------------------------------------------------------------------------------------------------------
// Filters

/** jinja2 `make_attrgetter`: `attribute` may be dotted (`a.b`), digit parts index lists. */
function attrGetter(env: Env, attribute: unknown, post?: (v: unknown) => unknown, dflt?: unknown): (item: unknown) => unknown {
  let parts: unknown[];
  if (isStr(attribute))
    parts = strOf(attribute)
      .split('.')
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  else parts = [attribute];
  return (item: unknown) => {
    for (const p of parts) {
      item = env.getitem(item, p);
      if (dflt !== undefined && dflt !== null && item instanceof Undef) item = dflt;
    }
    return post ? post(item) : item;
  };
}

const ignoreCase = (v: unknown): unknown => (isStr(v) ? (v instanceof Markup ? new Markup(v.s.toLowerCase()) : v.toLowerCase()) : v);

function sortBy<T>(items: T[], key: (x: T) => unknown, reverse: boolean): T[] {
  const keyed = items.map((x) => [key(x), x] as const);
  keyed.sort((p, q) => (reverse ? pyCompare(q[0], p[0]) : pyCompare(p[0], q[0])));
  return keyed.map((p) => p[1]);
}

function selectOrReject(env: Env, value: unknown, args: unknown[], kwargs: Map<string, unknown>, select: boolean, lookupAttr: boolean): PyIter {
  return gen('generator', function* () {
    if (!truthy(value)) return;
    let trans = (x: unknown) => x;
    let off = 0;
    if (lookupAttr) {
      if (args.length < 1) throw new PyError('FilterArgumentError', 'Missing parameter for attribute name');
      trans = attrGetter(env, args[0]);
      off = 1;
    }
    let test: (x: unknown) => boolean;
    if (args.length > off) {
      const name = args[off];
      const rest = args.slice(off + 1);
      test = (x) => env.callTest(pyStr(name), x, rest, kwargs);
    } else test = truthy;
    for (const item of pyIter(value)) {
      env.meter.step();
      if (test(trans(item)) === select) yield item;
    }
  });
}

function minMax(env: Env, value: unknown, args: unknown[], kwargs: Map<string, unknown>, max: boolean): unknown {
  const [cs, attribute] = bind(max ? 'max' : 'min', args, kwargs, ['case_sensitive', 'attribute'], { case_sensitive: false, attribute: null });
  const items = toList(value);
  if (items.length === 0) return new Undef('No aggregated item, sequence was empty.');
  const key = attrGetter(env, attribute === null ? null : attribute, truthy(cs) ? undefined : ignoreCase);
  const getKey = attribute === null ? (x: unknown) => (truthy(cs) ? x : ignoreCase(x)) : key;
  let best = items[0];
  let bestKey = getKey(best);
  for (const x of items.slice(1)) {
    const k = getKey(x);
    const c = pyCompare(k, bestKey);
    if (max ? c > 0 : c < 0) {
      best = x;
      bestKey = k;
    }
  }
  return best;
}

function toInt(v: unknown, base: number): number | null {
  v = norm(v);
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof PyFloat) return Number.isFinite(v.v) ? pyInt(Math.trunc(v.v)) : null;
  if (isStr(v)) {
    let s = pyStrip(strOf(v), null, true, true).replace(/(?<=[0-9a-zA-Z])_(?=[0-9a-zA-Z])/g, '');
    let sign = 1;
    if (s[0] === '+' || s[0] === '-') {
      if (s[0] === '-') sign = -1;
      s = s.slice(1);
    }
    let b = base;
    const pfx = /^0([xob])/i.exec(s);
    if (pfx && (b === 0 || b === { x: 16, o: 8, b: 2 }[pfx[1].toLowerCase() as 'x' | 'o' | 'b'])) {
      b = { x: 16, o: 8, b: 2 }[pfx[1].toLowerCase() as 'x' | 'o' | 'b'];
      s = s.slice(2);
    } else if (b === 0) b = 10;
    const digits = '0123456789abcdefghijklmnopqrstuvwxyz'.slice(0, b);
    if (!s || ![...s.toLowerCase()].every((c) => digits.includes(c))) return null;
    return pyInt(sign * parseInt(s, b));
  }
  return null;
}

function toFloat(v: unknown): number | null {
  v = norm(v);
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof PyFloat) return v.v;
  if (isStr(v)) {
    const s = pyStrip(strOf(v), null, true, true)
      .replace(/(?<=\d)_(?=\d)/g, '')
      .toLowerCase();
    if (/^[+-]?(inf|infinity)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
    if (/^[+-]?nan$/.test(s)) return NaN;
    if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(s)) return null;
    return Number(s);
  }
  return null;
}

function roundInt(n: number, digits: number): number {
  if (digits >= 0) return n;
  const p = 10 ** -digits;
  const q = Math.floor(n / p);
  const r = n - q * p;
  let k = q;
  if (r * 2 > p || (r * 2 === p && q % 2 !== 0)) k = q + 1;
  return pyInt(k * p);
}

function indent(s: string | Markup, width: unknown, first: unknown, blank: unknown): string | Markup {
  const ind = isStr(width) ? strOf(width) : ' '.repeat(Math.max(0, asIndex(width, 'width')));
  let text = strOf(s) + '\n';
  const lines = pySplitlines(text);
  let rv: string;
  if (truthy(blank)) rv = lines.join('\n' + ind);
  else {
    rv = lines.shift() ?? '';
    if (lines.length) rv += '\n' + lines.map((l) => (l ? ind + l : l)).join('\n');
  }
  if (truthy(first)) rv = ind + rv;
  text = rv;
  return like(s, text);
}

const URL_SAFE = /[A-Za-z0-9_.\-~]/;
function urlQuote(v: unknown, forQs: boolean): string {
  const bytes = new TextEncoder().encode(pyStr(v));
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && (URL_SAFE.test(c) || (!forQs && c === '/')) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return forQs ? out.replace(/%20/g, '+') : out;
}

function striptags(s: string): string {
  let v = s;
  for (;;) {
    const a = v.indexOf('<!--');
    if (a < 0) break;
    const b = v.indexOf('-->', a);
    if (b < 0) break;
    v = v.slice(0, a) + v.slice(b + 3);
  }
  for (;;) {
    const a = v.indexOf('<');
    if (a < 0) break;
    const b = v.indexOf('>', a);
    if (b < 0) break;
    v = v.slice(0, a) + v.slice(b + 1);
  }
  v = pySplit(v, null, -1).join(' ');
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
  return v.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (m, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
    return named[e] ?? m;
  });
}

/** pprint.pformat for values whose repr fits one line (dict keys sorted, as pformat does). */
function pformat(v: unknown): string {
  const rec = (x: unknown): string => {
    x = norm(x);
    if (Array.isArray(x)) return `[${x.map(rec).join(', ')}]`;
    if (x instanceof PyTuple) return x.items.length === 1 ? `(${rec(x.items[0])},)` : `(${x.items.map(rec).join(', ')})`;
    if (isDict(x))
      return `{${sortBy(dictEntries(x), (e) => e[0], false)
        .map(([k, y]) => `${pyRepr(k)}: ${rec(y)}`)
        .join(', ')}}`;
    return pyRepr(x);
  };
  const s = rec(v);
  if (s.length > 80) throw new PyError('Unsupported', 'pprint of a value longer than 80 characters (pformat wraps it) is not supported by the renderer');
  return s;
}

function unsupported(name: string): Builtin {
  return () => {
    throw new PyError('Unsupported', `the '${name}' filter is not supported by the renderer (its Python output is random or not implemented)`);
  };
}

/** The filters of transformers' jinja2 environment (jinja2 3.1 builtins, `tojson` replaced by transformers'). */
export const FILTERS: Record<string, Builtin> = {
  abs: (_e, v, a, k) => {
    bind('abs', a, k, []);
    v = norm(v);
    if (typeof v === 'number') return Math.abs(v);
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (v instanceof PyFloat) return new PyFloat(Math.abs(v.v));
    if (v instanceof Undef) v.fail();
    throw new PyError('TypeError', `bad operand type for abs(): '${typeName(v)}'`);
  },
  attr: (e, v, a, k) => {
    // jinja2 do_attr: Python attribute lookup only (no item fallback), sandboxed.
    const name = pyStr(bind('attr', a, k, ['name'])[0]);
    if (v instanceof Undef) v.fail();
    const got = e.attribute(v, name);
    if (got === UNSAFE) return unsafeUndef(v, name);
    return got !== undefined ? got : new Undef(() => undefinedMessage(v, name));
  },
  batch: (_e, v, a, k) => {
    const [count, fill] = bind('batch', a, k, ['linecount', 'fill_with'], { fill_with: null });
    const n = asIndex(count, 'linecount');
    return gen('generator', function* () {
      let tmp: unknown[] = [];
      for (const x of pyIter(v)) {
        if (tmp.length === n) {
          yield tmp;
          tmp = [];
        }
        tmp.push(x);
      }
      if (tmp.length) {
        if (fill !== null) while (tmp.length < n) tmp.push(fill);
        yield tmp;
      }
    });
  },
  capitalize: (_e, v, a, k) => {
    bind('capitalize', a, k, []);
    const s = softStr(v);
    return like(s, pyCapitalize(strOf(s)));
  },
  center: (e, v, a, k) => {
    const [w] = bind('center', a, k, ['width'], { width: 80 });
    e.meter.length(asIndex(w, 'width'));
    const s = softStr(v);
    return like(s, justify(strOf(s), asIndex(w, 'width'), ' ', 'c'));
  },
  count: (_e, v, a, k) => (bind('count', a, k, []), pyLen(v)),
  default: (_e, v, a, k) => {
    const [d, boolean] = bind('default', a, k, ['default_value', 'boolean'], { default_value: '', boolean: false });
    return v instanceof Undef || (truthy(boolean) && !truthy(v)) ? d : v;
  },
  dictsort: (_e, v, a, k) => {
    const [cs, by, reverse] = bind('dictsort', a, k, ['case_sensitive', 'by', 'reverse'], { case_sensitive: false, by: 'key', reverse: false });
    const pos = pyStr(by) === 'key' ? 0 : pyStr(by) === 'value' ? 1 : -1;
    if (pos < 0) throw new PyError('FilterArgumentError', 'You can only sort by either "key" or "value"');
    if (v instanceof Undef) v.fail();
    if (!isDict(v)) throw new PyError('AttributeError', `'${typeName(v)}' object has no attribute 'items'`);
    const entries = dictEntries(v).map(([key, val]) => new PyTuple([key, val]));
    return sortBy(entries, (t) => (truthy(cs) ? t.items[pos] : ignoreCase(t.items[pos])), truthy(reverse));
  },
  escape: (_e, v, a, k) => (bind('escape', a, k, []), markupEscape(v instanceof Undef ? '' : v)),
  filesizeformat: (_e, v, a, k) => {
    const [binary] = bind('filesizeformat', a, k, ['binary'], { binary: false });
    const b = toFloat(v);
    if (b === null) throw new PyError('TypeError', `float() argument must be a string or a real number, not '${typeName(v)}'`);
    const base = truthy(binary) ? 1024 : 1000;
    const prefixes = truthy(binary) ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'] : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
    if (b === 1) return '1 Byte';
    if (b < base) return `${Math.trunc(b)} Bytes`;
    let unit = base;
    for (let i = 0; i < prefixes.length; i++) {
      unit = base ** (i + 2);
      if (b < unit) return `${formatValue(new PyFloat((base * b) / unit), '.1f')} ${prefixes[i]}`;
    }
    return `${formatValue(new PyFloat((base * b) / unit), '.1f')} ${prefixes[prefixes.length - 1]}`;
  },
  first: (_e, v, a, k) => {
    bind('first', a, k, []);
    for (const x of pyIter(v)) return x;
    return new Undef('No first item, sequence was empty.');
  },
  float: (_e, v, a, k) => {
    const [d] = bind('float', a, k, ['default'], { default: new PyFloat(0) });
    const f = toFloat(v);
    return f === null ? d : new PyFloat(f);
  },
  forceescape: (_e, v, a, k) => (bind('forceescape', a, k, []), new Markup(htmlEscape(pyStr(v instanceof Markup ? v.s : v)))),
  format: (_e, v, a, k) => {
    if (a.length && k.size) throw new PyError('FilterArgumentError', "can't handle positional and keyword arguments at the same time");
    const s = softStr(v);
    const args = k.size ? makeDict([...k]) : new PyTuple(a);
    const out = percentFormat(strOf(s), args, s instanceof Markup);
    return like(s, out);
  },
  groupby: (e, v, a, k) => {
    const [attribute, dflt, cs] = bind('groupby', a, k, ['attribute', 'default', 'case_sensitive'], { default: null, case_sensitive: false });
    const expr = attrGetter(e, attribute, truthy(cs) ? undefined : ignoreCase, dflt);
    const sorted = sortBy(toList(v), expr, false);
    const groups: [unknown, unknown[]][] = [];
    for (const x of sorted) {
      const key = expr(x);
      const last = groups[groups.length - 1];
      if (last && pyEq(last[0], key)) last[1].push(x);
      else groups.push([key, [x]]);
    }
    const out = truthy(cs) ? groups : groups.map(([, vals]) => [attrGetter(e, attribute, undefined, dflt)(vals[0]), vals] as [unknown, unknown[]]);
    return out.map(([key, vals]) => new GroupTuple([key, vals]));
  },
  indent: (_e, v, a, k) => {
    const [w, first, blank] = bind('indent', a, k, ['width', 'first', 'blank'], { width: 4, first: false, blank: false });
    return indent(softStr(v), w, first, blank);
  },
  int: (_e, v, a, k) => {
    const [d, base] = bind('int', a, k, ['default', 'base'], { default: 0, base: 10 });
    const b = asIndex(base, 'base');
    if (isStr(v)) {
      const r = toInt(v, b);
      if (r !== null) return r;
    } else if (!(v instanceof PyFloat) || Number.isFinite(v.v)) {
      const r = toInt(v, 10);
      if (r !== null && !isStr(v)) return r;
    }
    const f = toFloat(v);
    return f === null || !Number.isFinite(f) ? d : pyInt(Math.trunc(f));
  },
  items: (_e, v, a, k) => {
    bind('items', a, k, []);
    return gen('generator', function* () {
      if (v instanceof Undef) return;
      if (!isDict(v)) throw new PyError('TypeError', 'Can only get item pairs from a mapping.');
      for (const [key, val] of dictEntries(v)) yield new PyTuple([key, val]);
    });
  },
  join: (e, v, a, k) => {
    const [d, attribute] = bind('join', a, k, ['d', 'attribute'], { d: '', attribute: null });
    let items = toList(v);
    if (attribute !== null) items = items.map(attrGetter(e, attribute));
    const out = items.map(pyStr).join(pyStr(d));
    e.meter.length(out.length);
    return out;
  },
  last: (_e, v, a, k) => {
    bind('last', a, k, []);
    if (v instanceof PyIter) throw new PyError('TypeError', `'${v.typeName}' object is not reversible`);
    if (v instanceof Undef) v.fail();
    if (v === null || typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat)
      throw new PyError('TypeError', `'${typeName(v)}' object is not reversible`);
    const items = toList(v);
    return items.length ? items[items.length - 1] : new Undef('No last item, sequence was empty.');
  },
  length: (_e, v, a, k) => (bind('length', a, k, []), pyLen(v)),
  list: (_e, v, a, k) => (bind('list', a, k, []), toList(v)),
  lower: (_e, v, a, k) => {
    bind('lower', a, k, []);
    const s = softStr(v);
    return like(s, strOf(s).toLowerCase());
  },
  map: (e, v, a, k) => {
    let func: (x: unknown) => unknown;
    if (a.length === 0 && k.has('attribute')) {
      const kw = new Map(k);
      const attribute = kw.get('attribute');
      kw.delete('attribute');
      const dflt = kw.has('default') ? kw.get('default') : null;
      kw.delete('default');
      if (kw.size) throw new PyError('FilterArgumentError', `Unexpected keyword argument ${pyRepr(kw.keys().next().value)}`);
      func = attrGetter(e, attribute, undefined, dflt);
    } else {
      if (a.length === 0) throw new PyError('FilterArgumentError', 'map requires a filter argument');
      const name = pyStr(a[0]);
      const rest = a.slice(1);
      func = (x) => e.callFilter(name, x, rest, k);
    }
    return gen('generator', function* () {
      if (!truthy(v)) return;
      for (const x of pyIter(v)) {
        e.meter.step();
        yield func(x);
      }
    });
  },
  max: (e, v, a, k) => minMax(e, v, a, k, true),
  min: (e, v, a, k) => minMax(e, v, a, k, false),
  pprint: (_e, v, a, k) => (bind('pprint', a, k, []), pformat(v)),
  random: unsupported('random'),
  reject: (e, v, a, k) => selectOrReject(e, v, a, k, false, false),
  rejectattr: (e, v, a, k) => selectOrReject(e, v, a, k, false, true),
  replace: (e, v, a, k) => {
    const [o, n, c] = bind('replace', a, k, ['old', 'new', 'count'], { count: null });
    const out = pyReplace(pyStr(v), pyStr(o), pyStr(n), c === null ? -1 : asIndex(c, 'count'));
    e.meter.length(out.length);
    return out;
  },
  reverse: (_e, v, a, k) => {
    bind('reverse', a, k, []);
    if (isStr(v)) return like(v, codePoints(strOf(v)).reverse().join(''));
    if (Array.isArray(v) || v instanceof PyTuple || isDict(v) || v instanceof PyRange || v instanceof DictView) {
      const items = toList(v).reverse();
      const tn = Array.isArray(v)
        ? 'list_reverseiterator'
        : v instanceof PyTuple
          ? 'reversed'
          : isDict(v)
            ? 'dict_reversekeyiterator'
            : v instanceof PyRange
              ? 'range_iterator'
              : 'dict_reverseiterator';
      return gen(tn, function* () {
        yield* items;
      });
    }
    if (v instanceof Undef) v.fail();
    try {
      return toList(v).reverse();
    } catch {
      throw new PyError('FilterArgumentError', 'argument must be iterable');
    }
  },
  round: (_e, v, a, k) => {
    const [p, method] = bind('round', a, k, ['precision', 'method'], { precision: 0, method: 'common' });
    const m = pyStr(method);
    if (!['common', 'ceil', 'floor'].includes(m)) throw new PyError('FilterArgumentError', 'method must be common, ceil or floor');
    const prec = asIndex(p, 'precision');
    v = norm(v);
    if (!isNumberLike(v)) {
      if (v instanceof Undef) v.fail();
      throw new PyError('TypeError', `type ${typeName(v)} doesn't define __round__ method`);
    }
    if (m === 'common') {
      if (typeof v === 'number' || typeof v === 'boolean') return roundInt(numValue(v), prec);
      return new PyFloat(roundFloat(v.v, prec));
    }
    const scale = 10 ** prec;
    const f = m === 'floor' ? Math.floor(numValue(v) * scale) : Math.ceil(numValue(v) * scale);
    return new PyFloat(f / scale);
  },
  safe: (_e, v, a, k) => (bind('safe', a, k, []), v instanceof Markup ? v : new Markup(pyStr(v))),
  select: (e, v, a, k) => selectOrReject(e, v, a, k, true, false),
  selectattr: (e, v, a, k) => selectOrReject(e, v, a, k, true, true),
  slice: (_e, v, a, k) => {
    const [slices, fill] = bind('slice', a, k, ['slices', 'fill_with'], { fill_with: null });
    const n = asIndex(slices, 'slices');
    const seq = toList(v);
    return gen('generator', function* () {
      const per = Math.floor(seq.length / n);
      const extra = seq.length % n;
      let offset = 0;
      for (let i = 0; i < n; i++) {
        const start = offset + i * per;
        if (i < extra) offset++;
        const end = offset + (i + 1) * per;
        const tmp = seq.slice(start, end);
        if (fill !== null && i >= extra) tmp.push(fill);
        yield tmp;
      }
    });
  },
  sort: (e, v, a, k) => {
    const [reverse, cs, attribute] = bind('sort', a, k, ['reverse', 'case_sensitive', 'attribute'], { reverse: false, case_sensitive: false, attribute: null });
    const post = truthy(cs) ? undefined : ignoreCase;
    const key = attribute === null ? (x: unknown) => (post ? post(x) : x) : attrGetter(e, attribute, post);
    return sortBy(toList(v), key, truthy(reverse));
  },
  string: (_e, v, a, k) => (bind('string', a, k, []), softStr(v)),
  striptags: (_e, v, a, k) => (bind('striptags', a, k, []), striptags(pyStr(v instanceof Markup ? v.s : v))),
  sum: (e, v, a, k) => {
    const [attribute, start] = bind('sum', a, k, ['attribute', 'start'], { attribute: null, start: 0 });
    let items = toList(v);
    if (attribute !== null) items = items.map(attrGetter(e, attribute));
    let acc = start;
    for (const x of items) acc = pyAdd(acc, x, e.meter);
    return acc;
  },
  title: (_e, v, a, k) => {
    bind('title', a, k, []);
    const s = softStr(v);
    // jinja2 do_title: split before runs of `-`, whitespace and opening brackets; upper the first char of each piece.
    const pieces = strOf(s)
      .split(/([-\s({[<]+)/u)
      .filter((p) => p.length > 0);
    return like(
      s,
      pieces
        .map((p) => {
          const c = codePoints(p);
          return c[0].toUpperCase() + c.slice(1).join('').toLowerCase();
        })
        .join(''),
    );
  },
  tojson: (_e, v, a, k) => {
    // transformers: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
    const [ensureAscii, ind, seps, sortKeys] = bind('tojson', a, k, ['ensure_ascii', 'indent', 'separators', 'sort_keys'], {
      ensure_ascii: false,
      indent: null,
      separators: null,
      sort_keys: false,
    });
    let indentOpt: number | string | null = null;
    if (ind !== null) {
      if (isStr(ind)) indentOpt = strOf(ind);
      else if (typeof ind === 'number' || typeof ind === 'boolean') indentOpt = numValue(ind);
      else throw new PyError('TypeError', `can't multiply sequence by non-int of type '${typeName(ind)}'`);
    }
    let separators: [string, string] | null = null;
    if (seps !== null) {
      const parts = toList(seps);
      if (parts.length !== 2 || !parts.every(isStr)) throw new PyError('ValueError', 'separators must be a (item_separator, key_separator) pair of strings');
      separators = [strOf(parts[0] as string), strOf(parts[1] as string)];
    }
    return pyJsonDumps(v, { indent: indentOpt, ensureAscii: truthy(ensureAscii), separators, sortKeys: truthy(sortKeys) });
  },
  trim: (_e, v, a, k) => {
    const [chars] = bind('trim', a, k, ['chars'], { chars: null });
    const s = softStr(v);
    return like(s, pyStrip(strOf(s), optStr(chars, 'strip'), true, true));
  },
  truncate: (_e, v, a, k) => {
    const [len, kill, end, leeway] = bind('truncate', a, k, ['length', 'killwords', 'end', 'leeway'], {
      length: 255,
      killwords: false,
      end: '...',
      leeway: null,
    });
    const s = pyStr(v);
    const n = asIndex(len, 'length');
    const e = pyStr(end);
    const lw = leeway === null ? 5 : asIndex(leeway, 'leeway');
    if (n < strLen(e)) throw new PyError('AssertionError', `expected length >= ${strLen(e)}, got ${n}`);
    if (lw < 0) throw new PyError('AssertionError', `expected leeway >= 0, got ${lw}`);
    const cps = codePoints(s);
    if (cps.length <= n + lw) return s;
    const head = cps.slice(0, n - strLen(e)).join('');
    if (truthy(kill)) return head + e;
    return pyRsplit(head, ' ', 1)[0] + e;
  },
  unique: (e, v, a, k) => {
    const [cs, attribute] = bind('unique', a, k, ['case_sensitive', 'attribute'], { case_sensitive: false, attribute: null });
    const post = truthy(cs) ? undefined : ignoreCase;
    const key = attribute === null ? (x: unknown) => (post ? post(x) : x) : attrGetter(e, attribute, post);
    return gen('generator', function* () {
      const seen = new Set<unknown>();
      for (const x of pyIter(v)) {
        const h = hashKey(key(x));
        if (!seen.has(h)) {
          seen.add(h);
          yield x;
        }
      }
    });
  },
  upper: (_e, v, a, k) => {
    bind('upper', a, k, []);
    const s = softStr(v);
    return like(s, strOf(s).toUpperCase());
  },
  urlencode: (_e, v, a, k) => {
    bind('urlencode', a, k, []);
    if (isStr(v) || !isIterable(v)) return urlQuote(v, false);
    const pairs = isDict(v) ? dictEntries(v) : toList(v).map((p) => toList(p) as [unknown, unknown]);
    return pairs.map(([key, val]) => `${urlQuote(key, true)}=${urlQuote(val, true)}`).join('&');
  },
  urlize: unsupported('urlize'),
  wordcount: (_e, v, a, k) => (bind('wordcount', a, k, []), (pyStr(v).match(/[\p{L}\p{N}_]+/gu) ?? []).length),
  wordwrap: unsupported('wordwrap'),
  xmlattr: unsupported('xmlattr'),
};
FILTERS.d = FILTERS.default;
FILTERS.e = FILTERS.escape;

// ---------------------------------------------------------------------------------------------------------------
// Arithmetic shared with the evaluator

function numPair(a: unknown, b: unknown): [number, number, boolean] | null {
  if (!isNumberLike(a) || !isNumberLike(b)) return null;
  return [numValue(a), numValue(b), a instanceof PyFloat || b instanceof PyFloat];
}

function opError(op: string, a: unknown, b: unknown): never {
  throw new PyError('TypeError', `unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

/** Python `a + b`. */
export function pyAdd(a: unknown, b: unknown, meter: BudgetMeter): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (n) return n[2] ? new PyFloat(n[0] + n[1]) : pyInt(n[0] + n[1]);
  if (isStr(a) && isStr(b)) {
    meter.length(strOf(a).length + strOf(b).length);
    if (a instanceof Markup || b instanceof Markup) return new Markup(markupEscape(a).s + markupEscape(b).s);
    return (a as string) + (b as string);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    meter.length(a.length + b.length);
    return [...a.map(norm), ...b.map(norm)];
  }
  if (a instanceof PyTuple && b instanceof PyTuple) return new PyTuple([...a.items, ...b.items]);
  if (isStr(a)) throw new PyError('TypeError', `can only concatenate str (not "${typeName(b)}") to str`);
  if (Array.isArray(a)) throw new PyError('TypeError', `can only concatenate list (not "${typeName(b)}") to list`);
  if (a instanceof PyTuple) throw new PyError('TypeError', `can only concatenate tuple (not "${typeName(b)}") to tuple`);
  opError('+', a, b);
}

/** Python `a - b`. */
export function pySub(a: unknown, b: unknown): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (n) return n[2] ? new PyFloat(n[0] - n[1]) : pyInt(n[0] - n[1]);
  opError('-', a, b);
}

/** Python `a * b` (sequence repetition checked against the budget before it is built). */
export function pyMul(a: unknown, b: unknown, meter: BudgetMeter): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (n) return n[2] ? new PyFloat(n[0] * n[1]) : pyInt(n[0] * n[1]);
  const isSeq = (x: unknown) => isStr(x) || Array.isArray(x) || x instanceof PyTuple;
  const [seq, times] = isSeq(a) ? [a, b] : [b, a];
  if (isSeq(seq)) {
    if (typeof times !== 'number' && typeof times !== 'boolean') {
      if (times instanceof PyFloat) throw new PyError('TypeError', "can't multiply sequence by non-int of type 'float'");
      throw new PyError('TypeError', `can't multiply sequence by non-int of type '${typeName(times)}'`);
    }
    const k = Math.max(0, numValue(times));
    if (isStr(seq)) {
      const s = strOf(seq);
      meter.length(s.length * k);
      return like(seq, s.repeat(k));
    }
    const items = Array.isArray(seq) ? seq.map(norm) : (seq as PyTuple).items;
    meter.length(items.length * k);
    const out: unknown[] = [];
    for (let i = 0; i < k; i++) out.push(...items);
    return Array.isArray(seq) ? out : new PyTuple(out);
  }
  opError('*', a, b);
}

/** Python `a / b`. */
export function pyDiv(a: unknown, b: unknown): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (!n) opError('/', a, b);
  if (n[1] === 0) throw new PyError('ZeroDivisionError', n[2] ? 'float division by zero' : 'division by zero');
  return new PyFloat(n[0] / n[1]);
}

/** Python float floor division and modulo (CPython's `float_divmod`). */
function floatDivmod(vx: number, wx: number): [number, number] {
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1;
    }
  } else mod = wx < 0 ? -0 : 0;
  let floordiv: number;
  if (div) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
  } else floordiv = vx / wx < 0 ? -0 : 0;
  return [floordiv, mod];
}

/** Python `a // b`. */
export function pyFloorDiv(a: unknown, b: unknown): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (!n) opError('//', a, b);
  if (n[1] === 0) throw new PyError('ZeroDivisionError', n[2] ? 'float floor division by zero' : 'integer division or modulo by zero');
  if (n[2]) return new PyFloat(floatDivmod(n[0], n[1])[0]);
  const q = BigInt(n[0]) / BigInt(n[1]);
  const r = BigInt(n[0]) % BigInt(n[1]);
  return pyInt(Number(r !== 0n && r < 0n !== BigInt(n[1]) < 0n ? q - 1n : q));
}

/** Python `a % b` (string formatting for a str left operand). */
export function pyMod(a: unknown, b: unknown, meter: BudgetMeter): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (isStr(a)) {
    const out = percentFormat(strOf(a), b, a instanceof Markup);
    meter.length(out.length);
    return like(a, out);
  }
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (!n) opError('%', a, b);
  if (n[1] === 0) throw new PyError('ZeroDivisionError', n[2] ? 'float modulo' : 'integer modulo by zero');
  if (n[2]) return new PyFloat(floatDivmod(n[0], n[1])[1]);
  let r = n[0] % n[1];
  if (r !== 0 && r < 0 !== n[1] < 0) r += n[1];
  return pyInt(r);
}

/** Python `a ** b`. */
export function pyPow(a: unknown, b: unknown): unknown {
  a = norm(a);
  b = norm(b);
  if (a instanceof Undef) a.fail();
  if (b instanceof Undef) b.fail();
  const n = numPair(a, b);
  if (!n) opError('** or pow()', a, b);
  const [x, y, isFloat] = n;
  if (!isFloat && y >= 0) {
    if (Math.abs(x) > 1 && y * Math.log2(Math.abs(x)) > 60)
      throw new PyError('OverflowError', `integer ${x} ** ${y} is beyond 2**53, which the renderer cannot represent exactly`);
    return pyInt(Number(BigInt(x) ** BigInt(y)));
  }
  if (x === 0 && y < 0) throw new PyError('ZeroDivisionError', isFloat ? '0.0 cannot be raised to a negative power' : 'zero to a negative power');
  if (x < 0 && !Number.isInteger(y))
    throw new PyError('Unsupported', 'a negative number to a fractional power is a complex number in Python; the renderer does not support complex numbers');
  const r = x ** y;
  if (!Number.isFinite(r)) throw new PyError('OverflowError', "(34, 'Numerical result out of range')");
  return new PyFloat(r);
}

// ---------------------------------------------------------------------------------------------------------------
// Tests

type Test = (env: Env, value: unknown, args: unknown[]) => boolean;

function arg1(args: unknown[], name: string): unknown {
  if (args.length < 1) throw new PyError('TypeError', `${name}() missing 1 required positional argument`);
  return args[0];
}

/** The tests of jinja2 3.1 (`tests.py`). */
export const TESTS: Record<string, Test> = {
  odd: (e, v) => pyEq(pyMod(v, 2, e.meter), 1),
  even: (e, v) => pyEq(pyMod(v, 2, e.meter), 0),
  divisibleby: (e, v, a) => pyEq(pyMod(v, arg1(a, 'divisibleby'), e.meter), 0),
  defined: (_e, v) => !(v instanceof Undef),
  undefined: (_e, v) => v instanceof Undef,
  none: (_e, v) => v === null,
  boolean: (_e, v) => typeof v === 'boolean',
  false: (_e, v) => v === false,
  true: (_e, v) => v === true,
  integer: (_e, v) => typeof v === 'number',
  float: (_e, v) => norm(v) instanceof PyFloat,
  lower: (_e, v) => pyIsLower(pyStr(v)),
  upper: (_e, v) => pyIsUpper(pyStr(v)),
  string: (_e, v) => isStr(v),
  mapping: (_e, v) => isDict(v),
  number: (_e, v) => isNumberLike(norm(v)),
  sequence: (_e, v) => isStr(v) || Array.isArray(v) || v instanceof PyTuple || isDict(v) || v instanceof PyRange || v instanceof Undef,
  iterable: (_e, v) => isIterable(v),
  callable: (_e, v) => v instanceof PyCallable || v instanceof Undef,
  sameas: (_e, v, a) => v === arg1(a, 'sameas'),
  escaped: (_e, v) => v instanceof Markup,
  in: (e, v, a) => pyContains(arg1(a, 'in'), v),
  '==': (_e, v, a) => pyEq(v, arg1(a, 'eq')),
  '!=': (_e, v, a) => !pyEq(v, arg1(a, 'ne')),
  '>': (_e, v, a) => pyCompare(v, arg1(a, 'gt'), '>') > 0,
  '>=': (_e, v, a) => pyCompare(v, arg1(a, 'ge'), '>=') >= 0,
  '<': (_e, v, a) => pyCompare(v, arg1(a, 'lt'), '<') < 0,
  '<=': (_e, v, a) => pyCompare(v, arg1(a, 'le'), '<=') <= 0,
  filter: (_e, v) => isStr(v) && strOf(v) in FILTERS,
  test: (_e, v) => isStr(v) && strOf(v) in TESTS,
};
TESTS.eq = TESTS['=='];
TESTS.equalto = TESTS['=='];
TESTS.ne = TESTS['!='];
TESTS.gt = TESTS['>'];
TESTS.greaterthan = TESTS['>'];
TESTS.ge = TESTS['>='];
TESTS.lt = TESTS['<'];
TESTS.lessthan = TESTS['<'];
TESTS.le = TESTS['<='];

/** Python `item in container`. */
export function pyContains(container: unknown, item: unknown): boolean {
  container = norm(container);
  if (container instanceof Undef) return false;
  if (isStr(container)) {
    if (!isStr(item)) throw new PyError('TypeError', `'in <string>' requires string as left operand, not ${typeName(item)}`);
    return strOf(container).includes(strOf(item));
  }
  if (isDict(container)) return dictGet(container, item) !== undefined;
  if (Array.isArray(container)) {
    for (const x of container) if (pyEq(norm(x), item)) return true;
    return false;
  }
  if (container instanceof DictView && container.kind === 'keys') return dictGet(container.dict, item) !== undefined;
  if (isIterable(container)) {
    for (const x of pyIter(container)) if (pyEq(x, item)) return true;
    return false;
  }
  throw new PyError('TypeError', `argument of type '${typeName(container)}' is not iterable`);
}

// ---------------------------------------------------------------------------------------------------------------
// Globals

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/**
 * C-locale `strftime` as Python's `datetime.strftime` writes it on Linux (glibc), local time: the common
 * directives and glibc's `-` (no padding) flag.
 */
export function pyStrftime(d: Date, fmt: string): string {
  const p2 = (n: number) => String(n).padStart(2, '0');
  const dayOfYear = Math.round((Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) - Date.UTC(d.getFullYear(), 0, 1)) / 86400000) + 1;
  const weekNo = (firstDay: number) => {
    const wdJan1 = new Date(d.getFullYear(), 0, 1).getDay();
    const offset = (7 + firstDay - wdJan1) % 7; // days until the first `firstDay`
    return dayOfYear - 1 < offset ? 0 : Math.floor((dayOfYear - 1 - offset) / 7) + 1;
  };
  const tz = -d.getTimezoneOffset();
  return fmt.replace(/%([-_0^#]?)([a-zA-Z%])/g, (m, flag: string, c: string) => {
    const num = (n: number, w: number) => (flag === '-' ? String(n) : flag === '_' ? String(n).padStart(w, ' ') : String(n).padStart(w, '0'));
    const up = (s: string) => (flag === '^' ? s.toUpperCase() : s);
    switch (c) {
      case 'a':
        return up(DAYS[d.getDay()].slice(0, 3));
      case 'A':
        return up(DAYS[d.getDay()]);
      case 'b':
      case 'h':
        return up(MONTHS[d.getMonth()].slice(0, 3));
      case 'B':
        return up(MONTHS[d.getMonth()]);
      case 'd':
        return num(d.getDate(), 2);
      case 'e':
        return flag === '-' ? String(d.getDate()) : String(d.getDate()).padStart(2, ' ');
      case 'H':
        return num(d.getHours(), 2);
      case 'I':
        return num(d.getHours() % 12 || 12, 2);
      case 'j':
        return num(dayOfYear, 3);
      case 'm':
        return num(d.getMonth() + 1, 2);
      case 'M':
        return num(d.getMinutes(), 2);
      case 'p':
        return d.getHours() < 12 ? 'AM' : 'PM';
      case 'S':
        return num(d.getSeconds(), 2);
      case 'f':
        return String(d.getMilliseconds() * 1000).padStart(6, '0');
      case 'y':
        return num(d.getFullYear() % 100, 2);
      case 'Y':
        return String(d.getFullYear());
      case 'w':
        return String(d.getDay());
      case 'u':
        return String(d.getDay() || 7);
      case 'U':
        return num(weekNo(0), 2);
      case 'W':
        return num(weekNo(1), 2);
      case 'z':
        return `${tz < 0 ? '-' : '+'}${p2(Math.floor(Math.abs(tz) / 60))}${p2(Math.abs(tz) % 60)}`;
      case 'Z':
        return '';
      case 'D':
        return `${p2(d.getMonth() + 1)}/${p2(d.getDate())}/${p2(d.getFullYear() % 100)}`;
      case 'F':
        return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())}`;
      case 'T':
        return `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
      case 'R':
        return `${p2(d.getHours())}:${p2(d.getMinutes())}`;
      case 'c':
        return `${DAYS[d.getDay()].slice(0, 3)} ${MONTHS[d.getMonth()].slice(0, 3)} ${String(d.getDate()).padStart(2, ' ')} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${d.getFullYear()}`;
      case 'x':
        return `${p2(d.getMonth() + 1)}/${p2(d.getDate())}/${p2(d.getFullYear() % 100)}`;
      case 'X':
        return `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case '%':
        return '%';
      default:
        return m;
    }
  });
}

/** Builds the `dict(...)` / `namespace(...)` contents: a mapping or iterable of pairs, then keywords. */
function dictArgs(fname: string, args: unknown[], kwargs: Map<string, unknown>): [unknown, unknown][] {
  if (args.length > 1) throw new PyError('TypeError', `${fname} expected at most 1 argument, got ${args.length}`);
  const out: [unknown, unknown][] = [];
  if (args.length === 1) {
    const src = norm(args[0]);
    if (isDict(src)) out.push(...dictEntries(src));
    else {
      toList(src).forEach((pair, i) => {
        const kv = isIterable(pair) ? toList(pair) : null;
        if (!kv) throw new PyError('TypeError', `cannot convert dictionary update sequence element #${i} to a sequence`);
        if (kv.length !== 2) throw new PyError('ValueError', `dictionary update sequence element #${i} has length ${kv.length}; 2 is required`);
        out.push([kv[0], kv[1]]);
      });
    }
  }
  out.push(...kwargs);
  return out;
}

/** jinja2's `cycler`. */
export class Cycler {
  private pos = 0;
  constructor(readonly items: unknown[]) {
    if (!items.length) throw new PyError('RuntimeError', 'at least one item has to be provided');
  }
  get current(): unknown {
    return this.items[this.pos];
  }
  next(): unknown {
    const v = this.current;
    this.pos = (this.pos + 1) % this.items.length;
    return v;
  }
  reset(): void {
    this.pos = 0;
  }
}

/** The template globals: jinja2's defaults plus transformers' `raise_exception` and `strftime_now`. */
export function makeGlobals(env: Env, now: () => Date): Map<string, unknown> {
  const g = new Map<string, unknown>();
  g.set(
    'range',
    new PyCallable('range', 'builtin', (args, kwargs) => {
      if (kwargs.size) throw new PyError('TypeError', 'range() takes no keyword arguments');
      if (args.length < 1 || args.length > 3) throw new PyError('TypeError', `range expected at least 1 argument, got ${args.length}`);
      const n = args.map((x) => {
        x = norm(x);
        if (x instanceof PyFloat) throw new PyError('TypeError', "'float' object cannot be interpreted as an integer");
        return asIndex(x, '');
      });
      const [start, stop, step] = n.length === 1 ? [0, n[0], 1] : [n[0], n[1], n[2] ?? 1];
      if (step === 0) throw new PyError('ValueError', 'range() arg 3 must not be zero');
      const r = new PyRange(start, stop, step);
      env.meter.range(r.length);
      if (r.length > 100_000) throw new PyError('OverflowError', 'Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).');
      return r;
    }),
  );
  g.set('dict', new PyCallable('dict', 'builtin', (args, kwargs) => makeDict(dictArgs('dict', args, kwargs))));
  g.set(
    'namespace',
    new PyCallable('namespace', 'builtin', (args, kwargs) => new Namespace(new Map(dictArgs('namespace', args, kwargs).map(([k, v]) => [pyStr(k), v])))),
  );
  g.set('cycler', new PyCallable('cycler', 'builtin', (args) => new Cycler(args)));
  g.set(
    'joiner',
    new PyCallable('joiner', 'builtin', (args, kwargs) => {
      const [sep] = bind('joiner', args, kwargs, ['sep'], { sep: ', ' });
      let used = false;
      return new PyCallable('joiner', 'builtin', () => {
        if (!used) {
          used = true;
          return '';
        }
        return sep;
      });
    }),
  );
  g.set(
    'lipsum',
    new PyCallable('lipsum', 'builtin', () => {
      throw new PyError('Unsupported', 'lipsum() is random; the renderer cannot reproduce it');
    }),
  );
  g.set(
    'raise_exception',
    new PyCallable('raise_exception', 'builtin', (args, kwargs) => {
      const [message] = bind('raise_exception', args, kwargs, ['message']);
      throw new PyError('TemplateError', pyStr(message));
    }),
  );
  g.set(
    'strftime_now',
    new PyCallable('strftime_now', 'builtin', (args, kwargs) => {
      const [f] = bind('strftime_now', args, kwargs, ['format']);
      if (!isStr(f)) throw new PyError('TypeError', `strftime() argument 1 must be str, not ${typeName(f)}`);
      return pyStrftime(now(), strOf(f));
    }),
  );
  return g;
}
