/**
 * The shards' outputs merged back into input order (`merge-reports --data`): each shard's lines are in input order
 * and a row lives in one shard, so a k-way merge on each line's (file, line, element) restores the order of a
 * single run. JSON Lines records and prompts, problems.jsonl and Parquet records; the ids two shards both used.
 */
import { createReadStream, existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import type { AtomicOutput } from '../outputs/output';
import { readParquetMadeBy, readParquetRecords, type ParquetMadeBy, type ParquetRecordsOutput } from '../outputs/parquetOutput';
import type { TokenizedRecord } from '../../types';
import type { PrepareResult, RowProblemLine } from '../contract';
import { OUTPUT_FILES, PROBLEMS_FILE, TOKENIZED_DATA_PARQUET } from '../outputFiles';
import { promptLines } from '../reports/promptLines';

/** A problem that makes the shard reports (or their outputs) not combine into one run. */
export class MergeError extends Error {}

/** The path fields of a shard report's `outputs` that name one of its files (or its speculators folder). */
const SHARD_OUTPUT_FIELDS = ['tokenizedData', 'promptsToGenerate', 'reportJson', 'reportMd', 'tokenizedDataParquet', 'problems', 'speculatorsDataset'] as const;

/**
 * A shard's report with its output paths moved to where the shard's folder is now: a report records absolute
 * paths (`outDir`, `outputs.*`, `tokenCounts`), but shard folders are copied or moved between the shard runs and
 * the merge (per-node scratch, rsync), and a recorded path that still exists would then be another copy's file
 * (or a later run's). Each path is taken relative to the recorded `outDir` and joined to `shardDir`, the folder
 * the report was read from; `outDir` becomes `shardDir`. `outputs.written`, `removed` and `kept` are moved the same
 * way (those outside the folder dropped: the merge never reads them).
 * @param report the shard's report as read (not changed)
 * @param shardDir the folder holding the shard's `report.json` (absolute or relative to the working directory)
 * @param reportPath the report file, for the error
 * @throws MergeError when a path the merge reads is outside the recorded output folder (a shard's outputs are always
 *   inside it; reading a file elsewhere would read a file the shard folder does not hold)
 * @returns the report with the moved paths
 */
export function relocateShardReport(report: PrepareResult, shardDir: string, reportPath: string): PrepareResult {
  const recorded = resolve(report.outDir);
  const here = resolve(shardDir);
  const inside = (p: string): string | null => {
    const rel = relative(recorded, resolve(recorded, p));
    return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? null : rel;
  };
  // Named as report.json spells it (snake_case).
  const move = (field: string, p: string): string => {
    const rel = inside(p);
    if (rel === null)
      throw new MergeError(
        `${reportPath}: names its ${field.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())} at ${p}, outside the shard's output folder (${recorded}); merge-reports reads a shard's outputs from the shard's own folder only`,
      );
    return join(here, rel);
  };
  const o: Record<string, unknown> = { ...report.outputs };
  for (const f of SHARD_OUTPUT_FIELDS) if (typeof o[f] === 'string') o[f] = move(`outputs.${f}`, o[f] as string);
  for (const f of ['written', 'removed', 'kept'] as const) {
    const list = report.outputs[f];
    if (Array.isArray(list)) o[f] = list.flatMap((p) => (inside(p) === null ? [] : [join(here, inside(p)!)]));
  }
  const tokenCounts = typeof report.tokenCounts === 'string' ? move('tokenCounts', report.tokenCounts) : report.tokenCounts;
  return { ...report, outDir: here, outputs: o as unknown as PrepareResult['outputs'], ...(tokenCounts !== undefined ? { tokenCounts } : {}) };
}

/**
 * Fails when a file a shard's report lists and the merge reads is not in the shard's folder: without it the
 * merge would find fewer lines than the report counts, or none.
 * @param what the file's role, for the error (`tokenized_data.jsonl`, …)
 * @throws MergeError naming the path, the shard and the remedy
 */
export function requireShardFile(report: PrepareResult, path: string | undefined, what: string): void {
  if (path !== undefined && existsSync(path)) return;
  throw new MergeError(
    `${path ?? join(report.outDir, what)}: missing (shard ${report.shard?.index ?? '?'}'s report lists its ${what}): copy or move each shard's whole output folder before merging`,
  );
}

/**
 * Every file the merge reads from each shard's folder is there (before anything is staged): the record files of
 * the merged formats and the prompts when the shard's report counts some, and the `problems.jsonl` its report lists
 * (without it the shard's dropped and errored rows would be missing from the merged one, unseen).
 * @throws MergeError naming the missing file and the shard
 */
export function requireShardFiles(reports: PrepareResult[], formats: { jsonl: boolean; parquet: boolean }): void {
  for (const r of reports) {
    if (formats.jsonl && r.totals.recordsWritten > 0) requireShardFile(r, r.outputs.tokenizedData, OUTPUT_FILES.tokenizedData);
    if (formats.parquet && r.totals.recordsWritten > 0) requireShardFile(r, r.outputs.tokenizedDataParquet, TOKENIZED_DATA_PARQUET);
    if (promptLines(r) > 0) requireShardFile(r, r.outputs.promptsToGenerate, OUTPUT_FILES.promptsToGenerate);
    if (r.outputs.problems) requireShardFile(r, r.outputs.problems, PROBLEMS_FILE);
  }
}

/** The `source` of a record or prompt line, read without parsing the whole line. */
const SOURCE_RE = /"source":\{"file":("(?:[^"\\]|\\.)*"),"line":(\d+)(?:,"element":(\d+))?\}/;

async function* lines(path: string): AsyncGenerator<string> {
  if (!existsSync(path)) return;
  const rl = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const l of rl) if (l.length) yield l;
}

