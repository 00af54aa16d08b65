/**
 * The Unicode properties of a `tokenizer.json`'s regexes as the Rust `tokenizers` library reads them, in the
 * JavaScript RegExps that tokenizers.js compiled from them (docs/fidelity.md "Unicode versions").
 *
 * Why: a pre-tokenizer pattern such as Qwen3's `[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|…` runs in Rust on Oniguruma's tables
 * (the Unicode version of the `tokenizers` build) and here on V8's (the Node runtime's ICU: Node 20.20 has Unicode
 * 17.0, an editor's Electron may have an older one). On code points whose General_Category differs between the two
 * (4,804 code points with Node 20.20 and `tokenizers` 0.23, CJK Extension J among them: new in Unicode 17.0, or U+0295)
 * the pieces differ and so do the ids, silently. Here each `\p{…}` / `\P{…}` of a General_Category or White_Space is
 * replaced by the explicit code point ranges of Rust's table (rustUnicodeData.ts, read from the Rust engine by
 * scripts/gen-rust-unicode.ts), so that the pattern matches as Rust's does whatever the runtime's Unicode version.
 * V8 compiles `\p{L}` to a list of ranges too: the rewritten pattern runs at the same speed, as long as its source
 * stays under V8's 20 KB optimization limit ({@link rustRegexSource} writes the ranges compactly); a pattern whose
 * rewrite is over it keeps the runtime's form for the texts the two tables agree on ({@link alignTokenizerRegexes}).
 */
import { RUST_GC_RUNS, RUST_WHITE_SPACE_RUNS } from './rustUnicodeData';
import { lastAtMost } from '../sortedSearch';
import { eachStep, type JsStep } from './jsSteps';

/** The General_Category values (leaves), in the order of the letters of rustUnicodeData.ts `RUST_GC_RUNS`. */
export const GC_LEAVES = [
  'Cn',
  'Lu',
  'Ll',
  'Lt',
  'Lm',
  'Lo',
  'Mn',
  'Mc',
  'Me',
  'Nd',
  'Nl',
  'No',
  'Pc',
  'Pd',
  'Ps',
  'Pe',
  'Pi',
  'Pf',
  'Po',
  'Sm',
  'Sc',
  'Sk',
  'So',
  'Zs',
  'Zl',
  'Zp',
  'Cc',
  'Cf',
  'Cs',
  'Co',
] as const;

/** The General_Category groups and their leaves (Unicode UAX #44, "General_Category Values"). */
export const GC_GROUPS: Record<string, readonly string[]> = {
  L: ['Lu', 'Ll', 'Lt', 'Lm', 'Lo'],
  LC: ['Lu', 'Ll', 'Lt'],
  M: ['Mn', 'Mc', 'Me'],
  N: ['Nd', 'Nl', 'No'],
  P: ['Pc', 'Pd', 'Ps', 'Pe', 'Pi', 'Pf', 'Po'],
  S: ['Sm', 'Sc', 'Sk', 'So'],
  Z: ['Zs', 'Zl', 'Zp'],
  C: ['Cc', 'Cf', 'Cs', 'Co', 'Cn'],
};

/** The long names (and other aliases) JavaScript accepts for the General_Category values (UAX #44, PropertyValueAliases.txt). */
const GC_ALIASES: Record<string, string> = {
  Letter: 'L',
  Cased_Letter: 'LC',
  Uppercase_Letter: 'Lu',
  Lowercase_Letter: 'Ll',
  Titlecase_Letter: 'Lt',
  Modifier_Letter: 'Lm',
  Other_Letter: 'Lo',
  Mark: 'M',
  Combining_Mark: 'M',
  Nonspacing_Mark: 'Mn',
  Spacing_Mark: 'Mc',
  Enclosing_Mark: 'Me',
  Number: 'N',
  Decimal_Number: 'Nd',
  digit: 'Nd',
  Letter_Number: 'Nl',
  Other_Number: 'No',
  Punctuation: 'P',
  punct: 'P',
  Connector_Punctuation: 'Pc',
  Dash_Punctuation: 'Pd',
  Open_Punctuation: 'Ps',
  Close_Punctuation: 'Pe',
  Initial_Punctuation: 'Pi',
  Final_Punctuation: 'Pf',
  Other_Punctuation: 'Po',
  Symbol: 'S',
  Math_Symbol: 'Sm',
  Currency_Symbol: 'Sc',
  Modifier_Symbol: 'Sk',
  Other_Symbol: 'So',
  Separator: 'Z',
  Space_Separator: 'Zs',
  Line_Separator: 'Zl',
  Paragraph_Separator: 'Zp',
  Other: 'C',
  Control: 'Cc',
  cntrl: 'Cc',
  Format: 'Cf',
  Surrogate: 'Cs',
  Private_Use: 'Co',
  Unassigned: 'Cn',
};

