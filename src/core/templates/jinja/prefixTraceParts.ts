/**
 * The parts of a prefix trace (prefixTrace.ts, whose module comment states the proof): per-prefix layers of cuts,
 * the runs of resumable loops, recorded state accesses of a header replay, the header replay's hooks, checkpoints
 * and the top-level chain of a template body.
 */

import type { N } from './ast';
import type { Born } from './journal';
import type { LoopCtx, Scope } from './scope';
import type { Frame, LoopRun, StateRead, TraceHooks } from './traceHooks';
import type { ListView } from './tracedList';

export const UNCUT = -2;
export const NEVER = 0x7fffffff;
export const ABSENT = Symbol('absent');

/**
 * For each flag value and prefix length, UNCUT or the checkpoint a prefix resumes from (-1: none), as observed from
 * one point of the main run on: the template's start, or (header replay) the first checkpoint.
 */
export class Layer {
  readonly res: [Int32Array, Int32Array];
  readonly minUncut = [0, 0];
  /** @param rejoin whether prefixes cut at a loop's exit may rejoin at its end (module comment, 4) */
  constructor(
    n: number,
    readonly rejoin: boolean,
  ) {
    this.res = [new Int32Array(n + 1).fill(UNCUT), new Int32Array(n + 1).fill(UNCUT)];
  }
}

/** A resumable loop's run, with the prefixes waiting at its end to rejoin. */
export class Run implements LoopRun {
  pending: { layer: Layer; k: number; g: number; cp: number }[] = [];
  constructor(
    readonly node: N,
    readonly scope: Scope,
    readonly loop: LoopCtx,
    readonly frames: readonly Readonly<Frame>[],
    readonly baseText: string,
    readonly view: ListView,
  ) {}
}

export const enum Kind {
  /** A read whose value was used as it is (or not yet settled): any other value fails it. */
  Read = 0,
  /** A read settled with the test made of it. */
  Test = 1,
  /** A write: from here on the place holds what both renders wrote. */
  Write = 2,
}

/** One recorded access to a place of the state after the first checkpoint (module comment, 6). */
export class Access implements StateRead {
  kind = Kind.Read;
  test: ((x: unknown) => boolean) | null = null;
  constructor(
    /** The checkpoint in effect when it happened. */
    readonly cp: number,
    /** Not settled yet (a relaxable read). */
    public open: boolean,
  ) {}

  settle(test: ((x: unknown) => boolean) | null): void {
    this.open = false;
    if (test) {
      this.kind = Kind.Test;
      this.test = test;
    }
  }

  /** Whether the place holding `x` instead would make this access go otherwise. */
  failsWith(x: unknown): boolean {
    if (this.kind !== Kind.Test || this.open) return true;
    try {
      return !this.test!(x);
    } catch {
      return true;
    }
  }
}

/**
 * For an overridden place (`o`: its owner, key and the prefix render's value): the checkpoint before its first access
 * that the prefix's value would make go otherwise (NEVER: none), and the checkpoint of the first write to it (NEVER:
 * none) — accesses after that write see the same value in both renders. `accesses` and `wholeReads` as recorded by the
 * main run (prefixTrace.ts).
 */
export function overrideFailure(
  accesses: ReadonlyMap<object, ReadonlyMap<unknown, readonly Access[]>>,
  wholeReads: ReadonlyMap<object, number>,
  o: { owner: object; key: unknown; value: unknown },
): [fail: number, heal: number] {
  const whole = wholeReads.get(o.owner) ?? NEVER;
  for (const a of accesses.get(o.owner)?.get(o.key) ?? []) {
    if (a.kind === Kind.Write) return [whole, a.cp];
    if (a.failsWith(o.value)) return [Math.min(whole, a.cp), NEVER];
  }
  return [whole, NEVER];
}

/** Where a header replay stopped: the start of a resumable loop. */
export interface HeaderStop {
  node: N;
  frames: { nodes: N[]; index: number; scope: Scope }[];
  text: string;
  view: ListView;
}

/**
 * The hooks of a header replay: frames kept as in the main run; the first resumable loop stops the render
 * (`beginLoop` answers null: `Control.Stop`). They record no state reads.
 */
export class HeaderHooks implements TraceHooks {
  readonly recordsState = false;
  readonly quietLoops = true;
  /** Whether the header read the flag (its replay then depends on the flag value). */
  flagRead = false;
  at: HeaderStop | null = null;
  poisoned = false;
  constructor(
    readonly resumableBlocks: ReadonlySet<N[]>,
    readonly resumableFors: ReadonlySet<N>,
  ) {}
  beginLoop(node: N, _scope: Scope, _loop: LoopCtx, frames: readonly Frame[], view: ListView): null {
    this.at = { node, frames: frames.map((f) => ({ nodes: f.nodes, index: f.index, scope: f.scope })), text: frames.map((f) => f.out).join(''), view };
    return null;
  }
  boundary(): void {}
  exitHas(run: LoopRun, i: number): boolean {
    return run.loop.hasItem(i);
  }
  endLoop(): void {}
  readInput(): void {
    this.flagRead = true;
  }
  poison(): void {
    this.poisoned = true;
  }
  readState(): StateRead | null {
    return null;
  }
}

/** A checkpoint: boundary `i` of `run`, at journal position `jpos`, with the output so far. */
export interface Checkpoint {
  run: Run;
  i: number;
  jpos: number;
  text: string;
  iterations: number;
  /** Smallest `born` of an iterator consumed at or after `jpos` in the main run (computed after it). */
  consumedBorn: number;
}

/** The blocks and loops of the top-level chain of a template body (see {@link TraceHooks}). */
export function topLevelChain(body: N[]): { blocks: Set<N[]>; fors: Set<N> } {
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
export const CHAINS = new WeakMap<N[], { blocks: Set<N[]>; fors: Set<N> }>();

/** A journaled location (a Map key or an object field) and its value at the checkpoint being compared. */
export interface Pair {
  owner: Born;
  container: Map<unknown, unknown> | Record<string, unknown>;
  key: unknown;
  value: unknown;
}

export function currentValue(p: Pair): unknown {
  if (p.container instanceof Map) return p.container.has(p.key) ? p.container.get(p.key) : ABSENT;
  return p.container[p.key as string];
}
