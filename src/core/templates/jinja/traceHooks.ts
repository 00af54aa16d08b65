/**
 * What the evaluator tells the prefix tracer (prefixTrace.ts) during the main traced run. The evaluator holds a
 * {@link TraceHooks} only in that run; plain renders and resumed tails run without one.
 */
import type { N } from './ast';
import type { LoopCtx, Scope } from './scope';
import type { ListView } from './tracedList';

/**
 * Stands for a boolean input (`add_generation_prompt`) in the root scope of a traced render: reading the variable
 * is an observation (both values are served from one run), and the evaluator answers it with its `flagValue`.
 */
export const INPUT_FLAG: object = Object.freeze({ inputFlag: true });

/** A block of the top-level chain being rendered: the template body, or a branch of an `if` in that chain. */
export interface Frame {
  nodes: N[];
  scope: Scope;
  /** The statement being rendered. */
  index: number;
  /** The block's output so far (statements before `index`). */
  out: string;
}

/** One run of a resumable loop (a top-level `for` over a traced list): everything needed to resume it. */
export interface LoopRun {
  readonly node: N;
  readonly scope: Scope;
  readonly loop: LoopCtx;
  /** The frames around the loop, innermost last; `out` is not used. */
  readonly frames: readonly Readonly<Frame>[];
  /** The render's output before the loop. */
  readonly baseText: string;
}

/** The tracer as the evaluator sees it. */
export interface TraceHooks {
  /** Blocks of the top-level chain: the body and, recursively, the branches of `if`s in them. */
  readonly resumableBlocks: ReadonlySet<N[]>;
  /** `for` statements directly in those blocks. */
  readonly resumableFors: ReadonlySet<N>;
  /**
   * Whether {@link readState} wants the reads of the render's state (the main traced run). When false the evaluator
   * does not call it, and evaluates tests and comparisons without settling reads: the same values, in the same order.
   */
  readonly recordsState: boolean;
  /**
   * Whether a loop that is not resumable may end at its first quiet iteration, the later ones counted without being run
   * (statements.ts `watchedBody`): header replays only, which record no observation.
   */
  readonly quietLoops: boolean;
  /**
   * A resumable loop over a traced list (`view`) starts; `frames` are the live frames around it. Null stops the render
   * there (a header replay): the evaluator leaves every block of the top-level chain without running anything more
   * (`Control.Stop`), and the caller reads where it stopped from the hooks.
   */
  beginLoop(node: N, scope: Scope, loop: LoopCtx, frames: readonly Frame[], view: ListView): LoopRun | null;
  /** Boundary before iteration `i` of `run` (a checkpoint); `out` the loop's output so far. */
  boundary(run: LoopRun, i: number, out: string): void;
  /** The loop's own test whether iteration `i` exists (an exit for the prefixes whose list ends there). */
  exitHas(run: LoopRun, i: number): boolean;
  /** The loop ended (its list ran out or `break`); `out` its whole output. */
  endLoop(run: LoopRun, out: string): void;
  /** The boolean input was read. */
  readInput(): void;
  /** Something the journal cannot restore happened (a loop context escaped into state): no checkpoint from here on. */
  poison(): void;
  /**
   * A variable was looked up in the render's root scope (found or not: `value` undefined), or a namespace attribute
   * was read. With `relaxable`, the value read is the whole result of an operand whose only use is the test the
   * caller is about to make: the read is returned as a {@link StateRead} the caller then settles (see
   * {@link StateRead}); otherwise null (the read is recorded as a plain read).
   */
  readState(owner: object, key: string, value: unknown, relaxable: boolean): StateRead | null;
}

/**
 * A relaxable read of the render's state (TraceHooks.readState): until settled, it stands for "the value read here".
 * The caller settles it with the test it made of the value — `test(x)` is true when the value `x` (read in its place)
 * would make the same decision — or with null (the value was used as it is).
 */
export interface StateRead {
  settle(test: ((x: unknown) => boolean) | null): void;
}
