/**
 * Reads one line of a dataset file from disk through a sparse line index, for
 * files VS Code does not sync to extensions (over 50 MB: no `TextDocument`)
 * and files that are not open. The index keeps the byte offset of every
 * `every`-th line start (default 1024), so a 1 GB file with 1 M lines costs
 * ~8 KB of offsets; reading line N seeks to the nearest checkpoint and scans
 * forward at most `every` lines.
 *
 * Lines are split on `\n`; a trailing `\r` is removed (CRLF files); a UTF-8 BOM
 * at the start of the file is removed from line 1. Text is decoded as UTF-8.
 */
import * as fs from 'node:fs';
import { fileStamp } from '../core/read/fileStamp';

const CHUNK = 1 << 16;

/** A sparse index of line starts of one file (as it was when built: its size and file stamp are kept). */
export class LineIndex {
  private constructor(
    readonly file: string,
    /** File size in bytes when indexed. */
    readonly size: number,
    /** The file's stamp when indexed (core/read/fileStamp.ts: change and modification times, size, inode). */
    readonly stamp: string,
    /** Number of lines (a final line without `\n` counts; an empty file has 0). */
    readonly lineCount: number,
    private readonly every: number,
    /** checkpoints[k] = byte offset where line k·every + 1 starts. */
    private readonly checkpoints: Float64Array,
  ) {}

  /**
   * Scans `file` once (streaming, 64 KB chunks) and records every `every`-th line start.
   * @param signal aborts the scan (rejects with the signal's reason)
   * @throws Error from the file system (missing file, …)
   */
  static async build(file: string, opts: { every?: number; signal?: AbortSignal } = {}): Promise<LineIndex> {
    const every = opts.every ?? 1024;
    const st = await fs.promises.stat(file);
    const cps: number[] = [0];
    let lines = 0; // line breaks seen
    let pos = 0;
    const fh = await fs.promises.open(file, 'r');
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (;;) {
        opts.signal?.throwIfAborted();
        const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
        if (bytesRead === 0) break;
        let i = buf.indexOf(10, 0);
        while (i >= 0 && i < bytesRead) {
          lines++;
          if (lines % every === 0) cps.push(pos + i + 1);
          i = buf.indexOf(10, i + 1);
        }
        pos += bytesRead;
      }
    } finally {
      await fh.close();
    }
    // A last line without a final newline still counts.
    let lastStart = 0;
    if (st.size > 0) {
      lastStart = await lastLineStart(file, st.size);
    }
    const lineCount = st.size === 0 ? 0 : lastStart < st.size ? lines + 1 : lines;
    return new LineIndex(file, st.size, fileStamp(st), lineCount, every, Float64Array.from(cps));
  }

  /** Whether the file changed (its file stamp) since the index was built. */
  isStale(): boolean {
    try {
      return fileStamp(fs.statSync(this.file)) !== this.stamp;
    } catch {
      return true;
    }
  }

  /**
   * The text of 1-based line `line` (without its line break).
   * @throws RangeError when `line` is not in 1..lineCount
   */
  async readLine(line: number): Promise<string> {
    if (!Number.isInteger(line) || line < 1 || line > this.lineCount) throw new RangeError(`line ${line} is outside 1..${this.lineCount} of ${this.file}`);
    const k = Math.min(Math.floor((line - 1) / this.every), this.checkpoints.length - 1);
    let pos = this.checkpoints[k];
    let toSkip = line - 1 - k * this.every;
    const fh = await fs.promises.open(this.file, 'r');
    try {
      const buf = Buffer.allocUnsafe(CHUNK);
      // Skip `toSkip` line breaks.
      while (toSkip > 0) {
        const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
        if (bytesRead === 0) break;
        let i = -1;
        while (toSkip > 0) {
          i = buf.indexOf(10, i + 1);
          if (i < 0 || i >= bytesRead) break;
          toSkip--;
        }
        pos += toSkip === 0 ? i + 1 : bytesRead;
      }
      // Read up to the next line break.
      const parts: Buffer[] = [];
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
        if (bytesRead === 0) break;
        const i = buf.indexOf(10, 0);
        if (i >= 0 && i < bytesRead) {
          parts.push(Buffer.from(buf.subarray(0, i)));
          break;
        }
        parts.push(Buffer.from(buf.subarray(0, bytesRead)));
        pos += bytesRead;
      }
      let text = Buffer.concat(parts).toString('utf8');
      if (text.endsWith('\r')) text = text.slice(0, -1);
      if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      return text;
    } finally {
      await fh.close();
    }
  }
}

async function lastLineStart(file: string, size: number): Promise<number> {
  // Whether the file ends with "\n": then no unterminated last line.
  const fh = await fs.promises.open(file, 'r');
  try {
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, size - 1);
    return b[0] === 10 ? size : size - 1;
  } finally {
    await fh.close();
  }
}

const indexes = new Map<string, Promise<LineIndex>>();

/**
 * The line index of `file`, built once and rebuilt when the file changed.
 * @throws as {@link LineIndex.build}
 */
export async function lineIndexFor(file: string): Promise<LineIndex> {
  const cached = indexes.get(file);
  if (cached) {
    const idx = await cached.catch(() => undefined);
    if (idx && !idx.isStale()) return idx;
  }
  const p = LineIndex.build(file);
  indexes.set(file, p);
  p.catch(() => indexes.delete(file));
  return p;
}
