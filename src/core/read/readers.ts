/**
 * Row readers: turn a dataset file into a stream of raw rows (parsed JSON
 * values with their 1-based line numbers), without interpreting them.
 *
 * Supported layouts:
 * - JSON Lines (https://jsonlines.org): one JSON value per line, streamed.
 * - A JSON document (`.json`, or any file whose first non-blank line is a lone
 *   `[` / `{`): a top-level array of records, an object wrapping such an array
 *   under a conventional key (`data`, `rows`, `records`, …), or one object.
 * - Concatenated pretty-printed JSON objects (`{…}\n{…}` spanning lines).
 * - Variants met in the wild: a root array (or a JSONL line) that is one
 *   conversation of turn objects or one OpenHands event list (one row); a
 *   JSONL line holding a list of records (one row each, same line); records
 *   keyed by id (`{"id1": {…}, "id2": {…}}`); column-oriented tables
 *   (`{"col": [..], …}`, pandas `orient="columns"`; `line` = row number);
 *   Hugging Face datasets-server `{"rows": [{"row_idx", "row"}]}`; Python's
 *   `NaN`/`Infinity` (read as `null`).
 * - Any of these compressed with gzip (`.gz`) or Zstandard (`.zst`), found by
 *   the file's magic bytes, decompressed as a stream (node:zlib, fzstd).
 * - Apache Parquet (`.parquet`, magic `PAR1`), read with hyparquet row group by
 *   row group; `line` is the 1-based row number.
 *
 * Pure Node (no `vscode`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { Decompress as ZstdDecompress, decompress as zstdDecompress } from 'fzstd';
import { parse, type ParseError } from 'jsonc-parser';
import { jsonBreakDescription } from '../formats/content';
import { applyMapping, mappingFor } from '../formats/mapping';
import { jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../jsonDepth';

/** One row read from a file. */
export interface RawRow {
  /** 1-based line number of the row (for a JSON document: the line the element starts on). */
  line: number;
  /**
   * 0-based index of the row among the rows that start on the same line, set only
   * when several do (a one-line JSON array, a JSONL line holding a list): it keeps
   * their default ids and output order distinct (`data.json:1[3]`).
   */
  element?: number;
  /** The parsed JSON value; absent when `error` is set. */
  value?: unknown;
  /** Why the row could not be parsed, in words that never quote the input, e.g. `invalid JSON: a "," was expected at character 14 of 40`. */
  error?: string;
  /** Bytes of the file consumed so far (through the end of this row), for progress. */
  bytes: number;
}

/** Options of {@link readRows}. */
export interface ReadOptions {
  /** Stops reading: the generator throws the signal's reason at the next row. */
  signal?: AbortSignal;
  /**
   * A field-mapping file (`formats/mapping.ts`) to apply; without it the nearest
   * `eagle3prep.jsonc` beside the file or in a parent folder is used when one of
   * its entries matches the file. `false` turns mappings off.
   */
  mapping?: string | false;
}

/**
 * Names of the dataset files folder expansion, menus and the Datasets view offer:
 * `.jsonl` / `.ndjson` / `.json` / `.traj` (SWE-agent) / `.parquet`, optionally `.gz` / `.zst`
 * compressed. {@link readRows} itself goes by content (magic bytes, first line), not by name.
 */
export const DATASET_FILE_RE = /\.(jsonl|ndjson|json|traj|parquet)(\.gz|\.zst)?$/i;

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
 * that is not valid JSON yields `{line, error: "invalid JSON: <what broke, and where>"}` (never a fragment of the line)
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
 * With a field mapping (`opts.mapping`, or a workspace `eagle3prep.jsonc`),
 * each parsed row is rewritten by it (`formats/mapping.ts`).
 *
 * @throws Error naming the file when it is missing, a directory or unreadable;
 *   the signal's reason when `opts.signal` aborts; Error naming a mapping file that does not parse.
 */
export async function* readRows(file: string, opts: ReadOptions = {}): AsyncGenerator<RawRow> {
  const mapping = opts.mapping === false ? undefined : mappingFor(file, opts.mapping);
  if (!mapping) {
    yield* readRawRows(file, opts);
    return;
  }
  for await (const row of readRawRows(file, opts)) {
    yield row.error === undefined ? { ...row, value: applyMapping(row.value, mapping.entry, mapping.source) } : row;
  }
}

