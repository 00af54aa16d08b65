/**
 * pieceEncoder.ts's cache: pre-tokenized pieces → a number, keyed by a range of a string, so that a piece seen before
 * is found without making its substring (no allocation per piece, where a `Map<string, …>` needs the substring and
 * hashes it anew). Open addressing over typed arrays: the keys' UTF-16 units packed in one `Uint16Array`, each entry
 * its key's place, length, full hash and value.
 */

/** Slots of the hash table (a power of two): at most half of them used. */
const SLOTS = 1 << 18;
/** Entries kept before the table is cleared (as wordCache.ts: ~100k pieces). */
export const PIECE_TABLE_ENTRIES = SLOTS >> 1;
/** Key units kept before the table is cleared (2 bytes each). */
const MAX_UNITS = 1 << 22;

/** A hash table from string ranges to integers (see the file's comment). */
export class PieceTable {
  /** Per slot: the entry's index, -1 empty. */
  private readonly slots = new Int32Array(SLOTS).fill(-1);
  private readonly keyAt = new Int32Array(PIECE_TABLE_ENTRIES);
  private readonly keyLen = new Int32Array(PIECE_TABLE_ENTRIES);
  private readonly hashes = new Int32Array(PIECE_TABLE_ENTRIES);
  private readonly values = new Int32Array(PIECE_TABLE_ENTRIES);
  private units = new Uint16Array(1 << 16);
  private usedUnits = 0;
  /** Entries held. */
  size = 0;
  /** The hash of the range last looked up ({@link get}), reused by {@link set} for the same range. */
  private lastHash = 0;

  /** The value of `s[from … to)`, or -1 when the table does not hold it (values are never -1: pieceEncoder.ts). */
  get(s: string, from: number, to: number): number {
    let h = 0x811c9dc5 ^ (to - from);
    for (let i = from; i < to; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    h ^= h >>> 15;
    this.lastHash = h;
    const len = to - from;
    const units = this.units;
    for (let slot = h & (SLOTS - 1); ; slot = (slot + 1) & (SLOTS - 1)) {
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
    return this.size >= PIECE_TABLE_ENTRIES || this.usedUnits + len > MAX_UNITS;
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
    let slot = h & (SLOTS - 1);
    while (this.slots[slot] >= 0) slot = (slot + 1) & (SLOTS - 1);
    this.slots[slot] = e;
  }

  /** Empties the table (its arrays are kept). */
  clear(): void {
    this.slots.fill(-1);
    this.size = 0;
    this.usedUnits = 0;
  }
}
