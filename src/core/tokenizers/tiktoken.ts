/**
 * Tokenizers shipped as a tiktoken rank file (`tiktoken.model`), as Moonshot AI
 * publishes Kimi-K2 / K2.5: `tiktoken.model` + `tokenizer_config.json`
 * (`tokenizer_class` `TikTokenTokenizer`, `added_tokens_decoder`) and the
 * model's own `tokenization_kimi.py`.
 *
 * The encoder reproduces, in this order:
 * 0. transformers' split of the text on the added (special) tokens, each matched
 *    as its id (tokenization_kimi.py's tiktoken call would match them too:
 *    `allowed_special="all"`);
 * 1. `tokenization_kimi.py` `TikTokenTokenizer.encode` on the text between them: it is cut into
 *    chunks of at most 400,000 code points, and each chunk wherever a run of
 *    consecutive whitespace (Python `str.isspace`) or non-whitespace characters
 *    exceeds 25,000 code points ({@link kimiSubstrings});
 * 2. tiktoken `Encoding.encode` on each piece: the text is split by the
 *    pre-tokenizer pattern `pat_str` ({@link KIMI_PAT_STR}, translated to a JS
 *    RegExp by {@link translatePattern}) and each pre-token is encoded by
 *    byte-level BPE over the ranks: a pre-token that is itself a rank is one
 *    token, otherwise the adjacent pair whose concatenation has the lowest rank is
 *    merged, leftmost first, until no adjacent pair is a rank ({@link bpeMerge}).
 *
 * Special ids follow tokenization_kimi.py: the 256 ids `n_base … n_base+255`
 * after the `n_base` ranks are named by `added_tokens_decoder` (by id) and the
 * unnamed ones are `<|reserved_token_{id}|>`; nothing is renumbered.
 *
 * The parsed rank table is cached as a binary file keyed by the sha256 of
 * `tiktoken.model` (see {@link tiktokenCacheDir}).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { byteLevelDecoder, readChatTemplates, readJson, specialTokenVarsOf, stopTokensOf, tokenizerFilesHashOf } from './modelFolder';
import { TokenizerLoadError, type EncodedText, type TargetTokenizer } from './types';

/**
 * Kimi's pre-tokenizer pattern, verbatim from `TikTokenTokenizer.pat_str` in
 * `tokenization_kimi.py` as published with Kimi-K2 (fancy-regex syntax: `&&` is
 * character-class intersection, `\p{Han}` the Han script, `(?i:…)` case-insensitive).
 */
export const KIMI_PAT_STR = [
  String.raw`[\p{Han}]+`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
  String.raw`\p{N}{1,3}`,
  String.raw` ?[^\s\p{L}\p{N}]+[\r\n]*`,
  String.raw`\s*[\r\n]+`,
  String.raw`\s+(?!\S)`,
  String.raw`\s+`,
].join('|');

/** Number of special ids after the ranks (`TikTokenTokenizer.num_reserved_special_tokens` in tokenization_kimi.py). */
export const KIMI_NUM_RESERVED_SPECIAL = 256;
/** tokenization_kimi.py `TIKTOKEN_MAX_ENCODE_CHARS`: chunk length, in code points. */
export const TIKTOKEN_MAX_ENCODE_CHARS = 400_000;
/** tokenization_kimi.py `MAX_NO_WHITESPACES_CHARS`: longest run of whitespace / non-whitespace code points encoded in one piece. */
export const MAX_NO_WHITESPACES_CHARS = 25_000;

// ---------------------------------------------------------------------------
// Pattern translation (fancy-regex → JS RegExp with the `v` flag)

const caseVariantCache = new Map<string, string[]>();
/** All characters that match `ch` under Unicode simple case folding (as `(?i)` does in Rust's regex and `/…/iu` in JS), e.g. s → s, S, ſ. */
function caseVariants(ch: string): string[] {
  let v = caseVariantCache.get(ch);
  if (v) return v;
  const re = new RegExp(`^${ch.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')}$`, 'iu');
  v = [];
  // ASCII letters fold only with their other case, plus K (U+212A, Kelvin) for k and ſ (U+017F, long s) for s.
  if (/^[A-Za-z]$/.test(ch)) {
    for (const c of [ch, ch.toLowerCase(), ch.toUpperCase(), '\u212a', '\u017f']) if (!v.includes(c) && re.test(c)) v.push(c);
    caseVariantCache.set(ch, v);
    return v;
  }
  for (let cp = 0; cp < 0x10000; cp++) {
    const c = String.fromCharCode(cp);
    if (re.test(c)) v.push(c);
  }
  for (const c of [ch.toLowerCase(), ch.toUpperCase()]) if ([...c].length === 1 && !v.includes(c) && re.test(c)) v.push(c);
  caseVariantCache.set(ch, v);
  return v;
}

