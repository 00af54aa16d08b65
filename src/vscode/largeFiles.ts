/**
 * Files over 50 MB: VS Code opens them in an editor but does not hand them to extensions (no
 * `TextDocument`, so no hover and no cursor position). While such a dataset is the active tab, a
 * status bar item says so and offers the mask view on a line — read from disk through the line
 * index (`lineIndex.ts`), like the mask view does for any file that is not open.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DATASET_FILE_RE } from '../core/read/readers';
import { COMMANDS, LARGE_FILE_STATUS_ITEM } from './ids';

/** The size above which VS Code does not sync a file to extensions (bytes). */
export const SYNC_LIMIT_BYTES = 50 * 1024 * 1024;

/** The active tab's file when it is a local dataset too large for VS Code to sync to extensions. */
export function activeLargeDataset(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  const uri = input instanceof vscode.TabInputText ? input.uri : undefined;
  if (!uri || uri.scheme !== 'file' || !DATASET_FILE_RE.test(path.basename(uri.fsPath))) return undefined;
  if (vscode.workspace.textDocuments.some((d) => d.uri.toString() === uri.toString())) return undefined; // synced: the hover works
  const size = fs.statSync(uri.fsPath, { throwIfNoEntry: false })?.size ?? 0;
  return size > SYNC_LIMIT_BYTES ? uri : undefined;
}

/** Registers the status bar hint and `eagle3prep.openMaskViewAtLine` (ask for a line, then open the mask view on it: `(uri?)`, default the active tab's file). */
export function registerLargeFiles(): vscode.Disposable[] {
  const item = vscode.window.createStatusBarItem(LARGE_FILE_STATUS_ITEM, vscode.StatusBarAlignment.Right, 101);
  item.name = 'EAGLE-3 Prep large file';
  item.text = '$(eye) Mask view on a line…';
  item.command = COMMANDS.openMaskViewAtLine;
  const update = () => {
    const uri = activeLargeDataset();
    if (!uri) return item.hide();
    const mb = ((fs.statSync(uri.fsPath, { throwIfNoEntry: false })?.size ?? 0) / 1024 ** 2).toFixed(0);
    item.tooltip = new vscode.MarkdownString(
      `**${path.basename(uri.fsPath)}** is ${mb} MB: VS Code does not pass files over 50 MB to extensions, so there is no EAGLE-3 hover here.\n\nClick to open the **mask view** on a line (read from disk).`,
    );
    item.show();
  };
  update();
  return [
    item,
    vscode.window.tabGroups.onDidChangeTabs(update),
    vscode.window.tabGroups.onDidChangeTabGroups(update),
    vscode.window.onDidChangeActiveTextEditor(update),
    vscode.commands.registerCommand(COMMANDS.openMaskViewAtLine, async (arg?: unknown) => {
      const uri = arg instanceof vscode.Uri ? arg : (activeLargeDataset() ?? vscode.window.activeTextEditor?.document.uri);
      if (!uri) return undefined;
      const n = await vscode.window.showInputBox({
        title: `Mask view: line of ${path.basename(uri.fsPath)}`,
        prompt: 'The row on this line is read from disk (files over 50 MB are not passed to extensions, so there is no hover).',
        value: '1',
        validateInput: (v) => (/^[1-9]\d*$/.test(v.trim()) ? undefined : 'a line number (1, 2, …)'),
      });
      if (!n) return undefined;
      return vscode.commands.executeCommand(COMMANDS.openMaskView, uri, Number(n.trim()));
    }),
  ];
}
