/**
 * Problems panel: the rows of a dataset that `prepare` will drop or error, as diagnostics on their
 * line (code = the reason code, source `eagle3-prep`), refreshed when the file is opened or saved
 * and when an `eagle3prep.jsonc` changes; plus quick fixes that add a role alias or a field mapping
 * to `eagle3prep.jsonc` (see src/core/read/projectConfig.ts).
 *
 * What is found without a tokenizer comes from `core/run/datasetScan.ts` `scanRowProblems` (invalid
 * JSON, unrecognized shapes, unknown roles, empty conversations, …, read from the saved file, so
 * files over VS Code's 50 MB sync limit work through "Check dataset rows"); what needs the tokenizer
 * (`too_long`, `no_trainable_tokens`, chat template errors) comes from the last run's report.json
 * when it is current (its first lines per reason).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyEdits, modify } from 'jsonc-parser';
import * as vscode from 'vscode';
import { datasetKind, readOutputState, scanRowProblems, tokenizerFilesHash, type RowProblem } from '../core/run/datasetScan';
import { ALIAS_TARGET_ROLES, findProjectConfig, PROJECT_CONFIG_NAME } from '../core/read/projectConfig';
import { REASON_TEXT } from '../core/run/report';
import { isExcludedDataset } from './datasetsTree';
import { readDiagnosticsSettings, readPrepareSettings, resolveTokenizerDir } from './config';
import { COMMANDS, DIAGNOSTICS_COLLECTION } from './ids';
import { outDirFor } from './paths';

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
export function addToProjectConfig(dataset: string, section: 'roleAliases' | 'fieldMappings', key: string, value: string): string {
  let file = findProjectConfig(dataset);
  if (!file) {
    const wf = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(dataset));
    file = path.join(wf?.uri.fsPath ?? path.dirname(dataset), PROJECT_CONFIG_NAME);
  }
  const text = fs.existsSync(file)
    ? fs.readFileSync(file, 'utf8')
    : '// eagle3-prep project configuration: how this project\'s datasets spell roles and fields.\n// See docs/formats.md "Project configuration" in the eagle3-prep repository.\n{}\n';
  const edits = modify(text, [section, key], value, { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } });
  fs.writeFileSync(file, applyEdits(text, edits));
  return file;
}

/** Diagnostics of the Problems panel and their quick fixes; see the module comment. */
export class DatasetDiagnostics implements vscode.Disposable, vscode.CodeActionProvider {
  static readonly providedCodeActionKinds = [vscode.CodeActionKind.QuickFix];
  readonly collection = vscode.languages.createDiagnosticCollection(DIAGNOSTICS_COLLECTION);
  /** The problems behind the diagnostics, per file path and line (code actions get copies of the diagnostics). */
  private problems = new Map<string, Map<number, RowProblem>>();
  private running = new Map<string, AbortController>();

  /** Whether `uri` is a dataset this feature looks at (local, dataset name, setting on). */
  applies(uri: vscode.Uri): boolean {
    if (uri.scheme !== 'file' || !datasetKind(uri.fsPath)) return false;
    if (datasetKind(uri.fsPath)?.container === 'parquet') return false; // no lines to put a diagnostic on
    if (isExcludedDataset(uri)) return false; // outputs, tokenizer.json, package.json, …
    return readDiagnosticsSettings(uri).enabled;
  }

