/**
 * The methods of Python `str` (and markupsafe `Markup`) that templates call: `strip`, `split`, `replace`,
 * `startswith`, `format`, … with Python 3's semantics (code points, Python whitespace, keyword rules).
 * Source: CPython `str` behaviour and markupsafe (behaviour, not code), checked against Python jinja2 3.1.6.
 */
import { asIndex, bind, MISSING, optStr } from './args';
import { Env } from './env';
import { toList, truthy } from './protocols';
import { markupEscape, pyStr } from './repr';
import { strFormat } from './strFormat';
import { codePoints, isBmp, isPySpace, pyReplace, pyRsplit, pySplit, pySplitlines, pyStrip, strLen } from './strings';
import { dictEntries, isDict, isStr, Markup, PyCallable, PyError, PyTuple, strOf, typeName } from './values';

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
  // Without bounds the window is the whole string (no pass over it for its code points).
  const whole = (v: unknown) => v === MISSING || v === null || v === undefined;
  const text = whole(start) && whole(end) ? s : window(s, start, end).text;
  for (const a of list) {
    if (!isStr(a)) throw new PyError('TypeError', `tuple for ${name} must only contain str, not ${typeName(a)}`);
    if (ends ? text.endsWith(strOf(a)) : text.startsWith(strOf(a))) return true;
  }
  return false;
}

export function justify(s: string, width: number, fill: string, how: 'l' | 'r' | 'c'): string {
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
export function pyIsLower(s: string): boolean {
  return /\p{Lowercase}/u.test(s) && !/[\p{Uppercase}\p{Lt}]/u.test(s);
}

/** Python `str.isupper()`. */
export function pyIsUpper(s: string): boolean {
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
export function strMethod(env: Env, recv: string | Markup, name: string): PyCallable | undefined {
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