const CLASS_SYNTAX = new Set([...'()[]{}/-|\\^$.*+?&!#%,:;<=>@`~']);
function classLiteral(ch: string): string {
  return CLASS_SYNTAX.has(ch) ? '\\' + ch : ch;
}

function propertyEscape(name: string, negated: boolean, pat: string): string {
  const p = negated ? 'P' : 'p';
  for (const candidate of [name, `Script=${name}`]) {
    try {
      new RegExp(`\\${p}{${candidate}}`, 'v');
      return `\\${p}{${candidate}}`;
    } catch {
      /* try the next reading */
    }
  }
  throw new Error(`pre-tokenizer pattern: unsupported Unicode property \\${p}{${name}} in ${JSON.stringify(pat)}`);
}

/**
 * Translates a tiktoken pre-tokenizer pattern (Rust fancy-regex syntax, as in
 * tiktoken's `pat_str`) into the source of an equivalent JS RegExp for the `v`
 * flag (Node ≥ 20). Rules: `\s`/`\S` → `\p{White_Space}` (Rust's Unicode `\s`;
 * JS `\s` differs on U+0085 and U+FEFF), `\d` → `\p{Nd}`, `\p{Han}`-style script
 * names → `\p{Script=Han}`, a class with `&&` → v-flag set intersection of its
 * bracketed operands, `(?i:…)` → a group whose letters are expanded to their
 * case-folding variants (JS RegExp in Node 20 lacks inline modifiers).
 * @param pat the pattern string (e.g. {@link KIMI_PAT_STR}).
 * @returns the JS pattern source; compile with flags `gv`.
 * @throws Error naming the pattern for constructs it does not translate (other inline flags, unknown properties, unbalanced brackets).
 */
export function translatePattern(pat: string): string {
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`pre-tokenizer pattern: ${what} at offset ${i} of ${JSON.stringify(pat)}`);
  };
  // Reads one escape starting at pat[i] === '\\'; returns its JS form (for use inside or outside a class).
  const escape = (inClass: boolean, ci: boolean): string => {
    const c = pat[i + 1];
    if (c === undefined) fail('dangling backslash');
    if (c === 'p' || c === 'P') {
      let name: string;
      if (pat[i + 2] === '{') {
        const end = pat.indexOf('}', i + 3);
        if (end < 0) fail('unterminated \\p{');
        name = pat.slice(i + 3, end);
        i = end + 1;
      } else {
        name = pat[i + 2];
        i += 3;
      }
      return propertyEscape(name, c === 'P', pat);
    }
    i += 2;
    switch (c) {
      case 's':
        return '\\p{White_Space}';
      case 'S':
        return '\\P{White_Space}';
      case 'd':
        return '\\p{Nd}';
      case 'D':
        return '\\P{Nd}';
      case 'r':
      case 'n':
      case 't':
      case 'f':
      case 'v':
        return '\\' + c;
      default:
        if (/[A-Za-z0-9]/.test(c)) fail(`unsupported escape \\${c}`);
        if (ci && !inClass) return literal(c, ci, inClass);
        return inClass ? classLiteral(c) : '\\' + c;
    }
  };
  const literal = (ch: string, ci: boolean, inClass: boolean): string => {
    if (ci && /\p{L}/u.test(ch)) {
      const v = caseVariants(ch).map(classLiteral).join('');
      return inClass ? v : `[${v}]`;
    }
    if (inClass) return classLiteral(ch);
    return /[\\^$.*+?()[\]{}|/]/.test(ch) ? '\\' + ch : ch;
  };
  // Parses a class starting at pat[i] === '['; returns the v-flag class source.
  const klass = (ci: boolean): string => {
    i++;
    let neg = '';
    if (pat[i] === '^') {
      neg = '^';
      i++;
    }
    const operands: string[] = [];
    let cur = '';
    let first = true;
    for (;;) {
      if (i >= pat.length) fail('unterminated character class');
      const c = pat[i];
      if (c === ']' && !first) {
        i++;
        break;
      }
      first = false;
      if (c === '&' && pat[i + 1] === '&') {
        operands.push(cur);
        cur = '';
        i += 2;
      } else if (c === '[') cur += klass(ci);
      else if (c === '\\') cur += escape(true, ci);
      else {
        const ch = String.fromCodePoint(pat.codePointAt(i)!);
        i += ch.length;
        if (pat[i] === '-' && pat[i + 1] !== ']' && pat[i + 1] !== undefined) {
          const hi = String.fromCodePoint(pat.codePointAt(i + 1)!);
          i += 1 + hi.length;
          if (ci) fail('case-insensitive class range');
          cur += `${classLiteral(ch)}-${classLiteral(hi)}`;
        } else cur += literal(ch, ci, true);
      }
    }
    operands.push(cur);
    if (operands.length === 1) return `[${neg}${operands[0]}]`;
    return `[${neg}${operands.map((o) => `[${o}]`).join('&&')}]`;
  };
  let out = '';
  const ciStack: boolean[] = [false];
  while (i < pat.length) {
    const ci = ciStack[ciStack.length - 1];
    const c = pat[i];
    if (c === '\\') out += escape(false, ci);
    else if (c === '[') out += klass(ci);
    else if (c === '(') {
      if (pat.startsWith('(?i:', i)) {
        out += '(?:';
        ciStack.push(true);
        i += 4;
      } else if (pat[i + 1] === '?') {
        const m = /^\(\?(?::|=|!|<=|<!)/.exec(pat.slice(i));
        if (!m) fail('unsupported group syntax');
        out += m![0];
        ciStack.push(ci);
        i += m![0].length;
      } else {
        out += '(?:'; // capture groups are not needed; keep matching identical
        ciStack.push(ci);
        i++;
      }
    } else if (c === ')') {
      if (ciStack.length === 1) fail('unbalanced )');
      ciStack.pop();
      out += ')';
      i++;
    } else if ('|*+?.^$'.includes(c)) {
      out += c;
      i++;
    } else if (c === '{') {
      const m = /^\{\d+(,\d*)?\}/.exec(pat.slice(i));
      if (!m) fail('bad repetition');
      out += m![0];
      i += m![0].length;
    } else {
      const ch = String.fromCodePoint(pat.codePointAt(i)!);
      i += ch.length;
      out += literal(ch, ci, false);
    }
  }
  if (ciStack.length !== 1) fail('unbalanced (');
  return out;
}

