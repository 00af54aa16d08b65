/**
 * The one status word of a file and of a run, shared by the terminal summary,
 * `report.md` / `report.json`, the Datasets view, the toast and Problems:
 *
 * - `failed`: the file could not be used (a run failure names it: nothing written
 *   and nothing set aside, rows that do not add up, an unreadable file);
 * - `degraded`: rows were errored (the data the file holds is not all in the output);
 * - `warnings`: nothing errored, but rows were dropped or a data-changing note fired
 *   (`core/codes.ts` `isDataChanging`): the output differs from what the source holds;
 * - `ok`: every row written or set aside, and nothing changed the data.
 */
import { isDataChanging } from '../codes';
import type { FileReport } from './contract';

export type RunStatus = 'ok' | 'warnings' | 'degraded' | 'failed';

/** Status order, best first: the run's status is the worst of its files'. */
export const STATUS_ORDER: readonly RunStatus[] = ['ok', 'warnings', 'degraded', 'failed'];

/** The data-changing note and drop codes of a file, with their counts (most frequent first). */
export function dataChangingCodes(f: Pick<FileReport, 'notes' | 'dropped'>): { code: string; count: number }[] {
  const out = new Map<string, number>();
  for (const [code, n] of Object.entries(f.notes)) if (isDataChanging(code)) out.set(code, (out.get(code) ?? 0) + n);
  for (const [code, d] of Object.entries(f.dropped)) out.set(code, (out.get(code) ?? 0) + d.count);
  return [...out].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
}

/**
 * The status of one input file of a run.
 * @param failed whether the run's failures name this file (`runFailures`)
 */
export function fileStatus(f: Pick<FileReport, 'rowsErrored' | 'rowsDropped' | 'notes' | 'dropped'>, failed: boolean): RunStatus {
  if (failed) return 'failed';
  if (f.rowsErrored > 0) return 'degraded';
  if (f.rowsDropped > 0 || dataChangingCodes(f).length > 0) return 'warnings';
  return 'ok';
}

/** The worst of several statuses (`ok` for none). */
export function worstStatus(statuses: Iterable<RunStatus>): RunStatus {
  let worst = 0;
  for (const s of statuses) worst = Math.max(worst, STATUS_ORDER.indexOf(s));
  return STATUS_ORDER[worst];
}
