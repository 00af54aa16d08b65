/**
 * Python `str.format(...)` and `format(value, spec)` (the format mini-language) for the chat-template renderer.
 */
import { floatBody, negative } from './floatFormat';
import { asciiEscape } from './printf';
import { floatStr, markupEscape, pyRepr, pyStr } from './repr';
import { strLen } from './strings';
import { isStr, Markup, norm, PyError, PyFloat, strOf, typeName, Undef } from './values';

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
 * @throws PyError `ValueError` / `IndexError` / `KeyError` as Python's `str.format` raises them
 */
export function strFormat(
  fmt: string,
  args: unknown[],
  kwargs: Map<string, unknown>,
  getattr: (obj: unknown, name: string) => unknown,
  getitem: (obj: unknown, key: unknown) => unknown,
  markup: boolean,
): string {
  return new StrFormatter(args, kwargs, getattr, getitem, markup).render(fmt, 0);
}

/** One `str.format` call: its arguments and the field numbering it has settled on (automatic or manual). */
class StrFormatter {
  private auto = 0;
  private mode: 'auto' | 'manual' | null = null;

  constructor(
    private readonly args: unknown[],
    private readonly kwargs: Map<string, unknown>,
    private readonly getattr: (obj: unknown, name: string) => unknown,
    private readonly getitem: (obj: unknown, key: unknown) => unknown,
    private readonly markup: boolean,
  ) {}

  /** A format string (or a nested format spec, `depth` 1) with its `{{`, `}}` and replacement fields written out. */
  render(s: string, depth: number): string {
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
        const j = closingBrace(s, i);
        out += this.replacementField(s.slice(i + 1, j), depth);
        i = j + 1;
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
  }

  /** One replacement field's inside, `name!conversion:spec`, formatted (and escaped in a `Markup` format). */
  private replacementField(inner: string, depth: number): string {
    const m = /^([^!:]*)(?:!([^:]))?(?::(.*))?$/s.exec(inner);
    if (!m) throw new PyError('ValueError', 'unmatched field in format string');
    if (depth > 1) throw new PyError('ValueError', 'Max string recursion exceeded');
    let v = this.field(m[1]);
    const spec = m[3] !== undefined ? this.render(m[3], depth + 1) : '';
    if (m[2] === 'r') v = pyRepr(v);
    else if (m[2] === 's') v = pyStr(v);
    else if (m[2] === 'a') v = asciiEscape(pyRepr(v));
    else if (m[2] !== undefined) throw new PyError('ValueError', `Unknown conversion specifier ${m[2]}`);
    const text = formatValue(v, spec);
    return this.markup && !(v instanceof Markup) ? markupEscape(text).s : text;
  }

  /** A field name's value: its first part (an argument), then each `.attr` and `[key]` after it. */
  private field(name: string): unknown {
    const m = /^([^.[]*)(.*)$/s.exec(name)!;
    let obj = this.argument(m[1]);
    let rest = m[2];
    while (rest.length) {
      if (rest[0] === '.') {
        const a = /^\.([^.[]+)/.exec(rest);
        if (!a) throw new PyError('ValueError', 'Empty attribute in format string');
        obj = this.getattr(obj, a[1]);
        rest = rest.slice(a[0].length);
      } else {
        const a = /^\[([^\]]+)\]/.exec(rest);
        if (!a) throw new PyError('ValueError', "Missing ']' in format string");
        obj = this.getitem(obj, /^\d+$/.test(a[1]) ? Number(a[1]) : a[1]);
        rest = rest.slice(a[0].length);
      }
    }
    if (obj instanceof Undef) obj.fail();
    return obj;
  }

  /**
   * The argument a field name starts with: the next positional one (`{}`), a numbered one (`{0}`) or a keyword
   * one (`{x}`). Python refuses to mix automatic and manual numbering in one call.
   */
  private argument(head: string): unknown {
    if (head === '') {
      if (this.mode === 'manual') throw new PyError('ValueError', 'cannot switch from manual field specification to automatic field numbering');
      this.mode = 'auto';
      if (this.auto >= this.args.length) throw new PyError('IndexError', `Replacement index ${this.auto} out of range for positional args tuple`);
      return this.args[this.auto++];
    }
    if (/^\d+$/.test(head)) {
      if (this.mode === 'auto') throw new PyError('ValueError', 'cannot switch from automatic field numbering to manual field specification');
      this.mode = 'manual';
      const k = Number(head);
      if (k >= this.args.length) throw new PyError('IndexError', `Replacement index ${k} out of range for positional args tuple`);
      return this.args[k];
    }
    if (!this.kwargs.has(head)) throw new PyError('KeyError', pyRepr(head));
    return this.kwargs.get(head);
  }
}

/**
 * Index of the `}` that closes the replacement field opened at `open` (nested braces counted, as a format spec may
 * hold fields). @throws PyError `ValueError` when the string ends first
 */
function closingBrace(s: string, open: number): number {
  let d = 1;
  let j = open + 1;
  while (j < s.length && d > 0) {
    if (s[j] === '{') d++;
    else if (s[j] === '}') d--;
    if (d > 0) j++;
  }
  if (d > 0) throw new PyError('ValueError', "expected '}' before end of string");
  return j;
}
