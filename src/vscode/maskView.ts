/**
 * The mask view: a webview panel that shows one record of one row at a time —
 * the rendered text as tokens, trainable tokens marked, turns and roles
 * labelled per record, special tokens shown as such — with row navigation, the
 * mask policy and `enable_thinking` switchable live; clicking a token reveals
 * the turn and field it came from in the JSON source. The row is rendered in
 * the render service worker (`serviceClient.ts`) within
 * {@link MASK_VIEW_BUDGET_MS}; the row's counts come from the current prepared
 * output when there is one (`exactCounts.ts`). An open view re-renders when
 * the tokenizer, mask policy, template kwargs or max length settings change.
 * The page is `dist/webview.js` (built from webview/main.ts); the messages are
 * those of maskViewProtocol.ts. The view's decisions (requests, exact counts, the token window,
 * source ranges, stepping, the command's arguments) are maskViewModel.ts, tested in plain node.
 *
 * Command `eagle3prep.openMaskView` (file Uri or its string, 1-based line; with
 * no arguments the active editor's file and cursor line). It resolves with what
 * was shown ({@link MaskViewResult}) once the webview has drawn it (or after 10 s).
 */
import * as vscode from 'vscode';
import type { RecordView, RecordViewOptions, TurnField } from '../core/records/recordViewTypes';
import { withRowCounts } from '../core/records/rowCounts';
import { exactRecordsFor } from './exactCounts';
import { lineIndexFor } from './lineIndex';
import { changedSettings, readHoverCap, readPrepareSettings } from './config';
import { baseName } from './hover';
import { COMMANDS, MASK_VIEW_TYPE } from './ids';
import { type HostMessage, isWebviewMessage, type MaskViewState, type WebviewMessage } from '../shared/maskViewProtocol';
import {
  documentLineCount,
  exactMismatch,
  initialState,
  lineArg,
  MASK_VIEW_SETTING_KEYS,
  maskViewTitle,
  nextRowLine,
  overBudgetMessage,
  postedView,
  renderRequests,
  settingsChangedNote,
  sourceRange,
  targetKind,
} from './maskViewModel';
import { ServiceBudgetError, serviceClient } from './serviceClient';
import { webviewHtml, webviewOptions } from './webviewHtml';

/** Time budget of one render of the mask view in the worker, ms. */
export const MASK_VIEW_BUDGET_MS = 30_000;

/** What `eagle3prep.openMaskView` resolves with. */
export interface MaskViewResult {
  state: MaskViewState;
  /** The row's view (records, totals, the shown record's tokens); undefined when the row could not be shown. */
  view?: RecordView;
  /** Error shown instead of a row. */
  error?: string;
  /** The webview's acknowledgement: how many tokens and trained spans it drew and the turn labels it wrote; undefined when it did not answer within 10 s. */
  drawn?: { line: number; record: number; tokens: number; labels: string[]; trainedSpans: number };
  /** The row's counts from the current output, or why there are none. */
  exact?: import('../shared/maskViewProtocol').ExactCounts;
}

