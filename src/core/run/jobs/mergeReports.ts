/**
 * `eagle3-prep merge-reports`: combines the reports of the N shard runs of one
 * job (`prepare --shard I/N`, see `PrepareOptions.shard`) into one report, and
 * checks the accounting across shards: the N reports are shards 0…N-1 of the
 * same count, made with the same tokenizer (hash), mask policy, max length and
 * template kwargs over the same input files; for every file the shards agree
 * on its row count and their rows read add up to it; every shard's rows add up
 * (written + set aside + dropped + errored = read). Optionally it also merges
 * the shards' `tokenized_data.jsonl` and `prompts_to_generate.jsonl` back into
 * input order (a k-way merge on each line's `source` file and line).
 */
import { createReadStream, existsSync, rmdirSync, statSync } from 'node:fs';
import { ownEntry } from '../../ownEntry';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { AtomicOutput } from '../outputs/output';
import {
  OUTPUT_FILES,
  outputPathsIn,
  PROBLEMS_FILE,
  RECORDS_DIR,
  recordsPathIn,
  SPECULATORS_DIR,
  TOKEN_COUNTS_FILE,
  TOKENIZED_DATA_PARQUET,
} from '../outputFiles';
import { SpeculatorsDatasetOutput } from '../outputs/speculatorsOutput';
import { filePromptLines, promptLines, settlePromptsWritten } from '../reports/promptLines';
import { ParquetRecordsOutput, removeStaleRecordFiles, type ParquetMadeBy } from '../outputs/parquetOutput';
import {
  MergeError,
  mergeOutputLines,
  mergeParquetRecords,
  mergeProblemLines,
  relocateShardReport,
  shardsParquetMadeBy,
  RepeatedIds,
  requireShardFiles,
} from './shardOutputs';
import type { FileReport, PrepareResult } from '../contract';
import type { RowShape } from '../../records/shapes';
import { computeTotals, emptyFileReport, fileFailure, leaveOut, runFailures, throughputOf } from '../reports/accounting';
import { readReport, writeReports } from '../reports/report';
import { applyStatus } from '../reports/status';
import { reportedSettings, runSettingsOfReport } from '../runSettings';
import { mergeLengthStats } from '../stats';
import { readTokenCounts, TokenCounter, tokenCountsJson } from '../outputs/tokenCounts';
import { writeFileAtomic } from '../outputs/output';
import { addTrainerCuts, emptyTrainerCuts } from '../../trainers/trainers';

/** How a merge judges the merged files: prepare's `--allow-empty` and `--skip-failed-files`. */
export interface MergePolicy {
  /** A file that yields no record and no prompt across the shards does not fail the merge. */
  allowEmpty?: boolean;
  /** A failing file is left out of the merged outputs (listed as skipped) instead of failing the merge. */
  skipFailedFiles?: boolean;
}

/**
 * Reads a shard's `report.json` from a path given as the report file or the shard's output folder, with its output
 * paths taken to be in the folder it was read from (the folder may have been moved or copied since the shard ran;
 * `relocateShardReport`).
 * @throws MergeError naming the path when it is missing or not a report, or names an output outside its folder
 */
