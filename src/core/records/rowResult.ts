/**
 * A row's settings and result: what `prepare`'s row processor (records/rowProcessor.ts) takes and
 * gives back, in this thread or in a pool worker (structured-clone data). The run's options
 * (run/contract.ts `PrepareOptions`) extend {@link RowSettings}.
 */
import type { Code } from '../codes';
import type { TrainerCuts, TrainerId } from '../trainers/trainers';
import type { MaskPolicy, ReasoningPolicy } from '../types';
import type { RecordRules } from './fate';
import type { TokenizerBackendChoice } from '../tokenizers/types';
import type { Grouping } from './maskTypes';
import type { RowShape } from './shapes';

/**
 * What happens to a record longer than `maxLength` tokens: `drop` it (`too_long`, the default),
 * `truncate` it to its first `maxLength` tokens, or `split` the conversation into pieces that each
 * end with a target turn (records/split.ts). The default first.
 */
export const LONG_POLICIES = ['drop', 'truncate', 'split'] as const;

/** One of {@link LONG_POLICIES}. */
export type LongPolicy = (typeof LONG_POLICIES)[number];

/** The record file formats of a run (`--format`, the `eagle3prep.outputFormat` setting); the first is the default. */
export const OUTPUT_FORMATS = ['jsonl', 'parquet', 'both', 'messages'] as const;

/** One of {@link OUTPUT_FORMATS}. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * The settings a row processor needs; the same in every worker of a run (a run's `PrepareOptions` (run/contract.ts) hold them).
 * The record rules ({@link RecordRules}, records/fate.ts) come with their declaration there.
 */
export interface RowSettings extends RecordRules {
  /** Local Hugging Face model folder with tokenizer files; undefined = the embedded default (Qwen3). */
  tokenizerDir?: string;
  /** The tokenizer implementation (`--tokenizer-backend`, tokenizers/backend.ts); undefined = `EAGLE3_TOKENIZER_BACKEND`, else `auto`. Same ids either way. */
  tokenizerBackend?: TokenizerBackendChoice;
  /** docs/loss-mask-rules.md "Targets"; default `assistant`. */
  mask?: MaskPolicy;
  /** Maximum record length in tokens; undefined = no limit. */
  maxLength?: number;
  /** Keep the first `maxLength` tokens instead of dropping `too_long` records (the same as `long: 'truncate'`). */
  truncate?: boolean;
  /** Records longer than `maxLength`: default `drop` (`truncate` when `truncate` is set). */
  long?: LongPolicy;
  /** docs/loss-mask-rules.md "Record grouping"; default `exact`. */
  grouping?: Grouping;
  /** Extra variables for the chat template (`enable_thinking`, …). */
  templateKwargs?: Record<string, unknown>;
  /**
   * `keep` (default): train the reasoning in the data where the model writes it; `drop`: remove every turn's
   * reasoning before rendering (a drafter for a model served with thinking off, from data that has reasoning).
   */
  reasoning?: ReasoningPolicy;
  /**
   * Write conversations that are identical after normalization once: the later
   * ones are dropped with reason `duplicate`, across all files of the run (and
   * of the runs sharing {@link PrepareHooks.dedup}); first occurrence in input order wins. A row holding several
   * conversations is dropped when every one of them was written before, else written whole with its repeats
   * noted `duplicate_conversation_kept` (one per repeat).
   */
  dedup?: boolean;
  /**
   * Files the records are written to (docs/outputs.md): `jsonl` (default)
   * `tokenized_data.jsonl`; `parquet` `tokenized_data.parquet` (schema in
   * `parquetOutput.ts`); `both` the two, with the same records in the same order.
   * `prompts_to_generate.jsonl` is JSONL whatever the format (`generate` reads it).
   * `messages`: no records file; the written conversations, normalized, as `conversations.jsonl`
   * (OpenAI `messages`, records/conversationLines.ts), and with `trainer` `eagle` also
   * `conversations_sharegpt.jsonl` (ShareGPT `conversations`) — for the trainers that tokenize
   * themselves (docs/outputs.md "Conversations"). Rows are processed (rendered, masked,
   * tokenized) as in any run, so their fates, notes and token counts are the same.
   */
  format?: OutputFormat;
  /**
   * The trainer the records are for (`--trainer`, core/trainers/trainers.ts): the caller sets
   * `maxLength` to its default length (unless given) with `long: 'split'`; the run then writes no
   * `trainer_length_cut` note and the summary names the next command. Undefined: every trainer's
   * default length is checked (`FileReport.trainerCuts`) and a loss noted.
   */
  trainer?: TrainerId;
}

