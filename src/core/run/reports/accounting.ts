/**
 * A run's accounting (docs/loss-mask-rules.md "Records that are not written"):
 * every row read ends written, set aside, dropped with a reason code, or
 * errored, and the four add up per file; why a file fails the run; the totals.
 */
import { codeMeaning } from '../../codes';
import { ownEntry } from '../../ownEntry';
import type { FileReport, PrepareOptions, PrepareResult, RowProblemLine } from '../contract';
import { recordLineCount, type RowResult } from '../../records/rowResult';
import { mergeLengthStats, type LengthStatsBuilder } from '../stats';
import type { TokenCounter } from '../outputs/tokenCounts';
import { addTrainerCuts, emptyTrainerCuts } from '../../trainers/trainers';

/** A file's report before any row: every counter 0, format `unknown`. */
export function emptyFileReport(file: string): FileReport {
  return {
    file,
    format: 'unknown',
    evidence: [],
    rowsRead: 0,
    rowsWritten: 0,
    recordsWritten: 0,
    rowsSetAside: 0,
    rowsDropped: 0,
    rowsErrored: 0,
    dropped: {},
    errors: [],
    notes: {},
    unreadFields: {},
    shapes: {},
    trainableTokens: 0,
    totalTokens: 0,
    trainerCuts: emptyTrainerCuts(),
  };
}

/** Counts a dropped row under its reason (the first 10 line numbers kept). */
export function addDrop(rep: FileReport, line: number, reason: string): void {
  rep.rowsDropped++;
  const d = (rep.dropped[reason] ??= { count: 0, lines: [] });
  d.count++;
  if (d.lines.length < 10) d.lines.push(line);
}

/**
 * Adds a row's result to its file's report (counts, first lines, notes, tokens), its record
 * lengths to `lengths` and its token-id counts to `counts` when given.
 */
export function applyRowResult(rep: FileReport, res: RowResult, lengths?: LengthStatsBuilder, counts?: TokenCounter): void {
  rep.rowsRead++;
  for (const n of res.notes) rep.notes[n] = (rep.notes[n] ?? 0) + 1;
  for (const f of res.unreadFields ?? []) {
    const u = ownEntry((rep.unreadFields ??= {}), f, () => ({ count: 0, lines: [] as number[] }));
    u.count++;
    if (u.lines.length < 10) u.lines.push(res.line);
  }
  for (const sh of res.shapes ?? []) (rep.shapes ??= {})[sh] = (rep.shapes[sh] ?? 0) + 1;
  if (res.prompt) rep.promptsWritten = (rep.promptsWritten ?? 0) + (res.prompt.match(/\n/g)?.length ?? 0);
  switch (res.fate) {
    case 'written':
      rep.rowsWritten++;
      rep.recordsWritten += recordLineCount(res);
      rep.trainableTokens += res.trainableTokens;
      rep.totalTokens += res.totalTokens;
      lengths?.addRow(res.recordTokens, res.recordTrainable, res.renderedTokens);
      if (res.conversations) {
        rep.conversationsWritten = (rep.conversationsWritten ?? 0) + res.conversations.length;
        const sharegpt = res.conversations.filter((c) => c.sharegpt !== undefined).length;
        if (sharegpt || rep.sharegptWritten !== undefined) rep.sharegptWritten = (rep.sharegptWritten ?? 0) + sharegpt;
      }
      if (res.tokenCounts) counts?.add(res.tokenCounts, recordLineCount(res));
      if (res.trainerCuts) rep.trainerCuts = addTrainerCuts(rep.trainerCuts ?? emptyTrainerCuts(), res.trainerCuts);
      break;
    case 'setAside':
      rep.rowsSetAside++;
      break;
    case 'dropped':
      addDrop(rep, res.line, res.reason ?? 'no_trainable_tokens');
      break;
    case 'errored':
      rep.rowsErrored++;
      if (rep.errors.length < 50) rep.errors.push({ line: res.line, message: res.message ?? 'error' });
      if (res.reason) {
        const r = ((rep.errorReasons ??= {})[res.reason] ??= { count: 0, lines: [] });
        r.count++;
        if (r.lines.length < 10) r.lines.push(res.line);
      }
      break;
  }
}

