/**
 * The render budget: how much work one chat-template render may do before it is stopped.
 *
 * A chat template is code that ships with a model folder. A broken or hostile one
 * (`{% for i in range(10**8) %}`, a macro that calls itself forever, `'x' * 10**9`) must cost one errored
 * row, not the process: measured before the budget existed, a 10^8 range made `prepare` run 49 s and abort
 * at 5.6 GB. The defaults are far above what real templates need, and each can be overridden per `ChatTemplate`
 * (constructor option `budget`). Measured on a 1000-message agent conversation (499 tool calls and results) with
 * every template of `test/fixtures/templates` and `templates-extra`: the most any used was 751,498 loop
 * iterations (Cohere command-r7b, whose tool-result handling is quadratic; the next: gemma-4 504,501, gpt-oss
 * 250,505), 250,367 characters of output, and 3.7 s (bundled build, one core). A hostile template is stopped
 * within seconds: a nested `range(100000)` loop by the iteration limit (about 2.5 s), `range(10**8)`,
 * `'x' * 10**9` and runaway recursion at once.
 */
import { TemplateBudgetError } from './errors';
import { groupedInt } from '../numberText';

/** Limits of one render. All counts are per render (one `ChatTemplate.render` call). */
export interface RenderBudget {
  /**
   * Largest `range()` a template may build, in items. Default 100,000: jinja2's sandbox (`MAX_RANGE`) refuses
   * larger ranges too, so no render Python accepts is refused by this default.
   */
  maxRange: number;
  /**
   * Loop iterations plus macro calls, all loops of the render together. Default 5,000,000 (6.6 times the most a real
   * template needed for 1000 messages; quadratic templates reach it near 2,500 messages).
   */
  maxLoopIterations: number;
  /**
   * Longest string (characters, UTF-16 units) or list (items) the render builds, the output included. Default
   * 50,000,000 characters (about 100 MB of string), some 50 times the text of a long agent trajectory.
   */
  maxOutputLength: number;
  /**
   * Deepest nesting of macro calls. Default 200: jinja2 itself stops at about 198 nested calls of a recursive
   * macro (Python's default recursion limit of 1000 frames, about 5 frames per Jinja macro call).
   */
  maxCallDepth: number;
  /** Wall time of one render in milliseconds. Default 30,000: a last guard; the limits above stop hostile templates first. */
  maxMillis: number;
}

/** The defaults of {@link RenderBudget}; see each field. */
export const DEFAULT_RENDER_BUDGET: Readonly<RenderBudget> = Object.freeze({
  maxRange: 100_000,
  maxLoopIterations: 5_000_000,
  maxOutputLength: 50_000_000,
  maxCallDepth: 200,
  maxMillis: 30_000,
});

/** `n` with thousands separators, as budget messages print limits. */
function fmt(n: number): string {
  return groupedInt(Math.round(n));
}

/** The running account of one render against its budget. */
export class BudgetMeter {
  private iterations = 0;
  private depth = 0;
  private readonly deadline: number;

  /**
   * @param iterations loop iterations already counted (a resumed render continues the count of the render it
   *   resumes; the wall clock starts now)
   */
  constructor(
    readonly budget: Readonly<RenderBudget>,
    iterations = 0,
  ) {
    this.iterations = iterations;
    this.deadline = Date.now() + budget.maxMillis;
  }

  /** Loop iterations and macro calls counted so far. */
  get count(): number {
    return this.iterations;
  }

  /**
   * Counts one loop iteration or macro call; checks the wall clock every 1024 of them.
   * @throws TemplateBudgetError past `maxLoopIterations` or `maxMillis`
   */
  step(): void {
    const n = ++this.iterations;
    this.checkIterations(n);
    if ((n & 1023) === 0) this.checkClock();
  }

  /**
   * Counts `n` loop iterations at once (iterations known to do nothing else, skipped: statements.ts `loopFrom`), as
   * `n` calls of {@link step} count them; checks the wall clock once.
   * @throws TemplateBudgetError past `maxLoopIterations` or `maxMillis`
   */
  steps(n: number): void {
    this.iterations += n;
    this.checkIterations(this.iterations);
    this.checkClock();
  }

  /** @throws TemplateBudgetError when `n` counted iterations are past `maxLoopIterations` */
  private checkIterations(n: number): void {
    if (n > this.budget.maxLoopIterations) throw new TemplateBudgetError('loopIterations', `loop iterations > ${fmt(this.budget.maxLoopIterations)}`);
  }

  /** @throws TemplateBudgetError past `maxMillis` */
  checkClock(): void {
    if (Date.now() > this.deadline) throw new TemplateBudgetError('wallTime', `render time > ${fmt(this.budget.maxMillis)} ms`);
  }

  /** @throws TemplateBudgetError when a range of `size` items is over `maxRange` */
  range(size: number): void {
    if (size > this.budget.maxRange) throw new TemplateBudgetError('range', `range size ${fmt(size)} > ${fmt(this.budget.maxRange)}`);
  }

  /**
   * Checks the length of a string or list about to be built (before building it, so a gigantic one is never allocated).
   * @throws TemplateBudgetError over `maxOutputLength`
   */
  length(n: number): void {
    if (n > this.budget.maxOutputLength) throw new TemplateBudgetError('outputLength', `output length ${fmt(n)} > ${fmt(this.budget.maxOutputLength)}`);
  }

  /** Enters a macro call. @throws TemplateBudgetError past `maxCallDepth` */
  enter(): void {
    if (++this.depth > this.budget.maxCallDepth) throw new TemplateBudgetError('callDepth', `macro call depth > ${fmt(this.budget.maxCallDepth)}`);
    this.step();
  }

  /** Leaves a macro call. */
  leave(): void {
    this.depth--;
  }
}
