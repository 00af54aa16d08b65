/**
 * Trainable spans from the target model's own chat template, rendered prefix by
 * prefix — the rules of `docs/loss-mask-rules.md` (v1.5). No per-model regexes:
 * everything is derived from renders of message prefixes and from the template's
 * probe decisions (templates/probes.ts).
 */
import type { Code } from '../codes';
import { PrefixRenderer, type PrefixRenderStats } from '../templates/prefixRenderer';
import { ChatTemplate, type AdaptedTurns } from '../templates/template';
import { TemplateBudgetError, TemplateRenderError } from '../templates/errors';
import { DEFAULT_REASONING_CLOSE, endsWithReasoningOpener, reasoningTags } from '../templates/probes';
import type { Conversation, MaskPolicy, Message, ReasoningPolicy, ToolCall } from '../types';
import { templateTurnEnd, type TurnEnd } from './dataTokens';
import { commonPrefixLength, endsWithFast, SpecialTokenFinder, startsWithAt, tokenBoundary } from './specialTokens';
import { asWrittenInline } from '../formats/content';
import { NEXT_TURN_PROBE, prepareTurns, reasoningShown, restoreInline, restoreIntoWrapper, selectTargets, stopTokenAfter, trimNewlines } from './turns';

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

/**
 * The tool calls of an assistant turn that rendered text does not show: neither the call's function name nor its id
 * occurs in `rendered` (docs/loss-mask-rules.md "What the template dropped"). Empty for a turn without tool calls.
 */
export function unrenderedToolCalls(m: Message, rendered: string): ToolCall[] {
  return (m.tool_calls ?? []).filter((tc) => !rendered.includes(tc.function.name) && !(tc.id && rendered.includes(tc.id)));
}

/** The message of a `tool_calls_not_rendered` target error: which calls, what the template wrote instead, what to do. */
function toolCallsNotRenderedMessage(i: number, m: Message, missing: readonly ToolCall[], C: string): string {
  const all = m.tool_calls?.length ?? 0;
  const names = missing.map((tc) => q(tc.function.name)).join(', ');
  const which = missing.length === all ? (all === 1 ? 'its tool call' : `its ${all} tool calls`) : `${missing.length} of its ${all} tool calls`;
  const shown = C.length > 80 ? q(C.slice(0, 80)) + '…' : q(C);
  return (
    `assistant turn ${i}: the chat template does not write ${which} (${names}) into the turn (it renders ${shown}), ` +
    `so training it would teach the model to ${(m.content ?? '').trim() ? 'stop where it calls the tool' : 'end the turn at once'}; ` +
    `it is not trained (a later turn keeps it as history). Use the target model's tool-use chat template`
  );
}

/** A string as JSON, for messages. */
const q = (s: string) => JSON.stringify(s);

/** A located target of the exact rules: its prompt `P_i`, its candidate text `X_i = P_i + C_i` and its trainable span in `X_i`. */
interface LocatedTarget {
  index: number;
  P: string;
  X: string;
  span: Span;
  /** The turn's texts as the template is given them ({@link turnTexts}). */
  texts: string[];
}

/**
 * Builds the records of one conversation (docs/loss-mask-rules.md).
 *
 * Before rendering ({@link prepareTurns}, then {@link ChatTemplate.adaptTurns}): `--reasoning drop`, trailing
 * generation placeholders removed (no target left → `prompt`), what the template is given. With thinking off (the
 * generation prompt closes an empty reasoning block) a target with reasoning makes the row an error (`rowError`)
 * that names both ways out.
 *
 * Policy `assistant` / `last-assistant` (docs/loss-mask-rules.md "One target" and "One conversation, how many records"): for target
 * `i`, `P = R(m[:i], gen)`, `H = R(m[:i])`, `F = R(m[:i+1])`, completion `C` by cases 1, 2, 2b (with reasoning put
 * back after a pre-filled opener) and 3; reasoning the template drops from its own turn restored into its empty
 * wrapper; a completion without a special token extended by the model's stop token that the next turn's render
 * starts with. Candidate `X = P + C`, span from `len(P)` to the end of the last special token in `C`. Targets join
 * the current record while its text is a prefix of their `P`.
 *
 * Policy `non-system` (docs/loss-mask-rules.md "Policy non-system"): one record `R(m)` trainable from the end of the leading system
 * messages to the last special token.
 *
 * Grouping `merged` (`options.grouping`, docs/loss-mask-rules.md "Record grouping"): the targets
 * are located by the same exact rules, then placed in one record `T` (see
 * {@link mergedRecord}); a conversation the exact rules keep in one record is
 * returned as is, so the two groupings agree byte for byte wherever the
 * template is prefix-stable on the conversation. Policy `non-system` gives one
 * record either way. A template's `{% generation %}` blocks never decide a span: the
 * first place where they disagree with the derived spans is `generationBlocks`
 * (docs/loss-mask-rules.md "Generation blocks").
 *
 * @throws TemplateRenderError when the template raises on this conversation (the row is then errored with that message)
 */
