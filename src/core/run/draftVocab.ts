/**
 * `eagle3-prep draft-vocab`: the reduced draft vocabulary of an EAGLE-3 drafter, from the token
 * counts of prepared data (`token_counts.json`, `./tokenCounts.ts`), written in the form the
 * trainers load.
 *
 * The mapping, as both reference trainers define it:
 * - the draft vocabulary is the `K` target token ids trained most often (count of the id among
 *   tokens with `loss_mask == 1`), sorted ascending: `ids[0] < ids[1] < … < ids[K-1]`;
 * - `d2t[i] = ids[i] - i` (int64, length `K`): an offset, so `target_id = i + d2t[i]`;
 * - `t2d[t] = (t is one of ids)` (bool, length = the target model's vocabulary size).
 * Sources: vllm-project/speculators `src/speculators/data_generation/vocab_mapping.py`
 * (`build_vocab_mappings_from_distribution`: sort by count descending then id ascending, take `K`,
 * fill up with the smallest ids not taken when fewer than `K` ids were seen, sort ascending;
 * `scripts/build_vocab_mapping.py` saves `d2t.npy` and `t2d.npy`, which `scripts/train.py` reads
 * with `np.load` via `--d2t-path` / `--t2d-path`), and sgl-project/SpecForge
 * `specforge/data/preprocessing.py` (`process_token_dict_to_mappings`: the same `d2t` offsets and
 * `t2d` booleans, saved as `torch.save({"d2t": …, "t2d": …})` and read by the draft model's
 * `load_vocab_mapping`). Ties are broken by the smaller token id first (speculators' rule;
 * SpecForge's `Counter.most_common` keeps first-seen order, which depends on the data order).
 *
 * Outputs: `d2t.npy` (`<i8`, shape `(K,)`), `t2d.npy` (`|b1`, shape `(V,)`) — NumPy format 1.0,
 * loadable by `numpy.load` and `torch.from_numpy` — and `draft_vocab.json` (`ids`, `d2t`, the ids'
 * trainable counts and the share of trained tokens they cover; `t2d` is true exactly at `ids`). For
 * SpecForge: `torch.save({"d2t": torch.from_numpy(np.load("d2t.npy")), "t2d":
 * torch.from_numpy(np.load("t2d.npy"))}, "vocab_mapping.pt")`.
 */
import { writeFileAtomic } from './output';
import type { TokenCountsFile } from './tokenCounts';
import { join } from 'node:path';
import { writeFile, rename, mkdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';

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
 * Writes `d2t.npy`, `t2d.npy` and `draft_vocab.json` into `outDir` (created), each atomically.
 * @returns the paths written
 */
export async function writeDraftVocab(
  v: DraftVocab,
  outDir: string,
  source: { tokenizer: { name: string; hash: string }; countFiles: string[] },
): Promise<string[]> {
  await mkdir(outDir, { recursive: true });
  const d2t = join(outDir, 'd2t.npy');
  const t2d = join(outDir, 't2d.npy');
  const json = join(outDir, 'draft_vocab.json');
  await writeBytesAtomic(d2t, npyBytes('<i8', v.d2t));
  await writeBytesAtomic(t2d, npyBytes('|b1', v.t2d));
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
  await writeFileAtomic(json, JSON.stringify(meta) + '\n');
  return [d2t, t2d, json];
}
