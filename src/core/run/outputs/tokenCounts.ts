/**
 * Token-id counts of a run's written records (`token_counts.json` beside the outputs), the data
 * EAGLE-3 trainers build a reduced draft vocabulary from: speculators writes a token-frequency
 * file (`{token_id: count}` over the tokens with `loss_mask == 1`) and SpecForge counts the same
 * from its dataset. `eagle3-prep draft-vocab` turns the counts into the `d2t` / `t2d` mapping
 * (`./draftVocab.ts`).
 *
 * File format (JSON, written atomically):
 * ```
 * { "format": "eagle3-prep-token-counts", "version": 1,
 *   "tokenizer": { "name", "hash" }, "modelVocabSize": 151936 | null,
 *   "records": 1234, "tokens": 567890, "trainableTokens": 123456,
 *   "ids": [ascending token ids seen], "all": [count of ids[k] over all tokens],
 *   "trainable": [count of ids[k] over trainable tokens (loss_mask 1)] }
 * ```
 * Python: `d = json.load(open("token_counts.json")); freq = {i: c for i, c in zip(d["ids"], d["trainable"]) if c}`
 * is speculators' token-frequency dict (`torch.save(freq, "token_freq.pt")`).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TokenCountDelta } from '../../records/rowResult';
import { TOKEN_COUNTS_FILE } from '../outputFiles';
import { tokenizerJsonSize } from '../../tokenizers/modelFolder';

export const TOKEN_COUNTS_FORMAT = 'eagle3-prep-token-counts';

/** The content of `token_counts.json`. */
export interface TokenCountsFile {
  format: typeof TOKEN_COUNTS_FORMAT;
  version: 1;
  tokenizer: { name: string; hash: string };
  /** `vocab_size` of the model's `config.json` in the tokenizer folder (the size of `t2d`), or null when there is none. */
  modelVocabSize: number | null;
  /**
   * The tokenizer's length (`len(tokenizer)`: the highest id of its vocabulary and added tokens + 1), often
   * smaller than {@link modelVocabSize} (Qwen3: 151,669 vs 151,936); null when unknown, absent in older files.
   */
  tokenizerSize?: number | null;
  records: number;
  tokens: number;
  trainableTokens: number;
  ids: number[];
  all: number[];
  trainable: number[];
}

/**
 * Run-wide counts, in dense arrays that grow with the largest id seen, and the ids counted so far: {@link result} reads
 * those ids alone, not the whole vocabulary (a run makes one counter per input file and merges it into the run's, so the
 * result is taken once per file and once for the run; scanning 128k+ slots each time cost more than a file of a few
 * rows counts).
 */
export class TokenCounter {
  private all = new Float64Array(0);
  private trained = new Float64Array(0);
  /** Each id whose count over all tokens went from 0 to more, once, in the order first counted. */
  private seen: number[] = [];
  records = 0;

  private grow(n: number): void {
    if (n <= this.all.length) return;
    const size = Math.max(n, this.all.length * 2, 1024);
    const a = new Float64Array(size);
    a.set(this.all);
    const t = new Float64Array(size);
    t.set(this.trained);
    this.all = a;
    this.trained = t;
  }

  /** Adds `a` over all tokens and `t` over trainable ones to token `id`'s counts. */
  private addId(id: number, a: number, t: number): void {
    const before = this.all[id];
    this.all[id] = before + a;
    this.trained[id] += t;
    if (before === 0 && a !== 0) this.seen.push(id);
  }

  /** Adds a row's counts. */
  add(d: TokenCountDelta, records: number): void {
    this.records += records;
    if (d.ids.length) this.grow(d.ids[d.ids.length - 1] + 1);
    for (let k = 0; k < d.ids.length; k++) this.addId(d.ids[k], d.all[k], d.trained[k]);
  }

  /** Adds counts read from a file (a shard's `token_counts.json`). */
  addFile(f: TokenCountsFile): void {
    this.records += f.records;
    if (f.ids.length) this.grow(Math.max(...f.ids) + 1);
    f.ids.forEach((id, k) => this.addId(id, f.all[k], f.trainable[k]));
  }

  /** The file content: the ids with a count over all tokens, ascending. */
  result(tokenizer: { name: string; hash: string }, modelVocabSize: number | null, tokenizerSize: number | null = null): TokenCountsFile {
    const ids: number[] = [];
    const all: number[] = [];
    const trainable: number[] = [];
    let tokens = 0;
    let trainableTokens = 0;
    // Ascending (a numeric sort of a typed array); an id whose count went back to 0 (negative counts in a file) is left out, as in a scan of every slot.
    const order = Float64Array.from(this.seen).sort();
    for (let k = 0; k < order.length; k++) {
      const id = order[k];
      if (this.all[id] === 0 || (k > 0 && order[k - 1] === id)) continue;
      ids.push(id);
      all.push(this.all[id]);
      trainable.push(this.trained[id]);
      tokens += this.all[id];
      trainableTokens += this.trained[id];
    }
    return {
      format: TOKEN_COUNTS_FORMAT,
      version: 1,
      tokenizer,
      modelVocabSize,
      tokenizerSize,
      records: this.records,
      tokens,
      trainableTokens,
      ids,
      all,
      trainable,
    };
  }
}

/** JSON text of a counts file: one key per line, the arrays on one line each. */
export function tokenCountsJson(f: TokenCountsFile): string {
  return (
    '{\n' +
    Object.entries(f)
      .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
      .join(',\n') +
    '\n}\n'
  );
}

