/**
 * BPE for long pre-tokens in time and memory proportional to their length,
 * patched onto a `@huggingface/tokenizers` (tokenizers.js 0.2) BPE model.
 *
 * Why: a pre-token is the unit BPE works on, and a pre-tokenizer does not
 * split a run of one letter (or one long URL, base64 blob, minified line…):
 * an assistant turn of 5 MiB of one character is one 5 MiB pre-token.
 * tokenizers.js merges it with a priority queue too, but over one JS object
 * per symbol (copied at every merge), boxed float priorities and a
 * `JSON.stringify` per pair lookup: ~1 KB of garbage per character, so the
 * garbage collector's work grows with the live heap and the whole grows faster
 * than the length (1 MiB: 22 s and 0.9 GB; 2 MiB: 141 s and 1.5 GB, measured
 * on the embedded Qwen3 tokenizer).
 *
 * The algorithm is the one the Hugging Face `tokenizers` library (Rust,
 * `models/bpe/word.rs` `merge_all`) runs: the symbols of the word form a
 * doubly linked list; a binary min-heap holds the candidate merges of adjacent
 * pairs keyed by (merge rank, position of the left symbol); the lowest rank is
 * merged first and, among equal ranks, the leftmost; an entry whose pair has
 * changed since it was pushed is skipped when popped (its pair no longer has
 * that rank); each merge pushes the two new pairs it forms. Every merge is a
 * heap pop plus at most two pushes: O(n log n) time for n characters, and
 * typed arrays only (about 40 bytes per character). The merged tokens are the
 * same as tokenizers.js's (and the Rust library's): they are checked against
 * the Rust `tokenizers` package on long random and repetitive words in
 * test/unit/longWordBpe.test.ts.
 *
 * Symbols are the word's code points (with the model's `end_of_word_suffix` on
 * the last), as tokenizers.js starts; strings are interned to numbers once per
 * model (vocabulary ids, then the merge parts outside the vocabulary).
 */

/** Pre-tokens of at least this many UTF-16 units go to {@link heapBpe}; shorter ones keep the library's BPE (and its cache). */
export const LONG_WORD_CHARS = 256;

/**
 * The merges of a BPE model over interned symbol ids: an open-addressing hash
 * table keyed by the (left, right) id pair (typed arrays; no boxed keys).
 */
export interface MergeTable {
  /**
   * Symbol string → id: vocabulary ids, then merge parts and results outside the vocabulary. The model's own
   * vocabulary map is looked up first (not copied: a copy was 7 MB per loaded tokenizer, docs/scale.md "Memory").
   */
  readonly ids: { get(symbol: string): number | undefined };
  /** Id → symbol string. */
  readonly strings: string[];
  /** Slot count − 1 (a power of two minus one). */
  readonly mask: number;
  /** Per slot: left id (-1 = empty), right id, rank, merged id. */
  readonly left: Int32Array;
  readonly right: Int32Array;
  readonly rank: Int32Array;
  readonly merged: Int32Array;
}

/** Heap keys are `rank * POS_SPACE + position`: positions below 2^31 and ranks below 2^22 keep them exact (< 2^53). */
const POS_SPACE = 2 ** 31;
const MAX_RANKS = 2 ** 22;

function slotOf(l: number, r: number, mask: number): number {
  return ((Math.imul(l, 0x9e3779b1) ^ Math.imul(r + 0x7f4a7c15, 0x85ebca77)) >>> 0) & mask;
}

/** The slot of pair (l, r) in `t`, or -1 when the pair has no merge. */
function findMerge(t: MergeTable, l: number, r: number): number {
  for (let i = slotOf(l, r, t.mask); ; i = (i + 1) & t.mask) {
    const k = t.left[i];
    if (k === -1) return -1;
    if (k === l && t.right[i] === r) return i;
  }
}

/**
 * Interns the merges of a tokenizers.js BPE model (`merges` as `[a, b]` pairs
 * in rank order; `tokens_to_ids`). As tokenizers.js's `bpe_ranks` map, a pair
 * listed twice keeps its last rank.
 * @returns undefined when the model has more merges than the packed heap keys allow (2^22; never for current vocabularies)
 */
