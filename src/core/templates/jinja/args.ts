/**
 * Python call-argument binding and slicing shared by the builtins.
 */
import { pyStr } from './repr';
import { isStr, Markup, PyError, PyIter, strOf, typeName, Undef } from './values';

/** No value given for a parameter (distinct from None). */
export const MISSING = Symbol('missing');

const NO_DEFAULTS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Binds Python call arguments to parameters.
 * @param params parameter names; `defaults[name]` holds each optional one's default
 * @returns one value per parameter (MISSING where neither given nor defaulted)
 * @throws PyError `TypeError` for unknown keywords, duplicates or too many positionals
 */
export function bind(
  fname: string,
  args: unknown[],
  kwargs: Map<string, unknown>,
  params: string[],
  defaults: Record<string, unknown> = NO_DEFAULTS,
): unknown[] {
  // Every parameter given by position, no keyword: the positional arguments as they are (what the steps below give).
  if (kwargs.size === 0 && args.length === params.length && !args.includes(MISSING)) return args.slice();
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
export function asIndex(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Undef) v.fail();
  throw new PyError('TypeError', `'${typeName(v)}' object cannot be interpreted as an integer${what ? ` (${what})` : ''}`);
}

export function optStr(v: unknown, what: string): string | null {
  if (v === null || v === MISSING) return null;
  if (isStr(v)) return strOf(v);
  throw new PyError('TypeError', `${what} arg must be None or str`);
}

/** jinja2 `soft_str`: a Markup stays Markup, anything else becomes `str(v)`. */
export function softStr(v: unknown): string | Markup {
  return v instanceof Markup ? v : pyStr(v);
}

/** Wraps a str result back into Markup when the receiver was Markup. */
export function like(receiver: string | Markup, s: string): string | Markup {
  return receiver instanceof Markup ? new Markup(s) : s;
}

export function gen(typeName: string, f: () => Generator<unknown>): PyIter {
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
