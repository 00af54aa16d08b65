/**
 * Each token's UTF-16 start in the text it was encoded from, recovered from the token ids: tokenizers.js returns ids
 * without offsets, and the Rust backend's offsets cost more to fetch than to recompute (rustTokenizer.ts).
 */
import { byteLevelDecoder } from './modelFolder';
import { normalizeAroundAdded, normalizedWithMap, normalizeLikeRust } from './rustText';

/**
 * Recovers where each token starts in the text, since `@huggingface/tokenizers`
 * returns ids without offsets (the Rust backend, rustTokenizer.ts, uses it too:
 * cheaper than fetching the binding's offsets, and the same starts). Each token's surface bytes are derived from its
 * vocabulary string (byte-level alphabet for byte-level BPE; `▁` = space and
 * `<0xNN>` byte fallback for SentencePiece-style vocabularies; the literal
 * content for added tokens) and matched against the UTF-8 bytes of the text.
 */
export class OffsetAligner {
  private readonly byteLevel: boolean;
  /**
   * The vocabulary surface of each token id met so far, packed: its bytes are `pool[surfaceAt[id] … + surfaceLen[id]]`
   * (`surfaceAt[id]` −1 until met). One Uint8Array object per token was ~480 bytes of heap per id (20 MB per pool
   * worker on the shared real files, up to 70 MB at a full 151k vocabulary); packed, ~10 bytes (docs/scale.md "Memory").
   */
  private pool = new Uint8Array(1 << 16);
  private poolUsed = 0;
  private surfaceAt = new Int32Array(0);
  private surfaceLen = new Int32Array(0);
  /** The surfaces of added tokens (one or two each), by id. */
  private readonly altById = new Map<number, Uint8Array[]>();
  private readonly added = new Map<number, string>();
  /** `isAdded[id]` 1 for an added token's id (a typed-array read per token, not a map lookup). */
  private readonly isAdded: Uint8Array;
  private static readonly byteDecoder = byteLevelDecoder();

  /** Unicode normalization form the tokenizer's normalizer applies (NFC, NFKC, …), if any. */
  private readonly unicodeForm: 'NFC' | 'NFD' | 'NFKC' | 'NFKD' | null;
  /** Added tokens matched in the raw text before normalization (`normalized: false`), longest first. */
  private readonly rawAdded: RegExp | null;

