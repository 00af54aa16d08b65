/**
 * Row readers: turn a dataset file into a stream of raw rows (parsed JSON
 * values with their 1-based line numbers), without interpreting them.
 *
 * Supported layouts:
 * - JSON Lines (https://jsonlines.org): one JSON value per line, streamed.
 * - A JSON document (`.json`, or any file whose first non-blank line is a lone
 *   `[` / `{`): a top-level array of records, an object wrapping such an array
 *   under a conventional key (`data`, `rows`, `records`, …), or one object.
 *
 * Pure Node (no `vscode`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, visit, type ParseError } from 'jsonc-parser';

/** One row read from a file. */
export interface RawRow {
  /** 1-based line number of the row (for a JSON document: the line the element starts on). */
  line: number;
  /** The parsed JSON value; absent when `error` is set. */
  value?: unknown;
  /** Why the row could not be parsed, e.g. `invalid JSON: Unexpected token '}', …`. */
  error?: string;
  /** Bytes of the file consumed so far (through the end of this row), for progress. */
  bytes: number;
}

/** Options of {@link readRows}. */
export interface ReadOptions {
  /** Stops reading: the generator throws the signal's reason at the next row. */
  signal?: AbortSignal;
}

/** Object keys that conventionally wrap the record array of a JSON document (`{"data": [...]}`). */
export const WRAPPER_KEYS = ['data', 'rows', 'records', 'examples', 'items', 'instances', 'samples', 'train', 'dataset'];

const NL = 0x0a;
const CR = 0x0d;
const BOM = '\ufeff';
/** Chunk size of the JSONL stream (bytes). */
const CHUNK = 1 << 20;

/**
 * Read the rows of a dataset file.
 *
 * JSONL (default for every extension except `.json`): streamed with
 * `fs.createReadStream`, split on `\n` at the byte level; a UTF-8 BOM at the
 * start is ignored, a trailing `\r` (CRLF) is stripped, blank / whitespace-only
 * lines are skipped (they are not rows but still count for line numbers), a line
 * that is not valid JSON yields `{line, error: "invalid JSON: <parser message>"}`
 * and reading continues, a last line without a newline is still a row.
 *
 * JSON document (`.json`, or a JSONL-named file whose first non-blank line is a
 * lone `[` or `{`): read whole (meant for files up to ~100 MB). A top-level array
 * yields one row per element, `line` = the line the element starts on; an
 * object wrapping one array under a key of {@link WRAPPER_KEYS} (or its only
 * array-of-objects field) yields that array's elements; any other object is one
 * row. A `.json` file that is really JSONL (its document does not parse but its
 * first line does) is read as JSONL. A document that does not parse yields one
 * row with `error` at the line of the parse error. `bytes` is the file size
 * scaled by the element's end offset (the file is already read).
 *
 * @throws Error naming the file when it is missing, a directory or unreadable;
 *   the signal's reason when `opts.signal` aborts.
 */
export async function* readRows(file: string, opts: ReadOptions = {}): AsyncGenerator<RawRow> {
  const size = await statFile(file);
  if (await isJsonDocument(file)) {
    const text = await readWhole(file);
    const rows = parseJsonDocument(text, size);
    if (rows !== 'jsonl') {
      for (const row of rows) {
        throwIfAborted(opts.signal);
        yield row;
      }
      return;
    }
  }
  for await (const line of streamLines(file, opts.signal)) {
    if (isBlank(line.text)) continue;
    yield parseLine(line.text, line.line, line.bytes);
  }
}

/**
 * Count the rows of a file cheaply.
 *
 * JSONL: the number of non-blank lines (same rule as {@link readRows}, without
 * parsing JSON, so invalid lines count too), streamed byte by byte. A JSON
 * document: the number of rows {@link readRows} yields (the file is parsed).
 *
 * @throws Error naming the file when it is missing or unreadable.
 */
