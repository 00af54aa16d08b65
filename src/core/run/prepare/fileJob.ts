/**
 * One input file of a `prepare` run (run/prepare/pipeline.ts): read its rows through the row source
 * (formats/rowSource.ts), detect its format, send its rows in batches to the row processors, apply
 * their results in input order to its report and the run's outputs. Its parts:
 * - {@link RowBatcher} — batching and the window of batches in flight (backpressure);
 * - the ledger (`addedKeys`, `addedIds`, `lengths`, `counts`) — what the file added to run-wide
 *   state, taken back by the run when the file is left out (`--skip-failed-files`);
 * - the counters — its {@link FileReport} (`accounting.ts` `applyRowResult`).
 * Accounting rule (docs/loss-mask-rules.md "Records that are not written"): every row read ends
 * written, set aside, dropped or errored.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../../formats/detect';
import { normalizeDetailed } from '../../formats/normalize';
import { handAhead, readingIsDefault, rowSourceOf } from '../../formats/normalizedAhead';
import { configuredRows, rowConfigData, rowConfigFor, type RowConfig } from '../../formats/rowSource';
import type { RawRow } from '../../read/readers';
import { RowProcessor } from '../../records/rowProcessor';
import type { RowResult } from '../../records/rowResult';
import { describeError, errorMessage, isInternalError } from '../../errors';
import { appliedConfigOf } from '../../formats/appliedConfig';
import { addDrop, applyRowResult, problemLine } from '../reports/accounting';
import { rowKey } from './batches';
import { RowBatcher, batchRow, rowSizeOf } from './rowBatcher';
import type { DryRunEstimate, FileReport, PrepareHooks, PrepareOptions } from '../contract';
import { estimate } from './dryRun';
import { filePassFor, runOasstFile } from '../inputs/oasstRun';
import { InlineExecutor, type RowBatch, type RowExecutor } from './pool';
import type { Sink } from '../outputs/runOutputs';
import { RecordSpan } from '../outputs/recordSpan';
import { settingsOf } from './runSetup';
import { LengthStatsBuilder } from '../stats';
import { TokenCounter } from '../outputs/tokenCounts';
import type { UniqueIds } from './uniqueIds';

/** A failure reading one input (damaged compression, unreadable file, bad eagle3prep.jsonc): it fails that file, not the whole run. */
export class FileReadError extends Error {}

/** The run's outputs a file writes its rows to. */
export interface RunSinks {
  records: Sink;
  conversations: Sink;
  sharegpt: Sink;
  prompts: Sink;
  problems: Sink;
}

/** What a file's job shares with its run: the run's settings and outputs, and the run-wide state it advances. */
export interface FileJobRun {
  opts: PrepareOptions;
  hooks: PrepareHooks;
  executor: RowExecutor;
  workers: number;
  sinks: RunSinks;
  /** `--dedup`: the keys of the conversations written so far (null without dedup). */
  seen: Set<string> | null;
  uniqueIds: UniqueIds;
  /** Input file → the base of its default ids. */
  idBases: Map<string, string>;
  shard: { index: number; count: number } | null;
  dryRun: { sampleRows: number } | null;
  /** Rows larger than this (bytes) are processed in this thread when the others go to a pool. */
  largeRowBytes: number;
  estimates: DryRunEstimate[];
  /** Set once a file failed and files are not skipped: the run will write nothing, so rows are counted but no longer written. */
  doomed: boolean;
  /** Run-wide row index (across files, every row the reader yields), for sharding. */
  globalRow: number;
  /** Processes large rows in this thread when the others go to a pool (loaded on the first one). */
  inline?: InlineExecutor;
}

/**
 * A file's reader with one row of lookahead: {@link RowCursor.current} is the next row to take until the reader is
 * done. The next row is read when the current one is taken (`shift`) or after it was processed (`advance`).
 */
