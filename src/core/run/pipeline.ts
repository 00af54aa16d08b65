/**
 * The `prepare` job: read → detect → normalize → render → mask → tokenize → write.
 * The option/result shapes are the run contract (`./contract.ts`). Accounting rule (docs/loss-mask-rules.md "Records that are not
 * written"): every row read ends written, set aside for generation, dropped
 * with a reason code, or errored; the four add up to the rows read, per file.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { availableParallelism } from 'node:os';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../formats/detect';
import type { NormalizeOptions } from '../formats/normalize';
import { OasstFilePass } from '../formats/oasst';
import { runOasstFile } from './oasstRun';
import { explainUnusableInput } from './inspect';
import { applyProjectConfig, loadProjectConfigFor } from '../read/projectConfig';
import { InlineExecutor, WorkerPool, type RowBatch, type RowExecutor } from './pool';
import { checkTemplate } from '../templates/checkTemplate';
import { AtomicOutput } from './output';
import { OUTPUT_DIR_SUFFIX, OUTPUT_FILES, outputPathsIn, TOKEN_COUNTS_FILE } from './outputFiles';
import { DATASET_FILE_RE, readRows, type RawRow } from '../read/readers';
import { writeReports } from './report';
import { LengthStatsBuilder, mergeLengthStats } from './stats';
import { modelVocabSizeOf, TokenCounter, tokenCountsJson } from './tokenCounts';
import { longPolicyOf } from '../records/rowProcessor';
import { writeFileAtomic } from './output';
import { RowProcessor } from '../records/rowProcessor';
import { TokenizerLoadError, type TargetTokenizer } from '../tokenizers/tokenizer';
import type { MaskPolicy } from '../types';
import type { FileReport, PrepareHooks, PrepareOptions, PrepareResult, RowResult, RowSettings, RunSetup } from './contract';

export type { FileReport, PrepareHooks, PrepareOptions, PrepareProgress, PrepareResult, RowResult, RowSettings, RunSetup } from './contract';
export { RowProcessor } from '../records/rowProcessor';

/** File extensions `prepare` reads when given a folder (each also gzip- or zstd-compressed, `readers.ts` DATASET_FILE_RE). */
export const DATASET_EXTENSIONS = ['.jsonl', '.ndjson', '.json', '.traj', '.parquet'];

/** Whether folder expansion takes a file of this name as a dataset (`x.jsonl`, `x.jsonl.gz`, `run.traj`, …). */
function isDatasetName(name: string): boolean {
  return DATASET_FILE_RE.test(name);
}

/** Inputs smaller than this (bytes, all files together) run in one thread by default. */
export const SMALL_INPUT_BYTES = 4 * 1024 * 1024;

/**
 * The default number of row workers for a run over `inputs` (paths): every core
 * (`os.availableParallelism()`), except 1 when the inputs add up to less than
 * {@link SMALL_INPUT_BYTES}, where starting the pool (a tokenizer load per
 * worker, ~1-3 s) costs more than it saves (`npm run bench`: 1,000 reasoning
 * rows ran 0.65x at 2 workers). Missing files count 0 (the run reports them).
 */
export function defaultWorkerCount(inputs: readonly string[]): number {
  let bytes = 0;
  for (const f of inputs) {
    try {
      bytes += statSync(f).size;
    } catch {
      /* reported by the run */
    }
  }
  return bytes < SMALL_INPUT_BYTES ? 1 : availableParallelism();
}

/**
 * The name each input's default record ids start with (`<name>:<line>`,
 * formats/common.ts): its file name, or, for inputs of one run that share a
 * file name (`a/data.jsonl`, `b/data.jsonl` into one `--out`), its path from the
 * folder they have in common, so no two rows of a run share a default id.
 * @param files absolute paths
 * @returns absolute path → id base, for every input
 */
export function defaultIdBases(files: readonly string[]): Map<string, string> {
  const byName = new Map<string, string[]>();
  for (const f of files) byName.set(basename(f), [...(byName.get(basename(f)) ?? []), f]);
  const out = new Map<string, string>();
  for (const [name, group] of byName) {
    if (group.length === 1) {
      out.set(group[0], name);
      continue;
    }
    let common = dirname(group[0]);
    while (!group.every((f) => f.startsWith(common.endsWith(sep) ? common : common + sep)) && dirname(common) !== common) common = dirname(common);
    for (const f of group) out.set(f, relative(common, f).split(sep).join('/'));
  }
  return out;
}

