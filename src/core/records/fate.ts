/**
 * The fate of a record and of a row, decided in one place (docs/loss-mask-rules.md "Records that
 * are not written"): a record over the max length is dropped as `too_long`, or cut to it when
 * truncation is on; a record left without a trainable token is dropped as `no_trainable_tokens`,
 * one with fewer than the run's minimum as `too_few_trainable_tokens`, one whose trainable tokens are
 * a smaller share of its tokens than the run's minimum share as `low_trainable_share`; a row is written when one of
 * its records is, errored when a target could not be located and
 * nothing was written, dropped otherwise (with the reason of its last dropped record).
 *
 * Asked by the one row path (records/rowTrace.ts) for `prepare` and the hover / mask view alike: with the
 * exact loss mask, or past the views' work cap with counts extrapolated from it.
 */
import type { Code } from '../codes';

/** Why a record is not written. */
export type RecordDrop = 'too_long' | 'no_trainable_tokens' | 'too_few_trainable_tokens' | 'low_trainable_share';

/** The note a row gets for each record dropped, by reason (counted in the report). */
export const RECORD_DROP_NOTES: Readonly<Record<RecordDrop, Code>> = {
  too_long: 'record_dropped_too_long',
  no_trainable_tokens: 'record_dropped_no_trainable_tokens',
  too_few_trainable_tokens: 'record_dropped_few_trainable_tokens',
  low_trainable_share: 'record_dropped_low_trainable_share',
};

/**
 * The run settings that are rules of a record's fate, each decided in {@link recordFate} alone. A field
 * declared here is a run setting everywhere: `RowSettings` (records/rowResult.ts) and the record
 * view's options (records/recordViewTypes.ts) extend this, `RunSettings` (run/runSettings.ts) resolves
 * it, and its row in `RUN_SETTINGS` there gives it its CLI flag, editor setting, report entry and
 * staleness comparison. Absent = the default (the rule off).
 */
export interface RecordRules {
  /** Fewest trainable tokens a written record has (`--min-trainable-tokens`); default 1. */
  minTrainableTokens?: number;
  /**
   * Smallest share (0 to 1) of a written record's tokens (after a cut) that are trainable
   * (`--min-trainable-share`); default 0, off. A trainer runs the target model over every token of a
   * record for the draft's features but learns only from the trained ones.
   */
  minTrainableShare?: number;
}

/**
 * The {@link RecordRules} of `s` alone, copied field by field: the type names every field of RecordRules, so a rule
 * added there must be added here (a type error says so). The one row path makes a record's limits from it once per
 * conversation (spreading the run's whole settings object instead cost ~9 µs of CPU a conversation in V8, profiled
 * on 4,000 short chats).
 */
export function recordRulesOf(s: RecordRules): RecordRules {
  const rules: { [K in keyof Required<RecordRules>]: RecordRules[K] } = { minTrainableTokens: s.minTrainableTokens, minTrainableShare: s.minTrainableShare };
  return rules;
}

/** Whether `code` is a record's drop reason (one of {@link RECORD_DROP_NOTES}'s). */
export function isRecordDrop(code: string): code is RecordDrop {
  return Object.hasOwn(RECORD_DROP_NOTES, code);
}

/** The limits of a run that decide a record's fate: its length limit and its {@link RecordRules}. */
export interface RecordLimits extends RecordRules {
  /** Longest record in tokens; undefined = no limit. */
  maxLength?: number;
  /** Keep the first `maxLength` tokens of a longer record instead of dropping it. */
  truncate?: boolean;
}

/**
 * A record's fate: written (its first `keep` tokens, `trainable` of them trainable), or dropped.
 * `truncated`: the record was cut to the max length (a cut record may still be dropped, when the cut
 * leaves it no trainable token).
 */
export type RecordFate = { written: true; keep: number; truncated: boolean; trainable: number } | { written: false; reason: RecordDrop; truncated: boolean };