class RowCursor {
  private constructor(
    private readonly read: () => Promise<IteratorResult<RawRow>>,
    private it: IteratorResult<RawRow>,
  ) {}

  /** A cursor on the reader's first row. */
  static async open(read: () => Promise<IteratorResult<RawRow>>): Promise<RowCursor> {
    return new RowCursor(read, await read());
  }

  /** True once the reader has no more rows. */
  get done(): boolean {
    return this.it.done === true;
  }

  /** The current row (only while not {@link done}). */
  get current(): RawRow {
    return this.it.value as RawRow;
  }

  /** Reads the next row. */
  async advance(): Promise<void> {
    this.it = await this.read();
  }

  /** The current row; the next is read before it is returned. */
  async shift(): Promise<RawRow> {
    const row = this.current;
    await this.advance();
    return row;
  }
}

/** Reads, processes and writes one input file of a run (see the module comment). */
export class FileJob {
  /** Line of the last row the file's reader gave (0 before the first), for the message of a failure. */
  lastLineRead = 0;
  /** Dedup keys this file added (removed again when the file is left out). */
  readonly addedKeys: string[] = [];
  /** Ids of this file's records and prompts (taken back when the file is left out). */
  readonly addedIds: string[] = [];
  readonly lengths = new LengthStatsBuilder();
  /** Token-id counts of this file's records (token_counts.json counts them once the file is known to be kept). */
  readonly counts = new TokenCounter();
  private readonly file: string;
  private lastEmit = 0;
  private bytesTotal = 0;
  private sampled = 0;
  /** Rows of a file-level pass that carry a path (line/element key → held index), and their fates once applied. */
  private readonly leafRows = new Map<string, number>();
  private readonly leafFates = new Map<number, RowResult['fate']>();

  constructor(
    private readonly run: FileJobRun,
    private readonly fileIndex: number,
    readonly rep: FileReport,
  ) {
    this.file = rep.file;
  }

  /**
   * Reads, processes and writes the file; its report gets its counts.
   * @throws FileReadError when the file or its eagle3prep.jsonc cannot be read; the abort reason; anything else ends the run
   */
  async process(): Promise<void> {
    const { hooks } = this.run;
    const config = this.open();
    const project = config.project;
    if (project) hooks.log?.(`  project config: ${project.file}`);
    hooks.log?.(`reading ${this.file}`);
    const objectLines = { raw: false };
    const rows = configuredRows(this.file, config, { signal: hooks.signal, objectLines });
    const cursor = await RowCursor.open(() => this.next(rows));
    const head: RawRow[] = [];
    while (!cursor.done && head.length < DETECT_SAMPLE_SIZE) head.push(await cursor.shift());
    const configData = rowConfigData(config);
    const batchHead: Omit<RowBatch, 'rows'> = {
      file: this.file,
      fileBase: this.run.idBases.get(this.file) ?? basename(this.file),
      normalize: config.reading,
      ...(configData ? { config: configData } : {}),
    };
    const { format, handOver } = this.detect(head, batchHead);
    const batcher = new RowBatcher(this.run.executor, this.run.workers, hooks.signal, (results, bytes) => this.settle(results, bytes));
    const take = (row: RawRow, k: number) => this.take(batcher, batchHead, row, k);
    // OpenAssistant flat exports need the whole file before any row: their trees span it.
    // So do agent CLI event logs: their conversations are parent chains across it (formats/eventLog.ts).
    const pass = filePassFor(format, project);
    // A file-level pass rebuilds or marks its rows: it normalizes them itself.
    if (!pass) handOver();
    // With a pool, the JSON Lines rows after the detection's are parsed by the threads that process them: this thread
    // only splits lines (docs/scale.md "1 → 2 workers"). A file-level pass needs every row's value here.
    objectLines.raw = this.run.workers > 1 && !pass;
    let headLeft = false;
    try {
      if (pass) await this.passOver(pass, head, cursor, take, batcher);
      else headLeft = await this.readInOrder(head, cursor, take);
      await batcher.drain();
    } finally {
      await rows.return(undefined); // closes the file when the run stops early
    }
    this.finish(cursor.done && !headLeft, batcher);
  }

