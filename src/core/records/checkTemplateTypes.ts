/**
 * The result of `check-template` (checkTemplate.ts) and its options: what a chat template does to training records,
 * as plain data (JSON-serializable, no `undefined` values) that goes into `report.json` as is and that the CLI, the
 * editor's template check page and the run's report show.
 */
import type { Grouping, TextRecord } from './maskTypes';
import type { RecordBuilder } from './recordBuilder';
import type { RenderBudget } from '../templates/renderBudget';
import type { MaskPolicy } from '../types';
import type { ProbeName } from '../templates/probeConversations';
import type { ProbeDecisions } from './templateFindings';

/**
 * Where a conversation stops being one growing text (docs/loss-mask-rules.md "One conversation,
 * how many records" and the three cases of "One target").
 * - `record_split`: the record's text so far (through an earlier target) is not a
 *   prefix of this target's prompt `P_i`, so a new record starts here — the
 *   template renders an earlier turn differently once later turns follow
 *   (Qwen3 drops the think block of earlier answers).
 * - `template_rewrites_history`: case 3 — `P_i` is not a prefix of `F_i` and the
 *   history changed when turn `i` was added.
 * - `generation_prompt_mismatch`: case 2 — the history is intact but the template
 *   writes no assistant header for this turn (DeepSeek-V3 before a second
 *   consecutive tool-call turn).
 * - `template_unsupported`: none of the cases locates the completion (the target
 *   is errored, see `warnings`); the excerpts compare `P_i` with `F_i` (Qwen3
 *   with `enable_thinking: false` and reasoning in the data).
 */
export interface PrefixBreak {
  probe: ProbeName;
  /** Message index (0-based, into the probe's messages) of the assistant turn where the break shows. */
  turn: number;
  kind: 'record_split' | 'template_rewrites_history' | 'generation_prompt_mismatch' | 'template_unsupported';
  /**
   * Character offset (JS string index, the same in both source texts) where the excerpts start: the first
   * difference, moved back to the start of its line or tag (after the last `\n` or `>` within
   * {@link EXCERPT_BACKUP} characters) so the excerpts read from a boundary.
   */
  at: number;
  /** Up to {@link EXCERPT_CHARS} characters from `at` of the text that a prefix-stable template would continue with (the record so far, or `P_i`). */
  expected: string;
  /** Up to {@link EXCERPT_CHARS} characters from `at` of what the template rendered instead (`P_i`, or `F_i`). */
  actual: string;
}

/** One trained assistant turn of a probe: how its trainable span ends. */
export interface TurnFinding {
  probe: ProbeName;
  /** Message index of the assistant turn. */
  turn: number;
  /** The special token that ends the trainable span (docs/loss-mask-rules.md "Trainable span"), or null when the completion has none (then the span runs to its end). */
  endOfTurn: string | null;
  /** Text the template writes after that token inside the turn's completion `C_i` (not trainable); `""` when none. */
  textAfter: string;
  /** The trainable text of the turn (the span's characters). */
  trained: string;
}

/** A finding that is not a property of the template as a whole. */
export interface CheckWarning {
  /** The probe it came from, or null for a template-wide finding. */
  probe: ProbeName | null;
  /**
   * - `reasoning_not_rendered`: a record note from {@link buildRecords};
   * - `tool_calls_not_rendered`: a target whose tool calls the template does not write (errored, not trained);
   * - `template_error`: the template raised on the probe (`message` is the template's own message);
   * - `template_unsupported`: a target whose completion cannot be located (docs/loss-mask-rules.md "One target", case 3);
   * - `prompt_not_renderable`: the template renders the probe but raises on the prompt before a target;
   * - `content_not_rendered`, `stop_token_inside_turn`: record notes from {@link buildRecords} (a turn's text
   *   missing from its completion; a stop / end-of-turn token inside a trained turn);
   * - `span_without_special_token`: a trainable span ends without a special token (it runs to the end of the completion);
   * - `empty_think_trained`: a turn without `reasoning_content` has an empty `<think>…</think>` block in its
   *   trainable text — the template writes it there, so it is trained (docs/loss-mask-rules.md "One target", case 1); right when the
   *   data was generated with thinking on, wrong when it was generated with thinking off (then set the kwarg);
   * - `probe_render_failed`: a render needed for a template-wide finding raised (the finding is then null);
   * - `reasoning_with_thinking_off`: the probe has reasoning and the template's thinking is off (the row is an error in a run);
   * - `reasoning_missing_after_prefill`, `no_end_of_turn_token`: record notes from {@link buildRecords} (spec v1.4).
   * - `generation_blocks_disagree`: the template's `{% generation %}` blocks mark other text than the rules train on
   *   this probe (a training template); `message` is the first difference (docs/loss-mask-rules.md "Generation blocks").
   * - `template_budget_exceeded`: a render ran past the render budget (templates/renderBudget.ts): the template
   *   loops, recurses or grows its output without bound on this probe (a broken or hostile template); in
   *   `prepare` its rows would be errored with that reason.
   */
  code:
    | 'reasoning_with_thinking_off'
    | 'reasoning_missing_after_prefill'
    | 'no_end_of_turn_token'
    | 'generation_blocks_disagree'
    | 'reasoning_not_rendered'
    | 'tool_calls_not_rendered'
    | 'template_error'
    | 'template_unsupported'
    | 'prompt_not_renderable'
    | 'content_not_rendered'
    | 'stop_token_inside_turn'
    | 'span_without_special_token'
    | 'empty_think_trained'
    | 'probe_render_failed'
    | 'template_budget_exceeded';
  message: string;
}

