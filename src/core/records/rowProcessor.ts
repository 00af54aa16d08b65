/**
 * The row processor: one raw row → its fate and its tokenized records
 * (normalize → render → mask → tokenize), the unit of work of `prepare`
 * in the run's own thread or in a pool worker.
 */
import type { Code } from '../codes';
import { createHash } from 'node:crypto';
import type { NormalizeOptions } from '../formats/base';
import type { RawRow } from '../read/readers';
import type { RowResult, RowSettings, TokenCountDelta } from './rowResult';
import type { EncodedText, TargetTokenizer } from '../tokenizers/types';
import { cachedTokenizer } from '../tokenizers/loadedTokenizers';
import type { Conversation, Message, TokenizedRecord } from '../types';
import { countRowTokens } from './rowResult';
import { addTrainerCuts, CONVERSATION_TRAINER_LENGTH, emptyTrainerCuts } from '../trainers/trainers';
import { conversationShapes } from './shapes';
import { RecordBuilder } from './recordBuilder';
import { runSteps, traceRowSteps, type TraceSteps } from './rowTrace';
import type { ConversationTrace, RowTrace } from './rowTraceTypes';
import { conversationLine, sharegptLine, untrainedTurns } from './conversationLines';
import { isStackOverflow, MAX_JSON_DEPTH } from '../jsonDepth';
import { errorLocation, errorMessage, isInternalError } from '../errors';

/**
 * The `--dedup` key of a normalized conversation: 16 bytes of the SHA-256 of
 * what is rendered (roles, texts, reasoning, tool calls and results, tools,
 * trainable flags), as a latin1 string; ids, sources and notes do not count.
 */
export function conversationKey(c: Conversation): string {
  const h = createHash('sha256');
  h.update(
    JSON.stringify([
      c.messages.map((m) => [
        m.role,
        m.content,
        m.reasoning_content ?? null,
        m.tool_calls ?? null,
        m.tool_call_id ?? null,
        m.name ?? null,
        m.trainable ?? null,
      ]),
      c.tools ?? null,
      ...(c.answerAfter?.length ? [c.answerAfter] : []),
    ]),
  );
  return h.digest().subarray(0, 16).toString('latin1');
}

/**
 * Turns raw rows into {@link RowResult}s: the row's trace (records/rowTrace.ts `traceRow`: normalize → render →
 * mask → tokenize → fate), written as its record lines, prompt lines, counts and notes.
 * Self-contained (one per thread); it loads the tokenizer once per thread
 * (tokenizers/loadedTokenizers.ts `cachedTokenizer`). Rows never share state, so any number of
 * processors give the same results for the same rows. One path per row
 * (records/rowTrace.ts `traceRowSteps`), driven row by row with the synchronous `encode`
 * (`processRow`) or a batch at a time with the tokenizer's `encodeBatch` (`processRows`).
 */
export class RowProcessor {
  readonly tok: TargetTokenizer;
  /** Why the run's `auto` backend fell back to the JavaScript tokenizer (tokenizers/backend.ts); absent otherwise. */
  readonly backendFallback?: string;
  /** The compiled chat templates of this processor's rows (the run's template check uses them too: run/prepare/runSetup.ts). */
  readonly builder: RecordBuilder;

  /** @throws TokenizerLoadError for an unusable tokenizer folder or backend (cachedTokenizer) */
  constructor(readonly settings: RowSettings) {
    const loaded = cachedTokenizer(settings.tokenizerDir, settings.tokenizerBackend);
    this.tok = loaded.tok;
    if (loaded.fallback !== undefined) this.backendFallback = loaded.fallback;
    this.builder = new RecordBuilder(this.tok);
  }

  /**
   * Processes one row of `file` (`fileBase` = its basename, for default ids;
   * `normalize`: the file's reading options from `eagle3prep.jsonc`).
   * Never throws: a row that cannot be used is `dropped` or `errored`, and so is
   * a row on which the code fails (an `internal error …` message, or
   * {@link unexpectedRowError}'s wording for a stack overflow).
   * A row holding several conversations (`split`) writes the records of each and
   * sets aside each prompt part; its fate is `written` when any record was
   * written, else `setAside` when a part was set aside, else the first part's fate.
   */
  processRow(row: Pick<RawRow, 'line' | 'element' | 'value' | 'error'>, file: string, fileBase: string, normalize: NormalizeOptions = {}): RowResult {
    try {
      return runSteps(this.rowSteps(row, file, fileBase, normalize), this.tok);
    } catch (e) {
      return erroredRow(row, e);
    }
  }

