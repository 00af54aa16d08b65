/**
 * Helpers of the jinja2 filters ({@link ./filters}): attribute getters, sorting, select/reject, number parsing, indent, urlencode, striptags, pprint.
 */
import { asIndex, bind, gen, like } from './args';
import { Builtin, Env } from './env';
import { pyCompare, pyIter, toList, truthy } from './protocols';
import { pyRepr, pyStr } from './repr';
import { pySplit, pySplitlines, pyStrip } from './strings';
import { dictEntries, isDict, isStr, Markup, norm, PyError, PyFloat, pyInt, PyIter, PyTuple, strOf, Undef } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Filters

/** jinja2 `make_attrgetter`: `attribute` may be dotted (`a.b`), digit parts index lists. */
export function attrGetter(env: Env, attribute: unknown, post?: (v: unknown) => unknown, dflt?: unknown): (item: unknown) => unknown {
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

export const ignoreCase = (v: unknown): unknown => (isStr(v) ? (v instanceof Markup ? new Markup(v.s.toLowerCase()) : v.toLowerCase()) : v);

export function sortBy<T>(items: T[], key: (x: T) => unknown, reverse: boolean): T[] {
  const keyed = items.map((x) => [key(x), x] as const);
  keyed.sort((p, q) => (reverse ? pyCompare(q[0], p[0]) : pyCompare(p[0], q[0])));
  return keyed.map((p) => p[1]);
}

export function selectOrReject(env: Env, value: unknown, args: unknown[], kwargs: Map<string, unknown>, select: boolean, lookupAttr: boolean): PyIter {
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

export function minMax(env: Env, value: unknown, args: unknown[], kwargs: Map<string, unknown>, max: boolean): unknown {
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

export function toInt(v: unknown, base: number): number | null {
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

export function toFloat(v: unknown): number | null {
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

export function roundInt(n: number, digits: number): number {
  if (digits >= 0) return n;
  const p = 10 ** -digits;
  const q = Math.floor(n / p);
  const r = n - q * p;
  let k = q;
  if (r * 2 > p || (r * 2 === p && q % 2 !== 0)) k = q + 1;
  return pyInt(k * p);
}

export function indent(s: string | Markup, width: unknown, first: unknown, blank: unknown): string | Markup {
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
export function urlQuote(v: unknown, forQs: boolean): string {
  const bytes = new TextEncoder().encode(pyStr(v));
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && (URL_SAFE.test(c) || (!forQs && c === '/')) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return forQs ? out.replace(/%20/g, '+') : out;
}

export function striptags(s: string): string {
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
export function pformat(v: unknown): string {
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

export function unsupported(name: string): Builtin {
  return () => {
    throw new PyError('Unsupported', `the '${name}' filter is not supported by the renderer (its Python output is random or not implemented)`);
  };
}