export function buildMergeTable(merges: readonly (readonly [string, string])[], vocab: ReadonlyMap<string, number>): MergeTable | undefined {
  if (merges.length >= MAX_RANKS) return undefined;
  /** Symbols outside the vocabulary (merge parts and results), numbered after it. */
  const extra = new Map<string, number>();
  const ids = { get: (s: string): number | undefined => vocab.get(s) ?? extra.get(s) };
  const strings: string[] = [];
  let next = 0;
  for (const [s, id] of vocab) {
    if (!Number.isInteger(id) || id < 0 || id >= 2 ** 30) return undefined;
    strings[id] = s;
    if (id >= next) next = id + 1;
  }
  const intern = (s: string): number => {
    let id = ids.get(s);
    if (id === undefined) {
      id = next++;
      extra.set(s, id);
      strings[id] = s;
    }
    return id;
  };
  // Load factor at most 3/4 (linear probing): 262,144 slots of 4 × 4 bytes for Qwen3's 151,387 merges (4 MB; 8 MB at 1/2).
  let cap = 16;
  while (cap * 3 < merges.length * 4) cap *= 2;
  const t: MergeTable = {
    ids,
    strings,
    mask: cap - 1,
    left: new Int32Array(cap).fill(-1),
    right: new Int32Array(cap),
    rank: new Int32Array(cap),
    merged: new Int32Array(cap),
  };
  for (let rank = 0; rank < merges.length; rank++) {
    const [a, b] = merges[rank];
    const l = intern(a);
    const r = intern(b);
    const m = intern(a + b);
    let i = slotOf(l, r, t.mask);
    while (t.left[i] !== -1 && !(t.left[i] === l && t.right[i] === r)) i = (i + 1) & t.mask;
    t.left[i] = l;
    t.right[i] = r;
    t.rank[i] = rank;
    t.merged[i] = m;
  }
  return t;
}

/**
 * Byte-pair encodes one word (a pre-token already mapped to the model's
 * alphabet) with the merges of `table`: the lowest-ranked adjacent pair first,
 * the leftmost among equal ranks, until no adjacent pair has a merge.
 * @param endOfWordSuffix appended to the last character before merging (tokenizers.js `end_of_word_suffix`)
 * @param continuingSubwordSuffix appended to every token but the last after merging (`continuing_subword_suffix`)
 * @returns the tokens as strings, in order (tokenizers.js `BPE.bpe`'s result)
 */
export function heapBpe(word: string, table: MergeTable, endOfWordSuffix?: string | null, continuingSubwordSuffix?: string | null): string[] {
  const chars = Array.from(word);
  if (endOfWordSuffix && chars.length) chars[chars.length - 1] += endOfWordSuffix;
  const n = chars.length;
  if (n === 0) return [];
  if (n >= POS_SPACE) throw new RangeError(`a pre-token of ${n} characters is too long to encode`);
  const { ids, strings } = table;
  // sym[k]: interned id of the symbol starting at character k (-1: a character no merge knows).
  const sym = n <= SCRATCH_MAX ? scratchSymbols(n) : new Int32Array(n);
  for (let k = 0; k < n; k++) sym[k] = ids.get(chars[k]) ?? -1;
  const next = mergeSymbols(sym, n, table);
  const out: string[] = [];
  for (let p = 0; p >= 0; p = next[p]) out.push(sym[p] >= 0 ? strings[sym[p]] : chars[p]);
  if (continuingSubwordSuffix) for (let k = 0; k < out.length - 1; k++) out[k] += continuingSubwordSuffix;
  return out;
}

/** Words up to this many symbols are merged in arrays kept between calls (no allocation per word); longer ones in their own. */
const SCRATCH_MAX = 4096;
let scratchSym = new Int32Array(64);
let scratchNext = new Int32Array(64);
let scratchPrev = new Int32Array(64);
let scratchAlive = new Uint8Array(64);
let scratchHeap: KeyHeap | undefined;

/** The scratch symbol array, at least `n` long (its content is the caller's until the next call). */
export function scratchSymbols(n: number): Int32Array {
  if (scratchSym.length < n) {
    let cap = scratchSym.length;
    while (cap < n) cap *= 2;
    scratchSym = new Int32Array(cap);
    scratchNext = new Int32Array(cap);
    scratchPrev = new Int32Array(cap);
    scratchAlive = new Uint8Array(cap);
  }
  return scratchSym;
}

