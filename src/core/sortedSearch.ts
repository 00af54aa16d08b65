/** Binary search over sorted numbers, shared by the rooms that index positions or code points by range starts. */

/**
 * The index of the last element of `sorted` (ascending) that is at most `x`, by binary search: O(log n).
 * @returns that index; 0 when no element is at most `x` or `sorted` is empty (callers that can meet that case check
 *   `sorted[0] <= x` themselves)
 */
export function lastAtMost(sorted: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (sorted[mid] <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The index of the first element of `sorted[from …]` (ascending) that is at least `x` (a lower bound), by binary
 * search: O(log n).
 * @returns that index; `sorted.length` when no element from `from` on is at least `x`
 */
export function firstAtLeast(sorted: ArrayLike<number>, x: number, from = 0): number {
  let lo = from;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
