/**
 * Python printf-style formatting (`str % args`) for the chat-template renderer, as CPython writes it.
 */
import { floatBody, negative } from './floatFormat';
import { markupEscape, pyRepr, pyStr } from './repr';
import { strLen } from './strings';
import { dictGet, isDict, isNumberLike, isStr, norm, numValue, PlainDict, PyDict, PyError, PyTuple, strOf, typeName } from './values';

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
