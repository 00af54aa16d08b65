/**
 * The dataset dashboard (`eagle3prep.openDashboard`): a webview per prepared dataset, and one for
 * the workspace, drawing what a run did — seq_len histogram, trainable tokens per record, records
 * per conversation and amplification, the trainable share, drop / error reasons, the detected
 * format and its evidence, and exact vs merged token totals when known. The figures come from the
 * view-model of `src/shared/dashboardModel.ts`, built from report.json (`readReport.ts` `readRunReport`), the
 * output's `problems.jsonl` and the length statistics of `tokenized_data.jsonl` (read in the
 * background service worker). The page is `dist/dashboard.js` (webview/dashboard.ts, Chart.js
 * bundled); the messages are those of dashboardProtocol.ts. Panels follow their report.json.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DashboardModel, DatasetDashboard } from '../shared/dashboardModel';
import { readOutputState } from '../core/run/editor/datasetScan';
import { datasetDashboardOf, workspaceDashboardOf, type StatsReader } from './dashboardData';
import { isDashboardWebviewMessage, type DashboardDrawn, type DashboardHostMessage } from '../shared/dashboardProtocol';
import { findDatasetFiles } from './datasetDiscovery';
import { datasetsProvider } from './datasetsView';
import { affectsSettings, readPrepareSettings } from './config';
import { STALENESS_SETTING_KEYS } from './settings';
import { COMMANDS, DASHBOARD_VIEW_TYPE } from './ids';
import { outDirFor } from './paths';
import { serviceClient } from './serviceClient';
import { webviewHtml, webviewOptions } from './webviewHtml';
import { editorOutputState } from './stalenessModel';

/** What `eagle3prep.openDashboard` resolves with: the model posted and the webview's acknowledgement. */
export interface DashboardResult {
  model?: DashboardModel;
  error?: string;
  /** What the webview drew; undefined when it did not answer within 15 s. */
  drawn?: DashboardDrawn;
}

/** Reads record-length statistics in the background service worker. */
const stats: StatsReader = (parts) => serviceClient().call({ op: 'stats', parts }, 10 * 60_000);

/** The model of one dataset's dashboard, from its current or stale output (dashboardData.ts). @throws Error when it has no output */
export async function datasetModel(file: string): Promise<DatasetDashboard> {
  const uri = vscode.Uri.file(file);
  const settings = readPrepareSettings(uri);
  const out = editorOutputState(file, settings);
  return datasetDashboardOf(file, out, stats);
}

/** The workspace model: every dataset of the Datasets view (or found by its globs) with an output (dashboardData.ts). */
export async function workspaceModel(): Promise<DashboardModel> {
  const provider = datasetsProvider();
  let files: string[];
  if (provider) {
    await provider.whenIdle();
    files = provider.datasets().map((n) => n.resourceUri.fsPath);
  } else files = (await findDatasetFiles()).map((u) => u.fsPath);
  return workspaceDashboardOf(files, datasetModel, stats);
}

