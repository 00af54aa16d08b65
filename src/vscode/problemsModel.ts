/**
 * What the Problems panel lists for a dataset file, as plain records (diagnostics.ts only turns
 * them into `vscode.Diagnostic`s): the two sources merged per file, one entry per line, and the
 * quick fixes of each row.
 *
 * - the scan without tokenizer (`rowProblems.ts` `scanRowProblems`, run in the service worker):
 *   rows that will be dropped or errored, a note when the scan stopped at `maxProblems`, or one
 *   entry saying why the file could not be read;
 * - the last run, when its output is shown (runProblems.ts `runProblemsUse`): every dropped and
 *   errored row of `problems.jsonl` (`readReport.ts` `readRowProblems`), one entry per data-changing
 *   warning no row lists, and a note when an older output lists only some rows.
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/problemsModel.test.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyEdits, findNodeAtLocation, modify, parseTree } from 'jsonc-parser';
import { codeMeaning, codeRemedyFor } from '../core/codes';
import type { RowProblemLine } from '../core/run/contract';
import { datasetKind, type OutputState } from '../core/run/editor/datasetScan';
import type { RowProblem, RowProblems } from '../core/run/editor/rowProblems';
import { readRowProblems, readRunReport } from '../core/run/reports/readReport';
import { ALIAS_TARGET_ROLES, findProjectConfig, PROJECT_CONFIG_NAME } from '../core/read/projectConfig';
import { runProblemsUse, runRowMessage, type RunProblemsUse } from './runProblems';

/** Severity of an entry, as VS Code's DiagnosticSeverity names it. */
export type ProblemSeverity = 'error' | 'warning' | 'information';

/** One entry of the Problems panel for a file. */
export interface ProblemEntry {
  /** 1-based line of the dataset file the entry sits on (file-level entries: 1). */
  line: number;
  severity: ProblemSeverity;
  message: string;
  /** The reason code (`codes.ts`); absent for notes. */
  code?: string;
  /** The run's report.md the code links to (entries of the last run). */
  codeTarget?: string;
}

/** What the last run says about one file: its dropped and errored rows. */
export interface RunProblems {
  problems: RowProblemLine[];
  complete: boolean;
  /** Rows of the run that no list names (an output without problems.jsonl). */
  missing: number;
  reportJson: string;
  reportMd: string;
  /**
   * The file's data-changing warnings that no row lists (notes such as `empty_think_trained`, the
   * template check's findings): one entry each, on line 1, so a `warnings` file is never clean in Problems.
   */
  fileWarnings: { code: string; count: number }[];
  /** The run's `--long` policy, so the advice does not suggest what the run already did (`codeRemedyFor`). */
  long?: 'drop' | 'truncate' | 'split';
  /** `''` for a current output, else the stale note appended to each entry (runProblems.ts). */
  note: string;
}

/** The scan's part of a file's entries: its row problems (which carry the quick fixes) and its notes. */
export interface ScannedProblems {
  problems: RowProblem[];
  notes: ProblemEntry[];
}

/**
 * Reads the last run's problems of `file` from its output state (`readOutputState`): `use` says whether
 * they are shown and how they are tagged (runProblems.ts); `run` is undefined when nothing is shown or
 * the report cannot be read. At most `maxProblems` rows are read. Never throws.
 */
export async function readRunProblems(file: string, out: OutputState, maxProblems: number): Promise<{ use: RunProblemsUse; run?: RunProblems }> {
  const use = runProblemsUse(out);
  if (!use.show || !out.reportJson) return { use };
  try {
    const { report } = readRunReport(out.reportJson);
    const read = await readRowProblems(report, file, maxProblems);
    const r = use.rows ? read : { ...read, problems: [], missing: 0 };
    // Drops are listed per row already; the rest of the file's data-changing warnings get one entry each.
    const dropped = out.fileReport?.dropped ?? {};
    const fileWarnings = (out.warnings ?? []).filter((w) => !(w.code in dropped));
    return { use, run: { ...r, reportJson: out.reportJson, reportMd: report.outputs.reportMd, fileWarnings, long: report.long, note: use.note } };
  } catch {
    return { use };
  }
}

