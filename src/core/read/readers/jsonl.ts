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

/** One line of a file as bytes ({@link streamLineBytes}), not decoded. */
export interface LineBytes {
  /** The line's bytes, its trailing CR (CRLF) removed: a view of a read chunk, or a copy when the line spans chunks. */
  buf: Buffer;
  line: number;
  bytes: number;
  /** The last line of the file. */
  last?: boolean;
  /** Whether a newline ended the line. */
  newline?: boolean;
}

/**
 * The lines of a file (decompressed) as bytes, not decoded: split on LF at the byte level, the BOM at the file's start
 * and each line's trailing CR left out, lines of spaces, tabs and CRs alone skipped (counted for line numbers). A line
 * that spans read chunks (a multi-byte character split between them included) is joined before it is yielded.
 */
export async function* streamLineBytes(file: string, kind: ContainerKind, signal?: AbortSignal): AsyncGenerator<LineBytes> {
  let pending: Buffer[] = []; // pieces of the current (incomplete) line
  let consumed = 0; // bytes through the end of the last complete line
  let lineNo = 0;
  let first = true;
  let held: LineBytes | undefined; // the previous complete line, yielded once we know whether it is the last
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
      held = { buf: withoutCr(buf), line: lineNo, bytes: kind === 'plain' ? consumed : rawBytes, newline: true };
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
    yield { buf: withoutCr(buf), line: lineNo, bytes: kind === 'plain' ? consumed : await fileSize(file), last: true, newline: false };
  } else if (held) {
    yield { ...held, last: true, bytes: kind === 'plain' ? held.bytes : await fileSize(file) };
  }
}

/** `buf` without its last byte when that is a CR (a CRLF line's end). */
function withoutCr(buf: Buffer): Buffer {
  return buf.length > 0 && buf[buf.length - 1] === CR ? buf.subarray(0, buf.length - 1) : buf;
}

/**
 * Whether a line's first byte that is not a space, tab or CR is `{`: the line is one row (a JSON object, or one
 * invalid line), never a list of rows, so it can be sent on unparsed (`ReadOptions.objectLines`). A UTF-8 BOM or any
 * other character before the `{` says no (such a line is parsed where it is read, as before).
 */
export function startsObject(buf: Uint8Array): boolean {
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (b !== 0x20 && b !== 0x09 && b !== CR) return b === 0x7b;
  }
  return false;
}

/** What a parse error of the file's last line adds when no newline ends it. */
export const TRUNCATED_LAST_LINE = ' (the last line has no newline at its end: the file looks truncated)';

/**
 * One JSON Lines line given as its UTF-8 bytes ({@link LineBytes.buf}), parsed exactly as {@link parseLine} parses
 * its decoded text (the same decoding: malformed UTF-8 becomes U+FFFD), for a row read unparsed (`RawRow.raw`, parsed
 * by the thread that processes it). `truncated`: it is the file's last line and no newline ends it (an error then
 * says so, as the reader's own does).
 */
export function parseLineBytes(buf: Uint8Array, line: number, bytes: number, truncated?: boolean): RawRow {
  const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('utf8');
  const row = parseLine(text, line, bytes);
  if (row.error !== undefined && truncated) row.error += TRUNCATED_LAST_LINE;
  return row;
}

/**
 * The number of non-blank lines of a JSONL file, plain or gzip / zstd
 * compressed (the lines {@link streamLineBytes} yields, without parsing JSON, so
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
