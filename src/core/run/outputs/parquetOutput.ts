/**
 * `tokenized_data.parquet`: the training records as an Apache Parquet file
 * that Hugging Face `datasets` (`load_dataset("parquet", data_files=…)`),
 * pandas and pyarrow read as they are. Written with `hyparquet-writer` (pure
 * JavaScript; docs/outputs.md "Parquet" has the measurements that chose it), streamed
 * one row group at a time, atomically (a temporary file renamed on commit, as
 * the JSONL: `output.ts`), records in the order they are given.
 *
 * Schema (Parquet format specification, `LogicalTypes.md`; the Arrow type
 * pyarrow reads each column as, and so `datasets`' feature, in brackets):
 *
 * | column | Parquet | Arrow / `datasets` |
 * | --- | --- | --- |
 * | `id` | BYTE_ARRAY, STRING (UTF8), required | `string` / `Value("string")` |
 * | `source` | required group of `file` (STRING, required), `line` (INT64, required), `element` (INT32, optional) | `struct<file: string, line: int64, element: int32>` / a dict |
 * | `input_ids` | required 3-level LIST (`list` repeated group, `element` INT32 required) | `list<element: int32>` / `Sequence(Value("int32"))` |
 * | `loss_mask` | as `input_ids`, element INT32 with ConvertedType INT_8 (= logical INTEGER(8, signed)) | `list<element: int8>` / `Sequence(Value("int8"))` |
 * | `seq_len`, `n_prompt_tokens`, `n_response_tokens` | INT32, required | `int32` |
 * | `ids_source` | BYTE_ARRAY STRING, optional (null unless the row came from `generate`) | `string` (nullable) |
 *
 * `source` is a struct, not flattened columns, so a row has the same shape as
 * the JSONL record (`{"source": {"file", "line"}}`); `element` is null unless
 * several rows share a line. Snappy compression (every Parquet reader has it).
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmdirSync, rmSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { TokenizedRecord } from '../../types';
import { tempPathFor } from './output';
import {
  CONVERSATIONS_FILE,
  CONVERSATIONS_SHAREGPT_FILE,
  OUTPUT_FILES,
  RECORDS_DIR,
  previousRunFiles,
  recordsPathIn,
  SPECULATORS_DIR,
  SPECULATORS_FILES,
  TOKENIZED_DATA_PARQUET,
} from '../outputFiles';

/** A row group is written when it holds this many tokens (`input_ids` values) … */
export const ROW_GROUP_TOKENS = 262_144;
/** … or this many records, whichever comes first. */
export const ROW_GROUP_RECORDS = 10_000;

