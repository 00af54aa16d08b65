/**
 * `inspect`: show how a dataset file is read — its detected format with the
 * evidence, the normalized records, and every row that was skipped and why.
 * The {@link InspectResult} JSON shape is a CLI contract (`eagle3-prep inspect`).
 *
 * Pure Node (no `vscode`).
 */
import * as fs from 'node:fs';
import { ownEntry } from '../../ownEntry';
import * as path from 'node:path';
import { DETECT_SAMPLE_SIZE, detectFormat } from '../../formats/detect';
import { describeCandidate, findConversations } from '../../formats/discovery';
import { EXPECTED_SHAPES } from '../../formats/normalize';
import { codeMeaning } from '../../codes';
import { traceRow } from '../../records/rowTrace';
import type { ReadConversation, ReadTrace, TraceSettings } from '../../records/rowTraceTypes';
import { datasetKeys } from '../../formats/fieldRoles';
import { suggestMappingLine } from '../../formats/mapping';
import type { RawRow } from '../../read/readers';
import type { ProjectConfig } from '../../read/projectConfig';
import { configuredRows, rowConfigFor } from '../../formats/rowSource';
import type { AnswerMode } from '../../types';
import { filePassFor, partFateAsRead, type FilePass } from './oasstRun';
import { describeError, isInternalError } from '../../errors';
import type { Message } from '../../types';

/**
 * One message as `inspect` prints it: the normalized message model (`types.ts` `Message`; optional
 * keys only when set; `tool_calls` in OpenAI form with `arguments` as the source gave it), with
 * `trainable` present only as `false` (the source flags the turn as not trainable: `weight: 0`,
 * `loss: false`, `train: false`, `trainable: false`).
 */
export type InspectMessage = Omit<Message, 'trainable'> & { trainable?: false };

/**
 * One normalized row. `needs_generation` is true for prompt rows (no assistant turn, or only trailing empty ones that
 * leave no target: the target model must answer first), decided by prepare's own rule (records/turns.ts
 * `turnsBeforeTemplate`) under the default mask policy and reasoning (`assistant`, `keep`) unless
 * {@link InspectOptions.settings} says otherwise: `prepare --reasoning drop` or another `--mask` may set more aside.
 */
export interface InspectRecord {
  source: { line: number; element?: number };
  id: string;
  /** The shape handler that read the row (`openai-messages`, `sharegpt`, `preference`, …): rows of a mixed file are read per row. */
  shape: string;
  messages: InspectMessage[];
  needs_generation: boolean;
  /**
   * A multi-turn prompt answered turn by turn: 0-based indexes into `messages` of the turns after which the
   * target model answers before the next is asked (the last turn is always answered). Absent otherwise.
   */
  answer_after?: number[];
  /** Tool definitions (OpenAI form) when the row has them. */
  tools?: unknown[];
  /** Content parts that are not text (images, audio, …): not rendered. `message` indexes `messages`. */
  non_text_parts?: { message: number; type: string }[];
  /** Normalization note codes (docs/formats.md "Input shapes"), e.g. `inline_think_split`, `tool_call_arguments_not_json`. */
  notes?: string[];
  /** Fields of the row (or of its turns) that were neither read nor known metadata, as paths (`generated_patch`, `messages[].mask`). */
  unread_fields?: string[];
}

/**
 * A row that holds no conversation of its own but is part of others: an
 * OpenAssistant message inside root-to-leaf paths, or an agent CLI event
 * inside root-to-leaf chains (formats/eventLog.ts), whose conversations the
 * rows at `in_records_of` (their lines) carry.
 */
export interface InspectPart {
  line: number;
  element?: number;
  in_records_of: number[];
}

/**
 * A row that yields no record. `reason`: `invalid_json`, a drop reason
 * (`empty_conversation`, `no_assistant_turn`, `unrecognized_shape`,
 * `message_fragment`, `kto_undesirable`, `oasst_excluded`, `oasst_orphan`,
 * `oasst_duplicate`, `oasst_not_best_path`, `oasst_path_not_written`, `summary_event`, `orphan_event`,
 * `duplicate_event`, `non_conversation_event`, `event_chain_not_written`) or `errored`; for `errored`, `code` says why
 * (`unknown_role`, `missing_role`, `bad_turn`, `bad_tool_calls`, `bad_field`, `internal_error`).
 */
export interface InspectSkipped {
  line: number;
  reason: string;
  code?: string;
  message: string;
}

/**
 * The `inspect` result (CLI contract; docs/cli.md "inspect --json"). Every row read is
 * in exactly one of `records` (by its `source`; a row holding several
 * conversations has one record per conversation), `skipped`, or `part_of`.
 */
