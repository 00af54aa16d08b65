/**
 * One row, one path: {@link traceRow} takes a row (read, `eagle3prep.jsonc` applied) to its {@link RowTrace}:
 * normalize (shape, conversations) → records (records/recordBuilder.ts) → tokens and loss mask (with the generated
 * ids of a row written by `generate`, records/generatedIds.ts) → `--long split` (records/split.ts) → each record's
 * and the row's fate (records/fate.ts). `prepare` writes the trace (records/rowProcessor.ts); the hover and the mask
 * view (records/recordViewer.ts) decorate it with source ranges and token detail.
 *
 * The one difference between the two is the work cap ({@link WorkCap}): the views tokenize at most a number of
 * characters per conversation, and past them the trace counts tokens from a head and samples (records/tokenEstimate.ts)
 * and says so (`estimated`). Below the cap every step is prepare's, in prepare's order. Past it the trace decides
 * each record's fate from its counted tokens, and a record `--long split` would cut is marked `splitUp` (prepare
 * splits it; the pieces are not built past the cap).
 *
 * The path can stop early: with a {@link ReadingContext} (`until: 'conversations'`) it ends after its first stage,
 * reading the row, and needs no tokenizer ({@link ReadTrace}: the shape, the conversations with their notes and
 * unread fields, or the row's drop or error with its code, message, role and turn). `inspect`, the Problems scan
 * (run/editor/rowProblems.ts) and prepare's first look read rows so: what they say of a row is what prepare's
 * trace of it has through that stage.
 *
 * The path is written once, as steps ({@link TraceSteps}): where prepare tokenizes a conversation's records it yields
 * their texts and is resumed with their encodings. {@link traceRow} drives the steps with the tokenizer's synchronous
 * `encode` (the views, `processRow`); records/rowProcessor.ts `processRows` drives a batch of rows' steps with one
 * `encodeBatch` per round (prepare's pool workers and inline executor with the Rust backend). Same trace either way.
 */
import type { Code } from '../codes';
import { conversationsOf } from '../formats/normalize';
import { normalizeOnce, rowSourceOf } from '../formats/normalizedAhead';
import type { NormalizeOptions } from '../formats/base';
import type { Conversation, Message } from '../types';
import type { EncodedText, TargetTokenizer } from '../tokenizers/types';
import { partsFate, RECORD_DROP_NOTES, recordFate, recordRulesOf, rowFate, type RecordDrop, type RecordLimits } from './fate';
import { generatedTurnsOf, type GeneratedTurnIds } from './generatedIds';
import type { Span, TextRecord } from './maskTypes';
import { addRecordCut, emptyTrainerCuts, SHORTEST_TRAINER_LENGTH } from '../trainers/trainers';
import { Counter, trainableInOf } from './traceCounter';
import { splitIfLong, splitLength } from './traceSplit';
import {
  longPolicyOf,
  type ConversationTrace,
  type RowTrace,
  type ReadConversation,
  type ReadingContext,
  type ReadTrace,
  type TraceContext,
  type TracedRecord,
  type TraceRowInput,
  type TraceSettings,
  type WorkCap,
} from './rowTraceTypes';
import { turnText } from './recordViewBudget';
import { turnsBeforeTemplate } from './turns';

/** An empty think block (only whitespace inside), as reasoning templates write it for a turn without reasoning. */
const EMPTY_THINK = /<think>\s*<\/think>/;

/**
 * Whether a span of `text` holds an empty think block ({@link EMPTY_THINK}); no slice nor regex scan of a span without
 * `<think>`. One pass over the text for ascending spans: the first `<think>` at or after a span's start is kept for the
 * spans before it (a record of grouping `merged` has a span per turn, most of them without one).
 */
function spansHaveEmptyThink(text: string, spans: readonly Span[]): boolean {
  // k: the first `<think>` at or after `from` (-1: none there).
  let from = -1;
  let k = -1;
  for (const [a, z] of spans) {
    if (from < 0 || a < from || (k >= 0 && k < a)) {
      k = text.indexOf('<think>', a);
      from = a;
    }
    if (k >= 0 && k < z && EMPTY_THINK.test(text.slice(k, z))) return true;
  }
  return false;
}

