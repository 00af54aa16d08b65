/**
 * JSON Lines (https://jsonlines.org): the lines of a file, plain or compressed,
 * split at the byte level and parsed one by one, and their count.
 *
 * Pure Node (no `vscode`).
 */
import { jsonBreakDescription, jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../../jsonDepth';
import { byteChunks, fileSize, throwIfAborted, type ContainerKind } from './containers';
import type { RawRow } from './rawRow';

const NL = 0x0a;

const CR = 0x0d;

export interface Line {
  text: string;
  line: number;
  bytes: number;
  /** The last line of the file. */
  last?: boolean;
  /** Whether a newline ended the line. */
  newline?: boolean;
}

export function isBlank(s: string): boolean {
  return /^[\s\ufeff]*$/.test(s);
}

export function parseLine(text: string, line: number, bytes: number): RawRow {
  try {
    const value = JSON.parse(text);
    // Fewer characters than the limit cannot nest deeper than it: only longer lines are scanned.
    if (text.length > MAX_JSON_DEPTH && jsonTextDepth(text) > MAX_JSON_DEPTH) return { line, error: `invalid row: ${tooDeepMessage()}`, bytes };
    return { line, value, bytes };
  } catch {
    const fixed = pythonNonFinite(text);
    if (fixed !== undefined) {
      try {
        return { line, value: JSON.parse(fixed), bytes };
      } catch {
        /* still invalid: report the original text's break */
      }
    }
    // What broke and where, in words: the parser's own message quotes the line, which an error must never repeat.
    return { line, error: `invalid JSON: ${jsonBreakDescription(text)}`, bytes };
  }
}

/** Stream the lines of a file (decompressed): split on LF at the byte level, strip BOM and CR, decode UTF-8. */
export async function* streamLines(file: string, kind: ContainerKind, signal?: AbortSignal): AsyncGenerator<Line> {
  let pending: Buffer[] = []; // pieces of the current (incomplete) line
  let consumed = 0; // bytes through the end of the last complete line
  let lineNo = 0;
  let first = true;
  let held: Line | undefined; // the previous complete line, yielded once we know whether it is the last
  for await (const { chunk, rawBytes } of byteChunks(file, kind, signal)) {
    let start = 0;
    if (first) {
      first = false;
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) {
        start = 3;
        consumed = 3;
      }
    }
    for (;;) {
      if (pending.length === 0) {
        // Blank lines (only spaces, tabs, CR) are skipped here, byte by byte: no string, no row, just the line count.
        let i = start;
        while (i < chunk.length) {
          const b = chunk[i];
          if (b === NL) {
            lineNo++;
            consumed += i - start + 1;
            start = ++i;
          } else if (b === 0x20 || b === 0x09 || b === CR) i++;
          else break;
        }
        if (i >= chunk.length) break; // the rest of the chunk (blank so far) is kept as pending below
      }
      const nl = chunk.indexOf(NL, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      const buf = pending.length ? Buffer.concat([...pending, piece]) : piece;
      pending = [];
      consumed += buf.length + 1;
      lineNo++;
      if (held) yield held;
      held = { text: decodeLine(buf), line: lineNo, bytes: kind === 'plain' ? consumed : rawBytes, newline: true };
      throwIfAborted(signal);
      start = nl + 1;
    }
    if (start < chunk.length) pending.push(Buffer.from(chunk.subarray(start)));
  }
  if (pending.length) {
    if (held) yield held;
    const buf = Buffer.concat(pending);
    consumed += buf.length;
    lineNo++;
    yield { text: decodeLine(buf), line: lineNo, bytes: kind === 'plain' ? consumed : await fileSize(file), last: true, newline: false };
  } else if (held) {
    yield { ...held, last: true, bytes: kind === 'plain' ? held.bytes : await fileSize(file) };
  }
}

function decodeLine(buf: Buffer): string {
  const end = buf.length > 0 && buf[buf.length - 1] === CR ? buf.length - 1 : buf.length;
  return buf.toString('utf8', 0, end);
}

/**
 * The number of non-blank lines of a JSONL file, plain or gzip / zstd
 * compressed (the rows {@link streamLines} yields, without parsing JSON, so
 * invalid lines count too): streamed in 1 MiB chunks, jumping from newline to
 * newline with `Buffer.indexOf` and looking only at a line's first bytes.
 */
export async function countLines(file: string, kind: ContainerKind, signal?: AbortSignal): Promise<number> {
  let count = 0;
  let content = false; // the current line (continued from the previous chunk) has a non-blank byte
  let first = true;
  for await (const { chunk } of byteChunks(file, kind, signal)) {
    let i = 0;
    if (first) {
      first = false;
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    }
    while (i < chunk.length) {
      if (!content) {
        // skip blanks at the line start; most lines end this loop on their first byte
        while (i < chunk.length) {
          const b = chunk[i];
          if (b === NL) break;
          if (b !== 0x20 && b !== 0x09 && b !== CR) {
            content = true;
            break;
          }
          i++;
        }
        if (i >= chunk.length) break;
        if (chunk[i] === NL) {
          i++;
          continue;
        }
      }
      const nl = chunk.indexOf(NL, i);
      if (nl === -1) break;
      count++;
      content = false;
      i = nl + 1;
    }
  }
  return content ? count + 1 : count;
}

/**
 * Python's `json.dumps` writes `NaN`, `Infinity` and `-Infinity` for
 * non-finite floats (pandas missing values), which JSON does not allow: the
 * text with those tokens (outside strings) replaced by `null`, or undefined
 * when there are none.
 */
function pythonNonFinite(text: string): string | undefined {
  if (!/NaN|Infinity/.test(text)) return undefined;
  let out = '';
  let inStr = false;
  let changed = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inStr) {
      out += c;
      if (c === '\\') {
        out += text[i + 1] ?? '';
        i++;
      } else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') {
      inStr = true;
      out += c;
      continue;
    }
    const m = /^(-?Infinity|NaN)/.exec(text.slice(i, i + 9));
    if (m) {
      out += 'null';
      i += m[0].length - 1;
      changed = true;
      continue;
    }
    out += c;
  }
  return changed ? out : undefined;
}