/** Input order of a row: (file index, line, element on that line; -1 when the row has the line to itself). */
type OrderKey = [number, number, number];

function before(a: OrderKey, b: OrderKey): boolean {
  return a[0] !== b[0] ? a[0] < b[0] : a[1] !== b[1] ? a[1] < b[1] : a[2] < b[2];
}

/**
 * A k-way merge of sequences that are each in input order: repeatedly emits the
 * item with the smallest key among the sequences' next items (a row lives in one
 * shard, so this restores the order of a single run).
 * @returns the number of items emitted
 */
async function mergeInOrder<T>(
  its: AsyncIterator<T>[],
  key: (item: T, from: number) => OrderKey,
  emit: (item: T, key: OrderKey) => Promise<void>,
  skipFile: ReadonlySet<number> = new Set(),
  signal?: AbortSignal,
): Promise<number> {
  const heads: ({ item: T; key: OrderKey } | null)[] = [];
  for (let i = 0; i < its.length; i++) {
    const r = await its[i].next();
    heads.push(r.done ? null : { item: r.value, key: key(r.value, i) });
  }
  let count = 0;
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) if (heads[i] && (best < 0 || before(heads[i]!.key, heads[best]!.key))) best = i;
    if (best < 0) break;
    // A cancel (merge-reports got a signal) stops between items; the caller removes what it staged.
    if ((count & 1023) === 0) signal?.throwIfAborted();
    // A row of a file left out by --skip-failed-files is not in the merged outputs.
    if (!skipFile.has(heads[best]!.key[0])) {
      await emit(heads[best]!.item, heads[best]!.key);
      count++;
    }
    const r = await its[best].next();
    heads[best] = r.done ? null : { item: r.value, key: key(r.value, best) };
  }
  return count;
}

/**
 * Merges the shards' copies of one output (`tokenized_data.jsonl` or
 * `prompts_to_generate.jsonl`) into `dest` in input order: each shard's lines
 * are already in input order and a row lives in one shard, so taking the line
 * with the smallest (file index, line) among the shards' next lines restores
 * the order of a single run. Written to `out`, which the caller commits (or aborts).
 * Lines of the files in `skip` (left out by `--skip-failed-files`) are not written.
 * @returns the number of lines written
 */
