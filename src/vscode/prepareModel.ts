/**
 * What "Prepare for EAGLE-3" says, as plain text (prepareCommand.ts shows it): the one-line summary
 * of a run, the status of its files (`core/run/status.ts`, the CLI summary's words), the toast after
 * a run by status with its buttons, the log's header naming the settings, and the progress percent.
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/prepareModel.test.ts).
 */
import * as path from 'node:path';
import type { PrepareProgress, PrepareResult, RunStatus } from '../core/run/contract';
import { promptLines } from '../core/run/reports/promptLines';
import { statusWord } from '../core/run/reports/report';
import { fileStatus, worstStatus } from '../core/run/reports/status';
import type { PrepareSettings } from './config';
import { reasonWithoutPath, shortReason } from './runFailures';

/** `1 record`, `1,024 records`. */
export function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * The status of a run's files and of the run (`core/run/status.ts`, the CLI summary's words): as the
 * run set them (`status` in the result and report.json), else worked out from the counts (results of
 * earlier versions).
 */
export function runStatusOf(result: PrepareResult): { status: RunStatus; files: { file: string; status: RunStatus }[] } {
  const files = result.files.map((f) => ({
    file: f.file,
    status: f.status ?? fileStatus(f, f.skipped === true || result.failures.some((x) => x.includes(f.file))),
  }));
  return { status: result.status ?? (result.ok ? worstStatus(files.map((f) => f.status)) : 'failed'), files };
}

/** `data-changing warnings: truncated × 3, … (see report.md)`, or '' when the run has none. */
export function warningsText(result: PrepareResult): string {
  const warnings = (result.warnings ?? []).map((w) => `${w.code} × ${w.count}`).join(', ');
  return warnings ? `data-changing warnings: ${warnings} (see report.md)` : '';
}

/** `damaged.jsonl: 4 of 10 rows kept (3 errored, 3 dropped)` for each file that lost rows, `; `-separated. */
export function lossText(result: PrepareResult): string {
  return result.files
    .filter((f) => f.rowsErrored + f.rowsDropped > 0)
    .map((f) => {
      const lost = [f.rowsErrored ? `${f.rowsErrored} errored` : '', f.rowsDropped ? `${f.rowsDropped} dropped` : ''].filter(Boolean).join(', ');
      return `${path.basename(f.file)}: ${f.rowsWritten + f.rowsSetAside} of ${plural(f.rowsRead, 'row')} kept (${lost})`;
    })
    .join('; ');
}

/** One-line summary of a result's totals, e.g. `ok: 3 records from 3 rows (0 set aside for generation, 0 dropped, 0 errored)`. */
export function summarizeResult(result: PrepareResult): string {
  const t = result.totals;
  // The status word and the data-changing warnings, as the CLI summary and report.md show them (core/run/status.ts).
  const warnings = warningsText(result);
  return (
    `${statusWord(runStatusOf(result).status)}: ${plural(t.recordsWritten, 'record')} from ${plural(t.rowsRead, 'row')} ` +
    `(${t.rowsSetAside} set aside for generation, ${t.rowsDropped} dropped, ${t.rowsErrored} errored)` +
    // A written row can set a conversation aside too (split_part_set_aside): the prompts file then holds more lines than set-aside rows.
    (promptLines(result) !== t.rowsSetAside ? `; ${plural(promptLines(result), 'prompt')} to generate` : '') +
    (warnings ? `; ${warnings}` : '')
  );
}

/** A toast's buttons. */
export type OutcomeAction = 'Show details' | 'Show problems' | 'Open report' | 'Open dashboard' | 'Reveal in Explorer' | 'Show log';

/** The toast after a run: its level, message and buttons. */
export interface RunOutcomeToast {
  level: 'info' | 'warning' | 'error';
  message: string;
  actions: OutcomeAction[];
}

/**
 * The toast after a run, by status: `ok` informs; `warnings` / `degraded` warn with the rows lost and
 * the data-changing warnings; `failed` is an error naming the failing files (else `names`, the inputs)
 * and the first reason without its path.
 */
export function runOutcomeToast(result: PrepareResult, names: string[]): RunOutcomeToast {
  const { status } = runStatusOf(result);
  const outName = path.basename(result.outDir);
  if (status === 'failed') {
    // Short: the file names and the first reason without its path; "Show details" opens the log with all of it.
    const failing = result.files.filter((f) => f.status === 'failed' || result.failures.some((x) => x.startsWith(`${f.file}: `)));
    const which = (failing.length ? failing.map((f) => path.basename(f.file)) : names).join(', ');
    const first = failing[0] ? (failing[0].failure ?? result.failures[0]) : result.failures[0];
    const reason = first ? shortReason(reasonWithoutPath(first, failing[0]?.file ?? '')) : 'see the log';
    const more = result.failures.length > 1 ? ` (+${result.failures.length - 1} more)` : '';
    return { level: 'error', message: `EAGLE-3 Prep failed for ${which}: ${reason}${more}. Nothing was written.`, actions: ['Show details'] };
  }
  if (status === 'ok')
    return { level: 'info', message: `EAGLE-3 Prep: ${summarizeResult(result)} → ${outName}/`, actions: ['Open dashboard', 'Reveal in Explorer', 'Show log'] };
  // The rows lost and the data-changing warnings (status.ts), so the toast says what changed, not only that something did.
  const changed = [lossText(result), warningsText(result)].filter(Boolean).join('; ') || 'the output differs from the source (see Problems and the report)';
  return {
    level: 'warning',
    message: `EAGLE-3 Prep: ${statusWord(status)} — ${changed} → ${outName}/`,
    actions: ['Show problems', 'Open report', 'Open dashboard'],
  };
}

/** The log's header of a run: the inputs with the time, the settings it runs with, the output folder. */
export function runLogHeader(inputs: string[], settings: PrepareSettings, tokenizerName: string, outDir: string, now = new Date()): string[] {
  return [
    '',
    `[${now.toISOString()}] Prepare for EAGLE-3: ${inputs.join(', ')}`,
    `  tokenizer: ${tokenizerName}${settings.tokenizerDir ? ` (${settings.tokenizerDir})` : ' (embedded default)'}` +
      `; mask: ${settings.mask}; grouping: ${settings.grouping}; max length: ${settings.maxLength ?? 'none'}${settings.maxLength !== undefined ? ` (longer records: ${settings.long})` : ''}` +
      `; template kwargs: ${JSON.stringify(settings.templateKwargs)}; reasoning: ${settings.reasoning}${settings.trainer ? `; trainer: ${settings.trainer}` : ''}`,
    `  output: ${outDir}`,
  ];
}

/** How far a run is, in percent of its files (the current file by bytes read). */
export function progressPercent(p: Pick<PrepareProgress, 'bytesRead' | 'bytesTotal' | 'fileIndex' | 'fileCount'>): number {
  const fileFrac = p.bytesTotal > 0 ? Math.min(1, p.bytesRead / p.bytesTotal) : 0;
  return Math.min(100, ((p.fileIndex + fileFrac) / Math.max(1, p.fileCount)) * 100);
}

/** The files a run wrote, for the log (results of earlier versions: the three main outputs). */
export function writtenFiles(result: PrepareResult): string[] {
  return result.outputs.written ?? [result.outputs.tokenizedData, result.outputs.promptsToGenerate, result.outputs.reportMd];
}
