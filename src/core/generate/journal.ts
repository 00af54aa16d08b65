/**
 * Append-only output and journal files for `generate`, and resume keyed by row id.
 *
 * - The output (`--out`, OpenAI `messages` JSONL) holds one line per finished
 *   conversation; the journal (`<out>.journal`, JSONL) one line per row that
 *   ended without an output line but must not be sent again (`length`,
 *   `reasoning_without_answer`). Rows that failed are in neither, so a rerun
 *   sends them again.
 * - Each line is appended with ONE `write(2)` of the whole line on a file
 *   opened `O_APPEND`: a process killed (even `kill -9`) between writes leaves
 *   only whole lines; the kernel has a line once the call returns.
 * - fsync policy: `fdatasync` at most once per `fsyncIntervalMs` (default
 *   1000 ms) while lines are pending, and at close. A power loss can lose at
 *   most the last interval's lines (they are generated again on resume) and
 *   may leave a torn last line, which {@link openAppendLog} cuts off.
 * - Resume: the ids already in the output or the journal are skipped — never
 *   a line count, so reordered or partial inputs resume correctly.
 */
import { closeSync, existsSync, fdatasyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** An open append-only JSONL file. */
export class AppendLog {
  private fd: number;
  private pending = false;
  private timer: NodeJS.Timeout | null = null;
  /** Lines appended by this process. */
  appended = 0;

  constructor(
    readonly path: string,
    fd: number,
    private readonly fsyncIntervalMs: number,
  ) {
    this.fd = fd;
  }

  /**
   * Appends one JSON value as one line, in a single write(2).
   * @throws Error when the value's JSON holds a newline (cannot happen with JSON.stringify) or the write fails
   */
  append(value: unknown): void {
    const buf = Buffer.from(JSON.stringify(value) + '\n', 'utf8');
    // writeSync on an O_APPEND regular file writes the whole buffer in one call; a short write is an error here.
    const n = writeSync(this.fd, buf, 0, buf.length);
    if (n !== buf.length) throw new Error(`${this.path}: short write (${n} of ${buf.length} bytes)`);
    this.appended++;
    this.pending = true;
    if (!this.timer && this.fsyncIntervalMs >= 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.sync();
      }, this.fsyncIntervalMs);
      this.timer.unref();
    }
  }

  /** fdatasync when lines are pending. */
  sync(): void {
    if (this.pending && this.fd >= 0) {
      fdatasyncSync(this.fd);
      this.pending = false;
    }
  }

  /** Syncs and closes. */
  close(): void {
    if (this.fd < 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.sync();
    closeSync(this.fd);
    this.fd = -1;
  }
}

/** What an existing log held. */
export interface LogScan {
  /** id → the parsed line, for every complete line. */
  ids: Map<string, { id: string } & Record<string, unknown>>;
  /** Lines whose id appeared before (should never happen; reported). */
  duplicates: string[];
  /** Bytes of a torn last line that were cut off (0 when the file ended with a newline). */
  truncatedBytes: number;
}

/**
 * Reads an existing JSONL log (when present), cuts a torn last line (no
 * trailing newline, from a power loss), and opens it for appending.
 * @throws Error naming the file and line when a complete line is not JSON or has no string `id`
 */
export function openAppendLog(path: string, fsyncIntervalMs = 1000): { log: AppendLog; scan: LogScan } {
  mkdirSync(dirname(path), { recursive: true });
  const scan: LogScan = { ids: new Map(), duplicates: [], truncatedBytes: 0 };
  if (existsSync(path)) {
    const buf = readFileSync(path);
    const lastNl = buf.lastIndexOf(0x0a);
    const completeLen = lastNl + 1;
    if (completeLen < buf.length) {
      scan.truncatedBytes = buf.length - completeLen;
      const fd = openSync(path, 'r+');
      ftruncateSync(fd, completeLen);
      fdatasyncSync(fd);
      closeSync(fd);
    }
    const lines = buf.subarray(0, completeLen).toString('utf8').split('\n');
    lines.pop();
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let o: { id?: unknown } | null;
      try {
        o = JSON.parse(line);
      } catch (e) {
        throw new Error(`${path}:${i + 1}: not JSON (${(e as Error).message}); this file is not a generate output/journal, choose another --out`, { cause: e });
      }
      const id = o?.id;
      if (o === null || typeof id !== 'string')
        throw new Error(`${path}:${i + 1}: no string "id"; this file is not a generate output/journal, choose another --out`);
      if (scan.ids.has(id)) scan.duplicates.push(id);
      else scan.ids.set(id, o as { id: string } & Record<string, unknown>);
    });
  }
  const fd = openSync(path, 'a');
  return { log: new AppendLog(path, fd, fsyncIntervalMs), scan };
}
