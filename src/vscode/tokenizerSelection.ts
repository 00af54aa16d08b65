/**
 * Which target-model tokenizer (and chat template) `prepare` uses from VS Code:
 * the `eagle3prep.tokenizerPath` setting, the `eagle3prep.selectTokenizer`
 * quick pick, and the status bar item naming the active tokenizer.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DATASET_FILE_RE } from '../core/read/readers';
import { affectsSettings, expandConfiguredPath, readModelFolders, readRestrictedModeNote, resolveTokenizerDir, writeTokenizerPath } from './config';
import { COMMANDS, TOKENIZER_STATUS_ITEM } from './ids';
/** Display name of the tokenizer `prepare` embeds (used when `eagle3prep.tokenizerPath` is empty). */
export const EMBEDDED_TOKENIZER_NAME = 'Qwen3';

/** What a folder holds, as far as `prepare` cares. */
export interface TokenizerFolderCheck {
  /** True when the folder has `tokenizer.json` or `tiktoken.model`, and `tokenizer_config.json`. */
  ok: boolean;
  /** The tokenizer files found (basenames). */
  files: string[];
  /** Why the folder is not usable (only when `ok` is false). */
  problem?: string;
}

/**
 * Checks whether `dir` is a local model folder `prepare` can load a tokenizer and chat template from:
 * `tokenizer.json` (Hugging Face tokenizers) or `tiktoken.model` (tiktoken, e.g. Kimi), plus
 * `tokenizer_config.json`. Follows symlinks (Hugging Face cache snapshots are symlinks to blobs).
 * Never throws; an unreadable folder gives `ok: false`.
 */
export function checkTokenizerFolder(dir: string): TokenizerFolderCheck {
  const has = (f: string): boolean => {
    try {
      return fs.statSync(path.join(dir, f)).isFile();
    } catch {
      return false;
    }
  };
  const files = ['tokenizer.json', 'tiktoken.model', 'tokenizer_config.json', 'chat_template.jinja'].filter(has);
  if (!files.includes('tokenizer.json') && !files.includes('tiktoken.model')) {
    return { ok: false, files, problem: `${dir} has neither tokenizer.json nor tiktoken.model` };
  }
  if (!files.includes('tokenizer_config.json')) {
    return { ok: false, files, problem: `${dir} has no tokenizer_config.json` };
  }
  return { ok: true, files };
}

/**
 * A short display name for a tokenizer folder: `org/name` for a Hugging Face cache snapshot
 * (`…/models--org--name/snapshots/<rev>`), else the folder's basename; the embedded default's
 * name when `dir` is undefined.
 */
export function tokenizerDisplayName(dir: string | undefined): string {
  if (!dir) return EMBEDDED_TOKENIZER_NAME;
  const parts = path.normalize(dir).split(path.sep);
  const snap = parts.lastIndexOf('snapshots');
  if (snap > 0 && parts[snap - 1].startsWith('models--')) {
    return parts[snap - 1].slice('models--'.length).split('--').join('/');
  }
  return path.basename(dir) || dir;
}

/** The Hugging Face hub cache folders to scan: `$HF_HUB_CACHE`, `$HF_HOME/hub`, `~/.cache/huggingface/hub` (existing ones, deduplicated). */
export function huggingFaceCacheDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = [
    env.HF_HUB_CACHE,
    env.HUGGINGFACE_HUB_CACHE,
    env.HF_HOME ? path.join(env.HF_HOME, 'hub') : undefined,
    path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'huggingface', 'hub'),
  ].filter((d): d is string => !!d);
  return [...new Set(dirs.map((d) => path.resolve(d)))].filter((d) => {
    try {
      return fs.statSync(d).isDirectory();
    } catch {
      return false;
    }
  });
}

/** One local model folder offered by the quick pick. */
export interface TokenizerCandidate {
  dir: string;
  name: string;
  /** Where it was found: `settings` (`eagle3prep.modelFolders`), `workspace` or `huggingface-cache`. */
  origin: 'settings' | 'workspace' | 'huggingface-cache';
  files: string[];
}

/**
 * Model folders listed in the `eagle3prep.modelFolders` setting (expanded like `tokenizerPath`):
 * each entry that is itself a model folder (see `checkTokenizerFolder`), else its subfolders that
 * are (one level down, e.g. `~/models/*`), else the snapshots of a Hugging Face cache it holds.
 * Missing or unreadable entries are skipped; never throws.
 */
export function findConfiguredTokenizers(entries?: string[]): TokenizerCandidate[] {
  const list = entries ?? readModelFolders();
  const out: TokenizerCandidate[] = [];
  const seen = new Set<string>();
  const add = (dir: string, check: TokenizerFolderCheck) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    out.push({ dir, name: tokenizerDisplayName(dir), origin: 'settings', files: check.files });
  };
  for (const entry of list) {
    const dir = expandConfiguredPath(entry);
    if (!dir) continue;
    const check = checkTokenizerFolder(dir);
    if (check.ok) {
      add(dir, check);
      continue;
    }
    let children: string[];
    try {
      children = fs.readdirSync(dir).sort();
    } catch {
      continue;
    }
    for (const c of children) {
      const sub = path.join(dir, c);
      const sc = checkTokenizerFolder(sub);
      if (sc.ok) add(sub, sc);
    }
    for (const c of findCachedTokenizers([dir, path.join(dir, 'hub')])) add(c.dir, { ok: true, files: c.files });
  }
  return out;
}