/**
 * Marks a file left out by `--skip-failed-files`: its written and set-aside counts (records, tokens, lengths)
 * become 0, as none of its rows are in the outputs, and move to `leftOut`; rows read, dropped and errored stay.
 */
export function leaveOut(rep: FileReport): void {
  rep.skipped = true;
  const { rowsWritten, recordsWritten, rowsSetAside, trainableTokens, totalTokens } = rep;
  rep.leftOut = { rowsWritten, recordsWritten, rowsSetAside, trainableTokens, totalTokens };
  Object.assign(rep, { rowsWritten: 0, recordsWritten: 0, rowsSetAside: 0, trainableTokens: 0, totalTokens: 0 });
  if (rep.conversationsWritten !== undefined) rep.conversationsWritten = 0;
  if (rep.sharegptWritten !== undefined) rep.sharegptWritten = 0;
  delete rep.promptsWritten;
  delete rep.lengths;
  rep.trainerCuts = emptyTrainerCuts();
}

/** The run policy a file is judged by. */
export type FailurePolicy = Pick<PrepareOptions, 'allowEmpty' | 'strict' | 'maxErrorRate'> & {
  /** Data-changing warning codes of the file with their counts (`status.ts` `fileWarnings`), for `strict`. */
  warnings?: { code: string; count: number }[];
};

/**
 * Why one file fails the run, or undefined: a read failure already recorded,
 * rows that do not add up, nothing usable (unless `allowEmpty`), an error rate
 * over `maxErrorRate`, or under `strict` any errored row or data-changing warning.
 * The message starts with the file's path.
 */
export function fileFailure(f: FileReport, policy: FailurePolicy = {}): string | undefined {
  if (f.failure) return f.failure.startsWith(f.file) ? f.failure : `${f.file}: ${f.failure}`;
  const sum = f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored;
  if (sum !== f.rowsRead) return `${f.file}: accounting mismatch (${sum} accounted, ${f.rowsRead} read)`;
  if (!policy.allowEmpty && f.recordsWritten === 0 && f.rowsSetAside === 0) {
    const why = Object.entries(f.dropped)
      .map(([k, v]) => `${v.count} ${k}`)
      .concat(f.rowsErrored ? [`${f.rowsErrored} errored`] : []);
    return `${f.file}: no record written and no prompt set aside (${f.rowsRead} rows read${why.length ? ': ' + why.join(', ') : ''}; format ${f.format})`;
  }
  const firstError = f.errors[0] ? ` (first: line ${f.errors[0].line}: ${f.errors[0].message.split('\n')[0]})` : '';
  // A failed file writes nothing: the rows it counts as set aside are in no prompts_to_generate.jsonl either.
  const prompts = f.rowsSetAside
    ? `; its ${f.rowsSetAside} row${f.rowsSetAside === 1 ? '' : 's'} set aside to generate ${f.rowsSetAside === 1 ? 'is' : 'are'} not written either`
    : '';
  if (!policy.allowEmpty && f.recordsWritten === 0 && f.rowsErrored > 0)
    return `${f.file}: no record written; ${f.rowsErrored} rows errored${firstError}${prompts}`;
  if (policy.maxErrorRate !== undefined && f.rowsRead > 0 && f.rowsErrored / f.rowsRead > policy.maxErrorRate)
    return `${f.file}: ${f.rowsErrored} of ${f.rowsRead} rows errored (${pct(f.rowsErrored, f.rowsRead)}), over --max-error-rate ${policy.maxErrorRate}${firstError}${prompts}`;
  if (policy.strict && f.rowsErrored > 0) return `${f.file}: ${f.rowsErrored} rows errored (--strict)${firstError}${prompts}`;
  if (policy.strict && policy.warnings?.length)
    return `${f.file}: data-changing warnings (--strict): ${policy.warnings.map((w) => `${w.code} × ${w.count}`).join(', ')}${prompts}`;
  return undefined;
}

