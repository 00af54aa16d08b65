/**
 * The `prepare` job: read → detect → normalize → render → mask → tokenize → write.
 * The option/result shapes are the run contract (`./contract.ts`). Accounting rule (docs/loss-mask-rules.md "Records that are not
 * written"): every row read ends written, set aside for generation, dropped
 * with a reason code, or errored; the four add up to the rows read, per file.
 */
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { basename, join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../formats/detect';
import type { NormalizeOptions } from '../formats/normalize';
import { OasstFilePass } from '../formats/oasst';
import { runOasstFile } from './oasstRun';
import { explainUnusableInput } from './inspect';
import { applyProjectConfig, loadProjectConfigFor } from '../read/projectConfig';
import { InlineExecutor, WorkerPool, type RowBatch, type RowExecutor } from './pool';
import { checkTemplate } from '../templates/checkTemplate';
import { AtomicOutput, checkOutputDir, OutputError, removeStaleTemps, writeFileAtomic } from './output';
import { outputPathsIn, PROBLEMS_FILE, TOKEN_COUNTS_FILE, TOKENIZED_DATA_PARQUET } from './outputFiles';
import { readRows, type RawRow } from '../read/readers';
import { ParquetRecordsOutput, removeStaleRecordFiles } from './parquetOutput';
import { version as PACKAGE_VERSION } from '../../../package.json';
import { writeReports } from './report';
import { LengthStatsBuilder } from './stats';
import { modelVocabSizeOf, TokenCounter, tokenCountsJson } from './tokenCounts';
import { longPolicyOf } from '../records/rowProcessor';
import { RowProcessor } from '../records/rowProcessor';
import { TokenizerLoadError, type TargetTokenizer } from '../tokenizers/tokenizer';
import type { MaskPolicy } from '../types';
import { addDrop, applyRowResult, computeTotals, emptyFileReport, fileFailure, leaveOut, problemLine, runFailures } from './accounting';
import { applyStatus, fileWarnings } from './status';
import { UniqueIds } from './uniqueIds';
import { defaultIdBases } from './inputs';
import { OUTPUT_FORMATS } from './contract';
import type { DryRunEstimate, FileReport, OutputFormat, PrepareHooks, PrepareOptions, PrepareResult, RowResult, RowSettings, RunSetup } from './contract';

export type {
  FileReport,
  OutputFormat,
  PrepareHooks,
  PrepareOptions,
  PrepareProgress,
  PrepareResult,
  RowProblemLine,
  RowResult,
  RowSettings,
  RunSetup,
} from './contract';
export { RowProcessor } from '../records/rowProcessor';
export { DATASET_EXTENSIONS, SMALL_INPUT_BYTES, defaultWorkerCount, defaultIdBases, defaultOutDir, groupByDefaultOutDir, expandInputs } from './inputs';
export { applyRowResult, computeTotals, fileFailure, PROBLEMS_FILE, problemLine, runFailures } from './accounting';

/** Rows sampled from the start of a file to detect its format. */
const DETECT_SAMPLE = DETECT_SAMPLE_SIZE;

/** Rows of each file a dry run processes by default. */
export const DRY_RUN_SAMPLE_ROWS = 1000;

/** A run whose outputs are written to temporary files, not yet in place. */
export interface StagedRun {
  result: PrepareResult;
  /** Renames the outputs into place and writes report.json / report.md. Call only when `result.ok`. */
  commit(): Promise<void>;
  /** Discards the temporary outputs; the output folder keeps its previous files. */
  abort(): Promise<void>;
}

/** An output the run writes to: an {@link AtomicOutput}, or nothing (dry run). */
type Sink = Pick<AtomicOutput, 'write' | 'bytesWritten' | 'rollback' | 'commit' | 'abort'>;
const NULL_SINK: Sink = { write: async () => {}, bytesWritten: 0, rollback: async () => {}, commit: async () => {}, abort: async () => {} };

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
  const outDir = resolve(opts.outDir);
  const format = opts.format ?? OUTPUT_FORMATS[0];
  if (!OUTPUT_FORMATS.includes(format)) throw new Error(`format must be one of ${OUTPUT_FORMATS.join(', ')} (got "${String(format)}")`);
  const parquetPath = join(outDir, TOKENIZED_DATA_PARQUET);
  const outputs: PrepareResult['outputs'] = {
    ...outputPathsIn(outDir),
    ...(format !== 'jsonl' ? { tokenizedDataParquet: parquetPath } : {}),
    problems: join(outDir, PROBLEMS_FILE),
  };
  const tokenCountsPath = join(outDir, TOKEN_COUNTS_FILE);
  const outputPaths = new Set([...Object.values(outputs), parquetPath, tokenCountsPath].filter((x): x is string => typeof x === 'string'));
  for (const input of opts.inputs) {
    if (outputPaths.has(resolve(input)))
      throw new Error(`${resolve(input)} is an output of this run (--out ${outDir}); inputs are never overwritten: choose another --out`);
  }
  const shard = opts.shard ?? null;
  if (shard && (!Number.isInteger(shard.count) || shard.count < 1 || !Number.isInteger(shard.index) || shard.index < 0 || shard.index >= shard.count)) {
    throw new Error(`shard ${shard.index}/${shard.count}: the index must be an integer in [0, count)`);
  }
  const dryRun = opts.dryRun ?? null;
  if (!dryRun) {
    // Before anything else: an unwritable folder fails in one line, not after every row was processed.
    checkOutputDir(outDir);
    const removed = removeStaleTemps(outDir);
    if (removed.length) hooks.log?.(`  removed ${removed.length} temporary file(s) left by an interrupted run: ${removed.map((p) => basename(p)).join(', ')}`);
  }
  // More row workers than cores only adds tokenizer copies (~100 MB each) and start-up time: capped at the cores.
  const requested = Math.max(1, Math.floor(opts.workers ?? 1));
  const workers = Math.min(requested, availableParallelism());
  if (workers < requested) hooks.log?.(`  workers: ${requested} requested, ${workers} used (the available cores)`);
  // With a pool, this thread never loads the tokenizer: the first worker reports it and runs the template check.
  let executor: RowExecutor;
  let setup: RunSetup;
  if (workers > 1) {
    const pool = new WorkerPool(workers, settingsOf(opts), { script: opts.workerScript, lowPriority: opts.lowPriority });
    executor = pool;
    try {
      setup = await pool.setup;
    } catch (e) {
      await pool.close();
      throw e;
    }
  } else {
    const processor = new RowProcessor(settingsOf(opts));
    executor = new InlineExecutor(processor);
    setup = runSetup(processor.tok, opts);
  }
  const tok = setup.tokenizer;
  if (!setup.hasTemplates) {
    await executor.close();
    throw new TokenizerLoadError(
      `${tok.dir}: no chat template (tokenizer_config.json "chat_template", chat_template.jinja or chat_template.json); records cannot be rendered as the target model serves them`,
    );
  }
  hooks.log?.(`tokenizer: ${tok.name} (${tok.dir}, sha256 ${tok.hash})`);
  const templateCheck = setup.templateCheck;
  if (templateCheck) {
    hooks.log?.(
      `chat template: ${templateCheck.prefixStable ? 'prefix-stable' : 'rewrites history'}; end of turn trained ${JSON.stringify(templateCheck.endOfTurnTrained)}` +
        (templateCheck.defaultSystemPrompt ? `; injects a default system prompt` : '') +
        (templateCheck.generationPromptScaffold ? `; generation prompt pre-fills ${JSON.stringify(templateCheck.generationPromptScaffold)}` : ''),
    );
  } else if (setup.checkError) hooks.log?.(`chat template check failed: ${setup.checkError}`);
  if (workers > 1) hooks.log?.(`workers: ${workers} threads`);
  if (shard) hooks.log?.(`shard ${shard.index}/${shard.count}: rows whose run-wide index k has k mod ${shard.count} = ${shard.index}`);
  const records: Sink = dryRun
    ? NULL_SINK
    : new RecordOutputs(outputs, format, { createdBy: `eagle3-prep ${PACKAGE_VERSION}`, metadata: parquetMetadata(tok, opts) });
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
    let project: ReturnType<typeof loadProjectConfigFor>;
    try {
      const inputStat = statSync(file);
      bytesTotal = inputStat.size;
      rep.input = { size: inputStat.size, mtimeMs: inputStat.mtimeMs };
      // eagle3prep.jsonc (role aliases, field mappings) nearest to the file, applied before normalization.
      project = loadProjectConfigFor(file);
    } catch (e) {
      throw new FileReadError((e as Error).message);
    }
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
    const rows = readRows(file, { signal: hooks.signal, mapping: opts.mapping });
    const next = async () => {
      try {
        return await rows.next();
      } catch (e) {
        if (hooks.signal?.aborted) throw hooks.signal.reason;
        throw new FileReadError((e as Error).message);
      }
    };
    const head: RawRow[] = [];
    let it = await next();
    while (!it.done && head.length < DETECT_SAMPLE) {
      head.push(it.value);
      it = await next();
    }
    const det = detectFormat(head.filter((r) => r.error === undefined).map((r) => applyProjectConfig(r.value, project)));
    rep.format = det.format;
    rep.evidence = det.evidence;
    hooks.log?.(`  format: ${det.format} — ${det.evidence.join('; ')}`);
    const fileBase = idBases.get(file) ?? basename(file);
    // The file's reading choices (eagle3prep.jsonc "reading"), sent with every batch to where rows are normalized.
    const normalize: NormalizeOptions = project?.reading.conversationLists ? { conversationLists: project.reading.conversationLists } : {};
    // OpenAssistant flat exports need the whole file before any row: their trees span it.
    const oasst = det.format === 'oasst-messages' ? new OasstFilePass() : undefined;
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
          if (seen.has(res.dedupKey)) {
            // The same conversation was written (or set aside) earlier in this run: counted as dropped, not written again.
            rep.rowsRead++;
            for (const n of res.notes) rep.notes[n] = (rep.notes[n] ?? 0) + 1;
            addDrop(rep, res.line, 'duplicate');
            if (!doomed) await problems.write(problemLine(file, { ...res, fate: 'dropped', reason: 'duplicate', message: undefined }));
            continue;
          }
          seen.add(res.dedupKey);
          addedKeys.push(res.dedupKey);
        }
        addedIds.push(...uniqueIds.apply(res));
        applyRowResult(rep, res, lengths, fileCounts);
        if (doomed) continue;
        for (const line of res.records) await records.write(line);
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
    /**
     * Sends row `row` (run-wide index `k`, the shard key) to be processed. `mapped`: its value is already the
     * one to normalize (eagle3prep.jsonc applied, or a row the OpenAssistant pass wrote).
     */
    const take = async (row: RawRow, k: number, mapped = false) => {
      hooks.signal?.throwIfAborted();
      if (shard) {
        rep.rowsInFile!++;
        if (k % shard.count !== shard.index) {
          lastBytes = row.bytes; // other shards' rows do not count toward the next row's size
          return;
        }
      }
      sampled++;
      // eagle3prep.jsonc role aliases / field mappings, applied here so every worker sees the mapped row.
      if (project && !mapped && row.error === undefined) row = { ...row, value: applyProjectConfig(row.value, project) };
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
          project,
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

  /** Dedup keys added by the current file (removed again when the file is skipped). */
  let addedKeys: string[] = [];
  /** Ids of the current file's records and prompts (taken back when the file is skipped). */
  let addedIds: string[] = [];
  const uniqueIds = new UniqueIds();
  try {
    for (let fi = 0; fi < opts.inputs.length; fi++) {
      const rep = emptyFileReport(resolve(opts.inputs[fi]));
      if (shard) rep.rowsInFile = 0;
      files.push(rep);
      const marks = [records.bytesWritten, prompts.bytesWritten, problems.bytesWritten];
      addedKeys = [];
      addedIds = [];
      lengths = new LengthStatsBuilder();
      fileCounts = new TokenCounter();
      try {
        await processFile(fi, rep);
      } catch (e) {
        if (!(e instanceof FileReadError)) throw e;
        // reader messages usually name the file already ("cannot read F: …"); the failure names it once
        const first = e.message.split('\n')[0].replace(`cannot read ${rep.file}: `, '');
        rep.failure = `${rep.file}: cannot read: ${first}`;
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
    throw e;
  }
  await executor.close();

  const failures = runFailures(files, policy);
  const skippedFiles = files.filter((f) => f.skipped).map((f) => ({ file: f.file, reason: f.failure ?? 'failed' }));
  if (files.length > 0 && skippedFiles.length === files.length) failures.push(`every input failed; nothing to write (${skippedFiles.length} skipped)`);
  // A file that yielded nothing gets the same explanation as `inspect` (empty, CSV, tokenized, no conversation).
  for (let i = 0; i < failures.length; i++) {
    const f = files.find((x) => failures[i].startsWith(`${x.file}: no record written and no prompt`));
    // An explanation that cannot be made leaves the failure as it is (it must not replace it).
    const unusable = f ? await explainUnusableInput(f.file, 1000, opts.mapping).catch(() => undefined) : undefined;
    if (unusable) failures[i] += `. ${unusable}`;
  }
  const result: PrepareResult = {
    ok: failures.length === 0,
    failures,
    outDir,
    outputs,
    tokenizer: tok,
    templateKwargs: opts.templateKwargs ?? {},
    mask: opts.mask,
    reasoning: opts.reasoning ?? 'keep',
    maxLength: opts.maxLength ?? null,
    truncate: long === 'truncate',
    long,
    grouping: opts.grouping,
    minTrainableTokens: opts.minTrainableTokens ?? 1,
    ...(failures.length || dryRun ? {} : { tokenCounts: tokenCountsPath }),
    templateCheck,
    files,
    totals: computeTotals(files),
    elapsedMs: Date.now() - t0,
    ...(shard ? { shard: { index: shard.index, count: shard.count } } : {}),
    policy: {
      strict: opts.strict === true,
      maxErrorRate: opts.maxErrorRate ?? null,
      skipFailedFiles: opts.skipFailedFiles === true,
      dedup: opts.dedup === true,
    },
    ...(skippedFiles.length ? { skippedFiles } : {}),
    ...(dryRun ? { dryRun: { sampleRows: dryRun.sampleRows, files: estimates } } : {}),
  };
  applyStatus(result, new Set(files.filter((f) => f.failure && !f.skipped).map((f) => f.file)));
  outputs.format = format;
  // What a commit writes (a failed or dry run writes nothing).
  outputs.written =
    result.ok && !dryRun
      ? [...(records as RecordOutputs).paths(), outputs.promptsToGenerate, outputs.problems!, tokenCountsPath, outputs.reportJson, outputs.reportMd]
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
      for (const p of removeStaleRecordFiles(outDir, format)) hooks.log?.(`  removed ${p}: a previous run's records in the format this run does not write`);
      await writeFileAtomic(tokenCountsPath, tokenCountsJson(counts.result({ name: tok.name, hash: tok.hash }, modelVocabSizeOf(opts.tokenizerDir))));
      await writeReports(result);
    },
    abort: async () => {
      if (settled) return;
      settled = true;
      await records.abort();
      await settle(prompts.abort());
      await settle(problems.abort());
    },
  };
}