/** Rust's table decoded: the first code point of each run and its category (an index of {@link GC_LEAVES}). */
interface GcRuns {
  starts: Int32Array;
  cats: Uint8Array;
}

let gcRuns: GcRuns | undefined;
/** The ranges of each property (and of its complement) already built. */
const classRanges = new Map<string, [number, number][]>();

/** rustUnicodeData.ts's runs, decoded once. */
function decodedRuns(): GcRuns {
  if (gcRuns) return gcRuns;
  const starts: number[] = [];
  const cats: number[] = [];
  const letters = 'abcdefghijklmnopqrstuvwxyzABCD';
  let cp = 0;
  for (let i = 0; i < RUST_GC_RUNS.length;) {
    const cat = letters.indexOf(RUST_GC_RUNS[i++]);
    let j = i;
    while (j < RUST_GC_RUNS.length && RUST_GC_RUNS.charCodeAt(j) >= 48 && RUST_GC_RUNS.charCodeAt(j) <= 57) j++;
    const len = j > i ? Number(RUST_GC_RUNS.slice(i, j)) : 1;
    starts.push(cp);
    cats.push(cat);
    cp += len;
    i = j;
  }
  if (cp !== 0x110000) throw new Error(`rustUnicodeData.ts: the runs cover ${cp} code points, not 0x110000 (regenerate it: scripts/gen-rust-unicode.ts)`);
  return (gcRuns = { starts: Int32Array.from(starts), cats: Uint8Array.from(cats) });
}

/**
 * The code point ranges `[first, last]` of a property as Rust's tables have it: a General_Category value or group
 * (short or long name, optionally as `General_Category=` / `gc=`) or `White_Space` (`space`); undefined for any
 * other property (scripts, binary properties: not in the tables).
 */
export function rustPropertyRanges(name: string): [number, number][] | undefined {
  if (name === 'White_Space' || name === 'space') {
    const out: [number, number][] = [];
    let cp = 0;
    RUST_WHITE_SPACE_RUNS.split(',').forEach((h, k) => {
      const n = parseInt(h, 16);
      if (k % 2 === 1) out.push([cp, cp + n - 1]);
      cp += n;
    });
    return out;
  }
  const value = name.replace(/^(?:General_Category|gc)=/, '');
  const short = GC_ALIASES[value] ?? value;
  const leaves = GC_GROUPS[short] ?? ((GC_LEAVES as readonly string[]).includes(short) ? [short] : undefined);
  if (!leaves) return undefined;
  const member = GC_LEAVES.map((l) => leaves.includes(l));
  const { starts, cats } = decodedRuns();
  const out: [number, number][] = [];
  for (let r = 0; r < starts.length; r++) {
    if (!member[cats[r]]) continue;
    const first = starts[r];
    const last = (r + 1 < starts.length ? starts[r + 1] : 0x110000) - 1;
    if (out.length && out[out.length - 1][1] === first - 1) out[out.length - 1][1] = last;
    else out.push([first, last]);
  }
  return out;
}

/** The ranges of every code point not in `ranges` (sorted, disjoint). */
function complement(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [a, b] of ranges) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

/** The union of range lists, sorted and merged. */
function union(lists: [number, number][][]): [number, number][] {
  const all = lists.flat().sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of all) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The ranges of `\p{name}` (`\P{name}`: negated) by Rust's tables, undefined when not in them. */
function propertyRanges(name: string, negated: boolean): [number, number][] | undefined {
  const key = (negated ? 'P' : 'p') + name;
  let ranges = classRanges.get(key);
  if (ranges) return ranges;
  const own = rustPropertyRanges(name);
  if (!own) return undefined;
  ranges = negated ? complement(own) : own;
  classRanges.set(key, ranges);
  return ranges;
}

/**
 * A code point inside a class, as itself where the source allows it (one or two UTF-16 units, where `\u{…}` takes up
 * to ten): V8 leaves a pattern source over 20 KB unoptimized (`kRegExpTooLargeToOptimize`), which made the rewritten
 * Qwen3 pattern (40 KB with escapes, 9 KB without) run 2.5× slower. Escaped: controls, spaces, the class's syntax
 * characters, surrogates and line separators; in a `v` pattern (`v`), every ASCII character but letters and digits
 * (its classes' syntax characters `(){}/|` and reserved doubles such as `&&` among them).
 */