// ---------------------------------------------------------------------------
// Kimi's pre-splitting (tokenization_kimi.py)

/**
 * Python `str.isspace()` for one code point (characters of bidi class WS, B or S,
 * or category Zs): tokenization_kimi.py uses it to find whitespace runs.
 */
export function pythonIsSpace(cp: number): boolean {
  if (cp <= 0x20) return cp === 0x20 || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f);
  if (cp < 0x85) return false;
  return (
    cp === 0x85 ||
    cp === 0xa0 ||
    cp === 0x1680 ||
    (cp >= 0x2000 && cp <= 0x200a) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    cp === 0x202f ||
    cp === 0x205f ||
    cp === 0x3000
  );
}

/**
 * The substrings `tokenization_kimi.py` `TikTokenTokenizer.encode` hands to
 * tiktoken one by one: chunks of {@link TIKTOKEN_MAX_ENCODE_CHARS} code points,
 * each cut by `_split_whitespaces_or_nonwhitespaces` so that no piece holds
 * more than {@link MAX_NO_WHITESPACES_CHARS} consecutive whitespace or
 * non-whitespace code points (a cut falls before the code point that would
 * exceed the limit). Lengths are counted in code points as Python does.
 * @returns `[start, end)` ranges in UTF-16 units covering `text` in order (one
 *   empty range for the empty string, as Python yields `''`).
 */