export function buildRecords(
  conv: Conversation,
  template: ChatTemplate,
  specials: SpecialTokenFinder,
  policy: MaskPolicy,
  options: BuildOptions = {},
): ConversationRecords {
  const pre = prepareTurns(conv.messages, options.reasoning ?? 'keep');
  const adapted = template.adaptTurns(pre.messages);
  const messages = adapted.messages;
  const out: ConversationRecords = { records: [], rendered: null, notes: [], targetErrors: [], targetCount: 0, messages };
  const notes = new Set<Code>([...pre.notes, ...adapted.notes]);
  const finish = (): ConversationRecords => {
    out.notes = [...notes];
    return out;
  };

  const targets =
    policy === 'non-system' ? (messages.some((m) => m.role === 'assistant' && m.trainable !== false) ? [-1] : []) : selectTargets(messages, policy);
  if (targets.length === 0 && pre.placeholderRemoved) {
    out.prompt = pre.messages.map(asWrittenInline); // a prompt is written out as the source wrote it
    return finish();
  }
  const rowError = reasoningWithThinkingOff(policy === 'non-system' ? selectTargets(messages, 'assistant') : targets, adapted, template);
  if (rowError) {
    out.rowError = rowError;
    return finish();
  }

  // R(n, gen) = template.render(messages[:n], gen), each distinct one once, from one traced render where proven (templates/prefixRenderer.ts).
  const prefixes = new PrefixRenderer(template, messages, conv.tools);
  const R = (n: number, gen: boolean): string => prefixes.render(n, gen);
  out.prefixRenders = prefixes.stats;

  if (policy === 'non-system') {
    if (targets.length > 0) nonSystemRecord(messages, R, specials, out);
    return finish();
  }

  out.targetCount = targets.length;
  const scope: TargetScope = {
    conv,
    messages,
    adapted,
    template,
    specials,
    stops: new Set(options.stopTokens ?? []),
    tags: reasoningTags(template.probes.reasoning.wrapper),
    R,
    notes,
  };
  // The conversation through its last target: a template that raises on it errors the row (docs/loss-mask-rules.md "Records that are not written").
  if (targets.length) out.rendered = R(targets[targets.length - 1] + 1, false);
  const located = locateTargets(targets, scope, out);
  out.records = exactRecords(located);
  if (options.grouping === 'merged' && out.records.length > 1) {
    const merged = mergedRecord(located, out.rendered!, R, specials, notes);
    if (merged) out.records = [merged];
    else notes.add('merged_fallback_exact');
  }
  return finish();
}

/**
 * With thinking off (the generation prompt closes an empty reasoning block), the first target with reasoning makes the
 * row an error: the model never writes that reasoning. The message names both ways out (`--reasoning drop`, the
 * template kwargs that turn thinking on). Undefined when thinking is on or no target has reasoning.
 */
function reasoningWithThinkingOff(targets: readonly number[], adapted: AdaptedTurns, template: ChatTemplate): ConversationRecords['rowError'] {
  const gp = template.probes.generationPrompt;
  if (!gp.thinkingOff) return undefined;
  const i = targets.find((t) => adapted.reasoning[t] !== undefined);
  if (i === undefined) return undefined;
  const kw = Object.keys(template.templateKwargs).length ? `template kwargs ${JSON.stringify(template.templateKwargs)}` : "the template's default";
  return {
    code: 'reasoning_with_thinking_off',
    message:
      `assistant turn ${i} has reasoning, but thinking is off: the generation prompt pre-fills ${q(gp.prefill ?? gp.text ?? '')} ` +
      `(an empty, closed reasoning block; ${kw}), so the model answers without reasoning and never writes this reasoning. ` +
      `Pass --reasoning drop to train on the answers without their reasoning, or turn thinking on (the template kwargs that enable it)`,
  };
}

/**
 * Policy `non-system` (docs/loss-mask-rules.md "Policy non-system"): one record `R(m)` trainable from the end of the
 * leading system messages to the last special token, written into `out` (`targetCount`, `records`, `rendered`). A turn
 * whose tool calls the template does not write would be trained as an empty or cut turn: it is a target error instead,
 * and no record is written.
 */
