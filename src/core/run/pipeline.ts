/**
 * The `prepare` job: read → detect → normalize → render → mask → tokenize → write.
 * The option/result shapes are the run contract (`./contract.ts`). Accounting rule (docs/loss-mask-rules.md "Records that are not
 * written"): every row read ends written, set aside for generation, dropped
 * with a reason code, or errored; the four add up to the rows read, per file.
 */
import { appliedConfigOf } from '../formats/appliedConfig';
import { rmdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../formats/detect';
import { filePassFor, runOasstFile } from './oasstRun';
import { configuredRows, rowConfigFor, type RowConfig } from '../formats/rowSource';
import { InlineExecutor, type RowBatch } from './pool';
import { AtomicOutput, checkOutputDir, removeCreatedIfEmpty, removeStaleTemps, writeFileAtomic } from './output';
import type { RawRow } from '../read/readers';
import { removeStaleRecordFiles } from './parquetOutput';
import { KEPT_REASON, RECORDS_DIR, removedReason, SPECULATORS_DIR } from './outputFiles';
import { version as PACKAGE_VERSION } from '../../../package.json';
import { writeReports } from './report';
import { LengthStatsBuilder } from './stats';
import { targetSizesOf, TokenCounter, tokenCountsJson } from './tokenCounts';
import { longPolicyOf } from '../records/rowProcessor';
import { RowProcessor } from '../records/rowProcessor';
import type { MaskPolicy } from '../types';
import { addDrop, applyRowResult, emptyFileReport, fileFailure, leaveOut, problemLine } from './accounting';
import { fileWarnings } from './status';
import { UniqueIds } from './uniqueIds';
import { defaultIdBases } from './inputs';
import type { DryRunEstimate, FileReport, PrepareHooks, PrepareOptions, PrepareResult } from './contract';
import type { RowResult } from '../records/rowResult';
import { NULL_SINK, parquetMetadata, planOutputs, RecordOutputs, settle, type Sink } from './runOutputs';
import { settingsOf, startExecutor } from './runSetup';
import { estimate } from './dryRun';
import { describeError, errorMessage, isInternalError } from '../errors';
import { notProcessedFailure, preflightFile } from './preflight';
import { BATCH_BYTES, BATCH_ROWS, rowKey, untilAborted } from './batches';
import { assembleResult } from './runResult';

/** Rows sampled from the start of a file to detect its format. */
const DETECT_SAMPLE = DETECT_SAMPLE_SIZE;

/** A run whose outputs are written to temporary files, not yet in place. */
export interface StagedRun {
  result: PrepareResult;
  /** Renames the outputs into place and writes report.json / report.md. Call only when `result.ok`. */
  commit(): Promise<void>;
  /** Discards the temporary outputs; the output folder keeps its previous files. */
  abort(): Promise<void>;
}

/** A failure reading one input (damaged compression, unreadable file, bad eagle3prep.jsonc): it fails that file, not the whole run. */
class FileReadError extends Error {}

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
  const records: Sink =
    dryRun || format === 'messages'
      ? NULL_SINK
      : new RecordOutputs(outputs, format, { createdBy: `eagle3-prep ${PACKAGE_VERSION}`, metadata: parquetMetadata(tok, opts) });
  /** --format messages: conversations.jsonl, and conversations_sharegpt.jsonl with --trainer eagle (records/conversationLines.ts). */
  const conversations: Sink = !dryRun && outputs.conversations ? new AtomicOutput(outputs.conversations) : NULL_SINK;
  const sharegpt: Sink = !dryRun && outputs.conversationsSharegpt ? new AtomicOutput(outputs.conversationsSharegpt) : NULL_SINK;
  const prompts: Sink = dryRun ? NULL_SINK : new AtomicOutput(outputs.promptsToGenerate);
  /** problems.jsonl: every dropped and errored row (the report keeps only the first lines of each). */
  const problems: Sink = dryRun ? NULL_SINK : new AtomicOutput(outputs.problems!);
  const files: FileReport[] = [];
  /** Token-id counts of the files kept (token_counts.json); each file counts on its own until it is known to be kept. */
  const counts = new TokenCounter();
  let fileCounts = new TokenCounter();
  let lengths = new LengthStatsBuilder();
  const estimates: DryRunEstimate[] = [];
  const largeRowBytes = opts.largeRowBytes ?? 2 * 1024 * 1024;
  const policy = { allowEmpty: opts.allowEmpty || (shard !== null && shard.count > 1), strict: opts.strict, maxErrorRate: opts.maxErrorRate };
  const seen = opts.dedup ? (hooks.dedup ?? new Set<string>()) : null;
  /** Set once a file failed and files are not skipped: the run will write nothing, so rows are counted but no longer written. */
  let doomed = false;
  /** Processes large rows in this thread when the others go to a pool (loaded on the first one). */
  let inline: InlineExecutor | undefined;
  /** Run-wide row index (across files, every row the reader yields), for sharding. */
  let globalRow = 0;
  const idBases = defaultIdBases(opts.inputs.map((f) => resolve(f)));

  /** Reads, processes and writes one input; a read failure is recorded in its report (`failure`), other errors end the run. */
  const processFile = async (fi: number, rep: FileReport): Promise<void> => {
    const file = rep.file;
    let bytesTotal = 0;
    let config: RowConfig;
    try {
      const inputStat = statSync(file);
      bytesTotal = inputStat.size;
      rep.input = { size: inputStat.size, mtimeMs: inputStat.mtimeMs };
      // eagle3prep.jsonc (mapping entry, role aliases, field mappings, reading choices) nearest to the file, applied as rows are read.
      config = rowConfigFor(file, { mapping: opts.mapping, answers: options.answers });
      // What of it applied to this file, for the staleness checks of the views (formats/appliedConfig.ts).
      const applied = opts.mapping ? undefined : appliedConfigOf(file);
      if (applied && !('error' in applied)) rep.input.projectConfig = applied;
    } catch (e) {
      throw new FileReadError((e as Error).message);
    }
    const project = config.project;
    if (project) hooks.log?.(`  project config: ${project.file}`);
    let lastEmit = 0;
    const emit = (bytesRead: number, force = false) => {
      const now = Date.now();
      if (!hooks.onProgress || (!force && now - lastEmit < 100)) return;
      lastEmit = now;
      hooks.onProgress({
        file,
        fileIndex: fi,
        fileCount: opts.inputs.length,
        rowsRead: rep.rowsRead,
        recordsWritten: rep.recordsWritten,
        bytesRead,
        bytesTotal,
        tokensWritten: rep.totalTokens,
        rowsDropped: rep.rowsDropped,
        rowsErrored: rep.rowsErrored,
        workers,
      });
    };
    hooks.log?.(`reading ${file}`);
    const rows = configuredRows(file, config, { signal: hooks.signal });
    const next = async () => {
      try {
        const r = await rows.next();
        if (!r.done) lastLineRead = r.value.line;
        return r;
      } catch (e) {
        if (hooks.signal?.aborted) throw hooks.signal.reason;
        // A reader's own message names the file and what; a JavaScript error inside it also gets where it stopped.
        throw new FileReadError(isInternalError(e) ? describeError(e, lastLineRead ? `after line ${lastLineRead}` : 'at its first row') : errorMessage(e));
      }
    };
    const head: RawRow[] = [];
    let it = await next();
    while (!it.done && head.length < DETECT_SAMPLE) {
      head.push(it.value);
      it = await next();
    }
    const det = detectFormat(head.filter((r) => r.error === undefined).map((r) => r.value));
    rep.format = det.format;
    rep.evidence = det.evidence;
    hooks.log?.(`  format: ${det.format} — ${det.evidence.join('; ')}`);
    const fileBase = idBases.get(file) ?? basename(file);
    // The file's reading choices (eagle3prep.jsonc "reading"), sent with every batch to where rows are normalized.
    const normalize = config.reading;
    // OpenAssistant flat exports need the whole file before any row: their trees span it.
    // So do agent CLI event logs: their conversations are parent chains across it (formats/eventLog.ts).
    const oasst = filePassFor(det.format, project);
    /** Rows of the OpenAssistant pass that carry a path (line/element key → held index), and their fates once applied. */
    const leafRows = new Map<string, number>();
    const leafFates = new Map<number, RowResult['fate']>();
    // Rows go out in batches; results come back in submission order and are
    // applied and written by this thread only, so the outputs are in input
    // order whatever the number of workers. At most `window` batches are in
    // flight: reading waits for the oldest one (backpressure).
    const window = workers > 1 ? workers * 4 : 1;
    const inFlight: { batch: Promise<RowResult[]>; bytes: number }[] = [];
    let batch: RowBatch | null = null;
    let batchBytes = 0;
    let lastBytes = 0;
    let sampled = 0;
    const settleOldest = async () => {
      const { batch: p, bytes } = inFlight.shift()!;
      const results = await untilAborted(p, hooks.signal);
      for (const res of results) {
        if (leafRows.size) {
          const i = leafRows.get(rowKey(res));
          if (i !== undefined) leafFates.set(i, res.fate);
        }
        if (seen && res.dedupKey !== undefined && (res.fate === 'written' || res.fate === 'setAside')) {
          // One 16-character key per conversation of the row (several when the row holds several conversations).
          const keys = res.dedupKey.match(/[\s\S]{16}/g) ?? [res.dedupKey];
          const repeated = keys.filter((k) => seen.has(k)).length;
          if (repeated === keys.length) {
            // The same conversation was written (or set aside) earlier in this run: counted as dropped, not written again.
            rep.rowsRead++;
            for (const n of res.notes) rep.notes[n] = (rep.notes[n] ?? 0) + 1;
            addDrop(rep, res.line, 'duplicate');
            if (!doomed) await problems.write(problemLine(file, { ...res, fate: 'dropped', reason: 'duplicate', message: undefined }));
            continue;
          }
          for (const k of keys) {
            if (seen.has(k)) continue;
            seen.add(k);
            addedKeys.push(k);
          }
          // A row holding new conversations beside ones already written is written whole: its repeats are counted, visibly.
          for (let i = 0; i < repeated; i++) res.notes.push('duplicate_conversation_kept');
        }
        addedIds.push(...uniqueIds.apply(res));
        applyRowResult(rep, res, lengths, fileCounts);
        if (doomed) continue;
        for (const line of res.records) await records.write(line);
        for (const c of res.conversations ?? []) {
          await conversations.write(c.messages);
          if (c.sharegpt !== undefined) await sharegpt.write(c.sharegpt);
        }
        if (res.prompt) await prompts.write(res.prompt);
        if (res.fate === 'dropped' || res.fate === 'errored') await problems.write(problemLine(file, res));
      }
      emit(bytes);
    };
    const flush = async () => {
      if (!batch) return;
      const p = executor.run(batch);
      p.catch(() => {}); // awaited in order by settleOldest; a failure must not surface unhandled meanwhile
      inFlight.push({ batch: p, bytes: lastBytes });
      batch = null;
      batchBytes = 0;
      while (inFlight.length >= window) await settleOldest();
    };
    /** Sends row `row` (run-wide index `k`, the shard key; its value is the one to normalize) to be processed. */
    const take = async (row: RawRow, k: number) => {
      hooks.signal?.throwIfAborted();
      if (shard) {
        rep.rowsInFile!++;
        if (k % shard.count !== shard.index) {
          lastBytes = row.bytes; // other shards' rows do not count toward the next row's size
          return;
        }
      }
      sampled++;
      const rowBytes = Math.max(0, row.bytes - lastBytes);
      if (workers > 1 && rowBytes > largeRowBytes) {
        // A large row: processed here, in order (the batches before it stay in flight).
        await flush();
        lastBytes = row.bytes;
        inline ??= new InlineExecutor(new RowProcessor(settingsOf(opts)));
        const b: RowBatch = { file, fileBase, normalize, rows: [{ line: row.line, element: row.element, value: row.value, error: row.error }] };
        const p = Promise.resolve().then(() => inline!.run(b));
        p.catch(() => {});
        inFlight.push({ batch: p, bytes: lastBytes });
        while (inFlight.length >= window) await settleOldest();
        return;
      }
      batch ??= { file, fileBase, normalize, rows: [] };
      batch.rows.push({ line: row.line, element: row.element, value: row.value, error: row.error });
      batchBytes += rowBytes;
      lastBytes = row.bytes;
      if (batch.rows.length >= BATCH_ROWS || batchBytes >= BATCH_BYTES) await flush();
    };
    const sampleDone = () => dryRun !== null && sampled >= dryRun.sampleRows;
    /** problems.jsonl lines of OpenAssistant message rows whose fate follows their paths' (applied after the paths). */
    const partProblems: string[] = [];
    let headLeft = false;
    try {
      if (oasst) {
        await runOasstFile({
          pass: oasst,
          head,
          next: async () => {
            if (it.done) return undefined;
            const row = it.value;
            it = await next();
            return row;
          },
          nextK: () => globalRow++,
          take,
          drain: async () => {
            await flush();
            while (inFlight.length) await settleOldest();
          },
          apply: (res) => {
            applyRowResult(rep, res);
            if (res.fate === 'dropped' || res.fate === 'errored') partProblems.push(problemLine(file, res));
          },
          leafRows,
          leafFates,
          rowKey,
          rep,
          shard,
          signal: hooks.signal,
          log: hooks.log,
        });
        if (!doomed) for (const line of partProblems) await problems.write(line);
      } else {
        for (const row of head) {
          if (sampleDone()) {
            headLeft = true; // the sample ended inside the rows read for detection: the file was not read to its end
            break;
          }
          await take(row, globalRow++);
        }
        head.length = 0;
        while (!it.done && !sampleDone()) {
          await take(it.value, globalRow++);
          it = await next();
        }
      }
      await flush();
      while (inFlight.length) await settleOldest();
    } finally {
      await rows.return(undefined); // closes the file when the run stops early
    }
    rep.lengths = lengths.result();
    if (dryRun) estimates.push(estimate(rep, lastBytes, bytesTotal, it.done === true && !headLeft));
    emit(it.done && !headLeft ? bytesTotal : lastBytes, true);
    hooks.log?.(
      `  rows ${rep.rowsRead}: written ${rep.rowsWritten} (${rep.recordsWritten} records), set aside ${rep.rowsSetAside}, dropped ${rep.rowsDropped}, errored ${rep.rowsErrored}`,
    );
  };

  /** Line of the last row the current file's reader gave (0 before the first), for the message of a failure. */
  let lastLineRead = 0;
  /** Dedup keys added by the current file (removed again when the file is skipped). */
  let addedKeys: string[] = [];
  /** Ids of the current file's records and prompts (taken back when the file is skipped). */
  let addedIds: string[] = [];
  const uniqueIds = new UniqueIds();
  // Fail early: every input's first rows are read before any file is processed, so a file that cannot be read or
  // holds nothing recognizable fails the run (or is skipped) before the other files' work is spent.
  const early = new Map<string, string>();
  /** Files not processed because an earlier check failed the run (without --skip-failed-files). */
  const notProcessed: string[] = [];
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
        } else doomed = true;
        continue;
      }
      const marks = [records.bytesWritten, prompts.bytesWritten, problems.bytesWritten, conversations.bytesWritten, sharegpt.bytesWritten];
      addedKeys = [];
      addedIds = [];
      lengths = new LengthStatsBuilder();
      fileCounts = new TokenCounter();
      lastLineRead = 0;
      try {
        await processFile(fi, rep);
      } catch (e) {
        if (isInternalError(e) && !hooks.signal?.aborted) {
          // A bug met on this file's data fails the file (skipped with --skip-failed-files), with where it stopped and what.
          rep.failure = `${rep.file}: ${describeError(e, `processing stopped ${lastLineRead ? `after line ${lastLineRead}` : 'at its first row'}`)}`;
        } else if (e instanceof FileReadError) {
          // reader messages usually name the file already ("cannot read F: …"); the failure names it once
          const first = e.message.split('\n')[0].replace(`cannot read ${rep.file}: `, '');
          rep.failure = `${rep.file}: cannot read: ${first}`;
        } else throw e;
        hooks.log?.(`  ${rep.failure}`);
      }
      const why = fileFailure(rep, { ...policy, warnings: fileWarnings(rep, templateCheck) });
      if (!why) {
        if (fileCounts.records) counts.addFile(fileCounts.result({ name: '', hash: '' }, null));
        continue;
      }
      rep.failure = why;
      if (opts.skipFailedFiles) {
        // Left out: its rows are taken back out of the outputs and the dedup set.
        leaveOut(rep);
        await records.rollback(marks[0]);
        await prompts.rollback(marks[1]);
        await problems.rollback(marks[2]);
        await conversations.rollback(marks[3]);
        await sharegpt.rollback(marks[4]);
        for (const k of addedKeys) seen?.delete(k);
        uniqueIds.forget(addedIds);
        hooks.log?.(`  skipped (--skip-failed-files): ${why}`);
      } else doomed = true;
    }
    // A cancel that arrives after the last row still cancels: nothing is committed.
    hooks.signal?.throwIfAborted();
  } catch (e) {
    // Cleanup never replaces the run's error, and every temporary file is removed even when a step of it fails.
    await settle(executor.close());
    await records.abort();
    await settle(prompts.abort());
    await settle(problems.abort());
    await settle(conversations.abort());
    await settle(sharegpt.abort());
    removeEmptyRecordFolders(outDir);
    removeCreatedIfEmpty(outDir, createdDir);
    throw e;
  }
  await executor.close();

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
    estimates,
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
      const sizes = targetSizesOf(tok);
      await writeFileAtomic(tokenCountsPath, tokenCountsJson(counts.result({ name: tok.name, hash: tok.hash }, sizes.modelVocabSize, sizes.tokenizerSize)));
      await writeReports(result);
    },
    abort: async () => {
      if (settled) return;
      settled = true;
      await records.abort();
      await settle(prompts.abort());
      await settle(problems.abort());
      await settle(conversations.abort());
      await settle(sharegpt.abort());
      removeEmptyRecordFolders(outDir);
      removeCreatedIfEmpty(outDir, createdDir);
    },
  };
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