/**
 * The scan's part of a file's entries, or `undefined` when the file is left alone: a `.json` file in
 * which every row is unrecognized or invalid JSON (package.json, settings, …) unless `force`.
 * A scan stopped at `maxProblems` adds an information entry on line 1.
 */
export function scannedProblems(file: string, r: RowProblems, opts: { force: boolean; maxProblems: number }): ScannedProblems | undefined {
  const allBad = r.problems.length === r.rowsRead && r.problems.every((p) => p.code === 'unrecognized_shape' || p.code === 'invalid_json');
  if (!opts.force && datasetKind(file)?.container === 'json' && allBad) return undefined;
  const notes: ProblemEntry[] = r.truncated
    ? [
        {
          line: 1,
          severity: 'information',
          message: `Only the first ${opts.maxProblems} problem rows are listed (eagle3prep.diagnostics.maxProblems); more rows may be dropped or errored.`,
        },
      ]
    : [];
  return { problems: r.problems, notes };
}

/** The one entry of a file the scan could not read: `project_config` for a bad `eagle3prep.jsonc`, else `unreadable`. */
export function scanFailure(e: unknown): ScannedProblems {
  const err = e as { errorName?: string; name?: string; message?: string };
  const code = /ProjectConfigError/.test(err.errorName ?? err.name ?? '') ? 'project_config' : 'unreadable';
  return { problems: [], notes: [{ line: 1, severity: 'error', message: String(err.message), code }] };
}

/**
 * A file's entries from both sources, one per line: the scan's rows first (they carry the quick
 * fixes), then the run's rows on other lines, the run's file-level warnings and its note of unlisted
 * rows, then the scan's notes. `byLine` maps each scanned row's line to its problem (for the quick fixes).
 */
export function composeProblems(scan: ScannedProblems | undefined, run: RunProblems | undefined): { entries: ProblemEntry[]; byLine: Map<number, RowProblem> } {
  const entries: ProblemEntry[] = [];
  const byLine = new Map<number, RowProblem>();
  for (const p of scan?.problems ?? []) {
    entries.push({
      line: p.line,
      severity: p.severity,
      message: `${p.message} (row ${p.line} will be ${p.severity === 'error' ? 'errored' : 'dropped'})`,
      code: p.code,
    });
    byLine.set(p.line, p);
  }
  if (run) {
    const codeTarget = run.reportMd;
    for (const p of run.problems) {
      if (byLine.has(p.line)) continue;
      entries.push({ line: p.line, severity: p.fate === 'errored' ? 'error' : 'warning', message: runRowMessage(p, run.note), code: p.code, codeTarget });
    }
    for (const w of run.fileWarnings) {
      const remedy = codeRemedyFor(w.code, { long: run.long });
      entries.push({
        line: 1,
        severity: 'warning',
        message: `${w.code} × ${w.count.toLocaleString('en-US')}: ${codeMeaning(w.code) || w.code}${remedy ? `. What to do: ${remedy}` : ''} (data-changing warning of the last run${run.note})`,
        code: w.code,
        codeTarget,
      });
    }
    if (run.missing > 0) {
      entries.push({
        line: 1,
        severity: 'information',
        message: `${run.missing} more dropped or errored rows of the last run are not listed: this output has no problems.jsonl (prepare again to list every row).`,
      });
    }
  }
  entries.push(...(scan?.notes ?? []));
  return { entries, byLine };
}

/**
 * The input files the runs of `reportJsons` list, each once, in order, those that still exist (Problems
 * fills their entries at activation); a report that cannot be read is skipped.
 */