function nonSystemRecord(messages: Message[], R: (n: number, gen: boolean) => string, specials: SpecialTokenFinder, out: ConversationRecords): void {
  out.targetCount = 1;
  const full = R(messages.length, false);
  let k = 0;
  while (k < messages.length && messages[k].role === 'system') k++;
  let start = 0;
  if (k > 0) {
    const sys = R(k, false);
    start = startsWithAt(full, sys) ? sys.length : commonPrefixLength(sys, full);
  }
  for (const i of selectTargets(messages, 'assistant')) {
    if (!messages[i].tool_calls?.length) continue;
    const H = R(i, false);
    const F = R(i + 1, false);
    const C = F.slice(startsWithAt(F, H) ? H.length : commonPrefixLength(H, F));
    const missing = unrenderedToolCalls(messages[i], C);
    if (missing.length)
      out.targetErrors.push({ index: i, reason: 'tool_calls_not_rendered', message: toolCallsNotRenderedMessage(i, messages[i], missing, C) });
  }
  if (out.targetErrors.length) return;
  const eot = specials.lastEnd(full, start, full.length);
  const end = eot >= 0 ? eot : full.length;
  out.records.push({ text: full, spans: end > start ? [[start, end]] : [], targets: selectTargets(messages, 'assistant') });
  out.rendered = full;
}

/** A target that is not trained, with why (see {@link ConversationRecords.targetErrors}). */
type TargetError = ConversationRecords['targetErrors'][number];

/** What every target of one conversation is located with (the exact rules of {@link buildRecords}). */
interface TargetScope {
  conv: Conversation;
  /** The messages as the template is given them (`adapted.messages`). */
  messages: Message[];
  adapted: AdaptedTurns;
  template: ChatTemplate;
  specials: SpecialTokenFinder;
  /** The model's stop tokens. */
  stops: ReadonlySet<string>;
  /** The template's reasoning tags (`templates/probes.ts` `reasoningTags`). */
  tags: { open: string; close: string };
  /** `R(n, gen)`: the render of the first `n` messages, with or without the generation prompt. */
  R: (n: number, gen: boolean) => string;
  /** The conversation's record-level notes, added to in order. */
  notes: Set<Code>;
}

/**
 * The targets located by the exact rules ({@link locateTarget}), in order; those that are not trained go to
 * `out.targetErrors`. With `{% generation %}` blocks, the first place where they disagree with a derived span is
 * `out.generationBlocks` (docs/loss-mask-rules.md "Generation blocks": the blocks are a claim, never the span).
 */
function locateTargets(targets: readonly number[], s: TargetScope, out: ConversationRecords): LocatedTarget[] {
  const located: LocatedTarget[] = [];
  for (const i of targets) {
    const t = locateTarget(i, s);
    if (!('target' in t)) {
      out.targetErrors.push(t);
      continue;
    }
    if (s.template.hasGenerationBlocks && out.generationBlocks === undefined) {
      const { X, span } = t.target;
      const diff = generationBlocksDiff(i, X.slice(span[0], span[1]), t.C, t.found, s.messages, s.conv.tools, s.template);
      if (diff !== null) {
        s.notes.add('generation_blocks_disagree');
        out.generationBlocks = diff;
      }
    }
    located.push(t.target);
  }
  return located;
}

/**
 * One target by the exact rules (docs/loss-mask-rules.md "One target"): its prompt `P` and completion `C`
 * ({@link completionOf}), its reasoning shown ({@link withReasoningShown}), its tool calls written (else
 * `tool_calls_not_rendered`), its end of turn ({@link turnEnding}); candidate `X = P + C`, span from `len(P)` to the end
 * of the turn. Notes `content_not_rendered` and `stop_token_inside_turn` where they apply. `C` and `found` are
 * returned for the `{% generation %}` check.
 */
function locateTarget(i: number, s: TargetScope): { target: LocatedTarget; C: string; found: Located } | TargetError {
  const located = completionOf(i, s);
  if ('reason' in located) return located;
  const { found, P } = located;
  const m = s.messages[i];
  let C = withReasoningShown(i, found.C, s);
  // Tool calls the template does not write: the completion is not what the model writes (an empty turn, or text that stops
  // where the model calls), so the target is errored, never trained (docs/loss-mask-rules.md "What the template dropped").
  const missing = unrenderedToolCalls(m, C);
  if (missing.length) return { index: i, reason: 'tool_calls_not_rendered', message: toolCallsNotRenderedMessage(i, m, missing, C) };
  // The turn's text as the template was given it (inline reasoning kept as written: the text after the block).
  const content = s.adapted.inline[i]?.content ?? m.content ?? '';
  if (!contentShown(content, C) && !contentShown(content, generationPromptOf(i, P, s.R) + C)) s.notes.add('content_not_rendered');
  const ending = turnEnding(i, C, found, s);
  C = ending.C;
  const X = P + C;
  const span: Span = [P.length, P.length + ending.end];
  // The model stops at the first stop token (or its own end-of-turn token) the turn's text spells: what follows is never written.
  const final = s.specials.tokenEndingAt(X, span[1]);
  const quoted = ending.own?.dataTokens.some((t) => P.length + t.end < span[1] && (s.stops.has(t.token) || t.token === final)) ?? false;
  if (quoted || stopTokenInside(X, span, s.specials, s.stops)) s.notes.add('stop_token_inside_turn');
  return { target: { index: i, P, X, span, texts: turnTexts(s.messages[i]) }, C, found };
}

