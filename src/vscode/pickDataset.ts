/**
 * A quick pick of the workspace's dataset files, for commands run from the command palette with
 * no dataset selected or open (Prepare, Generate, Check dataset rows, Open mask view).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DATASET_FILE_RE } from '../core/read/readers';

/**
 * Asks for one dataset file of the workspace (outputs under `*.eagle3/` only when `outputs` names
 * them, e.g. `prompts_to_generate.jsonl`). Resolves with undefined when dismissed or when none exists.
 */
export async function pickDataset(title: string, opts: { outputs?: string[]; linesOnly?: boolean } = {}): Promise<vscode.Uri | undefined> {
  const exclude = '{**/node_modules/**,**/.git/**,**/.vscode/**}';
  const found = await vscode.workspace.findFiles('**/*.{jsonl,ndjson,json,traj,parquet,gz,zst}', exclude, 2000);
  const files = found
    .filter((u) => DATASET_FILE_RE.test(path.basename(u.fsPath)))
    .filter((u) => !/\.eagle3[\\/]/.test(u.fsPath) || (opts.outputs ?? []).includes(path.basename(u.fsPath)))
    .filter((u) => !opts.linesOnly || /\.(jsonl|ndjson)$/i.test(u.fsPath))
    .filter(
      (u) =>
        !/(^|[\\/])(package|package-lock|tsconfig|jsconfig|tokenizer|tokenizer_config|special_tokens_map|generation_config|settings|launch)\.json$/.test(
          u.fsPath,
        ),
    )
    .sort((a, b) => a.fsPath.localeCompare(b.fsPath));
  if (files.length === 0) {
    void vscode.window.showInformationMessage(`${title}: no dataset file (.jsonl, .ndjson, .json, .traj, .parquet, .gz, .zst) in this workspace.`);
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    files.map((uri) => ({ label: path.basename(uri.fsPath), description: vscode.workspace.asRelativePath(path.dirname(uri.fsPath) + path.sep, false), uri })),
    { title, placeHolder: 'Pick a dataset file', matchOnDescription: true },
  );
  return pick?.uri;
}
