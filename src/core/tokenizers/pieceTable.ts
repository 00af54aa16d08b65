/**
 * pieceEncoder.ts's cache: pre-tokenized pieces → a number, keyed by a range of a string, so that a piece seen before
 * is found without making its substring (no allocation per piece, where a `Map<string, …>` needs the substring and
 * hashes it anew). Open addressing over typed arrays: the keys' UTF-16 units packed in one `Uint16Array`, each entry
 * its key's place, length, full hash and value.
 */

/** Entries kept before the table is cleared (as wordCache.ts: ~100k pieces); the hash table has twice as many slots. */
export const PIECE_TABLE_ENTRIES = 1 << 17;
/**
 * The entries a new {@link PieceTable} keeps when none are given: {@link PIECE_TABLE_ENTRIES}. A test sets fewer (and
 * restores it) to overflow the tables of the encoders it loads with thousands of pieces rather than ~140,000.
 */
export const pieceTableLimits = { entries: PIECE_TABLE_ENTRIES };
/** Key units kept before the table is cleared (2 bytes each). */
const MAX_UNITS = 1 << 22;

/** A hash table from string ranges to integers (see the file's comment). */
export class PieceTable {
  /** Slots − 1 (the slots are a power of two, at least twice the entries: at most half of them used). */
  private readonly mask: number;
  /** Per slot: the entry's index, -1 empty. */
  private readonly slots: Int32Array;
  private readonly keyAt: Int32Array;
  private readonly keyLen: Int32Array;
  private readonly hashes: Int32Array;
  private readonly values: Int32Array;
  private units = new Uint16Array(1 << 16);
  private usedUnits = 0;
  /** Entries held. */
  size = 0;
  /** The hash of the range last looked up ({@link get}), reused by {@link set} for the same range. */
  private lastHash = 0;

  /** @param entries the entries kept before the table is {@link full} (default {@link pieceTableLimits}: {@link PIECE_TABLE_ENTRIES}) */
  constructor(readonly entries: number = pieceTableLimits.entries) {
    let slots = 2;
    while (slots < 2 * entries) slots *= 2;
    this.mask = slots - 1;
    this.slots = new Int32Array(slots).fill(-1);
    this.keyAt = new Int32Array(entries);
    this.keyLen = new Int32Array(entries);
    this.hashes = new Int32Array(entries);
    this.values = new Int32Array(entries);
  }

  /** The value of `s[from … to)`, or -1 when the table does not hold it (values are never -1: pieceEncoder.ts). */
  get(s: string, from: number, to: number): number {
    let h = 0x811c9dc5 ^ (to - from);
    for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    h ^= h >>> 15;
    this.lastHash = h;
    const len = to - from;
    const units = this.units;
    const mask = this.mask;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const e = this.slots[slot];
      if (e < 0) return -1;
      if (this.hashes[e] !== h || this.keyLen[e] !== len) continue;
      const at = this.keyAt[e];
      let i = 0;
      while (i < len && units[at + i] === s.charCodeAt(from + i)) i++;
      if (i === len) return this.values[e];
    }
  }

  /** Whether a key of `len` units does not fit: the caller then clears the table ({@link clear}) before {@link set}. */
  full(len: number): boolean {
    return this.size >= this.entries || this.usedUnits + len > MAX_UNITS;
  }

  /**
   * Sets the value of `s[from … to)`, which the last {@link get} looked up and did not find (its hash is reused; a
   * {@link clear} between them is fine). The table must not be {@link full}.
   */
  set(s: string, from: number, to: number, value: number): void {
    const len = to - from;
    if (this.usedUnits + len > this.units.length) {
      let c = this.units.length;
      while (c < this.usedUnits + len) c *= 2;
      const grown = new Uint16Array(Math.min(MAX_UNITS, c));
      grown.set(this.units.subarray(0, this.usedUnits));
      this.units = grown;
    }
    const at = this.usedUnits;
    for (let i = 0; i < len; i++) this.units[at + i] = s.charCodeAt(from + i);
    this.usedUnits += len;
    const e = this.size++;
    const h = this.lastHash;
    this.keyAt[e] = at;
    this.keyLen[e] = len;
    this.hashes[e] = h;
    this.values[e] = value;
    const mask = this.mask;
    let slot = h & mask;
    while (this.slots[slot] >= 0) slot = (slot + 1) & mask;
    this.slots[slot] = e;
  }

  /** Empties the table (its arrays are kept). */
  clear(): void {
    this.slots.fill(-1);
    this.size = 0;
    this.usedUnits = 0;
  }
}