/**
 * The one row path as steps: it yields the texts it needs encoded (a conversation's record texts, and its whole render
 * when no record is it: once per conversation, never with a work cap) and is resumed with their encodings, in the
 * same order, as the tokenizer's `encode` gives them; it returns `T`.
 */
export type TraceSteps<T> = Generator<string[], T, EncodedText[]>;

/** Runs `steps` to its end, encoding each text it yields with `tok.encode` (synchronous). @throws what the steps throw */
export function runSteps<T>(steps: TraceSteps<T>, tok: Pick<TargetTokenizer, 'encode'>): T {
  let step = steps.next();
  while (!step.done) step = steps.next(step.value.map((t) => tok.encode(t)));
  return step.value;
}

/**
 * Traces one row of `file` (`fileBase`: its basename, for default ids; `normalize`: the file's reading options),
 * tokenizing with `ctx.tok.encode` ({@link traceRowSteps} driven by {@link runSteps}). With a {@link ReadingContext}
 * it stops after reading the row ({@link ReadTrace}: no tokenizer, no template; of `settings` only `mask` and
 * `reasoning`, for whether a conversation is a prompt to generate).
 * Never throws for data: a row that is not JSON is errored `invalid_json`.
 * @throws what `ctx.checkCancelled` throws; NoChatTemplateError with `ctx.rethrowNoTemplate`; a bug
 */
export function traceRow(row: TraceRowInput, file: string, fileBase: string, normalize: NormalizeOptions, settings: TraceSettings, ctx: TraceContext): RowTrace;
export function traceRow(
  row: TraceRowInput,
  file: string,
  fileBase: string,
  normalize: NormalizeOptions,
  settings: TraceSettings,
  ctx: ReadingContext,
): ReadTrace;
export function traceRow(
  row: TraceRowInput,
  file: string,
  fileBase: string,
  normalize: NormalizeOptions,
  settings: TraceSettings,
  ctx: TraceContext | ReadingContext,
): RowTrace | ReadTrace {
  return runSteps(rowSteps(row, file, fileBase, normalize, settings, ctx), ctx.until === 'conversations' ? NO_ENCODING : ctx.tok);
}

/** The tokenizer of a trace that stops after reading: that stage encodes nothing. */
const NO_ENCODING: Pick<TargetTokenizer, 'encode'> = {
  encode: () => {
    throw new Error('a trace that stops after reading the row encodes nothing');
  },
};

/** {@link traceRow} as steps ({@link TraceSteps}): the caller encodes the texts it yields. @throws as traceRow */
export function traceRowSteps(
  row: TraceRowInput,
  file: string,
  fileBase: string,
  normalize: NormalizeOptions,
  settings: TraceSettings,
  ctx: TraceContext,
): TraceSteps<RowTrace>;
export function traceRowSteps(
  row: TraceRowInput,
  file: string,
  fileBase: string,
  normalize: NormalizeOptions,
  settings: TraceSettings,
  ctx: ReadingContext,
): TraceSteps<ReadTrace>;
export function traceRowSteps(
  row: TraceRowInput,
  file: string,
  fileBase: string,
  normalize: NormalizeOptions,
  settings: TraceSettings,
  ctx: TraceContext | ReadingContext,
): TraceSteps<RowTrace | ReadTrace> {
  return rowSteps(row, file, fileBase, normalize, settings, ctx);
}

