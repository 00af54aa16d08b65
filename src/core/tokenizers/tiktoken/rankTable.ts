/**
 * The rank file of a tiktoken tokenizer (`tiktoken.model`, tiktoken's
 * `load_tiktoken_bpe` format): its parser and the table it fills, token bytes by
 * rank with a byte-keyed hash lookup.
 */
import { readFileSync } from 'node:fs';
import { TokenizerLoadError } from '../types';

/** The base vocabulary of a tiktoken rank file: token bytes by rank and a byte-keyed lookup. */
export class RankTable {
  /** Number of ranks (`n_base`; ranks are 0 … size-1). */
  readonly size: number;
  private readonly mask: number;

  /**
   * @param bytes all token byte strings concatenated in rank order
   * @param offs `offs[r] … offs[r+1]` = byte range of rank r in `bytes` (length size+1)
   * @param table open-addressing table of ranks (−1 = empty), length a power of two; built when omitted
   */
  constructor(
    readonly bytes: Uint8Array,
    readonly offs: Uint32Array,
    readonly table: Int32Array = RankTable.buildTable(bytes, offs),
  ) {
    this.size = offs.length - 1;
    this.mask = table.length - 1;
  }

  private static hash(buf: Uint8Array, start: number, end: number): number {
    let h = 0x811c9dc5;
    for (let k = start; k < end; k++) h = Math.imul(h ^ buf[k], 0x01000193);
    return h >>> 0;
  }

  private static buildTable(bytes: Uint8Array, offs: Uint32Array): Int32Array {
    const n = offs.length - 1;
    let cap = 1;
    while (cap < n * 2) cap <<= 1;
    const table = new Int32Array(cap).fill(-1);
    const mask = cap - 1;
    for (let r = 0; r < n; r++) {
      let slot = RankTable.hash(bytes, offs[r], offs[r + 1]) & mask;
      while (table[slot] !== -1) slot = (slot + 1) & mask;
      table[slot] = r;
    }
    return table;
  }

