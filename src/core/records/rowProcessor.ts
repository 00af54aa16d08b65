/**
 * The row processor: one raw row → its fate and its tokenized records
 * (normalize → render → mask → tokenize), the unit of work of `prepare`
 * in the run's own thread or in a pool worker.
 */
import type { Code } from '../codes';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { conversationsOf, normalizeRow } from '../formats/normalize';
import type { NormalizeOptions } from '../formats/base';
import type { RawRow } from '../read/readers';
import type { LongPolicy, RowResult, RowSettings, TokenCountDelta } from './rowResult';
import type { ChatTemplate } from '../templates/template';
import { loadTokenizer } from '../tokenizers/tokenizer';
import { tokenizerFilesStamp } from '../tokenizers/modelFolder';
import type { TargetTokenizer } from '../tokenizers/types';
import type { Conversation, MaskPolicy, TokenizedRecord } from '../types';
import { maskedRecordFate, partsFate, RECORD_DROP_NOTES, rowFate, type RecordDrop, type RecordLimits } from './fate';
import { applyGeneratedIds, generatedTurnsOf, type GeneratedTurnIds } from './generatedIds';
import { countRowTokens } from './rowResult';
import { addRecordCut, addTrainerCuts, CONVERSATION_TRAINER_LENGTH, emptyTrainerCuts, SHORTEST_TRAINER_LENGTH } from '../trainers/trainers';
import { conversationShapes } from './shapes';
import { buildRecords, maskFromSpans, type Grouping, type TextRecord } from './mask';
import { RecordBuilder } from './recordBuilder';
import { splitConversation } from './split';
import { conversationLine, sharegptLine, untrainedTurns } from './conversationLines';
import { isStackOverflow, MAX_JSON_DEPTH } from '../jsonDepth';
import { errorLocation, errorMessage, isInternalError } from '../errors';

const tokenizerCache = new Map<string, TargetTokenizer>();

