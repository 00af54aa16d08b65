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
 */
import type { Code } from '../codes';
import { conversationsOf, normalizeDetailed, type DetailedOutcome } from '../formats/normalize';
import type { NormalizeOptions } from '../formats/base';
import type { ChatTemplate } from '../templates/template';
import type { TargetTokenizer } from '../tokenizers/tokenizer';
import { addRecordCut, emptyTrainerCuts, SHORTEST_TRAINER_LENGTH, type TrainerCuts } from '../trainers/trainers';
import type { Conversation, MaskPolicy, Message } from '../types';
import { partsFate, RECORD_DROP_NOTES, recordFate, rowFate, type RecordDrop, type RecordFate, type RecordLimits } from './fate';
import { applyGeneratedIds, generatedTurnsOf, type GeneratedTurnIds } from './generatedIds';
import { buildRecords, maskFromSpans, type TextRecord } from './mask';
import type { BuildOutcome, BuildSettings, RecordBuilder } from './recordBuilder';
import type { EncodingCache } from './recordViewBudget';
import { TokenBudget, trainableChars, turnText } from './recordViewBudget';
import type { LongPolicy, RowSettings } from './rowResult';
import { splitConversation } from './split';

/** An empty think block (only whitespace inside), as reasoning templates write it for a turn without reasoning. */
const EMPTY_THINK = /<think>\s*<\/think>/;

/** The long-record policy of settings: `long`, else `truncate` when the legacy flag is set, else `drop`. */
export function longPolicyOf(s: Pick<RowSettings, 'long' | 'truncate'>): LongPolicy {
  return s.long ?? (s.truncate ? 'truncate' : 'drop');
}

/** The settings a trace follows: prepare's row settings (the tokenizer folder and `dedup` are the caller's). */
export type TraceSettings = Omit<RowSettings, 'tokenizerDir' | 'dedup'>;

/**
 * The work cap of the hover and the mask view: at most `chars` characters tokenized per conversation (the
 * conversation shown first counts its turns' texts, then its records); past them counts are estimated.
 */
export interface WorkCap {
  /** Characters tokenized per conversation at most. */
  chars: number;
  /** Encodings of recent texts; it only saves work (a text counts the same with or without it). */
  encodings: EncodingCache;
  /** The row's text is over 4 × `chars`: the first conversation's turns are shortened before rendering, the removed characters counted back at each turn's rate. */
  shorten: boolean;
  /** A record of the first conversation tokenized whole whatever the cap (the mask view's record in detail; clamped to the last). */
  exactRecord?: number;
}

/** What a trace needs besides the settings. */
export interface TraceContext {
  tok: TargetTokenizer;
  builder: RecordBuilder;
  /** Builds a conversation's records; default `builder.build` (the record view passes its cache). */
  build?: (conv: Conversation, settings: BuildSettings) => BuildOutcome;
  /** The record view: rethrow `NoChatTemplateError` instead of erroring the row. */
  rethrowNoTemplate?: boolean;
  /** Undefined: every text tokenized whole (prepare). */
  cap?: WorkCap;
  /** Called between steps; throw from it to abandon the work (a cancelled hover). */
  checkCancelled?: () => void;
}

/** One record of a conversation, tokenized, with its fate. */
export interface TracedRecord {
  /** The record's text, trainable spans and targets (for a piece of `--long split`: of the piece's messages). */
  text: TextRecord;
  /** For a piece of `--long split`: the piece's conversation, the messages the template got, and the index in the conversation of each. */
  piece?: { conversation: Conversation; messages: readonly Message[]; indices: number[] };
  /** Token ids (the head's, when `estimated`), their UTF-16 starts in `text.text`, and the loss mask. */
  ids: number[];
  starts: number[];
  mask: number[];
  /** The record's tokens and trainable tokens (counted past the cap when `estimated`). */
  tokens: number;
  trainable: number;
  estimated: boolean;
  /** Message indices of the targets trained (of the conversation, for a piece too). */
  targets: number[];
  /** Rows written by `generate`: whether the record carries the generated ids. */
  idsSource?: 'generated' | 'retokenized';
  /** Its fate under the settings (records/fate.ts). */
  fate: RecordFate;
  /** `--long split` applies to the record but the trace did not split it (past the work cap): prepare does. */
  splitUp?: boolean;
}

/** A conversation's fate: written with `records` records, set aside as a prompt to generate, dropped or errored. */
export type ConversationFate =
  | { fate: 'written'; records: number }
  | { fate: 'setAside' }
  | { fate: 'dropped'; reason: RecordDrop; message?: string }
  | { fate: 'errored'; code: Code; message: string; reason?: Code };

