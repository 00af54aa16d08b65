/** The record view's data: a row in, its options, and the view the hover and the mask view show (turns, records, token detail, warnings). */
import type { RecordDrop, RecordRules } from './fate';
import type { Code } from '../codes';
import type { LongPolicy } from './rowResult';
import type { MaskPolicy, ReasoningPolicy, Role } from '../types';
import type { AnswerMode } from '../types';
import type { Grouping, Span } from './maskTypes';

/** One row of a dataset file: its JSON text (one JSONL line), and where it is. */
export interface RowInput {
  /** The row's JSON text (without the line break). */
  text: string;
  /** The dataset file (used for the record id fallback `<basename>:<line>` and in messages). */
  file: string;
  /** 1-based line number of the row. */
  line: number;
  /**
   * How `prepare` reads the row when its file is read whole (OpenAssistant exports, agent event logs:
   * run/fileRows.ts `fileRowOf`); the view then shows that reading instead of the line alone.
   */
  fileRow?: FileRow;
}

/**
 * A row of a file read whole, as `prepare` plans it: `row`, the row to read (`value`: the conversation row its tree
 * or chain made, or the row itself, `eagle3prep.jsonc` already applied); `part`, a message inside the conversations
 * of other rows (`leaves`: those rows, with the values their plans made), whose fate follows theirs.
 */
export type FileRow =
  | { kind: 'row'; format: string; value: unknown }
  | { kind: 'part'; format: string; partReason: string; leaves: { line: number; element?: number; value: unknown }[] };

/** Options of {@link RecordViewer.view}; the record rules ({@link RecordRules}: `minTrainableTokens`, …) as prepare applies them. */
export interface RecordViewOptions extends RecordRules {
  /** docs/loss-mask-rules.md "Targets"; default `assistant`. */
  mask?: MaskPolicy;
  /** docs/loss-mask-rules.md "Record grouping"; default `exact` — the records `prepare` writes with the same setting. */
  grouping?: Grouping;
  /** Chat template variables (`enable_thinking`, …), as `apply_chat_template(**kwargs)` gets them. */
  templateKwargs?: Record<string, unknown>;
  /** `prepare --reasoning`: keep (default) or drop the data's reasoning before rendering. */
  reasoning?: ReasoningPolicy;
  /** Records longer than this many tokens get a warning saying what prepare does with them (see `long`). */
  maxLength?: number;
  /** What prepare does with a record over `maxLength` (`eagle3prep.longRecords`, CLI `--long`); default `drop`. */
  long?: LongPolicy;
  /** Work cap: characters tokenized per call (turn texts and record texts together); default Infinity (exact). */
  maxTokenizedChars?: number;
  /** For a line holding several rows (a JSON Lines line that is a list of row objects): the 0-based row to show; default the first. */
  element?: number;
  /** How rows holding several answers are read (`prepare --answers`); default the covering `eagle3prep.jsonc`'s `reading.answers`. */
  answers?: AnswerMode;
  /** Index of the record whose tokens are returned in `detail` (the mask view); undefined = none. */
  detailRecord?: number;
  /** Called between steps; throw from it to abandon the work (e.g. a cancelled hover). */
  checkCancelled?: () => void;
}

/**
 * What only the view says (no row of prepare's outputs carries these): `estimated` (counts past the work cap),
 * `dropped` / `errored` / `set_aside` (the row's fate, whose reason code is in the message and the verdict),
 * `part_of` / `line_holds_rows` (a line that is one of several rows, or holds several), `empty_assistant_turn`
 * (a turn the view marks before normalizing).
 */
export type ViewWarning = 'estimated' | 'dropped' | 'errored' | 'set_aside' | 'part_of' | 'line_holds_rows' | 'empty_assistant_turn';

/** A warning about the row, with the turn (index into `turns`) it concerns when there is one. */
export interface RowWarning {
  /**
   * A code of src/core/codes.ts (the words prepare writes in report.json and problems.jsonl: `too_long`,
   * `record_truncated`, `split_into_records`, `several_conversations_found`, a mask note, …), or one of the
   * view's own {@link ViewWarning}s for what only the view says.
   */
  code: Code | ViewWarning;
  message: string;
  turn?: number;
}

