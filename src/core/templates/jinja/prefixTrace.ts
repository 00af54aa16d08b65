/**
 * Every prefix render of a conversation from one traced render: `R(m[:k], flag)` for all `k ≤ n` and both values
 * of a boolean input (`add_generation_prompt`), each proven equal to the real render or left to it.
 *
 * The proof. The evaluator is deterministic, and while tracing, the list (tracedList.ts) and the flag (a read of
 * {@link INPUT_FLAG}) are its only inputs that differ between the full render `R(m, G)` and a prefix render
 * `R(m[:k], g)`: every observation of them is recorded with the set of `(k, g)` whose answer would differ.
 * 1. Up to the first observation whose answer differs for `(k, g)` ("the cut"), the prefix render executes exactly
 *    as the full one: same statements, same values (the list reads as `m[:k]` through the same views), same output.
 * 2. Checkpoints are taken at the boundaries of a resumable loop: a `for` over a traced list that sits in the
 *    template body or in `if` branches of it (never inside a loop, macro or capture), so that at a boundary the
 *    render's whole state is the journaled state (journal.ts: root variables, namespaces, cyclers, joiners,
 *    `loop.changed`), the loop's index and the frames of the top-level chain (statement positions and outputs).
 * 3. For `(k, g)` cut after checkpoint `c` (the latest before the cut), `R(m[:k], g)` = the output up to `c` + the
 *    rest of the render run from `c`'s state with the list cut to `m[:k]` and the flag `g`: the journal restores the
 *    state at `c`, the same evaluator continues the loop from its iteration and then every enclosing frame. That
 *    tail is a real execution of the prefix render from the point where the two still agree.
 * 4. A prefix whose cut is the loop's own end (its list ends at boundary `j`) rejoins the full render when that
 *    loop ends, if the state at the loop's end equals the state at `j` (no output since, every journaled value the
 *    same, no iterator that existed at `j` advanced, and no `else` block for `j = 0`): both renders then continue
 *    from the same state at the same statement, so the search for its cut resumes there. This serves templates
 *    that scan all messages before rendering them (DeepSeek-V3's system-prompt pass).
 * 5. A prefix never cut renders exactly as the full render.
 * 6. Header replay. A prefix cut before the first checkpoint (Qwen3 reads `messages|length` in its header, before
 *    its message loop) runs the template for real from its start with the list cut to `m[:k]`, up to the start of
 *    its first resumable loop — the header, cheap — and stops there. A loop of the header ends at its first quiet
 *    iteration, the later ones counted only (statements.ts `watchedBody`): Qwen3's reverse walk runs back to the last user
 *    turn and one iteration more, not to the first message. If that is the loop of the first checkpoint
 *    (same statement, same frames, same view of the list), the two states are compared (stateMatch.ts): they must be
 *    the same up to which objects are which, except for plain values in some root variables and namespace
 *    attributes (the overrides: Qwen3's `ns.last_query_index`). From there the prefix follows the full render
 *    while (a) no observation of the list or the flag after the first checkpoint differs for `(k, g)` (the cuts are
 *    kept a second time, from the first checkpoint on) and (b) every read of an overridden place gives the same
 *    decision: each read of a root variable or namespace attribute after the first checkpoint is recorded in order,
 *    either as a plain read (fails for any other value) or, when the value read is the whole operand of a
 *    comparison with a plain value or of a truth test, as that test (`loop.index0 > ns.last_query_index` fails only
 *    for a value that answers otherwise); a write heals the place (both renders write the same value, everything
 *    before it being the same). The prefix is then its own header's output + the full render's output from the
 *    first checkpoint to the checkpoint before the first failing read or cut + a tail from that checkpoint with the
 *    overrides applied (those not healed before it) — or the full render's rest when nothing fails. Without
 *    overrides, prefixes that rejoin at a loop's end (4) rejoin here too.
 * Anything else — a cut before the first checkpoint whose header replay does not reach the same loop in a matching
 * state, an invalid checkpoint (an iterator consumed across it), an error — is not served: the caller renders it for
 * real.
 */