export function kimiSubstrings(text: string, maxChunk = TIKTOKEN_MAX_ENCODE_CHARS, maxRun = MAX_NO_WHITESPACES_CHARS): [number, number][] {
  if (text.length <= maxRun) return [[0, text.length]];
  const out: [number, number][] = [];
  let u = 0;
  while (u < text.length) {
    // One chunk: up to maxChunk code points starting at u.
    let sliceStart = u;
    let runLen = 0;
    let runIsSpace = pythonIsSpace(text.codePointAt(u)!);
    let n = 0;
    while (u < text.length && n < maxChunk) {
      const cp = text.codePointAt(u)!;
      const sp = pythonIsSpace(cp);
      if (sp !== runIsSpace) {
        runLen = 1;
        runIsSpace = sp;
      } else if (++runLen > maxRun) {
        out.push([sliceStart, u]);
        sliceStart = u;
        runLen = 1;
      }
      u += cp > 0xffff ? 2 : 1;
      n++;
    }
    out.push([sliceStart, u]);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Rank table: token bytes ↔ rank, with an open-addressing hash over bytes

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
  const err = (line: number, what: string): never => {
    throw new TokenizerLoadError(`${path}:${line}: ${what}`);
  };
  // First pass: count lines to size the arrays.
  let lines = 1;
  for (let k = 0; k < data.length; k++) if (data[k] === 0x0a) lines++;
  const byRank = new Int32Array(lines).fill(-1); // rank → index into starts/lens
  const tokStart = new Uint32Array(lines);
  const tokLen = new Uint32Array(lines);
  const lineOfIdx = new Uint32Array(lines);
  const decoded = new Uint8Array(Math.ceil((data.length * 3) / 4));
  let outPos = 0;
  let count = 0;
  let lineNo = 0;
  let p = 0;
  while (p < data.length) {
    lineNo++;
    let eol = data.indexOf(0x0a, p);
    if (eol < 0) eol = data.length;
    let end = eol;
    if (end > p && data[end - 1] === 0x0d) end--;
    // Split on runs of spaces/tabs like Python's str.split().
    let a = p;
    while (a < end && (data[a] === 0x20 || data[a] === 0x09)) a++;
    if (a === end) {
      p = eol + 1;
      continue;
    }
    let b = a;
    while (b < end && data[b] !== 0x20 && data[b] !== 0x09) b++;
    let c = b;
    while (c < end && (data[c] === 0x20 || data[c] === 0x09)) c++;
    let d = c;
    while (d < end && data[d] !== 0x20 && data[d] !== 0x09) d++;
    let e = d;
    while (e < end && (data[e] === 0x20 || data[e] === 0x09)) e++;
    if (c === end) err(lineNo, 'expected "<base64 token> <rank>", found one field');
    if (e !== end) err(lineNo, 'expected "<base64 token> <rank>", found more than two fields');
    // Rank.
    let rank = 0;
    for (let k = c; k < d; k++) {
      const v = data[k] - 0x30;
      if (v < 0 || v > 9 || d - c > 10)
        err(lineNo, `rank is not a non-negative integer: ${JSON.stringify(Buffer.from(data.subarray(c, d)).toString('latin1'))}`);
      rank = rank * 10 + v;
    }
    // Base64 token.
    const n = b - a;
    let pad = 0;
    if (n > 0 && data[b - 1] === 0x3d) pad++;
    if (n > 1 && data[b - 2] === 0x3d) pad++;
    if (n % 4 !== 0 || n === 0) err(lineNo, `token is not valid base64: ${JSON.stringify(Buffer.from(data.subarray(a, b)).toString('latin1'))}`);
    const start = outPos;
    for (let k = a; k < b - pad; k += 4) {
      const q = Math.min(4, b - pad - k);
      let acc = 0;
      for (let j = 0; j < 4; j++) {
        let v = 0;
        if (j < q) {
          v = B64[data[k + j]];
          if (v < 0) err(lineNo, `token is not valid base64: ${JSON.stringify(Buffer.from(data.subarray(a, b)).toString('latin1'))}`);
        }
        acc = (acc << 6) | v;
      }
      decoded[outPos++] = (acc >> 16) & 0xff;
      if (q > 2) decoded[outPos++] = (acc >> 8) & 0xff;
      if (q > 3) decoded[outPos++] = acc & 0xff;
    }
    if (outPos === start) err(lineNo, 'empty token');
    if (rank >= lines) err(lineNo, `rank ${rank} is not below the number of lines (${lines}); ranks must be 0…n−1`);
    if (byRank[rank] !== -1) err(lineNo, `rank ${rank} given twice (first on line ${lineOfIdx[byRank[rank]]})`);
    byRank[rank] = count;
    tokStart[count] = start;
    tokLen[count] = outPos - start;
    lineOfIdx[count] = lineNo;
    count++;
    p = eol + 1;
  }
  // Dense ranks, in rank order.
  const offs = new Uint32Array(count + 1);
  const bytes = new Uint8Array(outPos);
  let o = 0;
  for (let r = 0; r < count; r++) {
    const idx = byRank[r];
    if (idx === -1) throw new TokenizerLoadError(`${path}: rank ${r} is missing (${count} ranks must be 0…${count - 1})`);
    offs[r] = o;
    bytes.set(decoded.subarray(tokStart[idx], tokStart[idx] + tokLen[idx]), o);
    o += tokLen[idx];
  }
  offs[count] = o;
  const table = new RankTable(bytes, offs);
  // Duplicate tokens: each rank's bytes must look up to itself.
  for (let r = 0; r < count; r++) {
    const got = table.rank(bytes, offs[r], offs[r + 1]);
    if (got !== r)
      throw new TokenizerLoadError(`${path}:${lineOfIdx[byRank[r]]}: token repeats the one on line ${lineOfIdx[byRank[got]]} (ranks ${got} and ${r})`);
  }
  const one = new Uint8Array(1);
  for (let v = 0; v < 256; v++) {
    one[0] = v;
    if (table.rank(one, 0, 1) < 0)
      throw new TokenizerLoadError(`${path}: no rank for the single byte 0x${v.toString(16).padStart(2, '0')} (byte-level BPE needs all 256)`);
  }
  return table;
}

// ---------------------------------------------------------------------------
// BPE (tiktoken `byte_pair_merge` rule)

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
  const n = end - start;
  if (n <= 256 && !forceHeap) {
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
    return;
  }
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
  // Heap of (rank, pos, version) triples.
  let hr = new Int32Array(n * 2);
  let hp = new Int32Array(n * 2);
  let hv = new Int32Array(n * 2);
  let hn = 0;
  const less = (a: number, b: number) => hr[a] < hr[b] || (hr[a] === hr[b] && hp[a] < hp[b]);
  const swap = (a: number, b: number) => {
    let t = hr[a];
    hr[a] = hr[b];
    hr[b] = t;
    t = hp[a];
    hp[a] = hp[b];
    hp[b] = t;
    t = hv[a];
    hv[a] = hv[b];
    hv[b] = t;
  };
  const push = (r: number, p: number, v: number) => {
    if (hn === hr.length) {
      const grow = (x: Int32Array) => {
        const y = new Int32Array(x.length * 2);
        y.set(x);
        return y;
      };
      hr = grow(hr);
      hp = grow(hp);
      hv = grow(hv);
    }
    let k = hn++;
    hr[k] = r;
    hp[k] = p;
    hv[k] = v;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (!less(k, parent)) break;
      swap(k, parent);
      k = parent;
    }
  };
  const pop = () => {
    hn--;
    swap(0, hn);
    let k = 0;
    for (;;) {
      const l = 2 * k + 1;
      const r = l + 1;
      let m = k;
      if (l < hn && less(l, m)) m = l;
      if (r < hn && less(r, m)) m = r;
      if (m === k) break;
      swap(k, m);
      k = m;
    }
  };
  const linkRank = (p: number) => {
    const q = next[p];
    if (q >= n) return -1;
    return ranks.rank(buf, start + p, start + next[q]);
  };
  const refresh = (p: number) => {
    ver[p]++;
    const r = linkRank(p);
    if (r >= 0) push(r, p, ver[p]);
  };
  for (let p = 0; p < n - 1; p++) {
    const r = linkRank(p);
    if (r >= 0) push(r, p, 0);
  }
  while (hn > 0) {
    const p = hp[0];
    const v = hv[0];
    pop();
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

// ---------------------------------------------------------------------------
// Encoder

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

/**
 * tiktoken-style encoder over a {@link RankTable}: Kimi pre-splitting, special
 * tokens matched in the text, the pre-tokenizer pattern, and rank BPE.
 */
export class TiktokenEncoder {
  private readonly pattern: RegExp;
  private readonly specialRe: RegExp | null;
  private readonly specialIds = new Map<string, number>();
  private readonly specialById = new Map<number, string>();
  private readonly cache = new Map<string, { ids: number[]; rel: number[] }>();
  private scratch = new Uint8Array(1024);
  private scratchUnit = new Int32Array(1024);

  /**
   * @param ranks the base vocabulary
   * @param specials special-token string → id (matched in the text, longest first at a position)
   * @param patStr pre-tokenizer pattern in tiktoken (fancy-regex) syntax
   * @throws Error when the pattern cannot be translated
   */
  constructor(
    readonly ranks: RankTable,
    specials: Map<string, number>,
    patStr: string = KIMI_PAT_STR,
  ) {
    this.pattern = new RegExp(translatePattern(patStr), 'gv');
    for (const [s, id] of specials) {
      this.specialIds.set(s, id);
      this.specialById.set(id, s);
    }
    const names = [...specials.keys()].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
    this.specialRe = names.length ? new RegExp(names.map(escapeRegExp).join('|'), 'g') : null;
  }

  /** Id of a special-token string, if it is one. */
  specialId(s: string): number | undefined {
    return this.specialIds.get(s);
  }
  /** Special-token string of an id, if it is one. */
  specialName(id: number): string | undefined {
    return this.specialById.get(id);
  }

  /**
   * Encodes text as the serving stack does with Kimi's tokenizer: transformers
   * first splits the text on the added (special) tokens, then hands each piece
   * between them to tokenization_kimi.py `encode` (Kimi's chunking of long runs,
   * then tiktoken with `allowed_special="all"`). Special tokens are matched
   * longest first at a position. For text without runs over 25,000 code points
   * this equals calling tokenization_kimi.py `encode(text)` directly; with such a
   * run next to a special token, the special token stays whole here (a direct
   * `encode` could cut it).
   * @returns ids and, per token, the UTF-16 index in `text` of the character
   *   holding its first byte.
   */
  encode(text: string): { ids: number[]; starts: number[] } {
    const ids: number[] = [];
    const starts: number[] = [];
    // Lone surrogates: tiktoken's Python wrapper re-encodes them as U+FFFD; so does UTF-8 encoding below (same length).
    const t = text.isWellFormed() ? text : text.toWellFormed();
    let pos = 0;
    if (this.specialRe) {
      const re = this.specialRe;
      re.lastIndex = 0;
      for (let m = re.exec(t); m; m = re.exec(t)) {
        this.encodeChunked(t, pos, m.index, ids, starts);
        ids.push(this.specialIds.get(m[0])!);
        starts.push(m.index);
        pos = m.index + m[0].length;
      }
    }
    this.encodeChunked(t, pos, t.length, ids, starts);
    return { ids, starts };
  }

  /** Kimi's chunking ({@link kimiSubstrings}) of `text[a, b)` (no special tokens inside), each chunk encoded ordinarily. */
  private encodeChunked(text: string, a: number, b: number, ids: number[], starts: number[]): void {
    if (b - a <= MAX_NO_WHITESPACES_CHARS) return this.encodeOrdinary(text, a, b, ids, starts);
    for (const [x, y] of kimiSubstrings(text.slice(a, b))) this.encodeOrdinary(text, a + x, a + y, ids, starts);
  }

  /** tiktoken `encode_ordinary` on `text[a, b)`: pre-tokenize with the pattern, BPE each piece. */
  private encodeOrdinary(text: string, a: number, b: number, ids: number[], starts: number[]): void {
    if (a >= b) return;
    const seg = a === 0 && b === text.length ? text : text.slice(a, b);
    const re = this.pattern;
    re.lastIndex = 0;
    const tmpIds: number[] = [];
    const tmpPos: number[] = [];
    for (let m = re.exec(seg); m; m = re.exec(seg)) {
      const piece = m[0];
      if (piece.length === 0) {
        re.lastIndex++;
        continue;
      }
      const base = a + m.index;
      const hit = piece.length <= 64 ? this.cache.get(piece) : undefined;
      if (hit) {
        for (let k = 0; k < hit.ids.length; k++) {
          ids.push(hit.ids[k]);
          starts.push(base + hit.rel[k]);
        }
        continue;
      }
      const n = this.utf8(piece);
      tmpIds.length = 0;
      tmpPos.length = 0;
      bpeMerge(this.ranks, this.scratch, 0, n, tmpIds, tmpPos);
      const rel = tmpPos.map((p) => this.scratchUnit[p]);
      for (let k = 0; k < tmpIds.length; k++) {
        ids.push(tmpIds[k]);
        starts.push(base + rel[k]);
      }
      if (piece.length <= 64) {
        if (this.cache.size >= 100_000) this.cache.clear();
        this.cache.set(piece, { ids: tmpIds.slice(), rel });
      }
    }
  }

  /** UTF-8 encodes `s` into the scratch buffer, recording for each byte the UTF-16 index of its character; returns the byte length. */
  private utf8(s: string): number {
    if (this.scratch.length < s.length * 3) {
      this.scratch = new Uint8Array(s.length * 3);
      this.scratchUnit = new Int32Array(s.length * 3);
    }
    const buf = this.scratch;
    const unit = this.scratchUnit;
    let o = 0;
    for (let u = 0; u < s.length; u++) {
      const c = s.charCodeAt(u);
      if (c < 0x80) {
        unit[o] = u;
        buf[o++] = c;
      } else if (c < 0x800) {
        unit[o] = unit[o + 1] = u;
        buf[o++] = 0xc0 | (c >> 6);
        buf[o++] = 0x80 | (c & 63);
      } else if (c >= 0xd800 && c <= 0xdbff && u + 1 < s.length) {
        const cp = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(u + 1) - 0xdc00);
        unit[o] = unit[o + 1] = unit[o + 2] = unit[o + 3] = u;
        buf[o++] = 0xf0 | (cp >> 18);
        buf[o++] = 0x80 | ((cp >> 12) & 63);
        buf[o++] = 0x80 | ((cp >> 6) & 63);
        buf[o++] = 0x80 | (cp & 63);
        u++;
      } else {
        unit[o] = unit[o + 1] = unit[o + 2] = u;
        buf[o++] = 0xe0 | (c >> 12);
        buf[o++] = 0x80 | ((c >> 6) & 63);
        buf[o++] = 0x80 | (c & 63);
      }
    }
    return o;
  }

  /** Decodes ids to text (UTF-8, invalid sequences as U+FFFD), special tokens written as their strings; unknown ids are skipped. */
  decode(ids: number[]): string {
    const parts: Uint8Array[] = [];
    for (const id of ids) {
      const sp = this.specialById.get(id);
      if (sp !== undefined) parts.push(Buffer.from(sp, 'utf8'));
      else if (id >= 0 && id < this.ranks.size) parts.push(this.ranks.tokenBytes(id));
    }
    return Buffer.concat(parts).toString('utf8');
  }
}