/**
 * The default output folder of an input: `<input-name>.eagle3/` beside it
 * (`data/chat.jsonl` → `data/chat.eagle3`).
 */
export function defaultOutDir(input: string): string {
  const abs = resolve(input);
  const name = basename(abs).replace(DATASET_FILE_RE, '');
  return join(dirname(abs), `${name}${OUTPUT_DIR_SUFFIX}`);
}

/** The files a run writes; in a folder that holds a `report.json` beside them they are outputs, not datasets. */
const OUTPUT_NAMES: string[] = [OUTPUT_FILES.tokenizedData, OUTPUT_FILES.promptsToGenerate, OUTPUT_FILES.reportJson, TOKEN_COUNTS_FILE];
function isRunOutput(dir: string, name: string): boolean {
  return OUTPUT_NAMES.includes(name) && existsSync(join(dir, OUTPUT_FILES.reportJson));
}

/**
 * Groups inputs by their default output folder (`defaultOutDir`), so that
 * `d.json` and `d.jsonl` beside each other share one run instead of one
 * overwriting the other's outputs. Duplicate paths are kept once. Order: first appearance.
 */
export function groupByDefaultOutDir(inputs: string[]): { inputs: string[]; outDir: string }[] {
  const groups = new Map<string, string[]>();
  for (const f of inputs.map((x) => resolve(x))) {
    const d = defaultOutDir(f);
    const g = groups.get(d) ?? [];
    if (!g.includes(f)) g.push(f);
    groups.set(d, g);
  }
  return [...groups].map(([outDir, files]) => ({ inputs: files, outDir }));
}

/**
 * Expands folders into the dataset files they hold (recursively, sorted;
 * skipping `*.eagle3` output folders, `node_modules` and dot folders).
 * Files are returned as given (resolved).
 * @throws Error naming a path that does not exist
 */
export function expandInputs(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (!name.startsWith('.') && name !== 'node_modules' && !name.endsWith(OUTPUT_DIR_SUFFIX)) walk(p);
      } else if (isDatasetName(name) && !name.startsWith('.') && !isRunOutput(dir, name)) out.push(p);
    }
  };
  for (const p of paths) {
    const abs = resolve(p);
    if (!existsSync(abs)) throw new Error(`input not found: ${p}`);
    if (statSync(abs).isDirectory()) walk(abs);
    else out.push(abs);
  }
  return [...new Set(out)];
}

/** Rows sampled from the start of a file to detect its format. */
const DETECT_SAMPLE = DETECT_SAMPLE_SIZE;

function emptyFileReport(file: string): FileReport {
  return {
    file,
    format: 'unknown',
    evidence: [],
    rowsRead: 0,
    rowsWritten: 0,
    recordsWritten: 0,
    rowsSetAside: 0,
    rowsDropped: 0,
    rowsErrored: 0,
    dropped: {},
    errors: [],
    notes: {},
    unread_fields: {},
    trainableTokens: 0,
    totalTokens: 0,
  };
}

function drop(rep: FileReport, line: number, reason: string) {
  rep.rowsDropped++;
  const d = (rep.dropped[reason] ??= { count: 0, lines: [] });
  d.count++;
  if (d.lines.length < 10) d.lines.push(line);
}

function error(rep: FileReport, line: number, message: string, reason?: string) {
  rep.rowsErrored++;
  if (rep.errors.length < 50) rep.errors.push({ line, message });
  if (reason) {
    const r = ((rep.errorReasons ??= {})[reason] ??= { count: 0, lines: [] });
    r.count++;
    if (r.lines.length < 10) r.lines.push(line);
  }
}

function note(rep: FileReport, code: string) {
  rep.notes[code] = (rep.notes[code] ?? 0) + 1;
}

/**
 * Adds a row's result to its file's report (counts, first lines, notes, tokens), its record
 * lengths to `lengths` and its token-id counts to `counts` when given.
 */
