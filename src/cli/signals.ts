/**
 * Cancellation by signal: SIGINT (Ctrl-C), SIGTERM (`timeout`, Slurm
 * `scancel`, Kubernetes pod stop) and SIGHUP (terminal closed, ssh dropped)
 * all abort the run the same way — the run discards its temporary outputs and
 * the output folder keeps its previous files.
 *
 * The handlers stay installed until the command is done: `timeout -s INT`
 * signals the process and then its group, an impatient user presses Ctrl-C
 * twice, a scheduler sends SIGTERM after SIGINT. Any later signal, of any kind,
 * waits for the cleanup the first one started (a commit under way finishes, so
 * the folder holds either the previous outputs or the new ones, never a mix);
 * only when the cleanup takes longer than {@link CLEANUP_GRACE_MS} after a
 * repeated signal does the process exit at once (exit 128 + signal number; the
 * next run on the folder removes what it left, `core/run/outputs/output.ts`).
 */
import { constants } from 'node:os';

/** The signals a run treats as "cancel". */
export const CANCEL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** How long a repeated signal waits for the cleanup before the process exits without it, ms. */
export const CLEANUP_GRACE_MS = 10_000;

/**
 * An AbortController aborted (reason `cancelled (SIGTERM)`, …) by the first
 * cancel signal; later signals wait for the cleanup (bounded, see the module
 * comment). `dispose()` removes the handlers (call it when the command is done).
 * @param opts.graceMs the bound on the wait after a repeated signal (default {@link CLEANUP_GRACE_MS})
 * @param opts.say where the one "still cleaning up" line goes (default stderr)
 */
export function abortOnSignals(opts: { graceMs?: number; say?: (line: string) => void } = {}): {
  signal: AbortSignal;
  dispose: () => void;
  received: () => string | undefined;
} {
  const ac = new AbortController();
  const say = opts.say ?? ((l: string) => process.stderr.write(l + '\n'));
  let got: string | undefined;
  let deadline: NodeJS.Timeout | undefined;
  const handlers = CANCEL_SIGNALS.map((sig) => {
    const h = () => {
      if (got === undefined) {
        got = sig;
        ac.abort(new CancelledError(sig));
        return;
      }
      if (deadline) return; // already waiting; the bound runs from the first repeated signal
      say(`eagle3-prep: ${sig} received; still cleaning up after ${got} (at most ${Math.round((opts.graceMs ?? CLEANUP_GRACE_MS) / 1000)} s more)`);
      deadline = setTimeout(() => process.exit(128 + (constants.signals[got as NodeJS.Signals] ?? 2)), opts.graceMs ?? CLEANUP_GRACE_MS);
      deadline.unref();
    };
    process.on(sig, h);
    return [sig, h] as const;
  });
  return {
    signal: ac.signal,
    received: () => got,
    dispose: () => {
      if (deadline) clearTimeout(deadline);
      for (const [sig, h] of handlers) process.off(sig, h);
    },
  };
}

/** The reason a run was cancelled by a signal. */
export class CancelledError extends Error {
  constructor(readonly signalName: string) {
    super(`cancelled (${signalName})`);
    this.name = 'CancelledError';
  }
}
