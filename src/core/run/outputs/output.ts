/**
 * Atomic output files: everything is written to a temporary file beside the
 * target and renamed over it on commit, so a crash or a cancel never leaves a
 * half-written output (rename is atomic within one file system, POSIX rename(2)).
 *
 * Temporary files are named `.<name>.tmp-<host>-<pid>-<random>`; a run removes
 * the ones a killed run (`kill -9`, OOM killer, node crash) left in its output
 * folder ({@link removeStaleTemps}). Before reading any row, a run checks that
 * it can create, write and rename files in its output folder
 * ({@link checkOutputDir}), so an unwritable folder fails in one line at once.
 */
import * as fs from 'node:fs';
import {
  closeSync,
  createWriteStream,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
  type WriteStream,
} from 'node:fs';
import { writeFile, rename } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** The host part of temporary names (no dashes: the name is split on them). */
const HOST = hostname().replace(/[^A-Za-z0-9_.]/g, '_') || 'host';
const TEMP_RE = /^\.(.+)\.tmp-(.+)-(\d+)-([0-9a-f]{8})$/;

/** The temporary path beside `path` that an atomic output writes before its rename: `.<name>.tmp-<host>-<pid>-<random>`. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${HOST}-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/**
 * An output folder that cannot be written: the message is one line naming the
 * folder (or file) and the reason, e.g. `cannot write to the output folder
 * /data/out: permission denied (EACCES)`.
 */
export class OutputError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly path: string,
  ) {
    super(message);
    this.name = 'OutputError';
  }
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'a file is in the way (not a folder)',
  EEXIST: 'a file is in the way (not a folder)',
  EISDIR: 'a folder is in the way',
  ENAMETOOLONG: 'name too long',
  EIO: 'input/output error',
  EMFILE: 'too many open files',
  ENOENT: 'no such file or folder',
};

/** `permission denied (EACCES)` for a file-system error; its message when it has no code. */
export function fsReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code === 'string' && code) return `${REASONS[code] ?? (e as Error).message.split(':')[0]} (${code})`;
  return (e as Error)?.message?.split('\n')[0] ?? String(e);
}

function outputError(what: string, path: string, e: unknown): OutputError {
  const code = (e as NodeJS.ErrnoException)?.code;
  return new OutputError(`${what} ${path}: ${fsReason(e)}`, typeof code === 'string' ? code : undefined, path);
}

/**
 * Checks that `dir` can hold a run's outputs: creates it (and its parents),
 * writes a small temporary file, renames it and removes it. Call before the
 * first row is read.
 * @param fsOps the file operations used (tests inject failures: a root user bypasses permission bits)
 * @throws OutputError naming the folder and the reason (EACCES, EROFS, ENOSPC, ENOTDIR, …)
 */
export function checkOutputDir(
  dir: string,
  fsOps: Pick<typeof import('node:fs'), 'mkdirSync' | 'writeFileSync' | 'renameSync' | 'rmSync'> = fs,
): string | undefined {
  let created: string | undefined;
  try {
    created = fsOps.mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw outputError('cannot create the output folder', dir, realMkdirError(dir, e, fsOps));
  }
  const probe = tempPathFor(join(dir, 'write-check'));
  const renamed = `${probe}-renamed`;
  try {
    // 64 KiB: enough to hit a full disk or quota on most file systems (a few bytes may fit in a last free block).
    fsOps.writeFileSync(probe, Buffer.alloc(64 * 1024));
    fsOps.renameSync(probe, renamed);
  } catch (e) {
    rmQuiet(probe);
    throw outputError('cannot write to the output folder', dir, e);
  } finally {
    rmQuiet(renamed);
  }
  return created;
}

/**
 * Removes the folders a run created ({@link checkOutputDir}'s result: the first one created) when
 * the run wrote nothing into them: `dir` and its parents up to `created`, each only while empty.
 * A failed or cancelled run then leaves no empty output folder behind. Never throws.
 */
export function removeCreatedIfEmpty(dir: string, created: string | undefined): void {
  if (!created) return;
  for (let d = dir; ; d = dirname(d)) {
    try {
      fs.rmdirSync(d); // fails on a folder that is not empty: it stays
    } catch {
      return;
    }
    if (d === created || dirname(d) === d) return;
  }
}

/**
 * Node's recursive mkdir reports ENOENT for what is really EROFS or EACCES on
 * a parent: retries the first missing folder on its own to get the real reason.
 */
function realMkdirError(dir: string, e: unknown, fsOps: Pick<typeof fs, 'mkdirSync'>): unknown {
  if ((e as NodeJS.ErrnoException)?.code !== 'ENOENT') return e;
  let first = dir;
  while (dirname(first) !== first && !fs.existsSync(dirname(first))) first = dirname(first);
  try {
    fsOps.mkdirSync(first);
  } catch (e2) {
    return e2;
  }
  return e;
}