// ---------------------------------------------------------------------------
// Cache of the parsed rank table

const CACHE_MAGIC = 0x45335454; // "E3TT"
const CACHE_VERSION = 1;

/**
 * Folder for converted tokenizer caches: `$XDG_CACHE_HOME/eagle3-prep` when
 * XDG_CACHE_HOME is set, else `os.tmpdir()/eagle3-prep-cache`.
 */
export function tiktokenCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return xdg ? join(xdg, 'eagle3-prep') : join(tmpdir(), 'eagle3-prep-cache');
}

function readCache(path: string): RankTable | null {
  try {
    const buf = readFileSync(path);
    const head = new Uint32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + 16));
    if (head[0] !== CACHE_MAGIC || head[1] !== CACHE_VERSION) return null;
    const n = head[2];
    const tableLen = head[3];
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
    let o = 16;
    const offs = new Uint32Array(ab, o, n + 1);
    o += (n + 1) * 4;
    const table = new Int32Array(ab, o, tableLen);
    o += tableLen * 4;
    const bytes = new Uint8Array(ab, o, offs[n]);
    if (o + offs[n] !== buf.length) return null;
    return new RankTable(bytes, offs, table);
  } catch {
    return null;
  }
}

function writeCache(path: string, t: RankTable): void {
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    const head = new Uint32Array([CACHE_MAGIC, CACHE_VERSION, t.size, t.table.length]);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(
      tmp,
      Buffer.concat([
        Buffer.from(head.buffer),
        Buffer.from(t.offs.buffer, t.offs.byteOffset, t.offs.byteLength),
        Buffer.from(t.table.buffer, t.table.byteOffset, t.table.byteLength),
        Buffer.from(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength),
      ]),
    );
    renameSync(tmp, path);
  } catch {
    /* a cache that cannot be written only costs time */
  }
}

