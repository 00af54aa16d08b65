/**
 * `inspect`: show how a dataset file is read — its detected format with the
 * evidence, the normalized records, and every row that was skipped and why.
 * The {@link InspectResult} JSON shape is a CLI contract (`eagle3-prep inspect`).
 *
 * Pure Node (no `vscode`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../formats/detect';
import { EXPECTED_SHAPES, normalizeDetailed } from '../formats/normalize';
import { suggestMapping } from '../formats/mapping';
import { readRows } from '../read/readers';
import { applyProjectConfig, loadProjectConfigFor } from '../read/projectConfig';
import type { Message } from '../types';

/**
 * One message as `inspect` prints it: the normalized message model (`types.ts` `Message`; optional
 * keys only when set; `tool_calls` in OpenAI form with `arguments` as the source gave it), with
 * `trainable` present only as `false` (the source flags the turn as not trainable: `weight: 0`,
 * `loss: false`, `train: false`, `trainable: false`).
 */
export type InspectMessage = Omit<Message, 'trainable'> & { trainable?: false };

/** One normalized row. `needs_generation` is true for prompt rows (no assistant turn: the target model must answer first). */
export interface InspectRecord {
  source: { line: number; element?: number };
  id: string;
  /** The shape handler that read the row (`openai-messages`, `sharegpt`, `preference`, …): rows of a mixed file are read per row. */
  shape: string;
  messages: InspectMessage[];
  needs_generation: boolean;
  /** Tool definitions (OpenAI form) when the row has them. */
  tools?: unknown[];
  /** Content parts that are not text (images, audio, …): not rendered. `message` indexes `messages`. */
  non_text_parts?: { message: number; type: string }[];
  /** Normalization note codes (docs/formats.md "Input shapes"), e.g. `inline_think_split`, `tool_call_arguments_not_json`. */
  notes?: string[];
}

/**
 * A row that yields no record. `reason`: `invalid_json`, a drop reason
 * (`empty_conversation`, `no_assistant_turn`, `unrecognized_shape`,
 * `message_fragment`) or `errored`; for `errored`, `code` says why
 * (`unknown_role`, `missing_role`, `bad_turn`, `bad_tool_calls`, `bad_field`, `internal_error`).
 */
export interface InspectSkipped {
  line: number;
  reason: string;
  code?: string;
  message: string;
}

/** The `inspect` result (CLI contract; docs/cli.md "inspect --json"). `rows_read == records.length + skipped.length`. */
export interface InspectResult {
  file: string;
  format: string;
  evidence: string[];
  rows_read: number;
  records: InspectRecord[];
  skipped: InspectSkipped[];
}

/** Options of {@link inspectFile}. */
export interface InspectOptions {
  /** Read at most this many rows (blank lines are not rows); default: the whole file. */
  limit?: number;
  /** A field-mapping file (`formats/mapping.ts`); default: the nearest `eagle3prep.jsonc`, if any entry matches. */
  mapping?: string;
}

/**
 * Inspect a dataset file (JSONL or JSON; see `readers.ts`).
 *
 * Reads the rows (at most `opts.limit`), detects the format from the first
 * {@link DETECT_SAMPLE_SIZE} valid rows (`formats/detect.ts`), and normalizes
 * every row (`formats/normalize.ts`): conversations and prompts become
 * `records` (prompts with `needs_generation: true`), everything else goes to
 * `skipped` with `line`, `reason` (`invalid_json`, a drop reason, or
 * `errored`) and `message`. Row order is kept in both lists.
 *
 * @throws Error when the file cannot be read (message names the file), and when
 *   no row read has a recognizable conversational shape: the message names the
 *   file, what was found (empty file, lines that are not JSON — e.g. CSV —,
 *   already tokenized rows with `input_ids`, the keys seen) and what would work.
 */
