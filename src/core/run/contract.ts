/**
 * The run contract: the option, progress and report shapes that `prepare` (run/prepare/pipeline.ts), its
 * worker pool (run/prepare/pool.ts and run/prepare/workerProtocol.ts), the report writers, the CLI and the extension
 * share; a row's settings and result are records/rowResult.ts (the row job's, below the run).
 * Types only: this module imports nothing at run time.
 */
import type { AnswerMode } from '../types';
import type { AppliedConfig } from '../formats/appliedConfig';
import type { RecordRules } from '../records/fate';
import type { Grouping } from '../records/maskTypes';
import type { TemplateCheck } from '../records/checkTemplateTypes';
import type { TrainerCuts, TrainerId } from '../trainers/trainers';
import type { RunOutputPaths } from './outputFiles';
import type { LengthStats } from './stats';
import type { LongPolicy, OutputFormat, RowSettings } from '../records/rowResult';
import type { RowShape } from '../records/shapes';
import type { MaskPolicy, ReasoningPolicy } from '../types';
import type { TokenizerBackend } from '../tokenizers/types';
/** The status word of a file and of a run (`run/reports/status.ts` decides it). */
export type RunStatus = 'ok' | 'warnings' | 'degraded' | 'failed';

/** Options of one `prepare` run. All inputs of one run share one output folder. */
export interface PrepareOptions extends RowSettings {
  /** Input dataset files (absolute or relative to cwd). Folders are expanded by the caller (see `expandInputs`). */
  inputs: string[];
  /** Output folder; created if missing. */
  outDir: string;
  /**
   * Several answers to one prompt without a preference (`formats/shapes-answers.ts`): `best` (the best-scored),
   * `all` (one record each) or `first`; wins over eagle3prep.jsonc "reading" "answers". Default: best when the row
   * has a preference or scores, all otherwise.
   */
  answers?: AnswerMode;
  /** Exit 0 even when an input yields no record and no prompt. */
  allowEmpty?: boolean;
  /** A field-mapping file (issue 3, `formats/mapping.ts`); default: the nearest `eagle3prep.jsonc` beside each input. */
  mapping?: string;
  /**
   * Threads that render and tokenize (`pool.ts`); 1 or undefined = in this
   * thread. Outputs are identical (input order) for any number.
   */
  workers?: number;
  /** Pool worker script; default `worker.js` beside the bundle (or `src/worker.ts` from source). */
  workerScript?: string;
  /**
   * Pool workers run at a lower OS priority (nice 10) so that the other
   * threads of the process — the VS Code extension host — are scheduled first.
   * Linux only, where a thread's nice value is its own (setpriority(2) NOTES);
   * elsewhere ignored (it would lower the whole process).
   */
  lowPriority?: boolean;
  /**
   * With a pool, a row larger than this (bytes of input) is processed in the
   * run's own thread instead of a worker, whose heap is limited
   * (`POOL_WORKER_HEAP_MB`); its place in the output order is kept. Default 2 MiB.
   */
  largeRowBytes?: number;
  /**
   * Process only shard `index` of `count` (0-based): the rows whose run-wide
   * index k (rows counted across the inputs in order, invalid lines included)
   * has `k % count == index`. The report then carries `shard` and each file's
   * `rowsInFile`, and `eagle3-prep merge-reports` combines the N reports.
   */
  shard?: { index: number; count: number };
  /**
   * Fail the run (nothing written) when any row errored or any data-changing
   * warning fired (`core/codes.ts` `changesData`, drops included, and the chat
   * template check's data-changing findings such as `empty_think_trained`).
   */
  strict?: boolean;
  /**
   * Fail the run when a file's errored rows exceed this share of its rows read
   * (0 to 1; 0 = any errored row fails). Default: no limit (errored rows make the
   * file `degraded`, the run still succeeds).
   */
  maxErrorRate?: number;
  /**
   * When a file fails (unreadable, nothing usable, over `maxErrorRate`, strict),
   * write the other files and list the failed ones as skipped in the report,
   * instead of failing the run.
   */
  skipFailedFiles?: boolean;
  /**
   * Process only the first `sampleRows` rows of each file, write nothing (no
   * output folder is created), and estimate the whole run from the sample
   * (`PrepareResult.dryRun`).
   */
  dryRun?: { sampleRows: number };
}