/** The Parquet schema of a records file (flattened, depth-first, as in the file footer). */
export const RECORDS_SCHEMA = [
  { name: 'root', num_children: 8 },
  { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'REQUIRED' },
  { name: 'source', repetition_type: 'REQUIRED', num_children: 3 },
  { name: 'file', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'REQUIRED' },
  { name: 'line', type: 'INT64', repetition_type: 'REQUIRED' },
  { name: 'element', type: 'INT32', repetition_type: 'OPTIONAL' },
  { name: 'input_ids', repetition_type: 'REQUIRED', converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', type: 'INT32', repetition_type: 'REQUIRED' },
  { name: 'loss_mask', repetition_type: 'REQUIRED', converted_type: 'LIST', logical_type: { type: 'LIST' }, num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  // ConvertedType INT_8 only: every reader derives the logical type INTEGER(8, signed) from it; hyparquet-writer 0.17
  // serializes an explicit IntType's bitWidth (a Thrift i8) as an i32, which arrow-rs reads as 16 bits and rejects.
  { name: 'element', type: 'INT32', converted_type: 'INT_8', repetition_type: 'REQUIRED' },
  { name: 'seq_len', type: 'INT32', repetition_type: 'REQUIRED' },
  { name: 'n_prompt_tokens', type: 'INT32', repetition_type: 'REQUIRED' },
  { name: 'n_response_tokens', type: 'INT32', repetition_type: 'REQUIRED' },
  { name: 'ids_source', type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' }, repetition_type: 'OPTIONAL' },
] as const;

type Writer = import('hyparquet-writer').ParquetWriter;

/**
 * A streamed `tokenized_data.parquet` that appears at its path only when
 * committed. Records are buffered until a row group is full
 * ({@link ROW_GROUP_TOKENS} tokens or {@link ROW_GROUP_RECORDS} records), then
 * encoded and written to the temporary file: memory holds one row group.
 */
export class ParquetRecordsOutput {
  private readonly tmp: string;
  private fd: number | null = null;
  private writer: Writer | null = null;
  private rows: TokenizedRecord[] = [];
  private tokens = 0;
  private finished = false;
  /** Records written so far (committed or not). */
  count = 0;

  /**
   * @param path final path; its folder is created on first write
   * @param opts.createdBy the file's `created_by` (e.g. `eagle3-prep 0.1.0`)
   * @param opts.rowGroupTokens / opts.rowGroupRecords row group bounds (defaults above; tests use small ones)
   */
  constructor(
    readonly path: string,
    private readonly opts: {
      createdBy?: string;
      rowGroupTokens?: number;
      rowGroupRecords?: number;
      metadata?: Record<string, string>;
      /** Compression (default SNAPPY; `npm run bench:parquet` compares UNCOMPRESSED and GZIP). */
      codec?: 'SNAPPY' | 'UNCOMPRESSED' | 'GZIP';
    } = {},
  ) {
    this.tmp = tempPathFor(path);
  }

  private async open(): Promise<Writer> {
    if (this.writer) return this.writer;
    const { ByteWriter, ParquetWriter } = await import('hyparquet-writer');
    mkdirSync(dirname(this.path), { recursive: true });
    const fd = openSync(this.tmp, 'w+');
    this.fd = fd;
    const bytes: import('hyparquet-writer').Writer & { index: number } = new ByteWriter(1 << 20);
    // Each encoded row group goes to the file and the buffer starts over (hyparquet-writer calls flush after every row group).
    const flush = () => {
      if (bytes.index > 0) writeSync(fd, new Uint8Array(bytes.buffer, 0, bytes.index));
      bytes.index = 0;
    };
    bytes.flush = flush;
    bytes.finish = flush;
    this.writer = new ParquetWriter({
      writer: bytes,
      schema: RECORDS_SCHEMA as unknown as Writer['schema'],
      codec: this.opts.codec ?? 'SNAPPY',
      compressors: { GZIP: (b: Uint8Array) => new Uint8Array(gzipSync(b)) },
      statistics: false,
      createdBy: this.opts.createdBy ?? 'eagle3-prep',
      // An empty list must not be written: hyparquet-writer 0.17 gives an empty Thrift list no element type (see emptyFileFix).
      kvMetadata:
        this.opts.metadata && Object.keys(this.opts.metadata).length ? Object.entries(this.opts.metadata).map(([key, value]) => ({ key, value })) : undefined,
    });
    return this.writer;
  }

  /** Adds one record (a `tokenized_data.jsonl` line, newline optional, or the record itself). */
  async write(record: string | TokenizedRecord): Promise<void> {
    const r: TokenizedRecord = typeof record === 'string' ? JSON.parse(record) : record;
    this.rows.push(r);
    this.tokens += r.input_ids.length;
    this.count++;
    if (this.tokens >= (this.opts.rowGroupTokens ?? ROW_GROUP_TOKENS) || this.rows.length >= (this.opts.rowGroupRecords ?? ROW_GROUP_RECORDS)) {
      await this.flushRowGroup();
    }
  }

  private async flushRowGroup(): Promise<void> {
    const writer = await this.open();
    const rows = this.rows;
    if (rows.length === 0) return;
    this.rows = [];
    this.tokens = 0;
    await writer.write({
      rowGroupSize: rows.length,
      columnData: [
        { name: 'id', data: rows.map((r) => r.id) },
        {
          name: 'source',
          data: rows.map((r) => ({ file: r.source.file, line: BigInt(r.source.line), element: r.source.element ?? null })),
        },
        { name: 'input_ids', data: rows.map((r) => r.input_ids) },
        { name: 'loss_mask', data: rows.map((r) => r.loss_mask) },
        { name: 'seq_len', data: Int32Array.from(rows, (r) => r.seq_len) },
        { name: 'n_prompt_tokens', data: Int32Array.from(rows, (r) => r.n_prompt_tokens) },
        { name: 'n_response_tokens', data: Int32Array.from(rows, (r) => r.n_response_tokens) },
        { name: 'ids_source', data: rows.map((r) => (r as { ids_source?: string }).ids_source ?? null) },
      ],
    });
  }

  /** Writes the last row group and the footer, and closes the temporary file (idempotent). */
  async finish(): Promise<void> {
    if (this.finished) return;
    await this.flushRowGroup();
    const writer = await this.open(); // an empty file is still a valid Parquet file with the schema
    await writer.finish();
    this.finished = true;
    if (this.count === 0 && this.fd !== null) emptyFileFix(this.fd);
    this.close();
  }

  /** {@link finish}, then renames the temporary file to the final path. */
  async commit(): Promise<void> {
    await this.finish();
    renameSync(this.tmp, this.path);
  }

  /** Discards the temporary file; the final path is left as it was. Never throws. */
  async abort(): Promise<void> {
    this.rows = [];
    try {
      this.close();
    } catch {
      /* already closed or never opened: the file is removed below */
    }
    try {
      rmSync(this.tmp, { force: true });
    } catch {
      /* a cleanup that fails must not replace the run's own error */
    }
  }

  private close(): void {
    if (this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      closeSync(fd);
    }
  }
}

/**
 * Gives the footer of a file without row groups a well-formed empty
 * `row_groups` list. hyparquet-writer 0.17 writes an empty Thrift compact list
 * with element type 0 instead of STRUCT (12); readers built on the C++ Thrift
 * library (pyarrow, DuckDB) ignore it, arrow-rs refuses the file. In
 * `FileMetaData` the field `num_rows` (3, i64, here 0: bytes `16 00`) is
 * followed by `row_groups` (4, list: header `19`, then the list header `00`
 * that becomes `0C`). Nothing changes when the bytes are not found (a fixed
 * writer writes `19 0C`).
 */
function emptyFileFix(fd: number): void {
  const size = fstatSync(fd).size;
  const tail = Buffer.alloc(8);
  readSync(fd, tail, 0, 8, size - 8);
  const metaLength = tail.readUInt32LE(0);
  const metaStart = size - 8 - metaLength;
  const meta = Buffer.alloc(metaLength);
  readSync(fd, meta, 0, metaLength, metaStart);
  const at = meta.indexOf(Buffer.from([0x16, 0x00, 0x19, 0x00]));
  if (at >= 0) writeSync(fd, Buffer.from([0x0c]), 0, 1, metaStart + at + 3);
}

/** What a Parquet records file says made it: its footer's `created_by` and key-value metadata (`eagle3_prep`, runOutputs.ts `parquetMetadata`). */
export interface ParquetMadeBy {
  createdBy?: string;
  metadata: Record<string, string>;
}

/**
 * Reads the footer of a `tokenized_data.parquet`: `created_by` and the key-value metadata (a key without a
 * value reads as the empty string).
 * @throws Error naming the file when it is not a readable Parquet file
 */
export async function readParquetMadeBy(file: string): Promise<ParquetMadeBy> {
  const hp = await import('hyparquet');
  try {
    const meta = await hp.parquetMetadataAsync(await hp.asyncBufferFromFile(file));
    return { createdBy: meta.created_by, metadata: Object.fromEntries((meta.key_value_metadata ?? []).map((kv) => [kv.key, kv.value ?? ''])) };
  } catch (e) {
    throw new Error(`cannot read ${file}: not a readable Parquet file (${(e as Error).message})`, { cause: e });
  }
}

/**
 * The records of a `tokenized_data.parquet` (as written by
 * {@link ParquetRecordsOutput}), row group by row group, as the JSONL's
 * records: `line` a number, `element` and `ids_source` only when set.
 * @throws Error naming the file when it is not a readable Parquet file
 */
export async function* readParquetRecords(file: string): AsyncGenerator<TokenizedRecord> {
  const hp = await import('hyparquet');
  let asyncBuffer: Awaited<ReturnType<typeof hp.asyncBufferFromFile>>;
  let meta: Awaited<ReturnType<typeof hp.parquetMetadataAsync>>;
  try {
    asyncBuffer = await hp.asyncBufferFromFile(file);
    meta = await hp.parquetMetadataAsync(asyncBuffer);
  } catch (e) {
    throw new Error(`cannot read ${file}: not a readable Parquet file (${(e as Error).message})`, { cause: e });
  }
  let rowStart = 0;
  for (const group of meta.row_groups) {
    const n = Number(group.num_rows);
    const rows = await hp.parquetReadObjects({ file: asyncBuffer, metadata: meta, rowStart, rowEnd: rowStart + n });
    for (const row of rows) yield recordOfParquetRow(row);
    rowStart += n;
  }
}

/** One row read by hyparquet → the record as the JSONL has it (key order included). */
export function recordOfParquetRow(row: Record<string, unknown>): TokenizedRecord {
  const s = row.source as { file: string; line: bigint | number; element?: number | null };
  const source =
    s.element === null || s.element === undefined ? { file: s.file, line: Number(s.line) } : { file: s.file, line: Number(s.line), element: s.element };
  const rec: TokenizedRecord & { ids_source?: string } = {
    id: row.id as string,
    source,
    input_ids: Array.from(row.input_ids as ArrayLike<number>),
    loss_mask: Array.from(row.loss_mask as ArrayLike<number>),
    seq_len: row.seq_len as number,
    n_prompt_tokens: row.n_prompt_tokens as number,
    n_response_tokens: row.n_response_tokens as number,
  };
  if (row.ids_source !== null && row.ids_source !== undefined) rec.ids_source = row.ids_source as string;
  return rec;
}

/**
 * Removes from an output folder the files of a previous run that this run does not replace:
 * - the record file of a format it did not write (`data/tokenized_data.jsonl` after `--format parquet`,
 *   `data/tokenized_data.parquet` after `--format jsonl`, both after `--format messages`);
 * - the record files of the layout before `data/` (outputFiles.ts RECORDS_DIR: `tokenized_data.jsonl` /
 *   `.parquet` directly in the output folder);
 * - unless the run wrote one, the speculators dataset files of an earlier `--trainer speculators` run
 *   (only the files `prepare` writes there; the folder goes when it is left empty);
 * - `conversations.jsonl` and `conversations_sharegpt.jsonl` of a previous `--format messages` run, when
 *   this run does not write them.
 * Each only when the folder's `report.json` (the previous run's: call this before writing the new one)
 * lists it as written ({@link previousRunFiles}): a file of one of these names that no report lists is
 * the user's (their own dataset, speculators' `prepare_data.py` output, …) and is kept, returned in
 * `kept` for the run to say so. Left there, a previous run's data would sit beside this run's report
 * as if they were its own. An input of the run is never removed; `data/` goes when it is left empty.
 * @param opts.speculators whether the run wrote the speculators dataset; `sharegpt` whether it wrote
 *   `conversations_sharegpt.jsonl` (`messages` with `--trainer eagle`); `inputs` the run's inputs (absolute paths)
 * @returns `removed`: the paths removed; `kept`: files of those names that no previous report lists, left as they are
 */
export function removeStaleRecordFiles(
  outDir: string,
  format: 'jsonl' | 'parquet' | 'both' | 'messages' | undefined,
  opts: { speculators?: boolean; sharegpt?: boolean; inputs?: readonly string[] } = {},
): { removed: string[]; kept: string[] } {
  const f = format ?? 'jsonl';
  const recordsWritten = new Set([
    ...(f === 'jsonl' || f === 'both' ? [OUTPUT_FILES.tokenizedData] : []),
    ...(f === 'parquet' || f === 'both' ? [TOKENIZED_DATA_PARQUET] : []),
  ]);
  const conversationsWritten = new Set([
    ...(f === 'messages' ? [CONVERSATIONS_FILE] : []),
    ...(f === 'messages' && opts.sharegpt ? [CONVERSATIONS_SHAREGPT_FILE] : []),
  ]);
  const inputs = new Set((opts.inputs ?? []).map((p) => resolve(p)));
  const candidates = [
    ...[OUTPUT_FILES.tokenizedData, TOKENIZED_DATA_PARQUET].filter((n) => !recordsWritten.has(n)).map((n) => recordsPathIn(outDir, n)),
    ...[OUTPUT_FILES.tokenizedData, TOKENIZED_DATA_PARQUET].map((n) => join(outDir, n)),
    ...(opts.speculators ? [] : Object.values(SPECULATORS_FILES).map((n) => join(outDir, SPECULATORS_DIR, n))),
    ...[CONVERSATIONS_FILE, CONVERSATIONS_SHAREGPT_FILE].filter((n) => !conversationsWritten.has(n)).map((n) => join(outDir, n)),
  ].filter((p) => !inputs.has(resolve(p)) && existsSync(p));
  const previous = candidates.length ? new Set(previousRunFiles(outDir)) : new Set<string>();
  const removed: string[] = [];
  const kept: string[] = [];
  for (const p of candidates) {
    if (!previous.has(resolve(p))) {
      kept.push(p);
      continue;
    }
    try {
      rmSync(p, { force: true });
      removed.push(p);
    } catch {
      /* reported as still there by the Datasets view; never fails the run */
    }
  }
  for (const d of [...(opts.speculators ? [] : [SPECULATORS_DIR]), ...(recordsWritten.size ? [] : [RECORDS_DIR])])
    if (removed.some((p) => dirname(p) === join(outDir, d)))
      try {
        rmdirSync(join(outDir, d)); // only when empty: the user's files (draft-vocab's, hidden states) stay
      } catch {
        /* not there, or not empty */
      }
  return { removed, kept };
}
