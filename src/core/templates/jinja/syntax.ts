/**
 * Places where `@huggingface/jinja`'s lexer and parser read Jinja differently from jinja2, closed around them
 * (on the source before `tokenize`, on the tokens between `tokenize` and `parse`) so the library's grammar stays
 * as it is:
 *
 * - String literals: jinja2 decodes them as Python does (`unicode-escape`): `\` + newline is a line
 *   continuation, `\a`, octal `\101`, `\U0001F600` are escapes, and an unknown escape such as `\d` stays as
 *   written. The library knows only `\n \t \r \b \f \v \' \" \\ \x \u` and refuses the rest, so a template
 *   like Mistral-Small-3.1's (a long string continued with `\` at line ends) would not compile.
 *   {@link rewriteLiterals} decodes each literal inside `{{ }}` / `{% %}` as jinja2 does and writes it back
 *   with escapes the library reads; control characters (newlines included) become escapes, so the library's
 *   `trim_blocks` / `lstrip_blocks` passes, which run over the whole source, cannot touch text inside a string
 *   (jinja2 never applies them there either).
 * - Number literals: jinja2 reads `1e3` and `2.5e-3` (floats), `1_000`, `0x1F`, `0o17`, `0b101`; the library reads
 *   only digits with an optional fraction (`1e3` would be `1` followed by a name). {@link rewriteLiterals} writes
 *   them as plain decimals of the same value.
 * - Tuples with a trailing comma: `(1,)` and `()` ({@link rewriteTuples}).
 * - `~` binds tighter than `+` and `-` in jinja2 (`a + b ~ c` is `a + (b ~ c)`); the library gives the three one
 *   precedence, left to right. {@link rewriteConcat} parenthesizes a `~` chain that stands next to `+`/`-`.
 * - Tests with an argument: `x is sameas true`, `x is divisibleby 3`, `x is in ['a']`, `x is eq(1)` (OLMo-3's
 *   template uses `is sameas true`). The library's parser accepts only `is name`. {@link rewriteTests} turns
 *   `is [not] name ARG` into a filter call on a reserved name (`x | is:sameas(true)`), which the evaluator runs
 *   as the test; the argument is taken as jinja2's parser takes it (`parse_test`: call arguments in parentheses,
 *   else one primary expression with its postfixes unless the next word is `else`, `or` or `and`). A filter
 *   binds like a test here: both are postfixes of the operand, and a filter after the test applies to its result.
 */
import { PyError } from './values';

/** A token of `@huggingface/jinja`'s lexer (`Token`: the parser reads only `type` and `value`). */
export interface LexToken {
  value: string;
  type: string;
}

/** Filter-name prefixes that mark a rewritten test (not writable in a template: identifiers are `\w+`). */
export const TEST_PREFIX = 'is:';
export const NOT_TEST_PREFIX = 'is not:';

// ---------------------------------------------------------------------------------------------------------------
// String literals

/** Decodes a string literal's body as jinja2 does (Python `unicode-escape`). @throws PyError for malformed escapes */
export function decodePythonEscapes(body: string): string {
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    if (e === undefined) throw new PyError('TemplateSyntaxError', '\\ at end of string');
    switch (e) {
      case '\n':
        break;
      case '\\':
      case "'":
      case '"':
        out += e;
        break;
      case 'a':
        out += '\u0007';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\u000b';
        break;
      case 'x':
      case 'u':
      case 'U': {
        const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = body.slice(i + 1, i + 1 + n);
        if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) throw new PyError('TemplateSyntaxError', `truncated \\${e}${'X'.repeat(n)} escape`);
        const cp = parseInt(hex, 16);
        if (cp > 0x10ffff) throw new PyError('TemplateSyntaxError', 'illegal Unicode character');
        out += String.fromCodePoint(cp);
        i += n;
        break;
      }
      case 'N':
        throw new PyError('TemplateSyntaxError', 'named Unicode escapes (\\N{...}) in template strings are not supported by the renderer');
      default:
        if (e >= '0' && e <= '7') {
          let oct = e;
          while (oct.length < 3 && body[i + 1] >= '0' && body[i + 1] <= '7') oct += body[++i];
          out += String.fromCodePoint(parseInt(oct, 8));
        } else out += '\\' + e; // Python keeps unknown escapes as written
    }
  }
  return out;
}

/** A string literal the library's lexer decodes to `s`. */
function encodeForLibrary(s: string, quote: string): string {
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + quote;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + quote;
}

const FLOAT_RE = /(?:\d+_)*\d+(?:(?:\.(?:\d+_)*\d+)?[eE][+-]?(?:\d+_)*\d+|\.(?:\d+_)*\d+)/y;
const INT_RE = /0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0[xX](?:_?[\da-fA-F])+|[1-9](?:_?\d)*|0(?:_?0)*/y;