import type { MacroRefs, N } from './ast';
import { BudgetMeter, type RenderBudget } from '../renderBudget';
import { activateJournal, isChange, isConsume, Journal, journaledMapSet, type Born, type JournalWatcher } from './journal';
import { LoopCtx, Control, Scope } from './scope';
import { stateOverrides, type Override } from './stateMatch';
import { Renderer } from './statements';
import { INPUT_FLAG, type Frame, type LoopRun, type StateRead, type TraceHooks } from './traceHooks';
import { ListTrace, type ListView, type ObservationSink } from './tracedList';
import {
  ABSENT,
  Access,
  CHAINS,
  currentValue,
  HeaderHooks,
  Kind,
  Layer,
  NEVER,
  overrideFailure,
  Run,
  topLevelChain,
  UNCUT,
  type Checkpoint,
  type Pair,
} from './prefixTraceParts';

/** Options of a traced render. */
export interface PrefixTraceOptions {
  budget: Readonly<RenderBudget>;
  /** The clock, read once: the full render and every tail see the same time. */
  now: () => Date;
  /** Serve prefixes cut before the first checkpoint by header replay (module comment, 6); default true. */
  headerReplay?: boolean;
}

/**
 * For tests only: `ignoreStateReads` makes header replay follow the full render past reads of overridden places as
 * if every one gave the same decision — a wrong proof, which the equality tests must catch.
 */
export const PREFIX_TRACE_TESTING = { ignoreStateReads: false };

/** One traced render of a template over a list, serving its prefix renders. */
export class PrefixTrace implements TraceHooks, ObservationSink, JournalWatcher {
  readonly resumableBlocks: ReadonlySet<N[]>;
  readonly resumableFors: ReadonlySet<N>;
  readonly recordsState = true;
  readonly quietLoops = false;
  /** Length of the full list. */
  readonly n: number;
  private readonly trace: ListTrace;
  private readonly renderer: Renderer;
  private readonly journal = new Journal(false);
  private readonly checkpoints: Checkpoint[] = [];
  private lastCp = -1;
  /** The cuts from the template's start (per flag value, 0 = false: for each k, UNCUT or a checkpoint, -1: none). */
  private readonly fromStart: Layer;
  /** Header replay (module comment, 6): the cuts from the first checkpoint on, with and without rejoining. */
  private afterHeader: Layer | null = null;
  private afterHeaderFirst: Layer | null = null;
  private readonly layers: Layer[] = [];
  /** The end of the widest range of prefixes cut before the first checkpoint. */
  private headerCutEnd = 0;
  /** Accesses to the state after the first checkpoint, by owner and key, in order (header replay only). */
  private readonly accesses = new Map<object, Map<unknown, Access[]>>();
  /** The first checkpoint at which each namespace was read whole. */
  private readonly wholeReads = new Map<object, number>();
  private recording = false;
  private readonly root: Scope;
  private readonly rootVars: [string, unknown][];
  private readonly body: N[];
  private finalCount = 0;
  /**
   * Header replays: key 3k for a header that did not read the flag (the replay is then the same for both values: up
   * to a read of the flag both run alike), 3k + 1 + g for one that did; its output, count and overrides (null: no match).
   */
  private readonly headers = new Map<number, { text: string; count: number; overrides: Override[] } | null>();
  private exiting: Run | null = null;
  private poisoned = false;
  private minDirtyBorn = Infinity;
  private fullText: string | null = null;
  private readonly fullFlag: number;
  /** Whether the template read the flag before the first checkpoint: no render with the other flag value can be served (trace again with it). */
  flagReadEarly = false;