/**
 * Decides a record's fate from its length and its trainable tokens.
 * @param tokens the record's length in tokens
 * @param trainableIn the number of trainable tokens among the record's first `n` tokens
 */
export function recordFate(tokens: number, trainableIn: (n: number) => number, limits: RecordLimits): RecordFate {
  let keep = tokens;
  let truncated = false;
  if (limits.maxLength !== undefined && tokens > limits.maxLength) {
    if (!limits.truncate) return { written: false, reason: 'too_long', truncated: false };
    keep = limits.maxLength;
    truncated = true;
  }
  const trainable = trainableIn(keep);
  if (trainable === 0) return { written: false, reason: 'no_trainable_tokens', truncated };
  if (trainable < Math.max(1, limits.minTrainableTokens ?? 1)) return { written: false, reason: 'too_few_trainable_tokens', truncated };
  // trainable / keep, not share × keep: 3 of 30 is 0.1 exactly, and 0.1 × 30 is not 3.
  if (limits.minTrainableShare && trainable / keep < limits.minTrainableShare) return { written: false, reason: 'low_trainable_share', truncated };
  return { written: true, keep, truncated, trainable };
}

/** {@link recordFate} of a record with its loss mask (one 0 / 1 per token). */
export function maskedRecordFate(mask: readonly number[], limits: RecordLimits): RecordFate {
  return recordFate(
    mask.length,
    (n) => {
      let sum = 0;
      for (let i = 0; i < n; i++) sum += mask[i];
      return sum;
    },
    limits,
  );
}

/** What a row's records came to, for {@link rowFate}. */
export interface RowRecordsOutcome {
  /** Records written. */
  written: number;
  /** The drop reasons of the records not written, in record order. */
  drops: readonly RecordDrop[];
  /** Targets whose completion could not be located in the render (errored targets). */
  targetErrors: readonly { reason: string; message: string }[];
}

/** A row's fate once its records are decided. */
export type RowFate = { fate: 'written' } | { fate: 'dropped'; reason: RecordDrop } | { fate: 'errored'; targetError: { reason: string; message: string } };

/**
 * Decides a row's fate from its records: written when at least one record is; else errored with the
 * first target error when there is one; else dropped with the reason that dropped most of its records
 * (of reasons dropping as many, the one of the later record), so a rule that emptied the row is the one
 * named (`no_trainable_tokens` when the row had no record at all: no target under the mask policy; a
 * conversation that `--long split` could not place anywhere counts as a `too_long` drop).
 */
export function rowFate(o: RowRecordsOutcome): RowFate {
  if (o.written > 0) return { fate: 'written' };
  if (o.targetErrors.length > 0) return { fate: 'errored', targetError: o.targetErrors[0] };
  return { fate: 'dropped', reason: mostFrequentLast(o.drops) ?? 'no_trainable_tokens' };
}

/** The value occurring most often in `xs`; of values occurring as often, the one that occurs last. */
function mostFrequentLast<T>(xs: readonly T[]): T | undefined {
  const counts = new Map<T, number>();
  let best: T | undefined;
  for (const x of xs) {
    const c = (counts.get(x) ?? 0) + 1;
    counts.set(x, c);
    if (best === undefined || c >= (counts.get(best) ?? 0)) best = x;
  }
  return best;
}

/**
 * The fate of a row holding several conversations (a `split` row: Self-Instruct instances, conversation lists), from
 * its parts' fates in row order: written when any part wrote a record (`records`: how many in all), else set aside
 * when a part was set aside (a prompt to generate), else the first part's fate as it is; undefined for no part.
 * @param records the records a part wrote (0 for a part not written)
 */
export function partsFate<P extends { fate: string }>(
  parts: readonly P[],
  records: (p: P) => number,
): { fate: 'written'; records: number } | { fate: 'setAside' } | P | undefined {
  const written = parts.reduce((a, p) => a + records(p), 0);
  if (written > 0) return { fate: 'written', records: written };
  if (parts.some((p) => p.fate === 'setAside')) return { fate: 'setAside' };
  return parts[0];
}
