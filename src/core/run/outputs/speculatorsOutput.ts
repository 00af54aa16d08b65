/**
 * The speculators dataset folder (`<outDir>/speculators/`, `prepare --trainer speculators`): the
 * records as the folder `datasets.Dataset.save_to_disk` writes, which speculators' `train.py
 * --data-path` opens with `datasets.load_from_disk` and trains from with no conversion.
 *
 * What the folder holds, read from the loading and saving code (their 2026 snapshots):
 * - huggingface/datasets `src/datasets/arrow_dataset.py` `save_to_disk` / `_save_to_disk_single`
 *   and `load_from_disk`: shards `data-%05d-of-%05d.arrow` written by `ArrowWriter`
 *   (`arrow_writer.py`, a `pyarrow.RecordBatchStreamWriter`: the Arrow IPC *stream* format, read
 *   back with `pa.ipc.open_stream` over a memory map) whose schema metadata `huggingface` is
 *   `{"info": {"features": …}}`; `state.json` (`_data_files`, `_fingerprint`, `_format_columns`,
 *   `_format_kwargs`, `_format_type`, `_output_all_columns`, `_split`, sorted, indent 2); and
 *   `dataset_info.json` (`asdict(DatasetInfo)`: the empty strings `citation`, `description`,
 *   `homepage`, `license` and `features`, first-level keys sorted, indent 2). `load_from_disk`
 *   reads the shards `_data_files` lists, in that order, and applies the format of `state.json`.
 * - vllm-project/speculators `src/speculators/data_generation/preprocessing.py`: what
 *   `scripts/prepare_data.py` saves for pre-tokenized rows (`_passthrough_pretokenized`,
 *   `_append_row`): columns `input_ids` and `loss_mask` (torch `long` tensors: Arrow
 *   `list<int64>`) and `seq_len` (`int64`), then `set_format(type="torch")`, which `state.json`
 *   keeps as `"_format_type": "torch"`. `src/speculators/train/data.py` `ArrowDataset` needs that
 *   format: it calls `.tolist()` on `data[i]["input_ids"]` and compares it with `torch.equal`, and
 *   reads `seq_len` for its length-grouped sampler.
 *
 * The features are written with `_type` `Sequence`, which every `datasets` version reads
 * (4.x turns it into its `List`, as `features.py` `generate_from_dict` says "backward
 * compatibility"); `List`, what 4.x itself writes, is unknown to 3.x. One shard whatever the size:
 * `save_to_disk`'s 500 MB shards are its writer's choice; `load_from_disk` concatenates whatever
 * `_data_files` lists. Record batches of at most 1,000 rows (datasets' `DEFAULT_MAX_BATCH_SIZE`)
 * and 2^21 tokens bound the memory held (two int64 columns of a batch) and keep a list column's 32-bit offsets far from overflow.
 *
 * Written from the run's staged records at commit (like Parquet, run/outputs/runOutputs.ts): the Arrow
 * file goes to a temporary file beside its final path and is renamed into place, then the two JSON
 * files are written atomically; other files in the folder (draft-vocab's `d2t.npy`, `t2d.npy`,
 * `token_freq.pt`, speculators' `hidden_states/`) are left alone.
 */
import { endianness } from 'node:os';
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Field, Int64, List, makeData, RecordBatch, RecordBatchStreamWriter, Schema, Struct } from 'apache-arrow';
import { tempPathFor, writeFileAtomic } from './output';
import { SPECULATORS_FILES } from '../outputFiles';

/** Rows per record batch (datasets' `config.DEFAULT_MAX_BATCH_SIZE`). */
const BATCH_ROWS = 1000;
/** Tokens per record batch at most (a record longer than this is a batch of its own). */
const BATCH_TOKENS = 1 << 21;

/** The `datasets` features of the three columns, as `dataset_info.json` and the Arrow schema metadata hold them. */
export const SPECULATORS_FEATURES = {
  input_ids: { feature: { dtype: 'int64', _type: 'Value' }, _type: 'Sequence' },
  loss_mask: { feature: { dtype: 'int64', _type: 'Value' }, _type: 'Sequence' },
  seq_len: { dtype: 'int64', _type: 'Value' },
} as const;

function arrowSchema(): Schema {
  const list = () => new List(new Field('item', new Int64(), true));
  return new Schema(
    [new Field('input_ids', list(), true), new Field('loss_mask', list(), true), new Field('seq_len', new Int64(), true)],
    new Map([['huggingface', JSON.stringify({ info: { features: SPECULATORS_FEATURES } })]]),
  );
}

/** One record's columns as this output reads them from a `tokenized_data.jsonl` line. */
interface Row {
  ids: number[];
  mask: number[];
}

/**
 * A `datasets.save_to_disk` folder of the records for speculators, filled record by record and
 * made visible only by {@link commit}.
 */
export class SpeculatorsDatasetOutput {
  private readonly schema = arrowSchema();
  private readonly arrowPath: string;
  private readonly tmp: string;
  private fd: number | null = null;
  private writer: RecordBatchStreamWriter | null = null;
  private drained: Promise<void> | null = null;
  private pending: Row[] = [];
  private pendingTokens = 0;
  private readonly hash = createHash('sha256');
  private failure: unknown = null;
  /** Records written. */
  rows = 0;

  /** @param dir the folder (`<outDir>/speculators`); created at the first write or commit */
  constructor(readonly dir: string) {
    // Values are set as int32 halves in Arrow's little-endian byte order (flush).
    if (endianness() !== 'LE') throw new Error('the speculators dataset writer needs a little-endian machine');
    this.arrowPath = join(dir, SPECULATORS_FILES.arrow);
    this.tmp = tempPathFor(this.arrowPath);
  }

