/**
 * Which target-model tokenizer (and chat template) `prepare` uses from VS Code:
 * the `eagle3prep.tokenizerPath` setting, the `eagle3prep.selectTokenizer`
 * quick pick, and the status bar item naming the active tokenizer. What a folder holds, the
 * candidates, the pick's sections and the status bar's words are tokenizerFolders.ts (pure, tested
 * in plain node).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DATASET_FILE_RE } from '../core/read/readers';
import { affectsSettings, expandConfiguredPath, readModelFolders, readRestrictedModeNote, resolveTokenizerDir, writeTokenizerPath } from './config';
import { COMMANDS, TOKENIZER_STATUS_ITEM } from './ids';
import {
  candidateItem,
  checkTokenizerFolder,
  EMBEDDED_TOKENIZER_NAME,
  findCachedTokenizers,
  findConfiguredTokenizers,
  pickSections,
  tokenizerDisplayName,
  tokenizerStatus,
  workspaceTokenizers,
  type TokenizerCandidate,
} from './tokenizerFolders';

/**
 * Model folders with usable tokenizer files inside the open workspace folders (searched with
 * `workspace.findFiles`, skipping node_modules and .git; at most `maxResults` tokenizer files).
 */
export async function findWorkspaceTokenizers(maxResults = 200): Promise<TokenizerCandidate[]> {
  if (!vscode.workspace.workspaceFolders?.length) return [];
  const uris = await vscode.workspace.findFiles('**/{tokenizer.json,tiktoken.model}', '{**/node_modules/**,**/.git/**}', maxResults);
  return workspaceTokenizers(uris.filter((u) => u.scheme === 'file').map((u) => path.dirname(u.fsPath)));
}

interface PickItem extends vscode.QuickPickItem {
  action: 'default' | 'browse' | 'dir';
  dir?: string;
}

/**
 * The `eagle3prep.selectTokenizer` command: a quick pick of the embedded default, "Browse…", and the
 * model folders listed in `eagle3prep.modelFolders`, found in the workspace, and in the Hugging Face cache; stores the choice in
 * `eagle3prep.tokenizerPath`. Resolves with the chosen folder (`''` for the embedded default) or
 * undefined when dismissed. A browsed folder without tokenizer files is refused with an error message.
 */
export async function selectTokenizer(): Promise<string | undefined> {
  const current = resolveTokenizerDir();
  const qp = vscode.window.createQuickPick<PickItem>();
  qp.title = 'Select target model tokenizer';
  qp.placeholder = `Active: ${tokenizerDisplayName(current)}${current ? ` (${current})` : ' (embedded default)'}`;
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.busy = true;
  const fixed: PickItem[] = [
    { label: '$(folder-opened) Browse…', description: 'a local model folder with tokenizer.json or tiktoken.model', action: 'browse' },
    {
      label: `$(package) Use embedded default (${EMBEDDED_TOKENIZER_NAME})`,
      description: current ? '' : 'active',
      action: 'default',
    },
  ];
  qp.items = fixed;
  qp.show();
  const toItem = (c: TokenizerCandidate): PickItem => ({ ...candidateItem(c, current), action: 'dir', dir: c.dir });
  void (async () => {
    try {
      const [workspace, cached] = await Promise.all([findWorkspaceTokenizers(), Promise.resolve(findCachedTokenizers())]);
      const configured = findConfiguredTokenizers(readModelFolders(), (e) => expandConfiguredPath(e));
      const items: PickItem[] = [...fixed];
      for (const section of pickSections({ configured, workspace, cached }))
        items.push({ label: section.title, kind: vscode.QuickPickItemKind.Separator, action: 'dir' }, ...section.candidates.map(toItem));
      qp.items = items;
    } finally {
      qp.busy = false;
    }
  })();
  const picked = await new Promise<PickItem | undefined>((resolve) => {
    qp.onDidAccept(() => resolve(qp.selectedItems[0]));
    qp.onDidHide(() => resolve(undefined));
  });
  qp.dispose();
  if (!picked) return undefined;
  if (picked.action === 'default') {
    await writeTokenizerPath('');
    return '';
  }
  let dir = picked.dir;
  if (picked.action === 'browse') {
    const chosen = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: 'Use this tokenizer',
      title: 'Folder with tokenizer.json (or tiktoken.model) and tokenizer_config.json',
      defaultUri: current ? vscode.Uri.file(current) : vscode.workspace.workspaceFolders?.[0]?.uri,
    });
    dir = chosen?.[0]?.fsPath;
    if (!dir) return undefined;
    const check = checkTokenizerFolder(dir);
    if (!check.ok) {
      void vscode.window.showErrorMessage(`Not a usable tokenizer folder: ${check.problem}.`);
      return undefined;
    }
  }
  if (!dir) return undefined;
  await writeTokenizerPath(dir);
  return dir;
}

/**
 * Creates the status bar item naming the active tokenizer (click = `eagle3prep.selectTokenizer`).
 * It is shown while a dataset file (`read/readers` `DATASET_FILE_RE`) is visible in an editor or a tokenizer is configured,
 * and follows setting changes. Returns disposables to push onto `context.subscriptions`.
 */
export function createTokenizerStatusBar(): vscode.Disposable[] {
  const item = vscode.window.createStatusBarItem(TOKENIZER_STATUS_ITEM, vscode.StatusBarAlignment.Right, 100);
  item.name = 'EAGLE-3 Prep tokenizer';
  item.command = COMMANDS.selectTokenizer;
  const update = (): void => {
    const editor = vscode.window.activeTextEditor;
    const dir = resolveTokenizerDir(editor?.document.uri);
    const status = tokenizerStatus(dir, readRestrictedModeNote(editor?.document.uri));
    item.text = status.text;
    item.backgroundColor = status.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    item.tooltip = new vscode.MarkdownString(status.tooltip);
    const datasetOpen = vscode.window.visibleTextEditors.some((e) => DATASET_FILE_RE.test(e.document.uri.path));
    if (datasetOpen || dir) item.show();
    else item.hide();
  };
  update();
  return [
    item,
    vscode.window.onDidChangeActiveTextEditor(update),
    vscode.window.onDidChangeVisibleTextEditors(update),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsSettings(e, 'tokenizerPath', 'outputDirectory', 'templateKwargs')) update();
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(update),
  ];
}

/** Registers `eagle3prep.selectTokenizer` and the status bar item. Returns their disposables. */
export function registerTokenizerSelection(): vscode.Disposable[] {
  return [vscode.commands.registerCommand(COMMANDS.selectTokenizer, selectTokenizer), ...createTokenizerStatusBar()];
}
