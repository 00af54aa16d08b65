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