export interface InspectResult {
  file: string;
  format: string;
  evidence: string[];
  rows_read: number;
  records: InspectRecord[];
  skipped: InspectSkipped[];
  /** Rows that are part of other rows' records (OpenAssistant flat exports, agent CLI event logs); present only when there are some. */
  part_of?: InspectPart[];
  /** Field path → rows that have it, over the rows read (empty when every field is understood). */
  unread_fields: Record<string, { count: number; lines: number[] }>;
}

/** Options of {@link inspectFile}. */
export interface InspectOptions {
  /** Read at most this many rows (blank lines are not rows); default: the whole file. */
  limit?: number;
  /** A field-mapping file (`formats/mapping.ts`); default: the nearest `eagle3prep.jsonc`, if any entry matches. */
  mapping?: string;
  /** Several answers to one prompt without a preference (`--answers`): wins over eagle3prep.jsonc "reading" "answers". */
  answers?: AnswerMode;
  /**
   * The mask policy and reasoning whose prepare run `needs_generation` is decided for (records/turns.ts
   * `turnsBeforeTemplate`); default prepare's defaults (`assistant`, `keep`). The CLI's `inspect` passes none.
   */
  settings?: Pick<TraceSettings, 'mask' | 'reasoning'>;
}

/**
 * Inspect a dataset file (JSONL or JSON; see `read/readers`).
 *
 * Reads the rows (at most `opts.limit`), detects the format from the first
 * {@link DETECT_SAMPLE_SIZE} rows (`formats/detect.ts`), and normalizes every
 * row (`formats/normalize.ts`) with the file's `eagle3prep.jsonc`:
 * conversations and prompts become `records` (prompts with
 * `needs_generation: true`; a row holding several conversations gives one each),
 * everything else goes to `skipped` with `line`, `reason` (`invalid_json`, a
 * drop reason, or `errored`) and `message`. An OpenAssistant flat export is read
 * whole and its trees rebuilt (`formats/oasst.ts`; an agent CLI event log likewise, `formats/eventLog.ts`): the
 * message rows inside other rows' conversations go to `part_of`, or to `skipped` with the pass's reason when every
 * row carrying them was dropped or errored as it was read. Fields nobody read are listed per record
 * and per file (`unread_fields`). Row order is kept in every list.
 *
 * @throws Error when the file cannot be read (message names the file), and when
 *   no row read has a recognizable conversational shape: the message, one
 *   paragraph, names the file, what was found (empty file, lines that are not
 *   JSON — e.g. CSV —, already tokenized rows with `input_ids`, the keys seen,
 *   the places that look like a conversation and why they were not read) and
 *   what would work (the shapes read, a field mapping suggested from the first row).
 */
export async function inspectFile(file: string, opts: InspectOptions = {}): Promise<InspectResult> {
  const at = { line: 0 };
  try {
    return await inspectFileUnguarded(file, opts, at);
  } catch (e) {
    // A JavaScript error (a bug meeting unexpected data) never is the whole message: the file, where it stopped, what.
    if (isInternalError(e))
      throw new Error(describeError(e, `${file}: inspect stopped ${at.line ? `after line ${at.line}` : 'at its first row'}`), { cause: e });
    throw e;
  }
}

/** {@link inspectFile}; `at.line` follows the last row read. */
async function inspectFileUnguarded(file: string, opts: InspectOptions, at: { line: number }): Promise<InspectResult> {
  const limit = opts.limit ?? Infinity;
  // The same eagle3prep.jsonc role aliases / field mappings / reading choices that prepare applies (projectConfig.ts).
  const config = rowConfigFor(file, { mapping: opts.mapping, answers: opts.answers });
  const inspection = new Inspection(file, config.reading, opts.settings ?? {});
  if (limit > 0) await inspection.read(configuredRows(file, config), config.project, limit, at);
  return inspection.result(limit);
}

/** What inspecting a file gathers as its rows are read: the records, the skipped rows, the rows inside others, and what was found of the rows no shape read. */
class Inspection {
  private readonly fileBase: string;
  /** The detection sample: the parsed values of the first rows. */
  private readonly sample: unknown[] = [];
  private readonly records: InspectRecord[] = [];
  private readonly skipped: InspectSkipped[] = [];
  private readonly partOf: InspectPart[] = [];
  private readonly unreadFields: InspectResult['unread_fields'] = {};
  private rowsRead = 0;
  private recognized = 0;
  private invalid = 0;
  private firstInvalid: string | undefined;
  private tokenized = 0;
  private readonly keysSeen = new Map<string, number>();
  private firstUnrecognized: unknown;

  constructor(
    private readonly file: string,
    private readonly normalizeOptions: ReturnType<typeof rowConfigFor>['reading'],
    private readonly settings: Pick<TraceSettings, 'mask' | 'reasoning'>,
  ) {
    this.fileBase = path.basename(file);
  }