/** One conversation of a row, traced. */
export interface ConversationTrace {
  /** `prompt`: the normalizer found nothing to answer (set aside without rendering). */
  kind: 'conversation' | 'prompt';
  conversation: Conversation;
  /** What was rendered: the conversation, or with its turns shortened (work cap). */
  rendered: Conversation;
  /** Characters removed from each turn before rendering (work cap, `shorten`). */
  removed?: number[];
  /** Each turn's text counted (work cap, the first conversation only). */
  turns?: { chars: number; tokens: number; estimated: boolean }[];
  /** The records built (or the build's error); undefined for a `prompt`. */
  build?: BuildOutcome;
  /** The records, in order (after `--long split`, its pieces in place of the records it cut). */
  records: TracedRecord[];
  /** Notes, in prepare's order, one entry per occurrence. */
  notes: Code[];
  /** Tokens of the conversation rendered once (`built.rendered`), when it has records (with a work cap, only when `--long split` needs them). */
  renderedTokens: number;
  /** What each trainer's default length cuts of the written records. */
  trainerCuts?: TrainerCuts;
  /** The message indices the written records train. */
  trainedTurns: Set<number>;
  /** A trailing generation placeholder and no target left: the messages of the prompt to generate. */
  prompt?: Message[];
  fate: ConversationFate;
}

/** A row's fate: its conversations' together (records/fate.ts `partsFate`), or the row's own error or drop. */
export type TracedRowFate =
  | { fate: 'written'; records: number }
  | { fate: 'setAside' }
  | { fate: 'dropped'; reason: string; message?: string }
  | { fate: 'errored'; code?: string; message: string; reason?: string; turn?: number };

/** One row, traced. */
export interface RowTrace {
  /** The normalizer's reading (shape handler, the object read); undefined for a row that is not JSON. */
  detailed?: DetailedOutcome;
  /** The row's conversations in order (none for a dropped or errored row). */
  parts: ConversationTrace[];
  fate: TracedRowFate;
}

/** A row as the readers give it: its value, or why it is not JSON. */
export interface TraceRowInput {
  line: number;
  element?: number;
  value?: unknown;
  error?: string;
}

/**
 * Traces one row of `file` (`fileBase`: its basename, for default ids; `normalize`: the file's reading options).
 * Never throws for data: a row that is not JSON is errored `invalid_json`.
 * @throws what `ctx.checkCancelled` throws; NoChatTemplateError with `ctx.rethrowNoTemplate`; a bug
 */
export function traceRow(
  row: TraceRowInput,
  file: string,
  fileBase: string,
  normalize: NormalizeOptions,
  settings: TraceSettings,
  ctx: TraceContext,
): RowTrace {
  if (row.error !== undefined) return { parts: [], fate: { fate: 'errored', code: 'invalid_json', message: row.error } };
  const source = row.element === undefined ? { file, line: row.line } : { file, line: row.line, element: row.element };
  const detailed = normalizeDetailed(row.value, source, fileBase, normalize);
  const { outcome } = detailed;
  if (outcome.kind === 'dropped') return { detailed, parts: [], fate: { fate: 'dropped', reason: outcome.reason, message: outcome.message } };
  if (outcome.kind === 'errored') {
    const turn = outcome.code === 'unknown_role' && outcome.turn !== undefined ? { turn: outcome.turn } : {};
    return { detailed, parts: [], fate: { fate: 'errored', ...(outcome.code === undefined ? {} : { code: outcome.code }), message: outcome.message, ...turn } };
  }
  const generated = generatedTurnsOf(row.value);
  const parts = conversationsOf(outcome).map((p, k) => {
    ctx.checkCancelled?.();
    return traceConversation(p.conversation, p.kind, generated, settings, ctx, k === 0);
  });
  const decided = partsFate(
    parts.map((p) => p.fate),
    (f) => (f.fate === 'written' ? f.records : 0),
  )!;
  return { detailed, parts, fate: decided };
}

/**
 * Traces one conversation: with a cap, its turns counted (the first conversation) → build → tokens and mask of each
 * record → `--long split` → each record's fate → the conversation's.
 */
