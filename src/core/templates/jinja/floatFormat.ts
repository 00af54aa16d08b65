/**
 * Exact float rounding for Python string formatting (`str % args` in ./printf, `str.format(...)` in ./strFormat,
 * `%.2f`, `round()`), as CPython writes them.
 *
 * Floats are rounded on their exact binary value with ties to even, as CPython does (`'%.2f' % 2.675` is
 * `2.67`, `'%.0f' % 2.5` is `2`); JS `toFixed` rounds ties up and would differ.
 */
import { PyError } from './values';

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

export function negative(x: number): boolean {
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
export function floatBody(x: number, type: string, prec: number | null, alt: boolean): string {
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
