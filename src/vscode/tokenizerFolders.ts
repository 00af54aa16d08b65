/**
 * The tokenizer choice's decisions, without VS Code (tokenizerSelection.ts shows them): whether a
 * folder is a model folder `prepare` can load (`tokenizer.json` or `tiktoken.model`, plus
 * `tokenizer_config.json`), a tokenizer's display name, the model folders of the settings and of
 * the Hugging Face cache, the quick pick's sections (each folder listed once) and items, and what
 * the status bar item says.
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/tokenizerFolders.test.ts).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

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
 * Model folders listed in the `eagle3prep.modelFolders` setting (`entries`, each expanded by
 * `expand` like `tokenizerPath`): each entry that is itself a model folder (see `checkTokenizerFolder`),
 * else its subfolders that are (one level down, e.g. `~/models/*`), else the snapshots of a Hugging
 * Face cache it holds. Missing or unreadable entries are skipped; never throws.
 */
export function findConfiguredTokenizers(entries: string[], expand: (entry: string) => string | undefined): TokenizerCandidate[] {
  const out: TokenizerCandidate[] = [];
  const seen = new Set<string>();
  const add = (dir: string, check: TokenizerFolderCheck) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    out.push({ dir, name: tokenizerDisplayName(dir), origin: 'settings', files: check.files });
  };
  for (const entry of entries) {
    const dir = expand(entry);
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

/** The usable model folders among `dirs` (folders holding a tokenizer file found in the workspace), sorted. */
export function workspaceTokenizers(dirs: string[]): TokenizerCandidate[] {
  const out: TokenizerCandidate[] = [];
  for (const dir of [...new Set(dirs)].sort()) {
    const check = checkTokenizerFolder(dir);
    if (check.ok) out.push({ dir, name: path.basename(dir), origin: 'workspace', files: check.files });
  }
  return out;
}

/**
 * The quick pick's sections, in order, each folder listed once: the settings' folders, then the
 * workspace's that neither lists, then the cache's the settings do not list. Empty sections are left out.
 */
export function pickSections(found: {
  configured: TokenizerCandidate[];
  workspace: TokenizerCandidate[];
  cached: TokenizerCandidate[];
}): { title: string; candidates: TokenizerCandidate[] }[] {
  const inSettings = new Set(found.configured.map((c) => path.resolve(c.dir)));
  const cached = found.cached.filter((c) => !inSettings.has(path.resolve(c.dir)));
  const inCache = new Set([...cached.map((c) => path.resolve(c.dir)), ...inSettings]);
  const ws = found.workspace.filter((c) => !inCache.has(path.resolve(c.dir)));
  return [
    { title: 'Settings (eagle3prep.modelFolders)', candidates: found.configured },
    { title: 'Workspace', candidates: ws },
    { title: 'Hugging Face cache', candidates: cached },
  ].filter((s) => s.candidates.length);
}

/** A candidate's quick pick item: its name (checked when active), where it was found, its folder and files. */
export function candidateItem(c: TokenizerCandidate, current: string | undefined): { label: string; description: string; detail: string } {
  return {
    label: `${c.dir === current ? '$(check) ' : ''}${c.name}`,
    description: c.origin === 'workspace' ? 'workspace' : c.origin === 'settings' ? 'settings' : 'Hugging Face cache',
    detail: `${c.dir}  —  ${c.files.join(', ')}`,
  };
}

/**
 * What the status bar item says for the active tokenizer folder `dir` (undefined: the embedded
 * default): a warning when the folder is not usable, a shield under Restricted Mode (`restricted`:
 * what it ignores), and a Markdown tooltip.
 */
export function tokenizerStatus(dir: string | undefined, restricted: string | undefined): { text: string; warning: boolean; tooltip: string } {
  const name = tokenizerDisplayName(dir);
  const check = dir ? checkTokenizerFolder(dir) : undefined;
  const warning = !!check && !check.ok;
  // Restricted Mode drops the workspace's tokenizer path without a word from VS Code: said here (settings.ts restrictedModeNote).
  const text = restricted ? `$(shield) ${name}` : warning ? `$(warning) ${name}` : `$(symbol-namespace) ${name}`;
  const tooltip = `**EAGLE-3 target tokenizer:** ${name}\n\n${dir ? `\`${dir}\`${check?.ok ? '' : `\n\n⚠ ${check?.problem}`}` : 'embedded default'}${restricted ? `\n\n⚠ ${restricted}` : ''}\n\nClick to change.`;
  return { text, warning, tooltip };
}
