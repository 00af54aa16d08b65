/**
 * Byte-level BPE over a rank table, by tiktoken's `byte_pair_merge` rule: a piece
 * that is itself a rank is one token; otherwise the adjacent pair with the lowest
 * merged rank is merged, leftmost first, until no adjacent pair is a rank.
 */
import type { RankTable } from './rankTable';

const MAXR = 0x7fffffff;
let BOUNDS = new Int32Array(520);
let PAIR = new Int32Array(520);

/** Rank of `buf[a, c)`, or MAXR when it is not a token. */
function pairRank(ranks: RankTable, buf: Uint8Array, a: number, c: number): number {
  const r = ranks.rank(buf, a, c);
  return r < 0 ? MAXR : r;
}

/**
 * Byte-level BPE of one pre-token with tiktoken's rule: if `buf[start, end)` is
 * a rank it is one token; otherwise, repeatedly merge the adjacent pair of parts
 * whose concatenation has the lowest rank (leftmost on ties) until no adjacent
 * pair concatenates to a rank. Pre-tokens up to 256 bytes use tiktoken's own
 * linear scan; longer ones a heap with the same order (rank, then position).
 * @param out receives the ranks; `outPos` receives each token's byte offset relative to `start`.
 * @throws Error when a single byte has no rank (prevented by {@link parseTiktokenModel}).
 */
export function bpeMerge(ranks: RankTable, buf: Uint8Array, start: number, end: number, out: number[], outPos: number[], forceHeap = false): void {
  const whole = ranks.rank(buf, start, end);
  if (whole >= 0) {
    out.push(whole);
    outPos.push(0);
    return;
  }
  if (end - start <= 256 && !forceHeap) scanMerge(ranks, buf, start, end, out, outPos);
  else heapMerge(ranks, buf, start, end, out, outPos);
}

/** {@link bpeMerge} by tiktoken's own linear scan (short pre-tokens). */
function scanMerge(ranks: RankTable, buf: Uint8Array, start: number, end: number, out: number[], outPos: number[]): void {
  const n = end - start;
  // tiktoken's scan: bounds[k] = start of part k; pr[k] = rank of parts k and k+1 merged (MAXR: not a rank).
  if (BOUNDS.length < n + 1) {
    BOUNDS = new Int32Array(2 * (n + 1));
    PAIR = new Int32Array(2 * (n + 1));
  }
  const bounds = BOUNDS;
  const pr = PAIR;
  for (let k = 0; k <= n; k++) bounds[k] = start + k;
  for (let k = 0; k < n - 1; k++) pr[k] = pairRank(ranks, buf, start + k, start + k + 2);
  pr[n - 1] = MAXR;
  let parts = n;
  for (;;) {
    let best = MAXR;
    let bi = -1;
    for (let k = 0; k < parts - 1; k++) {
      if (pr[k] < best) {
        best = pr[k];
        bi = k;
      }
    }
    if (bi < 0) break;
    // Drop boundary bi+1 (parts bi and bi+1 become one), then re-rank the pairs touching the new part.
    bounds.copyWithin(bi + 1, bi + 2, parts + 1);
    pr.copyWithin(bi + 1, bi + 2, parts);
    parts--;
    pr[bi] = bi < parts - 1 ? pairRank(ranks, buf, bounds[bi], bounds[bi + 2]) : MAXR;
    if (bi > 0) pr[bi - 1] = pairRank(ranks, buf, bounds[bi - 1], bounds[bi + 1]);
  }
  for (let k = 0; k < parts; k++) {
    const r = ranks.rank(buf, bounds[k], bounds[k + 1]);
    if (r < 0) throw new Error(`no rank for byte sequence at ${bounds[k]}`);
    out.push(r);
    outPos.push(bounds[k] - start);
  }
}

/** {@link bpeMerge} with a heap of candidate merges, in the scan's order (rank, then position): long pre-tokens. */
function heapMerge(ranks: RankTable, buf: Uint8Array, start: number, end: number, out: number[], outPos: number[]): void {
  const n = end - start;
  // Heap variant: parts are a linked list indexed by their start (relative byte offset).
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  const alive = new Uint8Array(n + 1);
  const ver = new Int32Array(n + 1);
  for (let k = 0; k <= n; k++) {
    next[k] = k + 1;
    prev[k] = k - 1;
    alive[k] = 1;
  }
  const heap = new RankHeap(n * 2);
  const linkRank = (p: number) => {
    const q = next[p];
    if (q >= n) return -1;
    return ranks.rank(buf, start + p, start + next[q]);
  };
  const refresh = (p: number) => {
    ver[p]++;
    const r = linkRank(p);
    if (r >= 0) heap.push(r, p, ver[p]);
  };
  for (let p = 0; p < n - 1; p++) {
    const r = linkRank(p);
    if (r >= 0) heap.push(r, p, 0);
  }
  while (heap.size > 0) {
    const p = heap.topPos();
    const v = heap.topVersion();
    heap.pop();
    if (!alive[p] || ver[p] !== v) continue;
    const q = next[p];
    alive[q] = 0;
    next[p] = next[q];
    if (next[q] <= n) prev[next[q]] = p;
    refresh(p);
    if (prev[p] >= 0) refresh(prev[p]);
  }
  for (let p = 0; p < n; p = next[p]) {
    const r = ranks.rank(buf, start + p, start + next[p]);
    if (r < 0) throw new Error(`no rank for byte sequence at ${start + p}`);
    out.push(r);
    outPos.push(p);
  }
}

/** A binary min-heap of (rank, position, version) triples in typed arrays, ordered by rank, then position. */
class RankHeap {
  private hr: Int32Array;
  private hp: Int32Array;
  private hv: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.hr = new Int32Array(Math.max(1, capacity));
    this.hp = new Int32Array(Math.max(1, capacity));
    this.hv = new Int32Array(Math.max(1, capacity));
  }

  /** The position of the smallest triple. */
  topPos(): number {
    return this.hp[0];
  }

  /** The version of the smallest triple. */
  topVersion(): number {
    return this.hv[0];
  }

  push(r: number, p: number, v: number): void {
    if (this.size === this.hr.length) {
      const grow = (x: Int32Array) => {
        const y = new Int32Array(x.length * 2);
        y.set(x);
        return y;
      };
      this.hr = grow(this.hr);
      this.hp = grow(this.hp);
      this.hv = grow(this.hv);
    }
    let k = this.size++;
    this.hr[k] = r;
    this.hp[k] = p;
    this.hv[k] = v;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (!this.less(k, parent)) break;
      this.swap(k, parent);
      k = parent;
    }
  }

  /** Removes the smallest triple. */
  pop(): void {
    const hn = --this.size;
    this.swap(0, hn);
    let k = 0;
    for (;;) {
      const l = 2 * k + 1;
      const r = l + 1;
      let m = k;
      if (l < hn && this.less(l, m)) m = l;
      if (r < hn && this.less(r, m)) m = r;
      if (m === k) break;
      this.swap(k, m);
      k = m;
    }
  }

  private less(a: number, b: number): boolean {
    return this.hr[a] < this.hr[b] || (this.hr[a] === this.hr[b] && this.hp[a] < this.hp[b]);
  }

  private swap(a: number, b: number): void {
    const { hr, hp, hv } = this;
    let t = hr[a];
    hr[a] = hr[b];
    hr[b] = t;
    t = hp[a];
    hp[a] = hp[b];
    hp[b] = t;
    t = hv[a];
    hv[a] = hv[b];
    hv[b] = t;
  }
}
