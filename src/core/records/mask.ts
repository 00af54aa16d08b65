/**
 * Trainable spans from the target model's own chat template, rendered prefix by
 * prefix — the rules of `docs/loss-mask-rules.md` (v1.5). No per-model regexes:
 * everything is derived from renders of message prefixes and from the template's
 * probe decisions (templates/probes.ts). The rules of one target are in targetRules.ts
 * (its completion: completion.ts), grouping `merged` in mergedRecord.ts, the vocabulary in maskTypes.ts.
 */
import type { Code } from '../codes';
import { PrefixRenderer } from '../templates/prefixRenderer';
import { ChatTemplate, type AdaptedTurns } from '../templates/template';
import { reasoningTags } from '../templates/probes';
import type { Conversation, MaskPolicy, Message } from '../types';
import { asWrittenInline } from '../formats/content';
import type { BuildOptions, ConversationRecords, Span } from './maskTypes';
import { mergedRecord } from './mergedRecord';
import { commonPrefixLength, SpecialTokenFinder, startsWithAt } from './specialTokens';
import { firstAtLeast } from '../sortedSearch';
import { exactRecords, locateTargets, toolCallsNotRenderedMessage, unrenderedToolCalls, type TargetScope } from './targetRules';
import { policyTargets, selectTargets, turnsBeforeTemplate } from './turns';

/** A string as JSON, for messages. */
const q = (s: string) => JSON.stringify(s);

/**
 * Builds the records of one conversation (docs/loss-mask-rules.md).
 *
 * Before rendering ({@link turnsBeforeTemplate}, then {@link ChatTemplate.adaptTurns}): `--reasoning drop`, trailing
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
  const pre = turnsBeforeTemplate(conv.messages, policy, options.reasoning ?? 'keep');
  const adapted = template.adaptTurns(pre.messages);
  const messages = adapted.messages;
  const out: ConversationRecords = { records: [], rendered: null, notes: [], targetErrors: [], targetCount: 0, messages };
  const notes = new Set<Code>([...pre.notes, ...adapted.notes]);
  const finish = (): ConversationRecords => {
    out.notes = [...notes];
    return out;
  };

  if (pre.needsGeneration) {
    out.prompt = pre.messages.map(asWrittenInline); // a prompt is written out as the source wrote it
    return finish();
  }
  const targets = policyTargets(messages, policy);
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

/**
 * Per-token loss mask: token `k` is trainable (1) when its first character
 * lies inside a trainable span (docs/loss-mask-rules.md "Text to tokens").
 * @param starts UTF-16 start index of each token
 * @param spans ascending, disjoint spans
 * @returns array of 0/1, same length as `starts`
 */
export function maskFromSpans(starts: readonly number[], spans: readonly Span[]): number[] {
  // Ascending starts (every encoder's, tokens in text order) and ascending, disjoint spans: each span's tokens are one
  // run of them, found by binary search, and the mask is a copy of `starts` filled with 0 and those runs with 1 — no
  // JavaScript per token (the run's encode gives 10k+ tokens a record, and a per-token callback runs cold in a
  // one-pass process). The copy is packed when `starts` is (the encoders' are), so is the mask: a holey array takes
  // the engine's slow paths for good (JSON.stringify of the record line ~3×, every later pass over the mask).
  if (ascendingStarts(starts) && ascendingSpans(spans)) {
    const mask = starts.slice().fill(0);
    let from = 0;
    for (const [a, b] of spans) {
      const i = firstAtLeast(starts, a, from);
      const j = firstAtLeast(starts, b, i);
      if (j > i) mask.fill(1, i, j);
      from = j;
    }
    return mask;
  }
  return maskByToken(starts, spans);
}

/** {@link maskFromSpans} token by token, as it was made before the runs (any `starts`, `spans`): packed, its final length. */
function maskByToken(starts: readonly number[], spans: readonly Span[]): number[] {
  // Built by `map`, not `new Array(n).fill(0)`: that array is holey for V8 for good, and every later pass over the mask
  // (the record's JSON line, token counts, trainer cuts) takes the engine's slow path for holey arrays (JSON.stringify ~3×).
  // `map` makes a packed array of the final length in one allocation (a `push` loop regrows it: 7 MB more on 20 agent
  // runs of 80 messages), packed even when `starts` is holey.
  let s = 0;
  return starts.map((p) => {
    while (s < spans.length && spans[s][1] <= p) s++;
    return s < spans.length && p >= spans[s][0] ? 1 : 0;
  });
}

/** Whether `starts` never decreases. */
function ascendingStarts(starts: readonly number[]): boolean {
  for (let k = 1; k < starts.length; k++) if (!(starts[k] >= starts[k - 1])) return false;
  return true;
}

/** Whether each span is `[a, b)` with a ≤ b and starts at or after the end of the one before. */
function ascendingSpans(spans: readonly Span[]): boolean {
  let end = -Infinity;
  for (const [a, b] of spans) {
    if (!(a >= end && b >= a)) return false;
    end = b;
  }
  return true;
}
