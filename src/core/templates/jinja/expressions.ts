/**
 * The evaluator's expressions, and the sandbox's attribute and item rules.
 */
import { BudgetMeter } from '../renderBudget';
import { pySlice, sliceIndices } from './args';
import { N, testOf, Tok, tupleItems } from './ast';
import { Env, unsafeUndef } from './env';
import { FILTERS } from './filters';
import { Cycler, makeGlobals } from './globals';
import { pyAdd, pyDiv, pyFloorDiv, pyMod, pyMul, pyPow, pySub } from './operators';
import { pyCompare, pyEq, toList, truthy } from './protocols';
import { pyStr, undefinedMessage } from './repr';
import { builtinAttribute, UNSAFE } from './sandbox';
import { Control, IterationWatch, LoopCtx, Scope } from './scope';
import { INPUT_FLAG, type StateRead, type TraceHooks } from './traceHooks';
import { viewOf } from './tracedList';
import { codePoints } from './strings';
import { pyContains, TESTS } from './tests';
import {
  dictEntries,
  dictGet,
  isDict,
  isStr,
  makeDict,
  Markup,
  Namespace,
  norm,
  numValue,
  PyCallable,
  PyError,
  PyFloat,
  pyInt,
  PyRange,
  PyTuple,
  strOf,
  typeName,
  Undef,
} from './values';

/**
 * Evaluates expressions over the sandbox's rules; {@link Renderer} (./statements) adds the statements.
 * Implements the {@link Env} the builtins call back into.
 */
export abstract class ExprEvaluator implements Env {
  control: Control = Control.None;
  readonly globals: Scope;
  private traceHooks: TraceHooks | null = null;
  /**
   * Whether the hooks record reads of the render's state ({@link TraceHooks.recordsState}): the main run of a traced
   * render. A header replay's hooks do not, and its expressions then skip that bookkeeping (they evaluate alike).
   */
  private stateReads = false;
  /** The prefix tracer, during the main run of a traced render and its header replays only (prefixTrace.ts). */
  get hooks(): TraceHooks | null {
    return this.traceHooks;
  }
  set hooks(h: TraceHooks | null) {
    this.traceHooks = h;
    this.stateReads = h !== null && h.recordsState;
  }
  /** The value a read of {@link INPUT_FLAG} gives (traced renders). */
  flagValue = false;
  /** The loop iteration being watched (header replays: statements.ts `loopFrom`), or null. */
  watch: IterationWatch | null = null;
  /** Traced renders: the next state read (root variable, namespace attribute) is an operand's whole value ({@link operand}). */
  private relaxNext = false;
  /** The relaxable read the last {@link noteState} returned. */
  private lastRead: StateRead | null = null;

  /** @param meter the render budget's account (a resumed tail gets its own) */
  constructor(
    public meter: BudgetMeter,
    now: () => Date,
  ) {
    this.globals = new Scope(null);
    for (const [k, v] of makeGlobals(this, now)) this.globals.vars.set(k, v);
  }

  protected args(nodes: N[], scope: Scope): [unknown[], Map<string, unknown>] {
    const args: unknown[] = [];
    const kwargs = new Map<string, unknown>();
    const addKw = (k: string, v: unknown) => {
      if (kwargs.has(k)) throw new PyError('TypeError', `got multiple values for keyword argument '${k}'`);
      kwargs.set(k, v);
    };
    for (const a of nodes) {
      if (a.type === 'KeywordArgumentExpression') addKw(a.key.value, this.expr(a.value, scope));
      else if (a.type === 'SpreadExpression') args.push(...toList(this.expr(a.argument, scope)));
      else if (a.type === 'KeywordSpreadExpression') {
        const d = this.expr(a.argument, scope);
        if (!isDict(d)) throw new PyError('TypeError', `argument after ** must be a mapping, not ${typeName(d)}`);
        for (const [k, v] of dictEntries(d)) {
          if (!isStr(k)) throw new PyError('TypeError', 'keywords must be strings');
          addKw(strOf(k), v);
        }
      } else args.push(this.expr(a, scope));
    }
    return [args, kwargs];
  }