/** Whole-file estimates from the rows a dry run processed: scaled by the input bytes they took. */
function estimate(rep: FileReport, bytesSampled: number, bytesTotal: number, complete: boolean): DryRunEstimate {
  const k = complete || bytesSampled <= 0 ? 1 : bytesTotal / bytesSampled;
  const est = (n: number) => Math.round(n * k);
  return {
    file: rep.file,
    rowsSampled: rep.rowsRead,
    bytesSampled: complete ? bytesTotal : bytesSampled,
    bytesTotal,
    complete,
    rows: est(rep.rowsRead),
    records: est(rep.recordsWritten),
    tokens: est(rep.totalTokens),
    trainableTokens: est(rep.trainableTokens),
  };
}

export { OutputError };

/** Runs the chat-template check once for a run (`eagle3-prep check-template`, without the probe renders). */
export function runSetup(tok: TargetTokenizer, opts: Pick<PrepareOptions, 'templateKwargs' | 'mask' | 'grouping'>): RunSetup {
  const setup: RunSetup = {
    tokenizer: { dir: tok.dir, name: tok.name, hash: tok.hash, embeddedDefault: tok.embeddedDefault },
    hasTemplates: tok.templates.length > 0,
    templateCheck: null,
  };
  if (!setup.hasTemplates) return setup;
  try {
    const { records: _r, turns: _t, ...findings } = checkTemplate(tok, { templateKwargs: opts.templateKwargs, mask: opts.mask, grouping: opts.grouping });
    setup.templateCheck = findings;
  } catch (e) {
    setup.checkError = (e as Error).message;
  }
  return setup;
}

