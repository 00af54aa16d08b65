/**
 * Exact token counts of one row from the prepared output, when it is current:
 * the hover and the mask view show what `tokenized_data.jsonl` holds for the
 * row (exact) instead of counting again, and say "estimate" only when there is
 * no current output. "Current" = the Datasets view's rule (`readOutputState`:
 * same input size / mtime / row count, same tokenizer files, no newer
 * `eagle3prep.jsonc`), the same mask policy, grouping, template kwargs, max
 * length, long-record policy and minimum trainable tokens as the settings, and
 * no unsaved edits.
 */
import * as vscode from 'vscode';
import { readOutputState, tokenizerFilesHash } from '../core/run/datasetScan';
import { differingSettings, resolveRunSettings } from '../core/run/runSettings';
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

/** Why no exact counts are shown (for the hover / mask view footnote). */
export type NoExactReason =
  'not prepared' | 'output stale' | 'settings differ from the run' | 'unsaved edits' | 'output not indexed yet' | 'no record in the output';

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
  });
  if (out.state === 'none' || !out.outputs?.[0]) return { none: 'not prepared' };
  // A --format messages run wrote conversations, not records: there are no exact records to show.
  if (out.outputs[0].name === CONVERSATIONS_FILE) return { none: 'no record in the output' };
  if (out.state === 'stale') return { none: 'output stale' };
  if (!out.settings || differingSettings(out.settings, resolveRunSettings(settings)).length > 0) return { none: 'settings differ from the run' };
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