function pct(a: number, b: number): string {
  return `${((100 * a) / b).toFixed(1)} %`;
}

/**
 * Why a run (or a merge of shard runs) failed, per file: rows that do not add up
 * (`written + setAside + dropped + errored != rowsRead`), and, unless
 * `allowEmpty`, a file that yields no record and no prompt, or no record while
 * rows errored (docs/loss-mask-rules.md "Records that are not written"). Files skipped by `--skip-failed-files` are not failures.
 */
export function runFailures(files: readonly FileReport[], opts: FailurePolicy = {}): string[] {
  const failures: string[] = [];
  for (const f of files) {
    if (f.skipped) continue;
    const why = fileFailure(f, opts);
    if (why) failures.push(why);
  }
  return failures;
}

/**
 * A run's speed: tokens written (every record's tokens, `totals.totalTokens`) and rows read per second
 * of its wall time (`elapsedMs`, tokenizer load and writing included; for a merge of shards, the
 * slowest shard's, so the rate is the job's as a whole). Rounded to whole units; 0 when no time passed.
 */
export function throughputOf(
  totals: Pick<PrepareResult['totals'], 'totalTokens' | 'rowsRead'>,
  elapsedMs: number,
): { tokensPerSecond: number; rowsPerSecond: number } {
  const secs = elapsedMs / 1000;
  if (!(secs > 0)) return { tokensPerSecond: 0, rowsPerSecond: 0 };
  return { tokensPerSecond: Math.round(totals.totalTokens / secs), rowsPerSecond: Math.round(totals.rowsRead / secs) };
}

/** Run totals: the sum of the file reports' counters (skipped files left out), and drop (and coded error) counts per reason. */
export function computeTotals(files: readonly FileReport[]): PrepareResult['totals'] {
  const sumKeys = ['rowsRead', 'rowsWritten', 'recordsWritten', 'rowsSetAside', 'rowsDropped', 'rowsErrored', 'trainableTokens', 'totalTokens'] as const;
  const kept = files.filter((f) => !f.skipped);
  const totals = { dropped: {} as Record<string, number> } as PrepareResult['totals'];
  for (const k of sumKeys) totals[k] = kept.reduce((a, f) => a + f[k], 0);
  for (const f of kept) for (const [k, v] of Object.entries(f.dropped)) totals.dropped[k] = (totals.dropped[k] ?? 0) + v.count;
  for (const f of kept) for (const [k, v] of Object.entries(f.errorReasons ?? {})) (totals.errorReasons ??= {})[k] = (totals.errorReasons[k] ?? 0) + v.count;
  for (const k of ['conversationsWritten', 'sharegptWritten'] as const)
    if (kept.some((f) => f[k] !== undefined)) totals[k] = kept.reduce((a, f) => a + (f[k] ?? 0), 0);
  if (kept.length && kept.every((f) => f.lengths)) totals.lengths = mergeLengthStats(kept.map((f) => f.lengths!));
  if (kept.length && kept.every((f) => f.trainerCuts)) totals.trainerCuts = kept.reduce((a, f) => addTrainerCuts(a, f.trainerCuts!), emptyTrainerCuts());
  return totals;
}

/** Name of the sidecar listing every dropped and errored row of a run (see {@link RowProblemLine}); defined in outputFiles.ts. */

/** The `problems.jsonl` line (newline included) of a dropped or errored row. */
export function problemLine(file: string, res: Pick<RowResult, 'fate' | 'line' | 'element' | 'reason' | 'code' | 'message'>): string {
  const el = res.element === undefined ? {} : { element: res.element };
  const p: RowProblemLine =
    res.fate === 'dropped'
      ? {
          file,
          line: res.line,
          ...el,
          fate: 'dropped',
          code: res.reason ?? 'no_trainable_tokens',
          message: res.message ?? codeMeaning(res.reason ?? 'no_trainable_tokens'),
        }
      : { file, line: res.line, ...el, fate: 'errored', code: res.code ?? res.reason ?? 'errored', message: res.message ?? 'error' };
  return JSON.stringify(p) + '\n';
}
