/**
 * What the datasets tree and the Problems panel know about one dataset file,
 * without tokenizing anything: its container (JSONL / JSON / Parquet, plain or
 * gzip / zstd compressed), its detected format, a streamed row count, the state
 * of its prepared output (none / prepared with N records / stale, and why).
 * The rows prepare drops or errors as it reads them: run/editor/rowProblems.ts.
 *
 * Rules used: rows and line numbers as `read/readers` defines them (non-blank
 * lines of JSONL); format detection of `formats/detect.ts` on the first
 * {@link DETECT_SAMPLE_SIZE} rows; the output folder and `report.json` of
 * `pipeline.ts` (`defaultOutDir`, `PrepareResult`); the tokenizer files hash of
 * `tokenizer.ts` (`tokenizerFilesHashOf`).
 *
 * Pure Node (no `vscode`), so `scripts/bench-tree.mjs` can time it alone.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../../formats/detect';
import { CONVERSATIONS_FILE, OUTPUT_FILES, recordsFileIn, TOKENIZED_DATA_PARQUET } from '../outputFiles';
import { locateOutDir } from './runLocation';
import type { FileReport, PrepareResult, RunStatus } from '../contract';
import { REPORT_SCHEMA_VERSION } from '../reports/report';
import { fileReportOf, readRunReport } from '../reports/readReport';
import { ReportReadError } from '../reports/report';
import { fileStatus, fileWarnings } from '../reports/status';
import { describeDifferences, differingSettings, runSettingsOfReport, type RunSettings } from '../runSettings';
import { appliedConfigOf, configStaleReasons } from '../../formats/appliedConfig';
import { findProjectConfig } from '../../read/projectConfig';
import { mappedRows, rowConfigFor } from '../../formats/rowSource';
import { countRows, DATASET_FILE_RE } from '../../read/readers';
import { defaultTokenizerDir } from '../../tokenizers/tokenizer';
import { tokenizerFilesHashOf, tokenizerFilesStamp } from '../../tokenizers/modelFolder';
import type { FormatDetection } from '../../types';
import { fileStamp } from '../../read/fileStamp';

export { DATASET_FILE_RE };

/** How a dataset file is stored. */
export interface DatasetKind {
  /** `jsonl` (one row per line), `json` (one document: `.json`, `.traj`), `parquet`. */
  container: 'jsonl' | 'json' | 'parquet';
  compression: 'gzip' | 'zstd' | null;
}

/** The container and compression of a dataset file, from its name; undefined when the name is not a dataset's (see {@link DATASET_FILE_RE}). */
export function datasetKind(file: string): DatasetKind | undefined {
  const m = DATASET_FILE_RE.exec(path.basename(file));
  if (!m) return undefined;
  const ext = m[1].toLowerCase();
  const container = ext === 'parquet' ? 'parquet' : ext === 'json' || ext === 'traj' ? 'json' : 'jsonl';
  const c = m[2]?.toLowerCase();
  return { container, compression: c === '.gz' ? 'gzip' : c === '.zst' ? 'zstd' : null };
}

/** One parsed row with its 1-based line (row index + 1 for Parquet). */
export interface ScannedRow {
  line: number;
  /** The row's 0-based index among the rows of its line, when several share it (`RawRow.element`). */
  element?: number;
  value?: unknown;
  error?: string;
}

/**
 * Rows of a dataset file, in order, as `read/readers` `readRows` reads them (container found by
 * magic bytes: plain / gzip / zstd JSONL or JSON document, Parquet through hyparquet; the field
 * mapping of `eagle3prep.jsonc` applied when one matches).
 * @param limit stop after this many rows (default: all).
 * @throws Error naming the file when it cannot be read or decompressed; the abort reason.
 */
export async function* scanRows(file: string, opts: { limit?: number; signal?: AbortSignal } = {}): AsyncGenerator<ScannedRow> {
  const limit = opts.limit ?? Infinity;
  if (limit <= 0) return;
  let n = 0;
  for await (const row of mappedRows(file, { signal: opts.signal })) {
    const at = row.element === undefined ? { line: row.line } : { line: row.line, element: row.element };
    yield row.error !== undefined ? { ...at, error: row.error } : { ...at, value: row.value };
    if (++n >= limit) return;
  }
}

/**
 * Counts the rows of a dataset file without holding it whole (except a JSON document):
 * `read/readers` `countRows` — JSONL (plain, gzip or zstd) by jumping between newlines (non-blank
 * lines), Parquet from its footer (`num_rows`), a JSON document by reading its rows.
 * @throws Error naming the file when it cannot be read; the abort reason.
 */
export async function countDatasetRows(file: string, signal?: AbortSignal): Promise<number> {
  return countRows(file, { signal });
}

