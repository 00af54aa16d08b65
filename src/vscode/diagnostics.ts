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
 * - a scan without tokenizer (`rowProblems.ts` `scanRowProblems`, in the background service worker)
 *   when a dataset is opened or saved, an `eagle3prep.jsonc` changes, or "Check dataset rows" is run
 *   (files over VS Code's 50 MB sync limit included): invalid JSON, unrecognized shapes, unknown
 *   roles, empty conversations — also for files never prepared or changed since.
 *
 * What the entries say, how the sources merge and which quick fixes a row gets is decided in
 * problemsModel.ts (plain records, tested in plain node); this file turns them into diagnostics.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RowProblemLine } from '../core/run/contract';
import { datasetKind } from '../core/run/editor/datasetScan';
import type { RowProblem } from '../core/run/editor/rowProblems';
import { readRunReport } from '../core/run/reports/readReport';
import { configAppliesTo, PROJECT_CONFIG_NAME } from '../core/read/projectConfig';
import { isExcludedDataset } from './datasetDiscovery';
import { affectsSettings, readDiagnosticsSettings, readPrepareSettings } from './config';
import { COMMANDS, DIAGNOSTICS_COLLECTION } from './ids';
import { editorOutputState } from './stalenessModel';
import {
  addedToConfigMessage,
  addToProjectConfig,
  checkRowsMessage,
  composeProblems,
  quickFixes,
  readRunProblems,
  reportedInputs,
  scanFailure,
  scannedProblems,
  type ProblemEntry,
  type RunProblems,
  type ScannedProblems,
} from './problemsModel';
import { STALENESS_SETTING_KEYS } from './settings';
import { serviceClient } from './serviceClient';

/** Diagnostic source of every entry. */
export const DIAGNOSTIC_SOURCE = DIAGNOSTICS_COLLECTION;

/** Line length used for a diagnostic's range when the document is not open (VS Code clamps it). */
const WHOLE_LINE = 10_000;

const SEVERITY: Record<ProblemEntry['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  information: vscode.DiagnosticSeverity.Information,
};

/** Entries that are rows (not notes): what the toasts count. */
const problemRows = (diags: vscode.Diagnostic[]) => diags.filter((d) => d.severity !== vscode.DiagnosticSeverity.Information).length;

/** Diagnostics of the Problems panel and their quick fixes; see the module comment. */
export class DatasetDiagnostics implements vscode.Disposable, vscode.CodeActionProvider {
  static readonly providedCodeActionKinds = [vscode.CodeActionKind.QuickFix];
  readonly collection = vscode.languages.createDiagnosticCollection(DIAGNOSTICS_COLLECTION);
  /** The problems behind the diagnostics, per file path and line (code actions get copies of the diagnostics). */
  private problems = new Map<string, Map<number, RowProblem>>();
  /** The scan's result per file (pre-tokenizer), and the scan's notes (truncation, unreadable file). */
  private scanned = new Map<string, ScannedProblems>();
  /** The last run's rows per file, when its output is shown. */
  private fromReport = new Map<string, RunProblems>();
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

  /** Sets the file's diagnostics from both sources (problemsModel.ts `composeProblems`). */
  private compose(uri: vscode.Uri): vscode.Diagnostic[] {
    const key = uri.fsPath;
    const { entries, byLine } = composeProblems(this.scanned.get(key), this.fromReport.get(key));
    // A line's range: the document's line when it is open, else the whole line (VS Code clamps it).
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const diags = entries.map((e) => {
      const l = Math.max(0, e.line - 1);
      const range = doc && l < doc.lineCount ? doc.lineAt(l).range : new vscode.Range(l, 0, l, WHOLE_LINE);
      const d = new vscode.Diagnostic(range, e.message, SEVERITY[e.severity]);
      if (e.code !== undefined) d.code = e.codeTarget ? { value: e.code, target: vscode.Uri.file(e.codeTarget) } : e.code;
      d.source = DIAGNOSTIC_SOURCE;
      return d;
    });
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
    const out = editorOutputState(key, settings);
    // The run's rows stay until the file is prepared again, tagged when the output is stale (runProblems.ts).
    const { use, run } = await readRunProblems(key, out, this.maxProblems(uri));
    if (run) this.fromReport.set(key, run);
    else this.fromReport.delete(key);
    this.compose(uri);
    // The eagle3prep.jsonc that applies changed how the rows are read: the run's row entries are gone, so the rows are
    // checked again (also when the file is not open) and Problems lists them as they read now (runProblems.ts).
    if (use.show && !use.rows && !this.scanned.has(key) && !this.running.has(key)) void this.refresh(uri);
    return run?.problems ?? [];
  }