  /**
   * Detects the file's format from its first rows (`head`, the rows that parsed), into its report. With default reading
   * options the rows are normalized as the row path would (`batch`'s file, file name and options; formats/normalizedAhead.ts)
   * and detection reads those outcomes.
   * @returns the format, and `handOver`, which hands those outcomes to the row path (call it only when the rows go to it as they are)
   */
  private detect(head: readonly RawRow[], batch: Omit<RowBatch, 'rows'>): { format: string; handOver: () => void } {
    const parsed = head.filter((r) => r.error === undefined);
    const options = batch.normalize ?? {};
    const ahead = readingIsDefault(options)
      ? parsed.map((r) => {
          const source = rowSourceOf(r, batch.file);
          return { value: r.value, source, detailed: normalizeDetailed(r.value, source, batch.fileBase, options) };
        })
      : undefined;
    const det = detectFormat(
      parsed.map((r) => r.value),
      ahead?.map((a) => a.detailed),
    );
    this.rep.format = det.format;
    this.rep.evidence = det.evidence;
    this.run.hooks.log?.(`  format: ${det.format} — ${det.evidence.join('; ')}`);
    const handOver = () => {
      for (const a of ahead ?? []) handAhead(a.value, a.source, batch.fileBase, options, a.detailed);
    };
    return { format: det.format, handOver };
  }

  /**
   * The rows in file order, the detection rows first, until the end or a dry run's sample is full.
   * @returns true when the sample ended inside the rows read for detection (the file was not read to its end)
   */
  private async readInOrder(head: RawRow[], cursor: RowCursor, take: (row: RawRow, k: number) => Promise<void>): Promise<boolean> {
    const { dryRun } = this.run;
    const sampleDone = () => dryRun !== null && this.sampled >= dryRun.sampleRows;
    let headLeft = false;
    for (const row of head) {
      if (sampleDone()) {
        headLeft = true;
        break;
      }
      await take(row, this.run.globalRow++);
    }
    head.length = 0;
    while (!cursor.done && !sampleDone()) {
      await take(cursor.current, this.run.globalRow++);
      await cursor.advance();
    }
    return headLeft;
  }

  /**
   * A file-level pass over the whole file (formats/oasst.ts, formats/eventLog.ts). problems.jsonl stays in line order,
   * as for every other file: the paths' lines (written as their batches settle) and the message rows' (whose fate
   * follows their paths', applied after them) are gathered and sorted at the end.
   */
  private async passOver(
    pass: NonNullable<ReturnType<typeof filePassFor>>,
    head: RawRow[],
    cursor: RowCursor,
    take: (row: RawRow, k: number) => Promise<void>,
    batcher: RowBatcher,
  ): Promise<void> {
    const { hooks } = this.run;
    this.problemBuffer = [];
    await runOasstFile({
      pass,
      head,
      next: async () => (cursor.done ? undefined : cursor.shift()),
      nextK: () => this.run.globalRow++,
      take,
      drain: () => batcher.drain(),
      apply: (res) => {
        applyRowResult(this.rep, res);
        if (res.fate === 'dropped' || res.fate === 'errored')
          this.problemBuffer?.push({ line: res.line, element: res.element ?? -1, text: problemLine(this.file, res) });
      },
      leafRows: this.leafRows,
      leafFates: this.leafFates,
      rowKey,
      rep: this.rep,
      shard: this.run.shard,
      signal: hooks.signal,
      log: hooks.log,
    });
    const gathered = this.problemBuffer;
    this.problemBuffer = null;
    gathered.sort((a, b) => a.line - b.line || a.element - b.element);
    if (!this.run.doomed) for (const p of gathered) await this.run.sinks.problems.write(p.text);
  }

