/**
 * Problems panel: the rows of a dataset that `prepare` drops or errors, as diagnostics on their
 * line (code = the reason code, source `eagle3-prep`); plus quick fixes that add a role alias or a
 * field mapping to `eagle3prep.jsonc` (see src/core/read/projectConfig.ts), after which the dataset
 * is re-checked, its output marked stale, and the inserted entry shown.
 *
 * Two sources, merged per file (one entry per line):
 * - the last run, for EVERY prepared file whose output is current, open or not: every dropped and
 *   errored row from the output's `problems.jsonl` (`readReport.ts` `readRowProblems`; older
 *   outputs: the lines report.json keeps). Filled at activation, when a report.json is written, and
 *   after a run;
 * - a scan without tokenizer (`datasetScan.ts` `scanRowProblems`, in the background service worker)
 *   when a dataset is opened or saved, an `eagle3prep.jsonc` changes, or "Check dataset rows" is run
 *   (files over VS Code's 50 MB sync limit included): invalid JSON, unrecognized shapes, unknown
 *   roles, empty conversations — also for files never prepared or changed since.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { applyEdits, findNodeAtLocation, modify, parseTree } from 'jsonc-parser';
import { codeMeaning, codeRemedyFor } from '../core/codes';
import type { RowProblemLine } from '../core/run/contract';
import { datasetKind, readOutputState, tokenizerFilesHash, type RowProblem } from '../core/run/editor/datasetScan';
import { readRowProblems, readRunReport } from '../core/run/reports/readReport';
import { resolveRunSettings } from '../core/run/runSettings';
import { ALIAS_TARGET_ROLES, configAppliesTo, findProjectConfig, PROJECT_CONFIG_NAME } from '../core/read/projectConfig';
import { isExcludedDataset } from './datasetsTree';
import { affectsSettings, readDiagnosticsSettings, readPrepareSettings, resolveTokenizerDir } from './config';
import { COMMANDS, DIAGNOSTICS_COLLECTION } from './ids';
import { outDirFor } from './paths';
import { runProblemsUse, runRowMessage } from './runProblems';
import { STALENESS_SETTING_KEYS } from './settings';
import { serviceClient } from './serviceClient';

/** Diagnostic source of every entry. */
export const DIAGNOSTIC_SOURCE = DIAGNOSTICS_COLLECTION;

/** Line length used for a diagnostic's range when the document is not open (VS Code clamps it). */
const WHOLE_LINE = 10_000;

/**
 * Adds `key: value` under `section` of the `eagle3prep.jsonc` that applies to `dataset` (the nearest
 * up the folder tree), creating it in the dataset's workspace folder (else beside the dataset) when
 * there is none. Comments and formatting are kept (jsonc-parser `modify`). Returns the file's path.
 * @throws Error naming the file when it cannot be read or written.
 */
export function addToProjectConfig(
  dataset: string,
  section: 'roleAliases' | 'fieldMappings',
  key: string,
  value: string,
): { file: string; offset: number; length: number } {
  let file = findProjectConfig(dataset);
  if (!file) {
    const wf = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(dataset));
    file = path.join(wf?.uri.fsPath ?? path.dirname(dataset), PROJECT_CONFIG_NAME);
  }
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

/** What the last run says about one file: its dropped and errored rows. */
interface FromReport {
  problems: RowProblemLine[];
  complete: boolean;
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

/** Diagnostics of the Problems panel and their quick fixes; see the module comment. */
export class DatasetDiagnostics implements vscode.Disposable, vscode.CodeActionProvider {
  static readonly providedCodeActionKinds = [vscode.CodeActionKind.QuickFix];
  readonly collection = vscode.languages.createDiagnosticCollection(DIAGNOSTICS_COLLECTION);
  /** The problems behind the diagnostics, per file path and line (code actions get copies of the diagnostics). */
  private problems = new Map<string, Map<number, RowProblem>>();
  /** The scan's result per file (pre-tokenizer), and the scan's notes (truncation, unreadable file). */
  private scanned = new Map<string, { problems: RowProblem[]; extra: vscode.Diagnostic[] }>();
  /** The last run's rows per file, when its output is current. */
  private fromReport = new Map<string, FromReport>();
  private running = new Map<string, AbortController>();

