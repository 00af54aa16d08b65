/**
 * Which of the last run's problems Problems shows for a file, and how it tags them: the run's
 * dropped / errored rows and data-changing warnings stay until the file is prepared again, also
 * when the output went stale for a reason outside the file (a setting, the tokenizer, an
 * `eagle3prep.jsonc` change), tagged as the last run's. Only an input that changed itself (edited,
 * another row count, deleted) loses them: the run's line numbers may then point at other rows, and
 * the live scan of the file lists its current problems. After an `eagle3prep.jsonc` change that
 * changes how the file's rows are read (a quick fix), the run's row entries go too and the rows are
 * checked again with the new config, also when the file is not open (the fixed rows leave Problems,
 * the others stay as "will be errored / dropped"); its file-level warnings stay.
 *
 * Pure: no `vscode` import (unit-tested in plain node).
 */
import type { OutputState } from '../core/run/editor/datasetScan';

/** Whether the run's problems are shown, and the note that tags them (`''` for a current output). */
export type RunProblemsUse = { show: false } | { show: true; note: string; rows: boolean };

/** The rule above, for the output state of one file (`core/run/editor/datasetScan.ts` readOutputState). */
export function runProblemsUse(
  out: Pick<OutputState, 'state' | 'reportJson' | 'fileReport' | 'inputChanged' | 'readingChanged' | 'staleBecause'>,
): RunProblemsUse {
  if (!out.reportJson || !out.fileReport || out.state === 'none') return { show: false };
  if (out.state === 'prepared') return { show: true, note: '', rows: true };
  if (out.inputChanged) return { show: false };
  return {
    show: true,
    note: `; the output is stale (${out.staleBecause[0] ?? 'see the Datasets view'}): prepare again to update`,
    rows: !out.readingChanged,
  };
}

/** The message of one row of the last run: `code: message (row 3 was dropped by the last run[note])`. */
export function runRowMessage(p: { code: string; message: string; line: number; fate: string }, note: string): string {
  return `${p.message === p.code ? p.code : `${p.code}: ${p.message}`} (row ${p.line} was ${p.fate} by the last run${note})`;
}