/** An empty think block (only whitespace inside), as reasoning templates write it for a turn without reasoning. */
const EMPTY_THINK = /<think>\s*<\/think>/;

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
 * Loads a tokenizer once per process: runs over several inputs (and the
 * extension's repeated runs) reuse it while its files are unchanged (keyed by
 * folder and the files' modification times).
 */
export function cachedTokenizer(dir: string | undefined): TargetTokenizer {
  const folder = dir ? resolve(dir) : '';
  const stamp = folder ? tokenizerFilesStamp(folder) : 'embedded';
  const key = `${folder}|${stamp}`;
  let tok = tokenizerCache.get(key);
  if (!tok) {
    tok = loadTokenizer(dir);
    tokenizerCache.set(key, tok);
  }
  return tok;
}

/** The long-record policy of settings: `long`, else `truncate` when the legacy flag is set, else `drop`. */
export function longPolicyOf(s: Pick<RowSettings, 'long' | 'truncate'>): LongPolicy {
  return s.long ?? (s.truncate ? 'truncate' : 'drop');
}

/**
 * Turns raw rows into {@link RowResult}s: normalize → render → mask → tokenize.
 * Synchronous and self-contained (one per thread); it loads the tokenizer once
 * per process (`cachedTokenizer`). Rows never share state, so any number of
 * processors give the same results for the same rows.
 */
export class RowProcessor {
  readonly tok: TargetTokenizer;
  private readonly builder: RecordBuilder;
  private readonly mask: MaskPolicy;
  private readonly grouping: Grouping;
  private readonly long: LongPolicy;

  /** @throws TokenizerLoadError for an unusable tokenizer folder */
  constructor(readonly settings: RowSettings) {
    this.tok = cachedTokenizer(settings.tokenizerDir);
    this.builder = new RecordBuilder(this.tok);
    this.mask = settings.mask ?? 'assistant';
    this.grouping = settings.grouping ?? 'exact';
    this.long = longPolicyOf(settings);
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
      return this.processRowUnguarded(row, file, fileBase, normalize);
    } catch (e) {
      // A bug or an exhausted resource on odd data errors this row only; the message names what happened.
      const res = emptyResult(row.line);
      if (row.element !== undefined) res.element = row.element;
      res.message = unexpectedRowError(e);
      return res;
    }
  }

  private processRowUnguarded(
    row: Pick<RawRow, 'line' | 'element' | 'value' | 'error'>,
    file: string,
    fileBase: string,
    normalize: NormalizeOptions,
  ): RowResult {
    const res: RowResult = emptyResult(row.line);
    if (row.element !== undefined) res.element = row.element;
    if (row.error !== undefined) {
      res.message = row.error;
      res.code = 'invalid_json';
      return res;
    }
    const outcome = normalizeRow(
      row.value,
      row.element === undefined ? { file, line: row.line } : { file, line: row.line, element: row.element },
      fileBase,
      normalize,
    );
    switch (outcome.kind) {
      case 'conversation':
      case 'prompt':
      case 'split': {
        const parts = conversationsOf(outcome);
        // --dedup: the keys of the row's conversations, joined (16 characters each): the row is a duplicate when every one was written before (pipeline.ts).
        if (this.settings.dedup) res.dedupKey = parts.map((p) => conversationKey(p.conversation)).join('');
        const unread = parts[0].conversation.unreadFields;
        if (unread?.length) res.unreadFields = unread;
        res.notes.push(...(parts[0].conversation.notes ?? []));
        const shapes = new Set(parts.flatMap((p) => conversationShapes(p.conversation)));
        if (shapes.size) res.shapes = [...shapes];
        const prompts: string[] = [];
        const promptIds: string[] = [];
        /** Each part's fate, in row order (records/fate.ts `partsFate` decides the row's). */
        const fates: (Pick<RowResult, 'fate' | 'reason' | 'message' | 'code'> & { records: number })[] = [];
        for (const p of parts) {
          if (p.kind === 'prompt') {
            prompts.push(promptLine(p.conversation));
            promptIds.push(p.conversation.id);
            fates.push({ fate: 'setAside', records: 0 });
            continue;
          }
          const part = emptyResult(row.line);
          this.processConversation(part, p.conversation, generatedTurnsOf(row.value));
          res.notes.push(...part.notes);
          if (part.fate === 'setAside' && part.prompt !== undefined) {
            // v1.4 "Empty turns": a trailing placeholder left no target, so this part is a prompt to generate.
            prompts.push(part.prompt);
            fates.push({ fate: 'setAside', records: 0 });
            continue;
          }
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
          fates.push({
            fate: part.fate,
            reason: part.reason,
            message: part.message,
            ...(part.code === undefined ? {} : { code: part.code }),
            records: part.records.length,
          });
        }
        if (prompts.length) {
          res.prompt = prompts.join('');
          res.promptIds = promptIds;
        }
        const decided = partsFate(fates, (f) => f.records);
        if (decided?.fate === 'written' || decided?.fate === 'setAside') res.fate = decided.fate;
        else if (decided) {
          const { records: _, ...fate } = decided;
          Object.assign(res, fate);
        }
        // Prompt lines beyond the one a set-aside row counts for (report.md counts prompts_to_generate.jsonl lines from them).
        const extra = res.fate === 'setAside' ? prompts.length - 1 : prompts.length;
        for (let k = 0; k < extra; k++) res.notes.push('split_part_set_aside');
        break;
      }
      case 'dropped':
        res.fate = 'dropped';
        res.reason = outcome.reason;
        res.message = outcome.message;
        break;
      case 'errored':
        res.message = outcome.message;
        res.code = outcome.code;
        break;
    }
    return res;
  }

  /** Turns one conversation into tokenized record lines; sets the row's fate. */
  private processConversation(res: RowResult, conv: Conversation, generated?: GeneratedTurnIds[]): void {
    const b = this.builder.build(conv, this.settings);
    if (b.kind === 'errored') {
      res.notes.push(...b.notes);
      res.fate = 'errored';
      res.message = b.message;
      res.code = b.code;
      if (b.code === 'template_budget_exceeded') res.reason = b.code;
      return;
    }
    const { built, template } = b;
    res.notes.push(...built.notes);
    if (built.prompt) {
      // A trailing generation placeholder and no target left: the row is a prompt to generate (docs/loss-mask-rules.md "Empty turns").
      res.prompt = promptLine({ ...conv, messages: built.prompt });
      res.fate = 'setAside';
      return;
    }
    for (const te of built.targetErrors) res.notes.push(te.reason);
    const drops: RecordDrop[] = [];
    // --format messages writes the conversation whole, so --max-length applies to it (conversationOut), not to records:
    // they are neither split, cut nor dropped for their length (no tokenizing of pieces a trainer never sees).
    const max = this.settings.format === 'messages' ? undefined : this.settings.maxLength;
    const long = this.long;
    let renderedTokens = 0;
    let pieces: Tokenized[] = [];
    for (const rec of built.records) {
      const t = this.tokenize(rec, generated, res.notes);
      if (rec.text === built.rendered) renderedTokens = t.ids.length;
      pieces.push(t);
    }
    if (built.rendered !== null && renderedTokens === 0 && pieces.length) renderedTokens = this.tok.encode(built.rendered).ids.length;
    /** Why the row is too long, for its problems.jsonl line when it is dropped so (by how much). */
    let tooLongWhy: string | undefined;
    if (max !== undefined && long === 'split' && this.mask !== 'non-system' && pieces.some((p) => p.ids.length > max)) {
      const cut = { tooLong: [] as number[], tooLongTokens: [] as (number | null)[] };
      pieces = this.split(conv, template, pieces, max, built.rendered ?? '', renderedTokens, generated, res.notes, cut);
      if (pieces.length === 0) {
        drops.push('too_long');
        tooLongWhy = splitTooLongMessage(cut.tooLong, cut.tooLongTokens, max);
      }
    }
    if (pieces.length > 1) res.notes.push('split_into_records');
    const limits: RecordLimits = { ...this.settings, maxLength: max, truncate: long === 'truncate' };
    const { written, trainedTurns, tooLong } = this.writeRecords(res, conv, pieces, limits, drops);
    tooLongWhy ??= tooLong;
    const row = rowFate({ written: res.records.length, drops, targetErrors: built.targetErrors });
    if (row.fate === 'written') {
      res.fate = 'written';
      // A turn without reasoning trained with the empty think block the template writes for it (checkTemplate's finding, per row).
      if (built.records.some((rec) => rec.spans.some(([a, b]) => EMPTY_THINK.test(rec.text.slice(a, b))))) res.notes.push('empty_think_trained');
      res.renderedTokens = renderedTokens;
      res.tokenCounts = countRowTokens(written);
      if (this.settings.format === 'messages')
        res.conversations = [this.conversationOut(conv, renderedTokens, res.notes, untrainedTurns(built.messages, trainedTurns))];
    } else if (row.fate === 'errored') {
      res.fate = 'errored';
      res.message = `${row.targetError.reason}: ${row.targetError.message}; template "${template.named.name}" of ${this.tok.dir}`;
      res.code = row.targetError.reason;
    } else {
      res.fate = 'dropped';
      res.reason = row.reason;
      if (row.reason === 'too_long' && tooLongWhy) res.message = tooLongWhy;
    }
  }

  /**
   * Decides each record's fate (records/fate.ts) under `limits` and adds the written ones to `res` (their lines,
   * ids, counts, trainer cuts); the reasons of the others go to `drops` and their notes to `res.notes`.
   * @returns the written records' ids and masks, the turns they train, and why the row is too long when a record was dropped so
   */
  private writeRecords(
    res: RowResult,
    conv: Conversation,
    pieces: readonly Tokenized[],
    limits: RecordLimits,
    drops: RecordDrop[],
  ): { written: { ids: number[]; mask: number[] }[]; trainedTurns: Set<number>; tooLong?: string } {
    const written: { ids: number[]; mask: number[] }[] = [];
    let tooLong: string | undefined;
    /** The turns (indices of `built.messages`) the written records train: the others are untrained in conversations.jsonl. */
    const trainedTurns = new Set<number>();
    for (let r = 0; r < pieces.length; r++) {
      let { ids, mask } = pieces[r];
      const fate = maskedRecordFate(mask, limits);
      if (fate.truncated) res.notes.push('record_truncated');
      if (!fate.written) {
        drops.push(fate.reason);
        if (fate.reason === 'too_long') tooLong ??= recordsTooLongMessage(pieces, limits.maxLength!);
        res.notes.push(RECORD_DROP_NOTES[fate.reason]);
        continue;
      }
      if (fate.truncated) {
        ids = ids.slice(0, fate.keep);
        mask = mask.slice(0, fate.keep);
      }
      const nResp = fate.trainable;
      const out: TokenizedRecord = {
        id: pieces.length > 1 ? `${conv.id}#${r}` : conv.id,
        source:
          conv.source.element === undefined
            ? { file: conv.source.file, line: conv.source.line }
            : { file: conv.source.file, line: conv.source.line, element: conv.source.element },
        input_ids: ids,
        loss_mask: mask,
        seq_len: ids.length,
        n_prompt_tokens: ids.length - nResp,
        n_response_tokens: nResp,
        ...(pieces[r].idsSource ? { ids_source: pieces[r].idsSource } : {}),
      };
      // --format messages writes no records: their lines are not made (the counts and token ids below still are).
      res.records.push(this.settings.format === 'messages' ? '' : JSON.stringify(out) + '\n');
      (res.recordConvIds ??= []).push(conv.id);
      res.recordTokens.push(ids.length);
      res.recordTrainable.push(nResp);
      // What each trainer's default length does to the record (core/trainers/trainers.ts); noted when no --trainer chose the length
      // and the record is written (--format messages writes conversations, checked whole in conversationOut).
      if (
        ids.length > SHORTEST_TRAINER_LENGTH &&
        addRecordCut((res.trainerCuts ??= emptyTrainerCuts()), mask) &&
        !this.settings.trainer &&
        this.settings.format !== 'messages'
      )
        res.notes.push('trainer_length_cut');
      written.push({ ids, mask });
      for (const t of pieces[r].targets) trainedTurns.add(t);
      res.trainableTokens += nResp;
      res.totalTokens += ids.length;
    }
    return { written, trainedTurns, ...(tooLong === undefined ? {} : { tooLong }) };
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

  /** Tokenizes one text record and masks it; rows written by `generate` carry the generated token ids (src/core/records/generatedIds.ts). */
  private tokenize(rec: TextRecord, generated: GeneratedTurnIds[] | undefined, notes: Code[]): Tokenized {
    const enc = this.tok.encode(rec.text);
    if (!enc.exactOffsets) notes.push('offsets_approximate');
    const mask = maskFromSpans(enc.starts, rec.spans);
    if (!generated) return { ids: enc.ids, mask, targets: rec.targets };
    const g = applyGeneratedIds(rec, enc, mask, generated, (x) => this.tok.decode(x));
    notes.push(g.source === 'generated' ? 'generated_token_ids_used' : `retokenized_${g.reason}`);
    return { ids: g.ids, mask: g.mask, targets: rec.targets, idsSource: g.source };
  }

  /**
   * `--long split` (records/split.ts): records that fit stay as they are; the targets of the
   * others are placed in pieces of at most `max` tokens, each noted `context_window_cut` when
   * messages were left out; targets that fit nowhere are noted `target_too_long`.
   * @returns every record, ordered by its first target
   */
  private split(
    conv: Conversation,
    template: ChatTemplate,
    records: Tokenized[],
    max: number,
    rendered: string,
    renderedTokens: number,
    generated: GeneratedTurnIds[] | undefined,
    notes: Code[],
    tooLong: { tooLong: number[]; tooLongTokens: (number | null)[] },
  ): Tokenized[] {
    const keep = records.filter((r) => r.ids.length <= max);
    const over = records.filter((r) => r.ids.length > max).flatMap((r) => r.targets);
    const build = (piece: Conversation) => {
      const b = buildRecords(piece, template, this.builder.specials, this.mask, {
        grouping: this.grouping,
        reasoning: this.settings.reasoning,
        stopTokens: this.tok.stopTokens,
      });
      return b.records.map((r) => this.tokenize(r, generated && remapGenerated(generated, conv, piece), []));
    };
    const cut = splitConversation(conv, over, max, build, rendered.length, renderedTokens);
    for (let k = 0; k < cut.tooLong.length; k++) notes.push('target_too_long');
    tooLong.tooLong.push(...cut.tooLong);
    tooLong.tooLongTokens.push(...cut.tooLongTokens);
    for (const p of cut.records) if (p.cut) notes.push('context_window_cut');
    return [...keep, ...cut.records.map((p) => ({ ids: p.ids, mask: p.mask, targets: p.targets }))].sort((a, b) => a.targets[0] - b.targets[0]);
  }
}

/**
 * The problems.jsonl message of a row dropped `too_long` (no `--long split`): its longest record's tokens and how many
 * over `max` (the row's records are all longer, or the others had nothing to train).
 */
function recordsTooLongMessage(pieces: readonly Tokenized[], max: number): string {
  const over = pieces.filter((p) => p.ids.length > max).map((p) => p.ids.length);
  const longest = Math.max(...over);
  const what = pieces.length > 1 ? `its longest record has ${longest} tokens` : `its record has ${longest} tokens`;
  return `${what}, ${longest - max} over --max-length ${max}`;
}

/**
 * The problems.jsonl message of a row `--long split` could not place anywhere: the first assistant turn that does not
 * fit `max` even with no history before it (message index), its tokens so and how many over, and how many such turns.
 */
function splitTooLongMessage(turns: readonly number[], tokens: readonly (number | null)[], max: number): string {
  if (turns.length === 0) return `no record fits --max-length ${max}`;
  const n = tokens[0];
  const first = `assistant turn ${turns[0]} does not fit --max-length ${max} even with no history before it${n === null ? '' : ` (${n} tokens, ${n - max} over)`}`;
  return turns.length > 1 ? `${first}; nor do its ${turns.length - 1} other assistant turn(s)` : first;
}

/** A record's tokens and mask, with its targets (message indices). */
interface Tokenized {
  ids: number[];
  mask: number[];
  targets: number[];
  idsSource?: 'generated' | 'retokenized';
}

/** A generated row's turn ids, renumbered for a piece whose messages are objects of the original conversation (the others are copies of them, flagged untrainable). */
function remapGenerated(generated: GeneratedTurnIds[], conv: Conversation, piece: Conversation): GeneratedTurnIds[] {
  const out: GeneratedTurnIds[] = [];
  for (const g of generated) {
    const k = piece.messages.indexOf(conv.messages[g.message_index]);
    if (k >= 0) out.push({ ...g, message_index: k });
  }
  return out;
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
