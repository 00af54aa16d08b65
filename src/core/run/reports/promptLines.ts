/**
 * How many prompts a run put in `prompts_to_generate.jsonl`: the one number the summary's "Next: … generate"
 * line, report.md, the merge's check of the shards' prompt files and the VS Code "generate" offer use.
 */
import type { FileReport, PrepareResult } from '../contract';

/**
 * Lines a file's rows wrote to `prompts_to_generate.jsonl`: one per row set aside (`rowsSetAside`), plus one
 * per conversation set aside from a row that was otherwise written or holds several prompts
 * (`split_part_set_aside`, records/rowProcessor.ts). 0 for a file skipped with `--skip-failed-files` (none of
 * its rows are in the outputs).
 */
export function filePromptLines(f: Pick<FileReport, 'rowsSetAside' | 'notes' | 'promptsWritten'> & { skipped?: unknown }): number {
  if (f.skipped) return 0;
  return f.promptsWritten ?? rowsPromptLines(f);
}

/** The prompt lines a file's row counts give (`rowsSetAside` + `split_part_set_aside`), without `promptsWritten`. */
function rowsPromptLines(f: Pick<FileReport, 'rowsSetAside' | 'notes'>): number {
  return f.rowsSetAside + (f.notes.split_part_set_aside ?? 0);
}

/**
 * Keeps `promptsWritten` (counted as rows are applied, accounting.ts) only where it differs from what the
 * row counts give, so reports of files without such rows stay as they were.
 */
export function settlePromptsWritten(f: FileReport): void {
  if (f.promptsWritten !== undefined && f.promptsWritten === rowsPromptLines(f)) delete f.promptsWritten;
}

/** Lines of a run's (or a merged report's) `prompts_to_generate.jsonl`: {@link filePromptLines} over its files. */
export function promptLines(r: Pick<PrepareResult, 'files'>): number {
  return r.files.reduce((a, f) => a + filePromptLines(f), 0);
}