/**
 * Detects a dataset file's format from its first {@link DETECT_SAMPLE_SIZE} valid rows
 * (`formats/detect.ts`), after applying the project config that covers it (`eagle3prep.jsonc`).
 * @throws Error naming the file when it cannot be read; ProjectConfigError for an invalid config.
 */
export async function detectDatasetFormat(file: string, signal?: AbortSignal): Promise<FormatDetection> {
  const config = rowConfigFor(file);
  const sample: unknown[] = [];
  // scanRows applied the mapping entry already (read/readers).
  for await (const row of scanRows(file, { limit: DETECT_SAMPLE_SIZE * 2, signal })) {
    if (row.error === undefined) sample.push(config.apply(row.value, true));
    if (sample.length >= DETECT_SAMPLE_SIZE) break;
  }
  return detectFormat(sample);
}

// ------------------------------------------------------------------ tokenizer hash

const hashCache = new Map<string, { stamp: string; hash: string }>();

/**
 * The files hash `prepare` records in `report.json` (`tokenizer.hash`) for a tokenizer folder,
 * computed the same way as `loadTokenizer` (tokenizer.json folders) and `loadTiktokenTokenizer`
 * (tiktoken.model folders), without loading the tokenizer. Cached by the files' stamps (tokenizerFilesStamp).
 * @param dir model folder; undefined / '' = the embedded default.
 * @returns 16 hex characters; undefined when the folder has neither tokenizer file.
 */
export function tokenizerFilesHash(dir?: string): string | undefined {
  let folder: string;
  try {
    folder = dir ? path.resolve(dir) : defaultTokenizerDir();
  } catch {
    return undefined;
  }
  const stamp = tokenizerFilesStamp(folder);
  const hit = hashCache.get(folder);
  if (hit?.stamp === stamp) return hit.hash;
  let hash: string | undefined;
  if (fs.existsSync(path.join(folder, 'tokenizer.json'))) hash = tokenizerFilesHashOf(folder);
  else if (fs.existsSync(path.join(folder, 'tiktoken.model'))) {
    hash = tokenizerFilesHashOf(
      folder,
      createHash('sha256')
        .update(fs.readFileSync(path.join(folder, 'tiktoken.model')))
        .digest('hex'),
    );
  }
  if (hash) hashCache.set(folder, { stamp, hash });
  return hash;
}

// ------------------------------------------------------------------ output state

/** An output file of a run, and whether it exists. */
export interface OutputFile {
  name: string;
  path: string;
  exists: boolean;
}

/** The state of a dataset's prepared output. */
export interface OutputState {
  /** `none`: no report.json covering the file; `prepared`: up to date; `stale`: see `staleBecause`. */
  state: 'none' | 'prepared' | 'stale';
  /** The output folder looked in. */
  outDir: string;
  reportJson?: string;
  reportMd?: string;
  /** The run's `ok` (false: the report lists failures). */
  ok?: boolean;
  failures?: string[];
  /** This file's entry of the report. */
  fileReport?: FileReport;
  /** The file's status in that run (`run/reports/status.ts`: ok / warnings / degraded / failed). */
  status?: RunStatus;
  /** The file's data-changing warnings in that run (`run/reports/status.ts` `fileWarnings`: its rows' and the template check's), most frequent first. */
  warnings?: { code: string; count: number }[];
  /** The record-deciding settings of that run (`runSettings.ts`; older reports get the defaults they ran with). */
  settings?: RunSettings;
  /** Records written for this file. */
  records?: number;
  tokenizer?: PrepareResult['tokenizer'];
  /** When report.json was written (ms since the epoch). */
  reportTimeMs?: number;
  outputs?: OutputFile[];
  /** Why the output is stale, e.g. `input modified after the run (size 1,024 → 2,048 bytes)`, `tokenizer changed (…)`. */
  staleBecause: string[];
  /** Stale because the input itself changed (edited, other row count, gone): the run's line numbers may point at other rows. */
  inputChanged?: boolean;
  /** Stale because the `eagle3prep.jsonc` that covers the file changed how its rows are read. */
  readingChanged?: boolean;
}

/** Options of {@link readOutputState}. */
export interface OutputStateOptions {
  /** The file's own output folder (default `defaultOutDir(file)`); a newer folder run that lists the file wins (runLocation.ts). */
  outDir?: string;
  /** The tokenizer hash of the active tokenizer (see {@link tokenizerFilesHash}); undefined = not compared. */
  tokenizerHash?: string;
  /** Current streamed row count; compared with the report's `rowsRead` when given. */
  rowCount?: number;
  /** The settings a run would use now; each one that differs from the run's makes the output stale. Undefined = not compared. */
  settings?: RunSettings;
}

