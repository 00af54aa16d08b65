/**
 * What the dashboards show, without VS Code (dashboard.ts is the panels' wiring): one dataset's
 * model from its output (report.json, the output's `problems.jsonl`, the record lengths of
 * report.json or else of `tokenized_data.jsonl`), and the workspace's from every dataset with an
 * output. The view-model itself is `core/run/dashboardModel.ts`; the length statistics are read by
 * `stats` (the background service worker in the editor).
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/dashboardData.test.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { datasetDashboard, statsFromReport, workspaceDashboard, type DashboardModel, type DatasetDashboard } from '../shared/dashboardModel';
import type { OutputState } from '../core/run/editor/datasetScan';
import { OUTPUT_FILES, recordsFileIn } from '../core/run/outputFiles';
import type { OutputStats } from '../core/run/outputs/outputStats';
import { fileReportOf, readRowProblems, readRunReport } from '../core/run/reports/readReport';
import { failureOf } from './runFailures';

/** Reads the length statistics of records files (each with the inputs whose records count); rejects when it cannot. */
export type StatsReader = (parts: { tokenizedData: string; inputs: string[] }[]) => Promise<OutputStats>;

/** `stats(parts)`, or null when it fails (the dashboard then draws without lengths). */
async function statsOrNull(stats: StatsReader, parts: { tokenizedData: string; inputs: string[] }[]): Promise<OutputStats | null> {
  try {
    return await stats(parts);
  } catch {
    return null;
  }
}

/**
 * The model of one dataset's dashboard from its current or stale output (`out`: `readOutputState`).
 * @throws Error saying why there is none: the last run failed (runFailures.ts), there is no output, or the report does not list the file
 */
export async function datasetDashboardOf(file: string, out: OutputState, stats: StatsReader): Promise<DatasetDashboard> {
  if (out.state === 'none' || !out.reportJson) {
    // A failed run writes nothing: the dashboard says why, as the Datasets view does (runFailures.ts).
    const failed = failureOf(file);
    if (failed) throw new Error(`${path.basename(file)} failed in its last run, which wrote nothing: ${failed.reason}`);
    throw new Error(`${path.basename(file)} has no prepared output in ${out.outDir}: prepare it first.`);
  }
  const { report } = readRunReport(out.reportJson);
  const problems = await readRowProblems(report, file);
  // Record lengths: report.json's when the run wrote them, else read from the JSONL (a Parquet-only output of an
  // earlier version has none).
  const fr = fileReportOf(report, file);
  const needStats = !(fr && statsFromReport(fr)) && fs.existsSync(report.outputs.tokenizedData);
  const d = datasetDashboard(report, file, {
    stats: needStats ? await statsOrNull(stats, [{ tokenizedData: report.outputs.tokenizedData, inputs: [file] }]) : null,
    problems: problems.complete ? problems.problems : undefined,
    staleBecause: out.staleBecause,
    reportTimeMs: out.reportTimeMs,
  });
  if (!d) throw new Error(`${out.reportJson} does not list ${file}`);
  return d;
}

/**
 * The workspace model: every file of `files` with an output (`datasetOf`, e.g. {@link datasetDashboardOf}),
 * the names of the others as not prepared, and the length statistics over all their records files.
 */
export async function workspaceDashboardOf(
  files: string[],
  datasetOf: (file: string) => Promise<DatasetDashboard>,
  stats: StatsReader,
): Promise<DashboardModel> {
  const datasets: DatasetDashboard[] = [];
  const notPrepared: string[] = [];
  const parts: { tokenizedData: string; inputs: string[] }[] = [];
  for (const f of files) {
    try {
      const d = await datasetOf(f);
      datasets.push(d);
      const jsonl = recordsFileIn(d.outDir, OUTPUT_FILES.tokenizedData); // data/, or the folder itself for runs before data/
      if (fs.existsSync(jsonl)) parts.push({ tokenizedData: jsonl, inputs: [f] });
    } catch {
      notPrepared.push(path.basename(f));
    }
  }
  return { kind: 'workspace', workspace: workspaceDashboard(datasets, notPrepared, parts.length ? await statsOrNull(stats, parts) : null) };
}