  /**
   * Renders the template once over the full list, recording.
   * @param vars the template's variables; `vars[listName]` the list (its elements objects), `vars[flagName]` the boolean input
   */
  constructor(
    body: N[],
    macroRefs: WeakMap<object, MacroRefs>,
    vars: Record<string, unknown>,
    listName: string,
    flagName: string,
    private readonly opts: PrefixTraceOptions,
  ) {
    let chain = CHAINS.get(body);
    if (!chain) CHAINS.set(body, (chain = topLevelChain(body)));
    this.resumableBlocks = chain.blocks;
    this.resumableFors = chain.fors;
    this.trace = new ListTrace(vars[listName] as unknown[]);
    this.n = this.trace.n;
    this.fromStart = new Layer(this.n, true);
    this.layers.push(this.fromStart);
    this.fullFlag = vars[flagName] ? 1 : 0;
    this.body = body;
    const r = (this.renderer = new Renderer(new BudgetMeter(opts.budget), opts.now, macroRefs));
    const root = (this.root = new Scope(r.globals));
    root.born = 0;
    for (const [k, v] of Object.entries(vars)) if (v !== undefined) root.vars.set(k, v);
    root.vars.set(listName, this.trace.root());
    root.vars.set(flagName, INPUT_FLAG);
    this.rootVars = [...root.vars];
    r.flagValue = this.fullFlag === 1;
    r.hooks = this;
    r.frames = [];
    this.trace.sink = this;
    this.journal.watcher = this;
    const prev = activateJournal(this.journal);
    try {
      const out = r.block(body, root);
      r.meter.length(out.length);
      this.fullText = out;
    } catch {
      this.fullText = null; // prefixes cut before the error are still served
    } finally {
      this.finalCount = r.meter.count;
      activateJournal(prev);
      this.journal.watcher = null;
      this.recording = false;
      this.trace.sink = null;
      r.hooks = null;
      r.frames = null;
      r.control = Control.None;
    }
    this.sweepConsumed();
  }

  /**
   * `R(list[:k], flag)` when proven (see the module comment), else undefined (render it for real).
   * Never throws: a tail that raises or runs past the budget is not served.
   */
  render(k: number, flag: boolean): string | undefined {
    if (!Number.isInteger(k) || k < 0 || k > this.n) return undefined;
    const g = flag ? 1 : 0;
    const at = this.fromStart.res[g][k];
    if (at === UNCUT) return this.fullText ?? undefined;
    if (at < 0) return this.afterHeaderReplay(k, g);
    const cp = this.checkpoints[at];
    if (!this.usable(cp)) return undefined;
    const out = this.tail(cp, k, flag, [], 0, cp.text.length);
    if (out === undefined) return undefined;
    // The output up to a checkpoint is the full render's (top-level blocks only append); a tail that continues it: a slice.
    const full = this.fullText;
    if (full !== null && full.startsWith(out, cp.text.length)) return full.slice(0, cp.text.length + out.length);
    return this.upTo(cp) + out;
  }

  /** The output from `from` to `cp`: a slice of the flat full text, not `cp`'s own text (a rope each use would copy). */
  private upTo(cp: Checkpoint, from = 0): string {
    return this.fullText !== null ? this.fullText.slice(from, cp.text.length) : cp.text.slice(from);
  }

  private usable(cp: Checkpoint): boolean {
    return cp.consumedBorn > cp.jpos && this.minDirtyBorn > cp.jpos;
  }

  /**
   * The rest of a render from checkpoint `cp`, the list cut to `k`, with `overrides` applied to the state there.
   * @param shift iterations the prefix render counted more than the full render up to `cp` (its own header's)
   * @param before the length of the prefix render's output before `cp` (for the budget's length check)
   */
  private tail(cp: Checkpoint, k: number, flag: boolean, overrides: readonly Override[], shift: number, before: number): string | undefined {
    // Past the budget at `cp` (a header replay's own iterations can take it there), the prefix render raised before it.
    if (cp.iterations + shift > this.opts.budget.maxLoopIterations) return undefined;
    const r = this.renderer;
    this.journal.moveTo(cp.jpos);
    const tailJournal = new Journal(true, cp.jpos, (born) => (this.minDirtyBorn = Math.min(this.minDirtyBorn, born)));
    const prev = activateJournal(tailJournal);
    this.trace.limit = k;
    r.flagValue = flag;
    r.meter = new BudgetMeter(this.opts.budget, cp.iterations + shift);
    try {
      for (const o of overrides) journaledMapSet(o.owner, o.container, o.key, o.value);
      const out = r.resumeFrom(cp.run, cp.i);
      r.meter.length(before + out.length);
      return out;
    } catch {
      return undefined;
    } finally {
      tailJournal.moveTo(0);
      activateJournal(prev);
      this.trace.limit = this.n;
      r.control = Control.None;
    }
  }