/**
 * Target `i`'s prompt `P = R(m[:i], gen)` and its completion located in the renders ({@link locateCompletion}), or a
 * target error: `prompt_not_renderable` when the template raises on the prompt (an assistant greeting before any user
 * turn: no server prompt leads to it; the turn stays history of later targets), `template_unsupported` when the
 * completion cannot be located.
 * @throws TemplateBudgetError, and any error that is not a TemplateRenderError
 */
function completionOf(i: number, s: TargetScope): { found: Located; P: string } | TargetError {
  const { messages, template } = s;
  let found: Located | { error: string };
  let P: string;
  try {
    // R(m[:i]) followed by a probe user turn, for a template that may write text after every conversation.
    const nextUser = (): string | null => {
      try {
        return template.render([...messages.slice(0, i), { role: 'user', content: NEXT_TURN_PROBE }], s.conv.tools, { addGenerationPrompt: false });
      } catch (e) {
        if (!(e instanceof TemplateRenderError) || e instanceof TemplateBudgetError) throw e;
        return null;
      }
    };
    found = locateCompletion(i, s.R, s.adapted, template, s.tags, s.specials, s.stops, nextUser, s.notes);
    P = s.R(i, true);
  } catch (e) {
    if (!(e instanceof TemplateRenderError) || e instanceof TemplateBudgetError) throw e;
    return {
      index: i,
      reason: 'prompt_not_renderable',
      message:
        `assistant turn ${i}: the chat template raises on the conversation before it with a generation prompt (${e.message}), ` +
        `so no server prompt leads to this turn; it is not trained (it stays in the history of later turns)`,
    };
  }
  if ('error' in found) return { index: i, reason: 'template_unsupported', message: found.error };
  return { found, P };
}

/**
 * Completion `C` of target `i` with its reasoning: reasoning the template drops from its own turn is put back into the
 * empty wrapper it writes there (`reasoning_restored`); reasoning still not shown is noted `reasoning_not_rendered`.
 */
function withReasoningShown(i: number, C: string, s: TargetScope): string {
  const reasoning = s.adapted.reasoning[i];
  if (reasoning === undefined) return C;
  const wrapper = s.template.probes.reasoning.wrapper;
  if (!reasoningShown(C, reasoning, s.template, s.tags) && s.template.probes.reasoning.rendered && wrapper) {
    const restored = restoreIntoWrapper(C, reasoning, wrapper);
    if (restored !== null) {
      C = restored;
      s.notes.add('reasoning_restored');
    }
  }
  if (!reasoningShown(C, reasoning, s.template, s.tags)) s.notes.add('reasoning_not_rendered');
  return C;
}

/**
 * Where target `i`'s turn ends in `C` (an index into `C`): after its end-of-turn token, the last special token the
 * template writes in `C`, found by position (a turn whose text spells a special token is rendered once more without it,
 * dataTokens.ts), moved to the first of the model's stop tokens in the turn's closing run (Apriel-1.5 ends a turn
 * "<|end|>\n</s>"). A turn that ends at the next role marker gets the stop token the next turn's render starts with
 * appended to `C` (`stop_token_from_next_turn`), else ends at the end of `C` (`no_end_of_turn_token`).
 */
function turnEnding(i: number, C: string, found: Located, s: TargetScope): { C: string; end: number; own: TurnEnd | null } {
  const own = templateTurnEnd(i, C, found.from, found.F ?? s.R(i + 1, false), s.messages, s.conv.tools, s.template, s.specials);
  let end = own ? own.end : s.specials.lastEnd(C, 0, C.length);
  if (end >= 0) end = closingStopEnd(C, end, s.specials, s.stops);
  if (end < 0) {
    const next = stopTokenAfter(i, C, found.F ?? s.R(i + 1, false), s.messages, s.template, s.conv.tools, s.specials, s.stops);
    if (next !== null) {
      C += next;
      s.notes.add('stop_token_from_next_turn');
    } else s.notes.add('no_end_of_turn_token');
    end = C.length;
  }
  return { C, end, own };
}