  /** Whether `uri` is a dataset this feature looks at (local, dataset name, setting on). */
  applies(uri: vscode.Uri): boolean {
    if (uri.scheme !== 'file' || !datasetKind(uri.fsPath)) return false;
    if (datasetKind(uri.fsPath)?.container === 'parquet') return false; // no lines to put a diagnostic on
    if (isExcludedDataset(uri)) return false; // outputs, tokenizer.json, package.json, …
    return readDiagnosticsSettings(uri).enabled;
  }

  private maxProblems(uri: vscode.Uri): number {
    return readDiagnosticsSettings(uri).maxProblems;
  }

  /** A line's range: the document's line when it is open, else the whole line (VS Code clamps it). */
  private rangeFn(uri: vscode.Uri): (line: number) => vscode.Range {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    return (line: number) => {
      const l = Math.max(0, line - 1);
      return doc && l < doc.lineCount ? doc.lineAt(l).range : new vscode.Range(l, 0, l, WHOLE_LINE);
    };
  }

  /** Sets the file's diagnostics from both sources (one entry per line: the scan's, which carries the quick fixes, first). */
  private compose(uri: vscode.Uri): vscode.Diagnostic[] {
    const key = uri.fsPath;
    const range = this.rangeFn(uri);
    const diags: vscode.Diagnostic[] = [];
    const byLine = new Map<number, RowProblem>();
    const scan = this.scanned.get(key);
    for (const p of scan?.problems ?? []) {
      const d = new vscode.Diagnostic(
        range(p.line),
        `${p.message} (row ${p.line} will be ${p.severity === 'error' ? 'errored' : 'dropped'})`,
        p.severity === 'error' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
      );
      d.code = p.code;
      d.source = DIAGNOSTIC_SOURCE;
      diags.push(d);
      byLine.set(p.line, p);
    }
    const rep = this.fromReport.get(key);
    if (rep) {
      const target = vscode.Uri.file(rep.reportMd);
      for (const p of rep.problems) {
        if (byLine.has(p.line)) continue;
        const d = new vscode.Diagnostic(
          range(p.line),
          runRowMessage(p, rep.note),
          p.fate === 'errored' ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
        );
        d.code = { value: p.code, target };
        d.source = DIAGNOSTIC_SOURCE;
        diags.push(d);
      }
      for (const w of rep.fileWarnings) {
        const remedy = codeRemedyFor(w.code, { long: rep.long });
        const d = new vscode.Diagnostic(
          range(1),
          `${w.code} × ${w.count.toLocaleString('en-US')}: ${codeMeaning(w.code) || w.code}${remedy ? `. What to do: ${remedy}` : ''} (data-changing warning of the last run${rep.note})`,
          vscode.DiagnosticSeverity.Warning,
        );
        d.code = { value: w.code, target };
        d.source = DIAGNOSTIC_SOURCE;
        diags.push(d);
      }
      if (rep.missing > 0) {
        const d = new vscode.Diagnostic(
          range(1),
          `${rep.missing} more dropped or errored rows of the last run are not listed: this output has no problems.jsonl (prepare again to list every row).`,
          vscode.DiagnosticSeverity.Information,
        );
        d.source = DIAGNOSTIC_SOURCE;
        diags.push(d);
      }
    }
    diags.push(...(scan?.extra ?? []));
    this.problems.set(key, byLine);
    if (diags.length) this.collection.set(uri, diags);
    else this.collection.delete(uri);
    return diags;
  }

  /**
   * Reads the last run's dropped and errored rows of `uri` and updates its diagnostics: kept while
   * the output is stale for a reason outside the file (tagged so), cleared when there is no output or
   * the input itself changed (runProblems.ts).
   * Resolves with the rows listed.
   */
  async refreshFromReport(uri: vscode.Uri): Promise<RowProblemLine[]> {
    if (!this.applies(uri)) return [];
    const key = uri.fsPath;
    const settings = readPrepareSettings(uri);
    const out = readOutputState(key, {
      outDir: outDirFor([key], settings.outputDirectory),
      tokenizerHash: tokenizerFilesHash(resolveTokenizerDir(uri)),
      settings: resolveRunSettings(settings),
    });
    let rep: FromReport | undefined;
    // The run's rows stay until the file is prepared again, tagged when the output is stale (runProblems.ts).
    const use = runProblemsUse(out);
    if (use.show && out.reportJson) {
      try {
        const { report } = readRunReport(out.reportJson);
        const read = await readRowProblems(report, key, this.maxProblems(uri));
        const r = use.rows ? read : { ...read, problems: [], missing: 0 };
        // Drops are listed per row already; the rest of the file's data-changing warnings get one entry each.
        const dropped = out.fileReport?.dropped ?? {};
        const fileWarnings = (out.warnings ?? []).filter((w) => !(w.code in dropped));
        rep = { ...r, reportJson: out.reportJson, reportMd: report.outputs.reportMd, fileWarnings, long: report.long, note: use.note };
      } catch {
        rep = undefined;
      }
    }
    if (rep) this.fromReport.set(key, rep);
    else this.fromReport.delete(key);
    this.compose(uri);
    // The eagle3prep.jsonc that applies changed how the rows are read: the run's row entries are gone, so the rows are
    // checked again (also when the file is not open) and Problems lists them as they read now (runProblems.ts).
    if (use.show && !use.rows && !this.scanned.has(key) && !this.running.has(key)) void this.refresh(uri);
    return rep?.problems ?? [];
  }