  /** A prefix cut before the first checkpoint, by header replay (module comment, 6), or undefined. */
  private afterHeaderReplay(k: number, g: number): string | undefined {
    const cp0 = this.checkpoints[0];
    if (!this.afterHeader || !this.afterHeaderFirst || cp0 === undefined || cp0.jpos !== 0) return undefined;
    const head = this.header(k, g, cp0);
    if (!head) return undefined;
    const overrides = head.overrides;
    let at: number;
    let apply: Override[] = overrides;
    if (overrides.length === 0) at = this.afterHeader.res[g][k];
    else {
      const listCut = this.afterHeaderFirst.res[g][k];
      let cut = listCut === UNCUT ? NEVER : listCut;
      const heals: number[] = [];
      for (const o of overrides) {
        const [fail, heal] = this.firstFailure(o);
        cut = Math.min(cut, fail);
        heals.push(heal);
      }
      at = cut === NEVER ? UNCUT : cut;
      // A place written before the checkpoint resumed from holds there what the prefix render wrote too.
      apply = overrides.filter((_, i) => heals[i] >= cut);
    }
    const shift = head.count - cp0.iterations;
    const base = cp0.text.length;
    if (at === UNCUT) {
      const full = this.fullText;
      if (full === null || head.count + this.finalCount - cp0.iterations > this.opts.budget.maxLoopIterations) return undefined;
      if (head.text.length + full.length - base > this.opts.budget.maxOutputLength) return undefined;
      return head.text === cp0.text ? full : head.text + full.slice(base);
    }
    const cp = this.checkpoints[at];
    if (!this.usable(cp)) return undefined;
    const out = this.tail(cp, k, g === 1, apply, shift, head.text.length + cp.text.length - base);
    if (out === undefined) return undefined;
    if (head.text === cp0.text) {
      const full = this.fullText;
      if (full !== null && full.startsWith(out, cp.text.length)) return full.slice(0, cp.text.length + out.length);
      return this.upTo(cp) + out;
    }
    return head.text + this.upTo(cp, base) + out;
  }

  /** The header replay of `(k, g)` and its overrides (computed once per prefix length when the header does not read the flag). */
  private header(k: number, g: number, cp0: Checkpoint): { text: string; count: number; overrides: Override[] } | undefined {
    for (const key of [3 * k, 3 * k + 1 + g]) if (this.headers.has(key)) return this.headers.get(key) ?? undefined;
    const head = this.replayHeader(k, g, cp0);
    let out: { text: string; count: number; overrides: Override[] } | null = null;
    if (head) {
      this.journal.moveTo(cp0.jpos);
      const overrides = stateOverrides(head.root, this.root);
      if (overrides) out = { text: head.text, count: head.count, overrides };
    }
    this.headers.set(head?.flagRead === false ? 3 * k : 3 * k + 1 + g, out);
    return out ?? undefined;
  }