export async function inspectFile(file: string, opts: InspectOptions = {}): Promise<InspectResult> {
  const limit = opts.limit ?? Infinity;
  const fileBase = path.basename(file);
  const sample: unknown[] = [];
  const records: InspectRecord[] = [];
  const skipped: InspectSkipped[] = [];
  let rowsRead = 0;
  let recognized = 0;
  let invalid = 0;
  let firstInvalid: string | undefined;
  let tokenized = 0;
  const keysSeen = new Map<string, number>();
  let firstUnrecognized: unknown;

  // The same eagle3prep.jsonc role aliases / field mappings that prepare applies (projectConfig.ts).
  const project = loadProjectConfigFor(file);
  if (limit > 0) {
    for await (const raw of readRows(file, { mapping: opts.mapping })) {
      const row = raw.error === undefined ? { ...raw, value: applyProjectConfig(raw.value, project) } : raw;
      rowsRead++;
      if (row.error !== undefined) {
        invalid++;
        firstInvalid ??= `line ${row.line}: ${row.error}`;
        skipped.push({ line: row.line, reason: 'invalid_json', message: row.error });
      } else {
        if (sample.length < DETECT_SAMPLE_SIZE) sample.push(row.value);
        const { outcome, handler } = normalizeDetailed(
          row.value,
          row.element === undefined ? { file, line: row.line } : { file, line: row.line, element: row.element },
          fileBase,
        );
        if (handler) recognized++;
        else if (row.value !== null && typeof row.value === 'object' && !Array.isArray(row.value)) {
          firstUnrecognized ??= row.value;
          const keys = Object.keys(row.value);
          if (keys.includes('input_ids')) tokenized++;
          for (const k of keys) keysSeen.set(k, (keysSeen.get(k) ?? 0) + 1);
        }
        switch (outcome.kind) {
          case 'conversation':
          case 'prompt': {
            const c = outcome.conversation;
            const rec: InspectRecord = {
              source: row.element === undefined ? { line: row.line } : { line: row.line, element: row.element },
              id: c.id,
              shape: handler?.name ?? 'unknown',
              messages: c.messages.map(toInspectMessage),
              needs_generation: outcome.kind === 'prompt',
            };
            if (c.tools?.length) rec.tools = c.tools;
            if (c.nonTextParts?.length) rec.non_text_parts = c.nonTextParts;
            if (c.notes?.length) rec.notes = c.notes;
            records.push(rec);
            break;
          }
          case 'dropped':
            skipped.push({ line: row.line, reason: outcome.reason, message: outcome.message });
            break;
          case 'errored':
            skipped.push({ line: row.line, reason: 'errored', ...(outcome.code ? { code: outcome.code } : {}), message: outcome.message });
            break;
        }
      }
      if (rowsRead >= limit) break;
    }
  }

  if (recognized === 0) {
    const suggestion = firstUnrecognized !== undefined ? suggestMapping(firstUnrecognized, path.basename(file)) : undefined;
    const why = await explainNothingFound(file, { rowsRead, invalid, firstInvalid, tokenized, keysSeen, limited: rowsRead >= limit });
    throw new Error(
      suggestion && tokenized === 0
        ? `${why}\nIf the rows hold a conversation in fields of their own, a field mapping reads them; suggested from the first row:\n${suggestion}`
        : why,
    );
  }
  const { format, evidence } = detectFormat(sample);
  if (invalid) evidence.push(`${invalid}/${rowsRead} rows are not valid JSON (first: ${firstInvalid})`);
  return { file, format, evidence, rows_read: rowsRead, records, skipped };
}

function toInspectMessage(m: Message): InspectMessage {
  const out: InspectMessage = { role: m.role, content: m.content };
  if (m.reasoning_content !== undefined) out.reasoning_content = m.reasoning_content;
  if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
  if (m.name !== undefined) out.name = m.name;
  if (m.trainable === false) out.trainable = false;
  return out;
}

/**
 * For `prepare`: why a file that yielded no record and no prompt is unusable,
 * in the words `inspect` uses (file, what was found, what would work) — or
 * undefined when some row has a recognizable shape (then the per-row reasons
 * say why). Looks at the first `limit` rows (default 1000). Never throws.
 */
export async function explainUnusableInput(file: string, limit = 1000, mapping?: string): Promise<string | undefined> {
  try {
    await inspectFile(file, { limit, mapping });
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

interface Findings {
  rowsRead: number;
  invalid: number;
  firstInvalid?: string;
  tokenized: number;
  keysSeen: Map<string, number>;
  limited: boolean;
}

/** The message of the "nothing recognizable" error: file, what was found, what would work. */
async function explainNothingFound(file: string, f: Findings): Promise<string> {
  const want = `Give JSON Lines (or a JSON array) of chat rows: ${EXPECTED_SHAPES}.`;
  const scope = f.limited ? `the first ${f.rowsRead} rows of ${file}` : file;
  if (f.rowsRead === 0) return `${file} holds no rows (the file is empty or only blank lines). ${want}`;
  if (f.tokenized > 0) {
    return `${scope}: the rows are already tokenized (${f.tokenized}/${f.rowsRead} rows have "input_ids"); this tool tokenizes itself and needs the untokenized chat data. ${want}`;
  }
  if (f.invalid === f.rowsRead) {
    const first = await firstNonBlankLine(file);
    if (first !== undefined && looksLikeDelimited(first)) {
      const sep = first.includes('\t') ? 'TSV' : 'CSV';
      return `${scope}: no line is JSON; line 1 looks like a ${sep} header (${JSON.stringify(first.slice(0, 120))}). Convert it to JSON Lines, one object per line. ${want}`;
    }
    if (first !== undefined && !/^\s*[[{"]/.test(first)) {
      return `${scope}: no line is JSON; line 1 is plain text (${JSON.stringify(first.slice(0, 120))}). Convert it to JSON Lines, one object per line. ${want}`;
    }
    return `${scope}: no line is valid JSON (${f.firstInvalid}). ${want}`;
  }
  const keys = [...f.keysSeen].map(([k, n]) => `${k} (${n})`).join(', ');
  let found = keys ? `rows have the keys ${keys}` : 'the rows are not JSON objects';
  if (f.keysSeen.has('text')) found += ' ("text" holds plain text without speaker markers: pretraining-style text, not a conversation)';
  return `${scope}: no recognizable conversational record in ${f.rowsRead} rows; ${found}. ${want}`;
}

async function firstNonBlankLine(file: string): Promise<string | undefined> {
  let fh: fs.promises.FileHandle | undefined;
  try {
    fh = await fs.promises.open(file, 'r');
    const buf = Buffer.alloc(8192);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf
      .toString('utf8', 0, bytesRead)
      .replace(/^\ufeff/, '')
      .split('\n')
      .map((l) => l.replace(/\r$/, ''))
      .find((l) => l.trim() !== '');
  } catch {
    return undefined;
  } finally {
    await fh?.close();
  }
}

/** A header-like line of comma/tab/semicolon separated fields that is not JSON. */
function looksLikeDelimited(line: string): boolean {
  const t = line.trim();
  if (t.startsWith('{') || t.startsWith('[')) return false;
  return /[,\t;]/.test(t);
}
