/**
 * The editor's memory of files whose last run failed. A failed run writes nothing (the output
 * folder keeps its previous files, or none is left), so no report.json can say it failed: the
 * Datasets view reads the failure from here, until the file changes or a run of it succeeds.
 * Kept for the session only.
 *
 * Pure (no `vscode` import): tested in plain node (test/unit/runFailures.test.ts).
 */
import * as path from 'node:path';
import { fileStampOf } from '../core/read/fileStamp';
import type { PrepareResult } from '../core/run/contract';

/** Why a file's last run failed, and the input as it was then. */
export interface FileFailure {
  /** The reason without the file's path in front (`no record written and no prompt set aside (…)`). */
  reason: string;
  /** When the run ended (ms since the epoch). */
  atMs: number;
  /** The input's file stamp then (core/read/fileStamp.ts: change and modification times, size, inode). */
  input?: string;
}

const failures = new Map<string, FileFailure>();

/** `"/a/b.jsonl: no record written"` → `"no record written"` (the failures of a run start with the file's path). */
export function reasonWithoutPath(message: string, file: string): string {
  const abs = path.resolve(file);
  for (const p of [abs, file]) if (message.startsWith(`${p}: `)) return message.slice(p.length + 2);
  return message;
}

/** The first clause of a failure, at most 120 characters (the tooltip has the whole reason). */
export function shortReason(reason: string): string {
  const first = reason.split(/(?<=\))[.;] |\. /)[0];
  return first.length > 120 ? `${first.slice(0, 119)}…` : first;
}

/**
 * Records the outcome of a run for its files: a file that failed gets its reason (the file report's
 * `failure`, else the run's first failure naming it, else its first failure); every other file of
 * the run is cleared. `error` (a run that threw) marks every input with that message.
 * @returns the absolute paths whose entry changed.
 */
export function noteRunOutcome(inputs: readonly string[], outcome: { result: PrepareResult } | { error: string }, nowMs = Date.now()): string[] {
  const changed: string[] = [];
  const set = (file: string, reason: string | undefined) => {
    const abs = path.resolve(file);
    const had = failures.has(abs);
    if (reason === undefined) failures.delete(abs);
    else failures.set(abs, { reason: reasonWithoutPath(reason, abs), atMs: nowMs, input: fileStampOf(abs) });
    if (had || reason !== undefined) changed.push(abs);
  };
  if ('error' in outcome) {
    for (const f of inputs) set(f, outcome.error);
    return changed;
  }
  const r = outcome.result;
  for (const f of r.files) {
    const named = r.failures.find((x) => x.startsWith(`${f.file}: `) || x.startsWith(`${path.resolve(f.file)}: `));
    const failed = f.status === 'failed' || (!r.ok && named !== undefined);
    set(f.file, failed ? (f.failure ?? named ?? r.failures[0] ?? 'the run failed') : undefined);
  }
  // Inputs the run does not list were not processed (a file failed first: `notProcessed`): they did
  // not fail, and what the view knew of them stays.
  return changed;
}

/** The file's last failure, unless the file changed since (then it is forgotten). */
export function failureOf(file: string): FileFailure | undefined {
  const abs = path.resolve(file);
  const f = failures.get(abs);
  if (!f) return undefined;
  const now = fileStampOf(abs);
  if (!now || !f.input || now !== f.input) {
    failures.delete(abs);
    return undefined;
  }
  return f;
}

/** Forgets every failure (tests). */
export function clearFailures(): void {
  failures.clear();
}