  /** The file's end: its length statistics and dry-run estimate, the last progress, and its counts in the log. */
  private finish(readToEnd: boolean, batcher: RowBatcher): void {
    const { hooks } = this.run;
    this.rep.lengths = this.lengths.result();
    if (this.run.dryRun) this.run.estimates.push(estimate(this.rep, batcher.lastBytes, this.bytesTotal, readToEnd));
    this.emit(readToEnd ? this.bytesTotal : batcher.lastBytes, true);
    const r = this.rep;
    hooks.log?.(
      `  rows ${r.rowsRead}: written ${r.rowsWritten} (${r.recordsWritten} records), set aside ${r.rowsSetAside}, dropped ${r.rowsDropped}, errored ${r.rowsErrored}`,
    );
  }

  /** The file's size and time, and the eagle3prep.jsonc that applies to it (recorded in its report). @throws FileReadError */
  private open(): RowConfig {
    const { opts } = this.run;
    try {
      const inputStat = statSync(this.file);
      this.bytesTotal = inputStat.size;
      this.rep.input = { size: inputStat.size, mtimeMs: inputStat.mtimeMs };
      // eagle3prep.jsonc (mapping entry, role aliases, field mappings, reading choices) nearest to the file, applied as rows are read.
      const config = rowConfigFor(this.file, { mapping: opts.mapping, answers: opts.answers });
      // What of it applied to this file, for the staleness checks of the views (formats/appliedConfig.ts).
      const applied = opts.mapping ? undefined : appliedConfigOf(this.file);
      if (applied && !('error' in applied)) this.rep.input.projectConfig = applied;
      return config;
    } catch (e) {
      throw new FileReadError((e as Error).message);
    }
  }

  /** The reader's next row; a reader's failure as a {@link FileReadError} naming where it stopped. */
  private async next(rows: AsyncGenerator<RawRow>): Promise<IteratorResult<RawRow>> {
    const signal = this.run.hooks.signal;
    try {
      const r = await rows.next();
      if (!r.done) this.lastLineRead = r.value.line;
      return r;
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      // A reader's own message names the file and what; a JavaScript error inside it also gets where it stopped.
      const at = this.lastLineRead ? `after line ${this.lastLineRead}` : 'at its first row';
      throw new FileReadError(isInternalError(e) ? describeError(e, at) : errorMessage(e));
    }
  }

  /** Progress, at most every 100 ms (`force`: now). */
  private emit(bytesRead: number, force = false): void {
    const { hooks, opts, workers } = this.run;
    const now = Date.now();
    if (!hooks.onProgress || (!force && now - this.lastEmit < 100)) return;
    this.lastEmit = now;
    const r = this.rep;
    hooks.onProgress({
      file: this.file,
      fileIndex: this.fileIndex,
      fileCount: opts.inputs.length,
      rowsRead: r.rowsRead,
      recordsWritten: r.recordsWritten,
      bytesRead,
      bytesTotal: this.bytesTotal,
      tokensWritten: r.totalTokens,
      rowsDropped: r.rowsDropped,
      rowsErrored: r.rowsErrored,
      workers,
    });
  }

  /** Sends row `row` (run-wide index `k`, the shard key; its value is the one to normalize) to be processed. */
  private async take(batcher: RowBatcher, head: Omit<RowBatch, 'rows'>, row: RawRow, k: number): Promise<void> {
    const { shard, hooks, workers, opts } = this.run;
    hooks.signal?.throwIfAborted();
    if (shard) {
      this.rep.rowsInFile!++;
      if (k % shard.count !== shard.index) {
        batcher.lastBytes = row.bytes; // other shards' rows do not count toward the next row's size
        return;
      }
    }
    this.sampled++;
    const rowBytes = rowSizeOf(row, batcher.lastBytes);
    if (workers > 1 && rowBytes > this.run.largeRowBytes) {
      // A large row: processed here, in order (the batches before it stay in flight).
      const inline = (this.run.inline ??= new InlineExecutor(new RowProcessor(settingsOf(opts))));
      const b: RowBatch = { ...head, rows: [batchRow(row)] };
      await batcher.addAlone(() => inline.run(b), row.bytes);
      return;
    }
    await batcher.add(head, row, rowBytes);
  }

