/**
 * Which tokens of a long record the mask view draws. A record of an agent run can hold 50,000
 * tokens and train 70 of them at its very end; drawing its first {@link MAX_TOKENS_SHOWN} tokens
 * would show no trained span at all. The view draws every trained span with as much context
 * around each as the budget allows, and marks the gaps.
 *
 * Pure (no `vscode` import): tested in plain node (test/unit/maskViewWindow.test.ts).
 */

/** A range of token indices of the record, `from` inclusive, `to` exclusive. */
export interface TokenRange {
  from: number;
  to: number;
}

/** The trained runs of a loss mask as index ranges, in order. */
export function trainedSpans(trainable: readonly boolean[]): TokenRange[] {
  const spans: TokenRange[] = [];
  for (let k = 0; k < trainable.length; k++) {
    if (!trainable[k]) continue;
    const last = spans[spans.length - 1];
    if (last && last.to === k) last.to = k + 1;
    else spans.push({ from: k, to: k + 1 });
  }
  return spans;
}

/** The spans widened by `context` tokens on each side (clipped to `[0, n)`), overlapping ones merged. */
function widened(spans: readonly TokenRange[], context: number, n: number): TokenRange[] {
  const out: TokenRange[] = [];
  for (const s of spans) {
    const from = Math.max(0, s.from - context);
    const to = Math.min(n, s.to + context);
    const last = out[out.length - 1];
    if (last && from <= last.to) last.to = Math.max(last.to, to);
    else out.push({ from, to });
  }
  return out;
}

const size = (ranges: readonly TokenRange[]): number => ranges.reduce((a, r) => a + r.to - r.from, 0);

/**
 * The token ranges to draw for a record of `trainable.length` tokens with at most `max` drawn.
 *
 * - A record within `max` is drawn whole: `[{ from: 0, to: n }]`.
 * - A record with no trained token: its first `max` tokens.
 * - Otherwise every trained span with the same context on each side, the largest that fits
 *   (so spans close together share their context and the whole budget is used); when the
 *   trained tokens alone exceed `max`, the first `max` of them from the first span on.
 *
 * @param trainable the record's loss mask as booleans, one per token.
 * @param max most tokens drawn (≥ 1).
 * @returns ranges in order, non-overlapping, non-adjacent, covering at most `max` tokens.
 */
export function rangesToDraw(trainable: readonly boolean[], max: number): TokenRange[] {
  const n = trainable.length;
  if (n <= max) return n ? [{ from: 0, to: n }] : [];
  const spans = trainedSpans(trainable);
  if (!spans.length) return [{ from: 0, to: max }];
  if (size(spans) > max) {
    // Too many trained tokens for the budget: the first `max` from the first trained token on.
    return [{ from: spans[0].from, to: spans[0].from + max }];
  }
  // The widest context c with size(widened(c)) ≤ max (size grows with c): binary search.
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (size(widened(spans, mid, n)) <= max) lo = mid;
    else hi = mid - 1;
  }
  return widened(spans, lo, n);
}

/** The tokens inside `ranges`, in order (what is posted to the webview). */
export function pick<T>(items: readonly T[], ranges: readonly TokenRange[]): T[] {
  return ranges.flatMap((r) => items.slice(r.from, r.to));
}
