/**
 * Numbers as the reports and the terminal print them, without the ICU formatter: the first
 * `toLocaleString('en-US')` of a process loads ICU's number formatting data (15–40 ms of CPU,
 * docs/scale.md), and every later call builds a formatter again (~0.1 ms); `prepare` prints a handful of
 * counts once per run, so that load was a fixed cost of every run, a few per cent of a short one.
 */

/**
 * `n.toLocaleString('en-US')`: the integer part grouped by threes with commas (`1,234,567`, `-1,234`). Safe
 * integers are formatted here; any other number (fractions, -0, beyond 2^53, NaN, ±Infinity) by
 * `toLocaleString` itself, so the text is the same for every number.
 */
export function groupedInt(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  const digits = String(n < 0 ? -n : n);
  let out = '';
  let end = digits.length;
  for (let start = end - 3; start > 0; start -= 3) {
    out = ',' + digits.slice(start, end) + out;
    end = start;
  }
  out = digits.slice(0, end) + out;
  return n < 0 ? '-' + out : out;
}
