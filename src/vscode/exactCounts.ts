/**
 * Exact token counts of one row from the prepared output, when it is current:
 * the hover and the mask view show what `tokenized_data.jsonl` holds for the
 * row (exact) instead of counting again, and say "estimate" only when there is
 * no current output. "Current" = the one comparison the Datasets view, the
 * dashboard and Problems make (`readOutputState` with the settings: same input
 * size / mtime, same tokenizer files, no change of the `eagle3prep.jsonc` that
 * applies to the file's rows, and every record-deciding setting of
 * `runSettings.ts` as the run had it), and no unsaved edits. A stale output is
 * named with the Datasets view's first reason, word for word.
 */
import * as vscode from 'vscode';
import { readOutputState, tokenizerFilesHash } from '../core/run/editor/datasetScan';
import { resolveRunSettings } from '../core/run/runSettings';
import { CONVERSATIONS_FILE } from '../core/run/outputFiles';
import type { PrepareSettings } from './config';
import { outDirFor } from './paths';
import { serviceClient } from './serviceClient';

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

/**
 * The exact records of 1-based `line` of `uri` from its current output, or why there are none.
 * @param wait wait for the output to be indexed (the mask view); the hover does not (indexing starts, counts come next time)
 */
export async function exactRecordsFor(
  uri: vscode.Uri,
  line: number,
  settings: PrepareSettings,
  opts: { dirty?: boolean; wait?: boolean; budgetMs?: number } = {},
): Promise<ExactRecords | { none: NoExactReason }> {
  if (uri.scheme !== 'file') return { none: 'not prepared' };
  if (opts.dirty) return { none: 'unsaved edits' };
  const out = readOutputState(uri.fsPath, {
    outDir: outDirFor([uri.fsPath], settings.outputDirectory),
    tokenizerHash: tokenizerFilesHash(settings.tokenizerDir),
    settings: resolveRunSettings(settings),
  });
  if (out.state === 'none' || !out.outputs?.[0]) return { none: 'not prepared' };
  // A --format messages run wrote conversations, not records: there are no exact records to show.
  if (out.outputs[0].name === CONVERSATIONS_FILE) return { none: 'no record in the output' };
  if (out.state === 'stale') return { none: `output stale: ${out.staleBecause[0] ?? 'see the Datasets view'}` };
  let records;
  try {
    records = await serviceClient().call(
      { op: 'rowRecords', tokenizedData: out.outputs[0].path, input: uri.fsPath, line, wait: opts.wait === true },
      opts.budgetMs ?? (opts.wait ? 60_000 : 2000),
    );
  } catch {
    return { none: 'output not indexed yet' };
  }
  if (records === null) return { none: 'output not indexed yet' };
  if (records.length === 0) return { none: 'no record in the output' };
  return {
    records,
    tokens: records.reduce((a, r) => a + r.tokens, 0),
    trainableTokens: records.reduce((a, r) => a + r.trainableTokens, 0),
    tokenizedData: out.outputs[0].path,
  };
}
