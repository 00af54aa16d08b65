/**
 * A row as `prepare` reads it when its file is read whole (an OpenAssistant flat export, an agent CLI event log:
 * `oasstRun.ts` `filePassFor`), for the editor's row views (the hover, the mask view): such a file's line is a
 * message, and what it becomes depends on the other lines (its tree, its parent chain). The file is read and
 * planned as `prepare` plans it (the first {@link DETECT_SAMPLE_SIZE} rows decide the format, `eagle3prep.jsonc`
 * applied to every row), once per file state (size and modification time, and the eagle3prep.jsonc that applies).
 *
 * Pure Node (no `vscode`).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../../formats/detect';
import { configuredRows, rowConfigFor, type RowConfig } from '../../formats/rowSource';
import type { RecordViewer } from '../../records/recordViewer';
import type { FileRow, RecordView, RecordViewOptions, RowInput } from '../../records/recordViewTypes';
import { rowKey } from '../prepare/batches';
import { filePassFor } from '../inputs/oasstRun';
import { fileStamp } from '../../read/fileStamp';

/** The planned rows of a file read whole (row key `line` or `line[element]` → its reading); undefined for a file read row by row. */
type FilePlan = Map<string, FileRow> | undefined;

const plans = new Map<string, { stamp: string; plan: Promise<FilePlan> }>();

/**
 * How `prepare` reads row `line` (1-based; `element`: its index among the rows of that line) of `file` when the file
 * is read whole: `{ kind: 'row', value }` (the conversation row its tree or chain made of it, or the row as it is,
 * `eagle3prep.jsonc` already applied), `{ kind: 'part', leaves }` (a message inside the conversations of other rows:
 * its fate follows theirs). Undefined when the file is read row by row (every other format), or the row is not planned.
 * @throws Error naming the file when it cannot be read; the abort reason.
 */
export async function fileRowOf(file: string, line: number, element?: number, signal?: AbortSignal): Promise<FileRow | undefined> {
  return (await filePlanOf(file, signal))?.get(rowKey({ line, element }));
}

/**
 * Every planned row of a file read whole (row key, `line` or `line[element]` as `batches.ts` `rowKey` → its reading,
 * see {@link fileRowOf}); undefined for a file read row by row. Planned once per file state: the file's stamp
 * (read/fileStamp.ts: change and modification times, size, inode), and what its `eagle3prep.jsonc` (or mapping entry) says (an edited config re-plans the file).
 * @throws Error naming the file when it cannot be read; ProjectConfigError for an invalid config; the abort reason.
 */
export async function filePlanOf(file: string, signal?: AbortSignal): Promise<ReadonlyMap<string, FileRow> | undefined> {
  const abs = resolve(file);
  const st = statSync(abs, { throwIfNoEntry: false });
  if (!st) return undefined;
  const config = rowConfigFor(abs);
  // The config's part of the state: how rows are rewritten (`key`) and the reading choices of the file-level passes.
  const stamp = `${fileStamp(st)}:${config.key}:${JSON.stringify(config.project?.reading ?? null)}`;
  let hit = plans.get(abs);
  if (hit?.stamp !== stamp) {
    hit = { stamp, plan: planFile(abs, config, signal) };
    plans.set(abs, hit);
    hit.plan.catch(() => plans.delete(abs));
    while (plans.size > 4) plans.delete(plans.keys().next().value!);
  }
  return hit.plan;
}

/** Reads a file as prepare's file-level pass does and plans every row (undefined when no pass reads the file). */
async function planFile(file: string, config: RowConfig, signal?: AbortSignal): Promise<FilePlan> {
  const rows = configuredRows(file, config, { signal });
  const head: { line: number; element?: number; value?: unknown; error?: string }[] = [];
  let it = await rows.next();
  while (!it.done && head.length < DETECT_SAMPLE_SIZE) {
    head.push(it.value);
    it = await rows.next();
  }
  const det = detectFormat(head.filter((r) => r.error === undefined).map((r) => r.value));
  const pass = filePassFor(det.format, config.project);
  if (!pass) {
    await rows.return(undefined);
    return undefined;
  }
  const keys: string[] = [];
  const hold = (r: { line: number; element?: number; value?: unknown; error?: string }) => {
    const i = keys.length;
    keys.push(rowKey(r));
    if (r.error === undefined) pass.add(i, r.value, r.line);
  };
  for (const r of head) hold(r);
  for (; !it.done; it = await rows.next()) hold(it.value);
  const out = new Map<string, FileRow>();
  const planned = pass.plan();
  for (const [i, p] of planned) {
    if (p.kind === 'part') {
      const leaves = p.leaves.map((l) => {
        const leaf = planned.get(l);
        const [line, element] = keys[l].split(/[[\]]/);
        return { line: Number(line), ...(element ? { element: Number(element) } : {}), value: leaf && leaf.kind !== 'part' ? leaf.value : undefined };
      });
      out.set(keys[i], { kind: 'part', format: det.format, partReason: pass.partReason, leaves });
    } else out.set(keys[i], { kind: 'row', format: det.format, value: p.value });
  }
  return out;
}

/**
 * The view of one row of a dataset file as `prepare` reads it: a row of a file read whole gets its planned reading
 * ({@link fileRowOf}), every other row is viewed as it is. The editor's one row path (the hover and the mask view, in
 * the render service worker). A file that cannot be read whole is viewed line by line (the line's own verdict).
 * @throws what `RecordViewer.view` throws
 */
export async function viewRow(viewer: RecordViewer, row: RowInput, options: RecordViewOptions = {}): Promise<RecordView> {
  const fileRow = row.fileRow ?? (await fileRowOf(row.file, row.line, options.element).catch(() => undefined));
  return viewer.view(fileRow ? { ...row, fileRow } : row, options);
}
