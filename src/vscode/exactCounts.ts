/**
 * Exact token counts of one row from the prepared output, when it is current:
 * the hover and the mask view show what `tokenized_data.jsonl` holds for the
 * row (exact) instead of counting again, and say "estimate" only when there is
 * no current output. "Current" = the one comparison the Datasets view, the
 * dashboard and Problems make (`readOutputState` with the settings: same input
 * size / mtime, same tokenizer files, no change of the `eagle3prep.jsonc` that
 * applies to the file's rows, and every record-deciding setting of
 * `runSettings.ts` as the run had it), and no unsaved edits. A stale output is
 * named with the Datasets view's first reason, word for word. The decisions are
 * exactCountsModel.ts (pure); this file reads the output state and asks the service worker.
 */
import type * as vscode from 'vscode';
import type { PrepareSettings } from './config';
import { exactRecordsOf, exactSource, type ExactRecords, type NoExactReason } from './exactCountsModel';
import { editorOutputState } from './stalenessModel';
import { serviceClient } from './serviceClient';

/**
 * The exact records of 1-based `line` of `uri` from its current output, or why there are none
 * (exactCountsModel.ts `exactSource`, `exactRecordsOf`).
 * @param wait wait for the output to be indexed (the mask view); the hover does not (indexing starts, counts come next time)
 */
export async function exactRecordsFor(
  uri: vscode.Uri,
  line: number,
  settings: PrepareSettings,
  opts: { dirty?: boolean; wait?: boolean; budgetMs?: number } = {},
): Promise<ExactRecords | { none: NoExactReason }> {
  if (uri.scheme !== 'file') return { none: 'not prepared' };
  const source = exactSource(opts.dirty ? undefined : editorOutputState(uri.fsPath, settings), opts.dirty);
  if ('none' in source) return source;
  try {
    const records = await serviceClient().call(
      { op: 'rowRecords', tokenizedData: source.tokenizedData, input: uri.fsPath, line, wait: opts.wait === true },
      opts.budgetMs ?? (opts.wait ? 60_000 : 2000),
    );
    return exactRecordsOf(records, source.tokenizedData);
  } catch {
    return { none: 'output not indexed yet' };
  }
}
