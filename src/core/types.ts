/**
 * The one message model every dataset shape is normalized into, and the
 * record / outcome shapes the pipeline passes around.
 *
 * Roles follow the OpenAI chat-completions wire format (system, user,
 * assistant, tool) because that is what chat templates and OpenAI-compatible
 * servers (SGLang, vLLM) consume.
 */
import type { Code } from './codes';

/** A normalized role. Source spellings (`human`, `gpt`, `ai`, `observation`, …) are mapped by the normalizer. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/** One tool call in OpenAI shape. `arguments` is kept as the source gave it (JSON string or object); the template adapter decides the form the template wants. */
export interface ToolCall {
  id?: string;
  type: 'function';
  function: { name: string; arguments: string | Record<string, unknown> };
}

/** One turn of a conversation after normalization. */
export interface Message {
  role: Role;
  /**
   * Text of the turn. `null` only for an assistant turn with tool calls and no
   * text (the template adapter decides between `null` and `""`,
   * docs/loss-mask-rules.md "No text"); every other absent content is `""`.
   */
  content: string | null;
  reasoning_content?: string;
  /**
   * Set when `reasoning_content` was written inline at the start of the source's content (`<think>R</think>C`):
   * the exact text around it, so the content as written is `open + reasoning_content + close + content`. The
   * template adapter gives that text back to a template that does not render reasoning
   * (docs/loss-mask-rules.md "Reasoning written into the text").
   */
  reasoning_inline?: { open: string; close: string };
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  /** false when the source flags this turn as not trainable (`weight: 0`, `loss: false`, `train: false`, …). */
  trainable?: boolean;
}

/** Where a row came from. `line` is 1-based; for a `.json` array it is the line the element starts on. */
export interface Source {
  file: string;
  line: number;
  /** Index among the rows that start on the same line, when several do (`read/readers` `RawRow.element`). */
  element?: number;
}

/** A row turned into one conversation. */
export interface Conversation {
  /** Stable id: the source's own id field when it has one, else `<file basename>:<line>`. */
  id: string;
  source: Source;
  messages: Message[];
  /** Tool definitions (OpenAI `tools` shape) when the row carries them; an empty list is treated as none. */
  tools?: unknown[];
  /** Non-fatal observations made while normalizing (e.g. `system_prompt_field_used`). */
  notes?: Code[];
  /**
   * Content parts that are not text (images, audio, files, …): not rendered, reported here.
   * `message` is the 0-based index into `messages` of the turn that held the part; `type` the part's `type`.
   */
  nonTextParts?: { message: number; type: string }[];
  /**
   * Fields of the row or of its turns that were neither read nor known metadata
   * (`formats/fields.ts`), as paths: `generated_patch`, `messages[].mask`,
   * `input.seed`. Reported per file (`FileReport.unread_fields`) and per record
   * (`inspect --json`), never dropped in silence.
   */
  unreadFields?: string[];
  /**
   * A prompt answered turn by turn (multi-turn prompt sets: MT-bench `turns`, BFCL `question[turn]`): 0-based
   * indexes into `messages` of the turns after which the target model answers before the next turn is asked,
   * ascending; the last turn is answered as in every prompt and is not listed. Set only on prompt outcomes
   * (`formats/rowEnd.ts` `finish`). A `prompts_to_generate.jsonl` line writes an empty assistant turn after
   * each (the placeholder form, `records/rowProcessor.ts` `promptLine`), which reads back into the same list.
   */
  answerAfter?: number[];
}

/** Reason codes for rows that are dropped (never written, never an error). */
export type DropReason =
  | 'no_trainable_tokens'
  | 'too_long'
  | 'empty_conversation'
  | 'no_assistant_turn'
  | 'invalid_json'
  | 'unrecognized_shape'
  | 'message_fragment'
  | 'kto_undesirable'
  | 'oasst_excluded'
  | 'oasst_not_best_path'
  | 'oasst_orphan'
  | 'oasst_path_not_written'
  | 'oasst_duplicate'
  | 'summary_event'
  | 'orphan_event'
  | 'duplicate_event'
  | 'non_conversation_event'
  | 'event_chain_not_written';

