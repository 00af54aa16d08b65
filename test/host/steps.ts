/**
 * The host suite's steps (issue 23): each step runs whatever happened to the ones before it, a
 * failure is printed at once (`[host-suite] FAILED: <step> (<ms> ms): <message>`, with its stack)
 * and the suite goes on; at the end {@link HostSteps.finish} throws one error listing every failed
 * step, so the run still fails (VS Code reports a rejected `run()` as a failed test run, exit 1).
 * A step that needs an earlier step's result checks it (and fails with its own message when that
 * step failed). No `vscode` import: unit-testable in plain node.
 */

/** One failed step. */
export interface StepFailure {
  name: string;
  message: string;
  ms: number;
}

/** The steps of one suite run; see the module comment. */
export class HostSteps {
  readonly failures: StepFailure[] = [];
  readonly passed: string[] = [];

  constructor(private readonly log: (line: string) => void = (l) => console.log(l)) {}

  /**
   * Runs one step. Resolves with its value, or undefined when it threw (the failure is logged and
   * recorded; it never rejects).
   */
  async run<T>(name: string, fn: () => Promise<T> | T): Promise<T | undefined> {
    const t0 = Date.now();
    try {
      const v = await fn();
      this.passed.push(name);
      return v;
    } catch (e) {
      const ms = Date.now() - t0;
      const message = e instanceof Error ? e.message : String(e);
      this.failures.push({ name, message, ms });
      this.log(`[host-suite] FAILED: ${name} (${ms} ms): ${message}`);
      if (e instanceof Error && e.stack) this.log(e.stack);
      return undefined;
    }
  }

  /** Logs the tally; throws an Error naming every failed step (first line of each message) when any failed. */
  finish(): void {
    const n = this.passed.length + this.failures.length;
    if (!this.failures.length) {
      this.log(`[host-suite] ${n} of ${n} steps passed`);
      return;
    }
    const list = this.failures.map((f) => `- ${f.name}: ${f.message.split('\n')[0]}`).join('\n');
    this.log(`[host-suite] ${this.failures.length} of ${n} steps failed:\n${list}`);
    throw new Error(`${this.failures.length} of ${n} host-suite steps failed:\n${list}`);
  }
}