export function applyRowResult(rep: FileReport, res: RowResult, lengths?: LengthStatsBuilder, counts?: TokenCounter): void {
  rep.rowsRead++;
  for (const n of res.notes) note(rep, n);
  for (const f of res.unreadFields ?? []) {
    const u = ((rep.unread_fields ??= {})[f] ??= { count: 0, lines: [] });
    u.count++;
    if (u.lines.length < 10) u.lines.push(res.line);
  }
  switch (res.fate) {
    case 'written':
      rep.rowsWritten++;
      rep.recordsWritten += res.records.length;
      rep.trainableTokens += res.trainableTokens;
      rep.totalTokens += res.totalTokens;
      lengths?.addRow(res.recordTokens, res.recordTrainable, res.renderedTokens);
      if (res.tokenCounts) counts?.add(res.tokenCounts, res.records.length);
      break;
    case 'setAside':
      rep.rowsSetAside++;
      break;
    case 'dropped':
      drop(rep, res.line, res.reason ?? 'no_trainable_tokens');
      break;
    case 'errored':
      error(rep, res.line, res.message ?? 'error', res.reason);
      break;
  }
}

/**
 * Runs `prepare` over the inputs into one output folder.
 *
 * Writes `tokenized_data.jsonl` (one {@link TokenizedRecord} per line, input
 * order), `prompts_to_generate.jsonl` (`{"id", "source", "messages", "tools"?}`
 * per prompt-only row), `report.json` ({@link PrepareResult}) and `report.md`,
 * each atomically (temp file + rename; nothing is left half-written on error or
 * cancel). Inputs are only read.
 *
 * @returns the result; `ok` is false (with `failures`) when an input yields no
 *   record and no prompt, unless `allowEmpty`.
 * @throws TokenizerLoadError for an unusable tokenizer folder; Error for a
 *   missing input; the signal's reason when aborted.
 */