export function readShardReport(path: string): PrepareResult {
  const p = existsSync(path) && statSync(path).isDirectory() ? join(path, OUTPUT_FILES.reportJson) : path;
  if (!existsSync(p)) throw new MergeError(`${p}: no such report (give a shard's output folder or its report.json)`);
  let report: PrepareResult;
  try {
    report = readReport(p).report;
  } catch (e) {
    throw new MergeError((e as Error).message);
  }
  return relocateShardReport(report, dirname(resolve(p)), p);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Combines N shard results into the result of the whole job.
 *
 * Counters are summed; drop lines and error lines are merged in line order and
 * cut to the first 10 per reason and the first 50 errors (as one run keeps
 * them); notes and unread fields are summed (their lines merged like drop lines);
 * `elapsedMs` is the slowest shard's.
 *
 * The policy words are prepare's (`accounting.ts` `fileFailure`): a file that yields no record and no prompt
 * across the shards fails the merge unless `allowEmpty`; with `skipFailedFiles` a failing file is left out
 * (`skippedFiles`, its rows not in the merged outputs) and the merge fails only when every file failed.
 *
 * @param reports the N shard reports, in any order
 * @param outDir the merged run's output folder (where `report.json` goes)
 * @returns the merged result; `ok` false with `failures` when a file fails and is not skipped
 * @throws MergeError when the reports are not the N shards of one job or their rows do not add up
 */
export function mergeShardResults(reports: PrepareResult[], outDir: string, opts: MergePolicy = {}): PrepareResult {
  const n = checkShards(reports);
  const first = reports[0];
  const ordered = [...reports].sort((a, b) => a.shard!.index - b.shard!.index);
  const files: FileReport[] = first.files.map((f0, fi) =>
    mergeFileReports(
      f0,
      ordered.map((r) => r.files[fi]),
    ),
  );
  const out = resolve(outDir);
  const skippedFiles = opts.skipFailedFiles ? leaveOutFailed(files, opts) : [];
  const failures = runFailures(files, opts);
  if (files.length > 0 && skippedFiles.length === files.length) failures.push(`every input failed; nothing to write (${skippedFiles.length} skipped)`);
  const failed = new Set(files.filter((f) => runFailures([f], opts).length > 0).map((f) => f.file));
  const { status: _s, warnings: _w, skippedFiles: _k, ...base } = first;
  const merged: PrepareResult = {
    ...base,
    ok: failures.length === 0,
    failures,
    ...(skippedFiles.length ? { skippedFiles } : {}),
    outDir: out,
    outputs: outputPathsIn(out),
    files,
    totals: computeTotals(files),
    elapsedMs: Math.max(...reports.map((r) => r.elapsedMs)),
    shard: { index: 0, count: n, merged: true },
    ...(base.policy ? { policy: { ...base.policy, skipFailedFiles: opts.skipFailedFiles === true } } : {}),
  };
  merged.throughput = throughputOf(merged.totals, merged.elapsedMs);
  applyStatus(merged, failed);
  return merged;
}

/**
 * Checks that `reports` are the N shards of one job: each a shard run of the same count, each index once, the same
 * settings and input files as the first, no file skipped and none failed by a shard.
 * @returns N
 * @throws MergeError naming the first report that does not fit
 */
function checkShards(reports: readonly PrepareResult[]): number {
  if (reports.length === 0) throw new MergeError('no report to merge');
  const first = reports[0];
  const n = first.shard?.count;
  if (!first.shard || n === undefined) throw new MergeError(`${first.outDir}: not a shard run (no "shard" in report.json; run prepare --shard I/N)`);
  if (reports.length !== n) throw new MergeError(`${reports.length} reports given for ${n} shards`);
  const seen = new Map<number, string>();
  for (const r of reports) {
    if (!r.shard || r.shard.merged) throw new MergeError(`${r.outDir}: not a shard run`);
    if (r.shard.count !== n) throw new MergeError(`${r.outDir}: shard of ${r.shard.count}, others of ${n}`);
    const dup = seen.get(r.shard.index);
    if (dup) throw new MergeError(`shard ${r.shard.index}/${n} given twice (${dup}, ${r.outDir})`);
    seen.set(r.shard.index, r.outDir);
    if (!sameJson(shardSettings(r), shardSettings(first))) {
      throw new MergeError(
        `${r.outDir}: made with other settings than ${first.outDir} (${JSON.stringify(shardSettings(r))} vs ${JSON.stringify(shardSettings(first))})`,
      );
    }
    if (
      !sameJson(
        r.files.map((f) => f.file),
        first.files.map((f) => f.file),
      )
    ) {
      throw new MergeError(`${r.outDir}: other input files than ${first.outDir}`);
    }
    if (r.skippedFiles?.length)
      throw new MergeError(`${r.outDir}: the shard skipped files (--skip-failed-files): ${r.skippedFiles.map((x) => x.file).join(', ')}`);
    const bad = runFailures(r.files, { allowEmpty: true });
    if (bad.length) throw new MergeError(`${r.outDir}: ${bad.join('; ')}`);
  }
  return n;
}

/** The settings every shard of one job shares (compared as JSON). */
function shardSettings(x: PrepareResult) {
  return {
    hash: x.tokenizer.hash,
    mask: x.mask,
    reasoning: x.reasoning ?? 'keep',
    maxLength: x.maxLength,
    truncate: x.truncate,
    long: x.long,
    grouping: x.grouping,
    minTrainableTokens: x.minTrainableTokens,
    kwargs: x.templateKwargs,
    ...reportedSettings(runSettingsOfReport(x)),
  };
}

/**
 * One input file's report merged from its shards' (`parts`, in shard order): the row counts must agree and add up,
 * and the input must be the same bytes in every shard.
 * @throws MergeError when they do not
 */
function mergeFileReports(f0: FileReport, parts: readonly FileReport[]): FileReport {
  const inFile = parts[0].rowsInFile;
  for (const p of parts) {
    if (p.rowsInFile === undefined || p.rowsInFile !== inFile)
      throw new MergeError(`${f0.file}: the shards saw different row counts (${parts.map((x) => x.rowsInFile).join(', ')})`);
  }
  const { shapes: _none, trainerCuts: _cuts, ...empty } = emptyFileReport(f0.file);
  // Shapes: summed while every shard counted them; a shard of an older version leaves them uncounted (every template finding counts).
  const everyShapes = parts.every((q) => q.shapes);
  const m: FileReport = {
    ...empty,
    format: f0.format,
    evidence: f0.evidence,
    ...(everyShapes ? { shapes: {} } : {}),
    ...(f0.input ? { input: f0.input } : {}),
  };
  // Every shard must have read the same bytes of the input (size and mtime), or the rows were not one file.
  for (const p of parts) {
    if (f0.input && p.input && (p.input.size !== f0.input.size || p.input.mtimeMs !== f0.input.mtimeMs))
      throw new MergeError(`${f0.file}: the input changed between shards (size/mtime differ)`);
  }
  for (const p of parts) addShardPart(m, p, everyShapes);
  if (m.rowsRead !== inFile) throw new MergeError(`${f0.file}: the shards read ${m.rowsRead} rows, the file has ${inFile}`);
  if (parts.every((p) => p.lengths)) m.lengths = mergeLengthStats(parts.map((p) => p.lengths!));
  // Trainer cuts: summed while every shard computed them (shards of older versions did not).
  if (parts.every((p) => p.trainerCuts)) m.trainerCuts = parts.reduce((a, p) => addTrainerCuts(a, p.trainerCuts!), emptyTrainerCuts());
  settlePromptsWritten(m);
  return m;
}

/** Adds one shard's report of a file to the merged one: counters summed, drop / error / unread lines merged in line order and cut as one run cuts them. */
function addShardPart(m: FileReport, p: FileReport, everyShapes: boolean): void {
  for (const k of ['rowsRead', 'rowsWritten', 'recordsWritten', 'rowsSetAside', 'rowsDropped', 'rowsErrored', 'trainableTokens', 'totalTokens'] as const)
    m[k] += p[k];
  // --format messages shards: their conversation lines add up as their rows do.
  for (const k of ['conversationsWritten', 'sharegptWritten'] as const) if (p[k] !== undefined) m[k] = (m[k] ?? 0) + p[k]!;
  m.promptsWritten = (m.promptsWritten ?? 0) + filePromptLines({ ...p, skipped: undefined });
  for (const [code, c] of Object.entries(p.notes)) m.notes[code] = (m.notes[code] ?? 0) + c;
  if (everyShapes) for (const [sh, n] of Object.entries(p.shapes!)) (m.shapes ??= {})[sh as RowShape] = (m.shapes[sh as RowShape] ?? 0) + (n ?? 0);
  // Reports written before unread fields were counted have none.
  for (const [field, u] of Object.entries(p.unreadFields ?? {}))
    mergeLines(
      ownEntry((m.unreadFields ??= {}), field, () => ({ count: 0, lines: [] as number[] })),
      u,
    );
  for (const [reason, d] of Object.entries(p.dropped)) mergeLines((m.dropped[reason] ??= { count: 0, lines: [] }), d);
  for (const [reason, d] of Object.entries(p.errorReasons ?? {})) mergeLines(((m.errorReasons ??= {})[reason] ??= { count: 0, lines: [] }), d);
  m.errors = [...m.errors, ...p.errors].sort((a, b) => a.line - b.line).slice(0, 50);
}

/** Adds a count and its example lines to `t`: the lines in order, the first 10 kept. */
function mergeLines(t: { count: number; lines: number[] }, d: { count: number; lines: number[] }): void {
  t.count += d.count;
  t.lines = [...t.lines, ...d.lines].sort((a, b) => a - b).slice(0, 10);
}

/** `--skip-failed-files`: each failing file left out of the merged outputs. @returns the files left out, with why */
function leaveOutFailed(files: FileReport[], opts: MergePolicy): { file: string; reason: string }[] {
  const skippedFiles: { file: string; reason: string }[] = [];
  for (const f of files) {
    const why = fileFailure(f, opts);
    if (!why) continue;
    f.failure = why;
    leaveOut(f);
    skippedFiles.push({ file: f.file, reason: why });
  }
  return skippedFiles;
}

/** The record formats every shard wrote (`outputs.format`; reports made before it wrote JSONL). */
function commonFormats(reports: PrepareResult[]): { jsonl: boolean; parquet: boolean } {
  const has = (r: PrepareResult, f: 'jsonl' | 'parquet') => (r.outputs.format ?? 'jsonl') === f || r.outputs.format === 'both';
  return { jsonl: reports.every((r) => has(r, 'jsonl')), parquet: reports.every((r) => has(r, 'parquet') && r.outputs.tokenizedDataParquet) };
}

/**
 * Merges shard reports (and with `data`, the shards' outputs) into `outDir`.
 * Writes `report.json` / `report.md` of the merged run atomically. A merge that fails (`ok` false:
 * a file fails and `skipFailedFiles` is off) writes nothing, as a failed `prepare`: `outDir` keeps
 * its previous files and `outputs.written` is empty.
 * @param paths shard output folders or their `report.json` files
 * @throws MergeError as {@link mergeShardResults}; when `data` and a shard's line counts disagree with its report
 */
export async function mergeReports(paths: string[], outDir: string, opts: MergePolicy & { data?: boolean; signal?: AbortSignal } = {}): Promise<PrepareResult> {
  const reports = paths.map(readShardReport);
  const merged = mergeShardResults(reports, outDir, opts);
  // --out must not be one of the shards' folders: the merge would replace the outputs it reads.
  for (const r of reports) {
    if (resolve(r.outDir) === merged.outDir)
      throw new MergeError(`--out ${outDir} is the output folder of shard ${r.shard?.index}; merge into a folder of its own`);
  }
  if (!merged.ok) {
    merged.outputs.written = [];
    delete merged.tokenCounts;
    return merged;
  }
  merged.outputs.written = [merged.outputs.reportJson, merged.outputs.reportMd];
  if (opts.data) await mergeData(reports, merged, opts.signal);
  else {
    // Without --data only the reports are written here; the records stay in the shards' folders.
    delete merged.outputs.format;
    delete merged.outputs.tokenizedDataParquet;
    delete merged.outputs.speculatorsDataset;
  }
  await mergeTokenCounts(reports, merged);
  await writeReports(merged);
  return merged;
}

/**
 * `--data`: the shards' records (each format every shard wrote, and the speculators dataset of a job made for it),
 * prompts and problems merged into the merged run's folder in input order, each checked against the reports before
 * any replaces anything there; ids two shards both used noted per file. Sets `merged.outputs` (format, paths, written).
 * @throws MergeError for shards of `--format messages`, shards sharing no record format, or outputs that disagree
 *   with their reports; then nothing is written
 */
async function mergeData(reports: PrepareResult[], merged: PrepareResult, signal: AbortSignal | undefined): Promise<void> {
  const order = merged.files.map((f) => f.file);
  const skip = new Set(merged.files.filter((f) => f.skipped).map((f) => f.file));
  const formats = mergedFormats(reports, merged);
  requireShardFiles(reports, formats);
  // The merged Parquet file says what made it as a single run's does: the shards' footer.
  const madeBy = formats.parquet ? await shardsParquetMadeBy(reports.map((r) => r.outputs.tokenizedDataParquet!)) : { metadata: {} };
  const outs = openMergeOutputs(merged, formats, madeBy);
  const repeated = new RepeatedIds();
  try {
    await mergeRecordFiles(reports, merged, outs, order, skip, repeated, signal);
    const nPrompt = await mergeOutputLines(
      reports.map((r) => r.outputs.promptsToGenerate),
      order,
      outs.prompts,
      undefined,
      undefined,
      signal,
    );
    const expected = promptLines(merged);
    if (nPrompt !== expected) throw new MergeError(`the shards' prompts_to_generate.jsonl hold ${nPrompt} prompts, their reports ${expected}`);
    await mergeProblemLines(
      reports.flatMap((r) => (r.outputs.problems ? [r.outputs.problems] : [])),
      order,
      outs.problems,
      skip,
      signal,
    );
    // The last moment a cancel stops the merge: past it, the commits all finish (signals.ts).
    signal?.throwIfAborted();
    await outs.commit();
    // A record file of the other format left by an earlier merge into --out would not match these records.
    removeStaleRecordFiles(merged.outDir, merged.outputs.format, { speculators: outs.speculators !== null });
  } catch (e) {
    await outs.abort();
    throw e;
  }
  // Ids two shards both used: one run would have renamed the later ones (<id>~2); said per file, with the remedy.
  if (repeated.byFile.size) {
    for (const f of merged.files) {
      const n = repeated.byFile.get(f.file);
      if (n) f.notes.duplicate_id_across_shards = (f.notes.duplicate_id_across_shards ?? 0) + n;
    }
    applyStatus(merged, new Set(merged.files.filter((f) => f.status === 'failed').map((f) => f.file)));
  }
  merged.outputs.written = outs.written(merged);
}

/**
 * The record formats the merge writes: each one every shard wrote (set in `merged.outputs`).
 * @throws MergeError for shards of `--format messages` (no records) or shards that share no format
 */
function mergedFormats(reports: PrepareResult[], merged: PrepareResult): { jsonl: boolean; parquet: boolean } {
  const formats = commonFormats(reports);
  if (reports.some((r) => r.outputs.format === 'messages'))
    throw new MergeError(
      'merge-reports --data merges records; shards of --format messages wrote conversations (conversations.jsonl): concatenate those files (rows then not in input order), or merge without --data',
    );
  if (!formats.jsonl && !formats.parquet)
    throw new MergeError('the shards wrote their records in different formats (--format): merge needs one format every shard wrote');
  merged.outputs.format = formats.jsonl && formats.parquet ? 'both' : formats.parquet ? 'parquet' : 'jsonl';
  if (formats.parquet) merged.outputs.tokenizedDataParquet = recordsPathIn(merged.outDir, TOKENIZED_DATA_PARQUET);
  else delete merged.outputs.tokenizedDataParquet;
  return formats;
}

/** The merged run's staged outputs: committed together, or aborted together with the folders they created. */
interface MergeOutputs {
  data: AtomicOutput | null;
  parquet: ParquetRecordsOutput | null;
  prompts: AtomicOutput;
  problems: AtomicOutput;
  speculators: SpeculatorsDatasetOutput | null;
  commit(): Promise<void>;
  abort(): Promise<void>;
  /** What a commit wrote (`outputs.written`), in the order the summary names them. */
  written(merged: PrepareResult): string[];
}

/**
 * Opens the merged run's outputs as temporary files (sets their paths in `merged.outputs`). The folders they create
 * are removed again when the merge fails (a failed merge writes nothing); those that were there stay.
 */
function openMergeOutputs(merged: PrepareResult, formats: { jsonl: boolean; parquet: boolean }, madeBy: ParquetMadeBy): MergeOutputs {
  const made = [join(merged.outDir, RECORDS_DIR), join(merged.outDir, SPECULATORS_DIR), merged.outDir].filter((d) => !existsSync(d));
  const data = formats.jsonl ? new AtomicOutput(merged.outputs.tokenizedData) : null;
  const parquet = formats.parquet
    ? new ParquetRecordsOutput(merged.outputs.tokenizedDataParquet!, { createdBy: madeBy.createdBy ?? 'eagle3-prep', metadata: madeBy.metadata })
    : null;
  const prompts = new AtomicOutput(merged.outputs.promptsToGenerate);
  merged.outputs.problems = join(merged.outDir, PROBLEMS_FILE);
  const problems = new AtomicOutput(merged.outputs.problems);
  // A job made for speculators (--trainer speculators) gets its dataset folder from the merged records too.
  if (merged.trainer === 'speculators' && data) merged.outputs.speculatorsDataset = join(merged.outDir, SPECULATORS_DIR);
  else delete merged.outputs.speculatorsDataset;
  const speculators = merged.outputs.speculatorsDataset ? new SpeculatorsDatasetOutput(merged.outputs.speculatorsDataset) : null;
  return {
    data,
    parquet,
    prompts,
    problems,
    speculators,
    commit: async () => {
      await parquet?.commit();
      await data?.commit();
      await prompts.commit();
      await problems.commit();
      await speculators?.commit();
    },
    abort: async () => {
      for (const o of [data, parquet, prompts, problems, speculators]) await o?.abort().catch(() => {});
      for (const d of made)
        try {
          rmdirSync(d); // only an empty folder
        } catch {
          /* not there, or not empty */
        }
    },
    written: (m) => [
      ...(data ? [data.path] : []),
      ...(parquet ? [parquet.path] : []),
      ...(speculators?.paths() ?? []),
      prompts.path,
      problems.path,
      m.outputs.reportJson,
      m.outputs.reportMd,
    ],
  };
}

/**
 * The shards' records merged in input order into the JSONL (and from it the speculators dataset) and the Parquet
 * file, each checked against the reports' record count; the JSONL's ids go to `repeated`.
 * @throws MergeError when a count disagrees
 */
async function mergeRecordFiles(
  reports: PrepareResult[],
  merged: PrepareResult,
  outs: MergeOutputs,
  order: string[],
  skip: ReadonlySet<string>,
  repeated: RepeatedIds,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { data, parquet, speculators } = outs;
  if (data) {
    const nRec = await mergeOutputLines(
      reports.map((r) => r.outputs.tokenizedData),
      order,
      data,
      skip,
      repeated,
      signal,
    );
    if (nRec !== merged.totals.recordsWritten)
      throw new MergeError(`the shards' tokenized_data.jsonl hold ${nRec} records, their reports ${merged.totals.recordsWritten}`);
    if (speculators) {
      const staged = await data.closeForReading();
      for await (const line of createInterface({ input: createReadStream(staged, { encoding: 'utf8' }), crlfDelay: Infinity }))
        if (line) {
          signal?.throwIfAborted();
          await speculators.write(line);
        }
    }
  }
  if (parquet) {
    const nRec = await mergeParquetRecords(
      reports.map((r) => r.outputs.tokenizedDataParquet!),
      order,
      parquet,
      skip,
      signal,
    );
    if (nRec !== merged.totals.recordsWritten)
      throw new MergeError(`the shards' tokenized_data.parquet hold ${nRec} records, their reports ${merged.totals.recordsWritten}`);
    await parquet.finish();
  }
}

/** token_counts.json: the shards' counts added (when every shard wrote one); named in `outputs.written` before the reports. */
async function mergeTokenCounts(reports: PrepareResult[], merged: PrepareResult): Promise<void> {
  const countFiles = reports.map((r) => r.tokenCounts);
  if (countFiles.every((f): f is string => typeof f === 'string' && existsSync(f))) {
    const counter = new TokenCounter();
    for (const f of countFiles) counter.addFile(readTokenCounts(f));
    const first = readTokenCounts(countFiles[0]);
    merged.tokenCounts = join(merged.outDir, TOKEN_COUNTS_FILE);
    await writeFileAtomic(merged.tokenCounts, tokenCountsJson(counter.result(first.tokenizer, first.modelVocabSize, first.tokenizerSize ?? null)));
    merged.outputs.written!.splice(merged.outputs.written!.length - 2, 0, merged.tokenCounts);
  } else delete merged.tokenCounts;
}