  expr(n: N, scope: Scope): unknown {
    switch (n.type) {
      case 'StringLiteral':
        return n.value;
      case 'IntegerLiteral':
        return pyInt(n.value);
      case 'FloatLiteral':
        return new PyFloat(n.value);
      case 'Identifier': {
        const v = this.lookup(n.value, scope);
        // A loop context that escapes (into a namespace, a macro) is state the journal does not restore.
        if (this.hooks !== null && v instanceof LoopCtx) this.hooks.poison();
        return v;
      }
      case 'MemberExpression': {
        const obj = n.object.type === 'Identifier' ? this.lookup(n.object.value, scope) : this.expr(n.object, scope);
        if (n.computed) {
          if (n.property.type === 'SliceExpression') return this.slice(obj, n.property, scope);
          return this.getitem(obj, this.expr(n.property, scope));
        }
        if (n.property.type === 'IntegerLiteral') return this.getitem(obj, n.property.value);
        return this.getattr(obj, n.property.value);
      }
      case 'CallExpression': {
        const fn = this.expr(n.callee, scope);
        const [args, kwargs] = this.args(n.args, scope);
        return this.call(fn, args, kwargs);
      }
      case 'FilterExpression':
        return this.filterNode(n.filter, this.expr(n.operand, scope), scope);
      case 'TestExpression': {
        const r = this.flagTest(n, scope) ?? this.callTest(n.test.value, this.expr(n.operand, scope), [], new Map());
        return n.negate ? !r : r;
      }
      case 'BinaryExpression':
        return this.binary((n.operator as Tok).value, n.left, n.right, scope);
      case 'UnaryExpression': {
        const op = (n.operator as Tok).value;
        if (op === 'not' && this.stateReads) return !this.testValue(n.argument, scope);
        const v = norm(this.expr(n.argument, scope));
        if (op === 'not') return !truthy(v);
        if (v instanceof Undef) v.fail();
        if (typeof v === 'number' || typeof v === 'boolean') return op === '-' ? pyInt(-numValue(v)) : numValue(v);
        if (v instanceof PyFloat) return op === '-' ? new PyFloat(-v.v) : v;
        throw new PyError('TypeError', `bad operand type for unary ${op}: '${typeName(v)}'`);
      }
      case 'Ternary':
        return this.testValue(n.condition, scope) ? this.expr(n.trueExpr, scope) : this.expr(n.falseExpr, scope);
      case 'SelectExpression':
        return this.testValue(n.test, scope)
          ? this.expr(n.lhs, scope)
          : new Undef('the inline if-expression evaluated to false and no else section was defined.');
      case 'ArrayLiteral':
        return (n.value as N[]).map((x) => this.expr(x, scope));
      case 'TupleLiteral':
        return new PyTuple(tupleItems(n).map((x) => this.expr(x, scope)));
      case 'ObjectLiteral': {
        const d = makeDict([]);
        for (const [k, v] of n.value as Map<N, N>) d.set(this.expr(k, scope), this.expr(v, scope));
        return d;
      }
    }
    throw new PyError('TemplateSyntaxError', `unexpected ${n.type} in an expression`);
  }

  /**
   * `flag is defined` and other tests of the traced boolean input whose answer is the same for both values: answered
   * without reading the input (so without an observation); undefined for any other test.
   */
  private flagTest(n: N, scope: Scope): boolean | undefined {
    if (this.hooks === null || n.operand.type !== 'Identifier' || this.resolve(n.operand.value, scope) !== INPUT_FLAG) return undefined;
    try {
      const a = this.callTest(n.test.value, true, [], new Map());
      return a === this.callTest(n.test.value, false, [], new Map()) ? a : undefined;
    } catch {
      return undefined;
    }
  }

  /** The raw value of a variable, or undefined. */
  private resolve(name: string, scope: Scope): unknown {
    for (let s: Scope | null = scope; s; s = s.parent) {
      const v = s.vars.get(name);
      if (s.born === 0 && this.stateReads) this.noteState(s, name, v, false);
      if (v !== undefined) {
        if (this.watch !== null) this.watch.read(s, name);
        return v;
      }
    }
    return undefined;
  }