  /**
   * @param tok the vocabulary's id → token string (added tokens by their content): tokenizers.js's `Tokenizer`, or an
   *   adapter over another implementation of the same `tokenizer.json` (rustTokenizer.ts)
   * @param tokenizerJson the parsed `tokenizer.json` (its pre-tokenizer, decoder, normalizer and added tokens are read)
   */
  constructor(
    private readonly tok: { id_to_token(id: number): string | null | undefined },
    tokenizerJson: any,
  ) {
    const json = JSON.stringify([tokenizerJson.pre_tokenizer, tokenizerJson.decoder]);
    this.byteLevel = json.includes('"ByteLevel"');
    const form = /"type":"(NFC|NFD|NFKC|NFKD)"/.exec(JSON.stringify(tokenizerJson.normalizer ?? null));
    this.unicodeForm = form ? (form[1] as 'NFC') : null;
    for (const t of tokenizerJson.added_tokens ?? []) this.added.set(t.id, t.content);
    this.isAdded = new Uint8Array(Math.max(0, ...this.added.keys()) + 1);
    for (const id of this.added.keys()) if (id >= 0) this.isAdded[id] = 1;
    const raw: string[] = (tokenizerJson.added_tokens ?? []).filter((t: any) => !t.normalized && t.content).map((t: any) => t.content as string);
    raw.sort((a, b) => b.length - a.length);
    this.rawAdded = raw.length ? new RegExp(raw.map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g') : null;
  }

  /**
   * The bytes of the text a token can stand for. An added token that is also in
   * the model's vocabulary has two (Gemma-3's `▁▁`, id 138: the literal text
   * `▁▁` matched as an added token, or two spaces the normalizer turned into
   * `▁▁` and the model merged); the aligner takes the one the text has.
   */
  private surfaces(id: number): Uint8Array[] {
    let c = this.altById.get(id);
    if (c) return c;
    const added = this.added.get(id);
    c = [];
    if (added !== undefined) c.push(Buffer.from(added, 'utf8'));
    const vocab = this.vocabSurface(id).slice(); // kept: a copy, not a view of the pool (which may be replaced)
    if (added === undefined || !c.some((x) => Buffer.compare(x, vocab) === 0)) c.push(vocab);
    this.altById.set(id, c);
    return c;
  }

  /** Bytes of `text` at `at` that a SentencePiece vocabulary token matches when each of its `▁` may be a space or a literal `▁`; -1 when it does not match. */
  private metaspaceMatch(id: number, bytes: Uint8Array, at: number): number {
    const s = this.tok.id_to_token(id);
    if (!s || !s.includes('\u2581')) return -1;
    let p = at;
    for (const ch of s) {
      if (ch === '\u2581') {
        if (bytes[p] === 0x20) p += 1;
        else if (bytes[p] === 0xe2 && bytes[p + 1] === 0x96 && bytes[p + 2] === 0x81) p += 3;
        else return -1;
        continue;
      }
      const b = Buffer.from(ch, 'utf8');
      for (let j = 0; j < b.length; j++) if (bytes[p + j] !== b[j]) return -1;
      p += b.length;
    }
    return p - at;
  }

  /** The vocabulary surface of `id` (a view of the pool: read it before the next token is met). */
  private vocabSurface(id: number): Uint8Array {
    const at = this.surfaceStart(id);
    return this.pool.subarray(at, at + this.surfaceLen[id]);
  }

  /** Where the vocabulary surface of `id` starts in {@link pool} (packed there when first met). */
  private surfaceStart(id: number): number {
    if (id < this.surfaceAt.length && this.surfaceAt[id] >= 0) return this.surfaceAt[id];
    if (id >= this.surfaceAt.length) {
      const n = Math.max(id + 1, this.surfaceAt.length * 2, 1024);
      const at = new Int32Array(n).fill(-1);
      at.set(this.surfaceAt);
      const len = new Int32Array(n);
      len.set(this.surfaceLen);
      this.surfaceAt = at;
      this.surfaceLen = len;
    }
    const b = this.surfaceBytes(id);
    if (this.poolUsed + b.length > this.pool.length) {
      const grown = new Uint8Array(Math.max(this.pool.length * 2, this.poolUsed + b.length));
      grown.set(this.pool.subarray(0, this.poolUsed));
      this.pool = grown;
    }
    this.pool.set(b, this.poolUsed);
    this.surfaceAt[id] = this.poolUsed;
    this.surfaceLen[id] = b.length;
    this.poolUsed += b.length;
    return this.surfaceAt[id];
  }

  /** The bytes a vocabulary token stands for, computed from its string. */
  private surfaceBytes(id: number): Uint8Array {
    let b: Uint8Array;
    const s = this.tok.id_to_token(id) ?? '';
    if (this.byteLevel) {
      const out: number[] = [];
      for (const ch of s) {
        const v = OffsetAligner.byteDecoder.get(ch);
        if (v === undefined) out.push(...Buffer.from(ch, 'utf8'));
        else out.push(v);
      }
      b = Uint8Array.from(out);
    } else {
      const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(s);
      b = m ? Uint8Array.of(parseInt(m[1], 16)) : Buffer.from(s.replace(/\u2581/g, ' '), 'utf8');
    }
    return b;
  }

  /**
   * For each id, the UTF-16 index in `text` where it starts; `exactOffsets` false when a surface did not match the text.
   * When the tokenizer's Unicode normalizer changes the text, tokens are aligned to the normalized text and mapped
   * back cluster by cluster (a base character with its combining marks normalizes on its own). Added tokens that
   * are not normalized are split off first, as the tokenizers do: `<|im_end|>` + U+0338 stays `>` + U+0338, not `≯`.
   */
  starts(text: string, ids: number[]): { starts: number[]; exactOffsets: boolean } {
    const form = this.unicodeForm;
    if (!form || normalizeLikeRust(text, form) === text) return this.alignedStarts(text, ids);
    const n = normalizedWithMap(text, form, this.rawAdded);
    const r = this.alignedStarts(n.normalized, ids);
    return { starts: r.starts.map((u) => n.toOriginal[u]), exactOffsets: r.exactOffsets && n.exact };
  }

  /**
   * The text as the Rust tokenizer's normalizer leaves it: added tokens that are not normalized split off
   * first, the pieces between them normalized with {@link normalizeLikeRust}. Unchanged without a normalizer.
   */
  normalized(text: string): string {
    return this.unicodeForm ? normalizeAroundAdded(text, this.unicodeForm, this.rawAdded) : text;
  }

  private alignedStarts(text: string, ids: number[]): { starts: number[]; exactOffsets: boolean } {
    const bytes = Buffer.from(text, 'utf8');
    // byteToUnit[b] = UTF-16 index of the character containing byte b; null for ASCII text (one byte per unit: b itself).
    let byteToUnit: Int32Array | null = null;
    if (bytes.length !== text.length) {
      byteToUnit = new Int32Array(bytes.length + 1);
      let b = 0;
      for (let u = 0; u < text.length; u++) {
        const cp = text.codePointAt(u)!;
        const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        for (let k = 0; k < n; k++) byteToUnit[b + k] = u;
        b += n;
        if (cp >= 0x10000) u++;
      }
      byteToUnit[bytes.length] = text.length;
    }
    // Each token's start is written in order (k = 0, 1, …) into an array grown from empty: packed, unlike
    // `new Array(n)` (holey for good), and so is the mask copied from it (records/mask.ts `maskFromSpans`).
    const starts: number[] = [];
    let cursor = 0;
    let exact = true;
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k];
      if (id >= this.isAdded.length || this.isAdded[id] === 0) {
        // A vocabulary token (nearly all): its one surface, read from the pool without an object per token.
        let at = this.surfaceStart(ids[k]);
        let len = this.surfaceLen[ids[k]];
        const from = Math.min(cursor, bytes.length);
        starts[k] = byteToUnit === null ? from : byteToUnit[from];
        if (!this.byteLevel && !poolAt(bytes, cursor, this.pool, at, len)) {
          // As below: a vocabulary `▁` may stand for a replaced space or a literal `▁`.
          const n = this.metaspaceMatch(ids[k], bytes, cursor);
          if (n >= 0) {
            cursor += n;
            continue;
          }
        }
        if (k === 0 && !this.byteLevel && len > 0 && this.pool[at] === 0x20 && bytes[cursor] !== 0x20) {
          at++;
          len--;
        }
        if (exact && !poolAt(bytes, cursor, this.pool, at, len)) exact = false;
        cursor += len;
        continue;
      }
      const cands = this.surfaces(ids[k]);
      // The first surface the text has at the cursor (most tokens have one).
      let s: Uint8Array | undefined;
      for (let c = 0; c < cands.length; c++)
        if (bytesAt(bytes, cursor, cands[c])) {
          s = cands[c];
          break;
        }
      const at = Math.min(cursor, bytes.length);
      starts[k] = byteToUnit === null ? at : byteToUnit[at];
      if (s === undefined && !this.byteLevel) {
        // A vocabulary `▁` stands for a space the normalizer replaced or for a literal `▁` in the text (Gemma-3: " ▁ " → `▁▁▁`).
        const n = this.metaspaceMatch(ids[k], bytes, cursor);
        if (n >= 0) {
          cursor += n;
          continue;
        }
      }
      s ??= cands[0];
      // A SentencePiece prefix space that the text does not have (add_dummy_prefix) belongs to no character.
      if (k === 0 && !this.byteLevel && s[0] === 0x20 && bytes[cursor] !== 0x20) s = s.subarray(1);
      if (exact && !bytesAt(bytes, cursor, s)) exact = false;
      cursor += s.length;
    }
    if (cursor !== bytes.length) exact = false;
    return { starts, exactOffsets: exact };
  }
}

/** Whether `bytes` holds `pool[from … from + len]` at `at` (no allocation: this runs once per token). */
function poolAt(bytes: Uint8Array, at: number, pool: Uint8Array, from: number, len: number): boolean {
  if (at + len > bytes.length) return false;
  for (let j = 0; j < len; j++) if (bytes[at + j] !== pool[from + j]) return false;
  return true;
}

/** Whether `bytes` holds `s` at `at` (no allocation: this runs once per token). */
function bytesAt(bytes: Uint8Array, at: number, s: Uint8Array): boolean {
  if (at + s.length > bytes.length) return false;
  for (let j = 0; j < s.length; j++) if (bytes[at + j] !== s[j]) return false;
  return true;
}