  /**
   * Fills Problems from every report.json of the workspace (at activation): each input file the
   * report lists whose current output it is.
   */
  async refreshAllReports(token?: vscode.CancellationToken): Promise<void> {
    const reports = await vscode.workspace.findFiles('**/report.json', '{**/node_modules/**,**/.git/**}', 500, token);
    for (const f of reportedInputs(reports.map((r) => r.fsPath))) await this.refreshFromReport(vscode.Uri.file(f));
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
    let scan: ScannedProblems | undefined;
    try {
      const r = await serviceClient().call({ op: 'rowProblems', file: key, maxProblems: max });
      if (ac.signal.aborted) return [];
      scan = scannedProblems(key, r, { force, maxProblems: max });
      if (!scan) {
        this.collection.delete(uri);
        this.problems.delete(key);
        this.scanned.delete(key);
        return [];
      }
    } catch (e) {
      if (ac.signal.aborted) return [];
      scan = scanFailure(e);
    } finally {
      if (this.running.get(key) === ac) this.running.delete(key);
    }
    this.scanned.set(key, scan);
    await this.refreshFromReport(uri);
    return this.compose(uri);
  }

  /** Forgets the scan of a closed file (the last run's entries stay). */
  forgetScan(uri: vscode.Uri): void {
    if (!this.scanned.delete(uri.fsPath)) return;
    this.compose(uri);
  }

  /** Quick fixes (problemsModel.ts `quickFixes`): add a role alias / field mapping to eagle3prep.jsonc for the problem on the diagnostic's line. */
  provideCodeActions(document: vscode.TextDocument, _range: vscode.Range, context: vscode.CodeActionContext): vscode.CodeAction[] {
    const byLine = this.problems.get(document.uri.fsPath);
    if (!byLine) return [];
    const actions: vscode.CodeAction[] = [];
    for (const diag of context.diagnostics) {
      if (diag.source !== DIAGNOSTIC_SOURCE) continue;
      const p = byLine.get(diag.range.start.line + 1);
      if (!p || p.code !== diag.code) continue;
      for (const fix of quickFixes(p)) {
        const a = new vscode.CodeAction(fix.title, vscode.CodeActionKind.QuickFix);
        a.diagnostics = [diag];
        if (fix.isPreferred !== undefined) a.isPreferred = fix.isPreferred;
        a.command = { command: COMMANDS.addToProjectConfig, title: a.title, arguments: [document.uri, fix.section, fix.key, fix.value] };
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
      if (opts?.quiet) return diags;
      void vscode.window.showInformationMessage(checkRowsMessage(path.basename(uri.fsPath), problemRows(diags)));
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
          const added = addToProjectConfig(uri.fsPath, section, key, value, vscode.workspace.getWorkspaceFolder(uri)?.uri.fsPath);
          // The dataset's output (if any) is now stale: the Datasets view re-reads it; then re-check
          // the rows and show the entry written.
          await vscode.commands.executeCommand(COMMANDS.datasetsInvalidate, uri);
          const diags = await diagnostics.refresh(uri, true);
          const doc = await vscode.workspace.openTextDocument(added.file);
          const sel = new vscode.Range(doc.positionAt(added.offset), doc.positionAt(added.offset + added.length));
          await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: true, selection: sel });
          void vscode.window.showInformationMessage(addedToConfigMessage(added.file, uri.fsPath, section, key, value, problemRows(diags)));
          return { file: added.file, selection: sel, diagnostics: diags.length };
        } catch (e) {
          void vscode.window.showErrorMessage(`Could not update ${PROJECT_CONFIG_NAME}: ${(e as Error).message}`);
          return undefined;
        }
      },
    ),
  ];
}
