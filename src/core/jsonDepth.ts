/**
 * Nesting limits for JSON values read from datasets.
 *
 * `JSON.parse` (V8) parses any depth without recursion, but most code that
 * walks a value afterwards recurses once per level: `JSON.stringify`,
 * `structuredClone` (`postMessage` to a pool worker), the chat-template
 * evaluator (`tojson`), `jsonc-parser`. On Node 20 they overflow the stack
 * somewhere between 1,000 and 5,000 levels (`Maximum call stack size exceeded`)
 * — less in a thread with a smaller stack. Rows are therefore refused above
 * {@link MAX_JSON_DEPTH} levels, with a message naming the depth, before any of
 * that code sees them. No chat or agent format nests anywhere near that deep
 * (serde_json, which Rust tooling uses, refuses 128 levels; Python's `json`
 * fails near its recursion limit of 1,000).
 *
 * Every function here is iterative except {@link jsonBreakDescription}, which describes where a text breaks
 * (jsonc-parser, after the depth check). Also where JSON text that does not parse is described in words.
 */
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';

/** Deepest nesting of arrays and objects accepted in one row (the row itself is level 1). */
export const MAX_JSON_DEPTH = 512;

/**
 * The nesting depth of a JSON text: the largest number of `[`/`{` open at
 * once outside strings (`1` for `{}`, `0` for a scalar). Stops counting at
 * `limit + 1`, so the answer is `min(depth, limit + 1)`. The text need not be
 * valid JSON (an unterminated string or bracket just ends the scan).
 * Linear in the text's length (a text of at most `limit` characters cannot
 * exceed `limit`: callers may skip those).
 */
export function jsonTextDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote (escapes included)
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return limit + 1;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/**
 * Whether a parsed JSON value nests deeper than `limit` levels of arrays and
 * objects (an explicit stack: never overflows). Cyclic values are not JSON and
 * are not expected.
 */
export function valueDeeperThan(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: { v: object; d: number }[] = [{ v: value as object, d: 1 }];
  while (stack.length) {
    const { v, d } = stack.pop()!;
    if (d > limit) return true;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) if (c !== null && typeof c === 'object') stack.push({ v: c as object, d: d + 1 });
  }
  return false;
}

/** The message of a row refused for its depth: `nested more than 512 levels deep (arrays/objects); …`. */
export function tooDeepMessage(what = 'the row', limit = MAX_JSON_DEPTH): string {
  return `${what} is nested more than ${limit} levels deep (arrays/objects); no chat format nests that deep, so it is not read`;
}

/** The error {@link parseJsonLimited} throws for a text nested too deep. */
export class JsonTooDeepError extends SyntaxError {}

/**
 * `JSON.parse` for JSON held in a string field of a row (tool-call arguments,
 * a `tools` list given as a string, …): the same result, or a
 * {@link JsonTooDeepError} (a `SyntaxError`, so callers that treat unparsable
 * text as text keep doing so) when the text nests deeper than `limit`.
 * @throws SyntaxError as `JSON.parse`
 */
export function parseJsonLimited(text: string, limit = MAX_JSON_DEPTH): unknown {
  if (jsonTextDepth(text, limit) > limit) throw new JsonTooDeepError(tooDeepMessage('the JSON text', limit));
  return JSON.parse(text);
}

/** Whether an error is a JavaScript stack overflow (`RangeError: Maximum call stack size exceeded`). */
export function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/** What jsonc-parser's error codes mean, in words. */
const JSON_ERROR_WORDS: Record<string, string> = {
  InvalidSymbol: 'a character that JSON does not allow here',
  InvalidNumberFormat: 'a malformed number',
  PropertyNameExpected: 'a property name in double quotes was expected',
  ValueExpected: 'a value was expected',
  ColonExpected: 'a ":" was expected',
  CommaExpected: 'a "," was expected',
  CloseBraceExpected: 'a closing "}" was expected',
  CloseBracketExpected: 'a closing "]" was expected',
  EndOfFileExpected: 'text follows the end of the JSON value',
  InvalidCommentToken: 'a comment, which JSON does not allow',
  UnexpectedEndOfComment: 'an unfinished comment',
  UnexpectedEndOfString: 'the text ends inside a string',
  UnexpectedEndOfNumber: 'the text ends inside a number',
  InvalidUnicode: 'an invalid \\u escape',
  InvalidEscapeCharacter: 'an invalid escape character',
  InvalidCharacter: 'a control character inside a string',
};

/**
 * Where and why a text is not valid JSON, in words, without quoting the text
 * (error messages never repeat a fragment of the input, nor a parser's
 * internal wording): `a "," was expected at character 14 of 40`, `a value was
 * expected at character 5 of 5: the text ends too early (cut off?)`; with
 * `lines`, `… at line 3, column 9` (a whole document); with `jsonc`, comments
 * and trailing commas are allowed (JSONC files). Uses jsonc-parser for the position.
 */
export function jsonBreakDescription(text: string, opts: { lines?: boolean; jsonc?: boolean } = {}): string {
  if (text.trim() === '' && !opts.jsonc) return 'it is empty';
  // jsonc-parser recurses once per nesting level: a text nested deeper than any row may be is described, not parsed.
  if (text.length > MAX_JSON_DEPTH && jsonTextDepth(text) > MAX_JSON_DEPTH) return tooDeepMessage();
  const errors: ParseError[] = [];
  try {
    // JSONC (eagle3prep.jsonc, mapping files): comments and trailing commas allowed, empty content too.
    parse(text, errors, { disallowComments: !opts.jsonc, allowTrailingComma: !!opts.jsonc, allowEmptyContent: !!opts.jsonc });
  } catch {
    return 'it does not parse'; // a stack overflow on a stack already deep: no position rather than no message
  }
  if (!errors.length) return 'it does not parse';
  const e = errors[0];
  const code = printParseErrorCode(e.error);
  const what =
    text[e.offset] === '\ufeff'
      ? 'a byte-order mark (U+FEFF) in the middle of the file (files concatenated?)'
      : (JSON_ERROR_WORDS[code] ?? code) + (text[e.offset] === "'" ? ' (a single quote: JSON strings take double quotes)' : '');
  const cut = e.offset >= text.trimEnd().length || code.startsWith('UnexpectedEndOf') ? ': the text ends too early (cut off?)' : '';
  if (opts.lines) {
    // A whole document: line and column of the break (1-based).
    const before = text.slice(0, e.offset);
    const line = before.split('\n').length;
    const col = e.offset - before.lastIndexOf('\n');
    return `${what} at line ${line}, column ${col}${cut}`;
  }
  const at = Math.min(e.offset + 1, text.length);
  return `${what} at character ${at} of ${text.length}${cut}`;
}
