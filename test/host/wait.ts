/**
 * Waiting in the host suites: the extension answers asynchronously (tree refreshes, Problems scans,
 * webviews), so a check polls until its probe gives a value. No `vscode` import.
 */

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A probe: a truthy value when the awaited state is there, else `undefined` or `false`. */
export type Probe<T> = () => Promise<T | undefined | false> | T | undefined | false;

/**
 * Polls `probe` every 250 ms until it gives a truthy value, which it returns.
 * @param what the awaited state, for the error
 * @throws Error after `timeoutMs` ms, naming `what` and the probe's last value
 */
export async function waitFor<T>(what: string, probe: Probe<T>, timeoutMs: number): Promise<T> {
  const t0 = Date.now();
  let last: unknown;
  for (;;) {
    const v = await probe();
    if (v) return v;
    last = v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
    await sleep(250);
  }
}
