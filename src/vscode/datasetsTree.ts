/**
 * The "Datasets" view (own activity bar container "EAGLE-3 Prep"): every dataset file of the
 * workspace (`eagle3prep.datasets.include` / `.exclude` globs) in a tree of the folders that hold
 * them (`datasetFolders.ts`: compacted like the Explorer's, each folder row summarizing its files),
 * with its detected format, streamed row count and the state of its prepared output (none / N
 * records / stale, and why); children are the last report's per-reason drop counts and the output files. Item actions: prepare, open in the
 * mask view, open report, reveal output.
 *
 * Responsiveness: discovery is one `findFiles` per include glob; each file is scanned
 * (`core/run/editor/datasetScan.ts`) at most {@link SCAN_CONCURRENCY} at a time, only while the view is
 * visible, and only once per (size, mtime): a FileSystemWatcher invalidates single files, a changed
 * report.json re-reads only the output state of the datasets that write there, and a tokenizer
 * change re-compares hashes without re-reading any dataset.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { datasetKind, scanDataset, tokenizerFilesHash } from '../core/run/editor/datasetScan';
import type { RunStatus } from '../core/run/contract';
import { datasetDetails, datasetTreeItem, describe, nodeIcon, nodeState, plural, type DatasetNode, type DetailNode } from './datasetItems';
import { datasetFolderTree, folderFiles, folderSummary, type DatasetFolder } from './datasetFolders';
import { configAppliesTo, PROJECT_CONFIG_NAME } from '../core/read/projectConfig';
import { affectsSettings, readDatasetDiscovery, readPrepareSettings, readRestrictedModeNote, resolveTokenizerDir } from './config';
import { STALENESS_SETTING_KEYS } from './settings';
import { expandBraces, joinGlobs } from './globs';
import { COMMANDS, DATASETS_DISCOVERED_CONTEXT, DATASETS_VIEW, FOLDER_CONTEXT, type DatasetItemState } from './ids';
import { outDirFor } from './paths';
import { tokenizerDisplayName } from './tokenizerSelection';
import { resolveRunSettings } from '../core/run/runSettings';

/** Files scanned at once (streams are I/O bound; the byte loop yields between 1 MiB chunks). */
export const SCAN_CONCURRENCY = 4;

/** Whether `uri` matches an `eagle3prep.datasets.exclude` glob (output folders, configuration JSON files, …). */
export function isExcludedDataset(uri: vscode.Uri): boolean {
  const exclude = readDatasetDiscovery().exclude.flatMap(expandBraces);
  // languages.match scores a glob DocumentFilter against the Uri alone.
  return exclude.some((g) => vscode.languages.match({ pattern: g }, { uri, languageId: '' } as unknown as vscode.TextDocument) > 0);
}

/**
 * The dataset files of the workspace: local files matching an `eagle3prep.datasets.include` glob and
 * no `eagle3prep.datasets.exclude` glob, whose name is a dataset's (`datasetKind`), sorted by path;
 * at most `eagle3prep.datasets.maxFiles`.
 */
export async function findDatasetFiles(token?: vscode.CancellationToken): Promise<vscode.Uri[]> {
  const { include, exclude, maxFiles: max } = readDatasetDiscovery();
  const excludeGlob = joinGlobs(exclude);
  const found = new Map<string, vscode.Uri>();
  for (const inc of include) {
    for (const u of await vscode.workspace.findFiles(inc, excludeGlob, max, token)) {
      if (u.scheme === 'file' && datasetKind(u.fsPath)) found.set(u.fsPath, u);
    }
  }
  return [...found.values()].sort((a, b) => a.fsPath.localeCompare(b.fsPath)).slice(0, max);
}

export type { DatasetNode, DetailNode };

/** A folder row of the Datasets view (datasetFolders.ts): the files under it and its subfolders. */
export interface FolderNode {
  kind: 'folder';
  folder: DatasetFolder<DatasetNode>;
  /** The folder, so that "Prepare for EAGLE-3" on the row prepares it as one folder run. */
  resourceUri: vscode.Uri;
}
export type DatasetsTreeNode = FolderNode | DatasetNode | DetailNode;

/** What `eagle3prep.datasets.state` returns per dataset (for tests and scripts). */
export interface DatasetStateSummary {
  file: string;
  format?: string;
  rows?: number;
  state: DatasetItemState;
  /** The last run's status for the file (`core/run/reports/status.ts`), when prepared. */
  status?: RunStatus;
  /** The icon drawn: codicon id and theme colour. */
  icon: { id: string; color?: string };
  records?: number;
  staleBecause: string[];
  description: string;
  children: string[];
  error?: string;
  /** The folder row that holds the file (its label path from the top, and its summary); absent at the top. */
  folder?: { label: string; description: string };
}