/** A line of a dataset, from the open editor when there is one, else from disk through the line index. */
async function readRow(uri: vscode.Uri, line: number): Promise<{ text: string; lineCount: number; source: 'editor' | 'disk' }> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (doc) {
    const lineCount = documentLineCount(doc.lineCount, doc.lineAt(doc.lineCount - 1).text);
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
  /** The view last posted (for "reveal in source"). */
  private lastView: RecordView | undefined;
  private generation = 0;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    uri: vscode.Uri,
    line: number,
    onDispose: () => void,
  ) {
    const settings = readPrepareSettings(uri);
    this.state = initialState(uri.toString(), baseName(uri), line, settings.mask);
    this.panel = vscode.window.createWebviewPanel(
      MASK_VIEW_TYPE,
      this.title(),
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      webviewOptions(extensionUri),
    );
    this.panel.webview.html = webviewHtml(this.panel.webview, extensionUri, 'webview', 'EAGLE-3 mask view');
    this.disposables.push(
      this.panel.webview.onDidReceiveMessage((m: unknown) => this.onMessage(m)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        const uri = vscode.Uri.parse(this.state.uri);
        const changed = changedSettings(e, MASK_VIEW_SETTING_KEYS, uri);
        if (!changed.length) return;
        const change: Partial<MaskViewState> = {};
        if (this.state.maskFromSettings) change.mask = readPrepareSettings(uri).mask;
        void this.show(change, settingsChangedNote(changed));
      }),
      this.panel.onDidDispose(() => {
        for (const d of this.disposables) d.dispose();
        for (const w of this.drawnWaiters) w(undefined);
        onDispose();
      }),
    );
  }

  private title(): string {
    return maskViewTitle(this.state);
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
        for (const w of this.drawnWaiters.splice(0))
          w({ line: m.line, record: m.record, tokens: m.tokens, labels: m.labels ?? [], trainedSpans: m.trainedSpans ?? 0 });
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
        await this.show({ mask: m.mask, maskFromSettings: false, record: 0 });
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
      case 'revealToken':
        await this.revealToken(m.turn, m.field);
        break;
    }
  }

  /**
   * Opens the dataset at the row and selects what turn `turn` (and its `field`) came from in the
   * JSON line: the field's value, else the turn's object. Resolves with the selected range.
   */
  async revealToken(turn: number, field?: TurnField): Promise<vscode.Range | undefined> {
    const r = sourceRange(this.lastView, turn, field);
    const uri = vscode.Uri.parse(this.state.uri);
    const line = this.state.line - 1;
    const range = r ? new vscode.Range(line, r[0], line, r[1]) : new vscode.Range(line, 0, line, 0);
    try {
      const editor = await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.One, selection: range, preserveFocus: false });
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      return range;
    } catch (e) {
      void vscode.window.showErrorMessage(`Cannot open ${this.state.fileName}: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
  }

  /** Moves to the next / previous non-blank line (at most 10,000 lines away). */
  private async step(direction: 1 | -1): Promise<void> {
    const uri = vscode.Uri.parse(this.state.uri);
    const line = await nextRowLine(this.state.line, direction, this.state.lineCount, async (l) => (await readRow(uri, l)).text);
    if (line !== undefined) await this.show({ line, record: 0 });
  }

  /**
   * Reads the row, builds its view with the current settings and the view's own choices, and
   * posts it. Resolves with what was shown and the webview's acknowledgement.
   */
  async show(change: Partial<Pick<MaskViewState, 'line' | 'record' | 'mask' | 'maskFromSettings' | 'thinking'>>, because?: string): Promise<MaskViewResult> {
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
      const requests = renderRequests(this.state, settings, readHoverCap(uri));
      const request = (o: RecordViewOptions) =>
        serviceClient().call(
          { op: 'view', row: { text: row.text, file: uri.fsPath, line: this.state.line }, tokenizerDir: settings.tokenizerDir, options: o },
          MASK_VIEW_BUDGET_MS,
        );
      let view: RecordView;
      try {
        // The record drawn, tokenized whole; the row's counts asked as the hover asks them (rowCounts.ts),
        // so the hover and this view give the same numbers for the same row.
        const [drawn, counts] = await Promise.all([request(requests.drawn), request(requests.counts)]);
        view = withRowCounts(drawn, counts);
      } catch (e) {
        throw e instanceof ServiceBudgetError ? new Error(overBudgetMessage(e.message)) : e;
      }
      if (view.detail) this.state.record = view.detail.index;
      // Exact counts apply to what the settings produce: the view's own policy / thinking choice must match them.
      const dirty = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString())?.isDirty;
      const mismatch = exactMismatch(this.state, settings);
      const exact = mismatch ? { none: mismatch } : await exactRecordsFor(uri, this.state.line, settings, { dirty, wait: true, budgetMs: 10_000 });
      // A long record: every trained span with context around it (maskViewWindow.ts), the gaps counted.
      const { posted, shown, truncatedTokens } = postedView(view);
      if (gen !== this.generation) return { state: this.state, view, error: 'superseded' };
      this.lastView = view;
      const drawn = this.nextDrawn();
      this.post({ type: 'render', state: this.state, view: posted, shown, truncatedTokens, elapsedMs: Date.now() - t0, exact, because });
      result = { state: { ...this.state }, view, exact, drawn: await drawn };
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
  else if (typeof arg === 'string' && arg !== '') uri = targetKind(arg) === 'uri' ? vscode.Uri.parse(arg) : vscode.Uri.file(arg);
  const editor = vscode.window.activeTextEditor;
  if (!uri) {
    if (!editor) return undefined;
    return { uri: editor.document.uri, line: editor.selection.active.line + 1 };
  }
  const cursor = editor && editor.document.uri.toString() === uri.toString() ? editor.selection.active.line + 1 : undefined;
  return { uri, line: lineArg(line, cursor) };
}

/** Registers `eagle3prep.openMaskView` (and the hidden `eagle3prep.maskView.revealToken`: reveal in the source the turn / field of the open mask view's row, resolving with the selected range; `eagle3prep.maskView.showRecord`). */
export function registerMaskView(context: vscode.ExtensionContext): vscode.Disposable {
  return vscode.Disposable.from(
    vscode.commands.registerCommand(COMMANDS.openMaskView, async (arg?: unknown, line?: unknown) => {
      let a = argsOf(arg, line);
      if (!a) {
        // From the palette with no dataset editor: pick a dataset, then a line.
        const picked = await vscode.window.showOpenDialog({
          canSelectMany: false,
          title: 'Open mask view: pick a JSONL dataset',
          filters: { 'JSON Lines': ['jsonl', 'ndjson'] },
        });
        if (!picked?.[0]) return undefined;
        const n = await vscode.window.showInputBox({
          title: 'Open mask view: line',
          value: '1',
          validateInput: (v) => (/^[1-9]\d*$/.test(v) ? undefined : 'a line number (1, 2, …)'),
        });
        if (!n) return undefined;
        a = { uri: picked[0], line: Number(n) };
      }
      return openMaskView(context.extensionUri, a.uri, a.line);
    }),
    vscode.commands.registerCommand(COMMANDS.maskViewRevealToken, (turn: number, field?: TurnField) => current?.revealToken(turn, field)),
    vscode.commands.registerCommand(COMMANDS.maskViewShowRecord, (index: number) => current?.show({ record: index })),
  );
}
