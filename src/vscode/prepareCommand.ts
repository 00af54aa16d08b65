/**
 * The `eagle3prep.prepare` command ("Prepare for EAGLE-3"): runs the pipeline on
 * the files picked in the explorer (or the active editor's file) in a worker
 * thread, with a cancellable progress notification, logs to the "EAGLE-3 Prep"
 * output channel, then opens the written report.md. What it says (the summary, the toast by
 * status, the log's header) is prepareModel.ts, tested in plain node.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { fileStampOf } from '../core/read/fileStamp';
import { nextStepsOfRun } from '../core/run/reports/nextSteps';
import { conversationsLines } from '../core/run/reports/conversationsNote';
import { DATASET_EXTENSIONS, expandInputs } from '../core/run/inputs/inputs';
import { type PrepareOptions, type PrepareResult } from '../core/run/contract';
import { readPrepareSettings, type PrepareSettings } from './config';
import { runOptionsOf } from '../core/run/runSettings';
import { datasetsProvider } from './datasetsView';
import { COMMANDS } from './ids';
import { notify } from './notify';
import { outDirFor } from './paths';
import { pickDataset } from './pickDataset';
import { progressMessage } from './progressText';
import { plural, progressPercent, runLogHeader, runOutcomeToast, summarizeResult, writtenFiles } from './prepareModel';
import { noteRunOutcome, reasonWithoutPath, shortReason } from './runFailures';
import type { OpenReportMode } from './settings';
import { tokenizerDisplayName } from './tokenizerFolders';
import { runPrepareInWorker } from './workerClient';

/**
 * Collects the dataset Uris a command invocation refers to. VS Code passes `(clicked, selected[])`
 * from the explorer, `(uri)` from editor menus, nothing from the palette (→ the active editor's
 * file). A single Uri[] argument (programmatic use) is accepted too, and Datasets view nodes
 * (`{resourceUri}`, alone or as the multi-selection). Duplicates are removed.
 * Returns [] when nothing applies.
 */
export function urisFromCommandArgs(arg?: unknown, multi?: unknown): vscode.Uri[] {
  // Tree nodes (the Datasets view) carry their file as `resourceUri`.
  const asUri = (u: unknown): unknown => (u instanceof vscode.Uri ? u : (u as { resourceUri?: unknown } | null)?.resourceUri);
  const isUri = (u: unknown): u is vscode.Uri => u instanceof vscode.Uri;
  arg = Array.isArray(arg) ? arg.map(asUri) : (asUri(arg) ?? arg);
  multi = Array.isArray(multi) ? multi.map(asUri) : multi;
  let uris: vscode.Uri[] = [];
  if (Array.isArray(multi) && multi.some(isUri)) uris = multi.filter(isUri);
  else if (Array.isArray(arg)) uris = arg.filter(isUri);
  else if (isUri(arg)) uris = [arg];
  else if (vscode.window.activeTextEditor) uris = [vscode.window.activeTextEditor.document.uri];
  const seen = new Set<string>();
  return uris.filter((u) => !seen.has(u.toString()) && !!seen.add(u.toString()));
}

/**
 * Opens report.md as a Markdown preview (falling back to a text editor) or as text; beside the
 * active editor when `toSide` (the dataset is open there), else in the active editor group.
 * Never throws.
 */
