/** Where a `prepare` run writes (docs/outputs.md): its output paths and format, and the sinks that stage its files until commit. */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { AtomicOutput } from './output';
import {
  CONVERSATIONS_FILE,
  CONVERSATIONS_SHAREGPT_FILE,
  OUTPUT_FILES,
  outputPathsIn,
  PROBLEMS_FILE,
  recordsPathIn,
  SPECULATORS_DIR,
  SPECULATORS_FILES,
  TOKEN_COUNTS_FILE,
  TOKENIZED_DATA_PARQUET,
} from '../outputFiles';
import { ParquetRecordsOutput } from './parquetOutput';
import { SpeculatorsDatasetOutput } from './speculatorsOutput';
import { version as PACKAGE_VERSION } from '../../../../package.json';
import type { MaskPolicy } from '../../types';
import { OUTPUT_FORMATS } from '../../records/rowResult';
import type { PrepareOptions, PrepareResult, RunSetup } from '../contract';
import type { OutputFormat } from '../../records/rowResult';

/**
 * The output folder, format and paths of a run; throws when the format is unknown or an input is one of the outputs.
 * Records go in the folder's `data/`; format `messages` writes `conversations.jsonl` instead of records, and
 * `conversations_sharegpt.jsonl` too with `trainer` `eagle`.
 */
export function planOutputs(opts: Pick<PrepareOptions, 'outDir' | 'format' | 'inputs' | 'trainer'>): {
  outDir: string;
  format: OutputFormat;
  outputs: PrepareResult['outputs'];
  tokenCountsPath: string;
} {
  const outDir = resolve(opts.outDir);
  const format = opts.format ?? OUTPUT_FORMATS[0];
  if (!OUTPUT_FORMATS.includes(format)) throw new Error(`format must be one of ${OUTPUT_FORMATS.join(', ')} (got "${String(format)}")`);
  const parquetPath = recordsPathIn(outDir, TOKENIZED_DATA_PARQUET);
  const outputs: PrepareResult['outputs'] = {
    ...outputPathsIn(outDir),
    ...(format === 'parquet' || format === 'both' ? { tokenizedDataParquet: parquetPath } : {}),
    ...(format === 'messages' ? { conversations: join(outDir, CONVERSATIONS_FILE) } : {}),
    ...(format === 'messages' && opts.trainer === 'eagle' ? { conversationsSharegpt: join(outDir, CONVERSATIONS_SHAREGPT_FILE) } : {}),
    problems: join(outDir, PROBLEMS_FILE),
    ...(opts.trainer === 'speculators' ? { speculatorsDataset: join(outDir, SPECULATORS_DIR) } : {}),
  };
  const tokenCountsPath = join(outDir, TOKEN_COUNTS_FILE);
  // The conversation files only when this run writes them: a user's own dataset may have their names (they are removed
  // as stale only when a previous report lists them, and never when an input: parquetOutput.ts removeStaleRecordFiles).
  // The records files of the layout before data/ too: a run removes them when it commits.
  const before = [OUTPUT_FILES.tokenizedData, TOKENIZED_DATA_PARQUET].map((n) => join(outDir, n));
  const speculators = Object.values(SPECULATORS_FILES).map((n) => join(outDir, SPECULATORS_DIR, n));
  const outputPaths = new Set(
    [...Object.values(outputs), parquetPath, tokenCountsPath, ...before, ...speculators].filter((x): x is string => typeof x === 'string'),
  );
  for (const input of opts.inputs) {
    if (outputPaths.has(resolve(input)))
      throw new Error(`${resolve(input)} is an output of this run (--out ${outDir}); inputs are never overwritten: choose another --out`);
  }
  return { outDir, format, outputs, tokenCountsPath };
}

/** An output the run writes to: an {@link AtomicOutput}, or nothing (dry run). */
export type Sink = Pick<AtomicOutput, 'write' | 'bytesWritten' | 'rollback' | 'commit' | 'abort'>;
export const NULL_SINK: Sink = { write: async () => {}, bytesWritten: 0, rollback: async () => {}, commit: async () => {}, abort: async () => {} };

/** Awaits a cleanup step, ignoring its failure (used on paths that already carry an error). Never rejects. */
export async function settle(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch {
    /* the run's own error is the one reported */
  }
}

/** Key-value metadata of a Parquet records file: what made it (`eagle3_prep`, JSON). */
export function parquetMetadata(tok: RunSetup['tokenizer'], opts: PrepareOptions & { mask: MaskPolicy }): Record<string, string> {
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
export class RecordOutputs implements Sink {
  private readonly jsonl: AtomicOutput;
  private readonly parquet: ParquetRecordsOutput | null;
  private readonly speculators: SpeculatorsDatasetOutput | null;

  constructor(
    outputs: PrepareResult['outputs'],
    private readonly format: OutputFormat,
    parquetOpts: { createdBy: string; metadata: Record<string, string> },
  ) {
    this.jsonl = new AtomicOutput(outputs.tokenizedData);
    this.parquet = outputs.tokenizedDataParquet ? new ParquetRecordsOutput(outputs.tokenizedDataParquet, parquetOpts) : null;
    this.speculators = outputs.speculatorsDataset ? new SpeculatorsDatasetOutput(outputs.speculatorsDataset) : null;
  }

  /** Adds one record line (JSON of a TokenizedRecord, newline included), as text or as its UTF-8 bytes. */
  write(line: string | Uint8Array): Promise<void> {
    return this.jsonl.write(line);
  }

  get bytesWritten(): number {
    return this.jsonl.bytesWritten;
  }

  rollback(mark: number): Promise<void> {
    return this.jsonl.rollback(mark);
  }

  /**
   * Makes the Parquet file and the speculators dataset from the staged records (when the run
   * writes them), then renames every record file into place.
   */
  async commit(): Promise<void> {
    if (this.parquet || this.speculators) {
      const staged = await this.jsonl.closeForReading();
      const lines = createInterface({ input: createReadStream(staged, { encoding: 'utf8' }), crlfDelay: Infinity });
      for await (const line of lines) {
        if (!line) continue;
        await this.parquet?.write(line);
        await this.speculators?.write(line);
      }
      await this.parquet?.finish();
      await this.parquet?.commit();
      await this.speculators?.commit();
    }
    if (this.format === 'parquet') await this.jsonl.abort();
    else await this.jsonl.commit();
  }

  /** Discards every temporary file. Never rejects. */
  async abort(): Promise<void> {
    await settle(this.parquet?.abort() ?? Promise.resolve());
    await settle(this.speculators?.abort() ?? Promise.resolve());
    await settle(this.jsonl.abort());
  }

  /** The final paths of the record files the run writes (the speculators dataset's files last). */
  paths(): string[] {
    return [...(this.format !== 'parquet' ? [this.jsonl.path] : []), ...(this.parquet ? [this.parquet.path] : []), ...(this.speculators?.paths() ?? [])];
  }
}