export async function mergeOutputLines(
  shardFiles: string[],
  fileOrder: string[],
  out: AtomicOutput,
  skip: ReadonlySet<string> = new Set(),
  ids?: RepeatedIds,
  signal?: AbortSignal,
): Promise<number> {
  const fileIndex = new Map(fileOrder.map((f, i) => [f, i]));
  const key = (l: string, from: number): OrderKey => {
    const m = SOURCE_RE.exec(l);
    const fi = m ? fileIndex.get(JSON.parse(m[1])) : undefined;
    if (!m || fi === undefined) throw new MergeError(`${shardFiles[from]}: a line without a known "source" (${l.slice(0, 80)}…)`);
    return [fi, Number(m[2]), m[3] === undefined ? -1 : Number(m[3])];
  };
  return mergeInOrder(
    shardFiles.map((f) => lines(f)),
    key,
    (l, [fi]) => {
      // The key already found the line's file (its index in fileOrder); only the id is read here.
      const m = ids && ID_RE.exec(l);
      if (m) ids.see(JSON.parse(m[1]) as string, fileOrder[fi]);
      return out.write(l + '\n');
    },
    skipIndexes(fileOrder, skip),
    signal,
  );
}

/** A record line's `id` (records are written `{"id":…` first). */
const ID_RE = /^\{"id":("(?:[^"\\]|\\.)*")/;

/**
 * Record ids seen by a merge, to find the ids two shards both used: each shard makes its ids unique
 * within itself only (uniqueIds.ts), so a row reusing an id that another shard's row used keeps it,
 * where one run would have renamed it `<id>~2`. Kept as 52-bit hashes (a number per record).
 */
export class RepeatedIds {
  private readonly seen = new Set<number>();
  /** Input file → records whose id an earlier record of the merge already had. */
  readonly byFile = new Map<string, number>();

  see(id: string, file: string): void {
    const h = hash52(id);
    if (this.seen.has(h)) this.byFile.set(file, (this.byFile.get(file) ?? 0) + 1);
    else this.seen.add(h);
  }
}

/** FNV-1a over the UTF-16 units, 52 bits (two 26-bit halves), as a safe integer. */
function hash52(s: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 13);
  }
  return (a >>> 6) * 0x4000000 + (b >>> 6);
}

/**
 * Merges the shards' `problems.jsonl` files (one {@link RowProblemLine} per dropped or errored row,
 * keyed by its top-level `file`, `line` and `element`) into `out`: files in input order, each file's
 * lines sorted by line and element (a shard lists an OpenAssistant message file's message rows after
 * its trees', so its lines are grouped by file, not sorted: each file's lines are gathered, then
 * sorted — memory holds one file's problem lines). Lines of the files in `skip` are left out, as a
 * single run's `--skip-failed-files` takes them back out. A shard that wrote no `problems.jsonl`
 * (made before the file existed) adds nothing; the caller refuses a shard whose report names one that
 * is missing.
 * @returns the number of lines written
 */