/** Gives the rows of a JSON document that share a start line their index on that line ({@link RawRow.element}). */
function numberSharedLines(rows: RawRow[]): void {
  const perLine = new Map<number, number>();
  for (const r of rows) perLine.set(r.line, (perLine.get(r.line) ?? 0) + 1);
  const seen = new Map<number, number>();
  for (const r of rows) {
    if ((perLine.get(r.line) ?? 0) < 2) continue;
    const k = seen.get(r.line) ?? 0;
    r.element = k;
    seen.set(r.line, k + 1);
  }
}

async function* readRawRows(file: string, opts: ReadOptions): AsyncGenerator<RawRow> {
  const size = await statFile(file);
  const kind = await containerKind(file);
  if (kind === 'parquet') {
    yield* parquetRows(file, size, opts.signal);
    return;
  }
  if (await isJsonDocument(file, kind)) {
    const text = await readWhole(file, kind);
    const rows = parseJsonDocument(text, size);
    if (rows !== 'jsonl') {
      numberSharedLines(rows);
      for (const row of rows) {
        throwIfAborted(opts.signal);
        yield row;
      }
      return;
    }
  }
  for await (const line of streamLines(file, kind, opts.signal)) {
    if (isBlank(line.text)) continue;
    const row = parseLine(line.text, line.line, line.bytes);
    if (Array.isArray(row.value) && row.value.length > 0 && row.value.every(isPlainObject)) {
      // A line holding a list: one conversation (turn objects) or several records (one row each, same line).
      const whole = wholeArrayRow(row.value);
      if (whole) yield { ...row, value: whole };
      else for (let i = 0; i < row.value.length; i++) yield { line: row.line, element: i, value: row.value[i], bytes: row.bytes };
      continue;
    }
    if (row.error !== undefined && line.last && !line.newline) row.error += ' (the last line has no newline at its end: the file looks truncated)';
    yield row;
  }
}

/**
 * Count the rows of a file cheaply.
 *
 * JSONL, plain or gzip / zstd compressed: the number of non-blank lines (same
 * rule as {@link readRows}, without parsing JSON, so invalid lines count too),
 * streamed in 1 MiB chunks, jumping from newline to newline with
 * `Buffer.indexOf` and looking only at a line's first bytes (a 1 GB file is
 * I/O bound). Parquet: `num_rows` of its footer (hyparquet metadata; nothing
 * decoded). A JSON document: the number of rows {@link readRows} yields (the
 * file is parsed).
 *
 * @throws Error naming the file when it is missing or unreadable (or its compressed data is damaged).
 */
