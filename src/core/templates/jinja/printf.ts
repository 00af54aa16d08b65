/**
 * Python printf-style formatting (`str % args`) for the chat-template renderer, as CPython writes it.
 */
import { floatBody, negative } from './floatFormat';
import { markupEscape, pyRepr, pyStr } from './repr';
import { strLen } from './strings';
import { dictGet, isDict, isNumberLike, isStr, norm, numValue, PlainDict, PyDict, PyError, PyTuple, strOf, typeName } from './values';

// ---------------------------------------------------------------------------------------------------------------
// printf style: str % args

/** One conversion specifier of a printf-style format, `%(key)flags width.prec type`, as parsed. */
interface PercentSpec {
  /** The mapping key of `%(key)s`, or null for a positional argument. */
  key: string | null;
  /** The conversion flags, from `-+ #0`, in the order written. */
  flags: string;
  width: number | null;
  prec: number | null;
  /** The conversion type character (`s`, `d`, `%`, …). */
  type: string;
  /** Index of the type character in the format (CPython's error messages name it). */
  typeIndex: number;
}

/** The arguments of `fmt % args`: positional ones consumed in order, and the mapping `%(key)s` reads. */
class PercentArgs {
  private readonly positional: unknown[];
  private readonly mapping: PyDict | PlainDict | null = null;
  private used = 0;

  constructor(private readonly args: unknown) {
    if (args instanceof PyTuple) this.positional = args.items;
    else {
      this.positional = [args];
      if (isDict(args)) this.mapping = args;
    }
  }

  /** The next positional argument. @throws PyError `TypeError` when there are none left */
  next(): unknown {
    if (this.used >= this.positional.length) throw new PyError('TypeError', 'not enough arguments for format string');
    return this.positional[this.used++];
  }

  /** The value a specifier formats: the mapping's entry for `%(key)s`, else the next positional argument. */
  valueFor(spec: PercentSpec): unknown {
    if (spec.key === null) return this.next();
    if (!this.mapping) throw new PyError('TypeError', 'format requires a mapping');
    const value = dictGet(this.mapping, spec.key);
    if (value === undefined) throw new PyError('KeyError', pyRepr(spec.key));
    return value;
  }

  /**
   * CPython: every positional argument must be used, but a non-tuple argument that is a mapping (a dict, or a list:
   * both pass PyMapping_Check) may go unused.
   */
  checkAllUsed(): void {
    const single = !(this.args instanceof PyTuple);
    if (this.used < this.positional.length && !(single && (isDict(this.args) || Array.isArray(this.args)))) {
      throw new PyError('TypeError', 'not all arguments converted during string formatting');
    }
  }
}

/**
 * Python `fmt % args` for a `str` (or `Markup`, whose arguments are escaped).
 * @throws PyError `TypeError` / `ValueError` as Python raises them
 */
export function percentFormat(fmt: string, args: unknown, markup: boolean): string {
  const source = new PercentArgs(args);
  let out = '';
  let i = 0;
  while (i < fmt.length) {
    const c = fmt[i];
    if (c !== '%') {
      out += c;
      i++;
      continue;
    }
    const spec = parsePercentSpec(fmt, i + 1, source);
    i = spec.typeIndex + 1;
    if (spec.type === '%') {
      out += '%';
      continue;
    }
    const value = norm(source.valueFor(spec));
    const { sign, body } = percentConvert(spec, value, markup);
    out += percentPad(spec, sign, body);
  }
  source.checkAllUsed();
  return out;
}

/**
 * Parses the specifier that starts at `i` (just past its `%`): key, flags, width, precision, length modifier (read
 * and ignored, as CPython does) and type. A `*` width or precision takes the next positional argument.
 * @throws PyError `ValueError` for an incomplete format or key, `TypeError` for a `*` argument that is not an int
 */
function parsePercentSpec(fmt: string, i: number, source: PercentArgs): PercentSpec {
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
    width = starArgument(source);
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
      prec = starArgument(source);
    } else {
      const m = /^\d*/.exec(fmt.slice(i))!;
      prec = Number(m[0] || '0');
      i += m[0].length;
    }
  }
  while ('hlL'.includes(fmt[i]) && i < fmt.length) i++;
  if (i >= fmt.length) throw new PyError('ValueError', 'incomplete format');
  return { key, flags, width, prec, type: fmt[i], typeIndex: i };
}

/** The int a `*` width or precision takes from the positional arguments. @throws PyError `TypeError` otherwise */
function starArgument(source: PercentArgs): number {
  const v = source.next();
  if (typeof v !== 'number') throw new PyError('TypeError', '* wants int');
  return v;
}

