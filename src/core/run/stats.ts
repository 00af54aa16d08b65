/**
 * Length statistics of a run (`report.json` `files[].lengths` and `totals.lengths`): how long the
 * written records are, how many tokens of each are trained, how many records each conversation
 * became, and the amplification (record tokens ÷ tokens of the conversations rendered once).
 *
 * Every distribution keeps two histograms with fixed edges, so that the reports of the shards of
 * one job combine exactly (`merge-reports` adds the counts):
 * - `histogram`: for display, edges {@link HISTOGRAM_EDGES} = 0, 1, 2, 4, 8, …, 2^24 — bucket `k`
 *   holds the values `v` with `edges[k] <= v < edges[k+1]`, the last bucket every `v >= 2^24`;
 * - `fine`: sparse, keyed by a bucket's lower edge (as a decimal string): every value below 64
 *   has its own bucket; above, each power of two is cut into 32 equal buckets (widths 2^(e-5) for
 *   values in [2^e, 2^(e+1))).
 * Percentiles (p50, p90, p99) are read from `fine` — the nearest rank `ceil(q·count)`: exact below
 * 64, otherwise the largest value of the bucket that holds that rank (at most 1/32 of the value
 * above it), never above the exact `max`. So a merged report shows the same percentiles as one run
 * over all the rows would.
 *
 * This module has no imports: the run contract refers to its types.
 */

/** Edges of the display histogram: 0, then the powers of two 1 … 2^24. */
export const HISTOGRAM_EDGES: readonly number[] = Object.freeze([0, ...Array.from({ length: 25 }, (_, k) => 2 ** k)]);

/** One distribution of non-negative integers. */
export interface Distribution {
  count: number;
  sum: number;
  /** null when `count` is 0 (also `max`, `mean` and the percentiles). */
  min: number | null;
  max: number | null;
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  /** Display histogram: `counts[k]` values in `[edges[k], edges[k+1])` (the last bucket open-ended). */
  histogram: { edges: number[]; counts: number[] };
  /** Fine histogram for percentiles and merging: lower edge (decimal string) → count; only non-empty buckets. */
  fine: Record<string, number>;
}

/** The length statistics of one file (or of the run: `totals.lengths`). */
export interface LengthStats {
  /** `seq_len` of each written record (tokens). */
  seqLen: Distribution;
  /** Trainable tokens (`n_response_tokens`) of each written record. */
  trainableTokens: Distribution;
  /** Records written per written conversation (row). */
  recordsPerConversation: Distribution;
  /**
   * Tokens of the written conversations rendered once: `T = R(m[:j+1])`, `j` the last target (spec
   * "Record grouping"), before any cut. Grouping `merged` writes about this many tokens.
   */
  renderedTokens: number;
  /** Record tokens (`totalTokens`) ÷ `renderedTokens`; null when nothing was written. */
  amplification: number | null;
}

/** Lower edge of the fine bucket holding `v` (a non-negative integer). */
export function fineBucket(v: number): number {
  if (v < 64) return v;
  const e = Math.floor(Math.log2(v));
  const width = 2 ** (e - 5);
  return Math.floor(v / width) * width;
}

/** Largest value of the fine bucket whose lower edge is `lo`. */
function fineBucketTop(lo: number): number {
  if (lo < 64) return lo;
  return lo + 2 ** (Math.floor(Math.log2(lo)) - 5) - 1;
}

/** Index of the display bucket holding `v`. */
function displayBucket(v: number): number {
  if (v < 1) return 0;
  return Math.min(HISTOGRAM_EDGES.length - 1, Math.floor(Math.log2(v)) + 1);
}

/** Accumulates a {@link Distribution}. */
export class DistributionBuilder {
  private count = 0;
  private sum = 0;
  private min = Infinity;
  private max = -Infinity;
  private readonly counts = new Array<number>(HISTOGRAM_EDGES.length).fill(0);
  private readonly fine = new Map<number, number>();

  /** Adds one value (a non-negative integer). */
  add(v: number): void {
    this.count++;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    this.counts[displayBucket(v)]++;
    const b = fineBucket(v);
    this.fine.set(b, (this.fine.get(b) ?? 0) + 1);
  }