  /**
   * {@link processRow} for the rows of a batch, with the same results in row order: when the tokenizer has an
   * `encodeBatch` (the Rust backend), every row is traced up to the texts it needs encoded, those of all rows are
   * encoded in one call, and the rows resume (again for the rows that need more, e.g. a row of several
   * conversations); else row by row with `encode`. Never rejects: a row whose processing throws is errored as in
   * processRow, and so are the rows waiting on an `encodeBatch` that rejects.
   */
  async processRows(
    rows: readonly Pick<RawRow, 'line' | 'element' | 'value' | 'error'>[],
    file: string,
    fileBase: string,
    normalize: NormalizeOptions = {},
  ): Promise<RowResult[]> {
    const encodeBatch = this.tok.encodeBatch?.bind(this.tok);
    if (!encodeBatch) return rows.map((r) => this.processRow(r, file, fileBase, normalize));
    const out = new Array<RowResult>(rows.length);
    /** Rows waiting for their texts' encodings: the row's index, its steps and the texts. */
    let waiting: { k: number; steps: TraceSteps<RowResult>; texts: string[] }[] = [];
    const advance = (k: number, steps: TraceSteps<RowResult> | undefined, encs?: EncodedText[]) => {
      try {
        steps ??= this.rowSteps(rows[k], file, fileBase, normalize);
        const step = encs === undefined ? steps.next() : steps.next(encs);
        if (step.done) out[k] = step.value;
        else waiting.push({ k, steps, texts: step.value });
      } catch (e) {
        out[k] = erroredRow(rows[k], e);
      }
    };
    rows.forEach((_, k) => advance(k, undefined));
    while (waiting.length) {
      const round = waiting;
      waiting = [];
      let encs: EncodedText[];
      try {
        encs = await encodeBatch(round.flatMap((w) => w.texts));
      } catch (e) {
        for (const w of round) out[w.k] = erroredRow(rows[w.k], e);
        continue;
      }
      let at = 0;
      for (const w of round) {
        advance(w.k, w.steps, encs.slice(at, at + w.texts.length));
        at += w.texts.length;
      }
    }
    return out;
  }

  /** One row's processing as steps (records/rowTrace.ts `TraceSteps`): its trace, then the trace written as its result. */
  private *rowSteps(
    row: Pick<RawRow, 'line' | 'element' | 'value' | 'error'>,
    file: string,
    fileBase: string,
    normalize: NormalizeOptions,
  ): TraceSteps<RowResult> {
    const trace = yield* traceRowSteps(row, file, fileBase, normalize, this.settings, { tok: this.tok, builder: this.builder });
    return this.resultOf(row, trace);
  }

  /** A row's trace as prepare writes it: fate, record lines, prompt lines, counts and notes. */
  private resultOf(row: Pick<RawRow, 'line' | 'element'>, trace: RowTrace): RowResult {
    const res: RowResult = emptyResult(row.line);
    if (row.element !== undefined) res.element = row.element;
    const f = trace.fate;
    if (!trace.parts.length) {
      if (f.fate === 'dropped') Object.assign(res, { fate: 'dropped', reason: f.reason, message: f.message });
      else if (f.fate === 'errored') Object.assign(res, { message: f.message, code: f.code });
      return res;
    }
    const parts = trace.parts;
    // --dedup: the keys of the row's conversations, joined (16 characters each): the row is a duplicate when every one was written before (pipeline.ts).
    if (this.settings.dedup) res.dedupKey = parts.map((p) => conversationKey(p.conversation)).join('');
    const unread = parts[0].conversation.unreadFields;
    if (unread?.length) res.unreadFields = unread;
    res.notes.push(...(parts[0].conversation.notes ?? []));
    // Each shape once (one conversation's are distinct already).
    const shapes = parts.length === 1 ? conversationShapes(parts[0].conversation) : [...new Set(parts.flatMap((p) => conversationShapes(p.conversation)))];
    if (shapes.length) res.shapes = shapes;
    const prompts: string[] = [];
    const promptIds: string[] = [];
    for (const p of parts) {
      if (p.kind === 'prompt') {
        prompts.push(promptLine(p.conversation));
        promptIds.push(p.conversation.id);
        continue;
      }
      const part = this.partResult(row.line, p);
      res.notes.push(...part.notes);
      // v1.4 "Empty turns": a trailing placeholder left no target, so this part is a prompt to generate.
      if (p.prompt) prompts.push(promptLine({ ...p.conversation, messages: p.prompt }));
      else addPart(res, part);
    }
    if (prompts.length) {
      res.prompt = prompts.join('');
      res.promptIds = promptIds;
    }
    // The row's fate: records/fate.ts `partsFate` over the parts (rowTrace.ts).
    if (f.fate === 'written' || f.fate === 'setAside') res.fate = f.fate;
    else if (f.fate === 'dropped') Object.assign(res, { fate: 'dropped', reason: f.reason, ...(f.message === undefined ? {} : { message: f.message }) });
    else Object.assign(res, { fate: 'errored', message: f.message, code: f.code, ...(f.reason === undefined ? {} : { reason: f.reason }) });
    // Prompt lines beyond the one a set-aside row counts for (report.md counts prompts_to_generate.jsonl lines from them).
    const extra = res.fate === 'setAside' ? prompts.length - 1 : prompts.length;
    for (let k = 0; k < extra; k++) res.notes.push('split_part_set_aside');
    return res;
  }

