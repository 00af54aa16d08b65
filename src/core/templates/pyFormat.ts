/**
 * Python string formatting for the chat-template renderer: `str % args` (printf style), `str.format(...)`
 * (the format mini-language), and exact float rounding (`%.2f`, `round()`), each as CPython writes them.
 *
 * Floats are rounded on their exact binary value with ties to even, as CPython does (`'%.2f' % 2.675` is
 * `2.67`, `'%.0f' % 2.5` is `2`); JS `toFixed` rounds ties up and would differ.
 */
import {
  floatStr,
  isDict,
  isNumberLike,
  isStr,
  Markup,
  markupEscape,
  numValue,
  norm,
  PyDict,
  PyError,
  PyFloat,
  pyRepr,
  pyStr,
  PyTuple,
  strLen,
  strOf,
  typeName,
  Undef,
  dictGet,
  type PlainDict,
} from './pyValues';

// ---------------------------------------------------------------------------------------------------------------
// Exact decimal rounding of doubles

/** `x = m · 2^e` exactly, x ≥ 0 finite. */
function decompose(x: number): [bigint, number] {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, x);
  const hi = dv.getUint32(0);
  const lo = dv.getUint32(4);
  const expBits = (hi >>> 20) & 0x7ff;
  const mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (expBits === 0) return [mant, -1074];
  return [mant | (1n << 52n), expBits - 1075];
}

/** round_half_even(|x| · 10^k) as an exact integer. */
export function scaledRound(x: number, k: number): bigint {
  const [m, e] = decompose(Math.abs(x));
  let num = m;
  let den = 1n;
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  if (k >= 0) num *= 10n ** BigInt(k);
  else den *= 10n ** BigInt(-k);
  const q = num / den;
  const r2 = (num % den) * 2n;
  if (r2 > den || (r2 === den && (q & 1n) === 1n)) return q + 1n;
  return q;
}

function negative(x: number): boolean {
  return x < 0 || Object.is(x, -0);
}

/** Digits of |x| in fixed notation with `prec` decimals (no sign). */
function fixedDigits(x: number, prec: number): string {
  const q = scaledRound(x, prec)
    .toString()
    .padStart(prec + 1, '0');
  return prec === 0 ? q : `${q.slice(0, q.length - prec)}.${q.slice(q.length - prec)}`;
}

/** |x| in scientific notation with `prec` decimals: [mantissa digits with point, exponent]. */
function expDigits(x: number, prec: number): [string, number] {
  const ax = Math.abs(x);
  if (ax === 0) return [prec ? '0.' + '0'.repeat(prec) : '0', 0];
  let E = Math.floor(Math.log10(ax));
  let q = scaledRound(ax, prec - E);
  const lo = 10n ** BigInt(prec);
  if (q >= lo * 10n) {
    E++;
    q = scaledRound(ax, prec - E);
  } else if (q < lo) {
    E--;
    q = scaledRound(ax, prec - E);
  }
  const s = q.toString();
  return [prec ? `${s[0]}.${s.slice(1)}` : s, E];
}

function expSuffix(E: number, upper: boolean): string {
  return `${upper ? 'E' : 'e'}${E < 0 ? '-' : '+'}${String(Math.abs(E)).padStart(2, '0')}`;
}

/** Formats |x| (finite) per a float presentation type: `e E f F g G %` and `r` (the no-type form with a precision). */
function floatBody(x: number, type: string, prec: number | null, alt: boolean): string {
  const upper = type === 'E' || type === 'F' || type === 'G';
  if (!Number.isFinite(x)) {
    const s = Number.isNaN(x) ? 'nan' : 'inf';
    return upper ? s.toUpperCase() : s;
  }
  switch (type) {
    case 'f':
    case 'F': {
      const s = fixedDigits(x, prec ?? 6);
      return alt && !s.includes('.') ? s + '.' : s;
    }
    case 'e':
    case 'E': {
      const [m, E] = expDigits(x, prec ?? 6);
      return (alt && !m.includes('.') ? m + '.' : m) + expSuffix(E, upper);
    }
    case '%':
      return fixedDigits(x * 100, prec ?? 6) + '%';
    case 'g':
    case 'G':
    case 'n':
    case 'r': {
      // 'r': format()'s no-type float with a precision: like 'g', at least one decimal, exponent when E >= p - 1.
      let p = prec ?? 6;
      if (p === 0) p = 1;
      const [, E] = expDigits(x, p - 1);
      const useFixed = E >= -4 && E < (type === 'r' ? p - 1 : p);
      let s: string;
      if (useFixed) s = fixedDigits(x, Math.max(0, p - 1 - E));
      else {
        const [m] = expDigits(x, p - 1);
        s = m;
      }
      if (!alt) {
        if (s.includes('.')) s = s.replace(/0+$/, '').replace(/\.$/, '');
      } else if (!s.includes('.')) s += '.';
      if (type === 'r' && useFixed && !s.includes('.')) s += '.0';
      return useFixed ? s : s + expSuffix(E, upper);
    }
    default:
      throw new PyError('ValueError', `Unknown format code '${type}' for object of type 'float'`);
  }
}