  /**
   * Fills Problems from every report.json of the workspace (at activation): each input file the
   * report lists whose current output it is.
   */
  async refreshAllReports(token?: vscode.CancellationToken): Promise<void> {
    const reports = await vscode.workspace.findFiles('**/report.json', '{**/node_modules/**,**/.git/**}', 500, token);
    const seen = new Set<string>();
    for (const r of reports) {
      let files: string[];
      try {
        files = readRunReport(r.fsPath).report.files.map((f) => f.file);
      } catch {
        continue;
      }
      for (const f of files) {
        if (seen.has(f) || !fs.existsSync(f)) continue;
        seen.add(f);
        await this.refreshFromReport(vscode.Uri.file(f));
      }
    }
  }

  /**
   * Scans `uri` (its saved content, in the background worker) and replaces the scan's part of its
   * diagnostics (the last run's part is re-read too). A `.json` file in which no row is recognized
   * (package.json, settings, …) is left alone unless `force`. Resolves with the file's diagnostics;
   * an unreadable file gets one diagnostic on line 1 saying why.
   */
  async refresh(uri: vscode.Uri, force = false): Promise<vscode.Diagnostic[]> {
    if (!force && !this.applies(uri)) return [];
    const key = uri.fsPath;
    this.running.get(key)?.abort();
    const ac = new AbortController();
    this.running.set(key, ac);
    const max = this.maxProblems(uri);
    const range = this.rangeFn(uri);
    const extra: vscode.Diagnostic[] = [];
    let problems: RowProblem[] = [];
    try {
      const r = await serviceClient().call({ op: 'rowProblems', file: key, maxProblems: max });
      if (ac.signal.aborted) return [];
      const kind = datasetKind(key);
      const allBad = r.problems.length === r.rowsRead && r.problems.every((p) => p.code === 'unrecognized_shape' || p.code === 'invalid_json');
      if (!force && kind?.container === 'json' && allBad) {
        this.collection.delete(uri);
        this.problems.delete(key);
        this.scanned.delete(key);
        return [];
      }
      problems = r.problems;
      if (r.truncated) {
        const d = new vscode.Diagnostic(
          range(1),
          `Only the first ${max} problem rows are listed (eagle3prep.diagnostics.maxProblems); more rows may be dropped or errored.`,
          vscode.DiagnosticSeverity.Information,
        );
        d.source = DIAGNOSTIC_SOURCE;
        extra.push(d);
      }
    } catch (e) {
      if (ac.signal.aborted) return [];
      const d = new vscode.Diagnostic(range(1), (e as Error).message, vscode.DiagnosticSeverity.Error);
      d.source = DIAGNOSTIC_SOURCE;
      d.code = /ProjectConfigError/.test((e as { errorName?: string }).errorName ?? (e as Error).name) ? 'project_config' : 'unreadable';
      extra.push(d);
    } finally {
      if (this.running.get(key) === ac) this.running.delete(key);
    }
    this.scanned.set(key, { problems, extra });
    await this.refreshFromReport(uri);
    return this.compose(uri);
  }

  /** Forgets the scan of a closed file (the last run's entries stay). */
  forgetScan(uri: vscode.Uri): void {
    if (!this.scanned.delete(uri.fsPath)) return;
    this.compose(uri);
  }

