/**
 * The shapes every normalizer module shares: the row and handler types, the
 * per-row context (notes, facts, read fields), the key tables, and small
 * helpers (JSON types, drops and errors, JSON strings inside fields).
 */
import type { Code } from '../codes';
import type { AnswerMode, DropReason, ErrorCode, Message, RowOutcome, Source } from '../types';
import type { FieldTracker } from './fields';
import { parseJsonLimited } from '../jsonDepth';

/** A row that is a JSON object. */
export type Row = Record<string, unknown>;

/** Reading options that change how a row is normalized (`eagle3prep.jsonc` "reading", `read/projectConfig.ts`). */
export interface NormalizeOptions {
  /**
   * A row whose conversation was found as a list of conversation lists (no known shape matched):
   * `each` (default) makes one record of each list, `longest` keeps the longest list only.
   */
  conversationLists?: 'each' | 'longest';
  /**
   * Several answers to one prompt (`shapes-answers.ts`): `best` trains the preferred / best-scored one (default when
   * the row has a preference or scores), `all` makes one record of each (default otherwise), `first` trains the first.
   */
  answers?: AnswerMode;
}

/** Collects the notes (codes, stored on the conversation) and facts (human-readable, used as detection evidence) of one row. */
export interface NormalizeContext {
  readonly source: Source;
  readonly fileBase: string;
  readonly options: NormalizeOptions;
  /** Which fields of the row and its turns were read (`fields.ts`): the rest is reported as unread. */
  readonly fields: FieldTracker;
  /** Record a note code on the conversation, and optionally a human-readable fact for detection evidence. */
  note(code: Code, fact?: string): void;
  /** Record a human-readable fact (evidence only, no note on the conversation). */
  fact(text: string): void;
  /** Non-text content parts met while converting turns; `message` is filled in by `finish` (index into the final messages). */
  readonly nonText: { message: Message | undefined; type: string }[];
  /** The message being built (set by `toMessages`), for {@link NormalizeContext.nonText}. */
  current?: Message;
  /** Tool definitions found inside turns (LLaMA-Factory `tools` content parts), added to the row's tools by `finish`. */
  partTools?: unknown[];
  /** The structured facts of the last turn error made (`unknown_role`: the role as written and its turn), carried onto the row's `errored` outcome. */
  turnError?: TurnErrorDetail & { code: ErrorCode };
}

/** One recognized row shape. */
export interface ShapeHandler {
  /** Format id reported by detection, e.g. `openai-messages`. */
  readonly name: string;
  /** Whether this handler owns the row. Cheap: looks at keys and the first turns only. */
  matches(row: Row): boolean;
  /** The row's shape as an evidence phrase, e.g. `"conversations": list of {from, value}`. */
  describe(row: Row): string;
  /** Role spellings as the source writes them (`human`, `gpt`, …), in order of appearance; empty when the shape has no turns. */
  roles(row: Row): string[];
  /** Convert the row. Never throws for bad data: returns `errored` / `dropped`. */
  normalize(row: Row, ctx: NormalizeContext): RowOutcome;
}

// ------------------------------------------------------------------ tables

/** Fields that carry the row's own id, in priority order. */
export const ID_KEYS = [
  'id',
  'instance_id',
  'conversation_id',
  'uuid',
  'sample_id',
  'example_id',
  'task_id',
  'trajectory_id',
  'session_id',
  'question_id',
  'message_tree_id',
  'prompt_id',
  'custom_id',
  'idx',
  '_id',
];

/** Keys naming a turn's speaker, in priority order. */
export const ROLE_KEYS = ['role', 'from'];
/** Keys holding a turn's text, in priority order (`parts`: Gemini `contents`; `message`: Cohere `chat_history`). */
export const TEXT_KEYS = ['content', 'value', 'text', 'parts', 'message'];
/** Keys holding a turn's reasoning, in priority order. */

// ------------------------------------------------------------------ small helpers
export function isObject(v: unknown): v is Row {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

/** `a JSON number`, `a JSON list`, `null`, … for messages. */
export function describeJsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a JSON list';
  if (typeof v === 'object') return 'a JSON object';
  if (typeof v === 'string') return 'a JSON string';
  if (typeof v === 'number') return 'a JSON number';
  if (typeof v === 'boolean') return 'a JSON boolean';
  return typeof v;
}

export function drop(source: Source, reason: DropReason, message: string): RowOutcome {
  return { kind: 'dropped', source, reason, message };
}

/**
 * A row that could not be normalized. When the error comes from a turn whose facts were recorded
 * ({@link NormalizeContext.turnError}, same code), they go with it, so readers never parse them back out of the message.
 */
export function errored(ctx: NormalizeContext, code: ErrorCode, message: string): RowOutcome {
  const t = ctx.turnError?.code === code ? ctx.turnError : undefined;
  return {
    kind: 'errored',
    source: ctx.source,
    message,
    code,
    ...(t?.role !== undefined ? { role: t.role } : {}),
    ...(t?.turn !== undefined ? { turn: t.turn } : {}),
  };
}

/** What a turn error knows besides its message: the role as the source spells it, the 0-based turn. */
export interface TurnErrorDetail {
  role?: string;
  turn?: number;
}

/** A turn-conversion failure: the error code and a message naming the 1-based source turn. */
export interface TurnError {
  code: ErrorCode;
  message: string;
}

export function isTurnError(v: unknown): v is TurnError {
  return isObject(v) && typeof v.code === 'string' && typeof v.message === 'string' && !('role' in v);
}

const parsedStrings = new WeakMap<Row, Map<string, unknown>>();

/**
 * The value of `row[field]`, with a JSON string holding a list or object parsed
 * (datasets that store `messages` / `tools` / `answers` as JSON text). Parsed
 * once per row and field. A string that is not JSON is returned as is.
 */
export function fieldValue(row: Row, field: string): unknown {
  const v = row[field];
  if (typeof v !== 'string') return v;
  const t = v.trimStart();
  if (!(t.startsWith('[') || t.startsWith('{'))) return v;
  let cache = parsedStrings.get(row);
  if (!cache) parsedStrings.set(row, (cache = new Map()));
  if (cache.has(field)) return cache.get(field);
  let out: unknown = v;
  try {
    out = parseJsonLimited(v);
  } catch {
    /* not JSON: the string itself */
  }
  cache.set(field, out);
  return out;
}

/** Whether `row[field]` was a JSON string (so the caller can note it). */
export function wasJsonString(row: Row, field: string): boolean {
  return typeof row[field] === 'string' && typeof fieldValue(row, field) !== 'string';
}

export function roleSpelling(turn: Row): unknown {
  for (const k of ROLE_KEYS) if (k in turn) return turn[k];
  return undefined;
}

/** Messages whose source content was `null` (set by `toMessages`; read by `finish` for the wording of the system-field note only). */
export const nullSourced = new WeakSet<Message>();
