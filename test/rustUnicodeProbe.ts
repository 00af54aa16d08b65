/**
 * Reads the Unicode tables of the Rust `tokenizers` package's regex engine (Oniguruma) from the engine itself, for
 * scripts/gen-rust-unicode.ts (which writes src/core/tokenizers/rustUnicodeData.ts) and test/unit/rustUnicode.test.ts
 * (which checks that file against the installed package).
 */
import { GC_GROUPS, GC_LEAVES } from '../src/core/tokenizers/rustUnicode';

/** The highest code point. */
const MAX_CP = 0x10ffff;

/** What is read: each code point's category (an index of {@link GC_LEAVES}), and the White_Space code points. */
export interface RustUnicodeTables {
  version: string;
  gc: Uint8Array;
  whiteSpace: Uint8Array;
  /** Code points the Rust NFC leaves alone and V8's composes from or into ({@link nfcUncomposed}), ascending. */
  nfcUncomposed: number[];
}

/** A pre-tokenizer of the binding: a `Split` on `pattern` with `behavior`. */
function splitter(pattern: string, behavior: string): { preTokenizeString(s: string): [string, [number, number]][] } {
  const { Tokenizer } = require('tokenizers');
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: { type: 'Split', pattern: { Regex: pattern }, behavior, invert: false },
    post_processor: null,
    decoder: null,
    model: { type: 'WordLevel', vocab: { a: 0 }, unk_token: 'a' },
  };
  return Tokenizer.fromString(JSON.stringify(json)).getPreTokenizer();
}

/** Every code point but the surrogates, in order, as one string, and the code point at each of its indices (in code points). */
function allCodePoints(): { text: string; cps: Int32Array } {
  const cps = new Int32Array(MAX_CP + 1 - 0x800);
  const parts: string[] = [];
  let n = 0;
  for (let cp = 0; cp <= MAX_CP; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    cps[n++] = cp;
  }
  for (let k = 0; k < n; k += 4096) parts.push(String.fromCodePoint(...cps.subarray(k, Math.min(n, k + 4096))));
  return { text: parts.join(''), cps };
}

/** The code points `pattern` (one code point per match) matches in the Rust engine: 1 per member. */
function members(pattern: string, all: { text: string; cps: Int32Array }): Uint8Array {
  const out = new Uint8Array(MAX_CP + 1).fill(1);
  for (let cp = 0xd800; cp <= 0xdfff; cp++) out[cp] = 0;
  // `Removed`: what is left are the runs of non-members, with their offsets in code points.
  for (const [, [from, to]] of splitter(pattern, 'Removed').preTokenizeString(all.text)) for (let k = from; k < to; k++) out[all.cps[k]] = 0;
  return out;
}

/**
 * The tables of the installed `tokenizers` package.
 * @throws Error when the categories do not partition the code points, or a group is not the union of its categories
 */
export function rustUnicodeTables(): RustUnicodeTables {
  const all = allCodePoints();
  const gc = new Uint8Array(MAX_CP + 1).fill(255);
  for (let cp = 0xd800; cp <= 0xdfff; cp++) gc[cp] = GC_LEAVES.indexOf('Cs');
  GC_LEAVES.forEach((name, k) => {
    if (name === 'Cs') return;
    const m = members(`\\p{${name}}`, all);
    for (let cp = 0; cp <= MAX_CP; cp++) {
      if (!m[cp]) continue;
      if (gc[cp] !== 255) throw new Error(`U+${cp.toString(16)} is both ${GC_LEAVES[gc[cp]]} and ${name} in the Rust engine`);
      gc[cp] = k;
    }
  });
  for (let cp = 0; cp <= MAX_CP; cp++) if (gc[cp] === 255) throw new Error(`U+${cp.toString(16)} has no category in the Rust engine`);
  for (const [group, leaves] of Object.entries(GC_GROUPS)) {
    if (group === 'C') continue; // surrogates are not in the probe string
    const m = members(`\\p{${group}}`, all);
    for (let cp = 0; cp <= MAX_CP; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (!!m[cp] !== leaves.includes(GC_LEAVES[gc[cp]])) throw new Error(`U+${cp.toString(16)}: \\p{${group}} is not the union of its categories`);
    }
  }
  const whiteSpace = members('\\p{White_Space}', all);
  const version = JSON.parse(require('node:fs').readFileSync(require.resolve('tokenizers/package.json'), 'utf8')).version as string;
  return { version, gc, whiteSpace, nfcUncomposed: nfcUncomposed() };
}

