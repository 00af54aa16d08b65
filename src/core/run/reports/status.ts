/**
 * The one status word of a file and of a run, shared by the terminal summary,
 * `report.md` / `report.json`, the Datasets view, the toast and Problems:
 *
 * - `failed`: the file could not be used or broke the run's policy (a run failure
 *   names it: unreadable, nothing written and nothing set aside, rows that do not
 *   add up, over `--max-error-rate`, a warning or error under `--strict`);
 * - `degraded`: rows were errored, or a row's longest text is a field nobody read (a note that
 *   degrades, `core/codes.ts` `isDegrading`): the data the file holds is not all in the output;
 * - `warnings`: nothing errored, but a data-changing warning fired: rows dropped
 *   (except drops the user asked for, such as `duplicate`), a data-changing note
 *   (`core/codes.ts` `isDataChanging`), or a data-changing finding of the chat
 *   template check on a file that wrote records: the output differs from what the source holds;
 * - `ok`: every row written or set aside as it is, and nothing changed the data.
 *
 * "OK" is only ever said for `ok`.
 */
import { CODES, codeMeaning, codeRemedyFor, isDataChanging, isDegrading, isSettingNote } from '../../codes';
import type { FileReport, PrepareResult, RunStatus, RunWarning } from '../contract';
import { probeConcerns } from '../../records/shapes';

/** Status order, best first: the run's status is the worst of its files'. */
export const STATUS_ORDER: readonly RunStatus[] = ['ok', 'warnings', 'degraded', 'failed'];

/** The data-changing note and drop codes of a file, with their counts (most frequent first). */
export function dataChangingCodes(f: Pick<FileReport, 'notes' | 'dropped'>): { code: string; count: number }[] {
  const out = new Map<string, number>();
  for (const [code, n] of Object.entries(f.notes)) if (isDataChanging(code)) out.set(code, (out.get(code) ?? 0) + n);
  for (const [code, d] of Object.entries(f.dropped)) if (isDataChanging(code) || !CODES[code]) out.set(code, (out.get(code) ?? 0) + d.count);
  return [...out].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
}

/**
 * The chat template check's data-changing findings (`core/codes.ts` kind `template`), with the probes that showed each;
 * with `shapes` (a file's rows per shape, `FileReport.shapes`) only the findings of probes that stand for a shape the
 * file has rows of (`records/shapes.ts`).
 */
export function templateWarnings(check: PrepareResult['templateCheck'], shapes?: FileReport['shapes'] | 'all'): { code: string; count: number }[] {
  const out = new Map<string, number>();
  for (const w of check?.warnings ?? [])
    if (CODES[w.code]?.kind === 'template' && isDataChanging(w.code) && (shapes === 'all' || probeConcerns(w.probe, shapes)))
      out.set(w.code, (out.get(w.code) ?? 0) + 1);
  return [...out].map(([code, count]) => ({ code, count }));
}

/**
 * The data-changing warnings of one file: its own (rows) and the template
 * check's that concern rows the file has, when the file wrote records.
 */
export function fileWarnings(f: FileReport, check: PrepareResult['templateCheck']): { code: string; count: number }[] {
  return [...dataChangingCodes(f), ...(f.recordsWritten > 0 ? templateWarnings(check, f.shapes) : [])];
}

/**
 * The status of one input file of a run.
 * @param failed whether the run's failures name this file (`accounting.ts` `fileFailure`)
 * @param templateFindings data-changing findings of the template check that concern the file's rows (count only when the file wrote records)
 */
export function fileStatus(
  f: Pick<FileReport, 'rowsErrored' | 'rowsDropped' | 'notes' | 'dropped' | 'recordsWritten'>,
  failed: boolean,
  templateFindings: readonly unknown[] = [],
): RunStatus {
  if (failed) return 'failed';
  if (f.rowsErrored > 0 || Object.keys(f.notes).some((c) => f.notes[c] > 0 && isDegrading(c))) return 'degraded';
  if (dataChangingCodes(f).length > 0 || (f.recordsWritten > 0 && templateFindings.length > 0)) return 'warnings';
  return 'ok';
}