  /**
   * Traced renders: tells the tracer about a read of the render's state (a variable of the root scope, found or not;
   * a namespace attribute). When {@link operand} asked for it and `whole` (the value read is the operand's value as
   * it is), the read is kept in {@link lastRead} to be settled by the operand's test.
   */
  private noteState(owner: object, key: string, value: unknown, whole: boolean): void {
    const relax = this.relaxNext && whole;
    this.relaxNext = false;
    const t = this.hooks!.readState(owner, key, value, relax);
    if (relax) this.lastRead = t;
  }

  /**
   * An operand of a test (a comparison, a truth test) in a traced render: its value and, when that value is exactly
   * one read of the render's state (a root variable `x`, a namespace attribute `ns.x`) and nothing else, that read —
   * to be settled with the test made of it (traceHooks.ts `StateRead`). Evaluates exactly as {@link expr}.
   */
  protected operand(n: N, scope: Scope): [unknown, StateRead | null] {
    this.lastRead = null;
    if (n.type === 'Identifier') {
      this.relaxNext = true;
      const v = this.lookup(n.value, scope);
      this.relaxNext = false;
      if (v instanceof LoopCtx) this.hooks!.poison();
      return [v, this.takeRead()];
    }
    if (n.type === 'MemberExpression' && !n.computed && n.property.type === 'Identifier') {
      const obj = n.object.type === 'Identifier' ? this.lookup(n.object.value, scope) : this.expr(n.object, scope);
      this.lastRead = null;
      this.relaxNext = true;
      const v = this.getattr(obj, n.property.value);
      this.relaxNext = false;
      return [v, this.takeRead()];
    }
    return [this.expr(n, scope), null];
  }

  private takeRead(): StateRead | null {
    const t = this.lastRead;
    this.lastRead = null;
    return t;
  }

  /** Python truth of an expression; in a traced render, a state read that is the whole operand is settled with it. */
  protected testValue(n: N, scope: Scope): boolean {
    if (!this.stateReads) return truthy(this.expr(n, scope));
    const [v, t] = this.operand(n, scope);
    const b = truthy(v);
    if (t) {
      // An identifier's value went through `norm` (lookup); an attribute's did not.
      const normed = n.type === 'Identifier';
      t.settle((x) => truthy(normed ? norm(x) : x) === b);
    }
    return b;
  }

  private lookup(name: string, scope: Scope): unknown {
    switch (name) {
      case 'true':
      case 'True':
        return true;
      case 'false':
      case 'False':
        return false;
      case 'none':
      case 'None':
        return null;
    }
    for (let s: Scope | null = scope; s; s = s.parent) {
      const v = s.vars.get(name);
      if (s.born === 0 && this.stateReads) this.noteState(s, name, v, v !== undefined && v !== INPUT_FLAG);
      if (v === INPUT_FLAG) {
        this.hooks?.readInput();
        return this.flagValue;
      }
      if (v !== undefined) {
        if (this.watch !== null) this.watch.read(s, name);
        return norm(v);
      }
    }
    return new Undef(() => `'${name}' is undefined`);
  }

  private binary(op: string, left: N, right: N, scope: Scope): unknown {
    if (this.stateReads && COMPARISONS.has(op)) return this.tracedComparison(op, left, right, scope);
    const l = this.expr(left, scope);
    if (op === 'and') return truthy(l) ? this.expr(right, scope) : l;
    if (op === 'or') return truthy(l) ? l : this.expr(right, scope);
    const r = this.expr(right, scope);
    if (COMPARISONS.has(op)) return compare(op, l, r);
    switch (op) {
      case '~': {
        const a = pyStr(l);
        const b = pyStr(r);
        this.meter.length(a.length + b.length);
        return a + b;
      }
      case '+':
        return pyAdd(l, r, this.meter);
      case '-':
        return pySub(l, r);
      case '*':
        return pyMul(l, r, this.meter);
      case '/':
        return pyDiv(l, r);
      case '//':
        return pyFloorDiv(l, r);
      case '%':
        return pyMod(l, r, this.meter);
      case '**':
        return pyPow(l, r);
    }
    throw new PyError('TemplateSyntaxError', `unknown operator ${op}`);
  }