  /** One conversation's trace as prepare writes it: its written records' lines, ids and counts, and its `--format messages` lines. */
  private partResult(line: number, t: ConversationTrace): RowResult {
    const res = emptyResult(line);
    res.notes.push(...t.notes);
    const conv = t.conversation;
    const written: { ids: number[]; mask: number[] }[] = [];
    for (let k = 0; k < t.records.length; k++) {
      const r = t.records[k];
      if (!r.fate.written) continue;
      const ids = r.fate.truncated ? r.ids.slice(0, r.fate.keep) : r.ids;
      const mask = r.fate.truncated ? r.mask.slice(0, r.fate.keep) : r.mask;
      const nResp = r.fate.trainable;
      const out: TokenizedRecord = {
        id: t.records.length > 1 ? `${conv.id}#${k}` : conv.id,
        source:
          conv.source.element === undefined
            ? { file: conv.source.file, line: conv.source.line }
            : { file: conv.source.file, line: conv.source.line, element: conv.source.element },
        input_ids: ids,
        loss_mask: mask,
        seq_len: ids.length,
        n_prompt_tokens: ids.length - nResp,
        n_response_tokens: nResp,
        ...(r.idsSource ? { ids_source: r.idsSource } : {}),
      };
      // --format messages writes no records: their lines are not made (the counts and token ids below still are).
      res.records.push(this.settings.format === 'messages' ? '' : JSON.stringify(out) + '\n');
      (res.recordConvIds ??= []).push(conv.id);
      res.recordTokens.push(ids.length);
      res.recordTrainable.push(nResp);
      written.push({ ids, mask });
      res.trainableTokens += nResp;
      res.totalTokens += ids.length;
    }
    if (t.trainerCuts) res.trainerCuts = t.trainerCuts;
    if (t.fate.fate === 'written') {
      res.renderedTokens = t.renderedTokens;
      res.tokenCounts = countRowTokens(written);
      if (this.settings.format === 'messages')
        res.conversations = [
          this.conversationOut(
            conv,
            t.renderedTokens,
            res.notes,
            untrainedTurns((t.build as { built: { messages: Message[] } }).built.messages, t.trainedTurns),
          ),
        ];
    }
    return res;
  }

  /**
   * The `--format messages` lines of a written conversation (records/conversationLines.ts) and their notes:
   * `conversation_over_trainer_length` when the conversation rendered once (`renderedTokens`) is longer than
   * `--max-length`, or without it than {@link CONVERSATION_TRAINER_LENGTH} (a trainer that tokenizes it applies
   * its length to all of it); with `--trainer eagle`, the
   * ShareGPT line, or the note saying why EAGLE's reader cannot take the conversation as it is. `untrained`: the
   * assistant turns no written record trains (written with `"weight": 0`).
   */
  private conversationOut(
    conv: Conversation,
    renderedTokens: number,
    notes: Code[],
    untrained: ReadonlySet<number>,
  ): NonNullable<RowResult['conversations']>[number] {
    const reasoning = this.settings.reasoning ?? 'keep';
    const out = conversationLine(conv, reasoning, untrained);
    notes.push(...out.notes);
    if (renderedTokens > (this.settings.maxLength ?? CONVERSATION_TRAINER_LENGTH)) notes.push('conversation_over_trainer_length');
    const entry: NonNullable<RowResult['conversations']>[number] = { id: conv.id, messages: out.line };
    if (this.settings.trainer === 'eagle') {
      const sg = sharegptLine(conv, reasoning, untrained);
      if ('line' in sg) {
        entry.sharegpt = sg.line;
        notes.push(...sg.notes);
      } else notes.push(sg.refused);
    }
    return entry;
  }
}