/** The one row path: the row read ({@link readRow}), then, unless the context stops there, each conversation traced and the row's fate. */
function* rowSteps(
  row: TraceRowInput,
  file: string,
  fileBase: string,
  normalize: NormalizeOptions,
  settings: TraceSettings,
  ctx: TraceContext | ReadingContext,
): TraceSteps<RowTrace | ReadTrace> {
  const read = readRow(row, file, fileBase, normalize, settings);
  if (ctx.until === 'conversations') return read;
  const { source, detailed } = read;
  if (read.fate.fate !== 'pending' && read.fate.fate !== 'setAside') return { source, ...(detailed ? { detailed } : {}), parts: [], fate: read.fate };
  const generated = generatedTurnsOf(row.value);
  const parts: ConversationTrace[] = [];
  for (const [k, p] of read.parts.entries()) {
    ctx.checkCancelled?.();
    parts.push(yield* traceConversation(p.conversation, p.kind, generated, settings, ctx, k === 0));
  }
  const decided = partsFate(
    parts.map((p) => p.fate),
    (f) => (f.fate === 'written' ? f.records : 0),
  )!;
  return { source, detailed, parts, fate: decided };
}

/**
 * The row's first stage: the row read (formats/normalize.ts), its conversations with their notes and whether each is a
 * prompt to generate under `settings` (`mask`, `reasoning`: records/turns.ts `turnsBeforeTemplate`, the decision
 * prepare's build takes), or its drop or error (`invalid_json` for a row that is not JSON; an `unknown_role` error
 * with its role and turn).
 */
function readRow(row: TraceRowInput, file: string, fileBase: string, normalize: NormalizeOptions, settings: TraceSettings): ReadTrace {
  const source = rowSourceOf(row, file);
  const stopped = 'conversations' as const;
  if (row.error !== undefined) return { stoppedAt: stopped, source, parts: [], fate: { fate: 'errored', code: 'invalid_json', message: row.error } };
  // Format detection's outcome for this very row when prepare handed it over (formats/normalizedAhead.ts), else normalized now.
  const detailed = normalizeOnce(row.value, source, fileBase, normalize);
  const { outcome } = detailed;
  if (outcome.kind === 'dropped')
    return { stoppedAt: stopped, source, detailed, parts: [], fate: { fate: 'dropped', reason: outcome.reason, message: outcome.message } };
  if (outcome.kind === 'errored') {
    const turn =
      outcome.code === 'unknown_role'
        ? { ...(outcome.role === undefined ? {} : { role: outcome.role }), ...(outcome.turn === undefined ? {} : { turn: outcome.turn }) }
        : {};
    const fate = { fate: 'errored' as const, ...(outcome.code === undefined ? {} : { code: outcome.code }), message: outcome.message, ...turn };
    return { stoppedAt: stopped, source, detailed, parts: [], fate };
  }
  const parts = conversationsOf(outcome).map((p) => readConversation(p, settings));
  // Every conversation a prompt to generate: set aside as it is read (traceConversation renders none of them).
  const fate = parts.length && parts.every((p) => p.kind === 'prompt') ? { fate: 'setAside' as const } : { fate: 'pending' as const };
  return { stoppedAt: stopped, source, detailed, parts, fate };
}

/** One conversation as read, with the turns of the prompt to generate when its trailing empty assistant turns leave no target (records/turns.ts `turnsBeforeTemplate`). */
function readConversation(p: Pick<ConversationTrace, 'kind' | 'conversation'>, settings: TraceSettings): ReadConversation {
  if (p.kind === 'prompt') return p;
  const pre = turnsBeforeTemplate(p.conversation.messages, settings.mask ?? 'assistant', settings.reasoning ?? 'keep');
  return pre.needsGeneration ? { ...p, toGenerate: { messages: pre.messages, notes: pre.notes } } : p;
}

/**
 * Traces one conversation: with a cap, its turns counted (the first conversation) → build → tokens and mask of each
 * record → `--long split` → each record's fate → the conversation's. Without a cap, its records' texts (and the whole
 * render when no record is it) are yielded once for their encodings; the pieces of `--long split` are encoded with
 * `ctx.tok.encode`.
 */
