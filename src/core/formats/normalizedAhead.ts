/**
 * Rows normalized once for both format detection and the run.
 *
 * `prepare` detects a file's format from its first rows (`detect.ts`, its first `DETECT_SAMPLE_SIZE`) by normalizing them,
 * then sends the same rows down the row path, which normalized them again (about 5 % of a run of 20 agent runs, every
 * row of which is in the sample). When the file's reading options do not change normalization
 * ({@link readingIsDefault}), detection's outcome is what the row path's own would be but for the row's source and
 * file name (the ids, `Conversation.source`), which detection does not read: so `fileJob.ts` normalizes the sample with
 * the run's own source, file name and options, gives those outcomes to detection, and hands each over here
 * ({@link handAhead}) for the row path to take instead of normalizing again ({@link normalizeOnce}). Each is taken once,
 * only by a call with the very same value object, source, file name and options; anything else normalizes.
 * A row processed in another thread (a pool worker) gets a copy of the value and normalizes it there, as before.
 */
import type { Source } from '../types';
import type { NormalizeOptions } from './base';
import { normalizeDetailed, type DetailedOutcome } from './normalize';

/** A row's outcome normalized ahead, with what it was normalized under. */
interface Ahead {
  source: Source;
  fileBase: string;
  options: NormalizeOptions;
  detailed: DetailedOutcome;
}

/** For tests only: how many outcomes {@link normalizeOnce} took from {@link handAhead} (not normalized again). */
export const NORMALIZED_AHEAD_TESTING = { taken: 0 };

/** By the row's parsed value (object identity: a copied value never matches). */
const ahead = new WeakMap<object, Ahead>();

/**
 * The source the row path gives a row of `file` (`records/rowTrace.ts` `readRow`): its 1-based line, and its element
 * index when several rows start on that line.
 */
export function rowSourceOf(row: { line: number; element?: number }, file: string): Source {
  return row.element === undefined ? { file, line: row.line } : { file, line: row.line, element: row.element };
}

/**
 * Whether reading options leave normalization as format detection's own (`detect.ts` normalizes with none): every
 * option unset. A new option is not default until it is unset, so detection never reads outcomes another option shaped.
 */
export function readingIsDefault(options: NormalizeOptions): boolean {
  for (const v of Object.values(options)) if (v !== undefined) return false;
  return true;
}

/**
 * Remembers `detailed`, the outcome of `normalizeDetailed(value, source, fileBase, options)`, for {@link normalizeOnce}.
 * Only for an object `value` (a string row, double-encoded JSON, is normalized again). The caller must not hand over a
 * value it will change before the row path reads it (a file-level pass, `oasstRun.ts`, marks its rows: not handed).
 */
export function handAhead(value: unknown, source: Source, fileBase: string, options: NormalizeOptions, detailed: DetailedOutcome): void {
  if (value !== null && typeof value === 'object') ahead.set(value, { source, fileBase, options, detailed });
}

/**
 * `normalizeDetailed(value, source, fileBase, options)` (formats/normalize.ts): the outcome handed over by
 * {@link handAhead} for this value object when it was normalized under the same source (file, line, element), file name
 * and options (the same object, or both {@link readingIsDefault}) — taken once (a second call normalizes) — else normalized now. Never throws.
 */
export function normalizeOnce(value: unknown, source: Source, fileBase: string, options: NormalizeOptions): DetailedOutcome {
  if (value !== null && typeof value === 'object') {
    const a = ahead.get(value);
    if (a) {
      ahead.delete(value);
      if (
        (a.options === options || (readingIsDefault(a.options) && readingIsDefault(options))) &&
        a.fileBase === fileBase &&
        a.source.file === source.file &&
        a.source.line === source.line &&
        a.source.element === source.element
      ) {
        NORMALIZED_AHEAD_TESTING.taken++;
        return a.detailed;
      }
    }
  }
  return normalizeDetailed(value, source, fileBase, options);
}