/**
 * Reads `report.json` in the dataset's output folder and says whether it covers the file and is
 * still current. Stale when: the input's size or mtime differ from those the run recorded
 * (`FileReport.input`; for reports without them, the input is newer than report.json); the row
 * count differs from the report's `rowsRead`; the tokenizer hash differs from `tokenizerHash`; the
 * `eagle3prep.jsonc` that covers the file is newer than report.json; a record-deciding setting differs from
 * `opts.settings` (`differingSettings`). A report.json that cannot be parsed counts as none (with the reason in `staleBecause`). Never throws.
 */
export function readOutputState(file: string, opts: OutputStateOptions = {}): OutputState {
  const abs = path.resolve(file);
  const outDir = locateOutDir(abs, opts.outDir);
  const reportJson = path.join(outDir, OUTPUT_FILES.reportJson);
  const none: OutputState = { state: 'none', outDir, staleBecause: [] };
  let st: fs.Stats | undefined;
  let report: PrepareResult;
  let schemaVersion: number;
  try {
    st = fs.statSync(reportJson, { throwIfNoEntry: false });
    if (!st) return none;
    ({ report, schemaVersion } = readRunReport(reportJson));
  } catch (e) {
    return { ...none, staleBecause: [e instanceof ReportReadError ? e.message : `${reportJson} cannot be read: ${(e as Error).message}`] };
  }
  const fr = fileReportOf(report, abs);
  if (!fr) return none;
  const outputs = outputFilesOf(report, outDir);
  const rec = fr.input;
  const why = inputChangeReasons(abs, fr, opts.rowCount, st.mtimeMs);
  const inputChanged = why.length > 0;
  if (opts.tokenizerHash && report.tokenizer?.hash && opts.tokenizerHash !== report.tokenizer.hash) {
    why.push(`tokenizer changed (run: ${report.tokenizer.name} ${report.tokenizer.hash}, active: ${opts.tokenizerHash})`);
  }
  const runSettings = runSettingsOfReport(report);
  if (opts.settings) why.push(...describeDifferences(differingSettings(runSettings, opts.settings)));
  const beforeConfig = why.length;
  why.push(...configChangeReasons(abs, rec, st.mtimeMs));
  const readingChanged = why.length > beforeConfig;
  if (!outputs[0].exists) why.push(`${outputs[0].name} is missing`);
  if (schemaVersion < REPORT_SCHEMA_VERSION) why.push(`report.json was written by an earlier eagle3-prep (schema ${schemaVersion}, no status): prepare again`);
  // Reports of earlier versions carry no status: it is worked out from the counts as the run would have.
  const failed = !report.ok && (report.failures ?? []).some((f) => f.includes(abs) || f.includes(path.basename(abs)));
  return {
    state: why.length ? 'stale' : 'prepared',
    outDir,
    reportJson,
    reportMd: outputs[2].path,
    ok: report.ok,
    status: fr.status ?? fileStatus(fr, failed || fr.skipped === true),
    failures: report.failures,
    fileReport: fr,
    warnings: fileWarnings(fr, report.templateCheck),
    records: fr.recordsWritten,
    tokenizer: report.tokenizer,
    settings: runSettings,
    reportTimeMs: st.mtimeMs,
    outputs,
    staleBecause: why,
    inputChanged,
    readingChanged,
  };
}

/**
 * The output files a report names for the dataset's outputs, and whether each is there: the records file (the JSONL,
 * or the Parquet file of a run with `format: parquet`; `conversations.jsonl` of a `format: messages` run, which writes
 * no records, docs/outputs.md), `prompts_to_generate.jsonl` and `report.md`, in that order.
 */
function outputFilesOf(report: PrepareResult, outDir: string): OutputFile[] {
  const parquetOnly = report.outputs?.format === 'parquet';
  const names: [string, string][] = [
    report.outputs?.format === 'messages'
      ? [CONVERSATIONS_FILE, report.outputs.conversations ?? path.join(outDir, CONVERSATIONS_FILE)]
      : parquetOnly
        ? [TOKENIZED_DATA_PARQUET, report.outputs?.tokenizedDataParquet ?? recordsFileIn(outDir, TOKENIZED_DATA_PARQUET)]
        : [OUTPUT_FILES.tokenizedData, report.outputs?.tokenizedData ?? recordsFileIn(outDir, OUTPUT_FILES.tokenizedData)],
    [OUTPUT_FILES.promptsToGenerate, report.outputs?.promptsToGenerate ?? path.join(outDir, OUTPUT_FILES.promptsToGenerate)],
    [OUTPUT_FILES.reportMd, report.outputs?.reportMd ?? path.join(outDir, OUTPUT_FILES.reportMd)],
  ];
  return names.map(([name, p]) => ({ name, path: p, exists: fs.existsSync(p) }));
}

/**
 * Why the input is not the one the run read: gone, another size or mtime than the run recorded (for reports without
 * them, newer than report.json, written at `reportMtimeMs`), or another row count than the run read.
 */