/**
 * Resolves as `p` does, or rejects with the signal's reason as soon as it
 * aborts (a cancel does not wait for a long batch; the pool is then closed).
 */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Rows per batch sent to a worker, and the input bytes at which a batch is sent early (a large row goes alone). */
const BATCH_ROWS = 16;
const BATCH_BYTES = 64 * 1024;

function settingsOf(o: PrepareOptions): RowSettings {
  return {
    tokenizerDir: o.tokenizerDir,
    mask: o.mask,
    maxLength: o.maxLength,
    truncate: o.truncate,
    long: o.long,
    grouping: o.grouping,
    minTrainableTokens: o.minTrainableTokens,
    templateKwargs: o.templateKwargs,
    reasoning: o.reasoning,
    dedup: o.dedup,
  };
}

/** A row's place in its file: its line, and its index on that line when several rows share it. */
function rowKey(r: { line: number; element?: number }): string {
  return r.element === undefined ? String(r.line) : `${r.line}[${r.element}]`;
}

/** Awaits a cleanup step, ignoring its failure (used on paths that already carry an error). Never rejects. */
async function settle(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch {
    /* the run's own error is the one reported */
  }
}

/** Key-value metadata of a Parquet records file: what made it (`eagle3_prep`, JSON). */
function parquetMetadata(tok: RunSetup['tokenizer'], opts: PrepareOptions & { mask: MaskPolicy }): Record<string, string> {
  return {
    eagle3_prep: JSON.stringify({
      version: PACKAGE_VERSION,
      tokenizer: { name: tok.name, hash: tok.hash },
      mask: opts.mask,
      max_length: opts.maxLength ?? null,
      long: opts.long ?? (opts.truncate ? 'truncate' : 'drop'),
      grouping: opts.grouping ?? 'exact',
      reasoning: opts.reasoning ?? 'keep',
      template_kwargs: opts.templateKwargs ?? {},
    }),
  };
}

