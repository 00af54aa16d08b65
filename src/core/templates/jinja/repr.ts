/**
 * Python `str()` and `repr()` of template values, as jinja2 prints them (`{{ v }}`), and the messages of undefined values.
 */
import { journalReadAll } from './journal';
import { toList } from './protocols';
import { htmlEscape } from './strings';
import {
  dictEntries,
  DictView,
  isDict,
  Markup,
  Namespace,
  norm,
  PyCallable,
  PyFloat,
  PyIter,
  PyRange,
  PyTuple,
  typeName,
  Undef,
  unreproducible,
} from './values';

// ---------------------------------------------------------------------------------------------------------------
// Text: str() and repr()

/** Python's `repr(float)`: the shortest round-trip digits, fixed notation for exponents -4…15 (with `.0` when integral), else `d.ddde±XX`; NaN and infinities as JSON writes them. */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  const sign = mant.startsWith('-') ? '-' : '';
  const digits = mant.replace('-', '').replace('.', '');
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
    const frac = digits.slice(exp + 1);
    return `${sign}${intPart}.${frac || '0'}`;
  }
  const e = Math.abs(exp);
  return `${sign}${digits[0]}${digits.length > 1 ? '.' + digits.slice(1) : ''}e${exp < 0 ? '-' : '+'}${e < 10 ? '0' + e : e}`;
}

/** `str(float)` / `repr(float)` in Python (`inf`, `nan` spelled as Python does). */
export function floatStr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  return pythonFloatRepr(x);
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** Python `repr(str)`. */
export function reprStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      const cp = ch.codePointAt(0)!;
      out += cp < 0x100 ? '\\x' + hex(cp, 2) : cp < 0x10000 ? '\\u' + hex(cp, 4) : '\\U' + hex(cp, 8);
    } else out += ch;
  }
  return out + quote;
}

export function hex(n: number, w: number): string {
  return n.toString(16).padStart(w, '0');
}

/**
 * An int's digits. An integer beyond 2^53 can only come from data (arithmetic refuses to make one) and has already
 * lost digits to JSON parsing; it is still written in digits, as Python writes an int, never as `1e+21`.
 */
export function intStr(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : BigInt(n).toString();
}

/** Python `str(v)` as jinja2 prints it (`{{ v }}`): Undefined prints nothing. */
export function pyStr(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return intStr(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null) return 'None';
  if (v instanceof Undef || v === undefined) return '';
  if (v instanceof Markup) return v.s;
  if (v instanceof PyFloat) return floatStr(v.v);
  return pyRepr(v);
}

/** Python `repr(v)`. */
export function pyRepr(v: unknown): string {
  if (typeof v === 'string') return reprStr(v);
  if (typeof v === 'number') return intStr(v);
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null) return 'None';
  if (v instanceof PyFloat) return floatStr(v.v);
  if (Array.isArray(v)) return `[${v.map((x) => pyRepr(norm(x))).join(', ')}]`;
  if (v instanceof PyTuple) return v.items.length === 1 ? `(${pyRepr(v.items[0])},)` : `(${v.items.map(pyRepr).join(', ')})`;
  if (isDict(v))
    return `{${dictEntries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  if (v instanceof Undef || v === undefined) return 'Undefined';
  if (v instanceof Markup) return `Markup(${reprStr(v.s)})`;
  if (v instanceof Namespace) {
    journalReadAll(v);
    return `<Namespace {${[...v.attrs].map(([k, x]) => `${reprStr(k)}: ${pyRepr(x)}`).join(', ')}}>`;
  }
  if (v instanceof PyRange) return v.step === 1 ? `range(${v.start}, ${v.stop})` : `range(${v.start}, ${v.stop}, ${v.step})`;
  if (v instanceof DictView) return `dict_${v.kind}(${pyRepr(toList(v))})`;
  if (v instanceof PyCallable && v.kind === 'macro') return `<Macro ${reprStr(v.name)}>`;
  if (v instanceof PyIter) unreproducible(`a ${v.typeName} object`);
  if (v instanceof PyCallable) unreproducible(`the ${v.kind === 'method' ? 'method' : 'function'} ${v.name}`);
  if (v && typeof v === 'object' && 'pyRepr' in v && typeof (v as { pyRepr: unknown }).pyRepr === 'function') return (v as { pyRepr(): string }).pyRepr();
  unreproducible(`a ${typeName(v)} object`);
}

/** markupsafe `escape(v)`: a Markup stays as is, anything else is `str()`-ed and escaped. */
export function markupEscape(v: unknown): Markup {
  return v instanceof Markup ? v : new Markup(htmlEscape(pyStr(v)));
}

/** jinja2's `object_type_repr`: `None`, `dict object`, `jinja2.utils.Namespace object`, … */
function objectTypeRepr(obj: unknown): string {
  if (obj === null) return 'None';
  if (obj instanceof Namespace) return 'jinja2.utils.Namespace object';
  if (obj instanceof Markup) return 'markupsafe.Markup object';
  return `${typeName(obj)} object`;
}

/** The message of the Undefined that a missing attribute or item gives (jinja2 `Undefined._undefined_message`). */
export function undefinedMessage(obj: unknown, name: unknown): string {
  if (typeof name === 'string') return `${reprStr(objectTypeRepr(obj))} has no attribute ${reprStr(name)}`;
  return `${objectTypeRepr(obj)} has no element ${pyRepr(name)}`;
}
