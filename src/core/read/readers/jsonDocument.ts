/**
 * JSON documents: a file read whole as one JSON value (a top-level array, an
 * object wrapping one, one object, records keyed by id, column-oriented tables,
 * datasets-server rows) or as concatenated JSON values, turned into rows with
 * the line each starts on; and the row shapes the JSON Lines reader shares (a
 * list that is one conversation).
 *
 * Pure Node (no `vscode`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, type ParseError } from 'jsonc-parser';
import { jsonBreakDescription, jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../../jsonDepth';
import { BOM, byteChunks, wrapIoError, type ContainerKind } from './containers';
import { isBlank } from './jsonl';
import type { RawRow } from './rawRow';

/** Object keys that conventionally wrap the record array of a JSON document (`{"data": [...]}`). */
export const WRAPPER_KEYS = ['data', 'rows', 'records', 'examples', 'items', 'instances', 'samples', 'train', 'dataset'];

/**
 * A file is read as one JSON document when it is named `.json`, or when its
 * first non-blank line is a lone `[` or `{` (a pretty-printed document saved
 * under another extension). Only the first 64 KiB are looked at.
 */
export async function isJsonDocument(file: string, kind: ContainerKind = 'plain'): Promise<boolean> {
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
export function parseJsonDocument(text: string, size: number): RawRow[] | 'jsonl' {
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

/** Gives the rows of a JSON document that share a start line their index on that line ({@link RawRow.element}). */
export function numberSharedLines(rows: RawRow[]): void {
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

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * A JSON array that is a single conversation rather than a list of records:
 * every element a turn object (`role`/`from` with `content`/`value`/`text`, no
 * nested turn list) → `{"messages": array}`; mostly OpenHands events
 * (`source` + `action`/`observation`) → `{"history": array}`. Else undefined.
 */
export function wholeArrayRow(arr: unknown[]): Record<string, unknown> | undefined {
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