/**
 * The record files of a run in its `format`. Records always go to the JSONL
 * staging file (an {@link AtomicOutput}: it can take back a skipped file's rows
 * with `rollback`); at commit, `format` `parquet` / `both` stream that staged
 * file into `tokenized_data.parquet` (ParquetRecordsOutput, one row group in
 * memory), so both files hold the same records in the same order. With
 * `parquet` alone the staged JSONL is discarded after the Parquet file is made.
 */
class RecordOutputs implements Sink {
  private readonly jsonl: AtomicOutput;
  private readonly parquet: ParquetRecordsOutput | null;

  constructor(
    outputs: PrepareResult['outputs'],
    private readonly format: OutputFormat,
    parquetOpts: { createdBy: string; metadata: Record<string, string> },
  ) {
    this.jsonl = new AtomicOutput(outputs.tokenizedData);
    this.parquet = outputs.tokenizedDataParquet ? new ParquetRecordsOutput(outputs.tokenizedDataParquet, parquetOpts) : null;
  }

  /** Adds one record line (JSON of a TokenizedRecord, newline included). */
  write(line: string): Promise<void> {
    return this.jsonl.write(line);
  }

  get bytesWritten(): number {
    return this.jsonl.bytesWritten;
  }

  rollback(mark: number): Promise<void> {
    return this.jsonl.rollback(mark);
  }

  /** Makes the Parquet file from the staged records (when the format has one), then renames every record file into place. */
  async commit(): Promise<void> {
    if (this.parquet) {
      const staged = await this.jsonl.closeForReading();
      const lines = createInterface({ input: createReadStream(staged, { encoding: 'utf8' }), crlfDelay: Infinity });
      for await (const line of lines) if (line) await this.parquet.write(line);
      await this.parquet.finish();
      await this.parquet.commit();
    }
    if (this.format === 'parquet') await this.jsonl.abort();
    else await this.jsonl.commit();
  }

  /** Discards every temporary file. Never rejects. */
  async abort(): Promise<void> {
    await settle(this.parquet?.abort() ?? Promise.resolve());
    await settle(this.jsonl.abort());
  }

  /** The final paths of the record files the format writes. */
  paths(): string[] {
    return [...(this.format !== 'parquet' ? [this.jsonl.path] : []), ...(this.parquet ? [this.parquet.path] : [])];
  }
}