/**
 * The canonical compositions V8's NFC makes and the Rust `tokenizers` NFC normalizer does not (its tables are older):
 * for each primary composite c = compose(a, b) (V8's tables; a itself NFC, b the last character of c's decomposition)
 * whose pair the Rust normalizer leaves as it is, both a and c, which Rust then treats as characters without
 * decomposition or composition. rustText.ts leaves them alone and normalizes the text between them on its own, as it
 * does the other characters Rust's tables do not know; that is exact when neither takes part in a composition Rust
 * makes nor has a decomposition Rust knows (checked).
 * @throws Error naming the code point when that check fails
 */
function nfcUncomposed(): number[] {
  const { nfcNormalizer, nfdNormalizer } = require('tokenizers');
  const nfc = nfcNormalizer();
  const nfd = nfdNormalizer();
  const made: [number, number, number][] = [];
  for (let cp = 0; cp <= MAX_CP; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const c = String.fromCodePoint(cp);
    if (c.normalize('NFC') !== c) continue;
    const d = [...c.normalize('NFD')];
    if (d.length < 2) continue;
    const a = d.slice(0, -1).join('').normalize('NFC');
    if ([...a].length !== 1 || (a + d[d.length - 1]).normalize('NFC') !== c) continue;
    made.push([cp, a.codePointAt(0)!, d[d.length - 1].codePointAt(0)!]);
  }
  const rustMakes = (x: [number, number, number]) => nfc.normalizeString(String.fromCodePoint(x[1], x[2])) === String.fromCodePoint(x[0]);
  const known = made.filter(rustMakes);
  const out = new Set<number>();
  for (const x of made) {
    if (rustMakes(x)) continue;
    for (const cp of [x[0], x[1]]) {
      const ch = String.fromCodePoint(cp);
      if (known.some((k) => k.includes(cp)) || nfd.normalizeString(ch) !== ch || nfc.normalizeString(ch) !== ch)
        throw new Error(`U+${cp.toString(16)}: in a composition the Rust NFC does not make, and known to it otherwise`);
      out.add(cp);
    }
  }
  return [...out].sort((a, b) => a - b);
}

/** Runs of equal values of `v`: `[value, length]` in order. */
function runs(v: Uint8Array): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < v.length;) {
    let j = i + 1;
    while (j < v.length && v[j] === v[i]) j++;
    out.push([v[i], j - i]);
    i = j;
  }
  return out;
}

/** Lines of at most `width` characters of `s`, as a list of string literals. */
function chunks(s: string, width: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += width) out.push(`  '${s.slice(i, i + width)}',`);
  return out;
}

/** The text of src/core/tokenizers/rustUnicodeData.ts for `t` (Prettier's layout). */
export function renderRustUnicodeData(t: RustUnicodeTables): string {
  // Each run: its category as a letter (rustUnicode.ts RUN_LETTERS), then its length in decimal when over 1.
  const gcRuns = runs(t.gc)
    .map(([k, n]) => 'abcdefghijklmnopqrstuvwxyzABCD'[k] + (n > 1 ? String(n) : ''))
    .join('');
  // White_Space: the lengths of its alternating runs, from U+0000 (not a member) on, in hex.
  const wsRuns = runs(t.whiteSpace)
    .map(([, n]) => n.toString(16))
    .join(',');
  return [
    '/**',
    ' * GENERATED by scripts/gen-rust-unicode.ts: do not edit. The Unicode tables of the regex engine (Oniguruma) of the Rust',
    ` * \`tokenizers\` package ${t.version} (npm), read from the engine code point by code point (see the script).`,
    ' * Decoded by rustUnicode.ts.',
    ' */',
    '',
    '/** The `tokenizers` package version the tables were read from. */',
    `export const RUST_UNICODE_SOURCE = 'tokenizers ${t.version}';`,
    '',
    '/**',
    " * Every code point's General_Category from U+0000 on, as runs: the category's letter (rustUnicode.ts `GC_LEAVES`, 'a'",
    " * = index 0 … 'z', then 'A' …), then the run's length in decimal (none: 1).",
    ' */',
    'export const RUST_GC_RUNS = [',
    ...chunks(gcRuns, 150),
    "].join('');",
    '',
    '/** White_Space: the lengths (hex) of the alternating runs of non-members and members from U+0000 on. */',
    `export const RUST_WHITE_SPACE_RUNS = '${wsRuns}';`,
    '',
    '/**',
    " * Code points (hex) in canonical compositions that V8's NFC makes and the Rust NFC normalizer does not (each composite",
    ' * and its first character): rustText.ts leaves them alone, as Rust does.',
    ' */',
    'export const RUST_NFC_UNCOMPOSED =',
    `  '${t.nfcUncomposed.map((cp) => cp.toString(16)).join(',')}';`,
    '',
  ].join('\n');
}