/** Progress event, emitted at most every ~100 ms and once at each file end. */
export interface PrepareProgress {
  file: string;
  fileIndex: number;
  fileCount: number;
  rowsRead: number;
  recordsWritten: number;
  /** Bytes of the current file consumed so far and its size, for a percentage. */
  bytesRead: number;
  bytesTotal: number;
  /** Tokens of the records written so far in the current file, and trainable ones among them. */
  tokensWritten: number;
  /** Rows processed but not written (dropped or errored) in the current file so far. */
  rowsDropped: number;
  rowsErrored: number;
  /** Worker threads of the run (1 = the run's own thread). */
  workers: number;
}

export interface PrepareHooks {
  onProgress?: (p: PrepareProgress) => void;
  /** Log lines for an output channel / stderr. */
  log?: (line: string) => void;
  signal?: AbortSignal;
  /**
   * The conversations already written (`RowResult.dedupKey`: 16 bytes of a
   * SHA-256 as a latin1 string, one per written or set-aside conversation),
   * shared by the runs of one command (`--dedup` across output folders);
   * default: a fresh set per run.
   */
  dedup?: Set<string>;
}

/**
 * Per-input-file accounting; `written + setAside + dropped + errored == rowsRead` always, except for a file
 * skipped by `--skip-failed-files`: its written and set-aside counts are 0 (none of its rows are in the outputs)
 * and what it would have written is in `leftOut`.
 */
export interface FileReport {
  file: string;
  format: string;
  evidence: string[];
  rowsRead: number;
  /** Rows that produced at least one written record. */
  rowsWritten: number;
  recordsWritten: number;
  /** Rows set aside in prompts_to_generate.jsonl. */
  rowsSetAside: number;
  rowsDropped: number;
  rowsErrored: number;
  /**
   * `--format messages` only: lines of `conversations.jsonl` (one per written conversation: a written row
   * holding several has several) and, with `--trainer eagle`, of `conversations_sharegpt.jsonl` (the
   * others are noted with the reason EAGLE cannot read them, `eagle_*`). Absent for other formats.
   */
  conversationsWritten?: number;
  sharegptWritten?: number;
  /**
   * Lines this file's rows wrote to `prompts_to_generate.jsonl`, present only where that is not
   * `rowsSetAside` plus the `split_part_set_aside` notes (run/reports/promptLines.ts): an OpenAssistant message
   * file's set-aside path gives one prompt for all of its message rows.
   */
  promptsWritten?: number;
  /** reason code → { count, first line numbers (at most 10) }. */
  dropped: Record<string, { count: number; lines: number[] }>;
  /** First errors (at most 50) with line and message. */
  errors: { line: number; message: string }[];
  /**
   * Errors that have a reason code (`template_budget_exceeded`: the chat template ran past its render budget):
   * code → { count, first line numbers (at most 10) }. Absent when there were none.
   */
  errorReasons?: Record<string, { count: number; lines: number[] }>;
  /** note code → count (e.g. template_rewrites_history). */
  notes: Record<string, number>;
  /**
   * Fields of the rows (or of their turns) that were neither read nor known
   * metadata (`formats/fields.ts`): field path (`generated_patch`,
   * `trajectory[].mask`) → { rows that have it, first line numbers (at most 10) }.
   * Empty when every field of the file is understood; absent in reports written
   * before it was counted. (Named as issue 12 names it.)
   */
  unreadFields?: Record<string, { count: number; lines: number[] }>;
  /**
   * Rows read of each shape a chat-template probe stands for (`records/shapes.ts`): a template
   * finding counts against the file only when it has rows of the finding's shape. Absent in
   * reports of older versions (then every finding counts).
   */
  shapes?: Partial<Record<RowShape, number>>;
  trainableTokens: number;
  totalTokens: number;
  /**
   * Length statistics of the written records (run/stats.ts): distributions of `seq_len`, of
   * trainable tokens per record and of records per conversation, and the amplification (record
   * tokens ÷ tokens of the conversations rendered once). Absent in reports of older versions.
   */
  lengths?: LengthStats;
  /**
   * What each trainer's default length would do to the written records (core/trainers/trainers.ts):
   * records longer, records trained not at all, trainable tokens not trained. Absent in reports of
   * older versions.
   */
  trainerCuts?: TrainerCuts;
  /** The input's size (bytes) and modification time (ms since the epoch) when the run read it (datasets tree: stale outputs). */
  input?: {
    size: number;
    mtimeMs: number;
    /**
     * The `eagle3prep.jsonc` parts that applied to the file (formats/appliedConfig.ts): compared with
     * what applies now to tell whether a config change can change its records. Absent in reports of
     * older versions and in runs given `--mapping`.
     */
    projectConfig?: AppliedConfig;
  };
  /** Sharded runs only: rows of the file across all shards (this shard read `rowsRead` of them). */
  rowsInFile?: number;
  /** The file's status (`run/reports/status.ts`); the run's is the worst of its files'. */
  status?: RunStatus;
  /** Why the file failed (set when `status` is `failed`). */
  failure?: string;
  /** The file failed and `--skip-failed-files` left it out: none of its rows are in the outputs or the totals. */
  skipped?: boolean;
  /** A skipped file only: the rows written and set aside (records, tokens) before it was left out; none of them are in the outputs. */
  leftOut?: Pick<FileReport, 'rowsWritten' | 'recordsWritten' | 'rowsSetAside' | 'trainableTokens' | 'totalTokens'>;
}

