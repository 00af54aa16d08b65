/** The one row path's data (records/rowTrace.ts): its settings (and the long-record policy of them), its work cap, and the trace of a row, its conversations and records. */
import type { Code } from '../codes';
import type { DetailedOutcome } from '../formats/normalize';
import type { TargetTokenizer } from '../tokenizers/types';
import type { TrainerCuts } from '../trainers/trainers';
import type { Conversation, Message, Source } from '../types';
import type { RecordDrop, RecordFate } from './fate';
import type { TextRecord } from './maskTypes';
import type { BuildOutcome, BuildSettings, RecordBuilder } from './recordBuilder';
import type { EncodingCache } from './recordViewBudget';
import type { LongPolicy, RowSettings } from './rowResult';

/** The long-record policy of settings: `long`, else `truncate` when the legacy flag is set, else `drop`. */
export function longPolicyOf(s: Pick<RowSettings, 'long' | 'truncate'>): LongPolicy {
  return s.long ?? (s.truncate ? 'truncate' : 'drop');
}
/** A record's fate before the trace decides it (records/rowTrace.ts `decideRecords`). */
export const NOT_DECIDED: RecordFate = { written: false, reason: 'too_long', truncated: false };

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

/**
 * The stages of the one row path (records/rowTrace.ts), in order: `conversations` (the row read: the shape that read
 * it, its drop or error, its conversations with the notes and unread fields of reading them; no tokenizer, no
 * template), then `fate` (all of it: records, tokens and loss mask, `--long split`, each record's and the row's fate).
 */
export type TraceStage = 'conversations' | 'fate';

/**
 * What a trace that stops after reading the row needs (`inspect`, the Problems scan, prepare's first look): nothing
 * of the tokenizer. `until` names the last stage run.
 */
export interface ReadingContext {
  until: 'conversations';
}

/** What a trace needs besides the settings. */
export interface TraceContext {
  /** The last stage run; default (and the only other stage) `fate`. A trace that stops earlier takes a {@link ReadingContext}. */
  until?: 'fate';
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
  /** `role` (as the source spells it) and `turn` (0-based): an `unknown_role` error's turn. */
  | { fate: 'errored'; code?: string; message: string; reason?: string; role?: string; turn?: number };

/** One row, traced. */
export interface RowTrace {
  /** Where the row is: its file, line and (several rows on one line) element. */
  source: Source;
  /** The normalizer's reading (shape handler, the object read); undefined for a row that is not JSON. */
  detailed?: DetailedOutcome;
  /** The row's conversations in order (none for a dropped or errored row). */
  parts: ConversationTrace[];
  fate: TracedRowFate;
}

/**
 * A row traced through its `conversations` stage ({@link ReadingContext}): the same reading, notes and errors as the
 * row's whole {@link RowTrace} has (its `parts` are the same conversations, before any record). `fate` is the row's
 * when reading decides it (not JSON, dropped or errored by the normalizer; set aside when every conversation is a
 * prompt to generate as read), else `pending`: its records decide it. Whether a conversation that came with an
 * assistant turn is a prompt to generate is decided here too (`toGenerate`), by prepare's rule under the trace's
 * `mask` and `reasoning` settings; such a row stays `pending`, since the build may still error it (its template).
 */
export interface ReadTrace {
  stoppedAt: 'conversations';
  source: Source;
  detailed?: DetailedOutcome;
  parts: ReadConversation[];
  fate: Exclude<TracedRowFate, { fate: 'written' }> | { fate: 'pending' };
}

/**
 * One conversation of a {@link ReadTrace}: as read, and whether it is a prompt to generate under the trace's mask
 * policy and reasoning (records/turns.ts `turnsBeforeTemplate`, the rule `prepare`'s build applies).
 */
export interface ReadConversation extends Pick<ConversationTrace, 'kind' | 'conversation'> {
  /**
   * A `conversation` whose trailing empty assistant turns leave no target: the turns `prepare` sets aside as the
   * prompt (before the template) and the notes of removing them. Undefined for a `prompt` (it is one as read) and
   * for a conversation with a target.
   */
  toGenerate?: { messages: Message[]; notes: Code[] };
}

/** A row as the readers give it: its value, or why it is not JSON. */
export interface TraceRowInput {
  line: number;
  element?: number;
  value?: unknown;
  error?: string;
}
