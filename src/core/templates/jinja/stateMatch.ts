/**
 * Whether two renders' states are the same, up to which objects are which: the state a prefix render reached at the
 * start of its message loop, after running the template's header on its own (prefixTrace.ts "header replay"), and
 * the full traced render's state at the same point. The answer is the list of places where the prefix's state holds
 * another plain value (a root variable, a namespace attribute) — the "overrides" — or null when the two differ in a
 * way a tail cannot be given (an object where the full render has something else, a variable the full render has
 * and the prefix does not, two objects of one render that are one object in the other).
 *
 * Two values are the same when the template cannot tell them apart: identical, or made by the template with the same
 * content (lists, tuples, dicts, floats, Markup, undefined values, ranges, views of the traced list over the same
 * indices, macros defined by the same statement in corresponding scopes) — and the correspondence of objects is one
 * to one, so that `is sameas` answers alike. Namespaces correspond one to one as objects; their attributes are
 * compared one by one and may hold other plain values (overrides). Anything else (cyclers, joiners, iterators, loop
 * contexts, bound methods) is the same only when identical.
 */
import type { Born } from './journal';
import type { Scope } from './scope';
import { macroOrigin } from './statements';
import { viewOf } from './tracedList';
import { Markup, Namespace, PyCallable, PyDict, PyFloat, PyRange, PyTuple, Undef } from './values';

/** A place where the prefix render's state holds another plain value than the full render's. */
export interface Override {
  /** The full render's object that holds the place: its root scope or one of its namespaces. */
  owner: Born;
  /** That object's variables or attributes. */
  container: Map<string, unknown>;
  key: string;
  /** The prefix render's value: a str, number, bool or None. */
  value: unknown;
}

/** A str, number, bool or None: a value with no identity and nothing inside. */
export function isPlain(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/**
 * The overrides that turn the full render's root scope `full` into the prefix render's `prefix` (see the module
 * comment), or null when no such list exists. Only reads: neither state is changed.
 */
export function stateOverrides(prefix: Scope, full: Scope): Override[] | null {
  const m = new Matcher();
  m.bind(prefix, full);
  return m.container(prefix.vars, full.vars, full as unknown as Born) ? m.overrides : null;
}

class Matcher {
  private readonly fwd = new Map<object, object>();
  private readonly back = new Map<object, object>();
  readonly overrides: Override[] = [];
  /** Set when a namespace's attributes could not be matched: the whole comparison fails. */
  private broken = false;

  /** Pairs object `p` (prefix render) with `f` (full render); false when either is already paired otherwise. */
  bind(p: object, f: object): boolean {
    const a = this.fwd.get(p);
    const b = this.back.get(f);
    if (a !== undefined || b !== undefined) return a === f && b === p;
    this.fwd.set(p, f);
    this.back.set(f, p);
    return true;
  }

  /** The entries of `p` (prefix) against `f` (full), owned by `owner`: overrides where plain values differ. */
  container(p: Map<string, unknown>, f: Map<string, unknown>, owner: Born): boolean {
    for (const key of f.keys()) if (!p.has(key)) return false;
    for (const [key, pv] of p) {
      if (f.has(key) && this.same(pv, f.get(key))) continue;
      if (this.broken || !isPlain(pv)) return false;
      this.overrides.push({ owner, container: f, key, value: pv });
    }
    return !this.broken;
  }

  same(p: unknown, f: unknown): boolean {
    if (Object.is(p, f)) return typeof p !== 'object' || p === null || this.bind(p, f as object);
    if (typeof p !== 'object' || p === null || typeof f !== 'object' || f === null) return false;
    const bound = this.fwd.get(p);
    if (bound !== undefined) return bound === f;
    if (this.back.has(f)) return false;
    const pv = viewOf(p);
    const fv = viewOf(f);
    if (pv || fv) return !!pv && !!fv && pv.trace === fv.trace && pv.lo === fv.lo && pv.hi === fv.hi && this.bind(p, f);
    if (p instanceof Namespace) {
      if (!(f instanceof Namespace)) return false;
      this.bind(p, f);
      if (!this.container(p.attrs, f.attrs, f)) this.broken = true;
      return !this.broken;
    }
    if (Array.isArray(p)) return Array.isArray(f) && this.bind(p, f) && p.length === f.length && p.every((x, i) => this.same(x, f[i]));
    if (p instanceof PyTuple) return f instanceof PyTuple && this.bind(p, f) && this.sameItems(p.items, f.items);
    if (p instanceof PyDict) {
      if (!(f instanceof PyDict) || p.m.size !== f.m.size || !this.bind(p, f)) return false;
      const fe = [...f.m];
      let i = 0;
      for (const [h, [k, v]] of p.m) {
        const [fh, [fk, fv2]] = fe[i++];
        if (!Object.is(h, fh) || !this.same(k, fk) || !this.same(v, fv2)) return false;
      }
      return true;
    }
    if (p instanceof PyFloat) return f instanceof PyFloat && Object.is(p.v, f.v) && this.bind(p, f);
    if (p instanceof Markup) return f instanceof Markup && p.s === f.s && this.bind(p, f);
    if (p instanceof Undef) return f instanceof Undef && p.exc === f.exc && p.hint === f.hint && this.bind(p, f);
    if (p instanceof PyRange) return f instanceof PyRange && p.start === f.start && p.stop === f.stop && p.step === f.step && this.bind(p, f);
    if (p instanceof PyCallable) {
      if (!(f instanceof PyCallable) || p.kind !== 'macro' || f.kind !== 'macro' || p.name !== f.name) return false;
      const a = macroOrigin(p);
      const b = macroOrigin(f);
      // Scopes are paired only as the two root scopes (bound first): a macro defined elsewhere is never the same.
      return !!a && !!b && a.params === b.params && a.body === b.body && this.fwd.get(a.scope) === b.scope && this.bind(p, f);
    }
    return false;
  }

  private sameItems(p: unknown[], f: unknown[]): boolean {
    return p.length === f.length && p.every((x, i) => this.same(x, f[i]));
  }
}