/** The sign CPython writes before a number: `-` when negative, else `+` or a space as the flags ask. */
function signOf(isNegative: boolean, flags: string): string {
  return isNegative ? '-' : flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : '';
}

/** Cuts a text to `prec` code points (`%.3s`), or leaves it whole when there is no precision. */
function cutToPrecision(body: string, prec: number | null): string {
  return prec !== null ? Array.from(body).slice(0, prec).join('') : body;
}

/**
 * One value converted by its specifier's type, before padding: the sign and the body.
 * @throws PyError `TypeError` for a value the type does not take, `ValueError` for an unsupported type
 */
function percentConvert(spec: PercentSpec, value: unknown, markup: boolean): { sign: string; body: string } {
  const { type, prec } = spec;
  switch (type) {
    case 's':
      return { sign: '', body: cutToPrecision(pyStr(markup ? markupEscape(value) : value), prec) };
    case 'r':
    case 'a': {
      let body = pyRepr(value);
      if (type === 'a') body = asciiEscape(body);
      body = cutToPrecision(body, prec);
      return { sign: '', body: markup ? markupEscape(body).s : body };
    }
    case 'c':
      return { sign: '', body: percentChar(value) };
    case 'd':
    case 'i':
    case 'u':
      return percentDecimal(spec, value);
    case 'x':
    case 'X':
    case 'o':
      return percentRadix(spec, value);
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
      if (!isNumberLike(value)) throw new PyError('TypeError', `must be real number, not ${typeName(value)}`);
      const x = numValue(value);
      return { sign: signOf(negative(x) && !Number.isNaN(x), spec.flags), body: floatBody(x, type, prec, spec.flags.includes('#')) };
    }
    default:
      throw new PyError('ValueError', `unsupported format character '${type}' (0x${type.charCodeAt(0).toString(16)}) at index ${spec.typeIndex}`);
  }
}

/** `%c`: an int's character, or a one-character string. @throws PyError `TypeError` otherwise */
function percentChar(value: unknown): string {
  if (typeof value === 'number') return String.fromCodePoint(value);
  if (isStr(value) && strLen(strOf(value)) === 1) return strOf(value);
  throw new PyError('TypeError', `%c requires an int or a unicode character, not ${typeName(value)}`);
}

/** `%d` / `%i` / `%u`: a real number truncated to an integer; the precision is a minimum digit count. */
function percentDecimal(spec: PercentSpec, value: unknown): { sign: string; body: string } {
  if (!isNumberLike(value)) throw new PyError('TypeError', `%${spec.type} format: a real number is required, not ${typeName(value)}`);
  const n = Math.trunc(numValue(value));
  if (!Number.isFinite(n)) throw new PyError(Number.isNaN(n) ? 'ValueError' : 'OverflowError', 'cannot convert float to integer');
  let body = String(Math.abs(n));
  if (spec.prec !== null) body = body.padStart(spec.prec, '0');
  return { sign: signOf(n < 0, spec.flags), body };
}

/** `%x` / `%X` / `%o`: an integer (or bool) in hex or octal; `#` adds the `0x` / `0X` / `0o` prefix. */
function percentRadix(spec: PercentSpec, value: unknown): { sign: string; body: string } {
  const { type, prec, flags } = spec;
  if (typeof value !== 'number' && typeof value !== 'boolean')
    throw new PyError('TypeError', `%${type} format: an integer is required, not ${typeName(value)}`);
  const n = numValue(value);
  let body = Math.abs(n).toString(type === 'o' ? 8 : 16);
  if (type === 'X') body = body.toUpperCase();
  if (prec !== null) body = body.padStart(prec, '0');
  if (flags.includes('#')) body = (type === 'o' ? '0o' : type === 'x' ? '0x' : '0X') + body;
  return { sign: signOf(n < 0, flags), body };
}

/**
 * Pads a converted value to the specifier's width: left-justified with `-`, zero-filled after the sign (and a
 * `0x` / `0o` prefix) with `0` for a finite number, else right-justified with spaces before the sign.
 */
function percentPad(spec: PercentSpec, sign: string, body: string): string {
  const { flags, type } = spec;
  const numeric = 'diouxXeEfFgGc'.includes(type) && type !== 'c';
  const w = spec.width ?? 0;
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
  return sign + body;
}

/** Python's `ascii()` escaping of a repr: every non-ASCII code point as `\x..`, `\u....` or `\U........`. */
export function asciiEscape(s: string): string {
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