export async function openReport(reportMd: string, mode: OpenReportMode, log: (l: string) => void, toSide = false): Promise<void> {
  if (mode === 'none' || !fs.existsSync(reportMd)) return;
  const uri = vscode.Uri.file(reportMd);
  if (mode === 'preview') {
    try {
      await vscode.commands.executeCommand(toSide ? 'markdown.showPreviewToSide' : 'markdown.showPreview', uri);
      return;
    } catch (e) {
      log(`Markdown preview unavailable (${e instanceof Error ? e.message : String(e)}); opening report.md as text.`);
    }
  }
  try {
    await vscode.window.showTextDocument(uri, { preview: true, viewColumn: toSide ? vscode.ViewColumn.Beside : undefined });
  } catch (e) {
    log(`Could not open ${reportMd}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * The toast after a run (prepareModel.ts `runOutcomeToast`), and what its buttons do: Problems, report.md,
 * the dashboard (the workspace's for a run of several files), the output in the Explorer, the log.
 */
export async function showRunOutcome(result: PrepareResult, output: vscode.OutputChannel, names: string[]): Promise<void> {
  const toast = runOutcomeToast(result, names);
  const choice = await notify(toast.level, toast.message, ...toast.actions);
  const dashboardArg = result.files.length === 1 ? vscode.Uri.file(result.files[0].file) : undefined;
  if (choice === 'Show problems') await vscode.commands.executeCommand('workbench.actions.view.problems');
  else if (choice === 'Open report') await openReport(result.outputs.reportMd, 'preview', (l) => output.appendLine(l));
  // A run of several files (a folder) opens the workspace dashboard, where each of its files is listed.
  else if (choice === 'Open dashboard')
    await (dashboardArg
      ? vscode.commands.executeCommand(COMMANDS.openDashboard, dashboardArg)
      : vscode.commands.executeCommand(COMMANDS.openWorkspaceDashboard));
  else if (choice === 'Reveal in Explorer')
    await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(result.outputs.written?.[0] ?? result.outputs.tokenizedData));
  else if (choice === 'Show log' || choice === 'Show details') output.show(true);
}

/** Runs in progress, by output folder: a second run into the same folder is refused. */
const running = new Set<string>();

/**
 * Runs `prepare` on `uris` (files or folders) in the worker with a cancellable progress
 * notification, then opens report.md and shows a message with the counts.
 *
 * @returns the PrepareResult (also when `result.ok` is false, after an error message naming the
 *   failing files); undefined when there was nothing to do, the run was cancelled, or it threw
 *   (the error is shown and logged, not rethrown).
 */
export async function prepareUris(context: vscode.ExtensionContext, output: vscode.OutputChannel, uris: vscode.Uri[]): Promise<PrepareResult | undefined> {
  const log = (line: string): void => output.appendLine(line);
  const inputs = prepareInputs(uris, log);
  if (!inputs) return undefined;
  const settings = readPrepareSettings(uris[0], (m) => {
    log(m);
    void vscode.window.showWarningMessage(m);
  });
  const outDir = outDirFor(
    uris.map((u) => u.fsPath),
    settings.outputDirectory,
  );
  if (running.has(outDir)) {
    void vscode.window.showWarningMessage(`A Prepare for EAGLE-3 run is already writing to ${outDir}.`);
    return undefined;
  }
  const options: PrepareOptions = {
    inputs,
    outDir,
    tokenizerDir: settings.tokenizerDir,
    ...runOptionsOf(settings),
    truncate: settings.truncate,
    format: settings.format,
    ...(settings.trainer ? { trainer: settings.trainer } : {}),
  };
  const names = inputs.map((i) => path.basename(i));
  for (const l of runLogHeader(inputs, settings, tokenizerDisplayName(settings.tokenizerDir), outDir)) log(l);

  running.add(outDir);
  let result: PrepareResult;
  try {
    result = await runWithProgress(context, options, names, log);
  } catch (e) {
    reportRunError(e, uris, names, output);
    return undefined;
  } finally {
    running.delete(outDir);
  }
  await logRunResult(result, settings, uris, log);
  await refreshFromRun(result, uris);
  void showRunOutcome(result, output, names);
  return result;
}

/**
 * The dataset files `uris` name (folders expanded), after noting unsaved editors; undefined after a message when
 * there are none, or a Uri is not a local file.
 */
function prepareInputs(uris: vscode.Uri[], log: (line: string) => void): string[] | undefined {
  if (uris.length === 0) {
    void vscode.window.showWarningMessage(
      'Prepare for EAGLE-3: select a .jsonl / .ndjson / .json / .traj / .parquet dataset (optionally .gz / .zst) or a folder in the Explorer, or open one.',
    );
    return undefined;
  }
  const notLocal = uris.filter((u) => u.scheme !== 'file');
  if (notLocal.length) {
    void vscode.window.showErrorMessage(`Prepare for EAGLE-3 reads local files only; cannot read ${notLocal.map((u) => u.toString()).join(', ')}.`);
    return undefined;
  }
  for (const u of uris) {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === u.toString());
    if (doc?.isDirty) log(`Note: ${u.fsPath} has unsaved changes; the saved file is used.`);
  }
  try {
    const inputs = expandInputs(uris.map((u) => u.fsPath));
    if (inputs.length === 0) throw new Error(`no ${DATASET_EXTENSIONS.join(' / ')} file in ${uris.map((u) => u.fsPath).join(', ')}`);
    return inputs;
  } catch (e) {
    void vscode.window.showErrorMessage(`Prepare for EAGLE-3: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}

/** Row counts the Datasets view made of files unchanged since (a percentage of rows in the progress). */
function knownRows(file: string): number | undefined {
  const n = datasetsProvider()
    ?.datasets()
    .find((d) => d.resourceUri.fsPath === file);
  return n?.scan && fileStampOf(file) === n.scan.stamp ? n.scan.rows : undefined;
}

/** The run in the worker under a cancellable progress notification. @throws vscode.CancellationError when cancelled, or the run's error */
async function runWithProgress(
  context: vscode.ExtensionContext,
  options: PrepareOptions,
  names: string[],
  log: (line: string) => void,
): Promise<PrepareResult> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'EAGLE-3 Prep', cancellable: true }, async (progress, token) => {
    progress.report({ message: `starting (${names.length === 1 ? names[0] : plural(names.length, 'file')})…` });
    let reported = 0; // percent already reported (withProgress increments are cumulative)
    return runPrepareInWorker(context.extensionUri, options, {
      token,
      onLog: log,
      onProgress: (p) => {
        const pct = progressPercent(p);
        const increment = pct > reported ? pct - reported : 0;
        reported = Math.max(reported, pct);
        progress.report({ increment, message: progressMessage(p, knownRows(p.file)) });
      },
    });
  });
}