export async function countRows(file: string, opts: ReadOptions = {}): Promise<number> {
  await statFile(file);
  if (await isJsonDocument(file)) {
    let n = 0;
    for await (const _ of readRows(file, opts)) n++;
    return n;
  }
  let count = 0;
  let lineHasContent = false;
  let first = true;
  const stream = fs.createReadStream(file, { highWaterMark: CHUNK });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      throwIfAborted(opts.signal);
      let i = 0;
      if (first) {
        first = false;
        if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
      }
      for (; i < chunk.length; i++) {
        const b = chunk[i];
        if (b === NL) {
          if (lineHasContent) count++;
          lineHasContent = false;
        } else if (!lineHasContent && b !== 0x20 && b !== 0x09 && b !== CR) {
          lineHasContent = true;
        }
      }
    }
  } catch (err) {
    throw wrapIoError(file, err);
  } finally {
    stream.destroy();
  }
  if (lineHasContent) count++;
  return count;
}

// ---------------------------------------------------------------- internals

interface Line {
  text: string;
  line: number;
  bytes: number;
}

async function statFile(file: string): Promise<number> {
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(file);
  } catch (err) {
    throw wrapIoError(file, err);
  }
  if (st.isDirectory()) throw new Error(`cannot read ${file}: it is a directory, not a dataset file`);
  return st.size;
}

function wrapIoError(file: string, err: unknown): Error {
  if (err instanceof Error && err.name === 'AbortError') return err;
  const code = (err as NodeJS.ErrnoException)?.code;
  const why =
    code === 'ENOENT'
      ? 'no such file'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : err instanceof Error
          ? err.message
          : String(err);
  return new Error(`cannot read ${file}: ${why}`, { cause: err });
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw signal.reason instanceof Error ? signal.reason : new DOMException('reading aborted', 'AbortError');
  }
}

function isBlank(s: string): boolean {
  return /^[\s\ufeff]*$/.test(s);
}

function parseLine(text: string, line: number, bytes: number): RawRow {
  try {
    return { line, value: JSON.parse(text), bytes };
  } catch (err) {
    const msg = (err as Error).message;
    if (/position \d+/.test(msg)) return { line, error: `invalid JSON: ${msg}`, bytes };
    const errors: ParseError[] = [];
    parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const at = errors.length ? ` at position ${errors[0].offset}` : '';
    return { line, error: `invalid JSON: ${msg}${at}`, bytes };
  }
}

/** Stream the lines of a file: split on LF at the byte level, strip BOM and CR, decode UTF-8. */
async function* streamLines(file: string, signal?: AbortSignal): AsyncGenerator<Line> {
  const stream = fs.createReadStream(file, { highWaterMark: CHUNK });
  let pending: Buffer[] = []; // pieces of the current (incomplete) line
  let consumed = 0; // bytes through the end of the last complete line
  let lineNo = 0;
  let first = true;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      throwIfAborted(signal);
      let start = 0;
      if (first) {
        first = false;
        if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) {
          start = 3;
          consumed = 3;
        }
      }
      let nl = chunk.indexOf(NL, start);
      while (nl !== -1) {
        const piece = chunk.subarray(start, nl);
        const buf = pending.length ? Buffer.concat([...pending, piece]) : piece;
        pending = [];
        consumed += buf.length + 1;
        lineNo++;
        yield { text: decodeLine(buf), line: lineNo, bytes: consumed };
        throwIfAborted(signal);
        start = nl + 1;
        nl = chunk.indexOf(NL, start);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    }
  } catch (err) {
    throw wrapIoError(file, err);
  } finally {
    stream.destroy();
  }
  if (pending.length) {
    const buf = Buffer.concat(pending);
    consumed += buf.length;
    lineNo++;
    yield { text: decodeLine(buf), line: lineNo, bytes: consumed };
  }
}

function decodeLine(buf: Buffer): string {
  const end = buf.length > 0 && buf[buf.length - 1] === CR ? buf.length - 1 : buf.length;
  return buf.toString('utf8', 0, end);
}

async function readWhole(file: string): Promise<string> {
  try {
    const text = await fs.promises.readFile(file, 'utf8');
    return text.startsWith(BOM) ? text.slice(1) : text;
  } catch (err) {
    throw wrapIoError(file, err);
  }
}

/**
 * A file is read as one JSON document when it is named `.json`, or when its
 * first non-blank line is a lone `[` or `{` (a pretty-printed document saved
 * under another extension). Only the first 64 KiB are looked at.
 */