/**
 * Grouping `exact` (docs/loss-mask-rules.md "One conversation, how many records"): located targets in order, each
 * joining the current record while its text is a prefix of the target's prompt `P` (the record's text becomes `X`),
 * else starting a new record.
 */
function exactRecords(located: readonly LocatedTarget[]): TextRecord[] {
  const records: TextRecord[] = [];
  let current: TextRecord | undefined;
  for (const { index, P, X, span } of located) {
    if (current && startsWithAt(P, current.text)) {
      current.text = X;
      current.spans.push(span);
      current.targets.push(index);
    } else {
      current = { text: X, spans: [span], targets: [index] };
      records.push(current);
    }
  }
  return records;
}

/**
 * Whether a turn's text shows in rendered text (docs/loss-mask-rules.md "What the template dropped"):
 * the text trimmed, compared without whitespace (templates trim, strip newlines, re-indent) or JSON-escaped
 * (templates that write the text with `tojson`). A turn without text shows trivially.
 */
export function contentShown(content: string, rendered: string): boolean {
  const t = content.trim();
  if (t === '' || rendered.includes(t)) return true;
  const squeeze = (x: string) => x.replace(/\s+/g, '');
  if (squeeze(rendered).includes(squeeze(t))) return true;
  return rendered.includes(JSON.stringify(t).slice(1, -1));
}

/**
 * The generation prompt `G_i` of target `i`: where `P_i` leaves the history `R(m[:i])` (text a pre-filled
 * opener holds, e.g. `<think>\n` that inline reasoning kept as written starts with). '' when the history cannot be rendered.
 */
function generationPromptOf(i: number, P: string, R: (n: number, gen: boolean) => string): string {
  try {
    return P.slice(commonPrefixLength(P, R(i, false)));
  } catch (e) {
    if (!(e instanceof TemplateRenderError) || e instanceof TemplateBudgetError) throw e;
    return '';
  }
}

/**
 * docs/loss-mask-rules.md "Trainable span": the end of the turn's end-of-turn token. `end` is the end of the last special
 * token the template writes in the turn's text `C`; the closing run is the special tokens and whitespace right before it
 * (`<|end|>\n</s>`). When a stop token of the model stands in that run before its last token, the model stops there and
 * never writes the rest: returns the end of the first such stop token, else `end`.
 */
export function closingStopEnd(C: string, end: number, specials: SpecialTokenFinder, stops: ReadonlySet<string>): number {
  if (stops.size === 0) return end;
  // Walk back over special tokens and whitespace from `end`: the start of the closing run.
  let start = end;
  for (;;) {
    let k = start;
    while (k > 0 && /\s/.test(C[k - 1])) k--;
    const tok = k > 0 ? specials.tokenEndingAt(C, k) : null;
    if (tok === null) break;
    start = k - tok.length;
  }
  for (let t = specials.firstAt(C, start); t && t.end < end; t = specials.firstAt(C, t.end)) if (stops.has(t.token)) return t.end;
  return end;
}

/**
 * Whether the trainable span holds one of the model's stop tokens, or its own end-of-turn token (the span's final
 * special token), followed by text before the span ends: the model stops at that token and never writes the text
 * (special-token text in the source is matched as special tokens, as the server's tokenizer does; docs/loss-mask-rules.md "Text to
 * tokens"). Only special tokens and whitespace after it (`<|end|>\n<|endoftext|>`) are the template's own ending.
 */
export function stopTokenInside(X: string, span: Span, specials: SpecialTokenFinder, stops: ReadonlySet<string>): boolean {
  const [start, end] = span;
  const final = specials.tokenEndingAt(X, end);
  if (final === null) return false;
  let t = specials.firstAt(X, start);
  while (t && t.end < end && t.token !== final && !stops.has(t.token)) t = specials.firstAt(X, t.end);
  if (!t || t.end >= end) return false;
  // Text (not special tokens, not whitespace) between the stop token and the span's end.
  for (let at = t.end; at < end;) {
    const next = specials.firstAt(X, at);
    const gapEnd = next && next.start < end ? next.start : end;
    if (X.slice(at, gapEnd).trim() !== '') return true;
    if (!next || next.start >= end) break;
    at = next.end;
  }
  return false;
}

/**
 * A located completion: `C_i`, and where the template writes turn `i` from in `F_i` (`F_i.slice(from)` is `C_i` unless
 * reasoning was restored); `F` when the turn is not at the end of `F_i` (a template that writes text after every
 * conversation): `F_i` without that text.
 */
/**
 * The texts of a turn as the template is given them (its reasoning and its content, trimmed, the non-empty ones):
 * what {@link ownTextStart} looks for.
 */
