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
 * One module per concern: `containers.ts` (magic bytes, decompression, I/O
 * errors), `jsonl.ts` (JSON Lines), `jsonDocument.ts` (JSON documents and
 * concatenated values), `parquet.ts`; this one picks the reader for a file.
 *
 * Pure Node (no `vscode`).
 */
import { containerKind, statFile, readWhole, throwIfAborted } from './containers';
import { isJsonDocument, numberSharedLines, parseJsonDocument, isPlainObject, wholeArrayRow } from './jsonDocument';
import { countLines, isBlank, parseLine, startsObject, streamLineBytes, TRUNCATED_LAST_LINE } from './jsonl';
import { parquetRowCount, parquetRows } from './parquet';
import type { RawRow, ReadOptions } from './rawRow';

export type { RawRow, ReadOptions } from './rawRow';
export { containerKind, type ContainerKind } from './containers';
export { scanElements, WRAPPER_KEYS } from './jsonDocument';
export { parseLineBytes } from './jsonl';

/**
 * Names of the dataset files folder expansion, menus and the Datasets view offer:
 * `.jsonl` / `.ndjson` / `.json` / `.traj` (SWE-agent) / `.parquet`, optionally `.gz` / `.zst`
 * compressed. {@link readRows} itself goes by content (magic bytes, first line), not by name.
 */
export const DATASET_FILE_RE = /\.(jsonl|ndjson|json|traj|parquet)(\.gz|\.zst)?$/i;

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
 * Rows are as the file holds them: `eagle3prep.jsonc` and field mappings are
 * applied above this room, by the row source (`formats/rowSource.ts`).
 *
 * @throws Error naming the file when it is missing, a directory or unreadable;
 *   the signal's reason when `opts.signal` aborts; Error naming a mapping file that does not parse.
 */
export async function* readRows(file: string, opts: ReadOptions = {}): AsyncGenerator<RawRow> {
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
  const objectLines = opts.objectLines;
  for await (const line of streamLineBytes(file, kind, opts.signal)) {
    if (objectLines?.raw && startsObject(line.buf)) {
      // One row, parsed by the thread that processes it (jsonl.ts parseLineBytes): here only its bytes are kept.
      yield line.last && !line.newline
        ? { line: line.line, raw: line.buf, truncated: true, bytes: line.bytes }
        : { line: line.line, raw: line.buf, bytes: line.bytes };
      continue;
    }
    const text = line.buf.toString('utf8');
    if (isBlank(text)) continue;
    const row = parseLine(text, line.line, line.bytes);
    const rows = rowsOfLineValue(row.value);
    if (rows) {
      for (const r of rows)
        yield r.element === undefined ? { ...row, value: r.value } : { line: row.line, element: r.element, value: r.value, bytes: row.bytes };
      continue;
    }
    if (row.error !== undefined && line.last && !line.newline) row.error += TRUNCATED_LAST_LINE;
    yield row;
  }
}

/**
 * The rows one JSON Lines line holds when it is a list: one conversation when the list is its turns
 * ({@link wholeArrayRow}: `{"messages": list}`, or OpenHands events as `{"history": list}`), else one
 * row per object (`element` = its 0-based index). Undefined for a line that is not a non-empty list of
 * objects (it is one row as it is). The readers and the editor's row view both use it, so a line
 * means the same rows in `prepare`, the hover and the mask view.
 */
export function rowsOfLineValue(value: unknown): { value: unknown; element?: number }[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || !value.every(isPlainObject)) return undefined;
  const whole = wholeArrayRow(value);
  return whole ? [{ value: whole }] : value.map((v, element) => ({ value: v, element }));
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
  if (kind === 'parquet') return parquetRowCount(file);
  if (await isJsonDocument(file, kind)) {
    let n = 0;
    for await (const _ of readRows(file, opts)) n++;
    return n;
  }
  return countLines(file, kind, opts.signal);
}
