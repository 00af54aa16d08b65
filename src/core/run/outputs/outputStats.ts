/**
 * What a run wrote, read back from `tokenized_data.jsonl` without holding it:
 * per record its source row, `seq_len` and trainable tokens. Gives the length
 * statistics of the dashboard (distributions and histograms) and the exact
 * counts of one row for the hover and the mask view.
 *
 * A record line is `{"id","source":{"file","line"[,"element"]},"input_ids":[…],"loss_mask":[…],"seq_len","n_prompt_tokens","n_response_tokens"[,"ids_source"]}`
 * (`records/rowProcessor.ts`); only the part before `"input_ids"` and the part after `"seq_len"` are parsed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The records of one output file, in output order (= input order). */
export interface RecordIndex {
  /** The tokenized_data.jsonl read, with its size and mtime when read. */
  file: string;
  size: number;
  mtimeMs: number;
  /** Input files in order of first appearance; `fileOf[i]` indexes this list. */
  inputs: string[];
  fileOf: Uint32Array;
  line: Uint32Array;
  seqLen: Uint32Array;
  trainable: Uint32Array;
  /** Record ids (kept for the exact counts of a row). */
  ids: string[];
  /** Lines that could not be read as records. */
  unreadable: number;
}

const INPUT_IDS = ',"input_ids":';
const SEQ_LEN = ',"seq_len":';

/** Parses one record line's source, id, seq_len and trainable count; undefined when it is not a record. */
export function parseRecordLine(line: string): { id: string; file: string; line: number; seqLen: number; trainable: number } | undefined {
  try {
    const a = line.indexOf(INPUT_IDS);
    const b = line.lastIndexOf(SEQ_LEN);
    let head: { id?: unknown; source?: { file?: unknown; line?: unknown } };
    let tail: { seq_len?: unknown; n_response_tokens?: unknown };
    if (a > 0 && b > a) {
      head = JSON.parse(line.slice(0, a) + '}');
      tail = JSON.parse('{' + line.slice(b + 1));
    } else {
      head = tail = JSON.parse(line);
    }
    const src = head.source;
    if (typeof head.id !== 'string' || !src || typeof src.file !== 'string' || typeof src.line !== 'number') return undefined;
    if (typeof tail.seq_len !== 'number' || typeof tail.n_response_tokens !== 'number') return undefined;
    return { id: head.id, file: src.file, line: src.line, seqLen: tail.seq_len, trainable: tail.n_response_tokens };
  } catch {
    return undefined;
  }
}

/**
 * Streams `tokenized_data.jsonl` once and indexes its records.
 * @throws Error from the file system; the abort reason.
 */
export async function indexTokenizedData(file: string, signal?: AbortSignal): Promise<RecordIndex> {
  const st = await fs.promises.stat(file);
  const index = new RecordIndexBuilder();
  await forEachLine(file, (text) => index.add(text), signal);
  return { file, size: st.size, mtimeMs: st.mtimeMs, ...index.result() };
}

/** The columns of a {@link RecordIndex} as records are added, in growing typed arrays. */
class RecordIndexBuilder {
  private readonly inputs: string[] = [];
  private readonly inputIdx = new Map<string, number>();
  private cap = 1024;
  private fileOf = new Uint32Array(this.cap);
  private line = new Uint32Array(this.cap);
  private seqLen = new Uint32Array(this.cap);
  private trainable = new Uint32Array(this.cap);
  private readonly ids: string[] = [];
  private n = 0;
  private unreadable = 0;

  /** One line of the file: a record indexed, a line that is not one counted, a blank line ignored. */
  add(text: string): void {
    if (!text.trim()) return;
    const r = parseRecordLine(text);
    if (!r) {
      this.unreadable++;
      return;
    }
    if (this.n === this.cap) this.grow();
    const key = path.resolve(r.file);
    let fi = this.inputIdx.get(key);
    if (fi === undefined) {
      fi = this.inputs.length;
      this.inputs.push(key);
      this.inputIdx.set(key, fi);
    }
    const n = this.n;
    this.fileOf[n] = fi;
    this.line[n] = r.line;
    this.seqLen[n] = r.seqLen;
    this.trainable[n] = r.trainable;
    this.ids.push(r.id);
    this.n++;
  }