function turnTexts(m: Message): string[] {
  return [m.reasoning_content, typeof m.content === 'string' ? m.content : undefined].flatMap((t) => (t && t.trim() ? [t.trim()] : []));
}

/**
 * Where the template leaves the prompt never lies inside the turn's own text (docs/loss-mask-rules.md case 2b, and
 * "Record grouping"): the common prefix of the prompt `P` and the render `F` can run on into the turn's text by
 * coincidence (Apriel's pre-fill `Here are my reasoning steps:\n` and an answer `Hello!` share `He`). When none of
 * `texts` (the turn's texts, {@link turnTexts}) starts at `at` in `F`, returns the last position in `[from, at)` where
 * one of them starts and runs past `at`; else `at`. (A text that starts at `at` ends the search: a text that repeats
 * the end of the header, `assistant\n…`, is not taken for a coincidence, so no header text becomes trainable.)
 */
export function ownTextStart(F: string, from: number, at: number, texts: readonly string[]): number {
  if (texts.some((t) => startsWithAt(F, t, at))) return at;
  for (let k = at - 1; k >= from; k--) if (texts.some((t) => k + t.length > at && startsWithAt(F, t, k))) return k;
  return at;
}

interface Located {
  C: string;
  from: number;
  F?: string;
}

/**
 * docs/loss-mask-rules.md "Text after the last turn": some templates write the same text
 * after the last message whether or not a generation prompt is asked for (Command-R7B's tool-use template writes its
 * generation prompt always; Command-R+'s writes a system instruction after the conversation). That tail is the text
 * both renders `H = R(m[:i])` and `F = R(m[:i+1])` end with, after what their last messages share (text, then the stop
 * token that ends them, if any), when it is more than whitespace, `F` is `H` with turn `i` written in front of it (`H`
 * before the tail is a prefix of `F`), and the template writes it after the conversation only: `R(m[:i])` followed by a
 * probe user turn (`nextUser`) ends with it but does not have it between the history and that turn (a turn's own ending,
 * such as `<end_of_turn>\n`, is there). Turn `i` as the template writes it is then `F` between the history and
 * the tail, `T`; its header is the longest start of `T` (cut back to a token edge) that the server's prompt `P` writes after
 * the history (the tail and the generation prompt: from wherever in them it matches best, the latest on ties); the
 * completion is the rest of `T`. Needs the model's stop tokens.
 * @returns null when the template writes no such tail (the usual cases apply)
 */
function trailingTextCase(
  P: string,
  H: string,
  F: string,
  specials: SpecialTokenFinder,
  stops: ReadonlySet<string>,
  nextUser: () => string | null,
): Located | null {
  let s = 0;
  const max = Math.min(H.length, F.length);
  while (s < max && H.charCodeAt(H.length - 1 - s) === F.charCodeAt(F.length - 1 - s)) s++;
  const shared = H.slice(H.length - s);
  // What the last messages share at their ends (text both end with, then a stop token) is theirs; the rest is the tail.
  const first = specials.firstAt(shared, 0);
  if (!first || first.end === first.start) return null;
  const tail = shared.slice(stops.has(first.token) ? first.end : first.start);
  if (tail.trim() === '') return null;
  const p = H.length - tail.length;
  if (commonPrefixLength(H, F) < p || commonPrefixLength(P, H) < p) return null;
  const U = nextUser();
  if (U === null || !endsWithFast(U, tail) || commonPrefixLength(U, H) < p || U.startsWith(tail, p)) return null;
  const body = F.slice(0, F.length - tail.length);
  const T = body.slice(p);
  const served = P.slice(p);
  let header = 0;
  for (let j = 0; j < served.length; j++) {
    if (served.charCodeAt(j) !== T.charCodeAt(0)) continue;
    const k = commonPrefixLength(served.slice(j), T);
    if (k >= header) header = k;
  }
  header = tokenBoundary(T, header, specials);
  return { C: T.slice(header), from: p + header, F: body };
}

/**
 * The completion `C_i` of target `i` by the cases of docs/loss-mask-rules.md "One target" (1, 2, 2b with its reasoning
 * restoration, 3), adding the case's notes; `{error}` when it cannot be located (`template_unsupported`).
 */