/** A float literal's exact value written as plain decimal digits with a point (`2.5e-3` → `0.0025`). */
function plainDecimal(text: string): string {
  const [mant, expText] = text.replace(/_/g, '').toLowerCase().split('e');
  const [ip, fp = ''] = mant.split('.');
  let digits = (ip + fp).replace(/^0+(?=\d)/, '');
  let point = digits.length - fp.length + Number(expText ?? 0); // digits before the point
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  } else if (point > digits.length) digits = digits.padEnd(point, '0');
  const frac = digits.slice(point).replace(/0+$/, '');
  return `${digits.slice(0, point).replace(/^0+(?=\d)/, '')}.${frac || '0'}`;
}

/**
 * The number literal jinja2's lexer reads at `at` (float before integer; `_` separators, exponents,
 * `0x`/`0o`/`0b`), as text the library's lexer reads to the same value (unchanged for plain digits and `1.5`);
 * null when no number starts there.
 * @throws PyError `TemplateSyntaxError` for `007` (jinja2 refuses leading zeros)
 */
function numberAt(src: string, at: number): { text: string; end: number } | null {
  if (src[at - 1] !== '.') {
    FLOAT_RE.lastIndex = at;
    const f = FLOAT_RE.exec(src);
    if (f) return { text: /[_eE]/.test(f[0]) ? plainDecimal(f[0]) : f[0], end: at + f[0].length };
  }
  INT_RE.lastIndex = at;
  const m = INT_RE.exec(src);
  if (!m) return null;
  if (/^0[_0]*$/.test(m[0]) && /[1-9]/.test(src[at + m[0].length] ?? ''))
    throw new PyError('TemplateSyntaxError', `leading zeros in an integer literal: ${src.slice(at, at + m[0].length + 1)}`);
  if (!/[_xXoObB]/.test(m[0])) return { text: m[0], end: at + m[0].length };
  const v = m[0].replace(/_/g, '');
  const base = /^0[xX]/.test(v) ? 16 : /^0[oO]/.test(v) ? 8 : /^0[bB]/.test(v) ? 2 : 10;
  const digits = base === 10 ? v : v.slice(2);
  let n = 0n;
  for (const d of digits.toLowerCase()) n = n * BigInt(base) + BigInt(parseInt(d, base));
  return { text: n.toString(), end: at + m[0].length };
}

/** The text a {@link rewriteGenerationTags} marks a block's start and end with (Unicode private-use characters, never in real text). */
export interface GenerationMarkers {
  start: string;
  end: string;
}

/**
 * Rewrites `{% generation %}` / `{% endgeneration %}` (transformers' `AssistantTracker` extension) into block tags
 * that render nothing: `{% if true %}{% endif %}`, the tag's own `-` flags kept on the outer sides. jinja2 lexes the
 * generation tags as block tags, so `trim_blocks` drops the newline after them and `lstrip_blocks` the indentation
 * before them, exactly as for this `if` (the library's own handling of the tags keeps that whitespace). With
 * `markers`, the start / end marker is written inside the `if`, so a block's position survives rendering.
 * @param src template source with `\n` line endings
 */
export function rewriteGenerationTags(src: string, markers?: GenerationMarkers): string {
  return src.replace(
    /\{%(-?)\s*(end)?generation\s*(-?)%\}/g,
    (_m, l: string, end: string | undefined, r: string) => `{%${l} if true %}${markers ? (end ? markers.end : markers.start) : ''}{% endif ${r}%}`,
  );
}

/**
 * Rewrites every string and number literal inside `{{ }}` and `{% %}` tags so that the library's lexer reads the
 * value jinja2 reads (see the module comment; numbers: `1e3`, `1_000`, `0x1F`). Text outside tags and comments
 * are copied as they are.
 * @param src template source with `\n` line endings
 * @throws PyError `TemplateSyntaxError` for literals jinja2 refuses (`'\x4'`, `007`)
 */