/**
 * What one row became, computed where the row was processed (inline or in a
 * pool worker, see `pool.ts`) and applied to its file's report and the outputs
 * in input order by the run's single writer. Plain structured-clone data.
 */
export interface RowResult {
  line: number;
  /** The row's index among the rows sharing its line, when several do (`RawRow.element`). */
  element?: number;
  /** The row's fate (docs/loss-mask-rules.md "Records that are not written"). */
  fate: 'written' | 'setAside' | 'dropped' | 'errored';
  /** Drop reason code when `fate` is `dropped`; for an `errored` row, the error's code when it has one (`template_budget_exceeded`). */
  reason?: string;
  /** Error message when `fate` is `errored`; the normalizer's message when `dropped` (when it gave one). */
  message?: string;
  /** Error code (`core/codes.ts`) when `fate` is `errored`: `invalid_json`, `unknown_role`, `template_unsupported`, `template_error`, …. */
  code?: string;
  /** Note codes observed for the row, one entry per occurrence. */
  notes: Code[];
  /** Field paths of the row that were neither read nor known metadata (`Conversation.unreadFields`). */
  unreadFields?: string[];
  /** The shapes of the row's conversations (`records/shapes.ts`), for the template findings that concern the file. */
  shapes?: RowShape[];
  /** With `dedup`: a hash of each normalized conversation of the row (roles, texts, reasoning, tool calls, tools; 16 characters each, joined in the row's order), for written and set-aside rows. */
  dedupKey?: string;
  /** `tokenized_data.jsonl` lines (JSON of a {@link TokenizedRecord}, newline included), in record order. */
  records: string[];
  /** The `prompts_to_generate.jsonl` line when `fate` is `setAside`. */
  prompt?: string;
  /**
   * With `format: messages`: one entry per written conversation of the row, in order: its id, its
   * `conversations.jsonl` line and, with `trainer: eagle`, its `conversations_sharegpt.jsonl` line
   * when EAGLE's reader can take it as it is (else a note says why it is not there). Newlines included.
   */
  conversations?: { id: string; messages: string; sharegpt?: string }[];
  /** The conversation id of each record line (its `id` is it, or it + `#k`), for unique ids across the run (`run/uniqueIds.ts`). */
  recordConvIds?: string[];
  /** The id of each line of `prompt`. */
  promptIds?: string[];
  trainableTokens: number;
  totalTokens: number;
  /** `seq_len` of each written record, in record order. */
  recordTokens: number[];
  /** Trainable tokens of each written record, in record order. */
  recordTrainable: number[];
  /** Tokens of the conversation rendered once (`T`, docs/loss-mask-rules.md "Record grouping") when the row is written, else 0. */
  renderedTokens: number;
  /** Token ids of the written records with their counts over all tokens and over trainable tokens (run/tokenCounts.ts). */
  tokenCounts?: TokenCountDelta;
  /** What each trainer's default length does to the written records; absent when no record is longer than the shortest. */
  trainerCuts?: TrainerCuts;
}

/** Counts of token ids in one row's written records: `ids` ascending and distinct, `all[k]` / `trained[k]` the counts of `ids[k]`. */
export interface TokenCountDelta {
  ids: Uint32Array;
  all: Uint32Array;
  trained: Uint32Array;
}

/**
 * Counts one row's records into a {@link TokenCountDelta} (structured-clone data for the pool).
 * @param records `[input_ids, loss_mask]` of each written record
 */
export function countRowTokens(records: readonly { ids: readonly number[]; mask: readonly number[] }[]): TokenCountDelta {
  // One key per token, id × 2 + trainable, sorted as numbers (a typed array sorts natively): each id's run of keys
  // gives its count, and the keys ending in 1 its trainable count. Token ids are below 2^31.
  let n = 0;
  for (const r of records) n += r.ids.length;
  const keys = new Uint32Array(n);
  let j = 0;
  for (const r of records) for (let k = 0; k < r.ids.length; k++) keys[j++] = r.ids[k] * 2 + (r.mask[k] ? 1 : 0);
  keys.sort();
  let distinct = 0;
  for (let k = 0; k < n; k++) if (k === 0 || keys[k] >>> 1 !== keys[k - 1] >>> 1) distinct++;
  const ids = new Uint32Array(distinct);
  const all = new Uint32Array(distinct);
  const trained = new Uint32Array(distinct);
  let d = -1;
  for (let k = 0; k < n; k++) {
    const id = keys[k] >>> 1;
    if (d < 0 || ids[d] !== id) ids[++d] = id;
    all[d]++;
    trained[d] += keys[k] & 1;
  }
  return { ids, all, trained };
}
