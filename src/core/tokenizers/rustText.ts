/**
 * Texts as the Rust `tokenizers` library sees them: lone surrogates replaced (a JS string becoming a Rust `String`),
 * and Unicode normalization with the tables and alignments of its normalizer, which differ from V8's.
 */
import { RUST_NFC_UNCOMPOSED } from './rustUnicodeData';

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
/**
 * The gap, with the characters of the canonical compositions V8 makes and Rust's NFC does not (rustUnicodeData.ts
 * `RUST_NFC_UNCOMPOSED`, read from the Rust normalizer by scripts/gen-rust-unicode.ts: e.g. U+113C2 U+113C2 stays two
 * characters there, where V8 makes U+113C5).
 */
const NFC_TABLE_GAP_CLASS = `[${NFC_TABLE_GAP_RANGES.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('')}${RUST_NFC_UNCOMPOSED.split(',')
  .map((h) => hex(parseInt(h, 16)))
  .join('')}]`;
const NFC_TABLE_GAP_SPLIT = new RegExp(`(${NFC_TABLE_GAP_CLASS})`, 'u');
const NFC_TABLE_GAP_ONE = new RegExp(`^${NFC_TABLE_GAP_CLASS}$`, 'u');

/**
 * Whether a `tokenizer.json`'s normalizer is NFC alone — the one normalizer this project applies itself, with the
 * Rust normalizer's older tables ({@link normalizeLikeRust}), handing both tokenizer backends no normalizer.
 * @param tokenizerJson the parsed `tokenizer.json` (its `normalizer` as written)
 */
export function appliesOwnNfc(tokenizerJson: { normalizer?: unknown } | null | undefined): boolean {
  return JSON.stringify(tokenizerJson?.normalizer ?? null) === '{"type":"NFC"}';
}

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

/**
 * `text` normalized as the Rust tokenizer's normalizer does it, with where each UTF-16 unit of the result comes from
 * in `text` (`toOriginal`, one entry per unit plus one for the end). Added tokens that are not normalized (`rawAdded`,
 * longest first) are split off first, as the tokenizers do: `<|im_end|>` + U+0338 stays `>` + U+0338, not `≯`; the
 * rest is mapped back cluster by cluster ({@link clusterMap}). `exact` is false where V8's whole-text normalization
 * differs from the cluster-by-cluster one (the starts are then approximate).
 */
export function normalizedWithMap(
  text: string,
  form: 'NFC' | 'NFD' | 'NFKC' | 'NFKD',
  rawAdded: RegExp | null,
): { normalized: string; toOriginal: number[]; exact: boolean } {
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
  if (rawAdded) {
    for (const m of text.matchAll(rawAdded)) {
      piece(pos, m.index);
      for (let k = 0; k < m[0].length; k++) toOriginal.push(m.index + k);
      normalized += m[0];
      whole += m[0];
      pos = m.index + m[0].length;
    }
  }
  piece(pos, text.length);
  toOriginal.push(text.length);
  return { normalized, toOriginal, exact: normalized === whole };
}

/**
 * The text as the Rust tokenizer's normalizer leaves it: added tokens that are not normalized (`rawAdded`) split off
 * first, the pieces between them normalized with {@link normalizeLikeRust}.
 */
export function normalizeAroundAdded(text: string, form: 'NFC' | 'NFD' | 'NFKC' | 'NFKD', rawAdded: RegExp | null): string {
  if (!rawAdded) return normalizeLikeRust(text, form);
  let out = '';
  let pos = 0;
  for (const m of text.matchAll(rawAdded)) {
    out += normalizeLikeRust(text.slice(pos, m.index), form) + m[0];
    pos = m.index + m[0].length;
  }
  return out + normalizeLikeRust(text.slice(pos), form);
}