function locateCompletion(
  i: number,
  R: (n: number, gen: boolean) => string,
  adapted: AdaptedTurns,
  template: ChatTemplate,
  tags: { open: string; close: string },
  specials: SpecialTokenFinder,
  stops: ReadonlySet<string>,
  nextUser: () => string | null,
  notes: Set<string>,
): Located | { error: string } {
  const P = R(i, true);
  const F = R(i + 1, false);
  const H = R(i, false);
  // A template that writes text after every conversation (Command-R+'s tool instruction, Command-R7B's generation prompt).
  const tail = trailingTextCase(P, H, F, specials, stops, nextUser);
  if (tail) {
    notes.add('text_after_last_turn');
    return tail;
  }
  // Case 1, the common case.
  if (startsWithAt(F, P)) return { C: F.slice(P.length), from: P.length };
  const G = startsWithAt(P, H) ? P.slice(H.length) : P.slice(commonPrefixLength(P, H));
  const L = commonPrefixLength(H, F);
  const rest = F.slice(H.length);
  // Case 2: the history is intact and the template writes no header for this turn.
  if (L === H.length && (G.length === 0 || !rest.startsWith(G[0]))) {
    notes.add('generation_prompt_mismatch');
    return { C: rest, from: H.length };
  }
  // Case 2b: the generation prompt pre-fills text that the template does not write into a finished turn.
  const M = ownTextStart(F, H.length, tokenBoundary(P, commonPrefixLength(P, F), specials), turnTexts(adapted.messages[i]));
  const prefill = P.slice(M);
  if (L === H.length && M > H.length && F.indexOf(prefill, M) < 0) {
    notes.add('prefill_not_rendered');
    let C = F.slice(M);
    if (endsWithReasoningOpener(prefill, tags)) {
      const reasoning = adapted.reasoning[i];
      const inline = adapted.inline[i];
      if (reasoning === undefined) notes.add('reasoning_missing_after_prefill');
      else if (!reasoningShown(C, reasoning, template, tags)) {
        const fromInline = inline ? restoreInline(C, inline.written, prefill, tags.open) : null;
        const wrapper = template.probes.reasoning.wrapper;
        const close = wrapper ? wrapper.close : DEFAULT_REASONING_CLOSE;
        C = fromInline ?? trimNewlines(reasoning) + close + C;
        notes.add('reasoning_restored');
      }
    }
    return { C, from: M };
  }
  // Case 3: the template rewrote the history; the completion follows the last G at or after L.
  const at = G.length ? F.lastIndexOf(G) : -1;
  if (at < 0 || at < L) {
    return {
      error: `assistant turn ${i}: its completion cannot be located in the render (generation prompt ${q(G)} not found after the unchanged history)`,
    };
  }
  notes.add('template_rewrites_history');
  return { C: F.slice(at + G.length), from: at + G.length };
}

/**
 * The one record of grouping `merged` (docs/loss-mask-rules.md "Record grouping: exact or merged"), from the targets
 * the exact rules located. The text is `T` (extended to the last target's `X` when `X` continues
 * `T`: a stop token the exact rules append to a turn that ends at the next role marker). Target
 * `i` is trained from where `T` stops agreeing with `P_i` through its end-of-turn token:
 * - when `T` there holds the exact trained text, that text (same span as `exact`);
 * - otherwise the history form of the turn: up to the first occurrence of the exact span's final
 *   special token (the model stops on it, so the turn holds no earlier one), accepted only when
 *   that text is a suffix of the exact trained text (the history drops a leading part such as an
 *   empty or earlier think block); noted `merged_history_form`.
 * Returns null (the caller keeps the exact records, noted `merged_fallback_exact`) when a target
 * cannot be placed that way, or when `T` disagrees with a target's history (Kimi-K2-Thinking drops
 * earlier reasoning once a final answer follows): then where the turn starts in `T` is not known
 * and nothing of another message may be trained.
 */
function mergedRecord(
  located: readonly LocatedTarget[],
  T: string,
  R: (n: number, gen: boolean) => string,
  specials: SpecialTokenFinder,
  notes: Set<string>,
): TextRecord | null {
  if (located.length === 0) return null;
  const last = located[located.length - 1];
  const text = last.X.length > T.length && startsWithAt(last.X, T) ? last.X : T;
  const spans: Span[] = [];
  let historyForm = false;
  for (const t of located) {
    const history = commonPrefixLength(t.P, R(t.index, false));
    const agree = commonPrefixLength(text, t.P);
    // T must hold the whole history of P_i; only the header and a pre-filled generation prompt may differ.
    if (agree < t.P.length && agree < history) return null;
    // Where T leaves P_i, never inside the turn's own text (a pre-fill that shares its first letters with the answer).
    const start = agree < t.P.length ? ownTextStart(text, history, agree, t.texts) : agree;
    const trained = t.X.slice(t.span[0], t.span[1]);
    let end: number;
    if (startsWithAt(text, trained, start)) end = start + trained.length;
    else {
      const eot = specials.tokenEndingAt(t.X, t.span[1]);
      const at = eot ? text.indexOf(eot, start) : -1;
      if (at < 0 || !endsWithFast(trained, text.slice(start, at + eot!.length))) return null;
      end = at + eot!.length;
      historyForm = true;
    }
    if (spans.length && start < spans[spans.length - 1][1]) return null;
    if (end > start) spans.push([start, end]);
  }
  if (historyForm) notes.add('merged_history_form');
  return { text, spans, targets: located.map((t) => t.index) };
}