export function reportedInputs(reportJsons: string[]): string[] {
  const seen = new Set<string>();
  for (const r of reportJsons) {
    let files: string[];
    try {
      files = readRunReport(r).report.files.map((f) => f.file);
    } catch {
      continue;
    }
    for (const f of files) if (!seen.has(f) && fs.existsSync(f)) seen.add(f);
  }
  return [...seen];
}

/** A quick fix: add `key: value` under `section` of `eagle3prep.jsonc`. */
export interface QuickFix {
  title: string;
  section: 'roleAliases' | 'fieldMappings';
  key: string;
  value: string;
  /** VS Code's preferred fix (a field mapping that is the only one offered). */
  isPreferred?: boolean;
}

/**
 * The quick fixes of a scanned row: for `unknown_role`, a role alias to each role (the model's side
 * first: an unknown speaker in chat data is usually the assistant); for `unrecognized_shape`, each
 * field mapping the scan suggests.
 */
export function quickFixes(p: RowProblem): QuickFix[] {
  const fixes: QuickFix[] = [];
  if (p.code === 'unknown_role' && p.role !== undefined) {
    for (const role of ['assistant', 'user', 'tool', 'system'].filter((r) => ALIAS_TARGET_ROLES.includes(r as never)))
      fixes.push({ title: `Add role alias "${p.role}" → ${role} to ${PROJECT_CONFIG_NAME}`, section: 'roleAliases', key: p.role, value: role });
  }
  for (const m of p.fieldMappings ?? [])
    fixes.push({
      title: `Map field "${m.from}" → "${m.to}" in ${PROJECT_CONFIG_NAME}`,
      section: 'fieldMappings',
      key: m.from,
      value: m.to,
      isPreferred: (p.fieldMappings?.length ?? 0) === 1,
    });
  return fixes;
}

/** The toast of "Check dataset rows": how many rows will be dropped or errored (`problemRows`: entries other than notes). */
export function checkRowsMessage(name: string, problemRows: number): string {
  return problemRows
    ? `${name}: ${problemRows} row${problemRows === 1 ? '' : 's'} will be dropped or errored (see Problems).`
    : `${name}: no row will be dropped or errored before tokenizing.`;
}

/** The toast after a quick fix wrote `key → value` to the config and re-checked the dataset. */
export function addedToConfigMessage(
  configFile: string,
  dataset: string,
  section: QuickFix['section'],
  key: string,
  value: string,
  problemRows: number,
): string {
  return `${path.basename(configFile)}: ${section === 'roleAliases' ? `role "${key}" → ${value}` : `field "${key}" → "${value}"`}; ${path.basename(dataset)} re-checked (${problemRows} problem rows); prepare it again to update its output.`;
}

/**
 * Adds `key: value` under `section` of the `eagle3prep.jsonc` that applies to `dataset` (the nearest
 * up the folder tree), creating it in `newConfigDir` (the dataset's workspace folder; default: the
 * dataset's folder) when there is none. Comments and formatting are kept (jsonc-parser `modify`).
 * Returns the file's path and the inserted property's offset and length (to reveal it).
 * @throws Error naming the file when it cannot be read or written.
 */
export function addToProjectConfig(
  dataset: string,
  section: QuickFix['section'],
  key: string,
  value: string,
  newConfigDir = path.dirname(dataset),
): { file: string; offset: number; length: number } {
  const file = findProjectConfig(dataset) ?? path.join(newConfigDir, PROJECT_CONFIG_NAME);
  const text = fs.existsSync(file)
    ? fs.readFileSync(file, 'utf8')
    : '// eagle3-prep project configuration: how this project\'s datasets spell roles and fields.\n// See docs/formats.md "Project configuration" in the eagle3-prep repository.\n{}\n';
  const edits = modify(text, [section, key], value, { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } });
  const next = applyEdits(text, edits);
  fs.writeFileSync(file, next);
  // The inserted property (key and value), to reveal it.
  const prop = findNodeAtLocation(parseTree(next)!, [section, key])?.parent;
  return { file, offset: prop?.offset ?? 0, length: prop?.length ?? 0 };
}