  /**
   * A comparison in a traced render: evaluated as {@link binary} does; an operand that is one read of the render's
   * state, compared with a plain value (not a container, which a second comparison could read differently), is
   * settled with the comparison: another value read there passes when it gives the same answer.
   */
  private tracedComparison(op: string, left: N, right: N, scope: Scope): boolean {
    const [l, lt] = this.operand(left, scope);
    const [r, rt] = this.operand(right, scope);
    const res = compare(op, l, r);
    if (lt && rt) {
      lt.settle(null);
      rt.settle(null);
    } else if (lt) {
      const normed = left.type === 'Identifier';
      lt.settle(plainValue(r) ? (x) => compare(op, normed ? norm(x) : x, r) === res : null);
    } else if (rt) {
      const normed = right.type === 'Identifier';
      rt.settle(plainValue(l) ? (x) => compare(op, l, normed ? norm(x) : x) === res : null);
    }
    return res;
  }

  /**
   * `obj[start:stop:step]`. jinja2 compiles a slice to Python's own subscript (not the sandbox's `getitem`), so
   * its errors propagate: `None[1:]` and `{}[1:]` raise `TypeError`, as does a non-integer bound.
   */
  private slice(obj: unknown, n: N, scope: Scope): unknown {
    obj = norm(obj);
    const bounds = [n.start, n.stop, n.step].map((x: N | undefined) => (x ? norm(this.expr(x, scope)) : null));
    if (obj instanceof Undef) obj.fail();
    if (isDict(obj)) throw new PyError('TypeError', "unhashable type: 'slice'");
    const sliceable = Array.isArray(obj) || obj instanceof PyTuple || isStr(obj) || obj instanceof PyRange;
    if (!sliceable) throw new PyError('TypeError', `'${typeName(obj)}' object is not subscriptable`);
    const [start, stop, step] = bounds.map((v) => {
      if (v === null) return null;
      if (typeof v === 'number' || typeof v === 'boolean') return numValue(v);
      throw new PyError('TypeError', 'slice indices must be integers or None or have an __index__ method');
    });
    if (this.hooks !== null && (step === null || step === 1) && (start === null || start >= 0) && (stop === null || stop >= 0)) {
      // A traced list sliced from a non-negative start, step 1: a view of the same list, nothing observed (tracedList.ts).
      const view = viewOf(obj);
      if (view) return view.slice(start ?? 0, stop);
    }
    // A traced list is copied through its view (one observation of its length), not element by element through its proxy.
    if (Array.isArray(obj)) return pySlice((viewOf(obj)?.items() ?? obj).map(norm), start, stop, step);
    if (obj instanceof PyTuple) return new PyTuple(pySlice(obj.items, start, stop, step));
    if (typeof obj === 'string') return pySlice(codePoints(obj), start, stop, step).join('');
    if (obj instanceof Markup) return new Markup(pySlice(codePoints(obj.s), start, stop, step).join(''));
    const r = obj as PyRange;
    const [i, j, k] = sliceIndices(r.length, start, stop, step);
    return new PyRange(r.at(i), r.start + r.step * j, r.step * k);
  }

  // --- Env: the sandbox's attribute and item rules ------------------------------------------------------------

  /** Python attribute lookup (no item fallback). */
  attribute(obj: unknown, name: string): unknown {
    if (obj instanceof Namespace) {
      const has = obj.attrs.has(name);
      const v = has ? obj.attrs.get(name) : undefined;
      if (this.stateReads) this.noteState(obj, name, v, has);
      return has ? v : name.startsWith('__') ? UNSAFE : undefined;
    }
    if (obj instanceof LoopCtx) return obj.attr(name);
    if (obj instanceof Cycler) {
      if (name === 'current') return obj.current;
      if (name === 'items') return obj.items;
      if (name === 'next') return new PyCallable('cycler.next', 'method', () => obj.next());
      if (name === 'reset') return new PyCallable('cycler.reset', 'method', () => (obj.reset(), null));
      return undefined;
    }
    return builtinAttribute(this, obj, name);
  }

  /** `obj.name`: attribute first, then item (jinja2 `Environment.getattr`, sandboxed). */
  getattr(obj: unknown, name: string): unknown {
    obj = norm(obj);
    if (obj instanceof Undef) obj.fail();
    const a = this.attribute(obj, name);
    if (a === UNSAFE) return unsafeUndef(obj, name);
    if (a !== undefined) return a;
    const item = this.item(obj, name);
    return item !== undefined ? item : new Undef(() => undefinedMessage(obj, name));
  }

