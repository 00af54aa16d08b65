/**
 * The mask view: a webview panel that shows one record of one row at a time —
 * the rendered text as tokens, trainable tokens marked, turns and roles
 * labelled, special tokens shown as such — with row navigation, the mask
 * policy and `enable_thinking` switchable live. The page is `dist/webview.js`
 * (built from webview/main.ts); the messages are those of maskViewProtocol.ts.
 *
 * Command `eagle3prep.openMaskView` (file Uri or its string, 1-based line; with
 * no arguments the active editor's file and cursor line). It resolves with what
 * was shown ({@link MaskViewResult}) once the webview has drawn it (or after 10 s).
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { recordViewerFor, type RecordView } from '../core/records/recordView';
import { lineIndexFor } from './lineIndex';
import { readPrepareSettings } from './config';
import { baseName } from './hover';
import { COMMANDS, MASK_VIEW_TYPE } from './ids';
import { type HostMessage, isWebviewMessage, MAX_TOKENS_SHOWN, type MaskViewState, type WebviewMessage } from './maskViewProtocol';

/**
 * Work cap of the row totals in the mask view (characters tokenized for the records not shown);
 * the shown record is always tokenized whole. Keeps long agent trajectories (dozens of records) responsive.
 */
export const MASK_VIEW_TOTALS_CAP = 262144;

/** What `eagle3prep.openMaskView` resolves with. */
export interface MaskViewResult {
  state: MaskViewState;
  /** The row's view (records, totals, the shown record's tokens); undefined when the row could not be shown. */
  view?: RecordView;
  /** Error shown instead of a row. */
  error?: string;
  /** The webview's acknowledgement: how many tokens it drew; undefined when it did not answer within 10 s. */
  drawn?: { line: number; record: number; tokens: number };
}

/** A line of a dataset, from the open editor when there is one, else from disk through the line index. */
async function readRow(uri: vscode.Uri, line: number): Promise<{ text: string; lineCount: number; source: 'editor' | 'disk' }> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (doc) {
    let lineCount = doc.lineCount;
    if (lineCount > 1 && doc.lineAt(lineCount - 1).text === '') lineCount--;
    if (line < 1 || line > lineCount) throw new RangeError(`line ${line} is outside 1..${lineCount} of ${baseName(uri)}`);
    return { text: doc.lineAt(line - 1).text, lineCount, source: 'editor' };
  }
  if (uri.scheme !== 'file') throw new Error(`the mask view reads local files only; cannot read ${uri.toString()}`);
  const idx = await lineIndexFor(uri.fsPath);
  return { text: await idx.readLine(line), lineCount: idx.lineCount, source: 'disk' };
}

