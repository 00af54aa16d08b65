/**
 * The vocabulary of the loss-mask rules (docs/loss-mask-rules.md): records before tokenization, their trainable spans,
 * record grouping, what a conversation becomes and the located targets the rules build records from.
 */
import type { Code } from '../codes';
import type { PrefixRenderStats } from '../templates/prefixRenderer';
import type { Message, ReasoningPolicy } from '../types';

/** A half-open character range `[start, end)` in a record's text (JS string indices). */
export type Span = [start: number, end: number];

/** One record before tokenization: the text the server would see, and what of it the model generated. */
export interface TextRecord {
  text: string;
  /** Trainable spans, ascending and disjoint. */
  spans: Span[];
  /** Indices (into the conversation's messages) of the assistant turns trained in this record. */
  targets: number[];
}

/**
 * How targets are grouped into records (docs/loss-mask-rules.md "Record grouping: exact or merged"):
 * `exact` puts every target in exactly the context the server sends the model (a template that
 * rewrites history costs one record per stable run); `merged` writes one record per conversation,
 * `T = R(m[:j+1])`, each target trained where the template writes its turn in `T`. The default first.
 */
export const GROUPINGS = ['exact', 'merged'] as const;

/** One of {@link GROUPINGS}. */
export type Grouping = (typeof GROUPINGS)[number];

/** Options of {@link buildRecords}. */
export interface BuildOptions {
  /** Default `exact`. */
  grouping?: Grouping;
  /** `drop` removes every turn's reasoning (its `reasoning_content` and reasoning written inline) before rendering; default `keep`. */
  reasoning?: ReasoningPolicy;
  /** The model's stop tokens (`TargetTokenizer.stopTokens`), for turns that end at the next role marker. */
  stopTokens?: readonly string[];
}

/** What one conversation becomes. */
export interface ConversationRecords {
  records: TextRecord[];
  /**
   * `T`: the conversation rendered once through its last target, `R(m[:j+1], gen=False)` (the whole
   * conversation under policy `non-system`); null when nothing is trained. The denominator of the
   * amplification figure (docs/loss-mask-rules.md "Record grouping"): record tokens ÷ tokens of `T`.
   */
  rendered: string | null;
  /**
   * Record-level notes (codes of docs/loss-mask-rules.md, once each): `generation_prompt_mismatch`, `template_rewrites_history`,
   * `prefill_not_rendered`, `reasoning_restored`, `reasoning_missing_after_prefill`, `reasoning_not_rendered`,
   * `content_not_rendered`, `stop_token_inside_turn`, `no_end_of_turn_token`, `stop_token_from_next_turn`, `inline_think_split`,
   * `inline_think_kept`, `reasoning_dropped`, `generation_placeholder_removed`; grouping `merged`:
   * `merged_history_form`, `merged_fallback_exact`.
   */
  notes: Code[];
  /**
   * Targets that are not trained, with the message index and why: not located (`template_unsupported`), a prompt the
   * template cannot render (`prompt_not_renderable`), tool calls the template does not write (`tool_calls_not_rendered`).
   */
  targetErrors: { index: number; reason: TargetErrorReason; message: string }[];
  /** Number of targets the policy selected (0 = nothing to train on). */
  targetCount: number;
  /** How the prefix renders were obtained: from the conversation's one traced render (proven) or rendered for real (templates/prefixRenderer.ts). */
  prefixRenders?: PrefixRenderStats;
  /** The messages as the template was given them (after `--reasoning` and placeholder removal, adapted); indices match `targets`. */
  messages: Message[];
  /**
   * Set when a trailing generation placeholder was removed and no target is left (docs/loss-mask-rules.md "Empty turns"): the row is
   * a prompt to generate, these are its messages (normalized, not adapted); `records` is then empty.
   */
  prompt?: Message[];
  /**
   * Where the template's `{% generation %}` blocks disagree with the spans the rules derive (docs/loss-mask-rules.md
   * "Generation blocks"): the first difference in the conversation, as a sentence (`generation_blocks_disagree`).
   */
  generationBlocks?: string;
  /** Set when the row cannot be trained as it is (its reasoning with thinking off); `records` is then empty. */
  rowError?: { code: 'reasoning_with_thinking_off'; message: string };
}

/**
 * Why a target is errored: `template_unsupported` (its completion cannot be located in the render),
 * `prompt_not_renderable` (the template renders the conversation but raises on the prompt before the turn,
 * e.g. a greeting before any user turn), `tool_calls_not_rendered` (the turn's tool calls are not in its rendered
 * completion: a template without tool-call support renders an empty or cut turn).
 */
export type TargetErrorReason = 'template_unsupported' | 'prompt_not_renderable' | 'tool_calls_not_rendered';

/** A located target of the exact rules: its prompt `P_i`, its candidate text `X_i = P_i + C_i` and its trainable span in `X_i`. */
export interface LocatedTarget {
  index: number;
  P: string;
  X: string;
  span: Span;
  /** The turn's texts as the template is given them ({@link turnTexts}). */
  texts: string[];
}

/** A target that is not trained, with why (see {@link ConversationRecords.targetErrors}). */
export type TargetError = ConversationRecords['targetErrors'][number];