/** A run that was cancelled or threw: logged and said; a failure also goes to the Datasets view and Problems. */
function reportRunError(e: unknown, uris: vscode.Uri[], names: string[], output: vscode.OutputChannel): void {
  const log = (line: string): void => output.appendLine(line);
  if (e instanceof vscode.CancellationError) {
    log('Cancelled; the output folder may hold partial files.');
    void vscode.window.showInformationMessage(`EAGLE-3 Prep cancelled (${names.join(', ')}).`);
    return;
  }
  const msg = e instanceof Error ? e.message : String(e);
  log(`Error: ${msg}`);
  const paths = uris.map((u) => u.fsPath);
  for (const f of noteRunOutcome(paths, { error: msg }))
    void vscode.commands.executeCommand(COMMANDS.datasetsInvalidate, vscode.Uri.file(f)).then(undefined, () => undefined);
  void vscode.window
    .showErrorMessage(`EAGLE-3 Prep failed on ${names.join(', ')}: ${shortReason(reasonWithoutPath(msg, paths[0]))}`, 'Show details')
    .then((c) => {
      if (c) output.show(true);
    });
}

/** The finished run in the log (time, summary, failures, the files written, next steps), and its report.md opened. */
async function logRunResult(result: PrepareResult, settings: PrepareSettings, uris: vscode.Uri[], log: (line: string) => void): Promise<void> {
  log(`Done in ${(result.elapsedMs / 1000).toFixed(1)} s: ${summarizeResult(result)}.`);
  for (const f of result.failures) log(`  failure: ${f}`);
  // A failed run writes nothing (the folder keeps its previous outputs), so there is no new report to open.
  if (!result.ok) {
    log('  nothing written: the output folder keeps its previous outputs');
    return;
  }
  log(
    writtenFiles(result)
      .map((f) => `  ${f}`)
      .join('\n'),
  );
  // eagle3prep.outputFormat messages: the conversation files and whose masking applies (also in report.md).
  for (const l of conversationsLines(result)) log(`  ${l}`);
  // A run made for a trainer (eagle3prep.trainer): the command that points it at the files (also in report.md).
  for (const l of nextStepsOfRun(result)) log(l);
  const active = vscode.window.activeTextEditor?.document.uri.toString();
  await openReport(
    result.outputs.reportMd,
    settings.openReport,
    log,
    uris.some((u) => u.toString() === active),
  );
}

