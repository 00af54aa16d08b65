/**
 * "Prepare all datasets in workspace" (`eagle3prep.prepareAll`): finds the dataset files of the
 * workspace (the Datasets view's include / exclude globs), offers them in a multi-select pick list
 * (files whose output is missing or stale pre-selected), then prepares each picked file into its
 * own `<input-name>.eagle3/` folder — one worker run per output folder, one after the other, under
 * one cancellable progress notification — and logs each run to the output channel.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { groupByDefaultOutDir } from '../core/run/inputs/inputs';
import { type PrepareResult } from '../core/run/contract';
import { findDatasetFiles } from './datasetDiscovery';
import { worstStatus } from '../core/run/reports/status';
import { type RunStatus } from '../core/run/contract';
import { readPrepareSettings, resolveTokenizerDir, type PrepareSettings } from './config';
import { COMMANDS } from './ids';
import { notify } from './notify';
import { outDirFor } from './paths';
import { noteRunOutcome } from './runFailures';
import { runStatusOf, summarizeResult } from './prepareModel';
import { tokenizerDisplayName } from './tokenizerFolders';
import { runPrepareInWorker } from './workerClient';
import { runOptionsOf } from '../core/run/runSettings';
import { editorOutputState } from './stalenessModel';

/** The outcome of one run of a batch. */
export interface BatchRun {
  inputs: string[];
  outDir: string;
  result?: PrepareResult;
  /** Why the run threw (tokenizer unusable, unreadable file, …). */
  error?: string;
}

/** What the command resolves with: the runs done (empty when nothing was picked), and whether it was cancelled. */
export interface BatchResult {
  runs: BatchRun[];
  cancelled: boolean;
}

interface FileItem extends vscode.QuickPickItem {
  uri: vscode.Uri;
}

/** The pick list: every found dataset with its output state; missing / stale outputs pre-picked. */
async function pickFiles(uris: vscode.Uri[]): Promise<vscode.Uri[] | undefined> {
  const items: FileItem[] = uris.map((uri) => {
    // The file's own settings, its tokenizer included (a folder may set another one): the comparison the tree makes.
    const settings = readPrepareSettings(uri);
    const o = editorOutputState(uri.fsPath, settings);
    const state = o.state === 'none' ? 'not prepared' : o.state === 'stale' ? `stale: ${o.staleBecause[0]}` : `prepared: ${o.records} records`;
    return {
      label: path.basename(uri.fsPath),
      description: vscode.workspace.asRelativePath(path.dirname(uri.fsPath) + path.sep, false),
      detail: state,
      picked: o.state !== 'prepared',
      uri,
    };
  });
  const picked = await vscode.window.showQuickPick(items, {
    canPickMany: true,
    title: `Prepare for EAGLE-3: ${uris.length} dataset${uris.length === 1 ? '' : 's'} found (tokenizer ${tokenizerDisplayName(resolveTokenizerDir())})`,
    placeHolder: 'Pick the datasets to prepare (missing or stale outputs are pre-selected)',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return picked?.map((p) => p.uri);
}

/** One run of a batch before it runs: the inputs that share an output folder, and their settings. */
interface BatchGroup {
  inputs: string[];
  outDir: string;
  settings: PrepareSettings;
}

/**
 * Runs the batch. `arg` (programmatic use): a Uri[] of the files to prepare, skipping the pick list.
 * @returns the runs (each with its PrepareResult or error), or undefined when nothing was found or picked.
 */
export async function prepareAll(context: vscode.ExtensionContext, output: vscode.OutputChannel, arg?: unknown): Promise<BatchResult | undefined> {
  const log = (l: string) => output.appendLine(l);
  const uris = await batchUris(arg);
  if (!uris || uris.length === 0) return undefined;
  // Group by output folder (d.json + d.jsonl share one), honouring eagle3prep.outputDirectory.
  const groups: BatchGroup[] = groupByDefaultOutDir(uris.map((u) => u.fsPath)).map((g) => {
    const settings = readPrepareSettings(vscode.Uri.file(g.inputs[0]));
    return { inputs: g.inputs, outDir: outDirFor(g.inputs, settings.outputDirectory), settings };
  });
  log('');
  log(
    `[${new Date().toISOString()}] Prepare all datasets: ${groups.length} run${groups.length === 1 ? '' : 's'} over ${uris.length} file${uris.length === 1 ? '' : 's'}`,
  );
  const { runs, cancelled } = await runBatch(context, groups, log);
  const outcome = batchOutcome(runs, groups.length, cancelled);
  for (const r of runs)
    for (const f of noteRunOutcome(r.inputs, r.result ? { result: r.result } : { error: r.error ?? 'the run failed' }))
      void vscode.commands.executeCommand(COMMANDS.datasetsInvalidate, vscode.Uri.file(f)).then(undefined, () => undefined);
  log(outcome.summary);
  for (const r of runs) {
    if (!r.result?.ok) continue;
    const uris = r.result.files.map((f) => vscode.Uri.file(f.file));
    await vscode.commands.executeCommand(COMMANDS.problemsFromReport, uris).then(undefined, () => undefined);
    for (const u of uris) void vscode.commands.executeCommand(COMMANDS.datasetsInvalidate, u).then(undefined, () => undefined);
  }
  showBatchOutcome(outcome, cancelled, output);
  return { runs, cancelled };
}

/** The files of the batch: the given Uri[], else the workspace's datasets as picked; undefined when none were found. */
async function batchUris(arg: unknown): Promise<vscode.Uri[] | undefined> {
  if (Array.isArray(arg)) return arg.filter((u): u is vscode.Uri => u instanceof vscode.Uri);
  const found = await findDatasetFiles();
  if (found.length === 0) {
    void vscode.window.showInformationMessage(
      'Prepare all datasets: no dataset file (.jsonl, .ndjson, .json, .traj, .parquet, .gz, .zst) found in the workspace (see the eagle3prep.datasets.include / exclude settings).',
    );
    return undefined;
  }
  return pickFiles(found);
}

/** The runs one after the other under one cancellable progress notification; a cancel stops before the next run. */
async function runBatch(context: vscode.ExtensionContext, groups: BatchGroup[], log: (l: string) => void): Promise<BatchResult> {
  const runs: BatchRun[] = [];
  let cancelled = false;
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'EAGLE-3 Prep: all datasets', cancellable: true },
    async (progress, token) => {
      for (let i = 0; i < groups.length; i++) {
        if (token.isCancellationRequested) {
          cancelled = true;
          break;
        }
        const g = groups[i];
        const name = g.inputs.map((f) => path.basename(f)).join(', ');
        progress.report({ message: `${i + 1}/${groups.length}: ${name}`, increment: i === 0 ? 0 : 100 / groups.length });
        log(`  ${name} → ${g.outDir}`);
        const run = await runGroup(context, g, token, log);
        if (run === 'cancelled') {
          cancelled = true;
          break;
        }
        runs.push(run);
      }
    },
  );
  return { runs, cancelled };
}