  private grow(): void {
    this.cap *= 2;
    const g = (a: Uint32Array) => {
      const b = new Uint32Array(this.cap);
      b.set(a);
      return b;
    };
    this.fileOf = g(this.fileOf);
    this.line = g(this.line);
    this.seqLen = g(this.seqLen);
    this.trainable = g(this.trainable);
  }

  /** The columns, cut to the records added. */
  result(): Omit<RecordIndex, 'file' | 'size' | 'mtimeMs'> {
    const n = this.n;
    return {
      inputs: this.inputs,
      fileOf: this.fileOf.slice(0, n),
      line: this.line.slice(0, n),
      seqLen: this.seqLen.slice(0, n),
      trainable: this.trainable.slice(0, n),
      ids: this.ids,
      unreadable: this.unreadable,
    };
  }
}

/**
 * Calls `take` with each line of `file` (split at LF, decoded as UTF-8; the last line without its LF too), reading
 * 1 MiB at a time.
 * @throws Error from the file system; the abort reason (checked before each read)
 */
async function forEachLine(file: string, take: (text: string) => void, signal?: AbortSignal): Promise<void> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let pending: Buffer[] = [];
    let pos = 0;
    for (;;) {
      signal?.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      let start = 0;
      let nl = buf.indexOf(10, 0);
      while (nl >= 0 && nl < bytesRead) {
        const piece = buf.subarray(start, nl);
        take(pending.length ? Buffer.concat([...pending, piece]).toString('utf8') : piece.toString('utf8'));
        pending = [];
        start = nl + 1;
        nl = buf.indexOf(10, start);
      }
      if (start < bytesRead) pending.push(Buffer.from(buf.subarray(start, bytesRead)));
    }
    if (pending.length) take(Buffer.concat(pending).toString('utf8'));
  } finally {
    await fh.close();
  }
}

/** The records one row (1-based `line` of `input`) became in an indexed output, in order. */
export function recordsOfRow(index: RecordIndex, input: string, line: number): { id: string; tokens: number; trainableTokens: number }[] {
  const fi = index.inputs.indexOf(path.resolve(input));
  if (fi < 0) return [];
  const out: { id: string; tokens: number; trainableTokens: number }[] = [];
  // Records are in input order: binary search the first record of (fi, line), then walk.
  let lo = 0;
  let hi = index.line.length;
  const before = (k: number) => index.fileOf[k] < fi || (index.fileOf[k] === fi && index.line[k] < line);
  // fileOf is non-decreasing only when inputs are in order; fall back to a scan otherwise.
  const sorted = isSortedByFileAndLine(index);
  if (sorted) {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(mid)) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < index.line.length && index.fileOf[k] === fi && index.line[k] === line; k++)
      out.push({ id: index.ids[k], tokens: index.seqLen[k], trainableTokens: index.trainable[k] });
    return out;
  }
  for (let k = 0; k < index.line.length; k++)
    if (index.fileOf[k] === fi && index.line[k] === line) out.push({ id: index.ids[k], tokens: index.seqLen[k], trainableTokens: index.trainable[k] });
  return out;
}

const sortedCache = new WeakMap<RecordIndex, boolean>();
function isSortedByFileAndLine(index: RecordIndex): boolean {
  let s = sortedCache.get(index);
  if (s === undefined) {
    s = true;
    for (let k = 1; k < index.line.length && s; k++) {
      const a = index.fileOf[k - 1];
      const b = index.fileOf[k];
      if (b < a || (a === b && index.line[k] < index.line[k - 1])) s = false;
    }
    sortedCache.set(index, s);
  }
  return s;
}

// ------------------------------------------------------------------ statistics

/** One bar of a histogram: values in `[from, to)` (the last bin includes `to`). */
export interface HistogramBin {
  from: number;
  to: number;
  count: number;
}

/** Summary of a list of non-negative numbers. */
export interface Distribution {
  count: number;
  sum: number;
  min: number;
  max: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  /** Equal-width bins with a round width (1, 2, 5 × 10^k), at most `maxBins`. */
  histogram: HistogramBin[];
}

/** A round bin width (1, 2, 2.5, 5 × 10^k; integers at least 1) giving at most `maxBins` bins over `[min, max]`. */
export function niceBinWidth(min: number, max: number, maxBins: number, integer = true): number {
  if (!(max > min)) return integer ? 1 : 0.1;
  const span = max - min;
  const raw = span / Math.max(1, maxBins);
  const exp = Math.floor(Math.log10(raw));
  for (let e = exp; ; e++) {
    for (const m of [1, 2, 2.5, 5]) {
      const w = m * 10 ** e;
      if ((!integer || (Number.isInteger(w) && w >= 1)) && Math.ceil((span + (integer ? 1 : 0)) / w) <= maxBins) return w;
    }
  }
}