async function isJsonDocument(file: string): Promise<boolean> {
  if (path.extname(file).toLowerCase() === '.json') return true;
  let fh: fs.promises.FileHandle | undefined;
  try {
    fh = await fs.promises.open(file, 'r');
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    let head = buf.toString('utf8', 0, bytesRead);
    if (head.startsWith(BOM)) head = head.slice(1);
    const firstLine = head.split('\n').find((l) => !isBlank(l));
    const t = firstLine?.trim();
    return t === '[' || t === '{';
  } catch (err) {
    throw wrapIoError(file, err);
  } finally {
    await fh?.close();
  }
}

/**
 * Rows of a JSON document, or `'jsonl'` when the text is not one document but
 * its first non-blank line parses on its own (JSON Lines under a `.json` name).
 */
function parseJsonDocument(text: string, size: number): RawRow[] | 'jsonl' {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    const firstLine = text.split('\n').find((l) => !isBlank(l));
    if (firstLine !== undefined && !/^\s*[[{]\s*$/.test(firstLine)) {
      try {
        JSON.parse(firstLine);
        return 'jsonl';
      } catch {
        /* not JSONL either */
      }
    }
    if (isBlank(text)) return [];
    return [{ line: errorLine(text), error: `invalid JSON: ${(err as Error).message}`, bytes: size }];
  }

  // Which array holds the rows: the root, a wrapper key, or none (one object = one row).
  let container: string[] | undefined;
  let elements: unknown[] | undefined;
  if (Array.isArray(doc)) {
    container = [];
    elements = doc;
  } else if (doc !== null && typeof doc === 'object') {
    const obj = doc as Record<string, unknown>;
    const key =
      WRAPPER_KEYS.find((k) => Array.isArray(obj[k])) ??
      onlyArrayOfObjectsKey(obj);
    if (key !== undefined) {
      container = [key];
      elements = obj[key] as unknown[];
    }
  }
  if (!container || !elements) {
    const start = text.search(/\S/);
    return [{ line: lineAt(text, Math.max(0, start)), value: doc, bytes: size }];
  }

  // Element start lines and end offsets via jsonc-parser's visitor (children skipped).
  const starts: number[] = [];
  const ends: number[] = [];
  const depthOfElements = container.length + 1;
  let depth = 0;
  const atElement = (pathSupplier: () => (string | number)[]): boolean => {
    if (depth !== depthOfElements) return false;
    const p = pathSupplier();
    return p.length === depthOfElements && container!.every((k, i) => p[i] === k);
  };
  const begin = (offset: number, _len: number, startLine: number, _c: number, ps: () => (string | number)[]) => {
    const isEl = atElement(ps);
    if (isEl) starts.push(startLine + 1);
    depth++;
    if (isEl) {
      ends.push(-1); // filled at the matching end
      return false; // skip the element's children
    }
    // Descend only into the container and its ancestors (pre-increment depth <= container depth).
    return depth <= depthOfElements;
  };
  const end = (offset: number, length: number) => {
    depth--;
    if (depth === depthOfElements && ends.length && ends[ends.length - 1] === -1) ends[ends.length - 1] = offset + length;
  };
  visit(text, {
    onObjectBegin: begin,
    onArrayBegin: begin,
    onObjectEnd: end,
    onArrayEnd: end,
    onLiteralValue: (_v, offset, length, startLine, _c, ps) => {
      if (atElement(ps)) {
        starts.push(startLine + 1);
        ends.push(offset + length);
      }
    },
  });

  return elements.map((value, i) => ({
    line: starts[i] ?? 1,
    value,
    bytes: Math.min(size, Math.round((size * (ends[i] ?? text.length)) / Math.max(1, text.length))),
  }));
}

function onlyArrayOfObjectsKey(obj: Record<string, unknown>): string | undefined {
  const keys = Object.keys(obj).filter((k) => {
    const v = obj[k];
    return Array.isArray(v) && v.length > 0 && v.every((e) => e !== null && typeof e === 'object' && !Array.isArray(e));
  });
  // A lone array that looks like a turn list is a single conversation, not a wrapper.
  if (keys.length !== 1) return undefined;
  const first = (obj[keys[0]] as Record<string, unknown>[])[0];
  if ('role' in first || 'from' in first) return undefined;
  return keys[0];
}

function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Line of the first syntax error of a JSON document (jsonc-parser's error offset, strict JSON options); 1 when none is found. */
function errorLine(text: string): number {
  const errors: ParseError[] = [];
  parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  return errors.length ? lineAt(text, errors[0].offset) : 1;
}