/**
 * Loads the rank table of a `tiktoken.model`, from the cache when a cache file
 * for its sha256 exists (see {@link tiktokenCacheDir}), else by parsing it and
 * writing the cache. Cache failures are silent (only time is lost).
 * @param useCache false = always parse (tests, benchmarks).
 * @returns the table and the file's sha256 (hex).
 * @throws TokenizerLoadError from {@link parseTiktokenModel}.
 */
export function loadRankTable(modelPath: string, useCache = true): { ranks: RankTable; sha256: string; fromCache: boolean } {
  const data = readFileSync(modelPath);
  const sha256 = createHash('sha256').update(data).digest('hex');
  const cachePath = join(tiktokenCacheDir(), `tiktoken-${sha256.slice(0, 32)}.bin`);
  if (useCache) {
    const cached = readCache(cachePath);
    if (cached) return { ranks: cached, sha256, fromCache: true };
  }
  const ranks = parseTiktokenModel(modelPath, data);
  if (useCache) writeCache(cachePath, ranks);
  return { ranks, sha256, fromCache: false };
}

// ---------------------------------------------------------------------------
// Model folder loader

/** Options of {@link loadTiktokenTokenizer}. */
export interface TiktokenLoadOptions {
  /** Pre-tokenizer pattern; default {@link KIMI_PAT_STR}. */
  patStr?: string;
  /** Use the rank-table cache (default true). */
  useCache?: boolean;
}

