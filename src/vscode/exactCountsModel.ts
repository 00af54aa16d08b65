/**
 * Whether a row's exact token counts can come from its prepared output, and their sums: the hover
 * and the mask view show what `tokenized_data.jsonl` holds for the row (exact) instead of counting
 * again, and say why not otherwise. "Current" = the one comparison the Datasets view, the dashboard
 * and Problems make (`readOutputState` with the settings), and no unsaved edits. A stale output is
 * named with the Datasets view's first reason, word for word. exactCounts.ts asks the service
 * worker for the row's records.
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/hoverModel.test.ts).
 */
import type { OutputState } from '../core/run/editor/datasetScan';
import { CONVERSATIONS_FILE } from '../core/run/outputFiles';

/** The records of a row as the current output holds them. */
export interface ExactRecords {
  records: { id: string; tokens: number; trainableTokens: number }[];
  tokens: number;
  trainableTokens: number;
  /** The output's tokenized_data.jsonl. */
  tokenizedData: string;
}

/**
 * Why no exact counts are shown (for the hover / mask view footnote); a stale output with the first of
 * the reasons the Datasets view gives (`output stale: settings changed: mask policy (run: assistant, now: last-assistant)`).
 */
export type NoExactReason = 'not prepared' | `output stale: ${string}` | 'unsaved edits' | 'output not indexed yet' | 'no record in the output';

/** The records file to read a row's exact counts from, or why there is none (`dirty`: the document has unsaved edits). */
export function exactSource(out: OutputState | undefined, dirty: boolean | undefined): { tokenizedData: string } | { none: NoExactReason } {
  if (dirty) return { none: 'unsaved edits' };
  if (!out || out.state === 'none' || !out.outputs?.[0]) return { none: 'not prepared' };
  // A --format messages run wrote conversations, not records: there are no exact records to show.
  if (out.outputs[0].name === CONVERSATIONS_FILE) return { none: 'no record in the output' };
  if (out.state === 'stale') return { none: `output stale: ${out.staleBecause[0] ?? 'see the Datasets view'}` };
  return { tokenizedData: out.outputs[0].path };
}

/** The row's records summed (`null`: the output is not indexed yet). */
export function exactRecordsOf(records: ExactRecords['records'] | null, tokenizedData: string): ExactRecords | { none: NoExactReason } {
  if (records === null) return { none: 'output not indexed yet' };
  if (records.length === 0) return { none: 'no record in the output' };
  return {
    records,
    tokens: records.reduce((a, r) => a + r.tokens, 0),
    trainableTokens: records.reduce((a, r) => a + r.trainableTokens, 0),
    tokenizedData,
  };
}