/**
 * A `prompts_to_generate.jsonl` line: `{"id", "source", "messages", "tools"?}` with everything the server
 * needs to answer (tool calls and their results keep their ids and names; `null` content as `""`). A multi-turn
 * prompt's places to answer ({@link Conversation.answerAfter}) are written as empty assistant turns
 * `{"role": "assistant", "content": ""}` after those turns: `generate` answers each in order, then asks the next
 * user turn (generate/conversation.ts); reading the line back gives the same `answerAfter`.
 */
export function promptLine(c: Conversation): string {
  const after = new Set(c.answerAfter ?? []);
  const msgs = c.messages.flatMap((m, i) => {
    const line = {
      role: m.role,
      content: m.content ?? '',
      ...(m.reasoning_content ? { reasoning_content: m.reasoning_content } : {}),
      ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}),
      ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
      ...(m.name ? { name: m.name } : {}),
    };
    return after.has(i) && i < c.messages.length - 1 ? [line, { role: 'assistant' as const, content: '' }] : [line];
  });
  return JSON.stringify({ id: c.id, source: c.source, messages: msgs, ...(c.tools?.length ? { tools: c.tools } : {}) }) + '\n';
}

/** Adds a written or dropped part's records, counts and trainer cuts to the row's result. */
function addPart(res: RowResult, part: RowResult): void {
  res.records.push(...part.records);
  if (part.conversations) (res.conversations ??= []).push(...part.conversations);
  if (part.recordConvIds) (res.recordConvIds ??= []).push(...part.recordConvIds);
  res.recordTokens.push(...part.recordTokens);
  res.recordTrainable.push(...part.recordTrainable);
  if (part.trainerCuts) res.trainerCuts = addTrainerCuts(res.trainerCuts ?? emptyTrainerCuts(), part.trainerCuts);
  res.trainableTokens += part.trainableTokens;
  res.totalTokens += part.totalTokens;
  res.renderedTokens += part.renderedTokens;
  if (part.tokenCounts) res.tokenCounts = res.tokenCounts ? mergeTokenCounts(res.tokenCounts, part.tokenCounts) : part.tokenCounts;
}

/**
 * The result of a row whose processing threw: errored with {@link unexpectedRowError}'s message (a bug or an
 * exhausted resource on odd data errors this row only; the message names what happened).
 */
function erroredRow(row: Pick<RawRow, 'line' | 'element'>, e: unknown): RowResult {
  const res = emptyResult(row.line);
  if (row.element !== undefined) res.element = row.element;
  res.message = unexpectedRowError(e);
  return res;
}

/** A row's result before it is processed (fate `errored` until decided). */
function emptyResult(line: number): RowResult {
  return { line, fate: 'errored', notes: [], records: [], trainableTokens: 0, totalTokens: 0, recordTokens: [], recordTrainable: [], renderedTokens: 0 };
}

/** The token counts of two conversations of one row (a `split` row) together: ids ascending and distinct, counts summed. */
function mergeTokenCounts(a: TokenCountDelta, b: TokenCountDelta): TokenCountDelta {
  const all = new Map<number, number>();
  const trained = new Map<number, number>();
  for (const d of [a, b]) {
    d.ids.forEach((id, k) => {
      all.set(id, (all.get(id) ?? 0) + d.all[k]);
      trained.set(id, (trained.get(id) ?? 0) + d.trained[k]);
    });
  }
  const ids = Uint32Array.from([...all.keys()].sort((x, y) => x - y));
  return { ids, all: Uint32Array.from(ids, (id) => all.get(id)!), trained: Uint32Array.from(ids, (id) => trained.get(id)!) };
}

/**
 * The error message of a row whose processing threw: a JavaScript stack
 * overflow (content nested too deep for a recursive step) is named as such;
 * anything else is an internal error with its message. Never throws.
 */
export function unexpectedRowError(e: unknown): string {
  try {
    if (isStackOverflow(e))
      return `the row is nested too deep to process (JavaScript stack overflow: ${(e as Error).message}); rows are read up to ${MAX_JSON_DEPTH} levels of arrays/objects, and JSON text inside string fields is parsed to that depth too`;
    // Where in the code, for a JavaScript runtime error: its message alone ("Cannot read properties of undefined") says nothing.
    const where = isInternalError(e) ? errorLocation(e) : '';
    return `internal error processing the row${isInternalError(e) ? ` (${e.name}${where ? ` at ${where}` : ''})` : ''}: ${errorMessage(e)}`;
  } catch {
    return 'internal error processing the row';
  }
}