  /** Rank of the byte string `buf[start, end)`, or −1 when it is not a token. */
  rank(buf: Uint8Array, start: number, end: number): number {
    const len = end - start;
    const { bytes, offs, table } = this;
    let slot = RankTable.hash(buf, start, end) & this.mask;
    for (;;) {
      const r = table[slot];
      if (r === -1) return -1;
      const o = offs[r];
      if (offs[r + 1] - o === len) {
        let k = 0;
        while (k < len && bytes[o + k] === buf[start + k]) k++;
        if (k === len) return r;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** The bytes of a rank (a view, not a copy). */
  tokenBytes(r: number): Uint8Array {
    return this.bytes.subarray(this.offs[r], this.offs[r + 1]);
  }
}

const B64 = new Int16Array(256).fill(-1);
'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.split('').forEach((c, k) => (B64[c.charCodeAt(0)] = k));

/**
 * Parses a tiktoken rank file (tiktoken `load_tiktoken_bpe` format): one
 * `base64(token bytes) SPACE rank` per line; empty lines are skipped.
 * Kimi numbers its special tokens from the count of ranks, so the ranks must be
 * exactly 0 … n−1, each once, and no token may repeat.
 * @param path the `tiktoken.model` file (named in errors).
 * @throws TokenizerLoadError `<path>:<line>: <problem>` for a malformed line
 *   (missing field, invalid base64, non-integer rank), a duplicate token or rank,
 *   missing ranks, or a missing single byte (BPE needs all 256).
 */
export function parseTiktokenModel(path: string, data: Uint8Array = readFileSync(path)): RankTable {
  const lines = new RankLines(path, data);
  lines.readAll();
  const table = lines.denseTable();
  lines.checkNoRepeats(table);
  checkAllSingleBytes(path, table);
  return table;
}

const isBlank = (v: number) => v === 0x20 || v === 0x09;

/** The lines of a rank file as read: each token's decoded bytes, its rank and its line (for the errors). */
class RankLines {
  /** Number of lines, an upper bound on the number of ranks (sizes the arrays). */
  private readonly lines: number;
  /** rank → index into tokStart / tokLen / lineOfIdx, −1 while unseen. */
  private readonly byRank: Int32Array;
  private readonly tokStart: Uint32Array;
  private readonly tokLen: Uint32Array;
  private readonly lineOfIdx: Uint32Array;
  /** Every token's bytes, decoded in file order. */
  private readonly decoded: Uint8Array;
  private outPos = 0;
  private count = 0;

  constructor(
    private readonly path: string,
    private readonly data: Uint8Array,
  ) {
    let lines = 1;
    for (let k = 0; k < data.length; k++) if (data[k] === 0x0a) lines++;
    this.lines = lines;
    this.byRank = new Int32Array(lines).fill(-1);
    this.tokStart = new Uint32Array(lines);
    this.tokLen = new Uint32Array(lines);
    this.lineOfIdx = new Uint32Array(lines);
    this.decoded = new Uint8Array(Math.ceil((data.length * 3) / 4));
  }

  private err(line: number, what: string): never {
    throw new TokenizerLoadError(`${this.path}:${line}: ${what}`);
  }

  /** Reads every line (LF or CRLF); a line of blanks only is skipped. */
  readAll(): void {
    const data = this.data;
    let lineNo = 0;
    let p = 0;
    while (p < data.length) {
      lineNo++;
      let eol = data.indexOf(0x0a, p);
      if (eol < 0) eol = data.length;
      let end = eol;
      if (end > p && data[end - 1] === 0x0d) end--;
      this.readLine(p, end, lineNo);
      p = eol + 1;
    }
  }

  /** One line `data[p, end)`: split on runs of spaces / tabs like Python's `str.split()`, then its token and rank. */
  private readLine(p: number, end: number, lineNo: number): void {
    const data = this.data;
    let a = p;
    while (a < end && isBlank(data[a])) a++;
    if (a === end) return;
    let b = a;
    while (b < end && !isBlank(data[b])) b++;
    let c = b;
    while (c < end && isBlank(data[c])) c++;
    let d = c;
    while (d < end && !isBlank(data[d])) d++;
    let e = d;
    while (e < end && isBlank(data[e])) e++;
    if (c === end) this.err(lineNo, 'expected "<base64 token> <rank>", found one field');
    if (e !== end) this.err(lineNo, 'expected "<base64 token> <rank>", found more than two fields');
    const rank = this.rankField(c, d, lineNo);
    const start = this.outPos;
    this.decodeToken(a, b, lineNo);
    if (this.outPos === start) this.err(lineNo, 'empty token');
    if (rank >= this.lines) this.err(lineNo, `rank ${rank} is not below the number of lines (${this.lines}); ranks must be 0…n−1`);
    if (this.byRank[rank] !== -1) this.err(lineNo, `rank ${rank} given twice (first on line ${this.lineOfIdx[this.byRank[rank]]})`);
    this.byRank[rank] = this.count;
    this.tokStart[this.count] = start;
    this.tokLen[this.count] = this.outPos - start;
    this.lineOfIdx[this.count] = lineNo;
    this.count++;
  }

  /** The rank field `data[c, d)`: decimal digits, at most 10. */
  private rankField(c: number, d: number, lineNo: number): number {
    const data = this.data;
    let rank = 0;
    for (let k = c; k < d; k++) {
      const v = data[k] - 0x30;
      if (v < 0 || v > 9 || d - c > 10)
        this.err(lineNo, `rank is not a non-negative integer: ${JSON.stringify(Buffer.from(data.subarray(c, d)).toString('latin1'))}`);
      rank = rank * 10 + v;
    }
    return rank;
  }

  /** Decodes the base64 token field `data[a, b)` onto the end of `decoded` (a hot loop: locals, no closures). */
  private decodeToken(a: number, b: number, lineNo: number): void {
    const data = this.data;
    const decoded = this.decoded;
    const n = b - a;
    let pad = 0;
    if (n > 0 && data[b - 1] === 0x3d) pad++;
    if (n > 1 && data[b - 2] === 0x3d) pad++;
    if (n % 4 !== 0 || n === 0) this.invalidToken(a, b, lineNo);
    let outPos = this.outPos;
    for (let k = a; k < b - pad; k += 4) {
      const q = Math.min(4, b - pad - k);
      let acc = 0;
      for (let j = 0; j < 4; j++) {
        let v = 0;
        if (j < q) {
          v = B64[data[k + j]];
          if (v < 0) this.invalidToken(a, b, lineNo);
        }
        acc = (acc << 6) | v;
      }
      decoded[outPos++] = (acc >> 16) & 0xff;
      if (q > 2) decoded[outPos++] = (acc >> 8) & 0xff;
      if (q > 3) decoded[outPos++] = acc & 0xff;
    }
    this.outPos = outPos;
  }

  private invalidToken(a: number, b: number, lineNo: number): never {
    this.err(lineNo, `token is not valid base64: ${JSON.stringify(Buffer.from(this.data.subarray(a, b)).toString('latin1'))}`);
  }

  /** The tokens in rank order as a table. @throws TokenizerLoadError when a rank in 0…count−1 is missing */
  denseTable(): RankTable {
    const { count, byRank, tokStart, tokLen } = this;
    const offs = new Uint32Array(count + 1);
    const bytes = new Uint8Array(this.outPos);
    let o = 0;
    for (let r = 0; r < count; r++) {
      const idx = byRank[r];
      if (idx === -1) throw new TokenizerLoadError(`${this.path}: rank ${r} is missing (${count} ranks must be 0…${count - 1})`);
      offs[r] = o;
      bytes.set(this.decoded.subarray(tokStart[idx], tokStart[idx] + tokLen[idx]), o);
      o += tokLen[idx];
    }
    offs[count] = o;
    return new RankTable(bytes, offs);
  }

  /** Duplicate tokens: each rank's bytes must look up to itself. @throws TokenizerLoadError naming both lines */
  checkNoRepeats(table: RankTable): void {
    const { bytes, offs } = table;
    const { byRank, lineOfIdx } = this;
    for (let r = 0; r < this.count; r++) {
      const got = table.rank(bytes, offs[r], offs[r + 1]);
      if (got !== r)
        throw new TokenizerLoadError(`${this.path}:${lineOfIdx[byRank[r]]}: token repeats the one on line ${lineOfIdx[byRank[got]]} (ranks ${got} and ${r})`);
    }
  }
}

/** Byte-level BPE needs a rank for each of the 256 single bytes. @throws TokenizerLoadError naming the first missing */
function checkAllSingleBytes(path: string, table: RankTable): void {
  const one = new Uint8Array(1);
  for (let v = 0; v < 256; v++) {
    one[0] = v;
    if (table.rank(one, 0, 1) < 0)
      throw new TokenizerLoadError(`${path}: no rank for the single byte 0x${v.toString(16).padStart(2, '0')} (byte-level BPE needs all 256)`);
  }
}