  /**
   * Runs the template from its start for `m[:k]` and flag `g` up to the start of its first resumable loop; that must
   * be the loop of checkpoint `cp0`, in the same frames, over the same view of the list. Undefined otherwise (or
   * when the header raises, runs past the budget or lets a loop context escape).
   */
  private replayHeader(k: number, g: number, cp0: Checkpoint): { root: Scope; text: string; count: number; flagRead: boolean } | undefined {
    const r = this.renderer;
    const hooks = new HeaderHooks(this.resumableBlocks, this.resumableFors);
    const root = new Scope(r.globals);
    for (const [name, v] of this.rootVars) root.vars.set(name, v);
    const prev = activateJournal(new Journal(true));
    this.trace.limit = k;
    r.flagValue = g === 1;
    r.meter = new BudgetMeter(this.opts.budget);
    r.hooks = hooks;
    r.frames = [];
    let count: number;
    try {
      r.block(this.body, root);
      if (r.control !== Control.Stop) return undefined; // no resumable loop reached
      count = r.meter.count;
    } catch {
      return undefined;
    } finally {
      activateJournal(prev);
      r.hooks = null;
      r.frames = null;
      r.control = Control.None;
      this.trace.limit = this.n;
    }
    const at = hooks.at!;
    const run = cp0.run;
    if (hooks.poisoned || at.node !== run.node || at.view.lo !== run.view.lo || at.view.hi !== run.view.hi) return undefined;
    if (at.frames.length !== run.frames.length) return undefined;
    for (let d = 0; d < at.frames.length; d++) {
      const a = at.frames[d];
      const b = run.frames[d];
      if (a.nodes !== b.nodes || a.index !== b.index || a.scope !== root || b.scope !== this.root) return undefined;
    }
    if (run.scope !== this.root) return undefined;
    return { root, text: at.text, count, flagRead: hooks.flagRead };
  }

  /** {@link overrideFailure} of `o`, or nothing failing when tests force the proof (`PREFIX_TRACE_TESTING`). */
  private firstFailure(o: Override): [fail: number, heal: number] {
    return PREFIX_TRACE_TESTING.ignoreStateReads ? [NEVER, NEVER] : overrideFailure(this.accesses, this.wholeReads, o);
  }

  // --- ObservationSink ------------------------------------------------------------------------------------------

  cut(a: number, b: number): void {
    for (let g = 0; g < 2; g++) this.cutRange(g, a, b);
  }

  private cutRange(g: number, a: number, b: number): void {
    if (this.lastCp < 0) this.headerCutEnd = Math.max(this.headerCutEnd, b);
    for (const layer of this.layers) {
      const res = layer.res[g];
      for (let k = Math.max(a, layer.minUncut[g]); k < b; k++) {
        if (res[k] !== UNCUT) continue;
        res[k] = this.lastCp;
        if (layer.rejoin && this.exiting && this.lastCp >= 0) this.exiting.pending.push({ layer, k, g, cp: this.lastCp });
      }
      let m = layer.minUncut[g];
      while (m <= this.n && res[m] !== UNCUT) m++;
      layer.minUncut[g] = m;
    }
  }

  // --- JournalWatcher and state reads (header replay) ------------------------------------------------------------

  private access(owner: object, key: unknown, open: boolean, write: boolean): Access | null {
    if (!this.recording || (owner as Born).born > 0) return null; // made after the first checkpoint: no prefix's state differs there
    let byKey = this.accesses.get(owner);
    if (!byKey) this.accesses.set(owner, (byKey = new Map()));
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    const last = list[list.length - 1];
    // After a settled plain read or a write, later accesses cannot come first.
    if (last !== undefined && !last.open && last.kind !== Kind.Test) return null;
    const a = new Access(this.lastCp, open);
    if (write) a.kind = Kind.Write;
    list.push(a);
    return a;
  }

  wrote(owner: Born, key: unknown): void {
    this.access(owner, key, false, true);
  }

  readAll(owner: Born): void {
    if (this.recording && !this.wholeReads.has(owner)) this.wholeReads.set(owner, this.lastCp);
  }

  readState(owner: object, key: string, _value: unknown, relaxable: boolean): StateRead | null {
    const a = this.access(owner, key, relaxable, false);
    return relaxable ? a : null;
  }

  // --- TraceHooks -----------------------------------------------------------------------------------------------

  beginLoop(node: N, scope: Scope, loop: LoopCtx, frames: readonly Frame[], view: ListView): LoopRun {
    const snapshot = frames.map((f) => ({ nodes: f.nodes, scope: f.scope, index: f.index, out: '' }));
    return new Run(node, scope, loop, snapshot, frames.map((f) => f.out).join(''), view);
  }