/** Problems and the Datasets view from this run's report, before the toast that points at them. */
async function refreshFromRun(result: PrepareResult, uris: vscode.Uri[]): Promise<void> {
  const inputUris = result.files.map((f) => vscode.Uri.file(f.file));
  const failedChanged = noteRunOutcome(
    uris.map((u) => u.fsPath),
    { result },
  );
  if (result.ok) await vscode.commands.executeCommand(COMMANDS.problemsFromReport, inputUris).then(undefined, () => undefined);
  else
    // A failed run has no report: the failed files' row problems come from a scan of their rows.
    for (const f of result.files.filter((x) => x.status === 'failed' || x.rowsDropped + x.rowsErrored > 0))
      void vscode.commands.executeCommand(COMMANDS.checkRows, vscode.Uri.file(f.file), { quiet: true }).then(undefined, () => undefined);
  for (const u of new Set([...inputUris.map((u) => u.fsPath), ...failedChanged]))
    void vscode.commands.executeCommand(COMMANDS.datasetsInvalidate, vscode.Uri.file(u)).then(undefined, () => undefined);
}

/**
 * Registers `eagle3prep.prepare` and `eagle3prep.prepareSample` (the walkthrough's "Prepare a sample":
 * copies a bundled sample into a folder — the Uri argument, else asked: the workspace's `eagle3-sample/` or a
 * folder the user picks, never unasked — and prepares it). Handler arguments: an explorer Uri plus
 * the multi-selection Uri[], an editor-menu Uri, a Uri[] (programmatic), or none (the active editor's
 * file; from the palette with no dataset open, a pick list of the workspace's datasets).
 * `executeCommand('eagle3prep.prepare', uri)` resolves with the PrepareResult (see `prepareUris`).
 */
export function registerPrepareCommand(context: vscode.ExtensionContext, output: vscode.OutputChannel): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand(COMMANDS.prepare, async (arg?: unknown, multi?: unknown) => {
      let uris = urisFromCommandArgs(arg, multi);
      if (uris.length === 0 && arg === undefined) {
        const picked = await pickDataset('Prepare for EAGLE-3');
        if (!picked) return undefined;
        uris = [picked];
      }
      return prepareUris(context, output, uris);
    }),
    vscode.commands.registerCommand(COMMANDS.prepareSample, async (target?: unknown) => {
      const name = 'chat-sharegpt-human-gpt.jsonl';
      // Never written into the workspace unasked: a folder given by the caller, else the user's choice.
      let dir = target instanceof vscode.Uri && target.scheme === 'file' ? target.fsPath : undefined;
      if (!dir) {
        const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
        const here = folder ? path.join(folder.uri.fsPath, 'eagle3-sample') : undefined;
        const choose = 'Choose a folder…';
        const choices = here ? ['Copy into the workspace', choose] : [choose];
        const pick = await vscode.window.showInformationMessage(
          `Prepare a sample copies ${name} (a small ShareGPT dataset) ${here ? `into ${here}` : 'into a folder you choose'} and writes its outputs beside it (${name.replace(/\.jsonl$/, '')}.eagle3/).`,
          { modal: true },
          ...choices,
        );
        if (!pick) return undefined;
        if (pick !== choose && here) dir = here;
        else {
          const picked = await vscode.window.showOpenDialog({
            canSelectFolders: true,
            canSelectFiles: false,
            canSelectMany: false,
            openLabel: 'Copy the sample here',
          });
          if (!picked?.[0]) return undefined;
          dir = picked[0].fsPath;
        }
      }
      const dest = path.join(dir, name);
      if (!fs.existsSync(dest)) {
        fs.mkdirSync(dir, { recursive: true });
        fs.copyFileSync(path.join(context.extensionPath, 'samples', name), dest);
      }
      const uri = vscode.Uri.file(dest);
      await vscode.window.showTextDocument(uri, { preview: true });
      return prepareUris(context, output, [uri]);
    }),
  );
}
