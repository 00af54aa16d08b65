/**
 * The turn-level rules of `docs/loss-mask-rules.md` that {@link buildRecords} applies around the three
 * cases of "One target": targets and empty turns, `--reasoning drop`, reasoning restored where the model writes
 * it (case 2b and "Reasoning the template drops from its own turn"), and the stop token of a turn that ends at
 * the next role marker.
 */
import type { Code } from '../codes';
import { splitInlineThink } from '../formats/content';
import type { ChatTemplate } from '../templates/template';
import { reasoningTags, type ReasoningWrapper } from '../templates/probes';
import type { MaskPolicy, Message, ReasoningPolicy } from '../types';
import { startsWithAt, type SpecialTokenFinder } from './specialTokens';

/** Whether a turn has text: content that is not `null`, `""` or only whitespace (docs/loss-mask-rules.md "No text"). */
function hasText(m: Message): boolean {
  return (m.content ?? '').trim() !== '';
}

/** Whether an assistant turn is empty: no text, no reasoning, no tool calls (docs/loss-mask-rules.md "Empty turns"). */
export function isEmptyAssistantTurn(m: Message): boolean {
  return m.role === 'assistant' && !hasText(m) && (m.reasoning_content ?? '').trim() === '' && (m.tool_calls?.length ?? 0) === 0;
}

/** Whether assistant turn `m` is a target under the `assistant` policy: it has text, reasoning or tool calls, and the source did not flag it (docs/loss-mask-rules.md "Targets", "Context turns"). */
function isTargetTurn(m: Message): boolean {
  return m.role === 'assistant' && m.trainable !== false && !isEmptyAssistantTurn(m);
}

/**
 * Indices of the target turns under a policy (docs/loss-mask-rules.md "Targets").
 * `last-assistant`: only the final assistant turn, none when the source flags it not trainable.
 */
export function selectTargets(messages: readonly Message[], policy: MaskPolicy): number[] {
  if (policy === 'last-assistant') {
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i].role === 'assistant') return isTargetTurn(messages[i]) ? [i] : [];
    }
    return [];
  }
  const out: number[] = [];
  messages.forEach((m, i) => {
    if (isTargetTurn(m)) out.push(i);
  });
  return out;
}

/**
 * The conversation as the rules see it before the template adapter (docs/loss-mask-rules.md "Empty turns", `prepare --reasoning`):
 * with `drop`, every turn's reasoning removed (`reasoning_content`, and a reasoning block written inline at the
 * start of an assistant's content); trailing empty assistant turns (generation placeholders) removed.
 */
export function prepareTurns(
  messages: readonly Message[],
  reasoning: ReasoningPolicy = 'keep',
): { messages: Message[]; notes: Code[]; placeholderRemoved: boolean } {
  const notes: Code[] = [];
  let out = messages.slice();
  if (reasoning === 'drop') {
    let dropped = false;
    out = out.map((m) => {
      if (m.role !== 'assistant') return m;
      let o = m;
      if (o.reasoning_content !== undefined) {
        if (o.reasoning_content.trim() !== '') dropped = true;
        const { reasoning_content: _r, ...rest } = o;
        o = rest;
      }
      const split = typeof o.content === 'string' ? splitInlineThink(o.content) : null;
      if (split) {
        if (split.reasoning.trim() !== '') dropped = true;
        o = { ...o, content: split.content };
      }
      return o;
    });
    if (dropped) notes.push('reasoning_dropped');
  }
  let placeholderRemoved = false;
  while (out.length > 0 && isEmptyAssistantTurn(out[out.length - 1])) {
    out.pop();
    placeholderRemoved = true;
  }
  if (placeholderRemoved) notes.push('generation_placeholder_removed');
  return { messages: out, notes, placeholderRemoved };
}

/**
 * The targets {@link buildRecords} renders records for under a policy (docs/loss-mask-rules.md "Targets"):
 * {@link selectTargets}, and for `non-system` `[-1]` (one record of the whole conversation) when an assistant turn
 * is not flagged untrainable, else none.
 */
export function policyTargets(messages: readonly Message[], policy: MaskPolicy): number[] {
  if (policy === 'non-system') return messages.some((m) => m.role === 'assistant' && m.trainable !== false) ? [-1] : [];
  return selectTargets(messages, policy);
}

/** A conversation's turns before the template ({@link prepareTurns}) and whether it is a prompt to generate ({@link turnsBeforeTemplate}). */
export interface TurnsBeforeTemplate {
  /** The turns the template is given (reasoning dropped with `drop`, trailing empty assistant turns removed). */
  messages: Message[];
  /** `reasoning_dropped`, `generation_placeholder_removed` when they apply. */
  notes: Code[];
  placeholderRemoved: boolean;
  /** Trailing empty assistant turns were removed and no target is left under the policy: the conversation is a prompt to generate. */
  needsGeneration: boolean;
}

/**
 * The one decision of whether a conversation that came with an assistant turn is a prompt to generate
 * (docs/loss-mask-rules.md "Empty turns"): its trailing empty assistant turns (generation placeholders) are removed
 * and no target is left under the mask policy ({@link policyTargets}); its other assistant turns are then context
 * (a preference prompt's). It needs no template: the template adapter (templates/template.ts `adaptTurns`) changes
 * no turn's role, flag or emptiness, so the targets of the adapted turns are these turns' own. `prepare`
 * ({@link buildRecords}) and the row path's reading stage (records/rowTrace.ts, which `inspect` reads) both call it.
 * @param policy the mask policy (`--mask`; prepare's default `assistant`)
 * @param reasoning `--reasoning` (prepare's default `keep`): with `drop`, a turn with only reasoning becomes empty
 */