function rmQuiet(p: string): void {
  try {
    rmSync(p, { force: true });
  } catch {
    /* best effort */
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A temporary file of another host untouched this long is taken as abandoned (an active run writes it continuously). */
const FOREIGN_TEMP_AGE_MS = 24 * 3600 * 1000;

/**
 * Removes the temporary files that killed runs left in `dir`: those of this
 * host whose process is gone, and those of other hosts (shared file systems)
 * not modified for a day. Temporary files of live runs are kept.
 * @returns the paths removed
 */
export function removeStaleTemps(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = TEMP_RE.exec(name);
    if (!m) continue;
    const [, , host, pidText] = m;
    const p = join(dir, name);
    let stale: boolean;
    if (host === HOST) stale = Number(pidText) !== process.pid && !processAlive(Number(pidText));
    else {
      try {
        stale = Date.now() - statSync(p).mtimeMs > FOREIGN_TEMP_AGE_MS;
      } catch {
        stale = false;
      }
    }
    if (!stale) continue;
    try {
      rmSync(p, { force: true, recursive: true });
      removed.push(p);
    } catch {
      /* left for the next run */
    }
  }
  return removed;
}

/** A streamed output file that appears at its path only when committed. */
export class AtomicOutput {
  private stream: WriteStream | null = null;
  private readonly tmp: string;
  private failure: OutputError | null = null;
  private written = 0;
  /** Set by {@link close}; a later write reopens the file for appending. */
  private closed = false;

  /** @param path final path; its folder is created on first write or commit */
  constructor(readonly path: string) {
    this.tmp = tempPathFor(path);
  }

  private open(flags = 'w'): WriteStream {
    if (this.failure) throw this.failure;
    if (!this.stream) {
      if (this.closed) flags = 'a'; // reopened after closeForReading: keep what was written
      this.closed = false;
      try {
        mkdirSync(dirname(this.path), { recursive: true });
      } catch (e) {
        throw (this.failure = outputError('cannot create the output folder', dirname(this.path), e));
      }
      const s = createWriteStream(this.tmp, { encoding: 'utf8', flags });
      // Kept for the whole life of the stream: a write error (ENOSPC mid-run) is raised by the next write or commit, never unhandled.
      s.on('error', (e) => {
        this.failure ??= outputError('cannot write', this.path, e);
      });
      this.stream = s;
    }
    return this.stream;
  }

  /** Bytes written so far (a mark for {@link rollback}). */
  get bytesWritten(): number {
    return this.written;
  }

  /**
   * Appends text (written as UTF-8), or bytes as they are, waiting for the stream to drain when its buffer is full
   * (backpressure).
   * @throws OutputError when the file cannot be written (ENOSPC, EIO, …)
   */
  async write(text: string | Uint8Array): Promise<void> {
    const s = this.open();
    // A text is encoded once, here, and its length read from the bytes: a separate pass for the length
    // (`Buffer.byteLength`) before the stream encoded it read each record line (tens of kB) twice. Same bytes: the
    // stream encodes a text as UTF-8 with `Buffer.from` too.
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    this.written += bytes.byteLength;
    if (!s.write(bytes))
      await new Promise<void>((res, rej) => {
        const onErr = () => rej(this.failure);
        s.once('error', onErr);
        s.once('drain', () => {
          s.off('error', onErr);
          res();
        });
      });
    if (this.failure) throw this.failure;
  }

  /**
   * Flushes and closes the temporary file and returns its path, to read what was
   * written before {@link commit} or {@link abort} (which still work afterwards).
   */
  async closeForReading(): Promise<string> {
    await this.close();
    return this.tmp;
  }

  /** Flushes and closes the stream (the temporary file stays; a file never opened is created empty). */
  private async close(): Promise<void> {
    if (this.closed) {
      if (this.failure) throw this.failure;
      return;
    }
    const s = this.open();
    await new Promise<void>((res, rej) => {
      if (s.closed) return res();
      s.once('error', () => rej(this.failure));
      s.end(() => res());
    });
    this.stream = null;
    this.closed = true;
    if (this.failure) throw this.failure;
  }

  /**
   * Discards what was written after `mark` (a {@link bytesWritten} value): the
   * records of a file that failed when the run goes on without it.
   */
  async rollback(mark: number): Promise<void> {
    if (mark === this.written) return;
    await this.close();
    try {
      const fd = openSync(this.tmp, 'r+');
      try {
        ftruncateSync(fd, mark);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      throw (this.failure = outputError('cannot write', this.path, e));
    }
    this.written = mark;
    this.open('a');
  }

  /** Closes the temporary file and renames it to the final path (an empty file when nothing was written). */
  async commit(): Promise<void> {
    await this.close();
    try {
      renameSync(this.tmp, this.path);
    } catch (e) {
      throw outputError('cannot write', this.path, e);
    }
  }

  /** Discards the temporary file; the final path is left as it was. */
  async abort(): Promise<void> {
    if (this.stream) {
      const s = this.stream;
      try {
        if (!s.closed) {
          // Pending writes fail with ERR_STREAM_DESTROYED once destroyed: expected here, not the run's error.
          s.on('error', () => {});
          const closed = new Promise<void>((res) => s.once('close', () => res()));
          s.destroy();
          await closed;
        }
      } finally {
        this.stream = null;
      }
    }
    rmQuiet(this.tmp);
  }
}

/** Writes a whole file atomically (temp file + rename). @throws OutputError naming the file and the reason */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const tmp = tempPathFor(path);
  try {
    mkdirSync(dirname(path), { recursive: true });
    await writeFile(tmp, content, 'utf8');
    await rename(tmp, path);
  } catch (e) {
    rmQuiet(tmp);
    throw outputError('cannot write', path, e);
  }
}

/** Writes a small file synchronously, atomically (used where a signal must not interleave). */
export function writeFileAtomicSync(path: string, content: string): void {
  const tmp = tempPathFor(path);
  try {
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmQuiet(tmp);
    throw outputError('cannot write', path, e);
  }
}