/** Characters of a difference quoted in a message. */
const DIFF_CHARS = 60;

/** Text quoted in a message, cut to {@link DIFF_CHARS} characters. */
const cut = (s: string) => (s.length > DIFF_CHARS ? `${s.slice(0, DIFF_CHARS)}…` : s);

/**
 * docs/loss-mask-rules.md "Generation blocks": compares target `i`'s trained text as the rules derive it (`trained`,
 * the start of its completion `C`) with the template's `{% generation %}` blocks of that turn: the blocks of
 * `F_i = R(m[:i+1])` after those of `R(m[:i])`. Positions are compared in `F_i`, where the completion starts at
 * `located.from`; when reasoning was restored (`C` is not `F_i`'s text) the two texts are compared.
 * Two renders with the blocks' positions; called until the first difference of a conversation.
 * @returns the first difference as one sentence, or null when the blocks hold exactly the trained text
 * @throws TemplateRenderError as {@link ChatTemplate.render} (the renders are the rules' own, so they do not raise here)
 */
function generationBlocksDiff(
  i: number,
  trained: string,
  C: string,
  located: Located,
  messages: readonly Message[],
  tools: unknown[] | undefined,
  template: ChatTemplate,
): string | null {
  const F = template.renderWithGenerationSpans(messages.slice(0, i + 1), tools, { addGenerationPrompt: false });
  const before = template.renderWithGenerationSpans(messages.slice(0, i), tools, { addGenerationPrompt: false }).spans;
  // The conversation's own text holds a marker character: the blocks cannot be located, so there is no claim to check.
  if (F.spans === null || before === null) return null;
  const blocks = F.spans.slice(before.length);
  const blockText = blocks.map(([a, b]) => F.text.slice(a, b)).join('');
  if (blockText === trained) return null;
  const turn = `assistant turn ${i}`;
  // The turn's own text in F_i: up to the text the template writes after every conversation, when it does (located.F ends before it).
  const own = F.text.slice(located.from, located.F !== undefined ? located.F.length : F.text.length);
  if (!startsWithAt(C, own))
    return `${turn}: the rules train ${q(cut(trained))} (its reasoning put back where the model writes it); its generation blocks hold ${q(cut(blockText))}`;
  const start = located.from;
  const inF = Math.min(trained.length, F.text.length - start);
  const end = start + inF;
  const lo = Math.min(start, blocks.length ? blocks[0][0] : start);
  const hi = Math.max(end, blocks.length ? blocks[blocks.length - 1][1] : end);
  const inBlock = (p: number) => blocks.some(([a, b]) => p >= a && p < b);
  const inRule = (p: number) => p >= start && p < end;
  for (let p = lo; p < hi; p++) {
    const b = inBlock(p);
    if (b === inRule(p)) continue;
    let e = p;
    while (e < hi && inBlock(e) === b && inRule(e) !== b) e++;
    const text = F.text.slice(p, e);
    if (!b) return `${turn}: the rules train ${q(cut(text))}, which its generation blocks leave out`;
    const where =
      p < start
        ? "part of the prompt the server sends (the turn's header or what the generation prompt pre-fills)"
        : "text the template writes after the turn's end-of-turn token";
    return `${turn}: its generation blocks train ${q(cut(text))}, ${where}, which the rules leave untrained`;
  }
  if (trained.length > inF)
    return `${turn}: the rules also train ${q(trained.slice(inF))}, the stop token the next turn's role marker ends it with; its generation blocks end before it`;
  return null;
}

/**
 * Per-token loss mask: token `k` is trainable (1) when its first character
 * lies inside a trainable span (docs/loss-mask-rules.md "Text to tokens").
 * @param starts UTF-16 start index of each token
 * @param spans ascending, disjoint spans
 * @returns array of 0/1, same length as `starts`
 */
export function maskFromSpans(starts: readonly number[], spans: readonly Span[]): number[] {
  const mask = new Array<number>(starts.length).fill(0);
  let s = 0;
  for (let k = 0; k < starts.length; k++) {
    const p = starts[k];
    while (s < spans.length && spans[s][1] <= p) s++;
    if (s < spans.length && p >= spans[s][0]) mask[k] = 1;
  }
  return mask;
}