  /** The files the folder gets from this output (final paths). */
  paths(): string[] {
    return Object.values(SPECULATORS_FILES).map((n) => join(this.dir, n));
  }

  private async start(): Promise<RecordBatchStreamWriter> {
    if (this.writer) return this.writer;
    await mkdir(this.dir, { recursive: true });
    this.fd = openSync(this.tmp, 'w');
    const w = new RecordBatchStreamWriter();
    // The writer queues its bytes; this loop takes them to the file as they come, so at most one
    // batch is held (write() yields after each batch for it to run).
    this.drained = (async () => {
      try {
        for await (const chunk of w) {
          for (let off = 0; off < chunk.byteLength;) off += writeSync(this.fd!, chunk, off);
          this.hash.update(chunk);
        }
      } catch (e) {
        this.failure ??= e;
      }
    })();
    w.reset(undefined, this.schema);
    this.writer = w;
    return w;
  }

  /**
   * Adds one record: a `tokenized_data.jsonl` line (newline optional) or its parsed object.
   * @throws Error when the record has no `input_ids` / `loss_mask` of the same length
   */
  async write(record: string | { input_ids: ArrayLike<number>; loss_mask: ArrayLike<number> }): Promise<void> {
    const r = typeof record === 'string' ? (JSON.parse(record) as { input_ids: number[]; loss_mask: number[] }) : record;
    if (!r || !Array.isArray(r.input_ids) || !Array.isArray(r.loss_mask) || r.input_ids.length !== r.loss_mask.length)
      throw new Error('speculators dataset: a record without input_ids and loss_mask of one length');
    this.pending.push({ ids: r.input_ids, mask: r.loss_mask });
    this.pendingTokens += r.input_ids.length;
    if (this.pending.length >= BATCH_ROWS || this.pendingTokens >= BATCH_TOKENS) await this.flush();
  }

  private async flush(): Promise<void> {
    const w = await this.start();
    if (!this.pending.length) return;
    const n = this.pending.length;
    const offsets = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + this.pending[i].ids.length;
    const total = offsets[n];
    const ids = new BigInt64Array(total);
    const mask = new BigInt64Array(total);
    const seq = new BigInt64Array(n);
    // int64 values set as two int32 halves (little-endian, Arrow's byte order): no BigInt per token.
    const ids32 = new Int32Array(ids.buffer);
    const mask32 = new Int32Array(mask.buffer);
    for (let i = 0, k = 0; i < n; i++) {
      const row = this.pending[i];
      for (let j = 0; j < row.ids.length; j++, k++) {
        const id = row.ids[j];
        const m = row.mask[j];
        if (!Number.isInteger(id) || id < 0 || id > 0x7fffffff || (m !== 0 && m !== 1))
          throw new Error(`speculators dataset: input_ids must be token ids and loss_mask 0 or 1 (got ${id}, ${m})`);
        ids32[2 * k] = id;
        mask32[2 * k] = m;
      }
      seq[i] = BigInt(row.ids.length);
    }
    const [fIds, fMask] = [this.schema.fields[0], this.schema.fields[1]];
    const listOf = (type: List, values: BigInt64Array) =>
      makeData({ type, length: n, nullCount: 0, valueOffsets: offsets, child: makeData({ type: new Int64(), length: total, nullCount: 0, data: values }) });
    const data = makeData({
      type: new Struct(this.schema.fields),
      length: n,
      nullCount: 0,
      children: [listOf(fIds.type as List, ids), listOf(fMask.type as List, mask), makeData({ type: new Int64(), length: n, nullCount: 0, data: seq })],
    });
    w.write(new RecordBatch(this.schema, data));
    this.rows += n;
    this.pending = [];
    this.pendingTokens = 0;
    await new Promise<void>((res) => setImmediate(res));
    if (this.failure) throw this.failure;
  }

  /**
   * Writes the last batch and the end-of-stream marker, renames the Arrow file into place, then
   * writes `dataset_info.json` and `state.json` (an empty dataset when nothing was written).
   */
  async commit(): Promise<void> {
    await this.flush();
    const w = await this.start();
    w.finish();
    await this.drained;
    if (this.failure) throw this.failure;
    closeSync(this.fd!);
    this.fd = null;
    renameSync(this.tmp, this.arrowPath);
    const info = { citation: '', description: '', features: SPECULATORS_FEATURES, homepage: '', license: '' };
    const state = {
      _data_files: [{ filename: SPECULATORS_FILES.arrow }],
      // datasets makes a random 16-hex-digit one; this one is the file's content hash, so the same records give the same folder.
      _fingerprint: this.hash.digest('hex').slice(0, 16),
      _format_columns: null,
      _format_kwargs: {},
      _format_type: 'torch',
      _output_all_columns: false,
      _split: null,
    };
    await writeFileAtomic(join(this.dir, SPECULATORS_FILES.info), JSON.stringify(info, null, 2));
    await writeFileAtomic(join(this.dir, SPECULATORS_FILES.state), JSON.stringify(state, null, 2));
  }

  /** Discards the temporary file; the folder is left as it was. Never rejects. */
  async abort(): Promise<void> {
    try {
      this.writer?.abort();
      await this.drained;
    } catch {
      /* the run's own error is the one reported */
    }
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        /* already closed */
      }
      this.fd = null;
    }
    rmSync(this.tmp, { force: true });
  }
}