function inputChangeReasons(abs: string, fr: FileReport, rowCount: number | undefined, reportMtimeMs: number): string[] {
  const why: string[] = [];
  const input = fs.statSync(abs, { throwIfNoEntry: false });
  const rec = fr.input;
  if (!input) why.push('the input file no longer exists');
  else if (rec) {
    if (rec.size !== input.size)
      why.push(`input changed since the run (size ${rec.size.toLocaleString('en-US')} → ${input.size.toLocaleString('en-US')} bytes)`);
    else if (Math.abs(rec.mtimeMs - input.mtimeMs) > 1)
      why.push(`input modified since the run (${new Date(rec.mtimeMs).toISOString()} → ${new Date(input.mtimeMs).toISOString()})`);
  } else if (input.mtimeMs > reportMtimeMs) why.push('input modified after report.json was written');
  if (rowCount !== undefined && rowCount !== fr.rowsRead)
    why.push(`the file has ${rowCount.toLocaleString('en-US')} rows, the run read ${fr.rowsRead.toLocaleString('en-US')}`);
  return why;
}

/**
 * eagle3prep.jsonc (role aliases, field mappings) decides how rows are read: a change that can change this file's
 * records makes the output stale (formats/appliedConfig.ts); for a report without the applied config, a config file
 * newer than report.json (written at `reportMtimeMs`).
 */
function configChangeReasons(abs: string, rec: FileReport['input'], reportMtimeMs: number): string[] {
  if (rec?.projectConfig) return configStaleReasons(abs, rec.projectConfig, appliedConfigOf(abs));
  const config = findProjectConfig(abs);
  const cst = config ? fs.statSync(config, { throwIfNoEntry: false }) : undefined;
  return config && cst && cst.mtimeMs > reportMtimeMs ? [`${path.basename(config)} changed since the run (${config})`] : [];
}

// ------------------------------------------------------------------ whole scan

/** Everything the datasets tree shows for one file. */
export interface DatasetScan {
  file: string;
  kind: DatasetKind;
  size: number;
  mtimeMs: number;
  /** The file's stamp when scanned (read/fileStamp.ts: change and modification times, size, inode; '' when missing): the scan's format and row count hold while it is the file's. */
  stamp: string;
  /** Detected format (`sharegpt`, `openai-messages`, …, `unknown`); undefined when reading failed. */
  format?: string;
  evidence: string[];
  /** Streamed row count; undefined when reading failed. */
  rows?: number;
  /** Why the file could not be read / detected (names the file). */
  error?: string;
  output: OutputState;
  /** Time the scan took, ms. */
  elapsedMs: number;
}

/** Options of {@link scanDataset}. */
export interface ScanOptions extends Omit<OutputStateOptions, 'rowCount'> {
  signal?: AbortSignal;
  /** A previous scan of the same file: when its stamp is the file's, its format and row count are reused (only the output state is re-read). */
  previous?: DatasetScan;
}

/**
 * Scans one dataset file: detected format (first rows), streamed row count, output state.
 * Reuses `previous`'s format and count when the file's stamp (read/fileStamp.ts) did not change.
 * Never throws for bad data (`error` is set); rethrows only an abort.
 */
export async function scanDataset(file: string, opts: ScanOptions = {}): Promise<DatasetScan> {
  const t0 = performance.now();
  const abs = path.resolve(file);
  const kind = datasetKind(abs) ?? { container: 'jsonl', compression: null };
  const st = fs.statSync(abs, { throwIfNoEntry: false });
  if (!st) {
    return {
      file: abs,
      kind,
      size: 0,
      mtimeMs: 0,
      stamp: '',
      evidence: [],
      error: `${abs}: no such file`,
      output: readOutputState(abs, opts),
      elapsedMs: performance.now() - t0,
    };
  }
  const prev = opts.previous;
  const stamp = fileStamp(st);
  let format: string | undefined;
  let evidence: string[] = [];
  let rows: number | undefined;
  let error: string | undefined;
  if (prev && prev.stamp === stamp && prev.error === undefined) {
    ({ format, evidence, rows } = prev);
  } else {
    try {
      const det = await detectDatasetFormat(abs, opts.signal);
      format = det.format;
      evidence = det.evidence;
      rows = await countDatasetRows(abs, opts.signal);
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      error = (e as Error).message;
    }
  }
  return {
    file: abs,
    kind,
    size: st.size,
    mtimeMs: st.mtimeMs,
    stamp,
    format,
    evidence,
    rows,
    error,
    output: readOutputState(abs, { ...opts, rowCount: rows }),
    elapsedMs: performance.now() - t0,
  };
}

/**
 * Runs `fn` over `items` with at most `limit` calls in flight; resolves with the results in
 * input order. A rejection of `fn` rejects the whole (the other calls still finish).
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
