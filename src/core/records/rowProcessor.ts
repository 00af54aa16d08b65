/**
 * The row processor: one raw row → its fate and its tokenized records
 * (normalize → render → mask → tokenize), the unit of work of `prepare`
 * in the run's own thread or in a pool worker.
 */
import type { Code } from '../codes';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { conversationsOf, normalizeRow, type NormalizeOptions } from '../formats/normalize';
import type { RawRow } from '../read/readers';
import type { LongPolicy, RowResult, RowSettings, TokenCountDelta } from './rowResult';
import type { ChatTemplate } from '../templates/template';
import { tokenizerFilesStamp, type EncodedText, type TargetTokenizer, type TokenizerBackendChoice } from '../tokenizers/tokenizer';
import { loadTokenizerWithBackend, tokenizerBackendChoice, type BackendTokenizer } from '../tokenizers/backend';
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

const tokenizerCache = new Map<string, BackendTokenizer>();

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
 * Loads a tokenizer once per thread with the backend `backend` asks for (tokenizers/backend.ts): runs over several
 * inputs (and the extension's repeated runs) reuse it while its files are unchanged (keyed by folder, the files'
 * modification times and the backend asked for). `fallback`: why `auto` loaded the JavaScript tokenizer.
 */
export function cachedTokenizer(dir: string | undefined, backend?: TokenizerBackendChoice): BackendTokenizer {
  const folder = dir ? resolve(dir) : '';
  const stamp = folder ? tokenizerFilesStamp(folder) : 'embedded';
  const choice = tokenizerBackendChoice(backend);
  const key = `${folder}|${stamp}|${choice}`;
  let tok = tokenizerCache.get(key);
  if (!tok) {
    tok = loadTokenizerWithBackend(dir, choice);
    tokenizerCache.set(key, tok);
  }
  return tok;
}

/**
 * A row's processing as steps: it yields the texts it needs encoded (a conversation's record texts, at most a few
 * times per row) and is resumed with their encodings, in order; it returns the row's result. {@link RowProcessor}
 * drives it with the synchronous `encode` (`processRow`) or with one `encodeBatch` for a batch of rows (`processRows`).
 */
type RowSteps = Generator<string[], RowResult, EncodedText[]>;

/** The long-record policy of settings: `long`, else `truncate` when the legacy flag is set, else `drop`. */
export function longPolicyOf(s: Pick<RowSettings, 'long' | 'truncate'>): LongPolicy {
  return s.long ?? (s.truncate ? 'truncate' : 'drop');
}

/**
 * Turns raw rows into {@link RowResult}s: normalize → render → mask → tokenize.
 * Self-contained (one per thread); it loads the tokenizer once per thread
 * (`cachedTokenizer`). Rows never share state, so any number of
 * processors give the same results for the same rows. One path per row
 * ({@link RowSteps}), driven row by row with the synchronous `encode`
 * (`processRow`) or a batch at a time with the tokenizer's `encodeBatch` (`processRows`).
 */
export class RowProcessor {
  readonly tok: TargetTokenizer;
  /** Why the run's `auto` backend fell back to the JavaScript tokenizer (tokenizers/backend.ts); absent otherwise. */
  readonly backendFallback?: string;
  private readonly builder: RecordBuilder;
  private readonly mask: MaskPolicy;
  private readonly grouping: Grouping;
  private readonly long: LongPolicy;

  /** @throws TokenizerLoadError for an unusable tokenizer folder */
  constructor(readonly settings: RowSettings) {
    const loaded = cachedTokenizer(settings.tokenizerDir, settings.tokenizerBackend);
    this.tok = loaded.tok;
    if (loaded.fallback !== undefined) this.backendFallback = loaded.fallback;
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
      const steps = this.rowSteps(row, file, fileBase, normalize);
      let step = steps.next();
      while (!step.done) step = steps.next(step.value.map((t) => this.tok.encode(t)));
      return step.value;
    } catch (e) {
      return erroredRow(row, e);
    }
  }

  /**
   * {@link processRow} for the rows of a batch, with the same results in row order: when the tokenizer has an
   * `encodeBatch` (the Rust backend), every row is processed up to the texts it needs encoded, those of all rows are
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
    const encodeBatch = this.tok.encodeBatch;
    if (!encodeBatch) return rows.map((r) => this.processRow(r, file, fileBase, normalize));
    const out = new Array<RowResult>(rows.length);
    /** Rows waiting for their texts' encodings: the row's index, its steps and the texts. */
    let waiting: { k: number; steps: RowSteps; texts: string[] }[] = [];
    const advance = (k: number, steps: RowSteps, encs?: EncodedText[]) => {
      try {
        const step = encs === undefined ? steps.next() : steps.next(encs);
        if (step.done) out[k] = step.value;
        else waiting.push({ k, steps, texts: step.value });
      } catch (e) {
        out[k] = erroredRow(rows[k], e);
      }
    };
    rows.forEach((r, k) => advance(k, this.rowSteps(r, file, fileBase, normalize)));
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

  private *rowSteps(row: Pick<RawRow, 'line' | 'element' | 'value' | 'error'>, file: string, fileBase: string, normalize: NormalizeOptions): RowSteps {
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
          yield* this.processConversation(part, p.conversation, generatedTurnsOf(row.value));
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

  /**
   * Turns one conversation into tokenized record lines; sets the row's fate. Yields its records' texts (and the whole
   * render when no record is it) once, for their encodings.
   */
  private *processConversation(res: RowResult, conv: Conversation, generated?: GeneratedTurnIds[]): Generator<string[], void, EncodedText[]> {
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
    // The records' texts, and the whole render when no record is it (its length in tokens, for --format messages and the report).
    const texts = built.records.map((rec) => rec.text);
    const renderedApart = built.rendered !== null && texts.length > 0 && !texts.includes(built.rendered);
    if (renderedApart) texts.push(built.rendered!);
    const encs = texts.length ? yield texts : [];
    built.records.forEach((rec, k) => {
      const t = this.tokenize(rec, encs[k], generated, res.notes);
      if (rec.text === built.rendered) renderedTokens = t.ids.length;
      pieces.push(t);
    });
    if (renderedApart) renderedTokens = encs[texts.length - 1].ids.length;
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
    const limits = { maxLength: max, truncate: long === 'truncate', minTrainableTokens: this.settings.minTrainableTokens };
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

  /** Masks one text record given its encoding; rows written by `generate` carry the generated token ids (src/core/records/generatedIds.ts). */
  private tokenize(rec: TextRecord, enc: EncodedText, generated: GeneratedTurnIds[] | undefined, notes: Code[]): Tokenized {
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
      return b.records.map((r) => this.tokenize(r, this.tok.encode(r.text), generated && remapGenerated(generated, conv, piece), []));
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