/**
 * Model folders with usable tokenizer files (see `checkTokenizerFolder`) in the Hugging Face cache
 * folders: every `models--*` / `snapshots/*` folder. Unreadable folders are skipped; never throws.
 */
export function findCachedTokenizers(cacheDirs: string[] = huggingFaceCacheDirs()): TokenizerCandidate[] {
  const out: TokenizerCandidate[] = [];
  const list = (d: string): string[] => {
    try {
      return fs.readdirSync(d);
    } catch {
      return [];
    }
  };
  for (const hub of cacheDirs) {
    for (const model of list(hub)
      .filter((m) => m.startsWith('models--'))
      .sort()) {
      const snapshots = path.join(hub, model, 'snapshots');
      const revs = list(snapshots);
      for (const rev of revs) {
        const dir = path.join(snapshots, rev);
        const check = checkTokenizerFolder(dir);
        if (!check.ok) continue;
        const name = tokenizerDisplayName(dir) + (revs.length > 1 ? `@${rev.slice(0, 7)}` : '');
        out.push({ dir, name, origin: 'huggingface-cache', files: check.files });
      }
    }
  }
  return out;
}

/**
 * Model folders with usable tokenizer files inside the open workspace folders (searched with
 * `workspace.findFiles`, skipping node_modules and .git; at most `maxResults` tokenizer files).
 */
export async function findWorkspaceTokenizers(maxResults = 200): Promise<TokenizerCandidate[]> {
  if (!vscode.workspace.workspaceFolders?.length) return [];
  const uris = await vscode.workspace.findFiles('**/{tokenizer.json,tiktoken.model}', '{**/node_modules/**,**/.git/**}', maxResults);
  const dirs = [...new Set(uris.filter((u) => u.scheme === 'file').map((u) => path.dirname(u.fsPath)))].sort();
  const out: TokenizerCandidate[] = [];
  for (const dir of dirs) {
    const check = checkTokenizerFolder(dir);
    if (check.ok) out.push({ dir, name: path.basename(dir), origin: 'workspace', files: check.files });
  }
  return out;
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
  const toItem = (c: TokenizerCandidate): PickItem => ({
    label: `${c.dir === current ? '$(check) ' : ''}${c.name}`,
    description: c.origin === 'workspace' ? 'workspace' : c.origin === 'settings' ? 'settings' : 'Hugging Face cache',
    detail: `${c.dir}  —  ${c.files.join(', ')}`,
    action: 'dir',
    dir: c.dir,
  });
  void (async () => {
    try {
      let [ws, cached] = await Promise.all([findWorkspaceTokenizers(), Promise.resolve(findCachedTokenizers())]);
      const configured = findConfiguredTokenizers();
      const items: PickItem[] = [...fixed];
      const inSettings = new Set(configured.map((c) => path.resolve(c.dir)));
      cached = cached.filter((c) => !inSettings.has(path.resolve(c.dir)));
      const inCache = new Set([...cached.map((c) => path.resolve(c.dir)), ...inSettings]);
      ws = ws.filter((c) => !inCache.has(path.resolve(c.dir)));
      if (configured.length) {
        items.push({ label: 'Settings (eagle3prep.modelFolders)', kind: vscode.QuickPickItemKind.Separator, action: 'dir' }, ...configured.map(toItem));
      }
      if (ws.length) items.push({ label: 'Workspace', kind: vscode.QuickPickItemKind.Separator, action: 'dir' }, ...ws.map(toItem));
      if (cached.length) {
        items.push({ label: 'Hugging Face cache', kind: vscode.QuickPickItemKind.Separator, action: 'dir' }, ...cached.map(toItem));
      }
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
    const name = tokenizerDisplayName(dir);
    item.text = `$(symbol-namespace) ${name}`;
    const check = dir ? checkTokenizerFolder(dir) : undefined;
    if (check && !check.ok) {
      item.text = `$(warning) ${name}`;
      item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    } else {
      item.backgroundColor = undefined;
    }
    // Restricted Mode drops the workspace's tokenizer path without a word from VS Code: said here (settings.ts restrictedModeNote).
    const restricted = readRestrictedModeNote(editor?.document.uri);
    if (restricted) item.text = `$(shield) ${name}`;
    item.tooltip = new vscode.MarkdownString(
      `**EAGLE-3 target tokenizer:** ${name}\n\n${dir ? `\`${dir}\`${check?.ok ? '' : `\n\n⚠ ${check?.problem}`}` : 'embedded default'}${restricted ? `\n\n⚠ ${restricted}` : ''}\n\nClick to change.`,
    );
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
