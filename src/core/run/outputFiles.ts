/**
 * The names of the files the jobs write: one list, imported by the pipeline,
 * the shard merge, the Datasets view's output state and `generate`. Paths are
 * always built from these names, never spelled out again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * The folder of the output folder that holds the records (`tokenized_data.jsonl`,
 * `tokenized_data.parquet`) and nothing else, so that a trainer pointed at it reads records only:
 * speculators' `--data DIR` takes every `*.json*` of a folder, and SpecForge pointed at the output
 * folder would read `report.json` as data (issue 22). The sidecar files (report, token counts,
 * problems, prompts) stay beside it. Runs of versions before it wrote the records directly into the
 * output folder; every reader of a run's outputs reads that layout too ({@link recordsFileIn}).
 */
export const RECORDS_DIR = 'data';

/** The files a `prepare` run writes into its output folder (`tokenizedData` inside {@link RECORDS_DIR}). */
export const OUTPUT_FILES = {
  /** One training record per line: `{id, source, input_ids, loss_mask, …}`; in {@link RECORDS_DIR}. */
  tokenizedData: 'tokenized_data.jsonl',
  /** Rows with no target turn, as OpenAI messages, for `generate` to answer. */
  promptsToGenerate: 'prompts_to_generate.jsonl',
  /** The run's result (accounting per file, tokenizer, options); also read back by the Datasets view and `merge-reports`. */
  reportJson: 'report.json',
  /** The same report for people. */
  reportMd: 'report.md',
} as const;

/** The records as Parquet (`--format parquet|both`, run/outputs/parquetOutput.ts): the same records as {@link OUTPUT_FILES}.tokenizedData; in {@link RECORDS_DIR}. */
export const TOKENIZED_DATA_PARQUET = 'tokenized_data.parquet';

/**
 * The written conversations, normalized, as OpenAI chat `messages` (`--format messages`,
 * records/conversationLines.ts): what Model-Optimizer reads, or any trainer that tokenizes itself.
 */
export const CONVERSATIONS_FILE = 'conversations.jsonl';

/** The same conversations as ShareGPT `conversations` (`from` human / gpt), those EAGLE's reader can take (`--format messages --trainer eagle`). */
export const CONVERSATIONS_SHAREGPT_FILE = 'conversations_sharegpt.jsonl';

/** The files a `--format messages` run writes in place of records. */
const CONVERSATION_FILES: ReadonlySet<string> = new Set([CONVERSATIONS_FILE, CONVERSATIONS_SHAREGPT_FILE]);

/**
 * Every dropped and errored row of a run, one `RowProblemLine` a line (run/reports/accounting.ts);
 * `outputs.problems` of the report, absent from reports written before it existed and from merged shard reports.
 */
export const PROBLEMS_FILE = 'problems.jsonl';

/** Token-id counts of the written records (run/outputs/tokenCounts.ts), beside the outputs when the run succeeds. */
export const TOKEN_COUNTS_FILE = 'token_counts.json';

/** Absolute paths of a run's outputs, keyed like {@link OUTPUT_FILES}. */
export type RunOutputPaths = { [K in keyof typeof OUTPUT_FILES]: string };

/** The paths of the outputs of a run writing into `outDir` (the records in `outDir/data/`). */
export function outputPathsIn(outDir: string): RunOutputPaths {
  return {
    tokenizedData: join(outDir, RECORDS_DIR, OUTPUT_FILES.tokenizedData),
    promptsToGenerate: join(outDir, OUTPUT_FILES.promptsToGenerate),
    reportJson: join(outDir, OUTPUT_FILES.reportJson),
    reportMd: join(outDir, OUTPUT_FILES.reportMd),
  };
}

/** Where a run writing into `outDir` puts a records file (`tokenized_data.jsonl` or `.parquet`): `outDir/data/<name>`. */
export function recordsPathIn(outDir: string, name: string): string {
  return join(outDir, RECORDS_DIR, name);
}

/**
 * The records file `name` of the run in `outDir` when no report says where it is: `outDir/data/<name>`
 * when it exists, else `outDir/<name>` when that exists (the layout before {@link RECORDS_DIR}),
 * else `outDir/data/<name>` (where a run writes it).
 */
export function recordsFileIn(outDir: string, name: string): string {
  const now = recordsPathIn(outDir, name);
  if (existsSync(now)) return now;
  const before = join(outDir, name);
  return existsSync(before) ? before : now;
}