/** The worst of several statuses (`ok` for none). */
export function worstStatus(statuses: Iterable<RunStatus>): RunStatus {
  let worst = 0;
  for (const s of statuses) worst = Math.max(worst, STATUS_ORDER.indexOf(s));
  return STATUS_ORDER[worst];
}

/** Every data-changing warning of a run (skipped files left out), with meaning, remedy and files; most frequent first. */
export function runWarnings(r: Pick<PrepareResult, 'files' | 'templateCheck'> & Partial<Pick<PrepareResult, 'long'>>): RunWarning[] {
  const remedyOf = (code: string) => codeRemedyFor(code, { long: r.long }) || undefined;
  const byCode = new Map<string, RunWarning>();
  for (const f of r.files) {
    if (f.skipped) continue;
    for (const { code, count } of dataChangingCodes(f)) {
      const w = byCode.get(code) ?? { code, count: 0, source: 'rows' as const, meaning: codeMeaning(code), remedy: remedyOf(code), files: [] };
      w.count += count;
      w.files.push(f.file);
      byCode.set(code, w);
    }
  }
  // A template finding is listed whenever files wrote records; `files` names those with rows of its shape (none: a note, it changes no record).
  const writers = r.files.filter((f) => !f.skipped && f.recordsWritten > 0);
  if (writers.length)
    for (const { code, count } of templateWarnings(r.templateCheck, 'all')) {
      const files = writers.filter((f) => templateWarnings(r.templateCheck, f.shapes).some((w) => w.code === code)).map((f) => f.file);
      byCode.set(code, { code, count, source: 'template', meaning: codeMeaning(code), remedy: remedyOf(code), files });
    }
  return [...byCode.values()]
    .map((w) => (w.remedy === undefined ? (({ remedy: _r, ...rest }) => rest)(w) : w))
    .sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
}

/** A chat template finding that concerns no row of the run's files (no row of its shape): shown as a note; it changes no record and fails nothing. */
export function isTemplateNote(w: Pick<RunWarning, 'source' | 'files'>): boolean {
  return w.source === 'template' && w.files.length === 0;
}

/** A chat template note of a run (`core/codes.ts` `settingNote`), counted over its kept files. */
export interface SettingNote {
  code: string;
  /** Occurrences over the files. */
  count: number;
  /** The files it was noted on, with their counts, in file order. */
  files: { file: string; count: number }[];
}

/**
 * The notes of the chat template and its kwargs (`settingNote` codes, e.g. `empty_think_trained`) over the
 * files of one or more runs, skipped files left out, most frequent first: shown once per run by the
 * terminal summary and report.md, never as a file status.
 */
export function settingNotesOf(files: Iterable<Pick<FileReport, 'file' | 'notes' | 'skipped'>>): SettingNote[] {
  const byCode = new Map<string, SettingNote>();
  for (const f of files)
    if (!f.skipped)
      for (const [code, n] of Object.entries(f.notes))
        if (isSettingNote(code) && n > 0) {
          const e = byCode.get(code) ?? { code, count: 0, files: [] };
          e.count += n;
          e.files.push({ file: f.file, count: n });
          byCode.set(code, e);
        }
  return [...byCode.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
}

/**
 * Sets the status of every file and of the run, and the run's warnings.
 * @param failedFiles files the run's failures name (absolute paths)
 */
export function applyStatus(r: PrepareResult, failedFiles: ReadonlySet<string>): void {
  for (const f of r.files) f.status = fileStatus(f, failedFiles.has(f.file) || f.skipped === true, templateWarnings(r.templateCheck, f.shapes));
  r.warnings = runWarnings(r);
  const kept = r.files.filter((f) => !f.skipped).map((f) => f.status!);
  r.status = r.ok ? worstStatus(kept) : 'failed';
  if (r.ok && r.status === 'ok' && r.skippedFiles?.length) r.status = 'warnings';
}
