/**
 * The "Datasets" view (own activity bar container "EAGLE-3 Prep"): every dataset file of the
 * workspace (`eagle3prep.datasets.include` / `.exclude` globs) in a tree of the folders that hold
 * them (`datasetFolders.ts`: compacted like the Explorer's, each folder row summarizing its files),
 * with its detected format, streamed row count and the state of its prepared output (none / N
 * records / stale, and why); children are the last report's per-reason drop counts and the output files. The view, its badge
 * and its item actions (prepare, open in the mask view, open report, reveal output) are registered in
 * datasetsView.ts; which files are datasets is datasetDiscovery.ts.
 *
 * Responsiveness: discovery is one `findFiles` per include glob; each file is scanned
 * (`core/run/editor/datasetScan.ts`) at most `SCAN_CONCURRENCY` at a time (scanQueue.ts), only while the view is
 * visible, and only once per file stamp (core/read/fileStamp.ts): a FileSystemWatcher invalidates single files, a changed
 * report.json re-reads only the output state of the datasets that write there, and a tokenizer
 * change re-compares hashes without re-reading any dataset.
 *
 * What a row says (state, icon, description, tooltip, children, the state summary) is datasetsModel.ts,
 * tested in plain node; this file discovers, watches, queues scans and hands VS Code the rows.
 */
import * as vscode from 'vscode';
import { datasetKind, scanDataset } from '../core/run/editor/datasetScan';
import { datasetNode, datasetTreeItem, detailNodes, type DatasetNode, type DetailNode } from './datasetItems';
import { datasetFolderTree, type DatasetFolder } from './datasetFolders';
import { datasetStateSummary, describe, folderDescription, outputsAffectedBy, readWithConfig, type DatasetStateSummary } from './datasetsModel';
import { findDatasetFiles, isExcludedDataset } from './datasetDiscovery';
import { PROJECT_CONFIG_NAME } from '../core/read/projectConfig';
import { affectsSettings, readDatasetDiscovery, readPrepareSettings, resolveTokenizerDir } from './config';
import { STALENESS_SETTING_KEYS } from './settings';
import { DATASETS_DISCOVERED_CONTEXT, FOLDER_CONTEXT } from './ids';
import { ScanQueue } from './scanQueue';
import { tokenizerDisplayName } from './tokenizerFolders';
import { outputStateOptions } from './stalenessModel';

export type { DatasetNode, DetailNode };

/** A folder row of the Datasets view (datasetFolders.ts): the files under it and its subfolders. */
export interface FolderNode {
  kind: 'folder';
  folder: DatasetFolder<DatasetNode>;
  /** The folder, so that "Prepare for EAGLE-3" on the row prepares it as one folder run. */
  resourceUri: vscode.Uri;
}
export type DatasetsTreeNode = FolderNode | DatasetNode | DetailNode;

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
  /** At most SCAN_CONCURRENCY scans at once, only while active (scanQueue.ts). */
  private readonly scans = new ScanQueue<DatasetNode>(
    (n) => this.scanNode(n),
    (n) => this.nodes.has(n.resourceUri.fsPath),
    (n) => this.scanned(n),
  );
  private pendingFire = new Set<DatasetNode>();
  private fireTimer: NodeJS.Timeout | undefined;
  private tokenizerName = '';
  private readonly disposables: vscode.Disposable[] = [];
  private watchers: vscode.Disposable[] = [];
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
      for (const n of outputsAffectedBy(this.nodes.values(), u.fsPath, 'report')) this.enqueue(n);
    };
    // eagle3prep.jsonc changes how rows are read: re-detect the datasets it applies to (its folder and below, where
    // no nearer one wins); whether their outputs are stale is read/appliedConfig.ts's per-file comparison.
    const configs = vscode.workspace.createFileSystemWatcher(`**/${PROJECT_CONFIG_NAME}`);
    const onConfig = (u: vscode.Uri) => {
      for (const n of readWithConfig(this.nodes.values(), u.fsPath)) {
        if (n.scan) n.scan = { ...n.scan, stamp: '' }; // force a full re-read
        this.enqueue(n);
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
    const n = datasetNode(u);
    this.nodes.set(u.fsPath, n);
    this.enqueue(n);
    this.changed.fire(undefined);
  }

  private fileDeleted(u: vscode.Uri): void {
    if (this.nodes.delete(u.fsPath)) this.changed.fire(undefined);
    for (const n of outputsAffectedBy(this.nodes.values(), u.fsPath, 'deleted')) this.enqueue(n);
  }

  /** Re-scans one file (its format and row count only when its file stamp changed, or `full`). */
  invalidate(u: vscode.Uri, full = false): void {
    const n = this.nodes.get(u.fsPath);
    if (!n) return;
    if (full && n.scan) n.scan = { ...n.scan, stamp: '' };
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
        const n = old.get(u.fsPath) ?? datasetNode(u);
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
    this.scans.enqueue(n);
  }

  /** Scans one dataset (never rejects: a failure leaves it unscanned, logged). */
  private async scanNode(n: DatasetNode): Promise<void> {
    try {
      const settings = readPrepareSettings(n.resourceUri);
      // The dataset's own settings and tokenizer (a workspace folder may set another one), as the dashboard, Problems and the hover compare them.
      n.scan = await scanDataset(n.resourceUri.fsPath, { previous: n.scan, ...outputStateOptions(n.resourceUri.fsPath, settings) });
    } catch (e) {
      n.scan = undefined;
      console.error(`eagle3-prep: scanning ${n.resourceUri.fsPath} failed: ${(e as Error).message}`);
    }
  }

  /** After a scan: redraws the node (batched over 100 ms) with the folders above it, and updates the badge. */
  private scanned(n: DatasetNode): void {
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

  /** Resolves when discovery is done and no scan is queued or running (activates scanning). */
  async whenIdle(): Promise<void> {
    this.scans.active = true;
    await this.discover();
    await this.scans.whenIdle();
  }

  /** Lets scans run (view visible) or pauses starting new ones (view hidden). */
  setActive(active: boolean): void {
    this.scans.active = active;
    if (active) void this.discover().then(() => this.scans.pump());
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

  getParent(element: DatasetsTreeNode): DatasetsTreeNode | undefined {
    if (element.kind === 'detail') return element.parent;
    return this.parents.get(element);
  }

  /** One-line description of a dataset (datasetsModel.ts `describe`). */
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
      item.description = folderDescription(f);
      item.tooltip = `${f.dir}\n${item.description}`;
      item.contextValue = FOLDER_CONTEXT;
      return item;
    }
    return element.kind === 'detail' ? element.item : datasetTreeItem(element, this.tokenizerName);
  }

  /** Children of a prepared dataset (datasetsModel.ts `datasetDetails`). */
  details(n: DatasetNode): DetailNode[] {
    return detailNodes(n);
  }

  /** Summaries of every dataset after discovery and all scans (activates scanning; datasetsModel.ts `datasetStateSummary`). */
  async state(): Promise<DatasetStateSummary[]> {
    await this.whenIdle();
    this.buildFolders();
    const foldersAbove = (n: DatasetNode): DatasetFolder<DatasetNode>[] => {
      const chain: DatasetFolder<DatasetNode>[] = [];
      for (let f = this.parents.get(n); f; f = this.parents.get(f)) chain.unshift(f.folder);
      return chain;
    };
    return this.datasets().map((n) => datasetStateSummary(n, foldersAbove(n)));
  }

  dispose(): void {
    if (this.fireTimer) clearTimeout(this.fireTimer);
    for (const d of [...this.disposables, ...this.watchers]) d.dispose();
  }
}
