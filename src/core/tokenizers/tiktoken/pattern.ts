/**
 * Translation of a tiktoken pre-tokenizer pattern (Rust fancy-regex syntax, as in
 * `pat_str`) into a JavaScript RegExp with the `v` flag: character-class
 * intersection, Unicode properties and scripts, scoped case-insensitivity.
 */

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
  return new PatternTranslator(pat).translate();
}

/** A pattern being read left to right: `i` is the offset of the next character to translate. */
class PatternTranslator {
  private i = 0;

  constructor(private readonly pat: string) {}

  /** @throws Error naming what is not translated, the offset and the pattern */
  private fail(what: string): never {
    throw new Error(`pre-tokenizer pattern: ${what} at offset ${this.i} of ${JSON.stringify(this.pat)}`);
  }

  /** The whole pattern, outside any class; `(?i:…)` scopes case-insensitivity to its group. */
  translate(): string {
    const pat = this.pat;
    let out = '';
    const ciStack: boolean[] = [false];
    while (this.i < pat.length) {
      const ci = ciStack[ciStack.length - 1];
      const c = pat[this.i];
      if (c === '\\') out += this.escape(false, ci);
      else if (c === '[') out += this.klass(ci);
      else if (c === '(') out += this.groupOpen(ci, ciStack);
      else if (c === ')') {
        if (ciStack.length === 1) this.fail('unbalanced )');
        ciStack.pop();
        out += ')';
        this.i++;
      } else if ('|*+?.^$'.includes(c)) {
        out += c;
        this.i++;
      } else if (c === '{') {
        const m = /^\{\d+(,\d*)?\}/.exec(pat.slice(this.i));
        if (!m) this.fail('bad repetition');
        out += m![0];
        this.i += m![0].length;
      } else {
        const ch = String.fromCodePoint(pat.codePointAt(this.i)!);
        this.i += ch.length;
        out += literal(ch, ci, false);
      }
    }
    if (ciStack.length !== 1) this.fail('unbalanced (');
    return out;
  }

  /**
   * A group's opening at pat[i] === '(': `(?i:` becomes a non-capturing group whose letters are case-expanded,
   * lookarounds and `(?:` stay, a capture group becomes non-capturing (the matches are the same). Pushes the
   * group's case-insensitivity.
   */
  private groupOpen(ci: boolean, ciStack: boolean[]): string {
    const pat = this.pat;
    if (pat.startsWith('(?i:', this.i)) {
      ciStack.push(true);
      this.i += 4;
      return '(?:';
    }
    if (pat[this.i + 1] === '?') {
      const m = /^\(\?(?::|=|!|<=|<!)/.exec(pat.slice(this.i));
      if (!m) this.fail('unsupported group syntax');
      ciStack.push(ci);
      this.i += m![0].length;
      return m![0];
    }
    ciStack.push(ci);
    this.i++;
    return '(?:';
  }

  /** Reads one escape starting at pat[i] === '\\'; returns its JS form (for use inside or outside a class). */
  private escape(inClass: boolean, ci: boolean): string {
    const pat = this.pat;
    const c = pat[this.i + 1];
    if (c === undefined) this.fail('dangling backslash');
    if (c === 'p' || c === 'P') {
      let name: string;
      if (pat[this.i + 2] === '{') {
        const end = pat.indexOf('}', this.i + 3);
        if (end < 0) this.fail('unterminated \\p{');
        name = pat.slice(this.i + 3, end);
        this.i = end + 1;
      } else {
        name = pat[this.i + 2];
        this.i += 3;
      }
      return propertyEscape(name, c === 'P', pat);
    }
    this.i += 2;
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
        if (/[A-Za-z0-9]/.test(c)) this.fail(`unsupported escape \\${c}`);
        if (ci && !inClass) return literal(c, ci, inClass);
        return inClass ? classLiteral(c) : '\\' + c;
    }
  }

  /** Parses a class starting at pat[i] === '['; returns the v-flag class source (`&&` operands bracketed). */
  private klass(ci: boolean): string {
    const pat = this.pat;
    this.i++;
    let neg = '';
    if (pat[this.i] === '^') {
      neg = '^';
      this.i++;
    }
    const operands: string[] = [];
    let cur = '';
    let first = true;
    for (;;) {
      if (this.i >= pat.length) this.fail('unterminated character class');
      const c = pat[this.i];
      if (c === ']' && !first) {
        this.i++;
        break;
      }
      first = false;
      if (c === '&' && pat[this.i + 1] === '&') {
        operands.push(cur);
        cur = '';
        this.i += 2;
      } else if (c === '[') cur += this.klass(ci);
      else if (c === '\\') cur += this.escape(true, ci);
      else cur += this.classMember(ci);
    }
    operands.push(cur);
    if (operands.length === 1) return `[${neg}${operands[0]}]`;
    return `[${neg}${operands.map((o) => `[${o}]`).join('&&')}]`;
  }

  /** One character of a class at pat[i], or a range `a-z` from it (refused under `(?i:`). */
  private classMember(ci: boolean): string {
    const pat = this.pat;
    const ch = String.fromCodePoint(pat.codePointAt(this.i)!);
    this.i += ch.length;
    if (pat[this.i] === '-' && pat[this.i + 1] !== ']' && pat[this.i + 1] !== undefined) {
      const hi = String.fromCodePoint(pat.codePointAt(this.i + 1)!);
      this.i += 1 + hi.length;
      if (ci) this.fail('case-insensitive class range');
      return `${classLiteral(ch)}-${classLiteral(hi)}`;
    }
    return literal(ch, ci, true);
  }
}

/** One literal character, as a class member or outside a class; under `(?i:` a letter becomes all its case variants. */
function literal(ch: string, ci: boolean, inClass: boolean): string {
  if (ci && /\p{L}/u.test(ch)) {
    const v = caseVariants(ch).map(classLiteral).join('');
    return inClass ? v : `[${v}]`;
  }
  if (inClass) return classLiteral(ch);
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? '\\' + ch : ch;
}
