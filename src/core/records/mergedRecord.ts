/** Grouping `merged` (docs/loss-mask-rules.md "Record grouping: exact or merged"): one record per conversation. */
import { ownTextStart } from './completion';
import type { LocatedTarget, Span, TextRecord } from './maskTypes';
import { commonPrefixLength, endsWithFast, SpecialTokenFinder, startsWithAt } from './specialTokens';

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
export function mergedRecord(
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