  boundary(run: LoopRun, i: number, out: string): void {
    if (this.poisoned) return;
    if (this.checkpoints.length === 0 && this.headerCutEnd > 1 && this.opts.headerReplay !== false) {
      // Prefixes of one message or more were cut in the header: keep what header replay needs (module comment, 6).
      this.afterHeader = new Layer(this.n, true);
      this.afterHeaderFirst = new Layer(this.n, false);
      this.layers.push(this.afterHeader, this.afterHeaderFirst);
      this.recording = true;
    }
    const jpos = this.journal.mark();
    const r = run as Run;
    this.checkpoints.push({ run: r, i, jpos, text: r.baseText + out, iterations: this.renderer.meter.count, consumedBorn: Infinity });
    this.lastCp = this.checkpoints.length - 1;
  }

  exitHas(run: LoopRun, i: number): boolean {
    this.exiting = run as Run;
    try {
      return run.loop.hasItem(i);
    } finally {
      this.exiting = null;
    }
  }

  endLoop(run: LoopRun, out: string): void {
    const r = run as Run;
    const pending = r.pending; // in the order of their checkpoints
    r.pending = [];
    if (this.poisoned || pending.length === 0) return;
    const exitLength = r.baseText.length + out.length;
    // Walk the journal back from the loop's end; at each checkpoint with waiting prefixes, compare its state with the
    // end's. Output only grows: once a checkpoint's output is shorter than the end's, every earlier one's is too.
    const entries = this.journal.entries;
    let q = entries.length;
    let pairs: Map<object, Map<unknown, Pair>> | null = null;
    const mismatched = new Set<Pair>();
    let consumedBorn = Infinity;
    for (let at = pending.length - 1; at >= 0;) {
      const id = pending[at].cp;
      let from = at;
      while (from > 0 && pending[from - 1].cp === id) from--;
      const cp = this.checkpoints[id];
      if (cp.text.length !== exitLength) return;
      while (q > cp.jpos) {
        const e = entries[--q];
        if (isConsume(e)) consumedBorn = Math.min(consumedBorn, e.owner.born);
        else if (isChange(e) && e.owner !== r.loop) {
          pairs ??= new Map();
          let byKey = pairs.get(e.container!);
          if (!byKey) pairs.set(e.container!, (byKey = new Map()));
          let pair = byKey.get(e.key);
          if (!pair) byKey.set(e.key, (pair = { owner: e.owner, container: e.container!, key: e.key, value: ABSENT }));
          pair.value = e.had ? e.old : ABSENT;
          if (pair.value === currentValue(pair)) mismatched.delete(pair);
          else mismatched.add(pair);
        }
      }
      let same = (cp.i > 0 || r.node.defaultBlock.length === 0) && consumedBorn > cp.jpos;
      for (const p of mismatched) if (p.owner.born <= cp.jpos) same = false;
      if (same) {
        for (let k = from; k <= at; k++) {
          const p = pending[k];
          if (p.layer.res[p.g][p.k] !== id) continue;
          p.layer.res[p.g][p.k] = UNCUT;
          p.layer.minUncut[p.g] = Math.min(p.layer.minUncut[p.g], p.k);
        }
      }
      at = from - 1;
    }
  }

  readInput(): void {
    if (this.lastCp < 0) this.flagReadEarly = true;
    const g = 1 - this.fullFlag;
    this.cutRange(g, 0, this.n + 1);
  }

  poison(): void {
    this.poisoned = true;
  }

  /** For each checkpoint, the smallest `born` of an iterator consumed at or after it. */
  private sweepConsumed(): void {
    const entries = this.journal.entries;
    let q = entries.length;
    let born = Infinity;
    for (let id = this.checkpoints.length - 1; id >= 0; id--) {
      const cp = this.checkpoints[id];
      while (q > cp.jpos) {
        const e = entries[--q];
        if (isConsume(e)) born = Math.min(born, e.owner.born);
      }
      cp.consumedBorn = born;
    }
  }
}