/** One turn of the row after normalization. */
export interface TurnView {
  /** Index into the normalized messages. */
  index: number;
  role: Role;
  /** Characters of the turn's text: content + reasoning + tool-call names and arguments (UTF-16 units). */
  chars: number;
  /** Tokens of that text encoded on its own (no template markup). */
  tokens: number;
  /** True when `tokens` is extrapolated (work cap). */
  estimated: boolean;
  /** Whether the mask policy makes this turn a target (trained on). */
  target: boolean;
  /** `[start, end)` character offsets of the turn inside the JSON line (the source object, or the field it came from); undefined when the turn has no source text (e.g. synthesized). */
  range?: [number, number];
  /** Where each field of the turn lies inside the JSON line (the source property's value), when found. */
  fields?: { field: TurnField; range: [number, number] }[];
}

/** A field of a normalized turn whose text the template renders. */
export type TurnField = 'content' | 'reasoning_content' | 'tool_calls';

/** One record the row becomes (one line of tokenized_data.jsonl). */
export interface RecordSummary {
  index: number;
  /** The id `prepare` writes: the conversation id, `#r` appended when the row becomes several records. */
  id: string;
  tokens: number;
  trainableTokens: number;
  /** True when the counts are extrapolated (work cap). */
  estimated: boolean;
  /** Indices (into `turns`) of the assistant turns trained in this record. */
  targets: number[];
  /** Characters of the rendered text (of the shortened text when the line was over the cap). */
  chars: number;
  /**
   * What `prepare` does with the record under the view's options (records/fate.ts): written whole,
   * written cut to the max length (`long: truncate`), split into records that fit (`long: split`),
   * or not written for a drop reason.
   */
  fate: 'written' | 'truncated' | 'split' | RecordDrop;
}

/** One token of the detail record. */
export interface TokenView {
  id: number;
  /** The characters of the rendered text this token covers (`text.slice(start, nextStart)`). */
  text: string;
  /** UTF-16 offset of its first character in the rendered text. */
  start: number;
  /** `loss_mask` value. */
  trainable: boolean;
  /** True for an added token marked special (`<|im_start|>`, `<|im_end|>`, …). */
  special: boolean;
  /** Index of the turn whose rendering holds this token (the last target's turn includes the generation prompt before it); -1 for template text before the first turn. */
  turn: number;
}

/** The tokens of one record, for the mask view. */
export interface RecordDetail {
  index: number;
  tokens: TokenView[];
  /** `[start, end)` of the rendered text each turn occupies (same indexing as `turns`), from prefix renders; absent turns are not in this record. */
  turnRanges: { turn: number; role: Role; start: number; end: number }[];
  /** Trainable character spans of the rendered text (docs/loss-mask-rules.md "Trainable span"). */
  spans: Span[];
  /** Where the text of each turn's fields lies in the rendered text (found by search inside the turn's range), for "reveal in source". */
  fieldSpans: { turn: number; field: TurnField; start: number; end: number }[];
}

/** Everything the hover and the mask view show about one row. */
export interface RecordView {
  file: string;
  line: number;
  /** Characters of the JSON line. */
  lineChars: number;
  /** What the pipeline does with the row. */
  status: 'conversation' | 'prompt' | 'dropped' | 'errored';
  /** The normalizer's shape id (`openai-messages`, `sharegpt`, …) and description of the row; undefined when no shape matched. */
  shape?: { format: string; description: string };
  /** The conversation id (undefined when the row did not normalize). */
  id?: string;
  /** For `dropped`: the reason code; for `errored`: undefined. */
  reason?: string;
  /** For `dropped` / `errored`: the pipeline's message. */
  message?: string;
  turns: TurnView[];
  records: RecordSummary[];
  detail?: RecordDetail;
  totals: { tokens: number; trainableTokens: number; records: number; estimated: boolean };
  warnings: RowWarning[];
  /** Notes of the normalizer and of the mask rules (codes). */
  notes: Code[];
  tokenizer: { name: string; dir: string };
  mask: MaskPolicy;
  templateKwargs: Record<string, unknown>;
  /** The template used (its name in the tokenizer's config). */
  template?: string;
  /**
   * What `prepare` does with the row, as its outputs would say it (`tokenized_data.jsonl`, `prompts_to_generate.jsonl`,
   * `problems.jsonl`): decided by the same rules (records/fate.ts `rowFate`, the row processor's codes). For a line
   * holding several rows, the verdict of the row shown ({@link RecordViewOptions.element}).
   */
  verdict: RowVerdict;
}

/**
 * A row's fate in a run (docs/loss-mask-rules.md "Records that are not written"): written with `records` records,
 * set aside for generation, dropped with a reason code, or errored with an error code (the `code` of its
 * `problems.jsonl` line). `records` may be an estimate when the view's counts are (`RecordView.totals.estimated`).
 */
export type RowVerdict = { fate: 'written'; records: number } | { fate: 'setAside' } | { fate: 'dropped' | 'errored'; code: string };
