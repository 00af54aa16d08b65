/**
 * The tokens of a pre-tokenized piece that pieceEncoder.ts's cache has not seen: their ids and where each starts in
 * the piece (UTF-16), exactly as the old path (the word cache's miss, then the offset aligner) gives them.
 */
import { everyWordTableOf, mergeSymbols, scratchSymbols, type MergeTable } from './longWordBpe';
import { byteLevelDecoder } from './modelFolder';
import type { PieceTokens } from './wordCache';
import { utf8WithUnits } from './utf8Units';

/** The parts of a tokenizers.js 0.2 BPE model read here. */
export interface BpeModelInside {
  tokens_to_ids?: Map<string, number>;
  vocab?: string[];
  end_of_word_suffix?: string | null;
  continuing_subword_suffix?: string | null;
  ignore_merges?: boolean;
}

/** Pieces of more UTF-16 units than this are merged in arrays of their own (longWordBpe.ts's scratch arrays stay small). */
const SCRATCH_UNITS = 1365;

/**
 * A piece's tokens, computed: after {@link PieceMiss.run} returns n > 0, `ids[0 … n)` are the tokens' ids and
 * `offsets[0 … n)` the UTF-16 index in the piece of the character holding each token's first byte (as the offset
 * aligner starts a token that begins inside a character). n = 0: the tokens cannot be given exactly as the old path
 * gives them (a token that is not the vocabulary's own string of its id, which the old path maps otherwise, or that
 * does not spell the piece's bytes); the caller then hands the text to the old path.
 */
export class PieceMiss {
  ids = new Int32Array(64);
  offsets = new Int32Array(64);
  private readonly table: MergeTable | undefined;
  private readonly vocab: string[];
  private readonly toIds: Map<string, number>;
  private readonly ignoreMerges: boolean;
  /** Byte → its byte-level character, and → that character's symbol id in the merge table (-1: none). */
  private readonly byteChar: string[] = [];
  private readonly byteSym = new Int32Array(256);
  /** Per id of the merge table: 0 not checked yet, 1 a token the old path gives this id, 2 not. */
  private readonly idChecked: Uint8Array;
  private bytes = new Uint8Array(256);
  private unitOf = new Int32Array(256);

  /**
   * @param model the tokenizers.js BPE model (`tok.model`): with longWordBpe.ts's merge table for every word
   *   (`everyWordTableOf`), misses are merged on it over byte ids, no token string made; else `pieceTokens` runs
   *   the library's byte-level step and model
   * @param addedMap tokenizers.js's `added_tokens_map` (the first place its `encode` looks a token's id up)
   */
  constructor(
    model: BpeModelInside,
    private readonly addedMap: Map<string, { id?: number }>,
    private readonly pieceTokens: PieceTokens,
  ) {
    this.vocab = model.vocab!;
    this.toIds = model.tokens_to_ids!;
    this.ignoreMerges = model.ignore_merges === true;
    this.table = everyWordTableOf(model);
    for (const [ch, b] of byteLevelDecoder()) this.byteChar[b] = ch;
    for (let b = 0; b < 256; b++) this.byteSym[b] = this.table?.ids.get(this.byteChar[b]) ?? -1;
    this.idChecked = new Uint8Array(this.table ? this.table.strings.length : 0);
  }

  /** The tokens of `piece` into {@link ids} and {@link offsets}; returns their count (0: not exactly, see the class). */
  run(piece: string): number {
    return this.table ? this.merged(piece, this.table) : this.library(piece);
  }

  /** The id tokenizers.js's `encode` gives a token string (its added-token map, then the model's), -1 when that id's vocabulary string is another. */
  private idOf(s: string): number {
    const id = this.addedMap.get(s)?.id ?? this.toIds.get(s) ?? -1;
    return id >= 0 && this.vocab[id] === s ? id : -1;
  }

  /** Room for n tokens. */
  private room(n: number): void {
    if (this.ids.length >= n) return;
    let c = this.ids.length;
    while (c < n) c *= 2;
    this.ids = new Int32Array(c);
    this.offsets = new Int32Array(c);
  }

  /** The word cache's miss (the library's byte-level step and model), its token strings mapped to ids and offsets. */
  private library(piece: string): number {
    const r = this.pieceTokens(piece);
    if (!r || r.tokens.length === 0) return 0;
    const n = r.tokens.length;
    const nb = this.utf8(piece);
    this.room(n);
    // Each token must be the vocabulary's own string of its id and the tokens must spell the piece's bytes (one byte-level character per byte).
    let spelled = 0;
    for (let k = 0; k < n; k++) {
      const s = r.tokens[k];
      const id = this.idOf(s);
      if (id < 0 || !r.mapped.startsWith(s, spelled)) return 0;
      this.ids[k] = id;
      this.offsets[k] = spelled;
      spelled += s.length;
    }
    if (spelled !== r.mapped.length || nb !== spelled) return 0;
    // Byte offsets to UTF-16 indices.
    for (let k = 0; k < n; k++) this.offsets[k] = this.unitOf[this.offsets[k]];
    return n;
  }

  /** BPE over byte ids on the merge table (longWordBpe.ts `mergeSymbols`, what the model's `bpe` runs on the piece's byte-level characters). */
  private merged(piece: string, table: MergeTable): number {
    const nb = this.utf8(piece);
    const bytes = this.bytes;
    if (this.ignoreMerges) {
      // tokenizers.js BPE.encode: a piece that is a vocabulary token as a whole is that token, unmerged.
      let mapped = '';
      for (let b = 0; b < nb; b++) mapped += this.byteChar[bytes[b]];
      if (this.toIds.has(mapped)) {
        const id = this.idOf(mapped);
        if (id < 0) return 0;
        this.ids[0] = id;
        this.offsets[0] = 0;
        return 1;
      }
    }
    const sym = piece.length <= SCRATCH_UNITS ? scratchSymbols(nb) : new Int32Array(nb);
    for (let b = 0; b < nb; b++) {
      const s = this.byteSym[bytes[b]];
      if (s < 0) return 0;
      sym[b] = s;
    }
    const next = mergeSymbols(sym, nb, table);
    let n = 0;
    for (let p = 0; p >= 0; p = next[p]) n++;
    this.room(n);
    n = 0;
    for (let p = 0; p >= 0; p = next[p]) {
      const id = sym[p];
      if (!this.isOwnId(id, table)) return 0;
      this.ids[n] = id;
      this.offsets[n++] = this.unitOf[p];
    }
    return n;
  }

  /** Whether a merged symbol id is a vocabulary token the old path maps back to this id (checked once per id). */
  private isOwnId(id: number, table: MergeTable): boolean {
    if (id < 0 || id >= this.idChecked.length) return false;
    let c = this.idChecked[id];
    if (c === 0) {
      const s = table.strings[id];
      c = this.idChecked[id] = id < this.vocab.length && this.vocab[id] === s && this.idOf(s) === id ? 1 : 2;
    }
    return c === 1;
  }

  /** Writes the piece's UTF-8 bytes to {@link bytes}, each with the UTF-16 index of its character in {@link unitOf}; returns their count. */
  private utf8(piece: string): number {
    const cap = piece.length * 3;
    if (this.bytes.length < cap) {
      let c = this.bytes.length;
      while (c < cap) c *= 2;
      this.bytes = new Uint8Array(c);
      this.unitOf = new Int32Array(c);
    }
    const nb = utf8WithUnits(piece, this.bytes, this.unitOf);
    this.room(nb);
    return nb;
  }
}
