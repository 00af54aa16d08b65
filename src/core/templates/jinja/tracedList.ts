/**
 * A traced list: the `messages` list of a prefix-traced render (prefixTrace.ts), which records every observation
 * the template makes of it, and which can be cut to a prefix afterwards.
 *
 * The list is given to the template as a `Proxy` over an array, so that `Array.isArray` holds and every builtin
 * works unchanged; every read of its contents — `length`, an index, `in`, iteration, `Object.keys` — goes through
 * the proxy's traps, which answer for the current `limit` (the prefix `base[:limit]`) and record what was observed.
 * Nothing can read the list without being recorded (the target of the proxy is an empty array; the elements live
 * in the trace). The evaluator reads it more precisely in a few places (the `for` loop, `loop.last`, `x[i]`,
 * `x[a:]`, truth), through the methods of {@link ListView}, which record exactly what they answer.
 *
 * An observation is recorded as the set of prefix lengths `k` (0 ≤ k ≤ n, n = the full length) for which the
 * answer under `base[:k]` differs from the answer under the full list — always an interval `[a, b)` of `k`,
 * because every answer depends only on the visible length `min(hi, k) - lo` of a view, a non-decreasing function
 * of `k`. The intervals, by observation of view `base[lo:hi]` (`L(k)` its visible length, `i` a view index):
 * - length (`len`, negative indices, `loop.length`): differs iff `L(k) ≠ L(n)`: `[0, min(hi, n))` when `L(n) > 0`;
 * - index `i` exists / element `i`: when `i < L(n)`, differs iff `L(k) ≤ i`: `[0, lo + i + 1)`;
 * - `loop.last` at `i`: `[0, lo + i + 1)` when `i` is the last, else only `k = lo + i + 1`;
 * - truth: `[0, lo + 1)` when the list is not empty.
 * Slicing `x[a:b]` with `a, b ≥ 0` and step 1 observes nothing: it is the view `base[lo+a : min(hi, lo+b)]`
 * under every `k`.
 */

/** Receives the observations of the main traced run. */
export interface ObservationSink {
  /** Prefix lengths `k` in `[a, b)` would have observed something else here. */
  cut(a: number, b: number): void;
}

/** The full list, the current limit (n in the main run, k in a tail) and where observations go. */
export class ListTrace {
  /** Visible prefix of {@link base}: the render sees `base[:limit]`. */
  limit: number;
  /** Where observations are recorded (null: not recorded, in tails). */
  sink: ObservationSink | null = null;
  readonly n: number;

  /** @param base the full list; its elements must be values that `norm` keeps as they are (objects) */
  constructor(readonly base: readonly unknown[]) {
    this.n = base.length;
    this.limit = this.n;
  }

  /** The list as the template sees it. */
  root(): unknown[] {
    return makeView(this, 0, Infinity);
  }

  cut(a: number, b: number): void {
    if (this.sink && b > a) this.sink.cut(Math.max(0, a), Math.min(b, this.n + 1));
  }
}

/** A view `base[lo:hi]` of a traced list, cut at the trace's limit. */
export class ListView {
  constructor(
    readonly trace: ListTrace,
    readonly lo: number,
    readonly hi: number,
  ) {}

  /** Visible length under `limit` (not an observation). */
  private lengthAt(limit: number): number {
    return Math.max(0, Math.min(this.hi, limit) - this.lo);
  }

  /** `len(view)`, observed. */
  length(): number {
    const full = this.lengthAt(this.trace.n);
    if (full > 0) this.trace.cut(0, Math.min(this.hi, this.trace.n));
    return this.lengthAt(this.trace.limit);
  }

  /** Whether index `i` (≥ 0) exists, observed. */
  has(i: number): boolean {
    if (i < this.lengthAt(this.trace.n)) this.trace.cut(0, this.lo + i + 1);
    return i < this.lengthAt(this.trace.limit);
  }

  /** Element `i` (≥ 0), or undefined past the end; observed. */
  get(i: number): unknown {
    return this.has(i) ? this.trace.base[this.lo + i] : undefined;
  }

  /** Element `i`, which the caller has observed to exist (the loop's own element). */
  at(i: number): unknown {
    return this.trace.base[this.lo + i];
  }

  /** Whether `i` (an existing index) is the last, observed (`loop.last`). */
  isLast(i: number): boolean {
    const full = this.lengthAt(this.trace.n);
    if (full === i + 1) this.trace.cut(0, this.lo + i + 1);
    else this.trace.cut(this.lo + i + 1, this.lo + i + 2);
    return this.lengthAt(this.trace.limit) === i + 1;
  }

  /** Python truth of the list, observed. */
  nonEmpty(): boolean {
    return this.has(0);
  }

  /**
   * The visible items as a new array, observed as its length is (reading the length and then every index, as a copy
   * through the proxy does, observes no more than the length).
   */
  items(): unknown[] {
    const n = this.length();
    return this.trace.base.slice(this.lo, this.lo + n);
  }

  /** `view[a:b]` for `a ≥ 0`, `b ≥ 0` or null, step 1: a new view; observes nothing. */
  slice(a: number, b: number | null): unknown[] {
    const lo = this.lo + a;
    const hi = b === null ? this.hi : Math.min(this.hi, this.lo + b);
    return makeView(this.trace, lo, Math.max(lo, hi));
  }
}

const VIEWS = new WeakMap<object, ListView>();

/** The view behind a traced list, or undefined for any other value. */
export function viewOf(v: unknown): ListView | undefined {
  return typeof v === 'object' && v !== null ? VIEWS.get(v) : undefined;
}

/** Canonical array index of a property key, or -1. */
function indexOfKey(key: string | symbol): number {
  if (typeof key !== 'string' || key.length === 0 || key.length > 15) return -1;
  const c = key.charCodeAt(0);
  if (c < 48 || c > 57 || (c === 48 && key.length > 1)) return -1;
  for (let i = 1; i < key.length; i++) {
    const d = key.charCodeAt(i);
    if (d < 48 || d > 57) return -1;
  }
  return Number(key);
}

function readOnly(): never {
  throw new Error('internal: a traced list was modified');
}

function makeView(trace: ListTrace, lo: number, hi: number): unknown[] {
  const view = new ListView(trace, lo, hi);
  const proxy = new Proxy<unknown[]>([], {
    get(_t, key) {
      if (key === 'length') return view.length();
      const i = indexOfKey(key);
      if (i >= 0) return view.get(i);
      return Reflect.get(Array.prototype, key);
    },
    has(_t, key) {
      if (key === 'length') return true;
      const i = indexOfKey(key);
      if (i >= 0) return view.has(i);
      return key in Array.prototype;
    },
    ownKeys() {
      const n = view.length();
      const keys: string[] = [];
      for (let i = 0; i < n; i++) keys.push(String(i));
      keys.push('length');
      return keys;
    },
    getOwnPropertyDescriptor(_t, key) {
      if (key === 'length') return { value: view.length(), writable: true, enumerable: false, configurable: false };
      const i = indexOfKey(key);
      if (i >= 0 && view.has(i)) return { value: view.at(i), writable: true, enumerable: true, configurable: true };
      return undefined;
    },
    set: readOnly,
    defineProperty: readOnly,
    deleteProperty: readOnly,
    setPrototypeOf: readOnly,
    preventExtensions: readOnly,
  });
  VIEWS.set(proxy, view);
  return proxy;
}