  /**
   * Reads at most `limit` rows. The first rows decide the format; an OpenAssistant flat export (or an agent CLI event
   * log) is then read whole and rebuilt into trees (formats/oasst.ts), else each row is taken as it is read.
   */
  async read(rows: AsyncGenerator<RawRow>, project: ProjectConfig | undefined, limit: number, at: { line: number }): Promise<void> {
    const head: RawRow[] = [];
    let oasst: FilePass | undefined;
    const held: RawRow[] = []; // in OpenAssistant mode: every row, message rows without their value (the pass keeps what it needs)
    const hold = (row: RawRow) => {
      const i = held.length;
      held.push(row.error === undefined && oasst!.add(i, row.value, row.line) ? { ...row, value: undefined } : row);
    };
    let decided = false;
    const decide = () => {
      decided = true;
      // Detection reads the first rows as prepare does (detect.ts), before any file-level pass.
      for (const h of head) if (h.error === undefined) this.sample.push(h.value);
      oasst = startFilePass(head, project);
      for (const h of head.splice(0)) {
        if (oasst) hold(h);
        else this.take(h, h.value);
      }
    };
    try {
      for await (const row of rows) {
        at.line = row.line;
        this.rowsRead++;
        if (!decided) {
          head.push(row);
          if (head.length >= DETECT_SAMPLE_SIZE) decide();
        } else if (oasst) hold(row);
        else this.take(row, row.value);
        if (this.rowsRead >= limit) break;
      }
    } finally {
      await rows.return(undefined);
    }
    if (!decided) decide();
    if (oasst) this.applyPlans(oasst, held);
  }

  /**
   * The file-level pass's plans for the rows held, in row order: a row inside others' conversations goes to `part_of`
   * (to `skipped`, with the pass's `partReason`, when every row carrying it was dropped or errored as it was read:
   * prepare drops it so, oasstRun.ts `partFateAsRead`), the others are taken (with the value planned).
   */
  private applyPlans(pass: FilePass, held: RawRow[]): void {
    const plans = pass.plan();
    const taken = held.map((row, i) => {
      const plan = plans.get(i);
      if (plan?.kind === 'part') return undefined;
      const value = plan ? plan.value : row.value;
      return { value, trace: this.trace(row, value) };
    });
    held.forEach((row, i) => {
      const plan = plans.get(i);
      if (plan?.kind !== 'part') return this.take(row, taken[i]!.value, taken[i]!.trace);
      this.recognized++;
      if (partFateAsRead(plan.leaves.map((l) => taken[l]?.trace.fate.fate)) === 'dropped')
        this.skipped.push({ line: row.line, reason: pass.partReason, message: codeMeaning(pass.partReason) });
      else
        this.partOf.push({
          line: row.line,
          ...(row.element === undefined ? {} : { element: row.element }),
          in_records_of: plan.leaves.map((l) => held[l].line),
        });
    });
  }

  /** One row (or the value an OpenAssistant pass planned for it) read by prepare's row path, up to its conversations (records/rowTrace.ts). */
  private trace(row: RawRow, value: unknown): ReadTrace {
    return traceRow({ ...row, value }, this.file, this.fileBase, this.normalizeOptions, this.settings, { until: 'conversations' });
  }

  /** One row (or the value an OpenAssistant pass planned for it; `trace`: its trace, when taken already) into records / skipped. */
  private take(row: RawRow, value: unknown, trace = this.trace(row, value)): void {
    const f = trace.fate;
    if (!trace.detailed && f.fate === 'errored') {
      // Not JSON: the trace errors it `invalid_json` with the reader's message.
      this.invalid++;
      this.firstInvalid ??= `line ${row.line}: ${row.error}`;
      this.skipped.push({ line: row.line, reason: 'invalid_json', message: f.message });
      return;
    }
    const handler = trace.detailed?.handler;
    if (handler) this.recognized++;
    else if (value !== null && typeof value === 'object' && !Array.isArray(value)) this.noteUnrecognized(value as Record<string, unknown>);
    for (const part of trace.parts) this.records.push(inspectRecord(row, part, handler?.name ?? 'unknown'));
    for (const field of trace.parts[0]?.conversation.unreadFields ?? []) {
      const u = ownEntry(this.unreadFields, field, () => ({ count: 0, lines: [] as number[] }));
      u.count++;
      if (u.lines.length < 10) u.lines.push(row.line);
    }
    if (f.fate === 'dropped') this.skipped.push({ line: row.line, reason: f.reason, message: f.message ?? codeMeaning(f.reason) });
    else if (f.fate === 'errored') this.skipped.push({ line: row.line, reason: 'errored', ...(f.code ? { code: f.code } : {}), message: f.message });
  }