export function* traceConversation(
  conv: Conversation,
  kind: 'conversation' | 'prompt',
  generated: GeneratedTurnIds[] | undefined,
  settings: TraceSettings,
  ctx: TraceContext,
  first: boolean,
): TraceSteps<ConversationTrace> {
  const counter = new Counter(ctx, first, settings.mask ?? 'assistant');
  const t: ConversationTrace = {
    kind,
    conversation: conv,
    rendered: conv,
    records: [],
    notes: [],
    renderedTokens: 0,
    trainedTurns: new Set(),
    fate: { fate: 'setAside' },
  };
  if (ctx.cap && first) capTurns(t, ctx.cap, counter);
  if (kind === 'prompt') return t;
  const b = (ctx.build ?? ((c, s) => ctx.builder.build(c, s, { rethrowNoTemplate: ctx.rethrowNoTemplate })))(t.rendered, settings);
  t.build = b;
  if (b.kind === 'errored') {
    t.notes.push(...b.notes);
    t.fate = { fate: 'errored', code: b.code, message: b.message, ...(b.code === 'template_budget_exceeded' ? { reason: b.code } : {}) };
    return t;
  }
  const { built, template } = b;
  t.notes.push(...built.notes);
  if (built.prompt) {
    // A trailing generation placeholder and no target left: the row is a prompt to generate (docs/loss-mask-rules.md "Empty turns").
    t.prompt = built.prompt;
    return t;
  }
  for (const te of built.targetErrors) t.notes.push(te.reason);
  if (ctx.cap?.exactRecord !== undefined) counter.exactIndex = Math.min(Math.max(0, ctx.cap.exactRecord), built.records.length - 1);
  // Without a cap (prepare): the records' texts, and the whole render when no record is it, encoded in one step.
  let renderedEnc: EncodedText | undefined;
  if (!ctx.cap && built.records.length) {
    const texts = built.records.map((rec) => rec.text);
    const renderedApart = built.rendered !== null && !texts.includes(built.rendered);
    if (renderedApart) texts.push(built.rendered!);
    const encs = yield texts;
    counter.given = encs.slice(0, built.records.length);
    if (renderedApart) renderedEnc = encs[texts.length - 1];
  }
  const pieces = built.records.map((rec, r) => {
    ctx.checkCancelled?.();
    return counter.record(rec, generated, t.notes, t, r);
  });
  // The rendered conversation's tokens: prepare reports them; the views need them only for `--long split`.
  if (!ctx.cap || splitLength(settings, pieces) !== undefined) t.renderedTokens = renderedTokensOf(built.rendered, built.records, pieces, counter, renderedEnc);
  const drops: RecordDrop[] = [];
  let tooLongWhy: string | undefined;
  t.records = splitIfLong(t, template, pieces, generated, settings, ctx, counter, drops, (why) => (tooLongWhy = why));
  if (t.records.length > 1) t.notes.push('split_into_records');
  const recordTooLong = decideRecords(t, settings, drops);
  tooLongWhy ??= recordTooLong;
  const row = rowFate({ written: t.records.filter((r) => r.fate.written).length, drops, targetErrors: built.targetErrors });
  if (row.fate === 'written') {
    t.fate = { fate: 'written', records: t.records.filter((r) => r.fate.written).length };
    // A turn without reasoning trained with the empty think block the template writes for it (checkTemplate's finding, per row).
    if (built.records.some((rec) => spansHaveEmptyThink(rec.text, rec.spans))) t.notes.push('empty_think_trained');
  } else if (row.fate === 'errored') {
    const message = `${row.targetError.reason}: ${row.targetError.message}; template "${template.named.name}" of ${ctx.tok.dir}`;
    t.fate = { fate: 'errored', code: row.targetError.reason as Code, message };
  } else t.fate = { fate: 'dropped', reason: row.reason, ...(row.reason === 'too_long' && tooLongWhy ? { message: tooLongWhy } : {}) };
  return t;
}

/**
 * The tokens of `built.rendered`: the record that is that text, else the text encoded (`given`: its encoding, when
 * the steps had it encoded; 0 when there is no record).
 */