function classChar(cp: number, v: boolean): string {
  const escape =
    cp <= 0x20 ||
    (cp >= 0x7f && cp <= 0xa0) ||
    (cp >= 0xd800 && cp <= 0xdfff) ||
    cp === 0x2028 ||
    cp === 0x2029 ||
    (cp < 0x80 && (v ? !/[0-9A-Za-z]/.test(String.fromCharCode(cp)) : '\\]-^['.includes(String.fromCharCode(cp))));
  return escape ? `\\u{${cp.toString(16)}}` : String.fromCodePoint(cp);
}

/** Class contents (no brackets) of sorted, disjoint ranges; `v`: for a `v` pattern ({@link classChar}). */
function rangesText(ranges: [number, number][], v: boolean): string {
  let text = '';
  for (const [a, b] of ranges) text += a === b ? classChar(a, v) : b === a + 1 ? classChar(a, v) + classChar(b, v) : `${classChar(a, v)}-${classChar(b, v)}`;
  return text;
}

/** Whether the character at `at` in a RegExp source is escaped (an odd number of backslashes before it). */
function escapedAt(source: string, at: number): boolean {
  let n = 0;
  while (at - n - 1 >= 0 && source[at - n - 1] === '\\') n++;
  return n % 2 === 1;
}

/** A JavaScript RegExp source rewritten to Rust's Unicode tables ({@link rustRegexSource}). */
export interface RustRegexSource {
  source: string;
  /** The `\p{…}` / `\P{…}` properties left as they were: not in Rust's tables here, so they match by the runtime's tables. */
  unverified: string[];
}

/**
 * Rewrites a JavaScript RegExp source (as tokenizers.js compiles a `tokenizer.json` regex, flags `u` or `v`) so
 * that its Unicode property escapes match what Rust's tables say: each `\p{X}` / `\P{X}` of a General_Category
 * value or group, or of White_Space, becomes the explicit ranges of Rust's table — inside a class of a `u` pattern,
 * the union of the class's properties' ranges, written once at the class's end; elsewhere (outside a class, and
 * inside a `v` pattern's class, where a nested class is an operand) a class of them. Anything else is copied as it
 * is; the properties not in the tables are listed in `unverified`.
 * @param source the RegExp's source
 * @param flags its flags (`v` changes how a class nests)
 */
export function rustRegexSource(source: string, flags: string): RustRegexSource {
  const nested = flags.includes('v');
  const unverified: string[] = [];
  let out = '';
  let depth = 0;
  /** The properties' ranges of the `u` class being read, written at its end. */
  let inClass: [number, number][][] = [];
  /** Where the `u` class being read opens: its `[` in `source`, and the length of `out` just after it. */
  let openAt = -1;
  let bodyAt = -1;
  for (let i = 0; i < source.length;) {
    const c = source[i];
    if (c === '\\') {
      const kind = source[i + 1];
      const close = source[i + 2] === '{' ? source.indexOf('}', i + 3) : -1;
      if ((kind === 'p' || kind === 'P') && close > 0) {
        const name = source.slice(i + 3, close);
        const ranges = propertyRanges(name, kind === 'P');
        if (ranges === undefined) {
          if (!unverified.includes(name)) unverified.push(name);
          out += source.slice(i, close + 1);
        } else if (depth > 0 && !nested) inClass.push(ranges);
        else out += `[${rangesText(ranges, nested)}]`;
        i = close + 1;
        continue;
      }
      out += source.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (c === '[' && (depth === 0 || nested)) {
      depth++;
      openAt = i;
      bodyAt = out.length + 1;
    } else if (c === ']' && depth > 0) {
      depth--;
      // A literal `-` last in the class would make a range with the first character written after it.
      if (inClass.length && out.endsWith('-') && !escapedAt(out, out.length - 1)) out = `${out.slice(0, -1)}\\-`;
      if (inClass.length) out += rangesText(union(inClass), false);
      inClass = [];
    } else if (c === '^' && depth > 0 && !nested && i !== openAt + 1 && out.length === bodyAt) {
      // `[\p{L}^]`: with the property taken out, the literal caret would be first in the class, its negation.
      out += '\\^';
      i++;
      continue;
    }
    out += c;
    i++;
  }
  return { source: out, unverified };
}

/** A RegExp whose property escapes follow Rust's tables ({@link rustRegexSource}), and the properties left as they were. */
export function rustRegex(re: RegExp): { re: RegExp; unverified: string[] } {
  const r = rustRegexSource(re.source, re.flags);
  return { re: r.source === re.source ? re : new RegExp(r.source, re.flags), unverified: r.unverified };
}

/** Per code point: 0 not checked yet, 1 this runtime's category and White_Space are Rust's, 2 they differ (allocated on first use). */
let checked: Uint8Array | undefined;
let leafRes: RegExp[] | undefined;

/** Whether this runtime's General_Category or White_Space of `cp` differs from Rust's table (checked once per code point). */
function cpDiffers(cp: number): boolean {
  const memo = (checked ??= new Uint8Array(0x110000));
  if (memo[cp] === 0) {
    leafRes ??= GC_LEAVES.map((l) => new RegExp(`^\\p{${l}}$`, 'u'));
    const ch = String.fromCodePoint(cp);
    const { starts, cats } = decodedRuns();
    const ws = propertyRanges('White_Space', false)!.some(([a, b]) => a <= cp && cp <= b);
    const same = leafRes[cats[lastAtMost(starts, cp)]].test(ch) && /^\p{White_Space}$/u.test(ch) === ws;
    memo[cp] = same ? 1 : 2;
  }
  return memo[cp] === 2;
}

/**
 * Whether `text` holds a code point whose General_Category or White_Space this runtime's tables give otherwise than
 * Rust's (rustUnicodeData.ts): a character new in one of the two Unicode versions, or recategorized. A pattern
 * property not in Rust's table ({@link RustRegexSource} `unverified`: a script, a binary property) may match such a
 * character otherwise than Rust; elsewhere the two agree as far as the tables tell. ASCII is skipped (it never differs).
 */
export function differsFromRust(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    let cp = c;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        i++;
      }
    }
    if (cpDiffers(cp)) return true;
  }
  return false;
}