export async function countRows(file: string, opts: ReadOptions = {}): Promise<number> {
  await statFile(file);
  const kind = await containerKind(file);
  if (kind === 'parquet') return Number((await parquetMetadata(file)).meta.num_rows);
  if (await isJsonDocument(file, kind)) {
    let n = 0;
    for await (const _ of readRows(file, opts)) n++;
    return n;
  }
  let count = 0;
  let content = false; // the current line (continued from the previous chunk) has a non-blank byte
  let first = true;
  for await (const { chunk } of byteChunks(file, kind, opts.signal)) {
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

// ---------------------------------------------------------------- internals

interface Line {
  text: string;
  line: number;
  bytes: number;
  /** The last line of the file. */
  last?: boolean;
  /** Whether a newline ended the line. */
  newline?: boolean;
}

/** How the bytes of a file are stored, from its magic bytes (extension as fallback for empty files). */
export type ContainerKind = 'plain' | 'gzip' | 'zstd' | 'parquet';

/** The container of a file: gzip (`1f 8b`), Zstandard (`28 b5 2f fd`), Parquet (`PAR1`), else plain text. */
export async function containerKind(file: string): Promise<ContainerKind> {
  let fh: fs.promises.FileHandle | undefined;
  try {
    fh = await fs.promises.open(file, 'r');
    const b = Buffer.alloc(4);
    const { bytesRead } = await fh.read(b, 0, 4, 0);
    if (bytesRead >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'gzip';
    if (bytesRead === 4 && b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd) return 'zstd';
    if (bytesRead === 4 && b.toString('latin1') === 'PAR1') return 'parquet';
    return 'plain';
  } catch (err) {
    throw wrapIoError(file, err);
  } finally {
    await fh?.close();
  }
}

/**
 * The decompressed bytes of a file as chunks, with the compressed bytes read so
 * far (for progress). gzip: node:zlib (multi-member files included); zstd:
 * fzstd's streaming decompressor.
 */
async function* byteChunks(file: string, kind: ContainerKind, signal?: AbortSignal): AsyncGenerator<{ chunk: Buffer; rawBytes: number }> {
  const raw = fs.createReadStream(file, { highWaterMark: CHUNK });
  try {
    if (kind === 'gzip') {
      const gunzip = zlib.createGunzip();
      raw.on('error', (e) => gunzip.destroy(e));
      raw.pipe(gunzip);
      for await (const chunk of gunzip as AsyncIterable<Buffer>) {
        throwIfAborted(signal);
        yield { chunk, rawBytes: raw.bytesRead };
      }
    } else if (kind === 'zstd') {
      const out: Buffer[] = [];
      const z = new ZstdDecompress((data) => {
        out.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      });
      for await (const chunk of raw as AsyncIterable<Buffer>) {
        throwIfAborted(signal);
        z.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        while (out.length) yield { chunk: Buffer.from(out.shift()!), rawBytes: raw.bytesRead };
      }
      z.push(new Uint8Array(0), true);
      while (out.length) yield { chunk: Buffer.from(out.shift()!), rawBytes: raw.bytesRead };
    } else {
      for await (const chunk of raw as AsyncIterable<Buffer>) {
        throwIfAborted(signal);
        yield { chunk, rawBytes: raw.bytesRead };
      }
    }
  } catch (err) {
    if (signal?.aborted) throw err;
    const e = err as Error;
    // fzstd's errors carry a numeric `code`; node's I/O errors a string starting with E.
    const code = typeof (e as { code?: unknown }).code === 'string' ? ((e as NodeJS.ErrnoException).code as string) : '';
    if (kind !== 'plain' && !code.startsWith('E')) {
      throw new Error(`cannot read ${file}: the ${kind} data is damaged (${e.message})`, { cause: err });
    }
    if (kind === 'gzip' && code.startsWith('Z_')) {
      throw new Error(`cannot read ${file}: the gzip data is damaged (${e.message})`, { cause: err });
    }
    throw wrapIoError(file, err);
  } finally {
    raw.destroy();
  }
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
    code === 'ENOENT' ? 'no such file' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : err instanceof Error ? err.message : String(err);
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
async function* streamLines(file: string, kind: ContainerKind, signal?: AbortSignal): AsyncGenerator<Line> {
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

async function fileSize(file: string): Promise<number> {
  return (await fs.promises.stat(file)).size;
}

function decodeLine(buf: Buffer): string {
  const end = buf.length > 0 && buf[buf.length - 1] === CR ? buf.length - 1 : buf.length;
  return buf.toString('utf8', 0, end);
}

async function readWhole(file: string, kind: ContainerKind = 'plain'): Promise<string> {
  try {
    let buf: Buffer;
    const raw = await fs.promises.readFile(file);
    if (kind === 'gzip') buf = zlib.gunzipSync(raw);
    else if (kind === 'zstd') buf = Buffer.from(zstdDecompress(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength)));
    else buf = raw;
    const text = buf.toString('utf8');
    return text.startsWith(BOM) ? text.slice(1) : text;
  } catch (err) {
    // fzstd's errors carry a numeric `code`, zlib's a `Z_…` string, node's I/O errors an `E…` string.
    const code = (err as { code?: unknown })?.code;
    if (kind !== 'plain' && !(typeof code === 'string' && /^E[A-Z]/.test(code))) {
      throw new Error(`cannot read ${file}: the ${kind} data is damaged (${(err as Error).message})`, { cause: err });
    }
    throw wrapIoError(file, err);
  }
}

/**
 * A file is read as one JSON document when it is named `.json`, or when its
 * first non-blank line is a lone `[` or `{` (a pretty-printed document saved
 * under another extension). Only the first 64 KiB are looked at.
 */
async function isJsonDocument(file: string, kind: ContainerKind = 'plain'): Promise<boolean> {
  const base = path
    .basename(file)
    .toLowerCase()
    .replace(/\.(gz|zst|zstd)$/, '');
  if (path.extname(base) === '.json') return true;
  let head: string;
  if (kind === 'plain') {
    let fh: fs.promises.FileHandle | undefined;
    try {
      fh = await fs.promises.open(file, 'r');
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      head = buf.toString('utf8', 0, bytesRead);
    } catch (err) {
      throw wrapIoError(file, err);
    } finally {
      await fh?.close();
    }
  } else {
    const parts: Buffer[] = [];
    let n = 0;
    const it = byteChunks(file, kind);
    try {
      for await (const { chunk } of it) {
        parts.push(chunk);
        n += chunk.length;
        if (n >= 64 * 1024) break;
      }
    } finally {
      await it.return(undefined);
    }
    head = Buffer.concat(parts).toString('utf8');
  }
  if (head.startsWith(BOM)) head = head.slice(1);
  const firstLine = head.split('\n').find((l) => !isBlank(l));
  const t = firstLine?.trim();
  return t === '[' || t === '{';
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
    const firstLine = firstNonBlankLine(text);
    if (firstLine !== undefined && !/^\s*[[{]\s*$/.test(firstLine)) {
      try {
        JSON.parse(firstLine);
        return 'jsonl';
      } catch {
        /* not JSONL either */
      }
    }
    if (isBlank(text)) return [];
    const values = splitConcatenated(text, size);
    if (values) return values;
    return [{ line: errorLine(text), error: `invalid JSON: the document does not parse (${jsonBreakDescription(text, { lines: true })})`, bytes: size }];
  }
  // A root array that is one conversation (turn objects) or one OpenHands event stream: one row.
  const firstLineNo = () => lineAt(text, Math.max(0, text.search(/\S/)));
  /** One row made of the whole document (or its columns): refused when the document nests too deep. */
  const wholeRows = (rows: RawRow[]): RawRow[] =>
    jsonTextDepth(text) > MAX_JSON_DEPTH ? [{ line: firstLineNo(), error: `invalid row: ${tooDeepMessage()}`, bytes: size }] : rows;
  if (Array.isArray(doc) && doc.length > 0) {
    const whole = wholeArrayRow(doc);
    if (whole) return wholeRows([{ line: firstLineNo(), value: whole, bytes: size }]);
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
      WRAPPER_KEYS.find(
        (k) => Array.isArray(obj[k]) && ((obj[k] as unknown[]).length === 0 || isPlainObject((obj[k] as unknown[])[0])) && !wholeArrayRow(obj[k] as unknown[]),
      ) ?? onlyArrayOfObjectsKey(obj);
    if (key !== undefined) {
      container = [key];
      elements = obj[key] as unknown[];
    }
  }
  if (!container && doc !== null && typeof doc === 'object' && !Array.isArray(doc)) {
    const cols = columnarRows(doc as Record<string, unknown>);
    if (cols) return wholeRows(cols.map((value, i) => ({ line: i + 1, value, bytes: Math.round((size * (i + 1)) / cols.length) })));
  }
  if (!container && doc !== null && typeof doc === 'object' && !Array.isArray(doc) && isRecordMap(doc as Record<string, unknown>)) {
    // An object keyed by record id (`{"conv-1": {...}, "conv-2": {...}}`): one row per value.
    container = [];
    elements = Object.values(doc as Record<string, unknown>);
  }
  if (!container || !elements) return wholeRows([{ line: firstLineNo(), value: doc, bytes: size }]);

  // Element start lines, end offsets and nesting depths, by an iterative scan of the text (no recursion: any depth).
  const { starts, ends, depths } = scanElements(text, container);
  return elements.map((value, i) => {
    const line = starts[i] ?? 1;
    const bytes = Math.min(size, Math.round((size * (ends[i] ?? text.length)) / Math.max(1, text.length)));
    // A row nested deeper than later walks (stringify, structured clone, templates) survive is refused here, with its line.
    if ((depths[i] ?? 0) > MAX_JSON_DEPTH) return { line, error: `invalid row: ${tooDeepMessage()}`, bytes };
    return { line, value: datasetsServerRow(value), bytes };
  });
}

/**
 * Where the elements of the row container of a JSON document start and end:
 * the root array or the root object's values (`container` = []) or the array under a key of the root
 * object (`container` = [key]; of a duplicated key the last occurrence, which
 * `JSON.parse` keeps). One iterative pass over the text (any nesting depth);
 * the text must be valid JSON.
 * @returns per element: its 1-based start line, its end offset (UTF-16), and its
 *   nesting depth (the element itself is level 1; capped at `MAX_JSON_DEPTH + 1`)
 */
export function scanElements(text: string, container: string[]): { starts: number[]; ends: number[]; depths: number[] } {
  let starts: number[] = [];
  let ends: number[] = [];
  let depths: number[] = [];
  const keyed = container.length > 0;
  const elementDepth = keyed ? 2 : 1; // bracket depth at which the elements sit
  let depth = 0;
  let line = 1;
  let inContainer = !keyed;
  const rootIsObject = text.charCodeAt(text.search(/\S/)) === 0x7b;
  let lastKey: string | undefined; // the last key read at depth 1 of the root object
  let expectKey = false;
  let current = -1; // index of the element being scanned; -1 between elements
  const end = (at: number) => {
    ends[current] = at;
    current = -1;
  };
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) {
      line++;
      continue;
    }
    if (c === 0x20 || c === 0x09 || c === 0x0d) continue;
    if (inContainer && current < 0 && depth === elementDepth && c !== 0x2c && c !== 0x5d && c !== 0x7d && c !== 0x3a && !(depth === 1 && expectKey)) {
      // an element starts here (an object, an array or a literal)
      current = starts.length;
      starts.push(line);
      ends.push(-1);
      depths.push(0);
    }
    if (c === 0x22) {
      const from = i;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      if (depth === 1 && expectKey) {
        if (keyed) lastKey = JSON.parse(text.slice(from, i + 1)) as string;
        expectKey = false;
      }
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (current >= 0) depths[current] = Math.max(depths[current], Math.min(depth - elementDepth, MAX_JSON_DEPTH + 1));
      if (depth === 1) expectKey = c === 0x7b; // the root object's first key follows
      if (keyed && depth === 2 && c === 0x5b && lastKey === container[0]) {
        inContainer = true; // the container (again: JSON.parse keeps the last duplicate key)
        starts = [];
        ends = [];
        depths = [];
      }
    } else if (c === 0x5d || c === 0x7d) {
      if (current >= 0 && depth === elementDepth) end(i); // a literal ended by the container's close
      depth--;
      if (current >= 0 && depth === elementDepth) end(i + 1);
      if (depth < elementDepth) inContainer = false;
    } else if (c === 0x2c) {
      if (current >= 0 && depth === elementDepth) end(i);
      if (depth === 1) expectKey = rootIsObject; // the root object's next key follows
    }
  }
  return { starts, ends, depths };
}

/** The first line of a text that holds a non-blank character, found without splitting the whole text. */
function firstNonBlankLine(text: string): string | undefined {
  const at = text.search(/[^\s\ufeff]/);
  if (at < 0) return undefined;
  const from = text.lastIndexOf('\n', at) + 1;
  const to = text.indexOf('\n', at);
  return text.slice(from, to < 0 ? text.length : to);
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

/**
 * Offset of the first syntax error of a JSON text (jsonc-parser, strict JSON
 * options), or undefined when none is found. jsonc-parser recurses once per
 * nesting level, so a text nested deeper than {@link MAX_JSON_DEPTH} is not given to it.
 */
function firstSyntaxErrorOffset(text: string): number | undefined {
  if (text.length > MAX_JSON_DEPTH && jsonTextDepth(text) > MAX_JSON_DEPTH) return undefined;
  const errors: ParseError[] = [];
  try {
    parse(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  } catch {
    return undefined; // a stack overflow on a stack already deep: no position rather than no row
  }
  return errors.length ? errors[0].offset : undefined;
}

/** Line of the first syntax error of a JSON document; 1 when none is found. */
function errorLine(text: string): number {
  const offset = firstSyntaxErrorOffset(text);
  return offset === undefined ? 1 : lineAt(text, offset);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A JSON array that is a single conversation rather than a list of records:
 * every element a turn object (`role`/`from` with `content`/`value`/`text`, no
 * nested turn list) → `{"messages": array}`; mostly OpenHands events
 * (`source` + `action`/`observation`) → `{"history": array}`. Else undefined.
 */
function wholeArrayRow(arr: unknown[]): Record<string, unknown> | undefined {
  if (!arr.length || !arr.every(isPlainObject)) return undefined;
  const objs = arr as Record<string, unknown>[];
  const isTurn = (o: Record<string, unknown>) =>
    ('role' in o || 'from' in o) &&
    ('content' in o || 'value' in o || 'text' in o) &&
    !['messages', 'conversations', 'conversation', 'replies'].some((k) => Array.isArray(o[k]));
  // OpenAssistant flat exports are lists of single messages linked by parent_id, not one conversation.
  if (objs.every(isTurn) && objs.some((o) => typeof (o.role ?? o.from) === 'string') && !objs.some((o) => 'parent_id' in o)) return { messages: arr };
  const events = objs.filter((o) => typeof o.source === 'string' && (typeof o.action === 'string' || typeof o.observation === 'string')).length;
  if (events * 2 > objs.length && !objs.some((o) => 'role' in o)) return { history: arr };
  return undefined;
}

/**
 * Concatenated JSON values (`{…}\n{…}`, pretty-printed objects one after the
 * other, with no enclosing array). Splits at top-level value boundaries
 * (strings and escapes tracked), parses each value, reports the line each
 * starts on. A value that does not parse — or is cut off at the end of the
 * file — becomes an error row. Returns undefined unless the text holds at
 * least two top-level values and nothing but whitespace (or commas) between them.
 */
function splitConcatenated(text: string, size: number): RawRow[] | undefined {
  const spans: { start: number; end: number }[] = [];
  let depth = 0;
  let inStr = false;
  let esc = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inStr) {
      if (esc) esc = false;
      else if (c === 0x5c) esc = true;
      else if (c === 0x22) inStr = false;
      continue;
    }
    if (c === 0x22) {
      inStr = true;
      if (depth === 0) return undefined; // a top-level string: not concatenated objects
    } else if (c === 0x7b || c === 0x5b) {
      if (depth === 0) start = i;
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth < 0) return undefined;
      if (depth === 0) spans.push({ start, end: i + 1 });
    } else if (depth === 0 && !(c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x2c || c === 0xfeff)) {
      return undefined;
    }
  }
  const truncated = depth > 0 ? start : -1;
  if (spans.length + (truncated >= 0 ? 1 : 0) < 2) return undefined;
  const rows: RawRow[] = [];
  let line = 1;
  let at = 0;
  const lineOf = (offset: number) => {
    for (let i = text.indexOf('\n', at); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
      line++;
      at = i + 1;
    }
    return line;
  };
  const bytesAt = (end: number) => Math.min(size, Math.round((size * end) / Math.max(1, text.length)));
  for (const sp of spans) {
    const l = lineOf(sp.start);
    try {
      const piece = text.slice(sp.start, sp.end);
      const value = JSON.parse(piece);
      if (piece.length > MAX_JSON_DEPTH && jsonTextDepth(piece) > MAX_JSON_DEPTH)
        rows.push({ line: l, error: `invalid row: ${tooDeepMessage()}`, bytes: bytesAt(sp.end) });
      else rows.push({ line: l, value, bytes: bytesAt(sp.end) });
    } catch (err) {
      rows.push({
        line: l,
        error: `invalid JSON: ${jsonBreakDescription(text.slice(sp.start, sp.end), { lines: true })} (counted from this object's first line)`,
        bytes: bytesAt(sp.end),
      });
    }
  }
  if (truncated >= 0) {
    rows.push({ line: lineOf(truncated), error: 'invalid JSON: the last object is cut off at the end of the file (the file looks truncated)', bytes: size });
  }
  return rows;
}

// ---------------------------------------------------------------- Parquet

/** hyparquet, the file as its async buffer, and the Parquet footer (row groups, `num_rows`). @throws Error naming the file. */
async function parquetMetadata(file: string) {
  let hp: typeof import('hyparquet');
  try {
    hp = await import('hyparquet');
  } catch (err) {
    throw new Error(`cannot read ${file}: Parquet support (hyparquet) is unavailable: ${(err as Error).message}`, { cause: err });
  }
  try {
    const asyncBuffer = await hp.asyncBufferFromFile(file);
    return { hp, asyncBuffer, meta: await hp.parquetMetadataAsync(asyncBuffer) };
  } catch (err) {
    throw new Error(`cannot read ${file}: not a readable Parquet file (${(err as Error).message})`, { cause: err });
  }
}

/**
 * Rows of a Parquet file, read with hyparquet row group by row group
 * (snappy built in; gzip and brotli via node:zlib, zstd via fzstd). `line` is
 * the 1-based row number; int64 values become numbers (strings beyond 2^53),
 * byte arrays of text columns are decoded as UTF-8 by hyparquet.
 */
async function* parquetRows(file: string, size: number, signal?: AbortSignal): AsyncGenerator<RawRow> {
  const { hp, asyncBuffer, meta } = await parquetMetadata(file);
  const compressors = {
    GZIP: (input: Uint8Array) => new Uint8Array(zlib.gunzipSync(input)),
    BROTLI: (input: Uint8Array) => new Uint8Array(zlib.brotliDecompressSync(input)),
    ZSTD: (input: Uint8Array) => zstdDecompress(input),
  };
  const total = Number(meta.num_rows);
  let rowStart = 0;
  for (const group of meta.row_groups) {
    const n = Number(group.num_rows);
    throwIfAborted(signal);
    const rows = await hp.parquetReadObjects({ file: asyncBuffer, metadata: meta, rowStart, rowEnd: rowStart + n, compressors });
    for (let i = 0; i < rows.length; i++) {
      throwIfAborted(signal);
      yield { line: rowStart + i + 1, value: plainJson(rows[i]), bytes: Math.round((size * (rowStart + i + 1)) / Math.max(1, total)) };
    }
    rowStart += n;
  }
}

/** Parquet values as JSON values: bigint → number (string when unsafe), Date → ISO string, bytes → base64. */
function plainJson(v: unknown): unknown {
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(plainJson);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = plainJson(x);
    return out;
  }
  return v;
}

/** An object whose values (at least two) are all objects with the same keys: records keyed by id. */
function isRecordMap(obj: Record<string, unknown>): boolean {
  const vals = Object.values(obj);
  if (vals.length < 2 || !vals.every(isPlainObject)) return false;
  const sig = (o: Record<string, unknown>) => Object.keys(o).sort().join('\u0000');
  const first = sig(vals[0] as Record<string, unknown>);
  return first !== '' && vals.every((v) => sig(v as Record<string, unknown>) === first);
}

/** Hugging Face datasets-server rows `{"row_idx", "row": {...}, "truncated_cells"}` → the row itself. */
function datasetsServerRow(v: unknown): unknown {
  if (isPlainObject(v) && isPlainObject(v.row) && 'row_idx' in v) return v.row;
  return v;
}

/**
 * Column-oriented JSON (a table saved by column): `{"col": [v0, v1, …], …}`
 * (at least two columns, equal lengths, not a turn list) or pandas
 * `orient="columns"` `{"col": {"0": v0, "1": v1, …}, …}` → one row per index.
 * `line` of such rows is the 1-based row index. Undefined for any other object.
 */
function columnarRows(obj: Record<string, unknown>): Record<string, unknown>[] | undefined {
  const keys = Object.keys(obj);
  if (keys.length < 2) return undefined;
  const vals = keys.map((k) => obj[k]);
  if (vals.every(Array.isArray)) {
    const n = (vals[0] as unknown[]).length;
    if (n === 0 || !vals.every((v) => (v as unknown[]).length === n)) return undefined;
    if (vals.some((v) => wholeArrayRow(v as unknown[]))) return undefined; // a conversation's turn list, not a column
    return Array.from({ length: n }, (_, i) => Object.fromEntries(keys.map((k) => [k, (obj[k] as unknown[])[i]])));
  }
  if (vals.every(isPlainObject)) {
    const idx = Object.keys(vals[0] as Record<string, unknown>);
    if (idx.length === 0 || !idx.every((k) => /^\d+$/.test(k))) return undefined;
    const sig = idx.join(',');
    if (!vals.every((v) => Object.keys(v as Record<string, unknown>).join(',') === sig)) return undefined;
    return idx.map((i) => Object.fromEntries(keys.map((k) => [k, (obj[k] as Record<string, unknown>)[i]])));
  }
  return undefined;
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