  /** Quick fixes: add a role alias / field mapping to eagle3prep.jsonc for the problem on the diagnostic's line. */
  provideCodeActions(document: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const byLine = this.problems.get(document.uri.fsPath);
    if (!byLine) return [];
    const actions: vscode.CodeAction[] = [];
    for (const diag of context.diagnostics) {
      if (diag.source !== DIAGNOSTIC_SOURCE) continue;
      const p = byLine.get(diag.range.start.line + 1);
      if (!p || p.code !== diag.code) continue;
      if (p.code === 'unknown_role' && p.role !== undefined) {
        // Most likely first: an unknown speaker in chat data is usually the model's side.
        for (const role of ['assistant', 'user', 'tool', 'system'].filter((r) => ALIAS_TARGET_ROLES.includes(r as never))) {
          const a = new vscode.CodeAction(`Add role alias "${p.role}" → ${role} to ${PROJECT_CONFIG_NAME}`, vscode.CodeActionKind.QuickFix);
          a.diagnostics = [diag];
          a.command = { command: COMMANDS.addToProjectConfig, title: a.title, arguments: [document.uri, 'roleAliases', p.role, role] };
          actions.push(a);
        }
      }
      for (const m of p.fieldMappings ?? []) {
        const a = new vscode.CodeAction(`Map field "${m.from}" → "${m.to}" in ${PROJECT_CONFIG_NAME}`, vscode.CodeActionKind.QuickFix);
        a.diagnostics = [diag];
        a.isPreferred = (p.fieldMappings?.length ?? 0) === 1;
        a.command = { command: COMMANDS.addToProjectConfig, title: a.title, arguments: [document.uri, 'fieldMappings', m.from, m.to] };
        actions.push(a);
      }
    }
    return actions;
  }

  /**
   * After a change of the `eagle3prep.jsonc` at `config`: re-scans every dataset it applies to
   * (`configAppliesTo`) that has diagnostics or is open; the others keep theirs untouched.
   */
  refreshAll(config: vscode.Uri): void {
    const uris = new Map<string, vscode.Uri>();
    for (const d of vscode.workspace.textDocuments) if (this.applies(d.uri)) uris.set(d.uri.fsPath, d.uri);
    this.collection.forEach((u) => void uris.set(u.fsPath, u));
    for (const u of uris.values()) {
      if (!configAppliesTo(config.fsPath, u.fsPath)) continue;
      if (this.scanned.has(u.fsPath) || vscode.workspace.textDocuments.some((d) => d.uri.fsPath === u.fsPath)) void this.refresh(u);
      else void this.refreshFromReport(u);
    }
  }

