/**
 * Where a dataset file's outputs are. A file prepared on its own has them in its own output folder
 * (`<name>.eagle3/`, {@link defaultOutDir}); a file prepared as part of a folder has them in the
 * folder's run (`<folder>.eagle3/`, one report.json listing every file). The editor's views look
 * for both, so a folder run from the Explorer is seen by the Datasets view, the dashboard,
 * Problems and the hover alike (docs/vscode.md, "Datasets view, Problems and batch runs").
 *
 * Reads report.json files only (cached by path and file stamp, read/fileStamp.ts); never throws.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { defaultOutDir } from '../inputs/inputs';
import { OUTPUT_FILES } from '../outputFiles';
import { readRunReport } from '../reports/readReport';
import { fileStamp } from '../../read/fileStamp';

/** How many folders above a file are looked at for a folder run. */
const MAX_ANCESTORS = 8;

const covered = new Map<string, { stamp: string; mtimeMs: number; files: Set<string> }>();

/** The absolute input paths a report.json lists, or undefined when it is missing or unreadable (cached). */
function filesOfReport(reportJson: string): { files: Set<string>; mtimeMs: number } | undefined {
  const st = fs.statSync(reportJson, { throwIfNoEntry: false });
  if (!st?.isFile()) return undefined;
  const hit = covered.get(reportJson);
  const stamp = fileStamp(st);
  if (hit && hit.stamp === stamp) return hit;
  try {
    const files = new Set(readRunReport(reportJson).report.files.map((f) => path.resolve(f.file)));
    const entry = { stamp, mtimeMs: st.mtimeMs, files };
    covered.set(reportJson, entry);
    return entry;
  } catch {
    return undefined;
  }
}

/**
 * The output folders that may hold a run of `file`, most specific first: its own output folder
 * (`preferred`, else {@link defaultOutDir}), then the output folder of each enclosing folder's run
 * (`<folder>.eagle3/` beside the folder, and, when `preferred` is in a configured output
 * directory, the same name there), up to {@link MAX_ANCESTORS} levels.
 */
export function outDirCandidates(file: string, preferred?: string): string[] {
  const abs = path.resolve(file);
  const own = preferred ? path.resolve(preferred) : defaultOutDir(abs);
  const configured = preferred && path.resolve(preferred) !== defaultOutDir(abs) ? path.dirname(own) : undefined;
  const out = [own];
  let dir = path.dirname(abs);
  for (let i = 0; i < MAX_ANCESTORS && path.dirname(dir) !== dir; i++, dir = path.dirname(dir)) {
    const folderRun = defaultOutDir(dir);
    out.push(folderRun);
    if (configured) out.push(path.join(configured, path.basename(folderRun)));
  }
  return [...new Set(out)];
}

/**
 * The output folder of the newest run that lists `file` among its inputs, looked for in
 * {@link outDirCandidates}; `preferred` (else the file's own output folder) when no run lists it.
 *
 * @param file a dataset file (any path; resolved).
 * @param preferred the folder the editor's settings would write the file's own run to.
 */
export function locateOutDir(file: string, preferred?: string): string {
  const abs = path.resolve(file);
  const candidates = outDirCandidates(abs, preferred);
  let best: { dir: string; mtimeMs: number } | undefined;
  for (const dir of candidates) {
    const r = filesOfReport(path.join(dir, OUTPUT_FILES.reportJson));
    if (r?.files.has(abs) && (!best || r.mtimeMs > best.mtimeMs)) best = { dir, mtimeMs: r.mtimeMs };
  }
  return best?.dir ?? candidates[0];
}
