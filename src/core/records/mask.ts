/**
 * Trainable spans from the target model's own chat template, rendered prefix by
 * prefix — the rules of `docs/loss-mask-rules.md`. No per-model regexes:
 * everything is derived from renders of message prefixes.
 */
import { PrefixRenderer, type PrefixRenderStats } from '../templates/prefixRenderer';
import { ChatTemplate, TemplateRenderError } from '../templates/template';
import type { Conversation, MaskPolicy, Message } from '../types';

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
  /** Record-level notes (codes of docs/loss-mask-rules.md): `generation_prompt_mismatch`, `template_rewrites_history`, `reasoning_not_rendered`, `tool_calls_not_rendered`. */
  notes: string[];
  /** Targets that could not be located (`template_unsupported`), with the message index and why. */
  targetErrors: { index: number; reason: 'template_unsupported'; message: string }[];
  /** Number of targets the policy selected (0 = nothing to train on). */
  targetCount: number;
  /** How the prefix renders were obtained: from the conversation's one traced render (proven) or rendered for real (templates/prefixRenderer.ts). */
  prefixRenders?: PrefixRenderStats;
}

/** A located target of the exact rules: its prompt `P_i`, its candidate text `X_i = P_i + C_i` and its trainable span in `X_i`. */
interface LocatedTarget {
  index: number;
  P: string;
  X: string;
  span: Span;
}

/**
 * Finds the end of the last special token (an added token marked special,
 * e.g. `<|im_end|>`) inside a range of a text. docs/loss-mask-rules.md "Trainable span".
 */
export class SpecialTokenFinder {
  private readonly re: RegExp | null;
  private readonly maxLength: number;