/** The records of one probe conversation, as the pipeline would build them under the check's mask policy. */
export interface ProbeRecords {
  probe: ProbeName;
  /** One line saying what the probe holds. */
  title: string;
  /** Template used (`default`, `tool_use`, …; see {@link pickTemplate}). */
  template: string;
  /** The template's own message when it raised on this probe (then `records` is empty), else null. */
  error: string | null;
  /** Whether every target of this probe joined one record and had its completion found by case 1 (no `prefixBreaks` for it); null when the template raised. */
  prefixStable: boolean | null;
  /** Records with their trainable spans (`[start, end)` character offsets into `text`) and target message indices. */
  records: TextRecord[];
  /**
   * The distinct prefix renders the probe's records needed, and how many came from the probe's one traced render
   * (proven equal, templates/prefixRenderer.ts) rather than a render of their own; null when the template raised.
   */
  prefixRenders: { fromOnePass: number; total: number } | null;
}

/** The model's stop tokens and how turns end (docs/loss-mask-rules.md "A turn that ends at the next role marker"). */
export interface StopTokenFindings {
  /** The stop tokens (`generation_config.json` `eos_token_id`, else `eos_token`). */
  tokens: string[];
  source: 'generation_config' | 'eos_token' | 'none';
  /** The stop tokens the probes' turns end with because the next turn's render starts with them (GLM-4.x `<|user|>`, `<|observation|>`), trained; empty when turns hold their own end-of-turn token. */
  fromNextTurn: string[];
  evidence: string;
}

/** Result of {@link checkTemplate}. JSON-serializable. */
export interface TemplateCheck {
  tokenizer: { name: string; dir: string; hash: string };
  templateKwargs: Record<string, unknown>;
  /** Mask policy the displayed `records` were built with. */
  mask: MaskPolicy;
  /**
   * True when every probe the template rendered gives one record per
   * conversation with every completion found by case 1 (docs/loss-mask-rules.md "One target");
   * `prefixBreaks` says where not. Probes on which the template raised are not
   * counted (they are in `warnings` as `template_error`).
   */
  prefixStable: boolean;
  prefixBreaks: PrefixBreak[];
  /** Distinct special tokens that end trainable spans across the probes, most frequent first (e.g. `["<|im_end|>"]`); spans without one are in `warnings`. */
  endOfTurnTrained: string[];
  /** Distinct texts written after the end-of-turn token inside a turn (never trained), most frequent first (e.g. `["\n"]`, or `[""]`). */
  textAfterEndOfTurn: string[];
  /** Per trained assistant turn of every probe (targets under policy `assistant`, whatever `mask` is): end token, text after it, trained text. */
  turns: TurnFinding[];
  /**
   * Text the template writes before the user's turn when the conversation has
   * no system message, minus a leading `bos_token` (e.g. Kimi-K2 instruct's
   * `<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>`,
   * Llama-3.1's date header block); null when it writes nothing. Under policy
   * `non-system` this text is trainable (docs/loss-mask-rules.md "Policy non-system").
   */
  defaultSystemPrompt: string | null;
  /** `G` of the first assistant turn: `R([user], gen=True)` minus `R([user])` (docs/loss-mask-rules.md "One target"); null when it could not be rendered. */
  generationPrompt: string | null;
  /** The header the template writes before an assistant turn that is in the history (not the last turn); null when it could not be rendered. */
  assistantHeader: string | null;
  /**
   * What the generation prompt pre-fills beyond the assistant header — the
   * part of `generationPrompt` after its common prefix with `assistantHeader`
   * (Qwen3 with `enable_thinking: false`: `<think>\n\n</think>\n\n`); null when
   * there is none. Part of the prompt, never trained.
   */
  generationPromptScaffold: string | null;
  /** The template-dependent decisions of the rules, per template the probes used (spec v1.4), with their evidence. */
  probeDecisions: ProbeDecisions[];
  /** The model's stop tokens and which of them end turns from the next turn's render. */
  stopTokens: StopTokenFindings;
  /** Prefix stability with its evidence: where records split, by probe (the same as `prefixStable` / `prefixBreaks`). */
  prefixStability: { stable: boolean; evidence: string };
  warnings: CheckWarning[];
  /** Per probe, the records as built (for display). */
  records: ProbeRecords[];
  /** Special tokens that occur in the probe renders (longest first), for highlighting. */
  specialTokensSeen: string[];
  /** Grouping the displayed `records` were built with (docs/loss-mask-rules.md "Record grouping"). */
  grouping: Grouping;
  /**
   * What the records of the probes cost (probes the template renders, under the check's mask policy):
   * tokens of the records under each grouping and of the probe conversations rendered once (`T`),
   * and the amplification of each grouping (record tokens ÷ `renderedTokens`; null when nothing is trained).
   */
  amplification: { exactTokens: number; mergedTokens: number; renderedTokens: number; exact: number | null; merged: number | null };
}

/** Options of {@link checkTemplate}. */
export interface CheckTemplateOptions {
  /** Template kwargs of the run (`enable_thinking`, …), passed to every render. */
  templateKwargs?: Record<string, unknown>;
  /** Policy for the displayed records (default `assistant`); the per-turn findings do not depend on it. */
  mask?: MaskPolicy;
  /** Grouping of the displayed records (default `exact`); the amplification is given for both. */
  grouping?: Grouping;
  /** Render budget of every probe render (templates/renderBudget.ts; default: its defaults). */
  budget?: Partial<RenderBudget>;
  /**
   * The compiled chat templates of the run's row processor (records/recordBuilder.ts), used instead of compiling the
   * tokenizer's templates again when no `budget` is given: `prepare` checks the templates its rows render with, and a
   * template is compiled (parsed, its behaviour probed) once per run in that thread. Same templates, same results.
   */
  templates?: Pick<RecordBuilder, 'template'>;
}
