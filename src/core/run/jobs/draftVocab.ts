/**
 * `eagle3-prep draft-vocab`: the reduced draft vocabulary of an EAGLE-3 drafter, from the token
 * counts of prepared data (`token_counts.json`, `./tokenCounts.ts`), written in the form each
 * trainer loads.
 *
 * The mapping, as the trainers define it:
 * - the draft vocabulary is the `K` target token ids trained most often (count of the id among
 *   tokens with `loss_mask == 1`), sorted ascending: `ids[0] < ids[1] < … < ids[K-1]`;
 * - `d2t[i] = ids[i] - i` (int64, length `K`): an offset, so `target_id = i + d2t[i]`;
 * - `t2d[t] = (t is one of ids)` (bool, length `V` = the target model's `config.json` `vocab_size`,
 *   the rows of its embedding — not the tokenizer's length).
 * Sources: vllm-project/speculators `src/speculators/train/vocab_mapping.py`
 * (`build_vocab_mappings_from_distribution`: sort by count descending then id ascending, take `K`,
 * fill up with the smallest ids not taken when fewer than `K` ids were seen, sort ascending;
 * `scripts/build_vocab_mapping.py` saves `d2t.npy` and `t2d.npy`, which `scripts/train.py` reads
 * with `np.load`, and `token_freq.pt` is `torch.save` of `{token_id: count}`); sgl-project/SpecForge
 * `specforge/data/preprocessing.py` (`process_token_dict_to_mappings`: the same `d2t` offsets and
 * `t2d` booleans, saved as `torch.save({"d2t": …, "t2d": …})` and copied into the draft model's
 * int64 / bool buffers by `load_vocab_mapping`); SafeAILab/EAGLE `eagle/traineagle3/cnets.py`
 * (`scandata`: the same dict as `cache.pt` in the working folder); NVIDIA Model-Optimizer
 * `modelopt/torch/speculative/plugins/hf_eagle.py` (`load_draft_vocab_cache`: a bare int64 `d2t`
 * tensor of shape `(K,)`, `torch.load(weights_only=True)`, shape and dtype checked). Ties are broken
 * by the smaller token id first (speculators' rule; `Counter.most_common` keeps first-seen order).
 *
 * Outputs ({@link DRAFT_VOCAB_FILES}): `d2t.npy` (`<i8`, `(K,)`) and `t2d.npy` (`|b1`, `(V,)`), NumPy
 * format 1.0; `vocab_mapping.pt` and `cache.pt` (`{"d2t": int64 (K,), "t2d": bool (V,)}`), `d2t.pt`
 * (int64 `(K,)`) and `token_freq.pt` (`{id: trainable count}` of every trained id) in torch's format
 * (`../trainers/torchPt.ts`); `draft_vocab.json` (`ids`, `d2t`, the ids' trainable counts and the share
 * of trained tokens they cover; `t2d` is true exactly at `ids`).
 */