export async function prepare(options: PrepareOptions, hooks: PrepareHooks = {}): Promise<PrepareResult> {
  const t0 = Date.now();
  const opts = { mask: 'assistant' as MaskPolicy, truncate: false, grouping: 'exact' as const, ...options };
  const long = longPolicyOf(opts);
  if (opts.minTrainableTokens !== undefined && (!Number.isInteger(opts.minTrainableTokens) || opts.minTrainableTokens < 1))
    throw new Error(`minTrainableTokens must be a positive integer (got ${opts.minTrainableTokens})`);
  const outDir = resolve(opts.outDir);
  const outputs = outputPathsIn(outDir);
  const tokenCountsPath = join(outDir, TOKEN_COUNTS_FILE);
  const outputPaths = new Set(Object.values(outputs));
  for (const input of opts.inputs) {
    if (outputPaths.has(resolve(input)))
      throw new Error(`${resolve(input)} is an output of this run (--out ${outDir}); inputs are never overwritten: choose another --out`);
  }
  const shard = opts.shard ?? null;
  if (shard && (!Number.isInteger(shard.count) || shard.count < 1 || !Number.isInteger(shard.index) || shard.index < 0 || shard.index >= shard.count)) {
    throw new Error(`shard ${shard.index}/${shard.count}: the index must be an integer in [0, count)`);
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
    const processor = new RowProcessor(opts);
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
  const data = new AtomicOutput(outputs.tokenizedData);
  const prompts = new AtomicOutput(outputs.promptsToGenerate);
  const files: FileReport[] = [];
  const counts = new TokenCounter();
  const largeRowBytes = opts.largeRowBytes ?? 2 * 1024 * 1024;
  /** Processes large rows in this thread when the others go to a pool (loaded on the first one). */
  let inline: InlineExecutor | undefined;
  /** Run-wide row index (across files, every row the reader yields), for sharding. */
  let globalRow = 0;
  try {
    const idBases = defaultIdBases(opts.inputs.map((f) => resolve(f)));
    for (let fi = 0; fi < opts.inputs.length; fi++) {
      const file = resolve(opts.inputs[fi]);
      const rep = emptyFileReport(file);
      const lengths = new LengthStatsBuilder();
      if (shard) rep.rowsInFile = 0;
      files.push(rep);
      const inputStat = statSync(file);
      const bytesTotal = inputStat.size;
      rep.input = { size: inputStat.size, mtimeMs: inputStat.mtimeMs };
      // eagle3prep.jsonc (role aliases, field mappings) nearest to the file, applied before normalization.
      const project = loadProjectConfigFor(file);
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
        });
      };
      hooks.log?.(`reading ${file}`);
      const rows = readRows(file, { signal: hooks.signal, mapping: opts.mapping });
      const head: RawRow[] = [];
      let it = await rows.next();
      while (!it.done && head.length < DETECT_SAMPLE) {
        head.push(it.value);
        it = await rows.next();
      }
      const det = detectFormat(head.filter((r) => r.error === undefined).map((r) => applyProjectConfig(r.value, project)));
      // The file's reading choices (eagle3prep.jsonc "reading"), sent with every batch to where rows are normalized.
      const normalize: NormalizeOptions = project?.reading.conversationLists ? { conversationLists: project.reading.conversationLists } : {};
      // OpenAssistant flat exports need the whole file before any row: their trees span it.
      const oasst = det.format === 'oasst-messages' ? new OasstFilePass() : undefined;
      /** Rows of the OpenAssistant pass that carry a path (line/element key → held index), and their fates once applied. */
      const leafRows = new Map<string, number>();
      const leafFates = new Map<number, RowResult['fate']>();
      rep.format = det.format;
      rep.evidence = det.evidence;
      hooks.log?.(`  format: ${det.format} — ${det.evidence.join('; ')}`);
      const fileBase = idBases.get(file) ?? basename(file);
      // Rows go out in batches; results come back in submission order and are
      // applied and written by this thread only, so the outputs are in input
      // order whatever the number of workers. At most `window` batches are in
      // flight: reading waits for the oldest one (backpressure).
      const window = workers > 1 ? workers * 4 : 1;
      const inFlight: { batch: Promise<RowResult[]>; bytes: number }[] = [];
      let batch: RowBatch | null = null;
      let batchBytes = 0;
      let lastBytes = 0;
      const settleOldest = async () => {
        const { batch: p, bytes } = inFlight.shift()!;
        const results = await untilAborted(p, hooks.signal);
        for (const res of results) {
          if (leafRows.size) {
            const i = leafRows.get(rowKey(res));
            if (i !== undefined) leafFates.set(i, res.fate);
          }
          applyRowResult(rep, res, lengths, counts);
          for (const line of res.records) await data.write(line);
          if (res.prompt) await prompts.write(res.prompt);
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
        // eagle3prep.jsonc role aliases / field mappings, applied here so every worker sees the mapped row.
        if (project && !mapped && row.error === undefined) row = { ...row, value: applyProjectConfig(row.value, project) };
        const rowBytes = Math.max(0, row.bytes - lastBytes);
        if (workers > 1 && rowBytes > largeRowBytes) {
          // A large row: processed here, in order (the batches before it stay in flight).
          await flush();
          lastBytes = row.bytes;
          inline ??= new InlineExecutor(new RowProcessor(opts));
          batch = { file, fileBase, normalize, rows: [{ line: row.line, element: row.element, value: row.value, error: row.error }] };
          const b = batch;
          batch = null;
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
      try {
        if (oasst) {
          await runOasstFile({
            pass: oasst,
            head,
            next: async () => {
              if (it.done) return undefined;
              const row = it.value;
              it = await rows.next();
              return row;
            },
            project,
            nextK: () => globalRow++,
            take,
            drain: async () => {
              await flush();
              while (inFlight.length) await settleOldest();
            },
            apply: (res) => applyRowResult(rep, res),
            leafRows,
            leafFates,
            rowKey,
            rep,
            shard,
            signal: hooks.signal,
            log: hooks.log,
          });
        } else {
          for (const row of head) await take(row, globalRow++);
          head.length = 0;
          while (!it.done) {
            await take(it.value, globalRow++);
            it = await rows.next();
          }
        }
        await flush();
        while (inFlight.length) await settleOldest();
      } finally {
        await rows.return(undefined); // closes the file when the run stops early
      }
      emit(bytesTotal, true);
      rep.lengths = lengths.result();
      hooks.log?.(
        `  rows ${rep.rowsRead}: written ${rep.rowsWritten} (${rep.recordsWritten} records), set aside ${rep.rowsSetAside}, dropped ${rep.rowsDropped}, errored ${rep.rowsErrored}`,
      );
    }
  } catch (e) {
    await executor.close();
    await data.abort();
    await prompts.abort();
    throw e;
  }
  await executor.close();

  const failures = runFailures(files, { allowEmpty: opts.allowEmpty || (shard !== null && shard.count > 1) });
  // A failed run changes nothing in the output folder: the previous outputs (and their report) stay as they were.
  if (failures.length) {
    await data.abort();
    await prompts.abort();
  } else {
    await data.commit();
    await prompts.commit();
    await writeFileAtomic(tokenCountsPath, tokenCountsJson(counts.result({ name: tok.name, hash: tok.hash }, modelVocabSizeOf(opts.tokenizerDir))));
  }
  // A file that yielded nothing gets the same explanation as `inspect` (empty, CSV, tokenized, no conversation).
  for (let i = 0; i < failures.length; i++) {
    const f = files.find((x) => failures[i].startsWith(`${x.file}: no record written and no prompt`));
    const unusable = f ? await explainUnusableInput(f.file, 1000, opts.mapping) : undefined;
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
    maxLength: opts.maxLength ?? null,
    truncate: long === 'truncate',
    long,
    grouping: opts.grouping,
    minTrainableTokens: opts.minTrainableTokens ?? 1,
    ...(failures.length ? {} : { tokenCounts: tokenCountsPath }),
    templateCheck,
    files,
    totals: computeTotals(files),
    elapsedMs: Date.now() - t0,
    ...(shard ? { shard: { index: shard.index, count: shard.count } } : {}),
  };
  if (result.ok) await writeReports(result);
  return result;
}

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

/** A row's place in its file: its line, and its index on that line when several rows share it. */
function rowKey(r: { line: number; element?: number }): string {
  return r.element === undefined ? String(r.line) : `${r.line}[${r.element}]`;
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
  };
}

