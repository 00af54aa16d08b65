/**
 * The `prepare` job: read → detect → normalize → render → mask → tokenize → write. This module is
 * the run: its outputs, the fail-early check, the files in order (each one a run/prepare/fileJob.ts
 * `FileJob`), leaving a failed file out, the all-or-nothing commit. The option/result shapes are the run contract (`./contract.ts`). Accounting rule (docs/loss-mask-rules.md "Records that are not
 * written"): every row read ends written, set aside for generation, dropped
 * with a reason code, or errored; the four add up to the rows read, per file.
 */
import { rmdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { AtomicOutput, checkOutputDir, removeCreatedIfEmpty, removeStaleTemps, writeFileAtomic } from '../outputs/output';
import { removeStaleRecordFiles } from '../outputs/parquetOutput';
import { KEPT_REASON, RECORDS_DIR, removedReason, SPECULATORS_DIR } from '../outputFiles';
import { version as PACKAGE_VERSION } from '../../../../package.json';
import { writeReports } from '../reports/report';
import { targetSizesOf, TokenCounter, tokenCountsJson } from '../outputs/tokenCounts';
import { longPolicyOf } from '../../records/rowTraceTypes';
import type { MaskPolicy } from '../../types';
import { emptyFileReport, fileFailure, leaveOut, type FailurePolicy } from '../reports/accounting';
import { fileWarnings } from '../reports/status';
import { UniqueIds } from './uniqueIds';
import { defaultIdBases } from '../inputs/inputs';
import type { FileReport, PrepareHooks, PrepareOptions, PrepareResult, RunSetup } from '../contract';
import { NULL_SINK, parquetMetadata, planOutputs, RecordOutputs, settle } from '../outputs/runOutputs';
import { startExecutor } from './runSetup';
import { describeError, isInternalError } from '../../errors';
import { notProcessedFailure, preflightFile } from '../inputs/preflight';
import { invalidRunSetting } from '../runSettings';
import { assembleResult } from './runResult';
import { FileJob, FileReadError, type FileJobRun, type RunSinks } from './fileJob';
import { startMemTrace } from './memTrace';
import type { OutputFormat } from '../../records/rowResult';

/** A run whose outputs are written to temporary files, not yet in place. */
export interface StagedRun {
  result: PrepareResult;
  /** Renames the outputs into place and writes report.json / report.md. Call only when `result.ok`. */
  commit(): Promise<void>;
  /** Discards the temporary outputs; the output folder keeps its previous files. */
  abort(): Promise<void>;
}

/**
 * Runs `prepare` over the inputs into one output folder.
 *
 * Writes `tokenized_data.jsonl` (one {@link TokenizedRecord} per line, input
 * order), `prompts_to_generate.jsonl` (`{"id", "source", "messages", "tools"?}`
 * per prompt-only row), `report.json` ({@link PrepareResult}, snake_case on
 * disk: `report.ts`) and `report.md`, each atomically (temp file + rename;
 * nothing is left half-written on error or cancel). Inputs are only read. A
 * failed run writes nothing: the output folder keeps its previous files.
 *
 * @returns the result; `ok` is false (with `failures`) when a file fails
 *   (`accounting.ts` `fileFailure`) and `skipFailedFiles` is off, or when every file failed.
 * @throws TokenizerLoadError for an unusable tokenizer folder; OutputError for
 *   an output folder that cannot be written (checked before any row is read);
 *   the signal's reason when aborted.
 */
export async function prepare(options: PrepareOptions, hooks: PrepareHooks = {}): Promise<PrepareResult> {
  const staged = await prepareStaged(options, hooks);
  if (staged.result.ok && !staged.result.dryRun) await staged.commit();
  else await staged.abort();
  return staged.result;
}

/**
 * {@link prepare} without the final step: the outputs stay in temporary files
 * until `commit()` (or are discarded by `abort()`), so that a command running
 * several output folders commits all of them or none.
 */
export async function prepareStaged(options: PrepareOptions, hooks: PrepareHooks = {}): Promise<StagedRun> {
  const t0 = Date.now();
  const opts = { mask: 'assistant' as MaskPolicy, truncate: false, grouping: 'exact' as const, ...options };
  const long = longPolicyOf(opts);
  const invalid = invalidRunSetting(opts);
  if (invalid) throw new Error(invalid);
  const { outDir, format, outputs, tokenCountsPath } = planOutputs(opts);
  const shard = checkedShard(opts.shard ?? null);
  const dryRun = opts.dryRun ?? null;
  /** The first output folder this run created (removed again when the run writes nothing). */
  const createdDir = dryRun ? undefined : readyOutputDir(outDir, hooks);
  const { executor, setup, workers } = await startExecutorOrCleanUp(opts, hooks, outDir, createdDir);
  const tok = setup.tokenizer;
  const templateCheck = setup.templateCheck;
  if (shard) hooks.log?.(`shard ${shard.index}/${shard.count}: rows whose run-wide index k has k mod ${shard.count} = ${shard.index}`);
  const sinks = openSinks(outputs, format, dryRun !== null, tok, opts);
  /** Token-id counts of the files kept (token_counts.json); each file counts on its own until it is known to be kept. */
  const counts = new TokenCounter();
  const policy = { allowEmpty: opts.allowEmpty || (shard !== null && shard.count > 1), strict: opts.strict, maxErrorRate: opts.maxErrorRate };
  const run = fileJobRun(opts, hooks, { executor, workers }, sinks, shard, dryRun);
  /** The file being processed, for the memory trace (EAGLE3_MEM_TRACE, memTrace.ts). */
  const traced = { file: '' };
  const stopTrace = startMemTrace('main', () => basename(traced.file));
  let processed: { files: FileReport[]; notProcessed: string[] };
  try {
    // (inside the try: a cancel during the first look cleans up like one during the rows)
    processed = await processInputs(run, outputs, { policy, templateCheck, counts }, traced);
    // A cancel that arrives after the last row still cancels: nothing is committed.
    hooks.signal?.throwIfAborted();
  } catch (e) {
    // Cleanup never replaces the run's error, and every temporary file is removed even when a step of it fails.
    stopTrace();
    await settle(executor.close());
    await abortOutputs(sinks, outDir, createdDir);
    throw e;
  }
  await executor.close();
  stopTrace();

  const { files, notProcessed } = processed;
  const result = await assembleResult({
    t0,
    opts,
    long,
    outDir,
    format,
    outputs,
    tokenCountsPath,
    tok,
    templateCheck,
    files,
    policy,
    shard,
    dryRun,
    estimates: run.estimates,
  });
  if (notProcessed.length) {
    result.notProcessed = notProcessed;
    result.failures.push(notProcessedFailure(notProcessed));
  }
  // What a commit writes (a failed or dry run writes nothing).
  outputs.written = result.ok && !dryRun ? writtenPaths(outputs, format, sinks, tokenCountsPath) : [];
  return stagedRun({ result, opts, hooks, sinks, outDir, createdDir, format, outputs, tokenCountsPath, counts, tok, tokenizerSize: setup.tokenizerSize });
}

/**
 * `--shard I/N` as given, checked.
 * @throws Error when the index is not an integer in [0, count) or the count not a positive integer
 */
function checkedShard(shard: NonNullable<PrepareOptions['shard']> | null): { index: number; count: number } | null {
  if (shard && (!Number.isInteger(shard.count) || shard.count < 1 || !Number.isInteger(shard.index) || shard.index < 0 || shard.index >= shard.count)) {
    throw new Error(`shard ${shard.index}/${shard.count}: the index must be an integer in [0, count)`);
  }
  return shard;
}

/**
 * Before anything else: an unwritable folder fails in one line, not after every row was processed. Removes the
 * temporary files an interrupted run left.
 * @returns the first output folder this run created, if any
 * @throws OutputError for a folder that cannot be written
 */
function readyOutputDir(outDir: string, hooks: PrepareHooks): string | undefined {
  const createdDir = checkOutputDir(outDir);
  const removed = [outDir, join(outDir, RECORDS_DIR), join(outDir, SPECULATORS_DIR)].flatMap((d) => removeStaleTemps(d));
  if (removed.length) hooks.log?.(`  removed ${removed.length} temporary file(s) left by an interrupted run: ${removed.map((p) => basename(p)).join(', ')}`);
  return createdDir;
}

/** {@link startExecutor}; a tokenizer that does not load leaves no empty folder behind. */
async function startExecutorOrCleanUp(
  opts: PrepareOptions,
  hooks: PrepareHooks,
  outDir: string,
  createdDir: string | undefined,
): ReturnType<typeof startExecutor> {
  try {
    return await startExecutor(opts, hooks);
  } catch (e) {
    removeCreatedIfEmpty(outDir, createdDir);
    throw e;
  }
}

/** What every file's job shares (run/prepare/fileJob.ts); `doomed`, `globalRow` and `inline` are run-wide state the jobs advance. */
function fileJobRun(
  opts: PrepareOptions,
  hooks: PrepareHooks,
  started: Pick<Awaited<ReturnType<typeof startExecutor>>, 'executor' | 'workers'>,
  sinks: RunSinks,
  shard: FileJobRun['shard'],
  dryRun: FileJobRun['dryRun'],
): FileJobRun {
  return {
    opts,
    hooks,
    executor: started.executor,
    workers: started.workers,
    sinks,
    seen: opts.dedup ? (hooks.dedup ?? new Set<string>()) : null,
    uniqueIds: new UniqueIds(),
    idBases: defaultIdBases(opts.inputs.map((f) => resolve(f))),
    shard,
    dryRun,
    largeRowBytes: opts.largeRowBytes ?? 2 * 1024 * 1024,
    estimates: [],
    doomed: false,
    globalRow: 0,
  };
}

/**
 * The inputs in order. Fail early: every input's first rows are read before any file is processed, so a file that
 * cannot be read or holds nothing recognizable fails the run (or is skipped) before the other files' work is spent;
 * when the run fails anyway, the other files are not read (`notProcessed`). Each other file is a {@link runFile}.
 * @returns the reports of the files taken (processed, failed early or skipped) and the files not processed
 * @throws the abort reason; any other error ends the run
 */
async function processInputs(
  run: FileJobRun,
  outputs: ReturnType<typeof planOutputs>['outputs'],
  ctx: FileContext,
  traced: { file: string },
): Promise<{ files: FileReport[]; notProcessed: string[] }> {
  const { opts, hooks, shard } = run;
  const early = new Map<string, string>();
  for (const input of opts.inputs) {
    const file = resolve(input);
    const failure = await preflightFile(file, { mapping: opts.mapping, allowEmpty: ctx.policy.allowEmpty, signal: hooks.signal });
    if (failure) {
      early.set(file, failure.message);
      hooks.log?.(`  ${failure.message}`);
    }
  }
  const files: FileReport[] = [];
  /** Files not processed because an earlier check failed the run (without --skip-failed-files). */
  const notProcessed: string[] = [];
  for (let fi = 0; fi < opts.inputs.length; fi++) {
    const rep = emptyFileReport(resolve(opts.inputs[fi]));
    if (shard) rep.rowsInFile = 0;
    if (outputs.conversations) rep.conversationsWritten = 0;
    if (outputs.conversationsSharegpt) rep.sharegptWritten = 0;
    const earlyFailure = early.get(rep.file);
    if (early.size && !opts.skipFailedFiles && !earlyFailure) {
      // The run fails anyway: the other files are not read (their work would be thrown away).
      notProcessed.push(rep.file);
      continue;
    }
    files.push(rep);
    if (earlyFailure) {
      rep.failure = earlyFailure;
      if (opts.skipFailedFiles) {
        leaveOut(rep);
        hooks.log?.(`  skipped (--skip-failed-files): ${earlyFailure}`);
      } else run.doomed = true;
      continue;
    }
    traced.file = rep.file;
    await runFile(run, fi, rep, ctx);
  }
  return { files, notProcessed };
}

/** The files a commit of a successful run writes (`outputs.written`), in the order the summary names them. */
function writtenPaths(outputs: ReturnType<typeof planOutputs>['outputs'], format: OutputFormat, sinks: RunSinks, tokenCountsPath: string): string[] {
  return [
    ...(format === 'messages' ? [] : (sinks.records as RecordOutputs).paths()),
    ...(outputs.conversations ? [outputs.conversations] : []),
    ...(outputs.conversationsSharegpt ? [outputs.conversationsSharegpt] : []),
    outputs.promptsToGenerate,
    outputs.problems!,
    tokenCountsPath,
    outputs.reportJson,
    outputs.reportMd,
  ];
}

/** What a staged run's commit and abort need. */
interface Staged {
  result: PrepareResult;
  opts: PrepareOptions;
  hooks: PrepareHooks;
  sinks: RunSinks;
  outDir: string;
  createdDir: string | undefined;
  format: OutputFormat;
  outputs: ReturnType<typeof planOutputs>['outputs'];
  tokenCountsPath: string;
  counts: TokenCounter;
  tok: RunSetup['tokenizer'];
  tokenizerSize: RunSetup['tokenizerSize'];
}

/** The run with its outputs staged: `commit` and `abort` each act once, and the first of them wins. */
function stagedRun(s: Staged): StagedRun {
  let settled = false;
  return {
    result: s.result,
    commit: async () => {
      if (settled) return;
      settled = true;
      if (!s.result.ok || s.opts.dryRun) throw new Error('a failed or dry run cannot be committed');
      await commitOutputs(s);
    },
    abort: async () => {
      if (settled) return;
      settled = true;
      await abortOutputs(s.sinks, s.outDir, s.createdDir);
    },
  };
}

/**
 * Renames the outputs into place; then removes the record files of other formats a previous run left (said in the
 * summary and the report too, `outputs.removed`: a file of the user's folder is gone), and writes token_counts.json,
 * report.json and report.md.
 */
async function commitOutputs(s: Staged): Promise<void> {
  const { sinks, outDir, format, outputs, result, hooks, tok } = s;
  await sinks.records.commit();
  await sinks.prompts.commit();
  await sinks.problems.commit();
  await sinks.conversations.commit();
  await sinks.sharegpt.commit();
  const { removed, kept } = removeStaleRecordFiles(outDir, format, {
    speculators: outputs.speculatorsDataset !== undefined,
    sharegpt: outputs.conversationsSharegpt !== undefined,
    inputs: s.opts.inputs.map((f) => resolve(f)),
  });
  for (const p of removed) hooks.log?.(`  removed ${p}: ${removedReason(outDir, [p], format)}`);
  if (removed.length) result.outputs.removed = removed;
  for (const p of kept) hooks.log?.(`  kept ${p}: ${KEPT_REASON}`);
  if (kept.length) result.outputs.kept = kept;
  const sizes = targetSizesOf(tok, s.tokenizerSize);
  await writeFileAtomic(s.tokenCountsPath, tokenCountsJson(s.counts.result({ name: tok.name, hash: tok.hash }, sizes.modelVocabSize, sizes.tokenizerSize)));
  await writeReports(result);
}

/** The run's outputs, as temporary files until the commit (a dry run writes nothing; `--format messages` no records). */
function openSinks(
  outputs: ReturnType<typeof planOutputs>['outputs'],
  format: OutputFormat,
  dryRun: boolean,
  tok: Parameters<typeof parquetMetadata>[0],
  opts: Parameters<typeof parquetMetadata>[1],
): RunSinks {
  return {
    records:
      dryRun || format === 'messages'
        ? NULL_SINK
        : new RecordOutputs(outputs, format, { createdBy: `eagle3-prep ${PACKAGE_VERSION}`, metadata: parquetMetadata(tok, opts) }),
    /** --format messages: conversations.jsonl, and conversations_sharegpt.jsonl with --trainer eagle (records/conversationLines.ts). */
    conversations: !dryRun && outputs.conversations ? new AtomicOutput(outputs.conversations) : NULL_SINK,
    sharegpt: !dryRun && outputs.conversationsSharegpt ? new AtomicOutput(outputs.conversationsSharegpt) : NULL_SINK,
    prompts: dryRun ? NULL_SINK : new AtomicOutput(outputs.promptsToGenerate),
    /** problems.jsonl: every dropped and errored row (the report keeps only the first lines of each). */
    problems: dryRun ? NULL_SINK : new AtomicOutput(outputs.problems!),
  };
}

/** Discards the run's temporary outputs and the folders it created empty; a failing step does not stop the others. */
async function abortOutputs(sinks: RunSinks, outDir: string, createdDir: string | undefined): Promise<void> {
  await sinks.records.abort();
  await settle(sinks.prompts.abort());
  await settle(sinks.problems.abort());
  await settle(sinks.conversations.abort());
  await settle(sinks.sharegpt.abort());
  removeEmptyRecordFolders(outDir);
  removeCreatedIfEmpty(outDir, createdDir);
}

/** What deciding a file's fate needs beside the run: the failure policy, the template check's findings, the run's token counts. */
interface FileContext {
  policy: FailurePolicy;
  templateCheck: PrepareResult['templateCheck'];
  counts: TokenCounter;
}

/**
 * Processes one input file of the run (a {@link FileJob}) and decides whether it is kept: a read failure or a bug
 * met on its data fails it (`rep.failure`); a failed file is left out with `--skip-failed-files` (its rows taken back
 * out of the outputs, the dedup set and the ids), else the run is doomed. A kept file's token counts join `counts`.
 * @throws the abort reason; any other error ends the run
 */
async function runFile(run: FileJobRun, fi: number, rep: FileReport, ctx: FileContext): Promise<void> {
  const { sinks, hooks, opts } = run;
  const order = [sinks.records, sinks.prompts, sinks.problems, sinks.conversations, sinks.sharegpt];
  const marks = order.map((s) => s.bytesWritten);
  const job = new FileJob(run, fi, rep);
  try {
    await job.process();
  } catch (e) {
    if (isInternalError(e) && !hooks.signal?.aborted) {
      // A bug met on this file's data fails the file (skipped with --skip-failed-files), with where it stopped and what.
      rep.failure = `${rep.file}: ${describeError(e, `processing stopped ${job.lastLineRead ? `after line ${job.lastLineRead}` : 'at its first row'}`)}`;
    } else if (e instanceof FileReadError) {
      // reader messages usually name the file already ("cannot read F: …"); the failure names it once
      const first = e.message.split('\n')[0].replace(`cannot read ${rep.file}: `, '');
      rep.failure = `${rep.file}: cannot read: ${first}`;
    } else throw e;
    hooks.log?.(`  ${rep.failure}`);
  }
  const why = fileFailure(rep, { ...ctx.policy, warnings: fileWarnings(rep, ctx.templateCheck) });
  if (!why) {
    if (job.counts.records) ctx.counts.addFile(job.counts.result({ name: '', hash: '' }, null));
    return;
  }
  rep.failure = why;
  if (!opts.skipFailedFiles) {
    run.doomed = true;
    return;
  }
  // Left out: its rows are taken back out of the outputs and the dedup set.
  leaveOut(rep);
  for (let i = 0; i < order.length; i++) await order[i].rollback(marks[i]);
  for (const k of job.addedKeys) run.seen?.delete(k);
  run.uniqueIds.forget(job.addedIds);
  hooks.log?.(`  skipped (--skip-failed-files): ${why}`);
}

/**
 * Removes the records folders of `outDir` (`data/`, `speculators/`) when a failed or cancelled run
 * leaves them empty (its temporary files gone): the folder is then as the run found it. Never throws.
 */
function removeEmptyRecordFolders(outDir: string): void {
  for (const d of [RECORDS_DIR, SPECULATORS_DIR])
    try {
      rmdirSync(join(outDir, d)); // only an empty folder
    } catch {
      /* not there, or holds a previous run's files */
    }
}