/** The distribution of `values` (a typed array or list; sorted in place when a typed array copy is given). */
export function distributionOf(values: ArrayLike<number>, opts: { maxBins?: number; integer?: boolean } = {}): Distribution {
  const n = values.length;
  const maxBins = opts.maxBins ?? 30;
  const integer = opts.integer ?? true;
  if (n === 0) return { count: 0, sum: 0, min: 0, max: 0, mean: 0, p50: 0, p90: 0, p99: 0, histogram: [] };
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i];
  // Nearest-rank percentile.
  const pct = (p: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))];
  const min = sorted[0];
  const max = sorted[n - 1];
  const w = niceBinWidth(min, max, maxBins, integer);
  const first = Math.floor(min / w) * w;
  const nb = Math.max(1, Math.floor((max - first) / w) + 1);
  const histogram: HistogramBin[] = Array.from({ length: nb }, (_, i) => ({ from: first + i * w, to: first + (i + 1) * w, count: 0 }));
  for (let i = 0; i < n; i++) histogram[Math.min(nb - 1, Math.floor((sorted[i] - first) / w))].count++;
  return { count: n, sum, min, max, mean: sum / n, p50: pct(50), p90: pct(90), p99: pct(99), histogram };
}

/** Length statistics of some records (one input file of a run, or several runs). */
export interface OutputStats {
  records: number;
  conversations: number;
  totalTokens: number;
  trainableTokens: number;
  /** `seq_len` per record. */
  seqLen: Distribution;
  /** Trainable tokens (`n_response_tokens`) per record. */
  trainablePerRecord: Distribution;
  /** Records per conversation (source row). */
  recordsPerConversation: Distribution;
  /**
   * Amplification per conversation: tokens written for it ÷ tokens of its longest record (1 when
   * one record holds the whole conversation; 41 records of a history-rewriting template give more);
   * null when only the overall figure is known (a report's `lengths`).
   */
  amplification: Distribution | null;
  /** Tokens written ÷ tokens of the conversations rendered once (report) or of their longest records (from tokenized_data.jsonl). */
  amplificationOverall: number;
  /** Tokens of the written conversations rendered once, when the report gives it. */
  renderedTokens?: number;
}

/**
 * The length statistics of the records of `inputs` (absolute input paths; all of the index's when
 * omitted) across one or more indexed outputs.
 */
export function outputStats(parts: { index: RecordIndex; inputs?: string[] }[]): OutputStats {
  const seq: number[] = [];
  const tr: number[] = [];
  const perConv: number[] = [];
  const amp: number[] = [];
  let longestSum = 0;
  let total = 0;
  let trainable = 0;
  for (const { index, inputs } of parts) {
    const want = inputs ? new Set(inputs.map((i) => index.inputs.indexOf(path.resolve(i))).filter((i) => i >= 0)) : undefined;
    let convKey = -1;
    let convFile = -1;
    let count = 0;
    let sum = 0;
    let longest = 0;
    const close = () => {
      if (count === 0) return;
      perConv.push(count);
      amp.push(longest > 0 ? sum / longest : 1);
      longestSum += longest;
      count = 0;
      sum = 0;
      longest = 0;
    };
    for (let k = 0; k < index.line.length; k++) {
      if (want && !want.has(index.fileOf[k])) continue;
      const s = index.seqLen[k];
      seq.push(s);
      tr.push(index.trainable[k]);
      total += s;
      trainable += index.trainable[k];
      if (index.line[k] !== convKey || index.fileOf[k] !== convFile) {
        close();
        convKey = index.line[k];
        convFile = index.fileOf[k];
      }
      count++;
      sum += s;
      longest = Math.max(longest, s);
    }
    close();
  }
  return {
    records: seq.length,
    conversations: perConv.length,
    totalTokens: total,
    trainableTokens: trainable,
    seqLen: distributionOf(seq),
    trainablePerRecord: distributionOf(tr),
    recordsPerConversation: distributionOf(perConv),
    amplification: distributionOf(amp, { integer: false, maxBins: 20 }),
    amplificationOverall: longestSum > 0 ? total / longestSum : 1,
  };
}