/** V8's `RegExp::kRegExpTooLargeToOptimize`: a RegExp source longer than this (UTF-16 units) is compiled unoptimized. */
export const V8_OPTIMIZED_SOURCE_LIMIT = 20 * 1024;

/** A step whose pattern's rewrite is over {@link V8_OPTIMIZED_SOURCE_LIMIT}: it keeps the runtime's pattern (`fast`), `exact` is Rust's. */
export interface GuardedRegex {
  step: { pattern?: unknown };
  fast: RegExp;
  exact: RegExp;
}

/** What {@link alignTokenizerRegexes} did. */
export interface AlignedRegexes {
  /** The properties left as they were (not in the tables), over all patterns: empty when every pattern follows Rust. */
  unverified: string[];
  /**
   * The patterns left as the runtime has them because their rewrite would run unoptimized (gpt-oss's o200k pattern:
   * 21 KB, its split 5× slower): they cut as Rust does on a text without a character the two tables disagree on
   * ({@link differsFromRust}); for the others the encode takes `exact` (pieceEncoder.ts, tokenizer.ts).
   */
  guarded: GuardedRegex[];
}

/**
 * Rewrites, in place, every RegExp of a tokenizers.js `Tokenizer`'s pre-tokenizer and normalizer (the `Split`,
 * `Replace` and `ByteLevel` steps' `pattern`, inside `Sequence`s too) to Rust's Unicode tables ({@link rustRegex}),
 * so that both of this project's encodes of the tokenizer (pieceEncoder.ts, which copies the `Split` patterns, and
 * tokenizers.js's own) cut as Rust does. Call it before those copies are made. A rewrite over V8's optimization
 * limit is not put in place but returned in `guarded`, for the encode to take on the texts that need it.
 */
export function alignTokenizerRegexes(tok: object): AlignedRegexes {
  const t = tok as { pre_tokenizer?: unknown; normalizer?: unknown };
  const unverified = new Set<string>();
  const guarded: GuardedRegex[] = [];
  const align = (s: JsStep): void => {
    if (!(s.pattern instanceof RegExp)) return;
    const r = rustRegex(s.pattern);
    if (r.re.source.length > V8_OPTIMIZED_SOURCE_LIMIT && r.re !== s.pattern) guarded.push({ step: s, fast: s.pattern, exact: r.re });
    else s.pattern = r.re;
    for (const u of r.unverified) unverified.add(u);
  };
  eachStep(t.pre_tokenizer, align);
  eachStep(t.normalizer, align);
  return { unverified: [...unverified], guarded };
}

/** Runs `fn` with the `exact` patterns of `guarded` in place of the runtime's (restored after, also when it throws). */
export function withExactRegexes<T>(guarded: GuardedRegex[], fn: () => T): T {
  for (const g of guarded) g.step.pattern = g.exact;
  try {
    return fn();
  } finally {
    for (const g of guarded) g.step.pattern = g.fast;
  }
}