export function traceConversation(
  conv: Conversation,
  kind: 'conversation' | 'prompt',
  generated: GeneratedTurnIds[] | undefined,
  settings: TraceSettings,
  ctx: TraceContext,
  first: boolean,
): ConversationTrace {
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
  const pieces = built.records.map((rec, r) => {
    ctx.checkCancelled?.();
    return counter.record(rec, generated, t.notes, t, r);
  });
  // The rendered conversation's tokens: prepare reports them; the views need them only for `--long split`.
  if (!ctx.cap || splitLength(settings, pieces) !== undefined) t.renderedTokens = renderedTokensOf(built.rendered, built.records, pieces, counter);
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
    if (built.records.some((rec) => rec.spans.some(([a, z]) => EMPTY_THINK.test(rec.text.slice(a, z))))) t.notes.push('empty_think_trained');
  } else if (row.fate === 'errored') {
    const message = `${row.targetError.reason}: ${row.targetError.message}; template "${template.named.name}" of ${ctx.tok.dir}`;
    t.fate = { fate: 'errored', code: row.targetError.reason as Code, message };
  } else t.fate = { fate: 'dropped', reason: row.reason, ...(row.reason === 'too_long' && tooLongWhy ? { message: tooLongWhy } : {}) };
  return t;
}

/** The tokens of `built.rendered`: the record that is that text, else the text encoded (0 when there is no record). */
function renderedTokensOf(rendered: string | null, records: readonly TextRecord[], pieces: readonly TracedRecord[], counter: Counter): number {
  let n = 0;
  records.forEach((rec, r) => {
    if (rec.text === rendered) n = pieces[r].tokens;
  });
  if (rendered !== null && n === 0 && pieces.length) n = counter.count(rendered);
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
 * `--long split` (records/split.ts) when a record is over `maxLength` (not with mask `non-system`, nor `--format
 * messages`): records that fit stay; the targets of the others are placed in pieces of at most `maxLength` tokens,
 * each noted `context_window_cut` when messages were left out; targets that fit nowhere are noted `target_too_long`
 * (and the row is `too_long` when nothing fits). Past the work cap the records over the length are marked `splitUp`.
 * @returns every record, ordered by its first target
 */
function splitIfLong(
  t: ConversationTrace,
  template: ChatTemplate,
  records: TracedRecord[],
  generated: GeneratedTurnIds[] | undefined,
  settings: TraceSettings,
  ctx: TraceContext,
  counter: Counter,
  drops: RecordDrop[],
  tooLong: (why: string) => void,
): TracedRecord[] {
  const max = splitLength(settings, records);
  if (max === undefined) return records;
  const mask = settings.mask ?? 'assistant';
  const conv = t.conversation;
  const pieceCounter = counter.forPieces();
  // Each built piece record by its loss mask (an array made for it alone; its ids may be a cached encoding's, shared by equal texts).
  const pieceOf = new Map<number[], { text: TextRecord; starts: number[]; piece: NonNullable<TracedRecord['piece']> }>();
  const build = (piece: Conversation) => {
    if (pieceCounter.overCap) return [];
    const b = buildRecords(piece, template, ctx.builder.specials, mask, {
      grouping: settings.grouping ?? 'exact',
      reasoning: settings.reasoning,
      stopTokens: ctx.tok.stopTokens,
    });
    const indices = pieceIndices(conv, piece);
    return b.records.map((rec) => {
      const r = pieceCounter.record(rec, generated && remapGenerated(generated, conv, piece), []);
      pieceOf.set(r.mask, { text: rec, starts: r.starts, piece: { conversation: piece, messages: b.messages, indices } });
      return { ids: r.ids, mask: r.mask, targets: r.targets };
    });
  };
  const over = records.filter((r) => r.tokens > max);
  const cut = splitConversation(
    conv,
    over.flatMap((r) => r.targets),
    max,
    build,
    (t.build as { built: { rendered: string | null } }).built.rendered?.length ?? 0,
    t.renderedTokens,
  );
  if (pieceCounter.overCap) {
    for (const r of over) r.splitUp = true;
    return records;
  }
  for (let k = 0; k < cut.tooLong.length; k++) t.notes.push('target_too_long');
  for (const p of cut.records) if (p.cut) t.notes.push('context_window_cut');
  const placed = cut.records.map((p): TracedRecord => {
    const { text, starts, piece } = pieceOf.get(p.mask)!;
    return {
      text,
      piece,
      ids: p.ids,
      starts,
      mask: p.mask,
      tokens: p.ids.length,
      trainable: sum(p.mask),
      estimated: false,
      targets: p.targets,
      fate: NOT_DECIDED,
    };
  });
  if (placed.length === 0 && records.every((r) => r.tokens > max)) {
    drops.push('too_long');
    tooLong(splitTooLongMessage(cut.tooLong, cut.tooLongTokens, max));
  }
  return [...records.filter((r) => r.tokens <= max), ...placed].sort((a, b) => a.targets[0] - b.targets[0]);
}

/** The max length when `--long split` applies to a conversation's records (one is longer; not with mask `non-system` nor `--format messages`). */
function splitLength(settings: TraceSettings, records: readonly TracedRecord[]): number | undefined {
  const max = settings.format === 'messages' ? undefined : settings.maxLength;
  if (max === undefined || longPolicyOf(settings) !== 'split' || (settings.mask ?? 'assistant') === 'non-system') return undefined;
  return records.some((p) => p.tokens > max) ? max : undefined;
}

/** A record's fate before {@link decideRecords}. */
const NOT_DECIDED: RecordFate = { written: false, reason: 'too_long', truncated: false };

/**
 * Decides each record's fate (records/fate.ts) and, for the written ones, the turns they train and what each trainer's
 * default length cuts of them; the drop reasons go to `drops`, the notes to the trace.
 * @returns why the row is too long when a record was dropped so (by how much)
 */
function decideRecords(t: ConversationTrace, settings: TraceSettings, drops: RecordDrop[]): string | undefined {
  const max = settings.format === 'messages' ? undefined : settings.maxLength;
  const long = longPolicyOf(settings);
  const limits: RecordLimits = { maxLength: max, truncate: long === 'truncate', minTrainableTokens: settings.minTrainableTokens };
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
 * Tokenizes for one conversation: exactly (prepare), or through the work cap's shared budget (the first conversation
 * counts its turns first; a record in detail is tokenized whole whatever the cap).
 */
class Counter {
  private readonly budget?: TokenBudget;
  /** A piece of `--long split` could not be tokenized whole within the cap. */
  overCap = false;
  /** The record tokenized whole whatever the cap (the first conversation's record in detail, clamped). */
  exactIndex?: number;

  constructor(
    private readonly ctx: TraceContext,
    private readonly first: boolean,
    private readonly mask: MaskPolicy,
    budget?: TokenBudget,
    private readonly pieces = false,
  ) {
    this.budget = budget ?? (ctx.cap ? new TokenBudget(ctx.cap.chars, ctx.tok, ctx.cap.encodings) : undefined);
  }

  /** A counter for the pieces of `--long split`: the same budget; a piece it cannot tokenize whole sets {@link overCap}. */
  forPieces(): Counter {
    return new Counter(this.ctx, false, this.mask, this.budget, true);
  }

  /** A turn's text counted (work cap). */
  turn(text: string): { tokens: number; estimated: boolean } {
    return this.budget!.count(text);
  }

  /** The tokens of a text, counted within the cap. */
  count(text: string): number {
    return this.budget ? this.budget.count(text).tokens : this.ctx.tok.encode(text).ids.length;
  }

  /**
   * Tokenizes one text record and masks it; a row written by `generate` gets the generated token ids
   * (records/generatedIds.ts) when the record is tokenized whole. Notes `offsets_approximate` and the ids' source.
   */
  record(rec: TextRecord, generated: GeneratedTurnIds[] | undefined, notes: Code[], t?: ConversationTrace, index?: number): TracedRecord {
    const enc = this.encode(rec.text, index);
    if (enc.exactOffsets === false) notes.push('offsets_approximate');
    const mask = maskFromSpans(enc.starts, rec.spans);
    const whole = enc.cut >= rec.text.length;
    if (!whole && this.pieces) this.overCap = true;
    const out: TracedRecord = {
      text: rec,
      ids: enc.ids,
      starts: enc.starts,
      mask,
      ...countOf(rec, enc, mask, this.rate()),
      targets: rec.targets,
      fate: NOT_DECIDED,
    };
    if (t?.removed) shortenedCounts(out, t, this.mask, this.rate());
    else if (generated && whole) {
      const g = applyGeneratedIds(rec, { ids: enc.ids, starts: enc.starts, exactOffsets: true }, mask, generated, (x) => this.ctx.tok.decode(x), !!this.budget);
      notes.push(g.source === 'generated' ? 'generated_token_ids_used' : `retokenized_${g.reason}`);
      Object.assign(out, { ids: g.ids, mask: g.mask, idsSource: g.source, tokens: g.ids.length, trainable: sum(g.mask) });
      if (g.source === 'generated') out.starts = g.starts ?? [];
    }
    return out;
  }

  private encode(text: string, index: number | undefined): { ids: number[]; starts: number[]; cut: number; restRate?: number; exactOffsets?: boolean } {
    const cap = this.ctx.cap;
    if (!this.budget || !cap) {
      const e = this.ctx.tok.encode(text);
      return { ids: e.ids, starts: e.starts, cut: text.length, exactOffsets: e.exactOffsets };
    }
    if (this.first && index !== undefined && index === this.exactIndex) {
      let e = cap.encodings.get(text);
      if (!e) {
        const enc = this.ctx.tok.encode(text);
        e = { ids: enc.ids, starts: enc.starts };
        cap.encodings.set(text, e);
      }
      return { ...e, cut: text.length };
    }
    return this.budget.encode(text);
  }

  /** Tokens per character of what was tokenized so far. */
  rate(): number {
    return this.budget ? this.budget.rate() : 0.3;
  }
}

/**
 * A record's tokens and trainable tokens from its encoding, extrapolated past the part the work cap tokenized
 * (`estimated`): the last sampled token may be cut, so the rest is counted from its start at the record's sampled rate.
 */
function countOf(
  rec: TextRecord,
  enc: { ids: number[]; starts: number[]; cut: number; restRate?: number },
  m: readonly number[],
  fallbackRate: number,
): { tokens: number; trainable: number; estimated: boolean } {
  let tokens = enc.ids.length;
  let trainable = sum(m);
  if (enc.cut >= rec.text.length) return { tokens, trainable, estimated: false };
  const from = enc.starts.length ? enc.starts[enc.starts.length - 1] : 0;
  tokens -= 1;
  trainable -= m.length ? m[m.length - 1] : 0;
  const rate = enc.restRate ?? fallbackRate; // the record's own sampled rate (tokenEstimate.ts)
  tokens += Math.round((rec.text.length - from) * rate);
  trainable += Math.round(trainableChars(rec.spans, from, rec.text.length) * rate);
  return { tokens, trainable, estimated: true };
}

/** Work cap, shortened turns: the characters removed before rendering counted back in, each turn's at that turn's own rate. */
function shortenedCounts(r: TracedRecord, t: ConversationTrace, mask: MaskPolicy, fallbackRate: number): void {
  const removed = t.removed!;
  const turns = t.turns!;
  const lastMsg = Math.max(...r.targets, 0);
  const rate = (i: number) => (turns[i]?.chars ? turns[i].tokens / turns[i].chars : fallbackRate);
  for (let i = 0; i <= lastMsg && i < removed.length; i++) r.tokens += Math.round(removed[i] * rate(i));
  for (const k of r.targets) r.trainable += Math.round(removed[k] * rate(k));
  if (mask === 'non-system')
    for (let i = 0; i < removed.length; i++)
      if (t.conversation.messages[i].role !== 'system' && !r.targets.includes(i)) r.trainable += Math.round(removed[i] * rate(i));
  r.estimated = true;
}

/** The trainable tokens among a record's first `n` tokens: from the mask where it was tokenized, in proportion past that. */
export function trainableInOf(m: readonly number[], tokens: number, trainable: number): (n: number) => number {
  return (n) => {
    if (n >= tokens) return trainable;
    if (n > m.length) return Math.round((trainable * n) / tokens);
    let s = 0;
    for (let i = 0; i < n; i++) s += m[i];
    return s;
  };
}

function sum(a: readonly number[]): number {
  let s = 0;
  for (const x of a) s += x;
  return s;
}

/** The index in `conv` of each message of a piece of it: the head as it is, then a window ending at a target kept as it is. */
function pieceIndices(conv: Conversation, piece: Conversation): number[] {
  const n = piece.messages.length;
  const e = conv.messages.indexOf(piece.messages[n - 1]);
  let h = 0;
  while (h < n && piece.messages[h] === conv.messages[h] && h < e - (n - 1 - h)) h++;
  return piece.messages.map((_, k) => (k < h ? k : e - (n - 1 - k)));
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
 * The problems.jsonl message of a row dropped `too_long` (no `--long split`): its longest record's tokens and how many
 * over `max` (the row's records are all longer, or the others had nothing to train).
 */
function recordsTooLongMessage(records: readonly TracedRecord[], max: number): string {
  const longest = Math.max(...records.filter((p) => p.tokens > max).map((p) => p.tokens));
  const what = records.length > 1 ? `its longest record has ${longest} tokens` : `its record has ${longest} tokens`;
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