  /** @param specialTokens contents of the special added tokens */
  constructor(specialTokens: readonly string[]) {
    const uniq = [...new Set(specialTokens.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
    this.re = uniq.length ? new RegExp(uniq.map(escapeRegExp).join('|'), 'g') : null;
    this.maxLength = uniq.length ? uniq[0].length : 0;
  }

  /** The special token that ends exactly at `end` in `text` (the longest when several do), or null. */
  tokenEndingAt(text: string, end: number): string | null {
    if (!this.re) return null;
    const re = this.re;
    re.lastIndex = Math.max(0, end - this.maxLength);
    let best: string | null = null;
    for (let m = re.exec(text); m && m.index < end; m = re.exec(text)) {
      if (m.index + m[0].length === end && (best === null || m[0].length > best.length)) best = m[0];
      re.lastIndex = m.index + 1;
    }
    return best;
  }

  /** End index (exclusive) of the last special token lying within `text[from, to)`, or -1 when there is none. */
  lastEnd(text: string, from: number, to: number): number {
    if (!this.re) return -1;
    const re = this.re;
    re.lastIndex = from;
    let end = -1;
    for (let m = re.exec(text); m && m.index + m[0].length <= to; m = re.exec(text)) {
      end = m.index + m[0].length;
      if (m[0].length === 0) re.lastIndex++;
    }
    return end;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Length of the longest common prefix of `a` and `b`, in UTF-16 code units. */
export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** Whether assistant turn `m` is a target under the `assistant` policy: it has content, reasoning or tool calls, and the source did not flag it. */
function isTargetTurn(m: Message): boolean {
  if (m.role !== 'assistant' || m.trainable === false) return false;
  return (m.content ?? '').length > 0 || (m.reasoning_content ?? '').length > 0 || (m.tool_calls?.length ?? 0) > 0;
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
 * Builds the records of one conversation.
 *
 * Policy `assistant` / `last-assistant` (docs/loss-mask-rules.md "One target" and "One
 * conversation, how many records"): for target `i`, `P = R(m[:i], gen)`,
 * `H = R(m[:i])`, `F = R(m[:i+1])`, completion `C` found by the three cases of
 * the rules, candidate `X = P + C`, span from `len(P)` to the end of the last
 * special token in `C`. Targets join the current record while its text is a
 * prefix of their `P`.
 *
 * Policy `non-system` (docs/loss-mask-rules.md "Policy non-system"): one record `R(m)` trainable
 * from the end of the leading system messages to the last special token.
 *
 * Grouping `merged` (`options.grouping`, docs/loss-mask-rules.md "Record grouping"): the targets
 * are located by the same exact rules, then placed in one record `T` (see
 * {@link mergedRecord}); a conversation the exact rules keep in one record is
 * returned as is, so the two groupings agree byte for byte wherever the
 * template is prefix-stable on the conversation. Policy `non-system` and
 * templates with `{% generation %}` blocks give one record either way.
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
  const messages = template.adaptMessages(conv.messages);
  // R(n, gen) = template.render(messages[:n], gen), each distinct one once, from one traced render where proven (templates/prefixRenderer.ts).
  const prefixes = new PrefixRenderer(template, messages, conv.tools);
  const R = (n: number, gen: boolean): string => prefixes.render(n, gen);
  const out: ConversationRecords = { records: [], rendered: null, notes: [], targetErrors: [], targetCount: 0, prefixRenders: prefixes.stats };

  if (policy === 'non-system') {
    if (!conv.messages.some((m) => m.role === 'assistant' && m.trainable !== false)) return out;
    out.targetCount = 1;
    const full = R(messages.length, false);
    let k = 0;
    while (k < messages.length && messages[k].role === 'system') k++;
    let start = 0;
    if (k > 0) {
      const sys = R(k, false);
      start = full.startsWith(sys) ? sys.length : commonPrefixLength(sys, full);
    }
    const eot = specials.lastEnd(full, start, full.length);
    const end = eot >= 0 ? eot : full.length;
    out.records.push({ text: full, spans: end > start ? [[start, end]] : [], targets: selectTargets(messages, 'assistant') });
    out.rendered = full;
    return out;
  }

  const targets = selectTargets(messages, policy);
  out.targetCount = targets.length;
  if (template.hasGenerationBlocks) return fromGenerationBlocks(conv, messages, template, targets, out);
  let current: TextRecord | null = null;
  const notes = new Set<string>();
  const located: LocatedTarget[] = [];
  for (const i of targets) {
    const P = R(i, true);
    const F = R(i + 1, false);
    let C: string;
    if (F.startsWith(P)) {
      // The common case needs neither H nor G: not rendering H saves a third of the renders.
      C = F.slice(P.length);
    } else {
      const H = R(i, false);
      const G = P.startsWith(H) ? P.slice(H.length) : P.slice(commonPrefixLength(P, H));
      const L = commonPrefixLength(H, F);
      const rest = F.slice(H.length);
      if (L === H.length && (G.length === 0 || !rest.startsWith(G[0]))) {
        C = rest;
        notes.add('generation_prompt_mismatch');
      } else {
        const at = G.length ? F.lastIndexOf(G) : -1;
        if (at < 0 || at < L) {
          out.targetErrors.push({
            index: i,
            reason: 'template_unsupported',
            message: `assistant turn ${i}: its completion cannot be located in the render (generation prompt ${JSON.stringify(G)} not found after the unchanged history)`,
          });
          continue;
        }
        C = F.slice(at + G.length);
        notes.add('template_rewrites_history');
      }
    }
    const m = messages[i];
    if ((m.reasoning_content ?? '').trim() && !C.includes(m.reasoning_content!.trim())) notes.add('reasoning_not_rendered');
    if (m.tool_calls?.some((tc) => !C.includes(tc.function.name))) notes.add('tool_calls_not_rendered');

    const X = P + C;
    const eot = specials.lastEnd(X, P.length, X.length);
    const span: Span = [P.length, eot >= 0 ? eot : X.length];
    located.push({ index: i, P, X, span });
    if (current && P.startsWith(current.text)) {
      current.text = X;
      current.spans.push(span);
      current.targets.push(i);
    } else {
      current = { text: X, spans: [span], targets: [i] };
      out.records.push(current);
    }
  }
  if (targets.length) out.rendered = R(targets[targets.length - 1] + 1, false);
  if (options.grouping === 'merged' && out.records.length > 1) {
    const merged = mergedRecord(located, out.rendered!, R, specials, notes);
    if (merged) out.records = [merged];
    else notes.add('merged_fallback_exact');
  }
  out.notes = [...notes];
  return out;
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
  const text = last.X.length > T.length && last.X.startsWith(T) ? last.X : T;
  const spans: Span[] = [];
  let historyForm = false;
  for (const t of located) {
    const start = commonPrefixLength(text, t.P);
    // T must hold the whole history of P_i; only the header and a pre-filled generation prompt may differ.
    if (start < t.P.length && start < commonPrefixLength(t.P, R(t.index, false))) return null;
    const trained = t.X.slice(t.span[0], t.span[1]);
    let end: number;
    if (text.startsWith(trained, start)) end = start + trained.length;
    else {
      const eot = specials.tokenEndingAt(t.X, t.span[1]);
      const at = eot ? text.indexOf(eot, start) : -1;
      if (at < 0 || !trained.endsWith(text.slice(start, at + eot!.length))) return null;
      end = at + eot!.length;
      historyForm = true;
    }
    if (spans.length && start < spans[spans.length - 1][1]) return null;
    if (end > start) spans.push([start, end]);
  }
  if (historyForm) notes.add('merged_history_form');
  return { text, spans, targets: located.map((t) => t.index) };
}

/**
 * Records of a template with `{% generation %}` blocks (issue 4: spans come
 * from the blocks, as `transformers`' `return_assistant_tokens_mask` does):
 * one record, the render of the messages through the last target; the k-th
 * block belongs to the k-th assistant turn when the counts agree (else every
 * block is kept under `assistant`, the last under `last-assistant`, noted as
 * `generation_blocks_unmatched`).
 */
function fromGenerationBlocks(
  conv: Conversation,
  messages: Message[],
  template: ChatTemplate,
  targets: number[],
  out: ConversationRecords,
): ConversationRecords {
  if (targets.length === 0) return out;
  const last = targets[targets.length - 1];
  const { text, spans } = template.renderWithGenerationSpans(messages.slice(0, last + 1), conv.tools, { addGenerationPrompt: false });
  const assistants: number[] = [];
  messages.slice(0, last + 1).forEach((m, i) => m.role === 'assistant' && assistants.push(i));
  let chosen: Span[];
  if (spans.length === assistants.length) {
    const want = new Set(targets);
    chosen = spans.filter((_, k) => want.has(assistants[k]));
  } else {
    out.notes.push('generation_blocks_unmatched');
    chosen = targets.length === 1 && spans.length ? [spans[spans.length - 1]] : spans;
  }
  out.records.push({ text, spans: chosen, targets });
  out.rendered = text;
  return out;
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

export { TemplateRenderError };
