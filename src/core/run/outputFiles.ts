/**
 * The names of the files the jobs write: one list, imported by the pipeline,
 * the shard merge, the Datasets view's output state and `generate`. Paths are
 * always built from these names, never spelled out again.
 */
import { join } from 'node:path';

/** The files a `prepare` run writes into its output folder. */
export const OUTPUT_FILES = {
  /** One training record per line: `{id, source, input_ids, loss_mask, …}`. */
  tokenizedData: 'tokenized_data.jsonl',
  /** Rows with no target turn, as OpenAI messages, for `generate` to answer. */
  promptsToGenerate: 'prompts_to_generate.jsonl',
  /** The run's result (accounting per file, tokenizer, options); also read back by the Datasets view and `merge-reports`. */
  reportJson: 'report.json',
  /** The same report for people. */
  reportMd: 'report.md',
} as const;

/** The records as Parquet (`--format parquet|both`, run/parquetOutput.ts): the same records as {@link OUTPUT_FILES}.tokenizedData. */
export const TOKENIZED_DATA_PARQUET = 'tokenized_data.parquet';

/**
 * The written conversations, normalized, as OpenAI chat `messages` (`--format messages`,
 * records/conversationLines.ts): what Model-Optimizer reads, or any trainer that tokenizes itself.
 */
export const CONVERSATIONS_FILE = 'conversations.jsonl';

/** The same conversations as ShareGPT `conversations` (`from` human / gpt), those EAGLE's reader can take (`--format messages --trainer eagle`). */
export const CONVERSATIONS_SHAREGPT_FILE = 'conversations_sharegpt.jsonl';

/**
 * Every dropped and errored row of a run, one `RowProblemLine` a line (run/accounting.ts);
 * `outputs.problems` of the report, absent from reports written before it existed and from merged shard reports.
 */
export const PROBLEMS_FILE = 'problems.jsonl';

/** Token-id counts of the written records (run/tokenCounts.ts), beside the outputs when the run succeeds. */
export const TOKEN_COUNTS_FILE = 'token_counts.json';

/** Absolute paths of a run's outputs, keyed like {@link OUTPUT_FILES}. */
export type RunOutputPaths = { [K in keyof typeof OUTPUT_FILES]: string };

/** The paths of the outputs of a run writing into `outDir`. */
export function outputPathsIn(outDir: string): RunOutputPaths {
  return {
    tokenizedData: join(outDir, OUTPUT_FILES.tokenizedData),
    promptsToGenerate: join(outDir, OUTPUT_FILES.promptsToGenerate),
    reportJson: join(outDir, OUTPUT_FILES.reportJson),
    reportMd: join(outDir, OUTPUT_FILES.reportMd),
  };
}

/** Suffix of a default output folder: `data/chat.jsonl` → `data/chat.eagle3/`. */
export const OUTPUT_DIR_SUFFIX = '.eagle3';

/** What `generate` writes for a `prompts_to_generate.jsonl`: `generated.jsonl` beside it. */
export const GENERATED_FILE = 'generated.jsonl';

/** What `generate` appends to any other dataset's name: `data.jsonl` → `data.generated.jsonl`. */
export const GENERATED_SUFFIX = '.generated.jsonl';