  /** A row object no shape read: its keys counted (and whether it is already tokenized), the first one kept for the message. */
  private noteUnrecognized(value: Record<string, unknown>): void {
    this.firstUnrecognized ??= value;
    const keys = datasetKeys(value);
    if (keys.includes('input_ids')) this.tokenized++;
    for (const k of keys) this.keysSeen.set(k, (this.keysSeen.get(k) ?? 0) + 1);
  }

  /**
   * The inspection's result: the format detected from the sample, with the rows that are not JSON and the rows inside
   * others in its evidence.
   * @throws Error explaining why nothing was recognized when no row has a conversational shape
   */
  async result(limit: number): Promise<InspectResult> {
    const { file, rowsRead, invalid, firstInvalid, tokenized, keysSeen, partOf } = this;
    if (this.recognized === 0) {
      const why = await explainNothingFound(file, { rowsRead, invalid, firstInvalid, tokenized, keysSeen, limited: rowsRead >= limit });
      throw new Error(tokenized === 0 && this.firstUnrecognized !== undefined ? `${why}${whatWouldRead(this.firstUnrecognized, path.basename(file))}` : why);
    }
    const { format, evidence } = detectFormat(this.sample);
    if (invalid) evidence.push(`${invalid}/${rowsRead} rows are not valid JSON (first: ${firstInvalid})`);
    if (partOf.length)
      evidence.push(
        format === 'event-log'
          ? `${partOf.length}/${rowsRead} lines are events inside other lines' conversations (agent CLI event log: events joined by parentUuid across the file, each root-to-leaf chain one conversation carried by its leaf line)`
          : `${partOf.length}/${rowsRead} rows are messages inside other rows' conversations (OpenAssistant trees rebuilt across the file)`,
      );
    return {
      file,
      format,
      evidence,
      rows_read: rowsRead,
      records: this.records,
      skipped: this.skipped,
      ...(partOf.length ? { part_of: partOf } : {}),
      unread_fields: this.unreadFields,
    };
  }
}

/**
 * One conversation of a row as `inspect` shows it. Whether it needs generation is the trace's reading stage's
 * (`toGenerate`: records/turns.ts `turnsBeforeTemplate`, the decision prepare's build takes; docs/loss-mask-rules.md
 * "Empty turns"): a prompt as read, or a conversation whose trailing empty assistant turns leave no target (its other
 * assistant turns are context, e.g. a preference prompt's), shown with those turns removed.
 */
function inspectRecord(row: RawRow, part: ReadConversation, shape: string): InspectRecord {
  const { kind, conversation: c, toGenerate } = part;
  const rec: InspectRecord = {
    source: row.element === undefined ? { line: row.line } : { line: row.line, element: row.element },
    id: c.id,
    shape,
    messages: (toGenerate?.messages ?? c.messages).map(toInspectMessage),
    needs_generation: kind === 'prompt' || toGenerate !== undefined,
  };
  if (c.answerAfter?.length) rec.answer_after = c.answerAfter;
  if (c.tools?.length) rec.tools = c.tools;
  if (c.nonTextParts?.length) rec.non_text_parts = c.nonTextParts;
  const notes = [...(c.notes ?? []), ...(toGenerate?.notes ?? [])];
  if (notes.length) rec.notes = [...new Set(notes)];
  if (c.unreadFields?.length) rec.unread_fields = c.unreadFields;
  return rec;
}

/** The pass over the whole file when its first rows are an OpenAssistant flat export (formats/oasst.ts) or an agent CLI event log (formats/eventLog.ts). */
function startFilePass(head: RawRow[], project: ProjectConfig | undefined): FilePass | undefined {
  const valid = head.filter((r) => r.error === undefined).map((r) => r.value);
  return valid.length ? filePassFor(detectFormat(valid).format, project) : undefined;
}

/**
 * The end of the "nothing recognizable" message, on one line: the places in the
 * first unrecognized row that look like a conversation, and a field mapping that
 * would read it (suggested from that row, as one line of JSON).
 */
function whatWouldRead(row: unknown, fileName: string): string {
  const seen = row !== null && typeof row === 'object' && !Array.isArray(row) ? findConversations(row as Record<string, unknown>) : [];
  const places = seen.length
    ? ` Places in the first such row that look like a conversation: ${seen
        .slice(0, 5)
        .map(
          (c) =>
            `${describeCandidate(c)}${c.unknownRoles.length ? ` (speakers not known: ${c.unknownRoles.map((r) => `"${r}"`).join(', ')})` : c.why ? ` (${c.why})` : ''}`,
        )
        .join(', ')}.`
    : '';
  const suggestion = suggestMappingLine(row, fileName);
  return `${places}${suggestion ? ` If the rows hold a conversation in fields of their own, a field mapping in eagle3prep.jsonc reads them; suggested from the first row (fill in what is marked): ${suggestion}` : ''}`;
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
