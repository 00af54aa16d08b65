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
 * Anything else — a cut before the first checkpoint (Qwen3's `messages|length` in its header), an invalid
 * checkpoint (an iterator consumed across it), an error — is not served: the caller renders it for real.
 */
import type { N } from './ast';
import { BudgetMeter } from '../renderBudget';
import type { RenderBudget } from '../renderBudget';
import { activateJournal, isChange, isConsume, Journal, type Born } from './journal';
import { LoopCtx, Control, Scope } from './scope';
import { Renderer } from './statements';
import { INPUT_FLAG, type Frame, type LoopRun, type TraceHooks } from './traceHooks';
import { ListTrace, type ObservationSink } from './tracedList';
import type { MacroRefs } from './ast';

const UNCUT = -2;
const ABSENT = Symbol('absent');

/** A resumable loop's run, with the prefixes waiting at its end to rejoin. */
class Run implements LoopRun {
  pending: { k: number; g: number; cp: number }[] = [];
  constructor(
    readonly node: N,
    readonly scope: Scope,
    readonly loop: LoopCtx,
    readonly frames: readonly Readonly<Frame>[],
    readonly baseText: string,
  ) {}
}

/** A checkpoint: boundary `i` of `run`, at journal position `jpos`, with the output so far. */
interface Checkpoint {
  run: Run;
  i: number;
  jpos: number;
  text: string;
  iterations: number;
  /** Smallest `born` of an iterator consumed at or after `jpos` in the main run (computed after it). */
  consumedBorn: number;
}

/** The blocks and loops of the top-level chain of a template body (see {@link TraceHooks}). */
function topLevelChain(body: N[]): { blocks: Set<N[]>; fors: Set<N> } {
  const blocks = new Set<N[]>();
  const fors = new Set<N>();
  const walk = (nodes: N[]) => {
    blocks.add(nodes);
    for (const n of nodes) {
      if (n.type === 'If') {
        walk(n.body);
        walk(n.alternate);
      } else if (n.type === 'For') fors.add(n);
    }
  };
  walk(body);
  return { blocks, fors };
}
const CHAINS = new WeakMap<N[], { blocks: Set<N[]>; fors: Set<N> }>();

/** Options of a traced render. */
export interface PrefixTraceOptions {
  budget: Readonly<RenderBudget>;
  /** The clock, read once: the full render and every tail see the same time. */
  now: () => Date;
}

/** One traced render of a template over a list, serving its prefix renders. */
export class PrefixTrace implements TraceHooks, ObservationSink {
  readonly resumableBlocks: ReadonlySet<N[]>;
  readonly resumableFors: ReadonlySet<N>;
  /** Length of the full list. */
  readonly n: number;
  private readonly trace: ListTrace;
  private readonly renderer: Renderer;
  private readonly journal = new Journal(false);
  private readonly checkpoints: Checkpoint[] = [];
  private lastCp = -1;
  /** Per flag value (0 = false, 1 = true): for each k, UNCUT or the checkpoint a prefix resumes from (-1: none). */
  private readonly resume: [Int32Array, Int32Array];
  private readonly minUncut = [0, 0];
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
    this.resume = [new Int32Array(this.n + 1).fill(UNCUT), new Int32Array(this.n + 1).fill(UNCUT)];
    this.fullFlag = vars[flagName] ? 1 : 0;
    const r = (this.renderer = new Renderer(new BudgetMeter(opts.budget), opts.now, macroRefs));
    const root = new Scope(r.globals);
    root.born = 0;
    for (const [k, v] of Object.entries(vars)) if (v !== undefined) root.vars.set(k, v);
    root.vars.set(listName, this.trace.root());
    root.vars.set(flagName, INPUT_FLAG);
    r.flagValue = this.fullFlag === 1;
    r.hooks = this;
    r.frames = [];
    this.trace.sink = this;
    const prev = activateJournal(this.journal);
    try {
      const out = r.block(body, root);
      r.meter.length(out.length);
      this.fullText = out;
    } catch {
      this.fullText = null; // prefixes cut before the error are still served
    } finally {
      activateJournal(prev);
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
    const at = this.resume[flag ? 1 : 0][k];
    if (at === UNCUT) return this.fullText ?? undefined;
    if (at < 0) return undefined;
    const cp = this.checkpoints[at];
    if (cp.consumedBorn <= cp.jpos || this.minDirtyBorn <= cp.jpos) return undefined;
    return this.tail(cp, k, flag);
  }

  private tail(cp: Checkpoint, k: number, flag: boolean): string | undefined {
    const r = this.renderer;
    this.journal.moveTo(cp.jpos);
    const tailJournal = new Journal(true, cp.jpos, (born) => (this.minDirtyBorn = Math.min(this.minDirtyBorn, born)));
    const prev = activateJournal(tailJournal);
    this.trace.limit = k;
    r.flagValue = flag;
    r.meter = new BudgetMeter(this.opts.budget, cp.iterations);
    try {
      const out = r.resumeFrom(cp.run, cp.i);
      r.meter.length(cp.text.length + out.length);
      // The output up to a checkpoint is the full render's output up to there (top-level blocks only append): when the
      // tail continues it too, the render is a prefix of the full text, returned as a slice of it (no copy).
      const full = this.fullText;
      if (full !== null && full.startsWith(out, cp.text.length)) return full.slice(0, cp.text.length + out.length);
      return cp.text + out;
    } catch {
      return undefined;
    } finally {
      tailJournal.moveTo(0);
      activateJournal(prev);
      this.trace.limit = this.n;
      r.control = Control.None;
    }
  }

  // --- ObservationSink ------------------------------------------------------------------------------------------

  cut(a: number, b: number): void {
    for (let g = 0; g < 2; g++) this.cutRange(g, a, b);
  }

  private cutRange(g: number, a: number, b: number): void {
    const res = this.resume[g];
    for (let k = Math.max(a, this.minUncut[g]); k < b; k++) {
      if (res[k] !== UNCUT) continue;
      res[k] = this.lastCp;
      if (this.exiting && this.lastCp >= 0) this.exiting.pending.push({ k, g, cp: this.lastCp });
    }
    let m = this.minUncut[g];
    while (m <= this.n && res[m] !== UNCUT) m++;
    this.minUncut[g] = m;
  }

  // --- TraceHooks -----------------------------------------------------------------------------------------------

  beginLoop(node: N, scope: Scope, loop: LoopCtx, frames: readonly Frame[]): LoopRun {
    const snapshot = frames.map((f) => ({ nodes: f.nodes, scope: f.scope, index: f.index, out: '' }));
    return new Run(node, scope, loop, snapshot, frames.map((f) => f.out).join(''));
  }

  boundary(run: LoopRun, i: number, out: string): void {
    if (this.poisoned) return;
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
          if (this.resume[p.g][p.k] !== id) continue;
          this.resume[p.g][p.k] = UNCUT;
          this.minUncut[p.g] = Math.min(this.minUncut[p.g], p.k);
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

/** A journaled location (a Map key or an object field) and its value at the checkpoint being compared. */
interface Pair {
  owner: Born;
  container: Map<unknown, unknown> | Record<string, unknown>;
  key: unknown;
  value: unknown;
}

function currentValue(p: Pair): unknown {
  if (p.container instanceof Map) return p.container.has(p.key) ? p.container.get(p.key) : ABSENT;
  return p.container[p.key as string];
}
