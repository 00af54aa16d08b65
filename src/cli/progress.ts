/**
 * The progress line of `prepare` on stderr, drawn by `cli-progress`: in a
 * terminal one live line (redrawn at most 5 times a second and cleared at the
 * end); elsewhere (Slurm logs, `kubectl logs`, pipes) one line every
 * {@link LOG_INTERVAL_MS}, starting only once a run has lasted that long.
 *
 *   45% ▕█████████░░░░░░░░░░░▏ file 2/5 chat.jsonl · 12,345 rows 1.2k/s · 3.1M tok 250k/s · ETA 1m 20s · 8 workers
 *
 * Rates are averages since the start. The ETA is the input bytes left over the
 * measured throughput in input bytes per second (compressed bytes for .gz/.zst;
 * bytes of rows whose results are written, not of rows read ahead), measured
 * over the last {@link ETA_WINDOW_MS} ({@link etaSeconds}): a run that slows
 * down (a loaded machine, heavier rows later in the input) gets a longer ETA
 * within that time, where an average since the start kept promising the early
 * speed (issue 25: the ETA ran 1.2-1.55x short).
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { Format, SingleBar } from 'cli-progress';
import type { PrepareProgress } from '../core/run/contract';
import { groupedInt } from '../core/numberText';

/** Interval of the progress lines when stderr is not a terminal. */
export const LOG_INTERVAL_MS = 5000;

/** `1234` → `1.2k`, `3_100_000` → `3.1M`. */
export function compact(n: number): string {
  if (n < 1000) return String(Math.round(n));
  const units = ['k', 'M', 'G', 'T'];
  let u = -1;
  while (n >= 1000 && u < units.length - 1) {
    n /= 1000;
    u++;
  }
  return `${n >= 100 ? Math.round(n) : n.toFixed(1)}${units[u]}`;
}

/** A per-second rate: one decimal under 10 (`0.3`), else {@link compact}. */
export function rate(n: number): string {
  return n < 10 ? n.toFixed(1) : compact(n);
}

/** `80` → `1m 20s`. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** Throughput window of the ETA. */
export const ETA_WINDOW_MS = 30_000;

/** One progress sample: milliseconds since the start, input bytes done. */
export interface ByteSample {
  ms: number;
  bytes: number;
}

/**
 * Seconds left for `totalBytes`, from the throughput over the last {@link ETA_WINDOW_MS} of `samples`
 * (oldest first; the last is now), or over all of them while they span less than a third of the window.
 * NaN (no ETA yet) until 2 % of the bytes are done and 3 s have passed, while workers start and
 * tokenizers load, or when no byte was done in the window.
 */
export function etaSeconds(samples: readonly ByteSample[], totalBytes: number): number {
  const last = samples[samples.length - 1];
  if (!last || last.bytes / totalBytes < 0.02 || last.ms < 3000) return NaN;
  let from = samples.findIndex((x) => x.ms >= last.ms - ETA_WINDOW_MS);
  if (from < 0 || last.ms - (samples[from] as ByteSample).ms < ETA_WINDOW_MS / 3) from = -1;
  const first = from < 0 ? { ms: 0, bytes: 0 } : (samples[from] as ByteSample);
  const perMs = (last.bytes - first.bytes) / (last.ms - first.ms);
  if (!(perMs > 0)) return NaN;
  return Math.max(0, totalBytes - last.bytes) / perMs / 1000;
}

interface Totals {
  rows: number;
  tokens: number;
  bytes: number;
}

/**
 * Follows a command's runs (one per output folder) over all its input files
 * and draws the line. Feed it every `onProgress` event; `stop()` at the end.
 */
export class ProgressLine {
  private readonly bar: SingleBar;
  private readonly tty: boolean;
  private readonly sizes = new Map<string, number>();
  private readonly order: string[];
  private readonly totalBytes: number;
  private readonly t0 = Date.now();
  /** Rows, tokens and bytes of the files finished so far. */
  private done: Totals = { rows: 0, tokens: 0, bytes: 0 };
  private current: { file: string; rows: number; tokens: number; bytes: number } | null = null;
  private started = false;
  private value = 0;
  /** Bytes done over time, the last {@link ETA_WINDOW_MS} and one sample before. */
  private samples: ByteSample[] = [];
  private payload: Record<string, string> = { text: '' };