/** What normalizing one row produced. Exactly one of these per row read. */
export type RowOutcome =
  | { kind: 'conversation'; conversation: Conversation }
  | { kind: 'prompt'; conversation: Conversation } // needs the target model to answer (no assistant turn)
  /**
   * A row that holds several conversations (Self-Instruct `instances`, a list of
   * conversation lists): one part each, in order, each with its own id
   * (`<row id>/<k>`, 1-based) and the row's source.
   */
  | { kind: 'split'; source: Source; parts: { kind: 'conversation' | 'prompt'; conversation: Conversation }[] }
  | { kind: 'dropped'; source: Source; reason: DropReason; message: string }
  /** `role` (as the source spells it) and `turn` (0-based) when the error is a turn's, e.g. `unknown_role`. */
  | { kind: 'errored'; source: Source; message: string; code?: ErrorCode; role?: string; turn?: number };

/**
 * Why a row in a recognized shape could not be normalized (stable codes, docs/cli.md "inspect --json").
 * - `unknown_role`: a turn's role is not in the alias table (never guessed, never trained as assistant);
 * - `missing_role`: a turn has no role field;
 * - `bad_turn`: a turn is not an object;
 * - `bad_tool_calls`: `tool_calls` / a function call is not usable (no name, not a list, …);
 * - `bad_field`: a field has the wrong type (`tools` not a list, a JSON string that does not parse, …);
 * - `answers_without_prompt`: a batch output line holds answers without the request they answer;
 * - `internal_error`: a bug in a normalizer.
 */
export type ErrorCode = 'unknown_role' | 'missing_role' | 'bad_turn' | 'bad_tool_calls' | 'bad_field' | 'answers_without_prompt' | 'internal_error';

/** The detected shape of a file, with the evidence that decided it. */
export interface FormatDetection {
  /** Stable format id, e.g. `openai-messages`, `sharegpt`, `role-text-trajectory`, `prompt-only`, `mixed`. */
  format: string;
  /** Human-readable facts that decided the format, e.g. `3/3 rows have "conversations" with from/value`. */
  evidence: string[];
}

/**
 * The mask policies (which turns are trained), in the order the settings, the CLI help and the mask
 * view offer them; the default first. docs/loss-mask-rules.md "Targets".
 */
export const MASK_POLICIES = ['assistant', 'last-assistant', 'non-system'] as const;

/** One of {@link MASK_POLICIES}. */
export type MaskPolicy = (typeof MASK_POLICIES)[number];

/** Whether `v` names a mask policy. */
export function isMaskPolicy(v: unknown): v is MaskPolicy {
  return (MASK_POLICIES as readonly unknown[]).includes(v);
}

/**
 * What `prepare` does with the reasoning in the data (`--reasoning`): `keep` it (default), or `drop` it before
 * rendering — to train a drafter of a model served with thinking off from data that has reasoning.
 */
export const REASONING_POLICIES = ['keep', 'drop'] as const;
export type ReasoningPolicy = (typeof REASONING_POLICIES)[number];

/** One training record as written to `tokenized_data.jsonl`. */
export interface TokenizedRecord {
  id: string;
  source: Source;
  input_ids: number[];
  loss_mask: number[];
  seq_len: number;
  n_prompt_tokens: number;
  n_response_tokens: number;
}

/** How several answers to one prompt are read ({@link NormalizeOptions.answers}; `--answers`, eagle3prep.jsonc "reading"). */
export const ANSWER_MODES = ['best', 'all', 'first'] as const;
/** One of {@link ANSWER_MODES}. */
export type AnswerMode = (typeof ANSWER_MODES)[number];
