/**
 * Path handling of the settings and commands: `~` / `${userHome}` / `${workspaceFolder}` expansion
 * of configured paths, and the output folder a run writes to.
 *
 * Pure: no `vscode` import (unit-tested in plain node); config.ts supplies the workspace folder.
 */
import * as os from 'node:os';
import * as path from 'node:path';
import { defaultOutDir } from '../core/run/inputs/inputs';

/** What a configured path is expanded against. */
export interface PathContext {
  /** The home folder (`~`, `${userHome}`); default `os.homedir()`. */
  home?: string;
  /** The workspace folder's path (`${workspaceFolder}`, and the base of a relative path); undefined = none open. */
  workspaceFolder?: string;
}

/**
 * Expands `~` (at the start), `${userHome}` and `${workspaceFolder}` in a configured path and resolves
 * a relative path against the workspace folder (or the home folder when none is open); the result
 * is normalized. Returns undefined for an empty / whitespace-only value.
 */
export function expandPath(value: string | undefined, ctx: PathContext = {}): string | undefined {
  const raw = (value ?? '').trim();
  if (!raw) return undefined;
  const home = ctx.home ?? os.homedir();
  let p = raw
    .replace(/^~(?=$|[\\/])/, home)
    .replace(/\$\{userHome\}/g, home)
    .replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder ?? '');
  if (!path.isAbsolute(p)) p = path.resolve(ctx.workspaceFolder ?? home, p);
  return path.normalize(p);
}

/**
 * The output folder of a run over `inputPaths`: `defaultOutDir(first input)` (`<input-name>.eagle3/`
 * beside it), or the same folder name inside `outputDirectory` when that setting is set.
 */
export function outDirFor(inputPaths: string[], outputDirectory?: string): string {
  const def = defaultOutDir(inputPaths[0]);
  return outputDirectory ? path.join(outputDirectory, path.basename(def)) : def;
}