export function turnsBeforeTemplate(messages: readonly Message[], policy: MaskPolicy, reasoning: ReasoningPolicy): TurnsBeforeTemplate {
  const pre = prepareTurns(messages, reasoning);
  return { ...pre, needsGeneration: pre.placeholderRemoved && policyTargets(pre.messages, policy).length === 0 };
}

/** Newlines trimmed at both ends (docs/loss-mask-rules.md "Reasoning written into the text"). */
export const trimNewlines = (s: string) => s.replace(/^\n+/, '').replace(/\n+$/, '');

/**
 * Whether a completion shows a turn's reasoning: the reasoning text followed, somewhere after it, by the
 * reasoning closing tag (an answer that merely quotes the reasoning does not count). A template that renders
 * reasoning without tags around it is checked by the text alone.
 */
export function reasoningShown(C: string, reasoning: string, template: ChatTemplate, tags: { open: string; close: string }): boolean {
  const r = reasoning.trim();
  if (template.probes.reasoning.rendered && !template.probes.reasoning.wrapper) return C.includes(r);
  for (let at = C.indexOf(r); at >= 0; at = C.indexOf(r, at + 1)) if (C.indexOf(tags.close, at + r.length) >= 0) return true;
  return false;
}

/**
 * Puts reasoning into the empty wrapper the template wrote in a completion (docs/loss-mask-rules.md "Reasoning the template drops
 * from its own turn"): the first `open-tag whitespace close-tag` (and the whitespace the wrapper writes after its
 * closing tag, when present) becomes the wrapper as the template writes it around reasoning.
 * @returns the completion with the reasoning, or null when it has no empty wrapper
 */
export function restoreIntoWrapper(C: string, reasoning: string, wrapper: ReasoningWrapper): string | null {
  const tags = reasoningTags(wrapper);
  const esc = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`${esc(tags.open)}[ \\t\\n]*${esc(tags.close)}`).exec(C);
  if (!m) return null;
  let end = m.index + m[0].length;
  const trail = wrapper.close.slice(wrapper.close.lastIndexOf(tags.close) + tags.close.length);
  if (trail && C.startsWith(trail, end)) end += trail.length;
  const body = wrapper.trimsNewlines ? trimNewlines(reasoning) : reasoning;
  return C.slice(0, m.index) + wrapper.open + body + wrapper.close + C.slice(end);
}

/**
 * Case 2b with reasoning written inline in the content and kept as written (a template that does not render
 * `reasoning_content`, and drops the block from the content, as QwQ and DeepSeek-R1-Distill do): the model's text
 * is the content as written from where the pre-filled opener leaves off, followed by the rest of the template's
 * completion. Found by the longest tail of the written content (after its `</think>`) that the completion starts with.
 * @returns null when the completion does not continue the written content
 */
export function restoreInline(C: string, written: string, prefill: string, openTag: string): string | null {
  const close = written.lastIndexOf('</think>');
  if (close < 0) return null;
  const from = close + '</think>'.length;
  const answer = written.slice(from);
  for (let k = from; k <= written.length; k++) {
    const tail = written.slice(k).trimEnd();
    if (tail === '' && answer.trim() !== '') break;
    if (!C.startsWith(tail)) continue;
    let head = written.slice(0, k);
    if (head.startsWith(prefill)) head = head.slice(prefill.length);
    else head = head.replace(new RegExp(`^\\s*${openTag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n*`), '');
    return head + C;
  }
  return null;
}

/** Text of the probe turn rendered after a turn, to see which token the next turn starts with. */
export const NEXT_TURN_PROBE = 'eagle3 next-turn probe';

/**
 * Spec "A turn that ends at the next role marker": renders `m[:i+1]` followed by a probe user turn (a probe tool
 * turn when turn `i` has tool calls) and returns the text from the end of `C` through the first special token
 * after it — only whitespace before it — when that token is one of the model's stop tokens; else null.
 */
export function stopTokenAfter(
  i: number,
  C: string,
  F: string,
  messages: readonly Message[],
  template: ChatTemplate,
  tools: unknown[] | undefined,
  specials: SpecialTokenFinder,
  stops: ReadonlySet<string>,
): string | null {
  if (stops.size === 0) return null;
  const m = messages[i];
  const call = m.tool_calls?.[0];
  const probe: Message = call
    ? { role: 'tool', content: NEXT_TURN_PROBE, ...(call.id ? { tool_call_id: call.id } : {}), name: call.function.name }
    : { role: 'user', content: NEXT_TURN_PROBE };
  let T: string;
  try {
    T = template.render([...messages.slice(0, i + 1), probe], tools, { addGenerationPrompt: false });
  } catch {
    return null;
  }
  let end: number;
  if (startsWithAt(T, F)) end = F.length;
  else {
    // The template renders turn i differently once a turn follows (GLM-4.x drops reasoning before the last user
    // turn): the turn ends after the longest tail of C that occurs before the probe turn.
    // A tail that occurs has all its shorter tails occur too: binary search for the longest.
    const probeAt = T.lastIndexOf(NEXT_TURN_PROBE);
    const find = (k: number) => (k > probeAt ? -1 : T.lastIndexOf(C.slice(-k), probeAt - k));
    let lo = 0;
    let hi = C.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (find(mid) >= 0) lo = mid;
      else hi = mid - 1;
    }
    if (lo === 0) return null;
    end = find(lo) + lo;
  }
  const next = specials.firstAt(T, end);
  if (!next || T.slice(end, next.start).trim() !== '' || !stops.has(next.token)) return null;
  return T.slice(end, next.end);
}