class MaskViewPanel {
  readonly panel: vscode.WebviewPanel;
  state: MaskViewState;
  private ready = false;
  private readyWaiters: (() => void)[] = [];
  private drawnWaiters: ((d: MaskViewResult['drawn']) => void)[] = [];
  private generation = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    uri: vscode.Uri,
    line: number,
    onDispose: () => void,
  ) {
    const settings = readPrepareSettings(uri);
    this.state = { uri: uri.toString(), fileName: baseName(uri), line, lineCount: 0, record: 0, mask: settings.mask, thinking: 'settings', source: 'disk' };
    this.panel = vscode.window.createWebviewPanel(
      MASK_VIEW_TYPE,
      this.title(),
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      {
        enableScripts: true,
        retainContextWhenHidden: true,
        localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist')],
      },
    );
    this.panel.webview.html = this.html();
    this.disposables.push(
      this.panel.webview.onDidReceiveMessage((m: unknown) => this.onMessage(m)),
      this.panel.onDidDispose(() => {
        for (const d of this.disposables) d.dispose();
        for (const w of this.drawnWaiters) w(undefined);
        onDispose();
      }),
    );
  }

  private title(): string {
    return `Mask: ${this.state.fileName}:${this.state.line}`;
  }

  private html(): string {
    const webview = this.panel.webview;
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.css'));
    const csp = [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src ${webview.cspSource} 'nonce-${nonce}'`,
      `font-src ${webview.cspSource}`,
      `img-src ${webview.cspSource} data:`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>EAGLE-3 mask view</title>
</head>
<body>
<div id="app" data-nonce="${nonce}"><p class="loading">Loading the mask view…</p></div>
<script type="module" nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  private post(m: HostMessage): void {
    void this.panel.webview.postMessage(m);
  }

  private waitReady(): Promise<void> {
    return this.ready ? Promise.resolve() : new Promise((r) => this.readyWaiters.push(r));
  }

  private async onMessage(raw: unknown): Promise<void> {
    if (!isWebviewMessage(raw)) return;
    const m: WebviewMessage = raw;
    switch (m.type) {
      case 'ready':
        this.ready = true;
        for (const w of this.readyWaiters.splice(0)) w();
        break;
      case 'rendered':
        for (const w of this.drawnWaiters.splice(0)) w({ line: m.line, record: m.record, tokens: m.tokens });
        break;
      case 'goToLine':
        await this.show({ line: m.line, record: 0 });
        break;
      case 'step':
        await this.step(m.direction);
        break;
      case 'record':
        await this.show({ record: m.index });
        break;
      case 'setMask':
        await this.show({ mask: m.mask, record: 0 });
        break;
      case 'setThinking':
        await this.show({ thinking: m.thinking, record: 0 });
        break;
      case 'reveal': {
        const uri = vscode.Uri.parse(this.state.uri);
        const pos = new vscode.Position(this.state.line - 1, 0);
        await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.One, selection: new vscode.Range(pos, pos) }).then(undefined, (e) => {
          void vscode.window.showErrorMessage(`Cannot open ${this.state.fileName}: ${e instanceof Error ? e.message : String(e)}`);
        });
        break;
      }
    }
  }

  /** Moves to the next / previous non-blank line (at most 10,000 lines away). */
  private async step(direction: 1 | -1): Promise<void> {
    const uri = vscode.Uri.parse(this.state.uri);
    let line = this.state.line;
    for (let n = 0; n < 10000; n++) {
      line += direction;
      if (line < 1 || (this.state.lineCount > 0 && line > this.state.lineCount)) return;
      try {
        const row = await readRow(uri, line);
        if (row.text.trim() !== '') break;
      } catch {
        return;
      }
    }
    await this.show({ line, record: 0 });
  }

  /**
   * Reads the row, builds its view with the current settings and the view's own choices, and
   * posts it. Resolves with what was shown and the webview's acknowledgement.
   */
  async show(change: Partial<Pick<MaskViewState, 'line' | 'record' | 'mask' | 'thinking'>>): Promise<MaskViewResult> {
    const gen = ++this.generation;
    this.state = { ...this.state, ...change };
    this.panel.title = this.title();
    await this.waitReady();
    if (gen !== this.generation) return { state: this.state, error: 'superseded' };
    this.post({ type: 'busy', message: `Rendering line ${this.state.line}…` });
    const uri = vscode.Uri.parse(this.state.uri);
    const t0 = Date.now();
    let result: MaskViewResult;
    try {
      const row = await readRow(uri, this.state.line);
      this.state = { ...this.state, lineCount: row.lineCount, source: row.source };
      if (row.text.trim() === '') throw new Error(`line ${this.state.line} is blank`);
      const settings = readPrepareSettings(uri);
      const kwargs = { ...settings.templateKwargs };
      if (this.state.thinking !== 'settings') kwargs.enable_thinking = this.state.thinking === 'on';
      const view = recordViewerFor(settings.tokenizerDir).view(
        { text: row.text, file: uri.fsPath, line: this.state.line },
        {
          mask: this.state.mask,
          grouping: settings.grouping,
          templateKwargs: kwargs,
          maxLength: settings.maxLength,
          long: settings.long,
          minTrainableTokens: settings.minTrainableTokens,
          detailRecord: this.state.record,
          maxTokenizedChars: MASK_VIEW_TOTALS_CAP,
        },
      );
      if (view.detail) this.state.record = view.detail.index;
      let truncatedTokens = 0;
      const posted =
        view.detail && view.detail.tokens.length > MAX_TOKENS_SHOWN
          ? { ...view, detail: { ...view.detail, tokens: view.detail.tokens.slice(0, MAX_TOKENS_SHOWN) } }
          : view;
      if (view.detail && view.detail.tokens.length > MAX_TOKENS_SHOWN) truncatedTokens = view.detail.tokens.length - MAX_TOKENS_SHOWN;
      if (gen !== this.generation) return { state: this.state, view, error: 'superseded' };
      const drawn = this.nextDrawn();
      this.post({ type: 'render', state: this.state, view: posted, truncatedTokens, elapsedMs: Date.now() - t0 });
      result = { state: { ...this.state }, view, drawn: await drawn };
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const drawn = this.nextDrawn();
      this.post({ type: 'error', state: this.state, message });
      result = { state: { ...this.state }, error: message, drawn: await drawn };
    }
    return result;
  }

  private nextDrawn(): Promise<MaskViewResult['drawn']> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 10000);
      this.drawnWaiters.push((d) => {
        clearTimeout(timer);
        resolve(d);
      });
    });
  }
}

let current: MaskViewPanel | undefined;

/**
 * Opens (or reuses) the mask view on `uri` at 1-based `line`, with the mask policy of the settings.
 * @returns what was shown, once the webview acknowledged it (see {@link MaskViewResult})
 */
export async function openMaskView(extensionUri: vscode.Uri, uri: vscode.Uri, line: number): Promise<MaskViewResult> {
  if (!current) {
    const panel = new MaskViewPanel(extensionUri, uri, line, () => {
      if (current === panel) current = undefined;
    });
    current = panel;
  } else {
    current.panel.reveal(vscode.ViewColumn.Beside, true);
    current.state = { ...current.state, uri: uri.toString(), fileName: baseName(uri) };
  }
  return current.show({ line, record: 0 });
}

/** The command's arguments: (Uri | string, line) from the tree, the hover link or tests; nothing = the active editor. */
function argsOf(arg?: unknown, line?: unknown): { uri: vscode.Uri; line: number } | undefined {
  let uri: vscode.Uri | undefined;
  if (arg instanceof vscode.Uri) uri = arg;
  else if (typeof arg === 'string' && arg !== '')
    uri = /^[a-z][a-z0-9+.-]+:/i.test(arg) && !/^[a-z]:[\\/]/i.test(arg) ? vscode.Uri.parse(arg) : vscode.Uri.file(arg);
  const editor = vscode.window.activeTextEditor;
  if (!uri) {
    if (!editor) return undefined;
    return { uri: editor.document.uri, line: editor.selection.active.line + 1 };
  }
  const n =
    typeof line === 'number' && Number.isInteger(line) && line >= 1
      ? line
      : editor && editor.document.uri.toString() === uri.toString()
        ? editor.selection.active.line + 1
        : 1;
  return { uri, line: n };
}

/** Registers `eagle3prep.openMaskView`. */
export function registerMaskView(context: vscode.ExtensionContext): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.openMaskView, async (arg?: unknown, line?: unknown) => {
    const a = argsOf(arg, line);
    if (!a) {
      void vscode.window.showWarningMessage('Open mask view: open a .jsonl dataset and put the cursor on a row.');
      return undefined;
    }
    return openMaskView(context.extensionUri, a.uri, a.line);
  });
}
