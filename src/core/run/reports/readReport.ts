/**
 * Reading a run's outputs back: `report.json` (the {@link PrepareResult}) and the
 * `problems.jsonl` sidecar (every dropped and errored row). The Datasets view,
 * Problems, the hover and the dashboard read a run only through these functions,
 * so a change of the report's layout lands here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import type { FileReport, PrepareResult, RowProblemLine } from '../contract';
import { OUTPUT_FILES, PROBLEMS_FILE, RECORDS_DIR, SPECULATORS_DIR, TOKENIZED_DATA_PARQUET } from '../outputFiles';
import { readReport, type ReadReport } from './report';

/**
 * Reads `report.json` through `report.ts` `readReport` (schema 2 snake_case converted to the
 * in-memory shape; schema 1 taken as it is) and points its outputs at the folder the report is in
 * now: reports are written with absolute paths, and a folder that was moved is read from where it is.
 * @throws ReportReadError naming the file when it is missing, not JSON, or not a prepare report.
 */
export function readRunReport(file: string): ReadReport {
  const { report: r, schemaVersion } = readReport(file);
  const outDir = path.dirname(file);
  // Each path keeps its place in the output folder: `data/tokenized_data.jsonl` of this layout,
  // `tokenized_data.jsonl` of runs before data/ (outputFiles.ts RECORDS_DIR), `speculators/…`.
  const here = (p: string | undefined, name: string) => {
    if (!p) return path.join(outDir, name);
    const rel = typeof r.outDir === 'string' ? path.relative(r.outDir, p) : '';
    return path.join(outDir, rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : path.basename(p));
  };
  const outputs: PrepareResult['outputs'] = {
    ...r.outputs,
    tokenizedData: here(r.outputs.tokenizedData, path.join(RECORDS_DIR, OUTPUT_FILES.tokenizedData)),
    tokenizedDataParquet: r.outputs.tokenizedDataParquet ? here(r.outputs.tokenizedDataParquet, TOKENIZED_DATA_PARQUET) : undefined,
    promptsToGenerate: here(r.outputs.promptsToGenerate, OUTPUT_FILES.promptsToGenerate),
    reportJson: file,
    reportMd: here(r.outputs.reportMd, OUTPUT_FILES.reportMd),
    problems: r.outputs.problems ? here(r.outputs.problems, PROBLEMS_FILE) : undefined,
    speculatorsDataset: r.outputs.speculatorsDataset ? here(r.outputs.speculatorsDataset, SPECULATORS_DIR) : undefined,
    written: r.outputs.written?.map((w) => here(w, path.basename(w))),
    removed: r.outputs.removed?.map((w) => here(w, path.basename(w))),
    kept: r.outputs.kept?.map((w) => here(w, path.basename(w))),
  };
  if (!outputs.kept) delete outputs.kept;
  if (!outputs.speculatorsDataset) delete outputs.speculatorsDataset;
  if (!outputs.removed) delete outputs.removed;
  return { report: { ...r, outputs }, schemaVersion };
}

/** The entry of `file` (absolute or relative path) in a report, if the run read it. */
export function fileReportOf(report: PrepareResult, file: string): FileReport | undefined {
  const abs = path.resolve(file);
  return report.files.find((f) => path.resolve(f.file) === abs);
}

/** What {@link readRowProblems} found for one input file. */
export interface RowProblemsOfRun {
  problems: RowProblemLine[];
  /**
   * True when every dropped and errored row of the file is listed (from `problems.jsonl`); false when
   * the run wrote no sidecar and only the report's first lines per reason / first errors are known.
   */
  complete: boolean;
  /** Rows not listed (errored + dropped − listed); 0 when complete. */
  missing: number;
}

/**
 * Every dropped and errored row of `file` in a run: from `problems.jsonl` when the run wrote it,
 * else the lines report.json keeps (first 10 per drop reason, first 50 errors).
 * @param limit stop after this many rows (default: all).
 */
export async function readRowProblems(report: PrepareResult, file: string, limit = Infinity): Promise<RowProblemsOfRun> {
  const fr = fileReportOf(report, file);
  if (!fr) return { problems: [], complete: true, missing: 0 };
  const abs = path.resolve(file);
  const sidecar = report.outputs.problems;
  if (sidecar && fs.existsSync(sidecar)) {
    const problems: RowProblemLine[] = [];
    const rl = readline.createInterface({ input: fs.createReadStream(sidecar, { encoding: 'utf8' }), crlfDelay: Infinity });
    try {
      for await (const line of rl) {
        if (!line) continue;
        let p: RowProblemLine;
        try {
          p = JSON.parse(line) as RowProblemLine;
        } catch {
          continue;
        }
        if (path.resolve(p.file) !== abs) continue;
        problems.push(p);
        if (problems.length >= limit) break;
      }
    } finally {
      rl.close();
    }
    return { problems, complete: true, missing: 0 };
  }
  const problems: RowProblemLine[] = [];
  for (const e of fr.errors) problems.push({ file: abs, line: e.line, fate: 'errored', code: errorCodeOf(e.message), message: e.message });
  for (const [code, d] of Object.entries(fr.dropped)) for (const line of d.lines) problems.push({ file: abs, line, fate: 'dropped', code, message: code });
  problems.sort((a, b) => a.line - b.line);
  return { problems: problems.slice(0, limit), complete: false, missing: Math.max(0, fr.rowsErrored + fr.rowsDropped - problems.length) };
}

/** The error code at the head of a report error message (`template_unsupported: …`, `unknown role "x"` → `unknown_role`), else `errored`. */
export function errorCodeOf(message: string): string {
  if (/^unknown role /.test(message)) return 'unknown_role';
  if (/^chat template error: /.test(message)) return 'template_error';
  const m = /^([a-z][a-z0-9_]+): /.exec(message);
  return m ? m[1] : 'errored';
}