export function rewriteLiterals(src: string): string {
  let out = '';
  let i = 0;
  const n = src.length;
  while (i < n) {
    const open = src.slice(i).search(/\{[{%#]/);
    if (open < 0) {
      out += src.slice(i);
      break;
    }
    out += src.slice(i, i + open + 2);
    const kind = src[i + open + 1];
    i += open + 2;
    if (kind === '#') {
      const end = src.indexOf('#}', i);
      const stop = end < 0 ? n : end + 2;
      out += src.slice(i, stop);
      i = stop;
      continue;
    }
    const closer = kind === '{' ? '}}' : '%}';
    let depth = 0;
    while (i < n) {
      const c = src[i];
      if (c === "'" || c === '"') {
        let j = i + 1;
        while (j < n && src[j] !== c) j += src[j] === '\\' ? 2 : 1;
        if (j >= n) {
          out += src.slice(i);
          i = n;
          break;
        }
        out += encodeForLibrary(decodePythonEscapes(src.slice(i + 1, j)), c);
        i = j + 1;
        continue;
      }
      if (c >= '0' && c <= '9' && !/\w/.test(src[i - 1] ?? '')) {
        const num = numberAt(src, i);
        if (num) {
          out += num.text;
          i = num.end;
          continue;
        }
      }
      if (depth === 0 && src.startsWith(closer, i)) {
        out += closer;
        i += 2;
        break;
      }
      if (kind === '{' && c === '{') depth++;
      else if (kind === '{' && c === '}') depth--;
      out += c;
      i++;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Tests with arguments

const OPEN: Record<string, string> = { OpenParen: 'CloseParen', OpenSquareBracket: 'CloseSquareBracket', OpenCurlyBracket: 'CloseCurlyBracket' };

/** Index of the token closing the bracket opened at `at` (balanced). */
function closing(tokens: LexToken[], at: number): number {
  const open = tokens[at].type;
  const close = OPEN[open];
  let depth = 0;
  for (let i = at; i < tokens.length; i++) {
    if (tokens[i].type === open) depth++;
    else if (tokens[i].type === close && --depth === 0) return i;
  }
  throw new PyError('TemplateSyntaxError', `unclosed ${open}`);
}

/** End (exclusive) of jinja2's `parse_primary` + `parse_postfix` starting at `k`. */
function primaryEnd(tokens: LexToken[], k: number): number {
  let e: number;
  const t = tokens[k];
  if (t.type === 'StringLiteral') {
    e = k + 1;
    while (tokens[e]?.type === 'StringLiteral') e++;
  } else if (t.type in OPEN) e = closing(tokens, k) + 1;
  else e = k + 1;
  for (;;) {
    const p = tokens[e];
    if (p?.type === 'Dot' && tokens[e + 1]) e += 2;
    else if (p && (p.type === 'OpenSquareBracket' || p.type === 'OpenParen')) e = closing(tokens, e) + 1;
    else return e;
  }
}

/** The name of the placeholder element that marks a tuple written with a trailing comma (`(1,)`, `()`). */
export const TUPLE_END = '\u0000tuple-end';

/** Words after which `(` opens a parenthesized expression rather than a call's arguments. */
const KEYWORDS = new Set(['in', 'and', 'or', 'not', 'if', 'elif', 'else', 'is', 'for', 'set']);

/**
 * Lets the library's parser read `(x,)` and `()` as tuples (it reads `(x, y)` only): a placeholder element
 * ({@link TUPLE_END}) is put before the closing parenthesis of a parenthesized expression that ends with a comma
 * or is empty; the evaluator drops it. Call arguments (`f(a,)`) are left alone.
 */
export function rewriteTuples(tokens: LexToken[]): LexToken[] {
  const out: LexToken[] = [];
  const end = (): LexToken => ({ type: 'Identifier', value: TUPLE_END });
  const closers = new Map<number, 'comma' | 'empty'>();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type === 'OpenParen') {
      const prev = tokens[i - 1];
      const grouping =
        !prev ||
        !(
          (prev.type === 'Identifier' && !KEYWORDS.has(prev.value)) ||
          ['CloseParen', 'CloseSquareBracket', 'CloseCurlyBracket', 'StringLiteral', 'NumericLiteral'].includes(prev.type)
        );
      if (grouping) {
        const close = closing(tokens, i);
        if (close === i + 1) closers.set(close, 'empty');
        else if (tokens[close - 1].type === 'Comma') closers.set(close, 'comma');
      }
    }
    const mark = closers.get(i);
    if (mark === 'empty') out.push(end(), { type: 'Comma', value: ',' }, end());
    else if (mark === 'comma') out.push(end());
    out.push(t);
  }
  return out;
}

/**
 * Rewrites `is [not] name ARG` (a test with an argument) into a filter call on a reserved name
 * (`| is:name(ARG)` / `| is not:name(ARG)`); `is [not] name` without an argument is left to the parser.
 */
export function rewriteTests(tokens: LexToken[]): LexToken[] {
  const out: LexToken[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.type !== 'Identifier' || t.value !== 'is') {
      out.push(t);
      continue;
    }
    let j = i + 1;
    const negate = tokens[j]?.type === 'Identifier' && tokens[j].value === 'not';
    if (negate) j++;
    const name = tokens[j];
    const next = tokens[j + 1];
    if (!name || name.type !== 'Identifier' || !next) {
      out.push(t);
      continue;
    }
    let args: [number, number] | null = null;
    let end = j + 1;
    if (next.type === 'OpenParen') {
      const close = closing(tokens, j + 1);
      args = [j + 2, close];
      end = close + 1;
    } else if (
      ['Identifier', 'StringLiteral', 'NumericLiteral', 'OpenSquareBracket', 'OpenCurlyBracket'].includes(next.type) &&
      !(next.type === 'Identifier' && ['else', 'or', 'and'].includes(next.value))
    ) {
      if (next.type === 'Identifier' && next.value === 'is') throw new PyError('TemplateSyntaxError', 'You cannot chain multiple tests with is');
      end = primaryEnd(tokens, j + 1);
      args = [j + 1, end];
    }
    if (!args) {
      out.push(t);
      continue;
    }
    out.push(
      { type: 'Pipe', value: '|' },
      { type: 'Identifier', value: (negate ? NOT_TEST_PREFIX : TEST_PREFIX) + name.value },
      { type: 'OpenParen', value: '(' },
      ...tokens.slice(args[0], args[1]),
      { type: 'CloseParen', value: ')' },
    );
    i = end - 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Concatenation precedence

const CLOSE = new Set(['CloseParen', 'CloseSquareBracket', 'CloseCurlyBracket']);
const OPENING = new Set(['OpenParen', 'OpenSquareBracket', 'OpenCurlyBracket']);
const HARD_STOPS = new Set(['ComparisonBinaryOperator', 'Comma', 'Colon', 'Equals', 'OpenStatement', 'CloseStatement', 'OpenExpression', 'CloseExpression']);

/** Whether token `i` ends a `~` operand (an operator or word that binds looser than `~`, or a delimiter). */
function endsOperand(tokens: LexToken[], i: number): boolean {
  const t = tokens[i];
  if (!t) return true;
  if (t.type === 'AdditiveBinaryOperator' || HARD_STOPS.has(t.type)) return true;
  if (t.type !== 'Identifier') return false;
  const prev = tokens[i - 1];
  const afterIs = prev?.type === 'Identifier' && (prev.value === 'is' || (prev.value === 'not' && tokens[i - 2]?.value === 'is'));
  switch (t.value) {
    case 'and':
    case 'or':
    case 'if':
    case 'else':
      return true;
    case 'not':
    case 'in':
      return !afterIs;
  }
  return false;
}

const isPlusMinus = (t: LexToken | undefined) => t?.type === 'AdditiveBinaryOperator' && (t.value === '+' || t.value === '-');

/**
 * Parenthesizes each chain `x ~ y ~ …` that has a `+` or `-` on either side at its own bracket depth, so the
 * library's left-to-right additive parse gives jinja2's result (`a + b ~ c` → `a + (b ~ c)`).
 */
export function rewriteConcat(tokens: LexToken[]): LexToken[] {
  const opens = new Map<number, number>(); // index → '(' to insert before it
  const closes = new Map<number, number>(); // index → ')' to insert after it
  for (let p = 0; p < tokens.length; p++) {
    if (!(tokens[p].type === 'AdditiveBinaryOperator' && tokens[p].value === '~')) continue;
    // Left operand: back to the first token that ends an operand at this depth.
    let L = p - 1;
    for (let depth = 0; L >= 0; L--) {
      const t = tokens[L];
      if (CLOSE.has(t.type)) depth++;
      else if (OPENING.has(t.type)) {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && endsOperand(tokens, L)) break;
    }
    // Right operands: forward through every `~` of the chain.
    let R = p + 1;
    for (let depth = 0; R < tokens.length; R++) {
      const t = tokens[R];
      if (OPENING.has(t.type)) depth++;
      else if (CLOSE.has(t.type)) {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && endsOperand(tokens, R) && !(t.type === 'AdditiveBinaryOperator' && t.value === '~')) break;
    }
    if (isPlusMinus(tokens[L]) || isPlusMinus(tokens[R])) {
      opens.set(L + 1, (opens.get(L + 1) ?? 0) + 1);
      closes.set(R - 1, (closes.get(R - 1) ?? 0) + 1);
    }
    p = R - 1;
  }
  if (opens.size === 0) return tokens;
  const out: LexToken[] = [];
  tokens.forEach((t, i) => {
    for (let k = opens.get(i) ?? 0; k > 0; k--) out.push({ type: 'OpenParen', value: '(' });
    out.push(t);
    for (let k = closes.get(i) ?? 0; k > 0; k--) out.push({ type: 'CloseParen', value: ')' });
  });
  return out;
}