  /** @param files every input file of the command, in run order */
  constructor(
    files: readonly string[],
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {
    this.order = [...files];
    for (const f of files) {
      let size = 0;
      try {
        size = statSync(f).size;
      } catch {
        /* the run reports it */
      }
      this.sizes.set(f, size);
    }
    this.totalBytes = [...this.sizes.values()].reduce((a, b) => a + b, 0) || 1;
    this.tty = Boolean(stream.isTTY);
    this.bar = new SingleBar({
      stream,
      format: (options, params, payload: { text: string }) =>
        `${String(Math.floor(params.progress * 100)).padStart(3)}% ▕${Format.BarFormat(params.progress, options)}▏ ${payload.text}`,
      barsize: 20,
      barCompleteChar: '█',
      barIncompleteChar: '░',
      hideCursor: false,
      clearOnComplete: true,
      linewrap: false,
      fps: 5,
      noTTYOutput: true,
      notTTYSchedule: LOG_INTERVAL_MS,
    });
  }

  /** Takes a progress event of a run. */
  update(p: PrepareProgress): void {
    if (this.current && this.current.file !== p.file) this.finishCurrent();
    this.current = { file: p.file, rows: p.rowsRead, tokens: p.tokensWritten, bytes: p.bytesRead };
    const rows = this.done.rows + p.rowsRead;
    const tokens = this.done.tokens + p.tokensWritten;
    const bytes = Math.min(this.totalBytes, this.done.bytes + p.bytesRead);
    const ms = Date.now() - this.t0;
    const secs = ms / 1000;
    this.samples.push({ ms, bytes });
    while (this.samples.length > 2 && (this.samples[1] as ByteSample).ms < ms - ETA_WINDOW_MS) this.samples.shift();
    const eta = etaSeconds(this.samples, this.totalBytes);
    const fileNo = this.order.indexOf(p.file) + 1 || p.fileIndex + 1;
    const parts = [
      `file ${fileNo}/${this.order.length || p.fileCount} ${basename(p.file)}`,
      `${groupedInt(rows)} rows ${secs > 0 ? rate(rows / secs) : '0'}/s`,
      `${compact(tokens)} tok ${secs > 0 ? rate(tokens / secs) : '0'}/s`,
      `ETA ${Number.isNaN(eta) ? '…' : duration(eta)}`,
      `${p.workers} worker${p.workers === 1 ? '' : 's'}`,
    ];
    if (p.rowsErrored) parts.splice(2, 0, `${groupedInt(p.rowsErrored)} errored`);
    this.value = bytes / this.totalBytes;
    this.payload = { text: parts.join(' · ') };
    if (!this.started) {
      // Off a terminal, a short run prints no progress at all; a long one a line every few seconds.
      if (!this.tty && Date.now() - this.t0 < LOG_INTERVAL_MS) return;
      this.started = true;
      this.bar.start(1, this.value, this.payload);
    } else this.bar.update(this.value, this.payload);
  }

  private finishCurrent(): void {
    if (!this.current) return;
    this.done = {
      rows: this.done.rows + this.current.rows,
      tokens: this.done.tokens + this.current.tokens,
      bytes: this.done.bytes + (this.sizes.get(this.current.file) ?? this.current.bytes),
    };
    this.current = null;
  }

  /** Writes a log line above the live line (or between the scheduled lines). */
  log(line: string): void {
    if (this.started && this.tty) {
      this.bar.stop();
      this.stream.write(line + '\n');
      this.bar.start(1, this.value, this.payload);
    } else this.stream.write(line + '\n');
  }

  /** Clears the live line (a terminal) or stops the scheduled lines. */
  stop(): void {
    if (this.started) this.bar.stop();
    this.started = false;
  }
}