/** Python `round(x, n)` for a float: correctly rounded, ties to even. */
export function roundFloat(x: number, n: number): number {
  if (!Number.isFinite(x)) return x;
  if (n >= 0) {
    if (n > 330) return x;
    const s = fixedDigits(x, n);
    return negative(x) ? -Number(s) : Number(s);
  }
  const q = scaledRound(x, n); // x / 10^-n rounded
  const v = Number(q) * 10 ** -n;
  return negative(x) ? -v : v;
}

// ---------------------------------------------------------------------------------------------------------------
// printf style: str % args

/**
 * Python `fmt % args` for a `str` (or `Markup`, whose arguments are escaped).
 * @throws PyError `TypeError` / `ValueError` as Python raises them
 */
export function percentFormat(fmt: string, args: unknown, markup: boolean): string {
  const esc = (v: unknown) => (markup ? markupEscape(v) : v);
  let positional: unknown[];
  let mapping: PyDict | PlainDict | null = null;
  if (args instanceof PyTuple) positional = args.items;
  else {
    positional = [args];
    if (isDict(args)) mapping = args;
  }
  const single = !(args instanceof PyTuple);
  let ai = 0;
  const next = (): unknown => {
    if (ai >= positional.length) throw new PyError('TypeError', 'not enough arguments for format string');
    return positional[ai++];
  };
  let out = '';
  let i = 0;
  while (i < fmt.length) {
    const c = fmt[i];
    if (c !== '%') {
      out += c;
      i++;
      continue;
    }
    i++;
    if (i >= fmt.length) throw new PyError('ValueError', 'incomplete format');
    let key: string | null = null;
    if (fmt[i] === '(') {
      let depth = 1;
      const start = ++i;
      while (i < fmt.length && depth > 0) {
        if (fmt[i] === '(') depth++;
        else if (fmt[i] === ')') depth--;
        i++;
      }
      if (depth > 0) throw new PyError('ValueError', 'incomplete format key');
      key = fmt.slice(start, i - 1);
    }
    let flags = '';
    while ('-+ #0'.includes(fmt[i]) && i < fmt.length) flags += fmt[i++];
    let width: number | null = null;
    if (fmt[i] === '*') {
      i++;
      const w = next();
      if (typeof w !== 'number') throw new PyError('TypeError', '* wants int');
      width = w;
    } else {
      const m = /^\d+/.exec(fmt.slice(i));
      if (m) {
        width = Number(m[0]);
        i += m[0].length;
      }
    }
    let prec: number | null = null;
    if (fmt[i] === '.') {
      i++;
      if (fmt[i] === '*') {
        i++;
        const p = next();
        if (typeof p !== 'number') throw new PyError('TypeError', '* wants int');
        prec = p;
      } else {
        const m = /^\d*/.exec(fmt.slice(i))!;
        prec = Number(m[0] || '0');
        i += m[0].length;
      }
    }
    while ('hlL'.includes(fmt[i]) && i < fmt.length) i++;
    if (i >= fmt.length) throw new PyError('ValueError', 'incomplete format');
    const type = fmt[i++];
    if (type === '%') {
      out += '%';
      continue;
    }
    let value: unknown;
    if (key !== null) {
      if (!mapping) throw new PyError('TypeError', 'format requires a mapping');
      value = dictGet(mapping, key);
      if (value === undefined) throw new PyError('KeyError', pyRepr(key));
    } else value = next();
    value = norm(value);
    let body: string;
    let sign = '';
    const numeric = 'diouxXeEfFgGc'.includes(type) && type !== 'c';
    switch (type) {
      case 's':
        body = pyStr(esc(value));
        if (prec !== null) body = Array.from(body).slice(0, prec).join('');
        break;
      case 'r':
      case 'a':
        body = pyRepr(value);
        if (type === 'a') body = asciiEscape(body);
        if (prec !== null) body = Array.from(body).slice(0, prec).join('');
        if (markup) body = markupEscape(body).s;
        break;
      case 'c':
        if (typeof value === 'number') body = String.fromCodePoint(value);
        else if (isStr(value) && strLen(strOf(value)) === 1) body = strOf(value);
        else throw new PyError('TypeError', `%c requires an int or a unicode character, not ${typeName(value)}`);
        break;
      case 'd':
      case 'i':
      case 'u': {
        if (!isNumberLike(value)) throw new PyError('TypeError', `%${type} format: a real number is required, not ${typeName(value)}`);
        const n = Math.trunc(numValue(value));
        if (!Number.isFinite(n)) throw new PyError(Number.isNaN(n) ? 'ValueError' : 'OverflowError', 'cannot convert float to integer');
        sign = n < 0 ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
        body = String(Math.abs(n));
        if (prec !== null) body = body.padStart(prec, '0');
        break;
      }
      case 'x':
      case 'X':
      case 'o': {
        if (typeof value !== 'number' && typeof value !== 'boolean')
          throw new PyError('TypeError', `%${type} format: an integer is required, not ${typeName(value)}`);
        const n = numValue(value);
        sign = n < 0 ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
        body = Math.abs(n).toString(type === 'o' ? 8 : 16);
        if (type === 'X') body = body.toUpperCase();
        if (prec !== null) body = body.padStart(prec, '0');
        if (flags.includes('#')) body = (type === 'o' ? '0o' : type === 'x' ? '0x' : '0X') + body;
        break;
      }
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G': {
        if (!isNumberLike(value)) throw new PyError('TypeError', `must be real number, not ${typeName(value)}`);
        const x = numValue(value);
        sign = negative(x) && !Number.isNaN(x) ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
        body = floatBody(x, type, prec, flags.includes('#'));
        break;
      }
      default:
        throw new PyError('ValueError', `unsupported format character '${type}' (0x${type.charCodeAt(0).toString(16)}) at index ${i - 1}`);
    }
    const w = width ?? 0;
    const len = strLen(sign) + strLen(body);
    if (len < w) {
      if (flags.includes('-')) body = body + ' '.repeat(w - len);
      else if (flags.includes('0') && numeric && Number.isFinite(Number(body.replace(/[^0-9.]/g, '') || '0'))) {
        const m = /^(0[xXo])?/.exec(body)!;
        body = m[0] + '0'.repeat(w - len) + body.slice(m[0].length);
      } else {
        sign = ' '.repeat(w - len) + sign;
      }
    }
    out += sign + body;
  }
  // CPython: a non-tuple argument that is a mapping (a dict, or a list: both pass PyMapping_Check) may go unused.
  if (ai < positional.length && !(single && (isDict(args) || Array.isArray(args)))) {
    throw new PyError('TypeError', 'not all arguments converted during string formatting');
  }
  return out;
}

function asciiEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    out +=
      cp < 0x80
        ? ch
        : cp < 0x100
          ? '\\x' + cp.toString(16).padStart(2, '0')
          : cp < 0x10000
            ? '\\u' + cp.toString(16).padStart(4, '0')
            : '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// str.format and format()

interface Spec {
  fill: string;
  align: string | null;
  sign: string;
  alt: boolean;
  zero: boolean;
  width: number;
  grouping: string;
  prec: number | null;
  type: string;
}

function parseSpec(spec: string): Spec {
  const m = /^(?:(.)?([<>=^]))?([-+ ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([a-zA-Z%])?$/su.exec(spec);
  if (!m) throw new PyError('ValueError', 'Invalid format specifier');
  return {
    fill: m[1] ?? (m[6] && !m[2] ? '0' : ' '),
    align: m[2] ?? (m[6] ? '=' : null),
    sign: m[3] ?? '-',
    alt: !!m[5],
    zero: !!m[6],
    width: m[7] ? Number(m[7]) : 0,
    grouping: m[8] ?? '',
    prec: m[9] !== undefined ? Number(m[9]) : null,
    type: m[10] ?? '',
  };
}

function group(digits: string, sep: string, every: number): string {
  if (!sep) return digits;
  const [intPart, frac] = digits.split('.');
  let out = '';
  for (let i = 0; i < intPart.length; i++) {
    if (i > 0 && (intPart.length - i) % every === 0) out += sep;
    out += intPart[i];
  }
  return frac === undefined ? out : `${out}.${frac}`;
}

function pad(sign: string, body: string, s: Spec, defaultAlign: string): string {
  const align = s.align ?? defaultAlign;
  const len = strLen(sign) + strLen(body);
  const n = Math.max(0, s.width - len);
  if (n === 0) return sign + body;
  switch (align) {
    case '<':
      return sign + body + s.fill.repeat(n);
    case '>':
      return s.fill.repeat(n) + sign + body;
    case '^': {
      const left = Math.floor(n / 2);
      return s.fill.repeat(left) + sign + body + s.fill.repeat(n - left);
    }
    default:
      return sign + s.fill.repeat(n) + body; // '='
  }
}

/**
 * Python `format(value, spec)`.
 * @throws PyError as Python's `__format__` methods raise
 */
export function formatValue(value: unknown, spec: string): string {
  value = norm(value);
  if (spec === '') return pyStr(value);
  if (typeof value === 'boolean') value = value ? 1 : 0;
  if (isStr(value)) {
    const s = parseSpec(spec);
    if (s.type && s.type !== 's') throw new PyError('ValueError', `Unknown format code '${s.type}' for object of type 'str'`);
    if (s.align === '=') throw new PyError('ValueError', "'=' alignment not allowed in string format specifier");
    if (s.sign !== '-' || spec.match(/^(?:.?[<>=^])?[-+ ]/)) {
      if (/^(?:.?[<>=^])?[+ ]/.test(spec)) throw new PyError('ValueError', 'Sign not allowed in string format specifier');
    }
    let body = strOf(value);
    if (s.prec !== null) body = Array.from(body).slice(0, s.prec).join('');
    return pad('', body, s, '<');
  }
  if (typeof value === 'number') {
    const s = parseSpec(spec);
    if ('eEfFgGn%'.includes(s.type) && s.type !== '') return formatFloat(value, s);
    if (s.prec !== null) throw new PyError('ValueError', 'Precision not allowed in integer format specifier');
    const sign = value < 0 ? '-' : s.sign === '+' ? '+' : s.sign === ' ' ? ' ' : '';
    let body: string;
    const a = Math.abs(value);
    switch (s.type) {
      case '':
      case 'd':
      case 'n':
        body = group(String(a), s.grouping, 3);
        break;
      case 'b':
        body = group(a.toString(2), s.grouping === '_' ? '_' : '', 4);
        if (s.alt) body = '0b' + body;
        break;
      case 'o':
        body = group(a.toString(8), s.grouping === '_' ? '_' : '', 4);
        if (s.alt) body = '0o' + body;
        break;
      case 'x':
      case 'X':
        body = group(a.toString(16), s.grouping === '_' ? '_' : '', 4);
        if (s.type === 'X') body = body.toUpperCase();
        if (s.alt) body = (s.type === 'X' ? '0X' : '0x') + body;
        break;
      case 'c':
        body = String.fromCodePoint(value);
        return pad('', body, s, '<');
      default:
        throw new PyError('ValueError', `Unknown format code '${s.type}' for object of type 'int'`);
    }
    return pad(sign, body, s, '>');
  }
  if (value instanceof PyFloat) return formatFloat(value.v, parseSpec(spec));
  throw new PyError('TypeError', `unsupported format string passed to ${typeName(value)}.__format__`);
}

function formatFloat(x: number, s: Spec): string {
  const sign = negative(x) && !Number.isNaN(x) ? '-' : s.sign === '+' ? '+' : s.sign === ' ' ? ' ' : '';
  let body: string;
  if (s.type === '') {
    body = s.prec === null ? floatStr(Math.abs(x)) : floatBody(x, 'r', s.prec, s.alt);
    if (body === 'Infinity' || body === 'NaN') body = body === 'NaN' ? 'nan' : 'inf';
  } else body = floatBody(x, s.type, s.prec, s.alt);
  if (s.grouping && Number.isFinite(x)) {
    const m = /^(\d+)(.*)$/.exec(body);
    if (m) body = group(m[1], s.grouping, 3) + m[2];
  }
  return pad(sign, body, s, '>');
}

/**
 * Python `fmt.format(*args, **kwargs)` (jinja2's sandboxed formatter: field lookups go through the template's
 * attribute/item rules, `getattr` and `getitem`).
 */
export function strFormat(
  fmt: string,
  args: unknown[],
  kwargs: Map<string, unknown>,
  getattr: (obj: unknown, name: string) => unknown,
  getitem: (obj: unknown, key: unknown) => unknown,
  markup: boolean,
): string {
  let auto = 0;
  let mode: 'auto' | 'manual' | null = null;
  const field = (name: string): unknown => {
    const m = /^([^.[]*)(.*)$/s.exec(name)!;
    let first: unknown;
    const head = m[1];
    if (head === '') {
      if (mode === 'manual') throw new PyError('ValueError', 'cannot switch from manual field specification to automatic field numbering');
      mode = 'auto';
      if (auto >= args.length) throw new PyError('IndexError', `Replacement index ${auto} out of range for positional args tuple`);
      first = args[auto++];
    } else if (/^\d+$/.test(head)) {
      if (mode === 'auto') throw new PyError('ValueError', 'cannot switch from automatic field numbering to manual field specification');
      mode = 'manual';
      const k = Number(head);
      if (k >= args.length) throw new PyError('IndexError', `Replacement index ${k} out of range for positional args tuple`);
      first = args[k];
    } else {
      if (!kwargs.has(head)) throw new PyError('KeyError', pyRepr(head));
      first = kwargs.get(head);
    }
    let rest = m[2];
    let obj = first;
    while (rest.length) {
      if (rest[0] === '.') {
        const a = /^\.([^.[]+)/.exec(rest);
        if (!a) throw new PyError('ValueError', 'Empty attribute in format string');
        obj = getattr(obj, a[1]);
        rest = rest.slice(a[0].length);
      } else {
        const a = /^\[([^\]]+)\]/.exec(rest);
        if (!a) throw new PyError('ValueError', "Missing ']' in format string");
        obj = getitem(obj, /^\d+$/.test(a[1]) ? Number(a[1]) : a[1]);
        rest = rest.slice(a[0].length);
      }
    }
    if (obj instanceof Undef) obj.fail();
    return obj;
  };
  const render = (s: string, depth: number): string => {
    let out = '';
    let i = 0;
    while (i < s.length) {
      const c = s[i];
      if (c === '{') {
        if (s[i + 1] === '{') {
          out += '{';
          i += 2;
          continue;
        }
        let d = 1;
        let j = i + 1;
        while (j < s.length && d > 0) {
          if (s[j] === '{') d++;
          else if (s[j] === '}') d--;
          if (d > 0) j++;
        }
        if (d > 0) throw new PyError('ValueError', "expected '}' before end of string");
        const inner = s.slice(i + 1, j);
        i = j + 1;
        const m = /^([^!:]*)(?:!([^:]))?(?::(.*))?$/s.exec(inner);
        if (!m) throw new PyError('ValueError', 'unmatched field in format string');
        if (depth > 1) throw new PyError('ValueError', 'Max string recursion exceeded');
        let v = field(m[1]);
        const spec = m[3] !== undefined ? render(m[3], depth + 1) : '';
        if (m[2] === 'r') v = pyRepr(v);
        else if (m[2] === 's') v = pyStr(v);
        else if (m[2] === 'a') v = asciiEscape(pyRepr(v));
        else if (m[2] !== undefined) throw new PyError('ValueError', `Unknown conversion specifier ${m[2]}`);
        const text = formatValue(v, spec);
        out += markup && !(v instanceof Markup) ? markupEscape(text).s : text;
      } else if (c === '}') {
        if (s[i + 1] !== '}') throw new PyError('ValueError', "Single '}' encountered in format string");
        out += '}';
        i += 2;
      } else {
        out += c;
        i++;
      }
    }
    return out;
  };
  return render(fmt, 0);
}