/** One run of the batch in the worker, logged; 'cancelled' when the user cancelled it. */
async function runGroup(
  context: vscode.ExtensionContext,
  g: BatchGroup,
  token: vscode.CancellationToken,
  log: (l: string) => void,
): Promise<BatchRun | 'cancelled'> {
  try {
    const result = await runPrepareInWorker(
      context.extensionUri,
      {
        inputs: g.inputs,
        outDir: g.outDir,
        tokenizerDir: g.settings.tokenizerDir,
        ...runOptionsOf(g.settings),
        truncate: g.settings.truncate,
        format: g.settings.format,
        ...(g.settings.trainer ? { trainer: g.settings.trainer } : {}),
      },
      { token, onLog: (l) => log(`    ${l}`) },
    );
    log(`    ${result.ok ? 'done' : 'FAILED'}: ${summarizeResult(result)}${result.failures.length ? `; ${result.failures.join('; ')}` : ''}`);
    return { inputs: g.inputs, outDir: g.outDir, result };
  } catch (e) {
    if (e instanceof vscode.CancellationError) {
      log('    cancelled');
      return 'cancelled';
    }
    const msg = e instanceof Error ? e.message : String(e);
    log(`    error: ${msg}`);
    return { inputs: g.inputs, outDir: g.outDir, error: msg };
  }
}

/** What the batch says when it ends: its summary line, the worst file status, and how many runs did not end ok. */
function batchOutcome(runs: BatchRun[], groupCount: number, cancelled: boolean): { summary: string; worst: RunStatus; failed: number } {
  const ok = runs.filter((r) => r.result?.ok).length;
  const records = runs.reduce((a, r) => a + (r.result?.totals.recordsWritten ?? 0), 0);
  const failed = runs.length - ok;
  // Per-file statuses (the CLI's words): how many files lost rows or changed.
  const statuses = runs.flatMap((r) => (r.result ? runStatusOf(r.result).files.map((f) => f.status) : ['failed' as RunStatus]));
  const count = (s: RunStatus) => statuses.filter((x) => x === s).length;
  const notOk = (['warnings', 'degraded', 'failed'] as const).filter((s) => count(s) > 0).map((s) => `${count(s)} ${s}`);
  const worst = worstStatus(statuses);
  // Which files failed, by name (a count alone sends the user looking).
  const failedNames = runs.flatMap((r) =>
    r.result ? r.result.files.filter((f) => f.status === 'failed').map((f) => path.basename(f.file)) : r.inputs.map((f) => path.basename(f)),
  );
  const failedText = failedNames.length
    ? `; failed: ${failedNames.slice(0, 5).join(', ')}${failedNames.length > 5 ? ` and ${failedNames.length - 5} more` : ''}`
    : '';
  const summary = `EAGLE-3 Prep: ${ok}/${groupCount} dataset run${groupCount === 1 ? '' : 's'} done, ${records.toLocaleString('en-US')} records${notOk.length ? ` — ${notOk.join(', ')}` : ' — all ok'}${failedText}${cancelled ? ' (cancelled)' : ''}.`;
  return { summary, worst, failed };
}

/** The batch's toast, by its worst status, with its buttons. */
function showBatchOutcome(outcome: { summary: string; worst: RunStatus; failed: number }, cancelled: boolean, output: vscode.OutputChannel): void {
  const { summary, worst, failed } = outcome;
  const severity = worst === 'failed' || failed ? 'error' : worst !== 'ok' || cancelled ? 'warning' : 'info';
  const actions = worst === 'ok' ? ['Open dashboard', 'Show log'] : ['Show problems', 'Open dashboard', 'Show log'];
  void notify(severity, summary, ...actions).then((c) => {
    if (c === 'Show log') output.show(true);
    else if (c === 'Show problems') void vscode.commands.executeCommand('workbench.actions.view.problems');
    else if (c === 'Open dashboard') void vscode.commands.executeCommand(COMMANDS.openWorkspaceDashboard);
  });
}

/** Registers `eagle3prep.prepareAll`. */
export function registerBatchCommand(context: vscode.ExtensionContext, output: vscode.OutputChannel): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.prepareAll, (arg?: unknown) => prepareAll(context, output, arg));
}