import { writeFileAtomic } from '../outputs/output';
import type { TokenCountsFile } from '../outputs/tokenCounts';
import { join } from 'node:path';
import { writeFile, rename, mkdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { boolTensor, int64Tensor, torchSaveBytes, type PtValue } from '../../trainers/torchPt';

/** The files {@link writeDraftVocab} writes, and the trainer that reads each. */
export const DRAFT_VOCAB_FILES = {
  d2tNpy: 'd2t.npy', // speculators train.py --d2t-path
  t2dNpy: 't2d.npy', // speculators train.py --t2d-path
  tokenFreq: 'token_freq.pt', // speculators train.py --token-freq-path / build_vocab_mapping.py
  vocabMapping: 'vocab_mapping.pt', // SpecForge model.vocab_mapping_path
  eagleCache: 'cache.pt', // EAGLE traineagle3 (read from the working folder)
  modeloptD2t: 'd2t.pt', // Model-Optimizer data.draft_vocab_cache
  json: 'draft_vocab.json',
} as const;

/** The draft vocabulary and its mapping arrays. */
export interface DraftVocab {
  /** Draft vocabulary size `K`. */
  size: number;
  /** Target vocabulary size `V` (length of `t2d`). */
  targetVocabSize: number;
  /** The `K` target ids, ascending. */
  ids: number[];
  /** `d2t[i] = ids[i] - i`. */
  d2t: number[];
  /** `t2d[t]` true for the ids of the draft vocabulary. */
  t2d: boolean[];
  /** Trainable-token count of each of `ids`. */
  counts: number[];
  /** Trainable tokens covered by the draft vocabulary ÷ all trainable tokens (0 when none). */
  coverage: number;
  /** Ids added (count 0) to fill up to `K` because fewer than `K` ids were trained. */
  filled: number;
}

/**
 * Picks the top-`size` ids by trainable count (ties: smaller id first), fills up with the
 * smallest unused ids when fewer were trained, and builds `d2t` / `t2d`.
 * @param counts id → trainable-token count (ids with count 0 are ignored)
 * @throws Error when `size` is not a positive integer, exceeds `targetVocabSize`, or a counted id is outside the target vocabulary
 */
export function buildDraftVocab(counts: ReadonlyMap<number, number>, size: number, targetVocabSize: number): DraftVocab {
  if (!Number.isInteger(size) || size < 1) throw new Error(`draft vocabulary size must be a positive integer (got ${size})`);
  if (!Number.isInteger(targetVocabSize) || targetVocabSize < size)
    throw new Error(`target vocabulary size ${targetVocabSize} must be an integer of at least the draft size ${size}`);
  const seen = [...counts].filter(([, c]) => c > 0);
  for (const [id] of seen)
    if (!Number.isInteger(id) || id < 0 || id >= targetVocabSize) throw new Error(`token id ${id} is outside the target vocabulary (size ${targetVocabSize})`);
  seen.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  const chosen = seen.slice(0, size).map(([id]) => id);
  const taken = new Set(chosen);
  let filled = 0;
  for (let id = 0; chosen.length < size; id++) {
    if (taken.has(id)) continue;
    chosen.push(id);
    filled++;
  }
  chosen.sort((a, b) => a - b);
  const t2d = new Array<boolean>(targetVocabSize).fill(false);
  for (const id of chosen) t2d[id] = true;
  const total = seen.reduce((a, [, c]) => a + c, 0);
  const covered = chosen.reduce((a, id) => a + (counts.get(id) ?? 0), 0);
  return {
    size,
    targetVocabSize,
    ids: chosen,
    d2t: chosen.map((id, i) => id - i),
    t2d,
    counts: chosen.map((id) => counts.get(id) ?? 0),
    coverage: total ? covered / total : 0,
    filled,
  };
}

/** Trainable counts of one or more counts files, added (same tokenizer required). */
export function trainableCounts(files: readonly TokenCountsFile[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const f of files) {
    if (f.tokenizer.hash !== files[0].tokenizer.hash)
      throw new Error(`token counts of different tokenizers (${files[0].tokenizer.name} ${files[0].tokenizer.hash}, ${f.tokenizer.name} ${f.tokenizer.hash})`);
    f.ids.forEach((id, k) => {
      if (f.trainable[k]) out.set(id, (out.get(id) ?? 0) + f.trainable[k]);
    });
  }
  return out;
}

/**
 * A NumPy `.npy` file (format version 1.0) holding a 1-D array: the magic `\x93NUMPY`, version
 * 1.0, a little-endian uint16 header length, the header dict padded with spaces to a multiple of
 * 64 bytes and ended by `\n`, then the raw C-order data.
 * @param dtype `<i8` (int64, little-endian) or `|b1` (bool, one byte 0/1)
 */
export function npyBytes(dtype: '<i8' | '|b1', values: readonly (number | boolean)[]): Buffer {
  const dict = `{'descr': '${dtype}', 'fortran_order': False, 'shape': (${values.length},), }`;
  const pre = 10; // magic (6) + version (2) + header length (2)
  const padded = Math.ceil((pre + dict.length + 1) / 64) * 64;
  const header = dict + ' '.repeat(padded - pre - dict.length - 1) + '\n';
  const head = Buffer.alloc(pre + header.length);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  head.write(header, pre, 'latin1');
  let data: Buffer;
  if (dtype === '<i8') {
    data = Buffer.alloc(values.length * 8);
    values.forEach((v, k) => data.writeBigInt64LE(BigInt(v as number), k * 8));
  } else data = Buffer.from(values.map((v) => (v ? 1 : 0)));
  return Buffer.concat([head, data]);
}

/** Reads a 1-D `.npy` written by {@link npyBytes} (tests and checks). */
export function parseNpy(buf: Buffer): { dtype: string; values: number[] } {
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error('not a .npy file');
  const len = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + len);
  const dtype = /'descr': '([^']+)'/.exec(header)?.[1] ?? '';
  const n = Number(/'shape': \((\d+),\)/.exec(header)?.[1] ?? NaN);
  const data = buf.subarray(10 + len);
  const values = dtype === '<i8' ? Array.from({ length: n }, (_, k) => Number(data.readBigInt64LE(k * 8))) : Array.from(data.subarray(0, n));
  return { dtype, values };
}