/** Tree data provider of the Datasets view; see the module comment. */
export class DatasetsTreeProvider implements vscode.TreeDataProvider<DatasetsTreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<DatasetsTreeNode | DatasetsTreeNode[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private nodes = new Map<string, DatasetNode>();
  /** Folder rows by path (kept across rebuilds, so VS Code keeps their expansion) and each row's parent folder. */
  private folderNodes = new Map<string, FolderNode>();
  private parents = new Map<FolderNode | DatasetNode, FolderNode>();
  private discovered = false;
  private discovering: Promise<void> | undefined;
  private queue: DatasetNode[] = [];
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  private pendingFire = new Set<DatasetNode>();
  private fireTimer: NodeJS.Timeout | undefined;
  private tokenizerName = '';
  private readonly disposables: vscode.Disposable[] = [];
  private watchers: vscode.Disposable[] = [];
  /** Whether scans may run (the view is visible, or a caller asked for the state). */
  active = false;
  /** Called after each completed scan (the view's badge). */
  onScanned?: () => void;

  constructor() {
    this.disposables.push(
      this.changed,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsSettings(e, 'datasets')) void this.rediscover();
        // Every setting that decides records (settings.ts): the outputs' staleness is compared again.
        else if (affectsSettings(e, ...STALENESS_SETTING_KEYS)) this.refreshOutputs();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.rediscover()),
    );
    this.createWatchers();
  }

  private createWatchers(): void {
    for (const w of this.watchers) w.dispose();
    this.watchers = [];
    for (const inc of readDatasetDiscovery().include) {
      const w = vscode.workspace.createFileSystemWatcher(inc);
      this.watchers.push(
        w,
        w.onDidCreate((u) => this.fileCreated(u)),
        w.onDidChange((u) => this.invalidate(u)),
        w.onDidDelete((u) => this.fileDeleted(u)),
      );
    }
    // A run's report.json: re-read the output state of the datasets whose output folder it is in.
    const reports = vscode.workspace.createFileSystemWatcher('**/report.json');
    const onReport = (u: vscode.Uri) => {
      const dir = path.dirname(u.fsPath);
      for (const n of this.nodes.values()) if (n.scan?.output.outDir === dir) this.enqueue(n);
    };
    // eagle3prep.jsonc changes how rows are read: re-detect the datasets it applies to (its folder and below, where
    // no nearer one wins); whether their outputs are stale is read/appliedConfig.ts's per-file comparison.
    const configs = vscode.workspace.createFileSystemWatcher(`**/${PROJECT_CONFIG_NAME}`);
    const onConfig = (u: vscode.Uri) => {
      for (const n of this.nodes.values()) {
        if (configAppliesTo(u.fsPath, n.resourceUri.fsPath)) {
          if (n.scan) n.scan = { ...n.scan, mtimeMs: -1 }; // force a full re-read
          this.enqueue(n);
        }
      }
    };
    this.watchers.push(
      reports,
      reports.onDidCreate(onReport),
      reports.onDidChange(onReport),
      reports.onDidDelete(onReport),
      configs,
      configs.onDidCreate(onConfig),
      configs.onDidChange(onConfig),
      configs.onDidDelete(onConfig),
    );
  }

  private isIncluded(u: vscode.Uri): boolean {
    return u.scheme === 'file' && !!datasetKind(u.fsPath) && !isExcludedDataset(u);
  }

  private fileCreated(u: vscode.Uri): void {
    if (!this.discovered || this.nodes.has(u.fsPath) || !this.isIncluded(u)) return;
    const n: DatasetNode = { kind: 'dataset', resourceUri: u, pending: false };
    this.nodes.set(u.fsPath, n);
    this.enqueue(n);
    this.changed.fire(undefined);
  }

  private fileDeleted(u: vscode.Uri): void {
    if (this.nodes.delete(u.fsPath)) this.changed.fire(undefined);
    for (const n of this.nodes.values()) if (n.scan?.output.outDir && u.fsPath.startsWith(n.scan.output.outDir)) this.enqueue(n);
  }

  /** Re-scans one file (its format and row count only when its size or mtime changed, or `full`). */
  invalidate(u: vscode.Uri, full = false): void {
    const n = this.nodes.get(u.fsPath);
    if (!n) return;
    if (full && n.scan) n.scan = { ...n.scan, mtimeMs: -1 };
    this.enqueue(n);
  }

  /** Re-reads every dataset's output state (tokenizer or output folder setting changed); no dataset is re-read. */
  refreshOutputs(): void {
    this.updateTokenizer();
    for (const n of this.nodes.values()) if (n.scan) this.enqueue(n);
  }

  /** Forgets everything and discovers the files again (the view's Refresh button). */
  async rediscover(): Promise<void> {
    this.discovered = false;
    this.discovering = undefined;
    this.createWatchers();
    await this.discover();
  }

  /** The files hash of a tokenizer folder (cached by the files' stamps in `tokenizerFilesHash`); undefined when it cannot be read. */
  private tokenizerHashOf(dir: string | undefined): string | undefined {
    try {
      return tokenizerFilesHash(dir);
    } catch {
      return undefined;
    }
  }

  private updateTokenizer(): void {
    this.tokenizerName = tokenizerDisplayName(resolveTokenizerDir());
  }

  private discover(): Promise<void> {
    this.discovering ??= (async () => {
      this.updateTokenizer();
      const uris = await findDatasetFiles();
      const old = this.nodes;
      this.nodes = new Map();
      for (const u of uris) {
        const n: DatasetNode = old.get(u.fsPath) ?? { kind: 'dataset', resourceUri: u, pending: false };
        this.nodes.set(u.fsPath, n);
        this.enqueue(n);
      }
      this.discovered = true;
      this.changed.fire(undefined);
      // The welcome "no dataset file found" is shown only from now on (before: "Looking for dataset files…").
      void vscode.commands.executeCommand('setContext', DATASETS_DISCOVERED_CONTEXT, true);
    })();
    return this.discovering;
  }

  private enqueue(n: DatasetNode): void {
    if (n.pending) return;
    n.pending = true;
    this.queue.push(n);
    this.pump();
  }

  /** Starts queued scans while fewer than SCAN_CONCURRENCY run and the view is active. */
  private pump(): void {
    while (this.active && this.running < SCAN_CONCURRENCY && this.queue.length) {
      const n = this.queue.shift()!;
      if (!this.nodes.has(n.resourceUri.fsPath)) {
        n.pending = false;
        continue;
      }
      this.running++;
      void this.scanNode(n).finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0 && this.queue.length === 0) {
          for (const w of this.idleWaiters.splice(0)) w();
        }
      });
    }
    if (this.running === 0 && this.queue.length === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private async scanNode(n: DatasetNode): Promise<void> {
    try {
      const settings = readPrepareSettings(n.resourceUri);
      n.scan = await scanDataset(n.resourceUri.fsPath, {
        previous: n.scan,
        outDir: outDirFor([n.resourceUri.fsPath], settings.outputDirectory),
        // The dataset's own tokenizer (a workspace folder may set another one), as the dashboard, Problems and the hover compare it.
        tokenizerHash: this.tokenizerHashOf(settings.tokenizerDir),
        settings: resolveRunSettings(settings),
      });
    } catch (e) {
      n.scan = undefined;
      console.error(`eagle3-prep: scanning ${n.resourceUri.fsPath} failed: ${(e as Error).message}`);
    } finally {
      n.pending = false;
      this.pendingFire.add(n);
      this.fireTimer ??= setTimeout(() => {
        this.fireTimer = undefined;
        const batch = new Set<DatasetsTreeNode>(this.pendingFire);
        this.pendingFire.clear();
        // The folders above a re-read file summarize it: they are redrawn with it.
        for (const n of [...batch]) for (let f = this.parents.get(n as DatasetNode); f; f = this.parents.get(f)) batch.add(f);
        this.changed.fire(batch.size > 200 ? undefined : [...batch]);
      }, 100);
      this.onScanned?.();
    }
  }

  /** Resolves when discovery is done and no scan is queued or running (activates scanning). */
  async whenIdle(): Promise<void> {
    this.active = true;
    await this.discover();
    if (this.running === 0 && this.queue.length === 0) return;
    await new Promise<void>((r) => {
      this.idleWaiters.push(r);
      this.pump();
    });
  }

  /** Lets scans run (view visible) or pauses starting new ones (view hidden). */
  setActive(active: boolean): void {
    this.active = active;
    if (active) void this.discover().then(() => this.pump());
  }

  /** Whether the files were discovered (the view was shown or its state asked for). */
  isDiscovered(): boolean {
    return this.discovered;
  }

  /** Dataset nodes, in path order. */
  datasets(): DatasetNode[] {
    return [...this.nodes.values()];
  }

  /** Count of datasets whose output is stale. */
  staleCount(): number {
    return this.datasets().filter((n) => n.scan?.output.state === 'stale').length;
  }

  async getChildren(element?: DatasetsTreeNode): Promise<DatasetsTreeNode[]> {
    if (!element) {
      if (!this.discovered) await this.discover();
      const top = this.buildFolders();
      return [...top.folders.map((f) => this.folderNode(f)), ...top.files];
    }
    if (element.kind === 'folder') return [...element.folder.folders.map((f) => this.folderNode(f)), ...element.folder.files];
    if (element.kind === 'dataset') return this.details(element);
    return [];
  }

  /** Groups the datasets by folder (datasetFolders.ts) and records each row's parent folder. */
  private buildFolders(): { folders: DatasetFolder<DatasetNode>[]; files: DatasetNode[] } {
    const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => ({ name: f.name, dir: f.uri.fsPath }));
    const top = datasetFolderTree(this.datasets(), (n) => n.resourceUri.fsPath, roots);
    this.parents.clear();
    const seen = new Set<string>();
    const walk = (f: DatasetFolder<DatasetNode>, parent: FolderNode | undefined) => {
      const node = this.folderNode(f);
      seen.add(f.dir);
      if (parent) this.parents.set(node, parent);
      for (const d of f.files) this.parents.set(d, node);
      for (const sub of f.folders) walk(sub, node);
    };
    for (const f of top.folders) walk(f, undefined);
    for (const k of [...this.folderNodes.keys()]) if (!seen.has(k)) this.folderNodes.delete(k);
    return top;
  }

  /** The row of a folder: the same object for the same path (its content updated). */
  private folderNode(f: DatasetFolder<DatasetNode>): FolderNode {
    const have = this.folderNodes.get(f.dir);
    if (have) {
      have.folder = f;
      return have;
    }
    const n: FolderNode = { kind: 'folder', folder: f, resourceUri: vscode.Uri.file(f.dir) };
    this.folderNodes.set(f.dir, n);
    return n;
  }

  /** A folder row's description: the summary of every file under it (datasetFolders.ts `folderSummary`). */
  private folderDescription(f: DatasetFolder<DatasetNode>): string {
    return folderSummary(folderFiles(f).map((n) => ({ state: nodeState(n), status: n.scan?.output.status })));
  }

  getParent(element: DatasetsTreeNode): DatasetsTreeNode | undefined {
    if (element.kind === 'detail') return element.parent;
    return this.parents.get(element);
  }

  /** One-line description of a dataset (datasetItems.ts `describe`). */
  describe(n: DatasetNode): string {
    return describe(n);
  }

  getTreeItem(element: DatasetsTreeNode): vscode.TreeItem {
    if (element.kind === 'folder') {
      const f = element.folder;
      const item = new vscode.TreeItem(f.label, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `eagle3prep.folder:${element.resourceUri.toString()}`;
      item.resourceUri = element.resourceUri;
      item.iconPath = vscode.ThemeIcon.Folder;
      item.description = this.folderDescription(f);
      item.tooltip = `${f.dir}\n${item.description}`;
      item.contextValue = FOLDER_CONTEXT;
      return item;
    }
    return element.kind === 'detail' ? element.item : datasetTreeItem(element, this.tokenizerName);
  }

  /** Children of a prepared dataset (datasetItems.ts `datasetDetails`). */
  details(n: DatasetNode): DetailNode[] {
    return datasetDetails(n);
  }

  /** Summaries of every dataset after discovery and all scans (activates scanning). */
  async state(): Promise<DatasetStateSummary[]> {
    await this.whenIdle();
    this.buildFolders();
    const folderOf = (n: DatasetNode): DatasetStateSummary['folder'] => {
      const chain: FolderNode[] = [];
      for (let f = this.parents.get(n); f; f = this.parents.get(f)) chain.unshift(f);
      if (!chain.length) return undefined;
      return { label: chain.map((f) => f.folder.label).join('/'), description: this.folderDescription(chain[chain.length - 1].folder) };
    };
    return this.datasets().map((n) => ({
      folder: folderOf(n),
      file: n.resourceUri.fsPath,
      format: n.scan?.format,
      rows: n.scan?.rows,
      state: n.scan ? nodeState(n) : 'pending',
      status: n.scan?.output.status,
      icon: nodeIcon(n),
      records: n.scan?.output.records,
      staleBecause: n.scan?.output.staleBecause ?? [],
      description: this.describe(n),
      children: this.details(n).map((d) => `${d.item.label}${d.item.description ? ` (${d.item.description})` : ''}`),
      error: n.scan?.error,
    }));
  }

  dispose(): void {
    if (this.fireTimer) clearTimeout(this.fireTimer);
    for (const d of [...this.disposables, ...this.watchers]) d.dispose();
  }
}

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