/**
 * Merges the symbols `sym[0 … n)` (interned ids of `table`, -1 for a symbol no merge knows) as {@link heapBpe}
 * describes: the lowest-ranked adjacent pair first, the leftmost among equal ranks, until no adjacent pair has a merge.
 * `sym` is rewritten in place: the surviving symbols hold their merged ids.
 * @returns `next`: the surviving symbols as a linked list from 0 (`next[p]` the one after p, -1 at the end); read
 *   before the next call when `sym` is the scratch array ({@link scratchSymbols})
 */
export function mergeSymbols(sym: Int32Array, n: number, table: MergeTable): Int32Array {
  const scratch = sym === scratchSym;
  const next = scratch ? scratchNext : new Int32Array(n);
  const prev = scratch ? scratchPrev : new Int32Array(n);
  const alive = scratch ? scratchAlive : new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    next[k] = k + 1 < n ? k + 1 : -1;
    prev[k] = k - 1;
    alive[k] = 1;
  }
  if (n < 2) return next;
  if (n <= SMALL_WORD) return mergeSmall(sym, n, next, prev, table);
  /** The merge-table slot of the pair starting at symbol p, or -1. */
  const mergeAt = (p: number): number => {
    const q = next[p];
    if (q < 0 || sym[p] < 0 || sym[q] < 0) return -1;
    return findMerge(table, sym[p], sym[q]);
  };

  const heap = scratch ? (scratchHeap ??= new KeyHeap(SCRATCH_MAX)) : new KeyHeap(n);
  heap.size = 0;
  const candidate = (p: number) => {
    const m = mergeAt(p);
    if (m >= 0) heap.push(table.rank[m] * POS_SPACE + p);
  };

  for (let p = 0; p < n - 1; p++) candidate(p);
  while (heap.size > 0) {
    const key = heap.pop();
    const rank = Math.floor(key / POS_SPACE);
    const p = key - rank * POS_SPACE;
    if (!alive[p]) continue;
    const m = mergeAt(p);
    // Stale: the pair at p changed since this entry was pushed (a changed pair never has the same rank).
    if (m < 0 || table.rank[m] !== rank) continue;
    const q = next[p];
    sym[p] = table.merged[m];
    alive[q] = 0;
    next[p] = next[q];
    if (next[q] >= 0) prev[next[q]] = p;
    if (prev[p] >= 0) candidate(prev[p]);
    candidate(p);
  }
  return next;
}

/** Words up to this many symbols are merged by {@link mergeSmall} (a scan of the pairs' ranks per merge, no heap). */
const SMALL_WORD = 24;
let smallRank = new Int32Array(SMALL_WORD);
let smallSlot = new Int32Array(SMALL_WORD);

/**
 * {@link mergeSymbols} for a short word: the same merges in the same order — each step merges the adjacent pair of
 * lowest rank, the leftmost among equal ranks (the heap's (rank, position) order: positions grow along the list) —
 * found by scanning the surviving pairs' ranks, which are kept per left symbol and recomputed beside each merge only.
 */
function mergeSmall(sym: Int32Array, n: number, next: Int32Array, prev: Int32Array, table: MergeTable): Int32Array {
  if (smallRank.length < n) {
    smallRank = new Int32Array(n);
    smallSlot = new Int32Array(n);
  }
  const rank = smallRank;
  const slot = smallSlot;
  const NONE = 0x7fffffff;
  /** The rank of the pair starting at symbol p (NONE: no pair, or no merge), with its table slot. */
  const pairAt = (p: number): void => {
    const q = next[p];
    const m = q < 0 || sym[p] < 0 || sym[q] < 0 ? -1 : findMerge(table, sym[p], sym[q]);
    rank[p] = m < 0 ? NONE : table.rank[m];
    slot[p] = m;
  };
  for (let p = 0; p >= 0; p = next[p]) pairAt(p);
  for (;;) {
    let best = -1;
    let bestRank = NONE;
    for (let p = 0; p >= 0; p = next[p])
      if (rank[p] < bestRank) {
        bestRank = rank[p];
        best = p;
      }
    if (best < 0) return next;
    const q = next[best];
    sym[best] = table.merged[slot[best]];
    next[best] = next[q];
    if (next[q] >= 0) prev[next[q]] = best;
    pairAt(best);
    if (prev[best] >= 0) pairAt(prev[best]);
  }
}

