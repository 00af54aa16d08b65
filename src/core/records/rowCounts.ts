/**
 * A row's token counts are made one way for every view: the hover and the mask view ask the record
 * viewer the same question — the same options, no record in detail, the hover's work cap — and the
 * mask view shows those counts beside the record it draws (tokenized whole). One request shape
 * ({@link rowCountOptions}) and one estimator (`tokenEstimate.ts`, independent of any cache), so the
 * same row has the same numbers in both.
 */
import type { RecordView, RecordViewOptions } from './recordViewTypes';

/**
 * The options a row is counted with: `options` without a record in detail, with `cap` characters
 * tokenized at most (the hover's work cap, `eagle3prep.hover.maxTokenizedCharacters`).
 */
export function rowCountOptions(options: RecordViewOptions, cap: number): RecordViewOptions {
  const rest = { ...options };
  delete rest.detailRecord;
  return { ...rest, maxTokenizedChars: cap };
}

/**
 * `view` (a view with a record in detail) with the row's counts of `counts` (the same row counted with
 * {@link rowCountOptions}): the totals, each record's tokens and trainable tokens, each turn's tokens.
 * When the two read the row differently (another number of records or turns: the row changed in
 * between), `view` is returned as it is.
 */
export function withRowCounts(view: RecordView, counts: RecordView): RecordView {
  if (counts.records.length !== view.records.length || counts.turns.length !== view.turns.length) return view;
  return {
    ...view,
    totals: { ...counts.totals },
    records: view.records.map((r, i) => ({
      ...r,
      tokens: counts.records[i].tokens,
      trainableTokens: counts.records[i].trainableTokens,
      estimated: counts.records[i].estimated,
    })),
    turns: view.turns.map((t, i) => ({ ...t, tokens: counts.turns[i].tokens, estimated: counts.turns[i].estimated })),
  };
}
