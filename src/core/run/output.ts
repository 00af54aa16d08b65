/**
 * Atomic output files: everything is written to a temporary file beside the
 * target and renamed over it on commit, so a crash or a cancel never leaves a
 * half-written output (rename is atomic within one file system, POSIX rename(2)).
 */
import { createWriteStream, mkdirSync, renameSync, rmSync, type WriteStream } from 'node:fs';
import { writeFile, rename } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The temporary path beside `path` that an atomic output writes before its rename: `.<name>.tmp-<pid>-<random>`. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** A streamed output file that appears at its path only when committed. */
export class AtomicOutput {
  private stream: WriteStream | null = null;
  private readonly tmp: string;

  /** @param path final path; its folder is created on first write or commit */
  constructor(readonly path: string) {
    this.tmp = tempPathFor(path);
  }

  private open(): WriteStream {
    if (!this.stream) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.stream = createWriteStream(this.tmp, { encoding: 'utf8' });
    }
    return this.stream;
  }

  /** Appends text, waiting for the stream to drain when its buffer is full (backpressure). */
  async write(text: string): Promise<void> {
    const s = this.open();
    if (!s.write(text))
      await new Promise<void>((res, rej) => {
        const onErr = (e: Error) => rej(e);
        s.once('error', onErr);
        s.once('drain', () => {
          s.off('error', onErr);
          res();
        });
      });
  }

  /** Closes the temporary file and renames it to the final path (an empty file when nothing was written). */
  async commit(): Promise<void> {
    const s = this.open();
    await new Promise<void>((res, rej) => {
      s.once('error', rej);
      s.end(() => res());
    });
    renameSync(this.tmp, this.path);
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
        rmSync(this.tmp, { force: true });
      }
    }
  }
}

/** Writes a whole file atomically (temp file + rename). */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempPathFor(path);
  await writeFile(tmp, content, 'utf8');
  await rename(tmp, path);
}