/** A binary min-heap of numbers in a typed array (the merge candidates of {@link heapBpe}: rank × POS_SPACE + position). */
class KeyHeap {
  private heap: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.heap = new Float64Array(Math.max(16, capacity));
  }

  push(key: number): void {
    if (this.size === this.heap.length) {
      const bigger = new Float64Array(this.heap.length * 2);
      bigger.set(this.heap);
      this.heap = bigger;
    }
    const heap = this.heap;
    let k = this.size++;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (heap[parent] <= key) break;
      heap[k] = heap[parent];
      k = parent;
    }
    heap[k] = key;
  }

  /** Removes and returns the smallest key (the heap is not empty). */
  pop(): number {
    const heap = this.heap;
    const top = heap[0];
    const last = heap[--this.size];
    const size = this.size;
    let k = 0;
    for (;;) {
      const l = 2 * k + 1;
      if (l >= size) break;
      const r = l + 1;
      const c = r < size && heap[r] < heap[l] ? r : l;
      if (heap[c] >= last) break;
      heap[k] = heap[c];
      k = c;
    }
    heap[k] = last;
    return top;
  }
}

const everyWordTables = new WeakMap<object, MergeTable>();

/**
 * The merge table of a tokenizers.js BPE model (`tok.model`) whose every word goes to {@link heapBpe}
 * ({@link installLongWordBpe} with `everyWord`), or undefined: its words are then merged by the library (the word is
 * the same, heapBpe's tokens equal the library's).
 */
export function everyWordTableOf(model: object): MergeTable | undefined {
  return everyWordTables.get(model);
}

/**
 * Routes the long words of a tokenizers.js BPE model (`tok.model` with
 * `bpe(token)`, `merges`, `tokens_to_ids`) to {@link heapBpe}; shorter words
 * keep the library's own `bpe` (and its cache). The merge table is built on the
 * first long word. Everything around `bpe` (pre-tokenizing, `ignore_merges`,
 * byte fallback, unknown tokens, id lookup) is unchanged.
 *
 * With `everyWord` (set when the word cache, wordCache.ts, stands in front of the model, so `bpe` only sees pieces
 * not seen before) every word goes to {@link heapBpe}: the table is built at once and the library's own BPE state,
 * which only its `bpe` reads, is released — its ranks map keyed by JSON pairs (17 MB for Qwen3), its merges list
 * (11 MB; the config's copy goes too, `releaseParsedModel`) and its LRU cache (3 MB): ~30 MB less per loaded
 * tokenizer, once per pool worker (docs/scale.md "Memory"). Same merges, same order, same tokens (the tests compare
 * ids with the Rust `tokenizers` oracle).
 * @param opts.table with `everyWord`: the model's merge table, built already (preparedBpe.ts: from the `tokenizer.json`
 *   merges, or read back from the tokenizer cache) instead of from `model.merges`
 * @returns whether the model has that shape (else it is left unchanged)
 */
export function installLongWordBpe(tok: any, opts: { everyWord?: boolean; table?: MergeTable } = {}): boolean {
  const model = tok?.model;
  if (typeof model?.bpe !== 'function' || !Array.isArray(model.merges) || !(model.tokens_to_ids instanceof Map)) return false;
  if (opts.everyWord) {
    const all = opts.table ?? buildMergeTable(model.merges, model.tokens_to_ids);
    if (all) {
      everyWordTables.set(model, all);
      model.bpe = (token: string): string[] => heapBpe(token, all, model.end_of_word_suffix, model.continuing_subword_suffix);
      model.bpe_ranks = undefined;
      model.merges = undefined;
      model.cache = { get: () => undefined, put: () => {}, clear: () => {} };
      return true;
    }
  }
  const original = model.bpe.bind(model) as (token: string) => string[];
  let table: MergeTable | null | undefined;
  model.bpe = (token: string): string[] => {
    if (token.length < LONG_WORD_CHARS) return original(token);
    if (table === undefined) table = buildMergeTable(model.merges, model.tokens_to_ids) ?? null;
    if (table === null) return original(token);
    return heapBpe(token, table, model.end_of_word_suffix, model.continuing_subword_suffix);
  };
  return true;
}
