/**
 * The one stamp of a file's state for every cache keyed by a file (no bytes read): the tokenizer caches, the project
 * config, a file's plan and applied-config text hits, report.json's file list, the output index, the Datasets view's
 * scan, the editor's line index and failure memory.
 */
import { readFileSync, statSync } from 'node:fs';

/** The fields of `fs.Stats` a {@link fileStamp} reads. */
export interface StampedStat {
  ctimeMs: number;
  mtimeMs: number;
  size: number;
  ino: number;
}

/**
 * A cheap stamp of one file for caching: its change time, modification time (ms), size in bytes and inode. The
 * change time is in it because the modification time can be set back (rsync --inplace, a restore, `touch -r`)
 * after other content of the same size was written; the change time cannot be set by a user. Equal stamps mean the
 * file is unchanged for caching.
 */
export function fileStamp(st: StampedStat): string {
  return `${st.ctimeMs}:${st.mtimeMs}:${st.size}:${st.ino}`;
}

/**
 * The {@link fileStamp} of the file at `path`, undefined when it does not exist: no entry (`ENOENT`), or a part of
 * the path that is a file, not a folder (`ENOTDIR`: `--tokenizer` given the tokenizer.json itself, a dataset's folder
 * replaced by a file), as `fs.existsSync` answers both.
 * @throws the file system's other errors (`EACCES`, `ELOOP`, ...)
 */
export function fileStampOf(path: string): string | undefined {
  let st;
  try {
    st = statSync(path, { throwIfNoEntry: false });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw e;
  }
  return st ? fileStamp(st) : undefined;
}

/** The stamp each buffer {@link readFileStamped} returned was read at. */
const readAt = new WeakMap<Uint8Array, string>();

/**
 * Reads a whole file and notes the {@link fileStamp} its bytes belong to ({@link stampOfRead}): the file's stamp when
 * it is the same before and after the read (none is noted otherwise: the file changed while it was read). A cache
 * keyed by a stamp taken after a separate read could pair a replaced file's stamp with the old bytes' key.
 * @throws the file system's errors (a missing file included)
 */
export function readFileStamped(path: string): Buffer {
  const before = fileStampOf(path);
  const bytes = readFileSync(path);
  if (before !== undefined && fileStampOf(path) === before) readAt.set(bytes, before);
  return bytes;
}

/** The {@link fileStamp} of the file when {@link readFileStamped} read `bytes`; undefined for other bytes. */
export function stampOfRead(bytes: Uint8Array): string | undefined {
  return readAt.get(bytes);
}