/**
 * Loads a tiktoken tokenizer in Kimi's model-folder layout: `tiktoken.model`
 * (ranks), `tokenizer_config.json` (`added_tokens_decoder` `{id: {content,
 * special}}`, `bos_token`/`eos_token`/`pad_token`/`unk_token`, `chat_template`)
 * and optionally `chat_template.jinja` / `chat_template.json`.
 *
 * Special tokens follow tokenization_kimi.py: ids `n_base … n_base+255` (n_base =
 * number of ranks) take their name from `added_tokens_decoder` by id, unnamed ones
 * are `<|reserved_token_{id}|>`; added tokens outside that range keep their id
 * too (transformers matches them before the tokenizer runs). All of them are
 * matched in the text (`allowed_special="all"`), before Kimi's chunking of long
 * runs (see {@link TiktokenEncoder.encode}). `bos_token`/`eos_token` default
 * to `[BOS]`/`[EOS]` as in tokenization_kimi.py when the config omits them.
 *
 * @param dir the model folder.
 * @returns a {@link TargetTokenizer}; `encode` gives ids and UTF-16 token starts
 *   (exact by construction), `specialTokens` = contents of added tokens marked
 *   `special`, `hash` = sha256 (16 hex) over the tokenizer files' names and bytes.
 * @throws TokenizerLoadError naming the folder or file (and line, for the rank file);
 *   also when `tokenizer_class` is set to something other than `TikTokenTokenizer`,
 *   or when a `tokenization_kimi.py` in the folder defines a different `pat_str`.
 */
