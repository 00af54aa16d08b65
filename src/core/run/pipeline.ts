/**
 * The `prepare` job: read → detect → normalize → render → mask → tokenize → write. This module is
 * the run: its outputs, the fail-early check, the files in order (each one a run/fileJob.ts
 * `FileJob`), leaving a failed file out, the all-or-nothing commit. The option/result shapes are the run contract (`./contract.ts`). Accounting rule (docs/loss-mask-rules.md "Records that are not
 * written"): every row read ends written, set aside for generation, dropped
 * with a reason code, or errored; the four add up to the rows read, per file.
 */
import { rmdirSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { AtomicOutput, checkOutputDir, removeCreatedIfEmpty, removeStaleTemps, writeFileAtomic } from './output';
import { removeStaleRecordFiles } from './parquetOutput';
import { KEPT_REASON, RECORDS_DIR, removedReason, SPECULATORS_DIR } from './outputFiles';
import { version as PACKAGE_VERSION } from '../../../package.json';
import { writeReports } from './report';
import { targetSizesOf, TokenCounter, tokenCountsJson } from './tokenCounts';
import { longPolicyOf } from '../records/rowTraceTypes';
import type { MaskPolicy } from '../types';
import { emptyFileReport, fileFailure, leaveOut } from './accounting';
import { fileWarnings } from './status';
import { UniqueIds } from './uniqueIds';
import { defaultIdBases } from './inputs';
import type { FileReport, PrepareHooks, PrepareOptions, PrepareResult } from './contract';
import { NULL_SINK, parquetMetadata, planOutputs, RecordOutputs, settle } from './runOutputs';
import { startExecutor } from './runSetup';
import { describeError, isInternalError } from '../errors';
import { notProcessedFailure, preflightFile } from './preflight';
import { assembleResult } from './runResult';
import { FileJob, FileReadError, type FileJobRun, type RunSinks } from './fileJob';
import { startMemTrace } from './memTrace';
import type { OutputFormat } from '../records/rowResult';

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
  if (opts.minTrainableTokens !== undefined && (!Number.isInteger(opts.minTrainableTokens) || opts.minTrainableTokens < 1))
    throw new Error(`minTrainableTokens must be a positive integer (got ${opts.minTrainableTokens})`);
  const { outDir, format, outputs, tokenCountsPath } = planOutputs(opts);
  const shard = opts.shard ?? null;
  if (shard && (!Number.isInteger(shard.count) || shard.count < 1 || !Number.isInteger(shard.index) || shard.index < 0 || shard.index >= shard.count)) {
    throw new Error(`shard ${shard.index}/${shard.count}: the index must be an integer in [0, count)`);
  }
  const dryRun = opts.dryRun ?? null;
  /** The first output folder this run created (removed again when the run writes nothing). */
  let createdDir: string | undefined;
  if (!dryRun) {
    // Before anything else: an unwritable folder fails in one line, not after every row was processed.
    createdDir = checkOutputDir(outDir);
    const removed = [outDir, join(outDir, RECORDS_DIR), join(outDir, SPECULATORS_DIR)].flatMap((d) => removeStaleTemps(d));
    if (removed.length) hooks.log?.(`  removed ${removed.length} temporary file(s) left by an interrupted run: ${removed.map((p) => basename(p)).join(', ')}`);
  }
  let started: Awaited<ReturnType<typeof startExecutor>>;
  try {
    started = await startExecutor(opts, hooks);
  } catch (e) {
    removeCreatedIfEmpty(outDir, createdDir); // a tokenizer that does not load: no empty folder left
    throw e;
  }
  const { executor, setup, workers } = started;
  const tok = setup.tokenizer;
  const templateCheck = setup.templateCheck;
  if (shard) hooks.log?.(`shard ${shard.index}/${shard.count}: rows whose run-wide index k has k mod ${shard.count} = ${shard.index}`);
  const sinks = openSinks(outputs, format, dryRun !== null, tok, opts);
  const { records, conversations, sharegpt, prompts, problems } = sinks;
  const files: FileReport[] = [];
  /** Token-id counts of the files kept (token_counts.json); each file counts on its own until it is known to be kept. */
  const counts = new TokenCounter();
  const policy = { allowEmpty: opts.allowEmpty || (shard !== null && shard.count > 1), strict: opts.strict, maxErrorRate: opts.maxErrorRate };
  const seen = opts.dedup ? (hooks.dedup ?? new Set<string>()) : null;
  /** What every file's job shares (run/fileJob.ts); `doomed`, `globalRow` and `inline` are run-wide state the jobs advance. */
  const run: FileJobRun = {
    opts,
    hooks,
    executor,
    workers,
    sinks,
    seen,
    uniqueIds: new UniqueIds(),
    idBases: defaultIdBases(opts.inputs.map((f) => resolve(f))),
    shard,
    dryRun,
    largeRowBytes: opts.largeRowBytes ?? 2 * 1024 * 1024,
    estimates: [],
    doomed: false,
    globalRow: 0,
  };
  // Fail early: every input's first rows are read before any file is processed, so a file that cannot be read or
  // holds nothing recognizable fails the run (or is skipped) before the other files' work is spent.
  const early = new Map<string, string>();
  /** Files not processed because an earlier check failed the run (without --skip-failed-files). */
  const notProcessed: string[] = [];
  /** The file being processed, for the memory trace (EAGLE3_MEM_TRACE, memTrace.ts). */
  let tracedFile = '';
  const stopTrace = startMemTrace('main', () => basename(tracedFile));
  try {
    // (inside the try: a cancel during these reads cleans up like one during the rows)
    for (const input of opts.inputs) {
      const file = resolve(input);
      const failure = await preflightFile(file, { mapping: opts.mapping, allowEmpty: policy.allowEmpty, signal: hooks.signal });
      if (failure) {
        early.set(file, failure.message);
        hooks.log?.(`  ${failure.message}`);
      }
    }
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
      tracedFile = rep.file;
      await runFile(run, fi, rep, { policy, templateCheck, counts });
    }
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
  outputs.written =
    result.ok && !dryRun
      ? [
          ...(format === 'messages' ? [] : (records as RecordOutputs).paths()),
          ...(outputs.conversations ? [outputs.conversations] : []),
          ...(outputs.conversationsSharegpt ? [outputs.conversationsSharegpt] : []),
          outputs.promptsToGenerate,
          outputs.problems!,
          tokenCountsPath,
          outputs.reportJson,
          outputs.reportMd,
        ]
      : [];
  let settled = false;
  return {
    result,
    commit: async () => {
      if (settled) return;
      settled = true;
      if (!result.ok || dryRun) throw new Error('a failed or dry run cannot be committed');
      await records.commit();
      await prompts.commit();
      await problems.commit();
      await conversations.commit();
      await sharegpt.commit();
      // Said in the summary and the report too (outputs.removed): a file of the user's folder is gone.
      const { removed, kept } = removeStaleRecordFiles(outDir, format, {
        speculators: outputs.speculatorsDataset !== undefined,
        sharegpt: outputs.conversationsSharegpt !== undefined,
        inputs: opts.inputs.map((f) => resolve(f)),
      });
      for (const p of removed) hooks.log?.(`  removed ${p}: ${removedReason(outDir, [p], format)}`);
      if (removed.length) result.outputs.removed = removed;
      for (const p of kept) hooks.log?.(`  kept ${p}: ${KEPT_REASON}`);
      if (kept.length) result.outputs.kept = kept;
      const sizes = targetSizesOf(tok, setup.tokenizerSize);
      await writeFileAtomic(tokenCountsPath, tokenCountsJson(counts.result({ name: tok.name, hash: tok.hash }, sizes.modelVocabSize, sizes.tokenizerSize)));
      await writeReports(result);
    },
    abort: async () => {
      if (settled) return;
      settled = true;
      await abortOutputs(sinks, outDir, createdDir);
    },
  };
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

/**
 * Processes one input file of the run (a {@link FileJob}) and decides whether it is kept: a read failure or a bug
 * met on its data fails it (`rep.failure`); a failed file is left out with `--skip-failed-files` (its rows taken back
 * out of the outputs, the dedup set and the ids), else the run is doomed. A kept file's token counts join `counts`.
 * @throws the abort reason; any other error ends the run
 */
async function runFile(
  run: FileJobRun,
  fi: number,
  rep: FileReport,
  ctx: { policy: Parameters<typeof fileFailure>[1]; templateCheck: PrepareResult['templateCheck']; counts: TokenCounter },
): Promise<void> {
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
