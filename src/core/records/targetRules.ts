/**
 * One target by the exact rules (docs/loss-mask-rules.md "One target"): its prompt and completion, its reasoning shown,
 * its tool calls written, its end of turn and trainable span; and grouping `exact`'s records from the located targets.
 */
import type { Code } from '../codes';
import { ChatTemplate, type AdaptedTurns } from '../templates/template';
import { TemplateBudgetError, TemplateRenderError } from '../templates/errors';
import type { Conversation, Message, ToolCall } from '../types';
import { locateCompletion, turnTexts, type Located } from './completion';
import { templateTurnEnd, type TurnEnd } from './dataTokens';
import { generationBlocksDiff } from './generationBlocks';
import type { ConversationRecords, LocatedTarget, Span, TargetError, TextRecord } from './maskTypes';
import { commonPrefixLength, SpecialTokenFinder, startsWithAt } from './specialTokens';
import { NEXT_TURN_PROBE, restoreIntoWrapper, reasoningShown, stopTokenAfter } from './turns';

/** A string as JSON, for messages. */
const q = (s: string) => JSON.stringify(s);

/**
 * The tool calls of an assistant turn that rendered text does not show: neither the call's function name nor its id
 * occurs in `rendered` (docs/loss-mask-rules.md "What the template dropped"). Empty for a turn without tool calls.
 */
export function unrenderedToolCalls(m: Message, rendered: string): ToolCall[] {
  return (m.tool_calls ?? []).filter((tc) => !rendered.includes(tc.function.name) && !(tc.id && rendered.includes(tc.id)));
}

/** The message of a `tool_calls_not_rendered` target error: which calls, what the template wrote instead, what to do. */
export function toolCallsNotRenderedMessage(i: number, m: Message, missing: readonly ToolCall[], C: string): string {
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

/** What every target of one conversation is located with (the exact rules of {@link buildRecords}). */
export interface TargetScope {
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
export function locateTargets(targets: readonly number[], s: TargetScope, out: ConversationRecords): LocatedTarget[] {
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
  const X = joinedRender(P, C, found.F ?? s.R(i + 1, false));
  const span: Span = [P.length, P.length + ending.end];
  // The model stops at the first stop token (or its own end-of-turn token) the turn's text spells: what follows is never written.
  const final = s.specials.tokenEndingAt(X, span[1]);
  const quoted = ending.own?.dataTokens.some((t) => P.length + t.end < span[1] && (s.stops.has(t.token) || t.token === final)) ?? false;
  if (quoted || stopTokenInside(X, span, s.specials, s.stops)) s.notes.add('stop_token_inside_turn');
  return { target: { index: i, P, X, span, texts: turnTexts(s.messages[i]) }, C, found };
}

/**
 * `P + C`, as a slice of `F` when `F` starts with it (the common case: `F_i = P_i + C_i` and more): the same string,
 * without building a concatenation that every later character read copies whole (the engine flattens it) — once per
 * target, over renders as long as the conversation's history.
 */
export function joinedRender(P: string, C: string, F: string): string {
  const n = P.length + C.length;
  if (n <= F.length && startsWithAt(F, P) && startsWithAt(F, C, P.length)) return n === F.length ? F : F.slice(0, n);
  return P + C;
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
export function exactRecords(located: readonly LocatedTarget[]): TextRecord[] {
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