/** A data-changing warning of a run, with what it means and what to do. */
export interface RunWarning {
  code: string;
  /** Rows (or records) it fired for; for a chat template finding, the probes that showed it. */
  count: number;
  /** `rows`: noted per row (`core/codes.ts`); `template`: found by the chat template check, applies to every record of that shape. */
  source: 'rows' | 'template';
  meaning: string;
  remedy?: string;
  /** Files it fired in (absolute paths); all files that wrote records for a template finding. */
  files: string[];
}

/** What a dry run estimates for one file from its sampled rows. */
export interface DryRunEstimate {
  file: string;
  /** Rows processed (the sample) and the input bytes they took. */
  rowsSampled: number;
  bytesSampled: number;
  bytesTotal: number;
  /** True when the sample is the whole file (the numbers are exact). */
  complete: boolean;
  /** Whole-file estimates, extrapolated by bytes. */
  rows: number;
  records: number;
  tokens: number;
  trainableTokens: number;
}

/**
 * The result of a run, also written as `report.json`. Its record rules (records/fate.ts `RecordRules`)
 * beyond `minTrainableTokens` are present only when the run set them off their default
 * (run/runSettings.ts `reportedSettings`).
 */
export interface PrepareResult extends RecordRules {
  ok: boolean;
  /** Why the run failed (e.g. `samples/x.jsonl yielded no record and no prompt`). */
  failures: string[];
  outDir: string;
  /**
   * The output paths. `tokenizedData` is the JSONL's path, written unless
   * `format` is `parquet`; `tokenizedDataParquet` is set when the run wrote
   * Parquet; `written` lists every file the run wrote (empty when it failed:
   * a failed run changes nothing in its output folder). `problems`
   * (`problems.jsonl`, one {@link RowProblemLine} per dropped or errored row,
   * every one of them; the report keeps only the first lines) is absent from
   * reports written before it existed and from merged shard reports.
   */
  outputs: RunOutputPaths & {
    tokenizedDataParquet?: string;
    /** `conversations.jsonl` of a `--format messages` run (OpenAI `messages`); absent otherwise. */
    conversations?: string;
    /** `conversations_sharegpt.jsonl` of a `--format messages --trainer eagle` run (ShareGPT `conversations`); absent otherwise. */
    conversationsSharegpt?: string;
    problems?: string;
    format?: OutputFormat;
    written?: string[];
    /**
     * The speculators dataset folder (`<outDir>/speculators/`, written with `--trainer speculators`:
     * a `datasets.save_to_disk` folder that speculators' `train.py --data-path` reads; run/outputs/speculatorsOutput.ts).
     */
    speculatorsDataset?: string;
    /**
     * Record files of a previous run that this run does not replace, removed when it committed: the
     * other format's (`data/tokenized_data.jsonl` after `--format parquet`), those of the layout before
     * `data/` (`tokenized_data.jsonl` directly in the output folder), and a speculators dataset a run
     * without `--trainer speculators` does not write.
     */
    removed?: string[];
    /**
     * Files of those names in the output folder that no previous `report.json` there lists as written
     * (the user's own, e.g. speculators' `prepare_data.py` output): left as they are, and said so.
     */
    kept?: string[];
  };
  tokenizer: {
    dir: string;
    name: string;
    hash: string;
    embeddedDefault: boolean;
    /** The implementation that encoded (docs/scale.md "Tokenizer backends"; the records are the same with either); absent in reports of older versions (then `js`). */
    backend?: TokenizerBackend;
    /** Why `--tokenizer-backend auto` used the JavaScript tokenizer (the Rust binding did not load); absent otherwise. */
    backendFallback?: string;
  };
  templateKwargs: Record<string, unknown>;
  mask: MaskPolicy;
  /** `--reasoning` of the run; absent in reports of older versions (then `keep`). */
  reasoning?: ReasoningPolicy;
  maxLength: number | null;
  truncate: boolean;
  /** What was done with records longer than `maxLength` (`drop` when there is no limit). Absent in reports of older versions (then: `truncate` ? truncate : drop). */
  long?: LongPolicy;
  /** Record grouping (docs/loss-mask-rules.md "Record grouping"); absent in reports of older versions (then `exact`). */
  grouping?: Grouping;
  /** Records with fewer trainable tokens were dropped; absent in reports of older versions (then 1). */
  minTrainableTokens?: number;
  /** `--trainer` of the run (null: none); absent in reports of older versions. */
  trainer?: TrainerId | null;
  /** `token_counts.json` beside the outputs (run/outputs/tokenCounts.ts); absent in reports of older versions. */
  tokenCounts?: string;
  /**
   * The chat-template check run once per run (`eagle3-prep check-template`, issue 4):
   * its findings without the probe renders; null when the template could not be checked.
   */
  templateCheck: Omit<TemplateCheck, 'records' | 'turns'> | null;
  files: FileReport[];
  totals: Omit<
    FileReport,
    | 'file'
    | 'format'
    | 'evidence'
    | 'errors'
    | 'errorReasons'
    | 'dropped'
    | 'notes'
    | 'rowsInFile'
    | 'input'
    | 'status'
    | 'failure'
    | 'skipped'
    | 'leftOut'
    | 'unreadFields'
    | 'shapes'
  > & {
    dropped: Record<string, number>;
    /** Errored rows per reason code (only errors that have one), when there were any. */
    errorReasons?: Record<string, number>;
  };
  elapsedMs: number;
  /** Tokens written and rows read per second of `elapsedMs` (`run/reports/accounting.ts` throughputOf); absent in reports written before it. */
  throughput?: { tokensPerSecond: number; rowsPerSecond: number };
  /** Set when the run was one shard (`--shard I/N`), or a merge of N shards (`merged: true`). */
  shard?: { index: number; count: number; merged?: boolean };
  /** The run's status: the worst of its files' (`run/reports/status.ts`); `failed` when `ok` is false. */
  status?: RunStatus;
  /** Every data-changing warning of the run, most frequent first. */
  warnings?: RunWarning[];
  /** Files left out by `skipFailedFiles`, with why. */
  skippedFiles?: { file: string; reason: string }[];
  /**
   * Files (absolute paths) not processed at all: the first look at every input (`run/inputs/preflight.ts`) found a file that
   * fails the run, so without `skipFailedFiles` the run stopped before reading the others. They have no entry in `files`.
   */
  notProcessed?: string[];
  /** The run policy: strict, error-rate limit, dedup. */
  policy?: { strict: boolean; maxErrorRate: number | null; skipFailedFiles: boolean; dedup: boolean };
  /** Set for a dry run: nothing was written; estimates from the first rows of each file. */
  dryRun?: { sampleRows: number; files: DryRunEstimate[] };
}

/** What a run reports about its tokenizer and chat template, found where the tokenizer is loaded (this thread or the first pool worker). */
export interface RunSetup {
  tokenizer: PrepareResult['tokenizer'];
  /** false when the tokenizer has no chat template (the run cannot render anything). */
  hasTemplates: boolean;
  templateCheck: PrepareResult['templateCheck'];
  /** Why the template check failed, when it did. */
  checkError?: string;
  /** The loaded tokenizer's length (`TargetTokenizer.size`) for `token_counts.json`; absent when its loader does not say. */
  tokenizerSize?: number | null;
}

/**
 * One line of `problems.jsonl`: a row that was dropped or errored, with where it is and why.
 * Every such row of the run is listed, in input order (the report keeps the first lines only).
 */
export interface RowProblemLine {
  /** The input file (absolute path). */
  file: string;
  /** 1-based line (row index + 1 for Parquet). */
  line: number;
  /** Element index when the row is one element of a JSON array line. */
  element?: number;
  fate: 'dropped' | 'errored';
  /** Drop reason or error code (`core/codes.ts`). */
  code: string;
  message: string;
}
