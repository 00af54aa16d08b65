/**
 * The tiktoken encoder: special tokens matched in the text, Kimi's pre-splitting,
 * the pre-tokenizer pattern, then rank BPE per pre-token; and its decoder.
 */
import { bpeMerge } from './bpe';
import { KIMI_PAT_STR, kimiSubstrings, MAX_NO_WHITESPACES_CHARS } from './kimi';
import { translatePattern } from './pattern';
import type { RankTable } from './rankTable';
import { utf8WithUnits } from '../utf8Units';

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

  /** UTF-8 encodes `s` into the scratch buffer ({@link utf8WithUnits}; `encode` makes the text well-formed first); returns the byte length. */
  private utf8(s: string): number {
    if (this.scratch.length < s.length * 3) {
      this.scratch = new Uint8Array(s.length * 3);
      this.scratchUnit = new Int32Array(s.length * 3);
    }
    return utf8WithUnits(s, this.scratch, this.scratchUnit);
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
