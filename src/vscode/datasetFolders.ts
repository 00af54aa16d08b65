/**
 * The Datasets view's folders: the dataset files grouped into the folders that hold them, as the
 * Explorer shows them — folders first, then files, each by name; a folder holding nothing but one
 * subfolder is shown with it as one row (`data/agent`, VS Code's "compact folders"); with several
 * workspace folders, each is a top-level folder. And a folder's one-line summary of its files' states.
 *
 * Pure: no `vscode` import (unit-tested in plain node).
 */
import * as path from 'node:path';
import type { DatasetItemState } from './ids';

/** A folder of the tree: its label (compacted path segments), its absolute path, subfolders and files. */
export interface DatasetFolder<T> {
  /** What the row shows: the folder's name, or `a/b` for compacted folders. */
  label: string;
  /** Absolute path of the (deepest, when compacted) folder. */
  dir: string;
  folders: DatasetFolder<T>[];
  files: T[];
}

/** A workspace folder: its name (the top-level label when there are several) and absolute path. */
export interface FolderRoot {
  name: string;
  dir: string;
}

/**
 * Groups `items` (dataset files, by `pathOf`: an absolute path) into folders under `roots`. Returns
 * the top level: with one root, its subfolders and its own files (the root itself is not a row); with
 * several, one folder per root that holds a file. A file under no root goes under a top-level folder
 * of its own directory (labelled with that path). Folders come before files; both sort by name.
 */
export function datasetFolderTree<T>(items: readonly T[], pathOf: (t: T) => string, roots: readonly FolderRoot[]): { folders: DatasetFolder<T>[]; files: T[] } {
  const top: DatasetFolder<T> = { label: '', dir: '', folders: [], files: [] };
  const sorted = [...roots].sort((a, b) => b.dir.length - a.dir.length); // the innermost root wins
  const child = (parent: DatasetFolder<T>, label: string, dir: string): DatasetFolder<T> => {
    let f = parent.folders.find((x) => x.dir === dir);
    if (!f) {
      f = { label, dir, folders: [], files: [] };
      parent.folders.push(f);
    }
    return f;
  };
  for (const item of items) {
    const file = path.resolve(pathOf(item));
    const root = sorted.find((r) => isInside(file, r.dir));
    let at: DatasetFolder<T>;
    let base: string;
    if (!root) {
      base = path.dirname(file);
      at = child(top, base, base);
    } else {
      base = path.resolve(root.dir);
      at = roots.length > 1 ? child(top, root.name, base) : top;
    }
    const segments = path.relative(base, path.dirname(file)).split(path.sep).filter(Boolean);
    let dir = base;
    for (const s of segments) {
      dir = path.join(dir, s);
      at = child(at, s, dir);
    }
    at.files.push(item);
  }
  const byName = (a: string, b: string) => a.localeCompare(b, undefined, { sensitivity: 'base', numeric: true }) || a.localeCompare(b);
  const finish = (f: DatasetFolder<T>, compact: boolean, compactChildren = true): DatasetFolder<T> => {
    // A folder with no file of its own and exactly one subfolder is shown as one row with it.
    while (compact && f.files.length === 0 && f.folders.length === 1) {
      const only = f.folders[0];
      f = { label: `${f.label}/${only.label}`, dir: only.dir, folders: only.folders, files: only.files };
    }
    f.folders = f.folders.map((x) => finish(x, compactChildren)).sort((a, b) => byName(a.label, b.label));
    f.files = [...f.files].sort((a, b) => byName(path.basename(pathOf(a)), path.basename(pathOf(b))));
    return f;
  };
  // Workspace folders (the top level when there are several) keep their own name, never compacted.
  const done = finish(top, false, roots.length <= 1);
  return { folders: done.folders, files: done.files };
}

/** Every file of a folder and its subfolders. */
export function folderFiles<T>(f: DatasetFolder<T>): T[] {
  return [...f.files, ...f.folders.flatMap(folderFiles)];
}

/** The state of a file as a folder counts it. */
export interface FileStateForSummary {
  state: DatasetItemState;
  /** The last run's status word (ok, warnings, degraded, failed), when prepared. */
  status?: string;
}

/**
 * A folder's one-line description from its files' states (its subfolders' included), e.g.
 * `5 datasets · 3 prepared (1 with warnings, 1 degraded) · 1 stale · 1 failed`; `2 datasets · not prepared`; while
 * files are being read, `… · 2 being read`. The counts are those of the files' own rows.
 */
export function folderSummary(files: readonly FileStateForSummary[]): string {
  const n = files.length;
  const count = (s: DatasetItemState) => files.filter((f) => f.state === s).length;
  const parts = [`${n.toLocaleString('en-US')} dataset${n === 1 ? '' : 's'}`];
  const prepared = files.filter((f) => f.state === 'prepared');
  const bad = ['warnings', 'degraded'].map((w) => [w, prepared.filter((f) => f.status === w).length] as const).filter(([, k]) => k > 0);
  if (prepared.length)
    parts.push(`${prepared.length} prepared${bad.length ? ` (${bad.map(([w, k]) => `${k} ${w === 'warnings' ? 'with warnings' : w}`).join(', ')})` : ''}`);
  if (count('stale')) parts.push(`${count('stale')} stale`);
  if (count('failed')) parts.push(`${count('failed')} failed`);
  if (count('error')) parts.push(`${count('error')} unreadable`);
  if (count('pending')) parts.push(`${count('pending')} being read`);
  const none = count('none');
  if (none === n) parts.push('not prepared');
  else if (none) parts.push(`${none} not prepared`);
  return parts.join(' · ');
}

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(path.resolve(dir), file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}