/**
 * Why a run (or a merge of shard runs) failed, per file: rows that do not add up
 * (`written + setAside + dropped + errored != rowsRead`), and, unless
 * `allowEmpty`, a file that yields no record and no prompt, or no record while
 * rows errored (docs/loss-mask-rules.md "Records that are not written").
 */
export function runFailures(files: readonly FileReport[], opts: { allowEmpty?: boolean } = {}): string[] {
  const failures: string[] = [];
  for (const f of files) {
    const sum = f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored;
    if (sum !== f.rowsRead) failures.push(`${f.file}: accounting mismatch (${sum} accounted, ${f.rowsRead} read)`);
    if (!opts.allowEmpty && f.recordsWritten === 0 && f.rowsSetAside === 0) {
      const why = Object.entries(f.dropped)
        .map(([k, v]) => `${v.count} ${k}`)
        .concat(f.rowsErrored ? [`${f.rowsErrored} errored`] : []);
      failures.push(
        `${f.file}: no record written and no prompt set aside (${f.rowsRead} rows read${why.length ? ': ' + why.join(', ') : ''}; format ${f.format})`,
      );
    } else if (!opts.allowEmpty && f.recordsWritten === 0 && f.rowsErrored > 0) {
      failures.push(`${f.file}: no record written; ${f.rowsErrored} rows errored (first: line ${f.errors[0]?.line}: ${f.errors[0]?.message.split('\n')[0]})`);
    }
  }
  return failures;
}

/** Run totals: the sum of the file reports' counters, and drop (and coded error) counts per reason. */
export function computeTotals(files: readonly FileReport[]): PrepareResult['totals'] {
  const sumKeys = ['rowsRead', 'rowsWritten', 'recordsWritten', 'rowsSetAside', 'rowsDropped', 'rowsErrored', 'trainableTokens', 'totalTokens'] as const;
  const totals = { dropped: {} as Record<string, number> } as PrepareResult['totals'];
  for (const k of sumKeys) totals[k] = files.reduce((a, f) => a + f[k], 0);
  for (const f of files) for (const [k, v] of Object.entries(f.dropped)) totals.dropped[k] = (totals.dropped[k] ?? 0) + v.count;
  for (const f of files) for (const [k, v] of Object.entries(f.errorReasons ?? {})) (totals.errorReasons ??= {})[k] = (totals.errorReasons[k] ?? 0) + v.count;
  if (files.length && files.every((f) => f.lengths)) totals.lengths = mergeLengthStats(files.map((f) => f.lengths!));
  return totals;
}
