/**
 * `prepare`'s first look at every input before any file is processed (issue 25, "fail early"): a file that cannot be
 * read, or whose first rows hold nothing recognizable, is known after its first rows, so the run fails (or, with
 * `--skip-failed-files`, skips it) before the other files' work is spent. Reads only the first rows of each file;
 * nothing is tokenized.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../../formats/detect';
import { traceRow } from '../../records/rowTrace';
import { configuredRows, rowConfigFor, type RowConfig } from '../../formats/rowSource';
import type { RawRow } from '../../read/readers';

/** Rows of each file the first look reads: the rows `prepare` detects the format from (its first batch of decisions). */
export const PREFLIGHT_ROWS = DETECT_SAMPLE_SIZE;

/** What the first look found wrong with one file. */
export interface PreflightFailure {
  /** `unreadable`: stat, eagle3prep.jsonc or the reader failed; `nothing_recognized`: no row of the first rows has a shape the reader knows. */
  kind: 'unreadable' | 'nothing_recognized';
  /**
   * The run failure, starting with the file's path, in the words the full pass uses: `F: cannot read: …`, or
   * `F: no record written and no prompt set aside (N rows read: …; …)` (the run appends `inspect`'s explanation).
   */
  message: string;
}

/** Options of {@link preflightFile}. */
export interface PreflightOptions {
  /** A field-mapping file (as `PrepareOptions.mapping`). */
  mapping?: string;
  /** When set (`--allow-empty`, shard runs), a file with nothing recognizable is not a failure: only unreadable files are. */
  allowEmpty?: boolean;
  signal?: AbortSignal;
  /** Rows to read (default {@link PREFLIGHT_ROWS}). */
  rows?: number;
}

/**
 * Reads the first rows of `file` (absolute path) as `prepare` reads them (eagle3prep.jsonc and the field mapping
 * applied) and says why the file would fail the run, or undefined when it may be used. A file fails when it cannot be
 * read (missing, a folder, damaged compression in its first rows, a bad eagle3prep.jsonc) or, unless
 * `allowEmpty`, when none of its first rows has a recognizable shape (an empty file, lines that are not JSON, rows of
 * an unknown shape). A file whose first rows hold one recognizable row (even one later dropped) passes; the full pass
 * judges it. Never throws, except the signal's reason when aborted.
 */
export async function preflightFile(file: string, opts: PreflightOptions = {}): Promise<PreflightFailure | undefined> {
  const limit = opts.rows ?? PREFLIGHT_ROWS;
  const unreadable = (e: unknown): PreflightFailure => {
    const first = ((e as Error)?.message ?? String(e)).split('\n')[0].replace(`cannot read ${file}: `, '');
    return { kind: 'unreadable', message: `${file}: cannot read: ${first}` };
  };
  let config: RowConfig;
  try {
    statSync(file);
    config = rowConfigFor(file, { mapping: opts.mapping });
  } catch (e) {
    return unreadable(e);
  }
  const options = config.reading;
  const fileBase = basename(file);
  let read = 0;
  let invalid = 0;
  let unrecognized = 0;
  let recognized = 0;
  const sample: unknown[] = [];
  const rows = configuredRows(file, config, { signal: opts.signal });
  try {
    for (;;) {
      let it: IteratorResult<RawRow>;
      try {
        it = await rows.next();
      } catch (e) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        return unreadable(e);
      }
      if (it.done) break;
      const row = it.value;
      read++;
      if (row.error !== undefined) invalid++;
      else {
        sample.push(row.value);
        // prepare's row path, stopped after reading the row (records/rowTrace.ts): a shape read it, or none.
        if (traceRow(row, file, fileBase, options, {}, { until: 'conversations' }).detailed?.handler) recognized++;
        else unrecognized++;
      }
      if (read >= limit || recognized > 0) break;
    }
  } finally {
    await rows.return(undefined);
  }
  if (recognized > 0 || opts.allowEmpty) return undefined;
  // An OpenAssistant flat export: its rows are messages, read as trees over the whole file.
  // So is an agent CLI event log: its lines are events joined by parent chain over the whole file.
  if (sample.length && ['oasst-messages', 'event-log'].includes(detectFormat(sample).format)) return undefined;
  const why = [...(invalid ? [`${invalid} invalid_json`] : []), ...(unrecognized ? [`${unrecognized} unrecognized_shape`] : [])];
  const scope = read >= limit ? `its first ${read} rows read` : `${read} rows read`;
  return {
    kind: 'nothing_recognized',
    message: `${file}: no record written and no prompt set aside (${scope}${why.length ? ': ' + why.join(', ') : ''}; found before any file was processed)`,
  };
}

/** The run failure naming the inputs not processed because the first look failed the run (`PrepareResult.notProcessed`). */
export function notProcessedFailure(files: readonly string[]): string {
  return (
    `${files.length} other file(s) not processed: the first rows of each input are checked before any file is processed, ` +
    `and the file(s) above fail the run (${files.map((f) => basename(f)).join(', ')})`
  );
}