/**
 * The counts files of `paths` (each a `token_counts.json` or an output folder holding one), read once
 * each. The same counts given twice are refused: two paths naming one file (a folder and its
 * `token_counts.json`, a symbolic or hard link), two files with the same bytes (a copy), or a merged
 * run's counts (`merge-reports`: its `report.json` beside them says `shard.merged`) together with a
 * shard's (`--shard I/N` with N > 1) — adding them would weight those tokens double in the draft
 * vocabulary without a sign in the output.
 * @throws Error naming both paths, or what {@link readTokenCounts} throws
 */
export function readTokenCountsFiles(paths: readonly string[]): TokenCountsFile[] {
  // The same bytes cover one file under two paths (a link, a folder and its file) and a copy alike.
  const byContent = new Map<string, string>();
  let mergedFrom: string | undefined;
  let shardFrom: string | undefined;
  return paths.map((path) => {
    const file = countsFileOf(path);
    const bytes = readFileSync(file);
    const content = createHash('sha256').update(bytes).digest('hex');
    const earlier = byContent.get(content);
    if (earlier !== undefined)
      throw new Error(`${earlier} and ${path} are the same token counts (one file, or the same bytes): give each run's counts once, or its tokens count twice`);
    byContent.set(content, path);
    const shard = shardOfCountsFile(file);
    if (shard?.merged) mergedFrom ??= path;
    else if (shard && shard.count > 1) shardFrom ??= path;
    if (mergedFrom !== undefined && shardFrom !== undefined)
      throw new Error(
        `${mergedFrom} are the counts of a merge-reports run, which already adds its shards', and ${shardFrom} a shard's: give the merged counts or the shards', not both`,
      );
    return parseTokenCounts(file, bytes.toString('utf8'));
  });
}

/** The `shard` of the run whose `report.json` sits beside a counts file, when it has one. */
function shardOfCountsFile(file: string): { count: number; merged?: boolean } | undefined {
  try {
    const r = JSON.parse(readFileSync(join(dirname(file), 'report.json'), 'utf8')) as { shard?: { count?: unknown; merged?: unknown } | null };
    const s = r?.shard;
    return s && typeof s.count === 'number' ? { count: s.count, merged: s.merged === true } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads a `token_counts.json` (a file, or the output folder holding it).
 * @throws Error naming the path when it is missing or not a counts file
 */
export function readTokenCounts(path: string): TokenCountsFile {
  const p = countsFileOf(path);
  return parseTokenCounts(p, readFileSync(p, 'utf8'));
}

/**
 * The counts file `path` names: its `token_counts.json` when it is an output folder holding one, else itself.
 * @throws Error when there is no such file
 */
function countsFileOf(path: string): string {
  const p = existsSync(join(path, TOKEN_COUNTS_FILE)) ? join(path, TOKEN_COUNTS_FILE) : path;
  if (!existsSync(p)) throw new Error(`${p}: no such token counts file (give token_counts.json or the output folder holding it)`);
  return p;
}

/** `text` (the file `p`'s) as a token counts file. @throws Error when it is not JSON or not an eagle3-prep token_counts.json */
function parseTokenCounts(p: string, text: string): TokenCountsFile {
  let f: TokenCountsFile;
  try {
    f = JSON.parse(text);
  } catch (e) {
    throw new Error(`${p}: not JSON: ${(e as Error).message}`, { cause: e });
  }
  if (f?.format !== TOKEN_COUNTS_FORMAT || !Array.isArray(f.ids) || f.ids.length !== f.all?.length || f.ids.length !== f.trainable?.length)
    throw new Error(`${p}: not an eagle3-prep token_counts.json`);
  return f;
}

/**
 * `vocab_size` of the Qwen3 models the embedded default tokenizer belongs to (their `config.json`, every
 * Qwen3 size: 151,936 embedding rows for a tokenizer of 151,669 ids).
 */
export const EMBEDDED_MODEL_VOCAB_SIZE = 151936;

/**
 * The target sizes a counts file records for a tokenizer: the model's `vocab_size` ({@link modelVocabSizeOf};
 * the embedded default's is {@link EMBEDDED_MODEL_VOCAB_SIZE}) and the tokenizer's length: `knownSize` when the
 * loaded tokenizer said it (`TargetTokenizer.size`, via `RunSetup.tokenizerSize`), else {@link tokenizerSizeOf}
 * (which parses `tokenizer.json` once more: 0.3–0.6 s on a 128k-token vocabulary).
 */
export function targetSizesOf(
  tok: { dir: string; embeddedDefault: boolean },
  knownSize?: number | null,
): { modelVocabSize: number | null; tokenizerSize: number | null } {
  return {
    modelVocabSize: tok.embeddedDefault ? EMBEDDED_MODEL_VOCAB_SIZE : modelVocabSizeOf(tok.dir),
    tokenizerSize: knownSize !== undefined ? knownSize : tokenizerSizeOf(tok.dir),
  };
}

/**
 * The tokenizer's length from `tokenizer.json` in a folder: the highest id of `model.vocab` (an object of
 * token → id, or a Unigram list whose index is the id) and `added_tokens`, + 1; null without a readable file.
 */
export function tokenizerSizeOf(dir: string): number | null {
  try {
    return tokenizerJsonSize(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')));
  } catch {
    return null;
  }
}

/** The model's vocabulary size from `config.json` (`vocab_size`, or `text_config.vocab_size`) in a model folder; null when absent. */
export function modelVocabSizeOf(dir: string | undefined): number | null {
  if (!dir) return null;
  try {
    const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    const v = c?.vocab_size ?? c?.text_config?.vocab_size;
    return Number.isInteger(v) && v > 0 ? v : null;
  } catch {
    return null;
  }
}
