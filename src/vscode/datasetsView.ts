/**
 * The Datasets view's registration: the tree view over `DatasetsTreeProvider` (datasetsTree.ts),
 * its badge (datasets with a stale output) and Restricted Mode message, and its item commands.
 */
import * as vscode from 'vscode';
import { affectsSettings, readRestrictedModeNote } from './config';
import { DatasetsTreeProvider } from './datasetsTree';
import { plural } from './datasetsModel';
import { COMMANDS, DATASETS_VIEW } from './ids';

let currentProvider: DatasetsTreeProvider | undefined;

/** The Datasets view's provider (its dataset nodes and scans), once registered. */
export function datasetsProvider(): DatasetsTreeProvider | undefined {
  return currentProvider;
}

function nodeUri(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) return arg;
  const r = (arg as { resourceUri?: unknown } | undefined)?.resourceUri;
  if (r instanceof vscode.Uri) return r;
  return vscode.window.activeTextEditor?.document.uri;
}

/**
 * Registers the Datasets view and its item commands: `eagle3prep.datasets.refresh`,
 * `.openMaskView` (→ `eagle3prep.openMaskView(uri, 1)`), `.openReport`, `.revealOutput`, and the
 * hidden `eagle3prep.datasets.state` (resolves with {@link DatasetStateSummary}[] once every file is
 * scanned; for tests and scripts). Preparing uses `eagle3prep.prepare`, which accepts tree nodes.
 */
export function registerDatasetsTree(): vscode.Disposable[] {
  const provider = new DatasetsTreeProvider();
  const view = vscode.window.createTreeView(DATASETS_VIEW, { treeDataProvider: provider, showCollapseAll: true, canSelectMany: true });
  const updateBadge = () => {
    const stale = provider.staleCount();
    view.badge = stale ? { value: stale, tooltip: `${plural(stale, 'dataset')} with stale output` } : undefined;
  };
  provider.onScanned = updateBadge;
  // Restricted Mode ignores the workspace's tokenizer (and output folder, template kwargs): the view says so on top.
  const updateMessage = () => (view.message = readRestrictedModeNote());
  updateMessage();
  currentProvider = provider;
  provider.setActive(view.visible);
  const outputState = (arg: unknown) => {
    const u = nodeUri(arg);
    const n = u && provider.datasets().find((d) => d.resourceUri.fsPath === u.fsPath);
    return { uri: u, output: n?.scan?.output };
  };
  return [
    provider,
    view,
    view.onDidChangeVisibility((e) => provider.setActive(e.visible)),
    vscode.workspace.onDidGrantWorkspaceTrust(updateMessage),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsSettings(e, 'tokenizerPath', 'outputDirectory', 'templateKwargs')) updateMessage();
    }),
    vscode.commands.registerCommand(COMMANDS.datasetsRefresh, () => provider.rediscover()),
    vscode.commands.registerCommand(COMMANDS.datasetsState, () => provider.state()),
    vscode.commands.registerCommand(COMMANDS.datasetsInvalidate, async (u: vscode.Uri) => {
      // Before the view discovered its files there is nothing to re-read (discovery reads everything).
      if (!provider.isDiscovered()) return;
      provider.invalidate(u, true);
      await provider.whenIdle();
    }),
    vscode.commands.registerCommand(COMMANDS.datasetsOpenMaskView, (arg?: unknown) => {
      const u = nodeUri(arg);
      if (u) return vscode.commands.executeCommand(COMMANDS.openMaskView, u, 1);
      return undefined;
    }),
    vscode.commands.registerCommand(COMMANDS.datasetsOpenReport, async (arg?: unknown) => {
      const { output } = outputState(arg);
      if (!output?.reportMd) return void vscode.window.showInformationMessage('This dataset has no report yet: prepare it first.');
      await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(output.reportMd));
    }),
    vscode.commands.registerCommand(COMMANDS.datasetsRevealOutput, async (arg?: unknown) => {
      const { output } = outputState(arg);
      if (!output || output.state === 'none') return void vscode.window.showInformationMessage('This dataset has no output yet: prepare it first.');
      const target = output.outputs?.find((f) => f.exists)?.path ?? output.outDir;
      await vscode.commands.executeCommand('revealInExplorer', vscode.Uri.file(target));
    }),
  ];
}