function renderedTokensOf(
  rendered: string | null,
  records: readonly TextRecord[],
  pieces: readonly TracedRecord[],
  counter: Counter,
  given?: EncodedText,
): number {
  let n = 0;
  records.forEach((rec, r) => {
    if (rec.text === rendered) n = pieces[r].tokens;
  });
  if (rendered !== null && n === 0 && pieces.length) n = given ? given.ids.length : counter.count(rendered);
  return n;
}

/**
 * Work cap, first conversation: shortens its turns before rendering when the row is over 4 × the cap (the template's
 * structure, hence the records, does not depend on text length), then counts each turn's text.
 */
function capTurns(t: ConversationTrace, cap: WorkCap, counter: Counter): void {
  const conv = t.conversation;
  if (cap.shorten) {
    const keep = Math.max(256, Math.floor(cap.chars / Math.max(1, conv.messages.length)));
    const removed = conv.messages.map(() => 0);
    const cut = (s: string | undefined, i: number): string | undefined => {
      if (s === undefined || s.length <= keep) return s;
      removed[i] += s.length - keep;
      return s.slice(0, keep);
    };
    t.rendered = {
      ...conv,
      messages: conv.messages.map((m, i) => {
        const c: Message = { ...m, content: m.content === null ? null : cut(m.content, i)! };
        if (m.reasoning_content !== undefined) c.reasoning_content = cut(m.reasoning_content, i);
        return c;
      }),
    };
    t.removed = removed;
  }
  t.turns = conv.messages.map((m) => {
    const text = turnText(m);
    return { chars: text.length, ...counter.turn(text) };
  });
}

/**
 * Decides each record's fate (records/fate.ts) and, for the written ones, the turns they train and what each trainer's
 * default length cuts of them; the drop reasons go to `drops`, the notes to the trace.
 * @returns why the row is too long when a record was dropped so (by how much)
 */
function decideRecords(t: ConversationTrace, settings: TraceSettings, drops: RecordDrop[]): string | undefined {
  const max = settings.format === 'messages' ? undefined : settings.maxLength;
  const long = longPolicyOf(settings);
  // Every record rule of the settings (records/fate.ts), with the length limit as the policy has it.
  const limits: RecordLimits = { ...recordRulesOf(settings), maxLength: max, truncate: long === 'truncate' };
  let tooLong: string | undefined;
  for (const r of t.records) {
    const trainableIn = trainableInOf(r.mask, r.tokens, r.trainable);
    r.fate = recordFate(r.tokens, trainableIn, r.splitUp ? { ...limits, maxLength: undefined } : limits);
    if (r.fate.truncated) t.notes.push('record_truncated');
    if (!r.fate.written) {
      drops.push(r.fate.reason);
      if (r.fate.reason === 'too_long') tooLong ??= recordsTooLongMessage(t.records, max!);
      t.notes.push(RECORD_DROP_NOTES[r.fate.reason]);
      continue;
    }
    // What each trainer's default length does to the record (core/trainers/trainers.ts); noted when no --trainer chose the length
    // and the record is written (--format messages writes conversations, checked whole where they are written).
    const mask = r.fate.truncated ? r.mask.slice(0, r.fate.keep) : r.mask;
    if (
      !r.estimated &&
      r.fate.keep > SHORTEST_TRAINER_LENGTH &&
      addRecordCut((t.trainerCuts ??= emptyTrainerCuts()), mask) &&
      !settings.trainer &&
      settings.format !== 'messages'
    )
      t.notes.push('trainer_length_cut');
    for (const k of r.targets) t.trainedTurns.add(k);
  }
  return tooLong;
}

/**
 * The problems.jsonl message of a row dropped `too_long` (no `--long split`): its longest record's tokens and how many
 * over `max` (the row's records are all longer, or the others had nothing to train).
 */
function recordsTooLongMessage(records: readonly TracedRecord[], max: number): string {
  const longest = Math.max(...records.filter((p) => p.tokens > max).map((p) => p.tokens));
  const what = records.length > 1 ? `its longest record has ${longest} tokens` : `its record has ${longest} tokens`;
  return `${what}, ${longest - max} over --max-length ${max}`;
}