class DashboardPanel {
  readonly panel: vscode.WebviewPanel;
  private ready = false;
  private readyWaiters: (() => void)[] = [];
  private drawnWaiters: ((d: DashboardDrawn | undefined) => void)[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private generation = 0;

  constructor(
    extensionUri: vscode.Uri,
    /** The dataset; undefined = the workspace dashboard. */
    readonly file: string | undefined,
    onDispose: () => void,
  ) {
    this.panel = vscode.window.createWebviewPanel(
      DASHBOARD_VIEW_TYPE,
      file ? `Dashboard: ${path.basename(file)}` : 'Dashboard: workspace',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      webviewOptions(extensionUri),
    );
    this.panel.webview.html = webviewHtml(this.panel.webview, extensionUri, 'dashboard', 'EAGLE-3 dataset dashboard');
    const reports = vscode.workspace.createFileSystemWatcher('**/report.json');
    let timer: NodeJS.Timeout | undefined;
    const onReport = () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => void this.refresh(), 500);
    };
    this.disposables.push(
      reports,
      reports.onDidChange(onReport),
      reports.onDidCreate(onReport),
      // A setting that decides records: the staleness shown is compared again (as the Datasets view does).
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (affectsSettings(e, ...STALENESS_SETTING_KEYS)) onReport();
      }),
      this.panel.webview.onDidReceiveMessage((m: unknown) => void this.onMessage(m)),
      this.panel.onDidDispose(() => {
        if (timer) clearTimeout(timer);
        for (const d of this.disposables) d.dispose();
        for (const w of this.drawnWaiters.splice(0)) w(undefined);
        onDispose();
      }),
    );
  }

  private post(m: DashboardHostMessage): void {
    void this.panel.webview.postMessage(m);
  }

  private async onMessage(raw: unknown): Promise<void> {
    if (!isDashboardWebviewMessage(raw)) return;
    switch (raw.type) {
      case 'ready':
        this.ready = true;
        for (const w of this.readyWaiters.splice(0)) w();
        break;
      case 'drawn':
        for (const w of this.drawnWaiters.splice(0)) w(raw.drawn);
        break;
      case 'action': {
        const file = raw.file ?? this.file;
        const uri = file ? vscode.Uri.file(file) : undefined;
        switch (raw.action) {
          case 'refresh':
            await this.refresh();
            break;
          case 'openReport':
            if (uri) await vscode.commands.executeCommand(COMMANDS.datasetsOpenReport, uri);
            break;
          case 'showProblems':
            await vscode.commands.executeCommand('workbench.actions.view.problems');
            break;
          case 'openMaskView':
            if (uri) await vscode.commands.executeCommand(COMMANDS.openMaskView, uri, 1);
            break;
          case 'prepare':
            if (uri) await vscode.commands.executeCommand(COMMANDS.prepare, uri);
            break;
          case 'openDataset':
            if (uri) await vscode.commands.executeCommand(COMMANDS.openDashboard, uri);
            break;
        }
        break;
      }
    }
  }

  private latest: Promise<DashboardResult> | undefined;

  /**
   * Rebuilds the model and posts it; resolves with the model and the webview's acknowledgement.
   * When another refresh starts meanwhile (a report.json written), resolves with that one's.
   */
  async refresh(): Promise<DashboardResult> {
    const mine = this.build();
    this.latest = mine;
    const r = await mine;
    return r.error === 'superseded' && this.latest && this.latest !== mine ? this.latest : r;
  }

  private async build(): Promise<DashboardResult> {
    const gen = ++this.generation;
    if (!this.ready) await new Promise<void>((r) => this.readyWaiters.push(r));
    this.post({ type: 'busy', message: 'Reading the output…' });
    let model: DashboardModel;
    try {
      model = this.file ? { kind: 'dataset', dataset: await datasetModel(this.file) } : await workspaceModel();
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      this.post({ type: 'error', message });
      return { error: message };
    }
    if (gen !== this.generation) return { model, error: 'superseded' };
    const drawn = new Promise<DashboardDrawn | undefined>((resolve) => {
      const t = setTimeout(() => resolve(undefined), 15_000);
      this.drawnWaiters.push((d) => {
        clearTimeout(t);
        resolve(d);
      });
    });
    this.post({ type: 'model', model });
    return { model, drawn: await drawn };
  }
}

const panels = new Map<string, DashboardPanel>();

/**
 * Opens (or reveals and refreshes) the dashboard of `file`, or of the workspace when undefined.
 * Resolves once the webview drew the model (see {@link DashboardResult}).
 */
export async function openDashboard(extensionUri: vscode.Uri, file?: string): Promise<DashboardResult> {
  const key = file ?? '';
  let p = panels.get(key);
  if (p) p.panel.reveal(undefined, false);
  else {
    const panel = new DashboardPanel(extensionUri, file, () => {
      if (panels.get(key) === panel) panels.delete(key);
    });
    panels.set(key, panel);
    p = panel;
  }
  return p.refresh();
}

/** Registers `eagle3prep.openDashboard` (`(uri | tree node)`; none = the active dataset editor's file, else the workspace) and `eagle3prep.openWorkspaceDashboard`. */
export function registerDashboard(context: vscode.ExtensionContext): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand(COMMANDS.openDashboard, (arg?: unknown) => {
      const r = (arg as { resourceUri?: unknown } | undefined)?.resourceUri;
      let uri = arg instanceof vscode.Uri ? arg : r instanceof vscode.Uri ? r : undefined;
      if (!uri && arg === undefined) {
        // From the palette: the active dataset editor's file when it has an output, else the workspace.
        const active = vscode.window.activeTextEditor?.document.uri;
        if (active?.scheme === 'file') {
          const out = readOutputState(active.fsPath, { outDir: outDirFor([active.fsPath], readPrepareSettings(active).outputDirectory) });
          if (out.state !== 'none') uri = active;
        }
      }
      return openDashboard(context.extensionUri, uri?.fsPath);
    }),
    vscode.commands.registerCommand(COMMANDS.openWorkspaceDashboard, () => openDashboard(context.extensionUri)),
  );
}