  /** problems.jsonl lines gathered while a file-level pass runs (sorted by line when it ends); null otherwise. */
  private problemBuffer: { line: number; element: number; text: string }[] | null = null;

  /** One problems.jsonl line: written, or gathered while a file-level pass runs. */
  private async writeProblem(line: number, element: number | undefined, text: string): Promise<void> {
    if (this.problemBuffer) this.problemBuffer.push({ line, element: element ?? -1, text });
    else await this.run.sinks.problems.write(text);
  }

  /**
   * Applies one batch's results in order: dedup, unique ids, the report, the outputs. A pool worker's record lines
   * (bytes, records/rowResult.ts packRecordLines) lie one after another in one buffer: the lines of rows written in a
   * row are written together, as one span of it ({@link RecordSpan}).
   */
  private async settle(results: RowResult[], bytes: number): Promise<void> {
    const { seen, sinks } = this.run;
    const span = new RecordSpan(sinks.records);
    for (const res of results) {
      if (this.leafRows.size) {
        const i = this.leafRows.get(rowKey(res));
        if (i !== undefined) this.leafFates.set(i, res.fate);
      }
      if (seen && res.dedupKey !== undefined && (res.fate === 'written' || res.fate === 'setAside') && (await this.dropRepeat(res, seen))) continue;
      this.addedIds.push(...this.run.uniqueIds.apply(res));
      applyRowResult(this.rep, res, this.lengths, this.counts);
      if (this.run.doomed) continue;
      if (res.recordBytes) for (const b of res.recordBytes) await span.add(b);
      else {
        await span.flush();
        for (const line of res.records) await sinks.records.write(line);
      }
      for (const c of res.conversations ?? []) {
        await sinks.conversations.write(c.messages);
        if (c.sharegpt !== undefined) await sinks.sharegpt.write(c.sharegpt);
      }
      if (res.prompt) await sinks.prompts.write(res.prompt);
      if (res.fate === 'dropped' || res.fate === 'errored') await this.writeProblem(res.line, res.element, problemLine(this.file, res));
    }
    await span.flush();
    this.emit(bytes);
  }

  /**
   * `--dedup`: true (the row counted as dropped `duplicate`) when every conversation of the row was written or set
   * aside earlier in the run; else its new keys are recorded and its repeats noted `duplicate_conversation_kept`.
   */
  private async dropRepeat(res: RowResult, seen: Set<string>): Promise<boolean> {
    // One 16-character key per conversation of the row (several when the row holds several conversations).
    const keys = res.dedupKey!.match(/[\s\S]{16}/g) ?? [res.dedupKey!];
    const repeated = keys.filter((k) => seen.has(k)).length;
    if (repeated === keys.length) {
      // The same conversation was written (or set aside) earlier in this run: counted as dropped, not written again.
      this.rep.rowsRead++;
      for (const n of res.notes) this.rep.notes[n] = (this.rep.notes[n] ?? 0) + 1;
      addDrop(this.rep, res.line, 'duplicate');
      if (!this.run.doomed)
        await this.writeProblem(res.line, res.element, problemLine(this.file, { ...res, fate: 'dropped', reason: 'duplicate', message: undefined }));
      return true;
    }
    for (const k of keys) {
      if (seen.has(k)) continue;
      seen.add(k);
      this.addedKeys.push(k);
    }
    // A row holding new conversations beside ones already written is written whole: its repeats are counted, visibly.
    for (let i = 0; i < repeated; i++) res.notes.push('duplicate_conversation_kept');
    return false;
  }
}
