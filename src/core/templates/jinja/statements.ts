/**
 * The evaluator's statements: output, `if`, `for`, `set`, macros, `call` and `filter` blocks.
 */
import { BudgetMeter } from '../renderBudget';
import { MISSING } from './args';
import { findRefs, MacroRefs, N, tupleItems } from './ast';
import { ExprEvaluator } from './expressions';
import { isIterable, toList, truthy } from './protocols';
import { pyStr } from './repr';
import { journaledMapSet, spyWrites } from './journal';
import { bindingOf, Control, IterationWatch, LoopCtx, Scope } from './scope';
import type { Frame, LoopRun } from './traceHooks';
import { viewOf } from './tracedList';
import { makeDict, Namespace, PyCallable, PyError, PyTuple, typeName, Undef } from './values';

// ---------------------------------------------------------------------------------------------------------------
// Evaluation

/** Where a macro was defined: its parameters and body (AST nodes) and the scope its names resolve in. */
export interface MacroOrigin {
  params: N[];
  body: N[];
  scope: Scope;
}

const MACRO_ORIGINS = new WeakMap<PyCallable, MacroOrigin>();

/**
 * For tests only: `ignoreVarying` ends a header replay's loop at its first iteration with no output and no count of its
 * own, whatever it read or changed — a wrong proof, which the equality tests must catch; `skipped` counts the
 * iterations counted without being run.
 */
export const QUIET_LOOPS_TESTING = { ignoreVarying: false, skipped: 0 };

/** The integer attributes of a loop context (scope.ts `LoopCtx.attr`): never more than the loop's length. */
const LOOP_COUNTERS = new Set(['index', 'index0', 'revindex', 'revindex0', 'length']);

/** The definition of a macro made by {@link Renderer} (two macros with the same origin in equivalent scopes behave the same), or undefined. */
export function macroOrigin(fn: PyCallable): MacroOrigin | undefined {
  return MACRO_ORIGINS.get(fn);
}

/** One render's evaluator: {@link ExprEvaluator} plus the statements. */
export class Renderer extends ExprEvaluator {
  constructor(
    meter: BudgetMeter,
    now: () => Date,
    private readonly macroRefs: WeakMap<object, MacroRefs>,
  ) {
    super(meter, now);
  }

  /** Frames of the top-level chain, during the main run of a traced render only. */
  frames: Frame[] | null = null;

  /** Renders statements; stops early when a `break`/`continue` is pending. */
  block(nodes: N[], scope: Scope): string {
    if (this.frames !== null && this.hooks!.resumableBlocks.has(nodes)) return this.frameBlock(nodes, scope);
    let out = '';
    for (const n of nodes) {
      out += this.stmt(n, scope);
      if (out.length > 65536) this.meter.length(out.length);
      if (this.control !== Control.None) break;
    }
    return out;
  }

  /** {@link block} for a block of the top-level chain in a traced render: keeps its frame (where a resumed tail continues). */
  private frameBlock(nodes: N[], scope: Scope): string {
    const f: Frame = { nodes, scope, index: 0, out: '' };
    this.frames!.push(f);
    try {
      for (; f.index < nodes.length; f.index++) {
        f.out += this.stmt(nodes[f.index], scope);
        if (f.out.length > 65536) this.meter.length(f.out.length);
        if (this.control !== Control.None) break;
      }
      return f.out;
    } finally {
      this.frames!.pop();
    }
  }

  /**
   * The tail of a resumed render (prefixTrace.ts): the loop of `run` from its iteration `i` (with the traced list
   * cut at the prefix, and the state restored to that boundary), then the rest of every frame around it, innermost
   * first, exactly as {@link block} would have continued them.
   * @returns the output from the boundary to the end of the render
   */
  resumeFrom(run: LoopRun, i: number): string {
    let out = this.loopFrom(run.node, run.scope, run.loop, i, null);
    for (let d = run.frames.length - 1; d >= 0 && this.control === Control.None; d--) {
      const f = run.frames[d];
      for (let k = f.index + 1; k < f.nodes.length; k++) {
        out += this.stmt(f.nodes[k], f.scope);
        if (out.length > 65536) this.meter.length(out.length);
        if (this.control !== Control.None) break;
      }
    }
    return out;
  }

