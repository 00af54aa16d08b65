/**
 * Which files of the workspace are datasets: the `eagle3prep.datasets.include` / `.exclude` globs
 * and the dataset names (`datasetKind`). Used by the Datasets view, Problems, the dashboard and the
 * batch command.
 */
import * as vscode from 'vscode';
import { datasetKind } from '../core/run/editor/datasetScan';
import { readDatasetDiscovery } from './config';
import { expandBraces, joinGlobs } from './globs';

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
