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
  /**
   * `tokenized_data.jsonl` lines (JSON of a {@link TokenizedRecord}, newline included), in record order; `''` for each
   * record with `format: messages` (its line is not made). Empty when the lines crossed from a pool worker as
   * {@link recordBytes}: count them with {@link recordLineCount}, read them with {@link recordLineTexts}.
   */
  records: string[];
  /**
   * The same lines as UTF-8 bytes, one view per record, when the row was processed in a pool worker: views of one
   * buffer per batch, transferred to the run's thread rather than copied ({@link packRecordLines}), which writes them
   * as they are. Absent otherwise.
   */
  recordBytes?: Uint8Array[];
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

/** Per thread, reused by every row ({@link countRowTokens}): each token id's slot among the row's distinct ids (-1: none), grown to the largest id seen. */
let slotOf = new Int32Array(0);
/** Per thread, reused: the row's distinct ids in order of first occurrence, and their counts over all and over trainable tokens. */
let firstSeen = new Uint32Array(0);
let allOf = new Uint32Array(0);
let trainedOf = new Uint32Array(0);

/**
 * Counts one row's records into a {@link TokenCountDelta} (structured-clone data for the pool).
 * Each token is counted in a slot of its id (scratch arrays of the thread, reset after the row), and only the row's
 * distinct ids are sorted: a row of short chats sorted all its tokens before, and this is a per-row cost of `prepare`.
 * @param records `[input_ids, loss_mask]` of each written record (token ids: integers from 0 below 2^31)
 */
export function countRowTokens(records: readonly { ids: readonly number[]; mask: readonly number[] }[]): TokenCountDelta {
  let n = 0;
  for (const r of records) n += r.ids.length;
  if (firstSeen.length < n) {
    const size = Math.max(n, 2 * firstSeen.length, 1024);
    firstSeen = new Uint32Array(size);
    allOf = new Uint32Array(size);
    trainedOf = new Uint32Array(size);
  }
  let distinct = 0;
  try {
    for (const r of records) {
      const ids = r.ids;
      const mask = r.mask;
      for (let k = 0; k < ids.length; k++) {
        const id = ids[k];
        if (id >= slotOf.length) {
          const grown = new Int32Array(Math.max(id + 1, 2 * slotOf.length, 65536)).fill(-1);
          grown.set(slotOf);
          slotOf = grown;
        }
        let s = slotOf[id];
        if (s < 0) {
          s = distinct++;
          slotOf[id] = s;
          firstSeen[s] = id;
          allOf[s] = 0;
          trainedOf[s] = 0;
        }
        allOf[s]++;
        if (mask[k]) trainedOf[s]++;
      }
    }
  } catch (e) {
    // A throw mid-row (an id past what a typed array indexes) must not leave this row's slots set: the next row
    // would add to them and leave its own ids out, silently.
    for (let s = 0; s < distinct; s++) slotOf[firstSeen[s]] = -1;
    throw e;
  }
  // One buffer for the three arrays (one allocation; structured clone copies it once).
  const buf = new ArrayBuffer(12 * distinct);
  const ids = new Uint32Array(buf, 0, distinct);
  ids.set(firstSeen.subarray(0, distinct));
  ids.sort();
  const all = new Uint32Array(buf, 4 * distinct, distinct);
  const trained = new Uint32Array(buf, 8 * distinct, distinct);
  for (let k = 0; k < distinct; k++) {
    const s = slotOf[ids[k]];
    all[k] = allOf[s];
    trained[k] = trainedOf[s];
  }
  for (let s = 0; s < distinct; s++) slotOf[firstSeen[s]] = -1;
  return { ids, all, trained };
}

/** The number of a row's record lines, whether they are texts (`records`) or bytes (`recordBytes`). */
export function recordLineCount(res: Pick<RowResult, 'records' | 'recordBytes'>): number {
  return res.recordBytes?.length ?? res.records.length;
}

const utf8Decoder = new TextDecoder();

/** A row's record lines as texts: `records`, or `recordBytes` decoded (UTF-8; the lines are JSON, well-formed). */
export function recordLineTexts(res: Pick<RowResult, 'records' | 'recordBytes'>): string[] {
  return res.recordBytes ? res.recordBytes.map((b) => utf8Decoder.decode(b)) : res.records;
}

const utf8Encoder = new TextEncoder();

/**
 * Moves the record lines of a batch's results into UTF-8 bytes, in place (a pool worker, before it posts the results):
 * each result with lines gets `recordBytes` (one view per line, of one buffer for the whole batch) and an empty
 * `records`. The bytes are those `tokenized_data.jsonl` gets when the run's thread writes the texts (TextEncoder and a
 * utf8 write stream both encode UTF-16 as UTF-8; JSON lines hold no lone surrogate), so the output is the same.
 * Posting them as a transfer moves the buffer to the run's thread without a copy, and that thread writes them without
 * encoding: both the structured clone of the texts and their encoding leave the thread that writes every output.
 * @returns the buffer to transfer (`postMessage(message, transferList)`), or none when no result has a line
 */
export function packRecordLines(results: RowResult[]): ArrayBuffer[] {
  let units = 0;
  for (const r of results) for (const line of r.records) units += line.length;
  if (units === 0) return [];
  // ASCII lines (the usual case: token ids and masks) need one byte per UTF-16 unit; grown when a line needs more.
  let buf = new Uint8Array(units + 64);
  let at = 0;
  const ends: number[][] = [];
  for (const r of results) {
    const rowEnds: number[] = [];
    for (const line of r.records) {
      let read = 0;
      for (;;) {
        const done = utf8Encoder.encodeInto(read ? line.slice(read) : line, buf.subarray(at));
        read += done.read;
        at += done.written;
        if (read >= line.length) break;
        const grown = new Uint8Array(Math.max(2 * buf.length, at + 3 * (line.length - read)));
        grown.set(buf.subarray(0, at));
        buf = grown;
      }
      rowEnds.push(at);
    }
    ends.push(rowEnds);
  }
  let start = 0;
  results.forEach((r, k) => {
    if (!r.records.length) return;
    r.recordBytes = ends[k].map((end) => {
      const view = buf.subarray(start, end);
      start = end;
      return view;
    });
    r.records = [];
  });
  return [buf.buffer as ArrayBuffer];
}