/**
 * The speculators dataset folder a run with `--trainer speculators` writes (run/outputs/speculatorsOutput.ts):
 * what `datasets.Dataset.save_to_disk` writes, for speculators' `train.py --data-path`.
 */
export const SPECULATORS_DIR = 'speculators';

/** The files of {@link SPECULATORS_DIR} a run writes (one Arrow shard, then the two JSON files `load_from_disk` reads first). */
export const SPECULATORS_FILES = {
  arrow: 'data-00000-of-00001.arrow',
  state: 'state.json',
  info: 'dataset_info.json',
} as const;

/**
 * Why a run removed previous record files (`outputs.removed`, parquetOutput.ts removeStaleRecordFiles),
 * for the summary and report.md: `a previous run's records in a format this run does not write
 * (--format jsonl)`, `… directly in the output folder (the layout before data/)`, `… speculators
 * dataset (this run has no --trainer speculators)`, `a previous --format messages run's conversations`, joined with `; `.
 * @param code wraps flags in backticks (Markdown)
 */
export function removedReason(outDir: string, removed: string[], format: string | undefined, code = false): string {
  const q = (s: string) => (code ? `\`${s}\`` : s);
  const top = resolve(outDir);
  const why = new Set<string>();
  for (const p of removed) {
    const d = resolve(dirname(p));
    if (d === top && CONVERSATION_FILES.has(basename(p)))
      why.add(`a previous ${q('--format messages')} run's conversations (this run writes ${q(`--format ${format}`)})`);
    else if (d === top) why.add(`a previous run's records directly in the output folder (the layout before ${q(`${RECORDS_DIR}/`)})`);
    else if (d === join(top, SPECULATORS_DIR)) why.add(`a previous run's speculators dataset (this run has no ${q('--trainer speculators')})`);
    else why.add(`a previous run's records in a format this run does not write (${q(`--format ${format}`)})`);
  }
  return [...why].join('; ');
}

/**
 * Why a run kept files of its output names it does not write (`outputs.kept`, parquetOutput.ts removeStaleRecordFiles):
 * no previous report in the folder lists them, so they are not a previous run's.
 */
export const KEPT_REASON =
  "not written by this run and listed by no previous report.json here, so not a previous run's: left as they are (not this run's outputs; move them if a trainer pointed at this folder should not read them)";

/** Suffix of a default output folder: `data/chat.jsonl` → `data/chat.eagle3/`. */
export const OUTPUT_DIR_SUFFIX = '.eagle3';

/** What `generate` writes for a `prompts_to_generate.jsonl`: `generated.jsonl` beside it. */
export const GENERATED_FILE = 'generated.jsonl';

/** What `generate` appends to any other dataset's name: `data.jsonl` → `data.generated.jsonl`. */
export const GENERATED_SUFFIX = '.generated.jsonl';

/**
 * The files the previous run in `outDir` wrote, from its `report.json` (absolute paths): `outputs.written`;
 * for a report written before that list existed, its path fields (`tokenized_data`, `tokenized_data_parquet`,
 * `conversations`, `conversations_sharegpt`, and the files a run writes in `speculators_dataset`; snake_case or
 * the camelCase of schema version 1). None when there is no readable report.
 */
export function previousRunFiles(outDir: string): string[] {
  let o: Record<string, unknown> | undefined;
  try {
    o = (JSON.parse(readFileSync(join(outDir, OUTPUT_FILES.reportJson), 'utf8')) as { outputs?: Record<string, unknown> }).outputs;
  } catch {
    return [];
  }
  if (!o || typeof o !== 'object') return [];
  const str = (x: unknown): x is string => typeof x === 'string';
  if (Array.isArray(o.written)) return o.written.filter(str).map((x) => resolve(outDir, x));
  const fields = [
    'tokenized_data',
    'tokenizedData',
    'tokenized_data_parquet',
    'tokenizedDataParquet',
    'conversations',
    'conversations_sharegpt',
    'conversationsSharegpt',
  ];
  const dirs = [o.speculators_dataset, o.speculatorsDataset].filter(str);
  return [...fields.map((k) => o[k]).filter(str), ...dirs.flatMap((d) => Object.values(SPECULATORS_FILES).map((n) => join(d, n)))].map((x) =>
    resolve(outDir, x),
  );
}