  dispose(): void {
    for (const ac of this.running.values()) ac.abort();
    this.collection.dispose();
  }
}

/**
 * Registers the diagnostics: scans datasets when opened or saved (and the ones already open), or
 * changed on disk while open or listed, clears them when closed, re-scans when an eagle3prep.jsonc changes; the quick fix provider for
 * JSON / JSON Lines files; `eagle3prep.checkRows` (any dataset Uri, open or not — also files
 * over 50 MB that VS Code does not sync to extensions); the hidden `eagle3prep.addToProjectConfig`.
 */
export function registerDiagnostics(): vscode.Disposable[] {
  const diagnostics = new DatasetDiagnostics();
  const watcher = vscode.workspace.createFileSystemWatcher(`**/${PROJECT_CONFIG_NAME}`);
  // A dataset changed on disk (another program, a generator script): re-scan it when it has entries or is open.
  const datasets = vscode.workspace.createFileSystemWatcher('**/*.{jsonl,ndjson,json,gz,zst}');
  const onDataset = (u: vscode.Uri) => {
    const open = vscode.workspace.textDocuments.some((d) => d.uri.fsPath === u.fsPath);
    if (open || diagnostics.collection.has(u)) void diagnostics.refresh(u);
  };
  // A run's report.json: the files it lists get the run's rows (or lose them when it is gone).
  const reports = vscode.workspace.createFileSystemWatcher('**/report.json');
  const onReport = (u: vscode.Uri) => {
    try {
      for (const f of readRunReport(u.fsPath).report.files) void diagnostics.refreshFromReport(vscode.Uri.file(f.file));
    } catch {
      diagnostics.collection.forEach((d) => void diagnostics.refreshFromReport(d));
    }
  };
  for (const d of vscode.workspace.textDocuments) void diagnostics.refresh(d.uri);
  void diagnostics.refreshAllReports();
  return [
    diagnostics,
    watcher,
    datasets,
    reports,
    reports.onDidCreate(onReport),
    reports.onDidChange(onReport),
    reports.onDidDelete(onReport),
    datasets.onDidChange(onDataset),
    datasets.onDidCreate(onDataset),
    datasets.onDidDelete((u) => diagnostics.collection.delete(u)),
    // A setting that decides records: the run's entries are re-tagged (stale or current).
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsSettings(e, ...STALENESS_SETTING_KEYS)) diagnostics.collection.forEach((u) => void diagnostics.refreshFromReport(u));
    }),
    watcher.onDidChange((u) => diagnostics.refreshAll(u)),
    watcher.onDidCreate((u) => diagnostics.refreshAll(u)),
    watcher.onDidDelete((u) => diagnostics.refreshAll(u)),
    vscode.workspace.onDidOpenTextDocument((d) => void diagnostics.refresh(d.uri)),
    vscode.workspace.onDidSaveTextDocument((d) => void diagnostics.refresh(d.uri)),
    vscode.workspace.onDidCloseTextDocument((d) => diagnostics.forgetScan(d.uri)),
    vscode.languages.registerCodeActionsProvider(
      [{ scheme: 'file', pattern: '**/*.{jsonl,ndjson,json}' }, { language: 'jsonl' }, { language: 'json' }],
      diagnostics,
      { providedCodeActionKinds: DatasetDiagnostics.providedCodeActionKinds },
    ),
    // `quiet`: no toast (after a failed run, whose own toast says what happened).
    vscode.commands.registerCommand(COMMANDS.checkRows, async (arg?: unknown, opts?: { quiet?: boolean }) => {
      const r = (arg as { resourceUri?: unknown } | undefined)?.resourceUri;
      const uri = arg instanceof vscode.Uri ? arg : r instanceof vscode.Uri ? r : vscode.window.activeTextEditor?.document.uri;
      if (!uri) return void vscode.window.showWarningMessage('Check dataset rows: open or select a dataset file.');
      const diags = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `EAGLE-3 Prep: checking rows of ${path.basename(uri.fsPath)}` },
        () => diagnostics.refresh(uri, true),
      );
      const n = diags.filter((d) => d.severity !== vscode.DiagnosticSeverity.Information).length;
      if (opts?.quiet) return diags;
      void vscode.window.showInformationMessage(
        n
          ? `${path.basename(uri.fsPath)}: ${n} row${n === 1 ? '' : 's'} will be dropped or errored (see Problems).`
          : `${path.basename(uri.fsPath)}: no row will be dropped or errored before tokenizing.`,
      );
      return diags;
    }),
    vscode.commands.registerCommand(COMMANDS.problemsFromReport, async (uris: vscode.Uri[]) => {
      const out: Record<string, number> = {};
      for (const u of uris) out[u.fsPath] = (await diagnostics.refreshFromReport(u)).length;
      return out;
    }),
    vscode.commands.registerCommand(
      COMMANDS.addToProjectConfig,
      async (uri: vscode.Uri, section: 'roleAliases' | 'fieldMappings', key: string, value: string) => {
        try {
          const added = addToProjectConfig(uri.fsPath, section, key, value);
          // The dataset's output (if any) is now stale: the Datasets view re-reads it; then re-check
          // the rows and show the entry written.
          await vscode.commands.executeCommand(COMMANDS.datasetsInvalidate, uri);
          const diags = await diagnostics.refresh(uri, true);
          const doc = await vscode.workspace.openTextDocument(added.file);
          const sel = new vscode.Range(doc.positionAt(added.offset), doc.positionAt(added.offset + added.length));
          await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: true, selection: sel });
          void vscode.window.showInformationMessage(
            `${path.basename(added.file)}: ${section === 'roleAliases' ? `role "${key}" → ${value}` : `field "${key}" → "${value}"`}; ${path.basename(uri.fsPath)} re-checked (${diags.filter((d) => d.severity !== vscode.DiagnosticSeverity.Information).length} problem rows); prepare it again to update its output.`,
          );
          return { file: added.file, selection: sel, diagnostics: diags.length };
        } catch (e) {
          void vscode.window.showErrorMessage(`Could not update ${PROJECT_CONFIG_NAME}: ${(e as Error).message}`);
          return undefined;
        }
      },
    ),
  ];
}