  /**
   * Scans `uri` (its saved content) and replaces its diagnostics. A `.json` file in which no row is
   * recognized (package.json, settings, …) is left alone unless `force`. Resolves with the
   * diagnostics set; an unreadable file gets one diagnostic on line 1 saying why.
   */
  async refresh(uri: vscode.Uri, force = false): Promise<vscode.Diagnostic[]> {
    if (!force && !this.applies(uri)) return [];
    const key = uri.fsPath;
    this.running.get(key)?.abort();
    const ac = new AbortController();
    this.running.set(key, ac);
    const max = readDiagnosticsSettings(uri).maxProblems;
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    const range = (line: number) => {
      const l = Math.max(0, line - 1);
      return doc && l < doc.lineCount ? doc.lineAt(l).range : new vscode.Range(l, 0, l, WHOLE_LINE);
    };
    const diags: vscode.Diagnostic[] = [];
    const byLine = new Map<number, RowProblem>();
    try {
      const r = await scanRowProblems(key, { maxProblems: max, signal: ac.signal });
      if (ac.signal.aborted) return [];
      const kind = datasetKind(key);
      const allBad = r.problems.length === r.rowsRead && r.problems.every((p) => p.code === 'unrecognized_shape' || p.code === 'invalid_json');
      if (!force && kind?.container === 'json' && allBad) {
        this.collection.delete(uri);
        this.problems.delete(key);
        return [];
      }
      for (const p of r.problems) {
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
      if (r.truncated) {
        const d = new vscode.Diagnostic(
          range(1),
          `Only the first ${max} problem rows are listed (eagle3prep.diagnostics.maxProblems); more rows may be dropped or errored.`,
          vscode.DiagnosticSeverity.Information,
        );
        d.source = DIAGNOSTIC_SOURCE;
        diags.push(d);
      }
      // Token-level outcomes from the last run, when it is current.
      const settings = readPrepareSettings(uri);
      const out = readOutputState(key, { outDir: outDirFor([key], settings.outputDirectory), tokenizerHash: tokenizerFilesHash(resolveTokenizerDir(uri)) });
      if (out.state === 'prepared' && out.fileReport) {
        for (const [reason, d] of Object.entries(out.fileReport.dropped)) {
          for (const line of d.lines) {
            if (byLine.has(line)) continue;
            const diag = new vscode.Diagnostic(
              range(line),
              `${reason}: ${REASON_TEXT[reason] ?? reason} (last run; report.json lists the first ${d.lines.length} of ${d.count})`,
              vscode.DiagnosticSeverity.Warning,
            );
            diag.code = reason;
            diag.source = DIAGNOSTIC_SOURCE;
            diags.push(diag);
          }
        }
        for (const e of out.fileReport.errors) {
          if (byLine.has(e.line)) continue;
          const diag = new vscode.Diagnostic(range(e.line), `${e.message} (last run)`, vscode.DiagnosticSeverity.Error);
          diag.code = 'errored';
          diag.source = DIAGNOSTIC_SOURCE;
          diags.push(diag);
        }
      }
    } catch (e) {
      if (ac.signal.aborted) return [];
      const d = new vscode.Diagnostic(range(1), (e as Error).message, vscode.DiagnosticSeverity.Error);
      d.source = DIAGNOSTIC_SOURCE;
      d.code = (e as Error).name === 'ProjectConfigError' ? 'project_config' : 'unreadable';
      diags.push(d);
    } finally {
      if (this.running.get(key) === ac) this.running.delete(key);
    }
    this.problems.set(key, byLine);
    this.collection.set(uri, diags);
    return diags;
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

  /** Re-scans every dataset that has diagnostics or is open (after an eagle3prep.jsonc change). */
  refreshAll(): void {
    const uris = new Map<string, vscode.Uri>();
    for (const d of vscode.workspace.textDocuments) if (this.applies(d.uri)) uris.set(d.uri.fsPath, d.uri);
    this.collection.forEach((u) => void uris.set(u.fsPath, u));
    for (const u of uris.values()) void this.refresh(u);
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
  for (const d of vscode.workspace.textDocuments) void diagnostics.refresh(d.uri);
  return [
    diagnostics,
    watcher,
    datasets,
    datasets.onDidChange(onDataset),
    datasets.onDidCreate(onDataset),
    datasets.onDidDelete((u) => diagnostics.collection.delete(u)),
    watcher.onDidChange(() => diagnostics.refreshAll()),
    watcher.onDidCreate(() => diagnostics.refreshAll()),
    watcher.onDidDelete(() => diagnostics.refreshAll()),
    vscode.workspace.onDidOpenTextDocument((d) => void diagnostics.refresh(d.uri)),
    vscode.workspace.onDidSaveTextDocument((d) => void diagnostics.refresh(d.uri)),
    vscode.workspace.onDidCloseTextDocument((d) => diagnostics.collection.delete(d.uri)),
    vscode.languages.registerCodeActionsProvider(
      [{ scheme: 'file', pattern: '**/*.{jsonl,ndjson,json}' }, { language: 'jsonl' }, { language: 'json' }],
      diagnostics,
      { providedCodeActionKinds: DatasetDiagnostics.providedCodeActionKinds },
    ),
    vscode.commands.registerCommand(COMMANDS.checkRows, async (arg?: unknown) => {
      const r = (arg as { resourceUri?: unknown } | undefined)?.resourceUri;
      const uri = arg instanceof vscode.Uri ? arg : r instanceof vscode.Uri ? r : vscode.window.activeTextEditor?.document.uri;
      if (!uri) return void vscode.window.showWarningMessage('Check dataset rows: open or select a dataset file.');
      const diags = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `EAGLE-3 Prep: checking rows of ${path.basename(uri.fsPath)}` },
        () => diagnostics.refresh(uri, true),
      );
      const n = diags.filter((d) => d.severity !== vscode.DiagnosticSeverity.Information).length;
      void vscode.window.showInformationMessage(
        n
          ? `${path.basename(uri.fsPath)}: ${n} row${n === 1 ? '' : 's'} will be dropped or errored (see Problems).`
          : `${path.basename(uri.fsPath)}: no row will be dropped or errored before tokenizing.`,
      );
      return diags;
    }),
    vscode.commands.registerCommand(
      COMMANDS.addToProjectConfig,
      async (uri: vscode.Uri, section: 'roleAliases' | 'fieldMappings', key: string, value: string) => {
        try {
          const file = addToProjectConfig(uri.fsPath, section, key, value);
          void vscode.window.showInformationMessage(
            `${path.basename(file)}: ${section === 'roleAliases' ? `role "${key}" → ${value}` : `field "${key}" → "${value}"`}.`,
          );
          await diagnostics.refresh(uri, true);
          return file;
        } catch (e) {
          void vscode.window.showErrorMessage(`Could not update ${PROJECT_CONFIG_NAME}: ${(e as Error).message}`);
          return undefined;
        }
      },
    ),
  ];
}