async function writeBytesAtomic(path: string, bytes: Buffer): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
}

/**
 * Writes every file of {@link DRAFT_VOCAB_FILES} into `outDir` (created), each atomically.
 * @param trainable id → trainable count of the data (the content of `token_freq.pt`; ids with count 0 left out)
 * @returns the paths written, in {@link DRAFT_VOCAB_FILES} order
 */
export async function writeDraftVocab(
  v: DraftVocab,
  outDir: string,
  source: { tokenizer: { name: string; hash: string }; countFiles: string[] },
  trainable: ReadonlyMap<number, number> = new Map(),
): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const path = (k: keyof typeof DRAFT_VOCAB_FILES) => join(outDir, DRAFT_VOCAB_FILES[k]);
  const mapping: PtValue = {
    kind: 'dict',
    entries: [
      ['d2t', int64Tensor(v.d2t)],
      ['t2d', boolTensor(v.t2d)],
    ],
  };
  const freq = [...trainable].filter(([, c]) => c > 0).sort((a, b) => a[0] - b[0]);
  await writeBytesAtomic(path('d2tNpy'), npyBytes('<i8', v.d2t));
  await writeBytesAtomic(path('t2dNpy'), npyBytes('|b1', v.t2d));
  await writeBytesAtomic(path('tokenFreq'), torchSaveBytes({ kind: 'intDict', entries: freq }, 'token_freq'));
  await writeBytesAtomic(path('vocabMapping'), torchSaveBytes(mapping, 'vocab_mapping'));
  await writeBytesAtomic(path('eagleCache'), torchSaveBytes(mapping, 'cache'));
  await writeBytesAtomic(path('modeloptD2t'), torchSaveBytes(int64Tensor(v.d2t), 'd2t'));
  const meta = {
    format: 'eagle3-prep-draft-vocab',
    version: 1,
    tokenizer: source.tokenizer,
    counts: source.countFiles,
    draftVocabSize: v.size,
    targetVocabSize: v.targetVocabSize,
    coverage: v.coverage,
    filled: v.filled,
    ids: v.ids,
    trainableCounts: v.counts,
    d2t: v.d2t,
    // t2d as the list of true positions (the same as `ids`): a JSON list of V booleans would be large.
    t2dTrue: v.ids,
  };
  await writeFileAtomic(path('json'), JSON.stringify(meta) + '\n');
  return (Object.keys(DRAFT_VOCAB_FILES) as (keyof typeof DRAFT_VOCAB_FILES)[]).map(path);
}

/**
 * The target vocabulary size `V` (the length of `t2d`) for counts files: `given` when it agrees with what
 * the files know, else the model's `vocab_size` they recorded.
 * @throws Error (a usage problem, the message gives the right number) when `given` is missing and the files
 * do not know the model's size; when `given` differs from the model's `vocab_size` (above all when it is the
 * tokenizer's length, which SpecForge and speculators refuse when they copy `t2d` into the model); when
 * `given` is below the tokenizer's length; when the files disagree on the model's size
 */
export function resolveTargetVocabSize(files: readonly Pick<TokenCountsFile, 'modelVocabSize' | 'tokenizerSize'>[], given: number | undefined): number {
  const known = [...new Set(files.map((f) => f.modelVocabSize).filter((n): n is number => Number.isInteger(n)))];
  if (known.length > 1) throw new Error(`the counts files name different model vocabulary sizes (${known.join(', ')}): give counts of one model`);
  const model = known[0];
  const tokLen = files.map((f) => f.tokenizerSize).find((n): n is number => Number.isInteger(n));
  if (given === undefined) {
    if (model !== undefined) return model;
    throw new Error(
      '--target-vocab-size is needed: the counts do not name the model\'s vocabulary size (no config.json in the tokenizer folder); give config.json "vocab_size"' +
        (tokLen !== undefined ? ` (the rows of the model's embedding, often more than the tokenizer's ${tokLen} ids)` : ''),
    );
  }
  if (model !== undefined && given !== model) {
    const what = given === tokLen ? ` is the tokenizer's length (len(tokenizer)), not the model's embedding size` : ` differs from the model's vocabulary size`;
    throw new Error(
      `--target-vocab-size ${given}${what}: t2d must have config.json "vocab_size" = ${model} entries (use --target-vocab-size ${model}, or leave it out)`,
    );
  }
  if (tokLen !== undefined && given < tokLen)
    throw new Error(`--target-vocab-size ${given} is below the tokenizer's ${tokLen} ids: give config.json "vocab_size" (at least ${tokLen})`);
  return given;
}