export function loadTiktokenTokenizer(dir: string, options: TiktokenLoadOptions = {}): TargetTokenizer {
  const folder = resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new TokenizerLoadError(`tokenizer folder not found: ${folder}`);
  const modelPath = join(folder, 'tiktoken.model');
  if (!existsSync(modelPath)) throw new TokenizerLoadError(`${folder}: no tiktoken.model`);
  const tcPath = join(folder, 'tokenizer_config.json');
  const config: any = existsSync(tcPath) ? readJson(tcPath) : {};
  if (config.tokenizer_class !== undefined && config.tokenizer_class !== 'TikTokenTokenizer') {
    throw new TokenizerLoadError(
      `${tcPath}: tokenizer_class ${JSON.stringify(config.tokenizer_class)} with tiktoken.model; only Kimi's TikTokenTokenizer layout is supported`,
    );
  }
  const patStr = options.patStr ?? KIMI_PAT_STR;
  // The model's own tokenization_kimi.py, when shipped, must hold the same pattern (each alternative verbatim).
  const pyPath = join(folder, 'tokenization_kimi.py');
  if (options.patStr === undefined && existsSync(pyPath)) {
    const py = readFileSync(pyPath, 'utf8');
    const missing = KIMI_PAT_STR.split('|').filter((alt) => !py.includes(alt));
    if (py.includes('pat_str') && missing.length)
      throw new TokenizerLoadError(`${pyPath}: its pat_str differs from Kimi's known pattern (not found: ${missing.map((m) => JSON.stringify(m)).join(', ')})`);
  }
  const { ranks, sha256 } = loadRankTable(modelPath, options.useCache ?? true);
  const nBase = ranks.size;

  const decoder: Record<string, { content?: unknown; special?: unknown }> = config.added_tokens_decoder ?? {};
  if (typeof decoder !== 'object' || Array.isArray(decoder)) throw new TokenizerLoadError(`${tcPath}: added_tokens_decoder is not an object`);
  const specials = new Map<string, number>();
  const specialTokens: string[] = [];
  const named = new Map<number, string>();
  for (const [key, v] of Object.entries(decoder)) {
    const id = Number(key);
    if (!Number.isInteger(id) || id < 0 || typeof v?.content !== 'string')
      throw new TokenizerLoadError(`${tcPath}: added_tokens_decoder entry ${JSON.stringify(key)} needs an integer id and a string content`);
    named.set(id, v.content);
    if (v.special === true) specialTokens.push(v.content);
  }
  for (let id = nBase; id < nBase + KIMI_NUM_RESERVED_SPECIAL; id++) specials.set(named.get(id) ?? `<|reserved_token_${id}|>`, id);
  for (const [id, content] of named) {
    if (id >= nBase && id < nBase + KIMI_NUM_RESERVED_SPECIAL) continue;
    if (specials.has(content)) continue;
    specials.set(content, id);
  }
  const enc = new TiktokenEncoder(ranks, specials, patStr);

  const specialTokenVars = specialTokenVarsOf(config, { bos_token: '[BOS]', eos_token: '[EOS]' });
  // tiktoken.model enters the hash by its sha256 (already computed for the cache key), not its bytes again.
  const hash = tokenizerFilesHashOf(folder, sha256);

  const byteToChar = new Map<number, string>();
  for (const [ch, b] of byteLevelDecoder()) byteToChar.set(b, ch);
  const stops = stopTokensOf(
    folder,
    specialTokenVars,
    (id) => enc.specialName(id) ?? (Number.isInteger(id) && id >= 0 && id < nBase ? enc.decode([id]) : undefined),
  );

  return {
    dir: folder,
    name: basename(folder),
    hash,
    embeddedDefault: false,
    templates: readChatTemplates(folder, config),
    specialTokenVars,
    specialTokens,
    stopTokens: stops.tokens,
    stopTokensSource: stops.source,
    encode: (text: string): EncodedText => ({ ...enc.encode(text), exactOffsets: true }),
    decode: (ids: number[]) => enc.decode(ids),
    idToToken: (id: number) => {
      const sp = enc.specialName(id);
      if (sp !== undefined) return sp;
      if (!Number.isInteger(id) || id < 0 || id >= nBase) return undefined;
      let s = '';
      for (const b of ranks.tokenBytes(id)) s += byteToChar.get(b)!;
      return s;
    },
  };
}
