/**
 * Cancellation by signal: SIGINT (Ctrl-C), SIGTERM (`timeout`, Slurm
 * `scancel`, Kubernetes pod stop) and SIGHUP (terminal closed, ssh dropped)
 * all abort the run the same way — the run discards its temporary outputs and
 * the output folder keeps its previous files. A second signal of the same kind
 * ends the process at once (the next run removes what it left, `output.ts`).
 */

/** The signals a run treats as "cancel". */
export const CANCEL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * An AbortController aborted (reason `cancelled (SIGTERM)`, …) by the first
 * cancel signal; `dispose()` removes the handlers.
 */
export function abortOnSignals(): { signal: AbortSignal; dispose: () => void; received: () => string | undefined } {
  const ac = new AbortController();
  let got: string | undefined;
  const handlers = CANCEL_SIGNALS.map((sig) => {
    const h = () => {
      got = sig;
      ac.abort(new CancelledError(sig));
    };
    process.once(sig, h);
    return [sig, h] as const;
  });
  return {
    signal: ac.signal,
    received: () => got,
    dispose: () => {
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