export async function mergeProblemLines(
  shardFiles: string[],
  fileOrder: string[],
  out: AtomicOutput,
  skip: ReadonlySet<string> = new Set(),
  signal?: AbortSignal,
): Promise<number> {
  const fileIndex = new Map(fileOrder.map((f, i) => [f, i]));
  type Problem = { l: string; fi: number; line: number; element: number };
  async function* problems(path: string): AsyncGenerator<Problem> {
    for await (const l of lines(path)) {
      let p: Partial<RowProblemLine>;
      try {
        p = JSON.parse(l) as Partial<RowProblemLine>;
      } catch {
        throw new MergeError(`${path}: a line that is not JSON (${l.slice(0, 80)}…)`);
      }
      const fi = typeof p.file === 'string' ? fileIndex.get(p.file) : undefined;
      if (fi === undefined || typeof p.line !== 'number')
        throw new MergeError(`${path}: a problem line without a known "file" and "line" (${l.slice(0, 80)}…)`);
      yield { l, fi, line: p.line, element: typeof p.element === 'number' ? p.element : -1 };
    }
  }
  let group: Problem[] = [];
  const flush = async () => {
    group.sort((a, b) => a.line - b.line || a.element - b.element);
    for (const g of group) await out.write(g.l + '\n');
    group = [];
  };
  const n = await mergeInOrder(
    shardFiles.map((f) => problems(f)),
    // Grouped by file only: each file's lines are sorted when the next file starts.
    (p) => [p.fi, 0, 0],
    async (p) => {
      if (group.length && group[0].fi !== p.fi) await flush();
      group.push(p);
    },
    skipIndexes(fileOrder, skip),
    signal,
  );
  await flush();
  return n;
}

/**
 * Merges the shards' `tokenized_data.parquet` files into `out` in input order,
 * record by record (read back with hyparquet row group by row group, so memory
 * holds one row group per shard plus the row group being written); records of the files in `skip` are not written.
 * @returns the number of records written
 */
export async function mergeParquetRecords(
  shardFiles: string[],
  fileOrder: string[],
  out: ParquetRecordsOutput,
  skip: ReadonlySet<string> = new Set(),
  signal?: AbortSignal,
): Promise<number> {
  const fileIndex = new Map(fileOrder.map((f, i) => [f, i]));
  const key = (r: TokenizedRecord, from: number): OrderKey => {
    const fi = fileIndex.get(r.source?.file);
    if (fi === undefined) throw new MergeError(`${shardFiles[from]}: a record without a known "source" (${String(r.id).slice(0, 80)})`);
    return [fi, r.source.line, r.source.element ?? -1];
  };
  return mergeInOrder(
    shardFiles.map((f) => (existsSync(f) ? readParquetRecords(f) : emptyRecords())),
    key,
    (r) => out.write(r),
    skipIndexes(fileOrder, skip),
    signal,
  );
}

/**
 * What the merged `tokenized_data.parquet` says made it: the shards' footer (`created_by` and the key-value metadata,
 * `eagle3_prep`: version, tokenizer, mask, max length, long, grouping, reasoning, template kwargs), which a single run
 * over the same inputs writes too; nothing in it is per shard. Shards whose files say different things (e.g. made
 * by different versions) are refused: the merged file could name only one of them.
 * @param files each shard's Parquet file (those not there, a shard without records, are passed over)
 * @returns the shards' footer; an empty one when no shard has a file
 * @throws MergeError naming the two shards' files that differ
 */
export async function shardsParquetMadeBy(files: string[]): Promise<ParquetMadeBy> {
  let first: { file: string; made: ParquetMadeBy } | null = null;
  for (const file of files) {
    if (!existsSync(file)) continue;
    let made: ParquetMadeBy;
    try {
      made = await readParquetMadeBy(file);
    } catch (e) {
      throw new MergeError((e as Error).message);
    }
    if (!first) first = { file, made };
    else if (JSON.stringify(made) !== JSON.stringify(first.made))
      throw new MergeError(
        `${file} and ${first.file} say different things about how they were made (Parquet created_by / key-value metadata ${JSON.stringify(made)} vs ${JSON.stringify(first.made)}): the merged file can name only one; rerun the shards with one eagle3-prep version, or merge without --data`,
      );
  }
  return first?.made ?? { metadata: {} };
}

function skipIndexes(fileOrder: string[], skip: ReadonlySet<string>): Set<number> {
  return new Set(fileOrder.flatMap((f, i) => (skip.has(f) ? [i] : [])));
}

async function* emptyRecords(): AsyncGenerator<TokenizedRecord> {}