  /** The distribution so far (plain JSON data). */
  result(): Distribution {
    const fine: Record<string, number> = {};
    for (const k of [...this.fine.keys()].sort((a, b) => a - b)) fine[String(k)] = this.fine.get(k)!;
    return finish(this.count, this.sum, this.count ? this.min : null, this.count ? this.max : null, [...this.counts], fine);
  }
}

function finish(count: number, sum: number, min: number | null, max: number | null, counts: number[], fine: Record<string, number>): Distribution {
  const keys = Object.keys(fine)
    .map(Number)
    .sort((a, b) => a - b);
  const pct = (q: number): number | null => {
    if (count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * count));
    let seen = 0;
    for (const k of keys) {
      seen += fine[String(k)];
      if (seen >= rank) return Math.min(fineBucketTop(k), max!);
    }
    return max;
  };
  return {
    count,
    sum,
    min,
    max,
    mean: count ? sum / count : null,
    p50: pct(0.5),
    p90: pct(0.9),
    p99: pct(0.99),
    histogram: { edges: [...HISTOGRAM_EDGES], counts },
    fine,
  };
}

/** Combines distributions (of shards, or of files into a total): counts add, percentiles are read again from the combined fine histogram. */
export function mergeDistributions(ds: readonly Distribution[]): Distribution {
  const counts = new Array<number>(HISTOGRAM_EDGES.length).fill(0);
  const fine: Record<string, number> = {};
  let count = 0;
  let sum = 0;
  let min: number | null = null;
  let max: number | null = null;
  for (const d of ds) {
    count += d.count;
    sum += d.sum;
    if (d.min !== null) min = min === null ? d.min : Math.min(min, d.min);
    if (d.max !== null) max = max === null ? d.max : Math.max(max, d.max);
    d.histogram.counts.forEach((c, k) => (counts[k] += c));
    for (const [k, c] of Object.entries(d.fine)) fine[k] = (fine[k] ?? 0) + c;
  }
  const sorted: Record<string, number> = {};
  for (const k of Object.keys(fine)
    .map(Number)
    .sort((a, b) => a - b))
    sorted[String(k)] = fine[String(k)];
  return finish(count, sum, min, max, counts, sorted);
}

/** Accumulates the {@link LengthStats} of one file from its rows' results. */
export class LengthStatsBuilder {
  private readonly seqLen = new DistributionBuilder();
  private readonly trainable = new DistributionBuilder();
  private readonly perConversation = new DistributionBuilder();
  private rendered = 0;
  private total = 0;

  /** Adds a written row: its records' lengths and trainable tokens, and the tokens of its conversation rendered once. */
  addRow(recordTokens: readonly number[], recordTrainable: readonly number[], renderedTokens: number): void {
    for (const n of recordTokens) {
      this.seqLen.add(n);
      this.total += n;
    }
    for (const n of recordTrainable) this.trainable.add(n);
    this.perConversation.add(recordTokens.length);
    this.rendered += renderedTokens;
  }

  result(): LengthStats {
    return {
      seqLen: this.seqLen.result(),
      trainableTokens: this.trainable.result(),
      recordsPerConversation: this.perConversation.result(),
      renderedTokens: this.rendered,
      amplification: this.rendered > 0 ? this.total / this.rendered : null,
    };
  }
}

/** Combines length statistics (shards of a file, or the files of a run). */
export function mergeLengthStats(ls: readonly LengthStats[]): LengthStats {
  const renderedTokens = ls.reduce((a, l) => a + l.renderedTokens, 0);
  const seqLen = mergeDistributions(ls.map((l) => l.seqLen));
  return {
    seqLen,
    trainableTokens: mergeDistributions(ls.map((l) => l.trainableTokens)),
    recordsPerConversation: mergeDistributions(ls.map((l) => l.recordsPerConversation)),
    renderedTokens,
    amplification: renderedTokens > 0 ? seqLen.sum / renderedTokens : null,
  };
}
