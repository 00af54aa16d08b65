/**
 * The Datasets view's tree items: a dataset's row and its children, drawn from what
 * datasetsModel.ts says about them (state, icon, description, tooltip, child rows — plain data,
 * tested in plain node). The provider is in datasetsTree.ts.
 */
import * as vscode from 'vscode';
import type { DatasetScan } from '../core/run/editor/datasetScan';
import { COMMANDS } from './ids';
import { datasetDetails, datasetItemModel, type DatasetEntry, type DetailAction, type IconName } from './datasetsModel';

/** A dataset file of the tree. `resourceUri` lets commands such as `eagle3prep.prepare` take the node as their argument. */
export interface DatasetNode extends DatasetEntry {
  kind: 'dataset';
  resourceUri: vscode.Uri;
  scan?: DatasetScan;
}

/** A new, unscanned node for a local file. */
export function datasetNode(uri: vscode.Uri): DatasetNode {
  return { kind: 'dataset', resourceUri: uri, file: uri.fsPath, pending: false };
}

/** A child row of a dataset: a drop reason, an error count, a stale reason, or an output file. */
export interface DetailNode {
  kind: 'detail';
  parent: DatasetNode;
  item: vscode.TreeItem;
  resourceUri?: vscode.Uri;
}

const themeIcon = (icon: IconName) => new vscode.ThemeIcon(icon.id, icon.color ? new vscode.ThemeColor(icon.color) : undefined);

/** The tree item of a dataset node (datasetsModel.ts `datasetItemModel`). */
export function datasetTreeItem(n: DatasetNode, tokenizerName: string): vscode.TreeItem {
  const m = datasetItemModel(n, vscode.workspace.asRelativePath(n.resourceUri, true), tokenizerName);
  const item = new vscode.TreeItem(m.label, m.expandable ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
  item.id = n.resourceUri.toString();
  item.resourceUri = n.resourceUri;
  item.description = m.description;
  item.contextValue = m.contextValue;
  item.iconPath = themeIcon(m.icon);
  const md = new vscode.MarkdownString('', true);
  for (const p of m.tooltip)
    if ('markdown' in p) md.appendMarkdown(p.markdown);
    else md.appendText(p.text);
  item.tooltip = md;
  if (m.opensOnClick)
    item.command = { command: 'vscode.open', title: 'Open', arguments: [n.resourceUri, { preview: true } satisfies vscode.TextDocumentShowOptions] };
  return item;
}

/** The command of a child row's action. */
function commandOf(n: DatasetNode, a: DetailAction): vscode.Command {
  switch (a.kind) {
    case 'goToLine':
      return {
        command: 'vscode.open',
        title: 'Go to line',
        arguments: [n.resourceUri, { selection: new vscode.Range(a.line - 1, 0, a.line - 1, 0) } satisfies vscode.TextDocumentShowOptions],
      };
    case 'problems':
      return { command: 'workbench.actions.view.problems', title: 'Show Problems' };
    case 'dashboard':
      return { command: COMMANDS.openDashboard, title: 'Open dashboard', arguments: [n.resourceUri] };
    case 'preview':
      return { command: 'markdown.showPreview', title: 'Open report', arguments: [vscode.Uri.file(a.file)] };
    case 'open':
      return { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.file(a.file)] };
  }
}

/** Children of a prepared dataset (datasetsModel.ts `datasetDetails`) as tree items. */
export function detailNodes(n: DatasetNode): DetailNode[] {
  return datasetDetails(n).map((d) => {
    const item = new vscode.TreeItem(d.label, vscode.TreeItemCollapsibleState.None);
    item.id = `${n.resourceUri.toString()}#${d.label}`;
    item.description = d.description;
    if (d.icon) item.iconPath = themeIcon(d.icon);
    const uri = d.file ? vscode.Uri.file(d.file) : undefined;
    if (uri) item.resourceUri = uri;
    item.tooltip = d.tooltip;
    item.command = d.action && commandOf(n, d.action);
    item.contextValue = d.contextValue;
    return { kind: 'detail', parent: n, item, resourceUri: uri };
  });
}