  private stmt(n: N, scope: Scope): string {
    switch (n.type) {
      case 'StringLiteral':
        return n.value;
      case 'Comment':
        return '';
      case 'If':
        return this.block(this.testValue(n.test, scope) ? n.body : n.alternate, scope);
      case 'For':
        return this.forStmt(n, scope);
      case 'Set': {
        if (this.watch !== null && scope.iter === this.watch) return this.watchedSet(n, scope, this.watch);
        const value = n.value ? this.expr(n.value, scope) : this.block(n.body, new Scope(scope));
        this.assign(n.assignee, value, scope, true);
        return '';
      }
      case 'Macro':
        scope.set(n.name.value, this.makeMacro(n.name.value, n.args, n.body, scope));
        return '';
      case 'Break':
        this.control = Control.Break;
        return '';
      case 'Continue':
        this.control = Control.Continue;
        return '';
      case 'CallStatement': {
        const caller = this.makeMacro('caller', n.callerArgs ?? [], n.body, scope);
        const fn = this.expr(n.call.callee, scope);
        const [args, kwargs] = this.args(n.call.args, scope);
        kwargs.set('caller', caller);
        return pyStr(this.call(fn, args, kwargs));
      }
      case 'FilterStatement': {
        const body = this.block(n.body, new Scope(scope));
        return pyStr(this.filterNode(n.filter, body, scope));
      }
      default:
        return pyStr(this.expr(n, scope));
    }
  }

  private forStmt(n: N, scope: Scope): string {
    let iterNode: N = n.iterable;
    let filter: N | null = null;
    if (iterNode.type === 'SelectExpression') {
      filter = iterNode.test;
      iterNode = iterNode.lhs;
    }
    const iterable = this.expr(iterNode, scope);
    // A traced list is walked lazily, each step observed (tracedList.ts); everything else is materialized first.
    const view = filter === null && this.hooks !== null ? viewOf(iterable) : undefined;
    let loop: LoopCtx;
    if (view) loop = new LoopCtx(view);
    else {
      let items = toList(iterable);
      if (filter) {
        const f = filter;
        items = items.filter((item) => {
          this.meter.step();
          const s = new Scope(scope);
          this.assign(n.loopvar, item, s, false);
          return truthy(this.expr(f, s));
        });
      }
      loop = new LoopCtx(items);
    }
    let run: LoopRun | null = null;
    if (view && this.frames !== null && this.hooks!.resumableFors.has(n)) {
      run = this.hooks!.beginLoop(n, scope, loop, this.frames, view);
      if (run === null) {
        // A header replay stops here (prefixTrace.ts): this statement is in a block of the top-level chain, whose
        // frames see the signal and return, up to the template's body (no exception unwinding per replay).
        this.control = Control.Stop;
        return '';
      }
    }
    return this.loopFrom(n, scope, loop, 0, run);
  }

  /**
   * Iterations `start`, `start + 1`, … of a `for` (the `else` block when the list is empty). With `run` (a resumable
   * loop of the main traced run) each boundary is a checkpoint and the test for the next item an exit observation.
   */
  private loopFrom(n: N, scope: Scope, loop: LoopCtx, start: number, run: LoopRun | null): string {
    let out = '';
    const watched = run === null && this.hooks !== null && this.hooks.quietLoops && n.loopvar.type === 'Identifier';
    for (let i = start; ; i++) {
      if (run) this.hooks!.boundary(run, i, out);
      if (!(run ? this.hooks!.exitHas(run, i) : loop.hasItem(i))) {
        if (i === 0) out = this.block(n.defaultBlock, scope);
        break;
      }
      this.meter.step();
      loop.index0 = i;
      // jinja2: each iteration starts from the enclosing scope; a `set` inside the body is gone next iteration.
      const s = new Scope(scope);
      s.vars.set('loop', loop);
      this.assign(n.loopvar, loop.item(i), s, false);
      let quiet = false;
      if (watched) {
        const body = this.watchedBody(n, s);
        out += body;
        quiet = body === '' && this.control !== Control.Break && this.lastWatchQuiet;
      } else out += this.block(n.body, s);
      this.meter.length(out.length);
      if (quiet) {
        // Every later iteration does what this one did: nothing (see watchedBody); counted, not run.
        this.control = Control.None;
        const rest = loop.itemsAfter(i);
        QUIET_LOOPS_TESTING.skipped += rest;
        this.meter.steps(rest);
        break;
      }
      if (this.control === Control.Break) {
        this.control = Control.None;
        break;
      }
      this.control = Control.None;
    }
    if (run) this.hooks!.endLoop(run, out);
    return out;
  }