  /** `obj[key]`: item first, then attribute for a string key (jinja2 `Environment.getitem`, sandboxed). */
  getitem(obj: unknown, key: unknown): unknown {
    obj = norm(obj);
    if (obj instanceof Undef) obj.fail();
    const item = this.item(obj, key);
    if (item !== undefined) return item;
    if (isStr(key)) {
      const a = this.attribute(obj, strOf(key));
      if (a === UNSAFE) return unsafeUndef(obj, strOf(key));
      if (a !== undefined) return a;
    }
    return new Undef(() => undefinedMessage(obj, key instanceof Markup ? key.s : key));
  }

  /** `obj[key]` in Python, or undefined where Python raises `LookupError`/`TypeError`. */
  private item(obj: unknown, key: unknown): unknown {
    if (isDict(obj)) {
      try {
        return dictGet(obj, key);
      } catch {
        return undefined; // unhashable key: TypeError
      }
    }
    let seq: unknown[] | null = null;
    if (Array.isArray(obj)) seq = obj;
    else if (obj instanceof PyTuple) seq = obj.items;
    if (typeof key === 'boolean') key = key ? 1 : 0;
    if (typeof key !== 'number') return undefined;
    if (seq) {
      if (key >= 0 && this.hooks !== null) {
        // A traced list answers `x[i]` observing index i only (its length would be the whole list).
        const view = viewOf(seq);
        if (view) {
          const v = view.get(key);
          return v === undefined ? undefined : norm(v);
        }
      }
      const i = key < 0 ? key + seq.length : key;
      return i >= 0 && i < seq.length ? norm(seq[i]) : undefined;
    }
    if (isStr(obj)) {
      const cps = codePoints(strOf(obj));
      const i = key < 0 ? key + cps.length : key;
      if (i < 0 || i >= cps.length) return undefined;
      return obj instanceof Markup ? new Markup(cps[i]) : cps[i];
    }
    if (obj instanceof PyRange) {
      const i = key < 0 ? key + obj.length : key;
      return i >= 0 && i < obj.length ? obj.at(i) : undefined;
    }
    return undefined;
  }

  call(fn: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown {
    if (fn instanceof PyCallable) return fn.call(args, kwargs);
    if (fn instanceof Undef) fn.fail();
    throw new PyError('TypeError', `'${typeName(fn)}' object is not callable`);
  }

  protected filterNode(f: N, value: unknown, scope: Scope): unknown {
    if (f.type === 'Identifier') return this.callFilter(f.value, value, [], new Map());
    const [args, kwargs] = this.args(f.args, scope);
    const test = testOf(f.callee.value);
    if (test) return this.callTest(test.name, value, args, kwargs) !== test.negate;
    return this.callFilter(f.callee.value, value, args, kwargs);
  }

  callFilter(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): unknown {
    if (!Object.hasOwn(FILTERS, name)) throw new PyError('TemplateRuntimeError', `No filter named '${name}' found.`);
    return FILTERS[name](this, norm(value), args, kwargs);
  }

  callTest(name: string, value: unknown, args: unknown[], kwargs: Map<string, unknown>): boolean {
    if (!Object.hasOwn(TESTS, name)) throw new PyError('TemplateRuntimeError', `No test named '${name}' found.`);
    if (kwargs.size) throw new PyError('TypeError', `test '${name}' takes no keyword arguments`);
    return TESTS[name](this, norm(value), args);
  }
}

const COMPARISONS = new Set(['==', '!=', '<', '<=', '>', '>=', 'in', 'not in']);

/** The comparison operators of {@link ExprEvaluator} (`binary`). */
function compare(op: string, l: unknown, r: unknown): boolean {
  switch (op) {
    case '==':
      return pyEq(l, r);
    case '!=':
      return !pyEq(l, r);
    case '<':
      return pyCompare(l, r, op) < 0;
    case '<=':
      return pyCompare(l, r, op) <= 0;
    case '>':
      return pyCompare(l, r, op) > 0;
    case '>=':
      return pyCompare(l, r, op) >= 0;
    case 'in':
      return pyContains(r, l);
    default:
      return !pyContains(r, l);
  }
}

/** A value a comparison reads nothing more of: a str, number, bool, None, float or Markup. */
function plainValue(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v instanceof PyFloat || v instanceof Markup;
}