  /** Whether the last {@link watchedBody} read no per-iteration value, changed no outside state and counted nothing. */
  private lastWatchQuiet = false;

  /**
   * The body of one loop iteration in a header replay, watched (scope.ts {@link IterationWatch}); sets
   * {@link lastWatchQuiet}. The iteration is quiet — and the caller ends the loop there, counting the later
   * iterations without running them — when it writes no output, counts no loop iteration or macro call of its own,
   * does not `break`, changes no state outside its own scopes (every change of state goes through journal.ts, whose
   * spy sees it) and reads no value that may differ in the next iteration: the loop variable, `loop`, a name the
   * iteration set from such a value — except inside a {@link countingSet}, whose name is then never read.
   *
   * Why the rest may be skipped: everything else the iteration read is the same in the next one (the state outside is
   * unchanged, its own names are set alike from the same values), so the next iteration makes the same decisions and
   * computes the same values — it is quiet too, and by induction so is every later one. A counting set cannot raise
   * in a later iteration (integers far from 2**53). The loop then ends with no more output and its iterations counted
   * (`BudgetMeter.steps`: the render budget sees the same count). A loop over a traced list observes nothing more: a
   * header replay records no observation.
   */
  private watchedBody(n: N, s: Scope): string {
    const w = new IterationWatch();
    s.iter = w;
    const prevWatch = this.watch;
    const prevSpy = spyWrites(w);
    this.watch = w;
    const count = this.meter.count;
    this.lastWatchQuiet = false;
    try {
      const body = this.block(n.body, s);
      this.lastWatchQuiet = (!w.varying || QUIET_LOOPS_TESTING.ignoreVarying) && this.meter.count === count;
      return body;
    } finally {
      this.watch = prevWatch;
      spyWrites(prevSpy);
    }
  }

  /**
   * `{% set %}` in a watched iteration ({@link watchedBody}) to a scope of the iteration: the value is evaluated with
   * its reads watched apart. A value that read no per-iteration value makes the name clean (reading it later reads
   * nothing per-iteration). Otherwise the name is not clean, and the iteration is not quiet unless the value is a
   * {@link countingSet} (the name is then per-iteration: a read of it makes the iteration not quiet).
   */
  private watchedSet(n: N, scope: Scope, w: IterationWatch): string {
    const outer = w.varying;
    w.varying = false;
    const value = n.value ? this.expr(n.value, scope) : this.block(n.body, new Scope(scope));
    const varied = w.varying;
    w.varying = outer;
    this.assign(n.assignee, value, scope, true);
    if (n.assignee.type !== 'Identifier') {
      if (varied) w.varying = true;
      return '';
    }
    const name = n.assignee.value as string;
    if (!varied) (scope.clean ??= new Set()).add(name);
    else {
      scope.clean?.delete(name);
      if (!n.value || !this.countingSet(n.value, scope, w)) w.varying = true;
    }
    return '';
  }

  /**
   * Whether `e` is integer arithmetic that no iteration can make raise: `+` and `-` over integer literals of at most
   * 2**31, `loop.index` / `index0` / `revindex` / `revindex0` / `length` of a loop, and `x|length` / `x|count` of a name
   * `x` that is the same in every iteration (Qwen3's `(messages|length - 1) - loop.index0`). Every such value is an
   * integer far from 2**53 in every iteration, and its evaluation changes nothing.
   */
  private countingSet(e: N, scope: Scope, w: IterationWatch): boolean {
    switch (e.type) {
      case 'IntegerLiteral':
        return Math.abs(e.value as number) <= 2 ** 31;
      case 'BinaryExpression': {
        const op = (e.operator as { value: string }).value;
        return (op === '+' || op === '-') && this.countingSet(e.left, scope, w) && this.countingSet(e.right, scope, w);
      }
      case 'MemberExpression':
        return (
          !e.computed &&
          e.property.type === 'Identifier' &&
          LOOP_COUNTERS.has(e.property.value) &&
          e.object.type === 'Identifier' &&
          bindingOf(e.object.value, scope)?.[1] instanceof LoopCtx
        );
      case 'FilterExpression': {
        if (e.filter.type !== 'Identifier' || (e.filter.value !== 'length' && e.filter.value !== 'count') || e.operand.type !== 'Identifier') return false;
        const b = bindingOf(e.operand.value, scope);
        return b !== undefined && (b[0].iter !== w || (b[0].clean?.has(e.operand.value) ?? false));
      }
    }
    return false;
  }

  /** `{% set target = value %}` / loop targets: names, tuples (nested), namespace attributes (set only). */
  private assign(target: N, value: unknown, scope: Scope, isSet: boolean): void {
    switch (target.type) {
      case 'Identifier':
        scope.set(target.value, value);
        return;
      case 'TupleLiteral': {
        const targets = tupleItems(target);
        if (!isIterable(value)) throw new PyError('TypeError', `cannot unpack non-iterable ${typeName(value)} object`);
        const items = toList(value);
        if (items.length !== targets.length) {
          throw new PyError(
            'ValueError',
            items.length > targets.length
              ? `too many values to unpack (expected ${targets.length})`
              : `not enough values to unpack (expected ${targets.length}, got ${items.length})`,
          );
        }
        targets.forEach((t, i) => this.assign(t, items[i], scope, isSet));
        return;
      }
      case 'MemberExpression': {
        if (!isSet || target.computed || target.property.type !== 'Identifier') break;
        const obj = this.expr(target.object, scope);
        if (!(obj instanceof Namespace)) throw new PyError('TemplateRuntimeError', 'cannot assign attribute on non-namespace object');
        journaledMapSet(obj, obj.attrs, target.property.value as string, value);
        return;
      }
    }
    throw new PyError('TemplateSyntaxError', `cannot assign to ${target.type}`);
  }

  private makeMacro(name: string, params: N[], body: N[], defScope: Scope): PyCallable {
    let refs = this.macroRefs.get(body);
    if (!refs) {
      refs = findRefs(body);
      this.macroRefs.set(body, refs);
    }
    const r = refs;
    const names = params.map((p) => (p.type === 'Identifier' ? p.value : p.key.value) as string);
    const macro = new PyCallable(name, 'macro', (args, kwargs) => {
      this.meter.enter();
      try {
        const s = new Scope(defScope);
        const kw = new Map(kwargs);
        const given: unknown[] = args.slice(0, names.length);
        let foundCaller = false;
        if (given.length !== names.length) {
          for (const p of names.slice(given.length)) {
            if (kw.has(p)) {
              given.push(kw.get(p));
              kw.delete(p);
            } else given.push(MISSING);
            if (p === 'caller') foundCaller = true;
          }
        }
        if (r.caller && !foundCaller) {
          s.vars.set('caller', kw.has('caller') ? kw.get('caller') : new Undef('No caller defined'));
          kw.delete('caller');
        }
        if (r.kwargs) s.vars.set('kwargs', makeDict(kw));
        else if (kw.size) {
          if (kw.has('caller'))
            throw new PyError('TypeError', `macro '${name}' was invoked with two values for the special caller argument. This is most likely a bug.`);
          throw new PyError('TypeError', `macro '${name}' takes no keyword argument '${kw.keys().next().value}'`);
        }
        if (r.varargs) s.vars.set('varargs', new PyTuple(args.slice(names.length)));
        else if (args.length > names.length) throw new PyError('TypeError', `macro '${name}' takes not more than ${names.length} argument(s)`);
        params.forEach((p, i) => {
          let v = given[i];
          if (v === MISSING) v = p.type === 'KeywordArgumentExpression' ? this.expr(p.value, s) : new Undef(`parameter '${names[i]}' was not provided`);
          s.vars.set(names[i], v);
        });
        const out = this.block(body, s);
        this.control = Control.None;
        return out;
      } finally {
        this.meter.leave();
      }
    });
    MACRO_ORIGINS.set(macro, { params, body, scope: defScope });
    return macro;
  }
}
