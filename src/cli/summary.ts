/**
 * The terminal summary of `prepare` and `merge-reports`: one table row per
 * input file with its status word, then every data-changing warning once
 * with its count, meaning and what to do, the first errors of degraded files,
 * failures with the way out, and one status line at the end. The status
 * words are those of `report.md` / `report.json` (`core/run/reports/status.ts`).
 */
import { basename, relative } from 'node:path';
import { codeMeaning, codeRemedy } from '../core/codes';
import type { FileReport, PrepareResult, RunStatus } from '../core/run/contract';
import { AMPLIFICATION_WARN, amplificationLine, backendLine } from '../core/run/reports/report';
import { KEPT_REASON, removedReason, SPECULATORS_DIR } from '../core/run/outputFiles';
import { promptLines } from '../core/run/reports/promptLines';
import { settingNotesOf, worstStatus } from '../core/run/reports/status';
import { nextStepsOfRun } from '../core/run/reports/nextSteps';
import { conversationsLines } from '../core/run/reports/conversationsNote';
import { compact } from './progress';
import { addTrainerCuts, emptyTrainerCuts, trainerCutLines } from '../core/trainers/trainers';
import { groupedInt } from '../core/numberText';

/** How a command's runs ended, for the summary's last lines. */
export interface SummaryContext {
  /** Output folders whose run succeeded but were not written because another folder of the command failed. */
  heldBack?: string[];
  /** Output folders of runs left out by --skip-failed-files (their previous outputs kept). */
  skippedRuns?: string[];
  /** A dry run: nothing was written. */
  dryRun?: boolean;
  /** Whether --skip-failed-files was given. */
  skipFailedFiles?: boolean;
  /** Whether --allow-empty was given. */
  allowEmpty?: boolean;
  /** Show paths relative to this folder (default: the current directory). */
  cwd?: string;
}

function show(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && rel.length < path.length ? rel : path;
}

function pct(a: number, b: number): string {
  return b === 0 ? '–' : `${((100 * a) / b).toFixed(1)} %`;
}

function compactNum(n: number): string {
  return n < 10000 ? num(n) : n < 1e6 ? `${(n / 1e3).toFixed(1)}k` : n < 1e9 ? `${(n / 1e6).toFixed(1)}M` : `${(n / 1e9).toFixed(2)}G`;
}

function num(n: number): string {
  return groupedInt(n);
}

/** Amplification of a file when the run computed it (record tokens ÷ tokens of the conversations rendered once; `run/stats.ts`). */
function amplificationOf(f: FileReport): number | undefined {
  const a = f.lengths?.amplification;
  return typeof a === 'number' && Number.isFinite(a) ? a : undefined;
}

/** The files the runs wrote, as paths in their output folders (`outputs.written`: `data/tokenized_data.jsonl`, `speculators/` once for its files; the JSONL set when a report predates that list). */
function outputNames(results: readonly PrepareResult[]): string {
  const inFolder = (r: PrepareResult, p: string) => {
    const rel = relative(r.outDir, p);
    if (!rel || rel.startsWith('..')) return basename(p);
    const parts = rel.split(/[\\/]/);
    return parts.length > 1 && parts[0] === SPECULATORS_DIR ? `${SPECULATORS_DIR}/` : parts.join('/');
  };
  const names = new Set(results.flatMap((r) => (r.outputs.written ?? []).map((p) => inFolder(r, p))));
  return names.size ? [...names].join(', ') : 'tokenized_data.jsonl, prompts_to_generate.jsonl, report.md';
}

/** Lays out rows of cells in columns (first column left-aligned, the others right-aligned). */
function table(rows: string[][], leftCols = 2): string[] {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => [...(r[c] ?? '')].length)));
  return rows.map((r) =>
    r
      .map((cell, c) => (c < leftCols ? cell.padEnd(widths[c]) : cell.padStart(widths[c])))
      .join('  ')
      .trimEnd(),
  );
}

/** One input file of one run, as the summary walks them. */
interface FileOfRun {
  f: FileReport;
  r: PrepareResult;
}

/** A data-changing warning or template note of the command, merged over its runs. */
interface MergedWarning {
  count: number;
  source: string;
  meaning: string;
  remedy?: string;
  files: Set<string>;
}

/**
 * The summary of a command's runs (one per output folder): the heading and the table of files, then the sections
 * below it (warnings, trainer lengths, template notes, estimates, unread fields, cost, duplicates, errors, failures,
 * empty shard files), then the closing lines (what was written, what to do next, the status).
 * @returns lines without a trailing newline
 */
export function formatSummary(results: readonly PrepareResult[], ctx: SummaryContext = {}): string {
  const cwd = ctx.cwd ?? process.cwd();
  const files = results.flatMap((r) => r.files.map((f) => ({ f, r })));
  const dry = ctx.dryRun === true;
  const { changing, notes } = mergedWarnings(results);
  const skippedRuns = new Set(ctx.skippedRuns ?? []);
  const failures = results.filter((r) => !skippedRuns.has(r.outDir)).flatMap((r) => r.failures);
  const skipped = results.flatMap((r) => r.skippedFiles ?? []);
  const out = [
    ...headingLines(results),
    ...fileTable(files, cwd, dry).map((l) => `  ${l}`),
    ...changingWarningLines(changing, files),
    ...trainerLengthLines(results),
    ...templateNoteLines(notes, files),
    ...(dry ? dryRunEstimateLines(results, cwd) : []),
    ...unreadFieldLines(files, cwd),
    ...costLines(files),
    ...duplicateLines(files),
    ...erroredRowLines(files, cwd),
    ...failureLines(failures, skipped),
    ...emptyInShardLines(results, cwd),
    '',
  ];
  const status = commandStatus(results, ctx);
  if (dry) out.push('Dry run: nothing written. Estimates from the first rows of each file are above (report.json "dry_run" with --json).');
  else if (status === 'failed') out.push(failedLine(results, ctx, files.length, failures, skipped.length));
  else {
    const written = results.filter((r) => r.ok && !(ctx.heldBack ?? []).includes(r.outDir) && !(ctx.skippedRuns ?? []).includes(r.outDir));
    out.push(...writtenLines(written, cwd), ...nextLines(written, cwd), statusLine(status, changing, skipped.length));
  }
  return out.join('\n');
}

/** The first line: tokenizer, mask, reasoning, length, template kwargs, time and speed of the command (none without runs). */
function headingLines(results: readonly PrepareResult[]): string[] {
  const r0 = results[0];
  if (!r0) return [];
  const secs = Math.max(...results.map((r) => r.elapsedMs)) / 1000;
  const tokens = results.reduce((a, r) => a + r.totals.totalTokens, 0);
  const speed = secs > 0 ? ` · ${compact(tokens / secs)} tok/s` : '';
  return [
    `tokenizer ${r0.tokenizer.name} · mask ${r0.mask}${r0.reasoning === 'drop' ? ' · reasoning dropped' : ''}${r0.maxLength ? ` · max length ${r0.maxLength}${r0.truncate ? ' (truncate)' : ''}` : ''}` +
      `${Object.keys(r0.templateKwargs).length ? ` · template kwargs ${JSON.stringify(r0.templateKwargs)}` : ''} · ${secs.toFixed(1)} s${speed}`,
    // The backend is said only when auto fell back (the records are the same; the speed is not).
    ...(r0.tokenizer.backendFallback ? [`tokenizer backend: ${backendLine(r0.tokenizer)}`] : []),
    '',
  ];
}

/** The table of files: one row per file with its status word and counts, and a total row when there are several. */
function fileTable(files: readonly FileOfRun[], cwd: string, dry: boolean): string[] {
  const withAmp = files.some(({ f }) => amplificationOf(f) !== undefined);
  const head = [
    'status',
    'file',
    'format',
    dry ? 'rows (sample)' : 'rows',
    'written',
    'to generate',
    'dropped',
    'errored',
    'records',
    'trainable',
    ...(withAmp ? ['amplif.'] : []),
  ];
  const rows = [head];
  for (const { f } of files)
    rows.push([
      f.skipped ? 'SKIPPED' : (f.status ?? 'ok').toUpperCase(),
      show(f.file, cwd),
      f.format,
      num(f.rowsRead),
      num(f.rowsWritten),
      num(f.rowsSetAside),
      num(f.rowsDropped),
      num(f.rowsErrored),
      num(f.recordsWritten),
      pct(f.trainableTokens, f.totalTokens),
      ...(withAmp ? [amplificationOf(f) === undefined ? '–' : `${amplificationOf(f)!.toFixed(2)}×`] : []),
    ]);
  if (files.length > 1) {
    const kept = files.filter(({ f }) => !f.skipped).map(({ f }) => f);
    const sum = (k: 'rowsRead' | 'rowsWritten' | 'rowsSetAside' | 'rowsDropped' | 'rowsErrored' | 'recordsWritten' | 'trainableTokens' | 'totalTokens') =>
      kept.reduce((a, f) => a + f[k], 0);
    rows.push([
      '',
      `total (${kept.length} file${kept.length === 1 ? '' : 's'})`,
      '',
      num(sum('rowsRead')),
      num(sum('rowsWritten')),
      num(sum('rowsSetAside')),
      num(sum('rowsDropped')),
      num(sum('rowsErrored')),
      num(sum('recordsWritten')),
      pct(sum('trainableTokens'), sum('totalTokens')),
      ...(withAmp ? [''] : []),
    ]);
  }
  return table(rows, 3);
}

/**
 * Every warning of the runs once, by code, with its count summed: the data-changing ones, and the notes (template
 * findings for row shapes no file has: listed, but they changed no record).
 */
function mergedWarnings(results: readonly PrepareResult[]): { changing: [string, MergedWarning][]; notes: [string, MergedWarning][] } {
  const warnings = new Map<string, MergedWarning>();
  for (const r of results)
    for (const w of r.warnings ?? []) {
      const e = warnings.get(w.code) ?? {
        count: 0,
        source: w.source,
        meaning: w.meaning || codeMeaning(w.code),
        remedy: w.remedy || codeRemedy(w.code),
        files: new Set(),
      };
      e.count += w.count;
      for (const f of w.files) e.files.add(f);
      warnings.set(w.code, e);
    }
  const noteOf = (w: MergedWarning) => w.source === 'template' && w.files.size === 0;
  return { changing: [...warnings].filter(([, w]) => !noteOf(w)), notes: [...warnings].filter(([, w]) => noteOf(w)) };
}

/** The first three of a list of places, then how many more files. */
function firstPlaces(places: readonly string[]): string {
  return places.length > 3 ? `${places.slice(0, 3).join(', ')}, … ${places.length - 3} more files` : places.join(', ');
}

/** Every data-changing warning once, most frequent first, with its count, where it was found, meaning and remedy. */
function changingWarningLines(changing: [string, MergedWarning][], files: readonly FileOfRun[]): string[] {
  if (!changing.length) return [];
  const out = ['', 'Data-changing warnings (the records differ from what the source holds):'];
  for (const [code, w] of changing.sort((a, b) => b[1].count - a[1].count)) {
    let where = '';
    if (w.source === 'template') {
      where = ' (found by the chat template check; applies to every record of that shape)';
      const names = [...w.files].map((f) => basename(f));
      if (files.length > 1) where = ` (found by the chat template check; applies to every record of that shape in ${firstPlaces(names)})`;
    } else if (files.length > 1) {
      const per = files.flatMap(({ f }) => {
        const n = (f.notes[code] ?? 0) + (f.dropped[code]?.count ?? 0);
        return n && !f.skipped ? [`${basename(f.file)} ${num(n)}`] : [];
      });
      where = ` (${firstPlaces(per)})`;
    }
    out.push(`  ${code} × ${num(w.count)}${where}`, `      ${w.meaning}`);
    if (w.remedy) out.push(`      → ${w.remedy}`);
  }
  return out;
}

/**
 * What each trainer's default length does to the records, when no --trainer chose the length (core/trainers/trainers.ts).
 * Records only: a --format messages run writes conversations, whose length is checked whole (conversation_over_trainer_length).
 */
function trainerLengthLines(results: readonly PrepareResult[]): string[] {
  const untrainered = results.filter((r) => !r.trainer && r.totals.trainerCuts && r.outputs.format !== 'messages');
  const cutLines = trainerCutLines(
    untrainered.reduce((a, r) => addTrainerCuts(a, r.totals.trainerCuts!), emptyTrainerCuts()),
    untrainered.reduce((a, r) => a + r.totals.trainableTokens, 0),
  );
  if (!cutLines.length) return [];
  return [
    '',
    "Trainer lengths (each trainer at its default length would not train all of these records' trainable tokens):",
    ...cutLines.map((l) => `  ${l}`),
    "  → prepare with --trainer specforge|speculators|eagle|modelopt, or --max-length N --long split and set the trainer's length to N",
  ];
}

/** Notes of the chat template and its kwargs (codes.ts settingNote): the same on every file, so once per run. */
function templateNoteLines(notes: [string, MergedWarning][], files: readonly FileOfRun[]): string[] {
  const settingNotes = settingNotesOf(files.map(({ f }) => f));
  if (!notes.length && !settingNotes.length) return [];
  const out = ['', 'Chat template notes (what this template and its kwargs write; not a file status, not a --strict failure):'];
  for (const [code, w] of notes.sort((a, b) => b[1].count - a[1].count)) {
    out.push(`  ${code} × ${num(w.count)} (found by the chat template check; no input row has that shape)`, `      ${w.meaning}`);
    if (w.remedy) out.push(`      → ${w.remedy}`);
  }
  for (const { code, count, files: on } of settingNotes) {
    const per = on.map((x) => `${basename(x.file)} ${num(x.count)}`);
    const where = files.length > 1 ? ` (${firstPlaces(per)})` : '';
    out.push(`  ${code} × ${num(count)}${where}`, `      ${codeMeaning(code)}`);
    if (codeRemedy(code)) out.push(`      → ${codeRemedy(code)}`);
  }
  return out;
}

/** A dry run's estimates for the whole files, from the first rows of each scaled by bytes. */
function dryRunEstimateLines(results: readonly PrepareResult[], cwd: string): string[] {
  const est = results.flatMap((r) => r.dryRun?.files ?? []);
  const sample = results[0]?.dryRun?.sampleRows ?? 0;
  const erows = [['file', 'rows ≈', 'records ≈', 'tokens ≈', 'trainable ≈', 'from']];
  for (const e of est)
    erows.push([
      show(e.file, cwd),
      num(e.rows),
      num(e.records),
      compactNum(e.tokens),
      compactNum(e.trainableTokens),
      e.complete ? 'whole file' : `first ${num(e.rowsSampled)} rows (${pct(e.bytesSampled, e.bytesTotal)} of the bytes)`,
    ]);
  return ['', `Estimates for the whole files (the first ${num(sample)} rows of each, scaled by bytes):`, ...table(erows, 1).map((l) => `  ${l}`)];
}

/** Fields no shape read (issue 12): never dropped in silence, named here and in report.md. */
function unreadFieldLines(files: readonly FileOfRun[], cwd: string): string[] {
  const unreadFiles = files.filter(({ f }) => !f.skipped && Object.keys(f.unreadFields ?? {}).length > 0);
  if (!unreadFiles.length) return [];
  const out = ['', 'Fields not read (neither a known shape field nor metadata; a mapping in eagle3prep.jsonc can read them):'];
  for (const { f } of unreadFiles) {
    const unread = Object.entries(f.unreadFields ?? {});
    out.push(
      `  ${show(f.file, cwd)}: ${unread
        .slice(0, 8)
        .map(([k, v]) => `${k} (${num(v.count)} rows, first line ${v.lines[0]})`)
        .join(', ')}${unread.length > 8 ? `, … ${unread.length - 8} more in report.md` : ''}`,
    );
  }
  return out;
}

/** What the records cost, where exact grouping multiplies the tokens (run/reports/report.ts amplificationLine). */
function costLines(files: readonly FileOfRun[]): string[] {
  const costly = files.filter(({ f, r }) => !f.skipped && (r.grouping ?? 'exact') !== 'merged' && (amplificationOf(f) ?? 0) > AMPLIFICATION_WARN);
  if (!costly.length) return [];
  return [
    '',
    `Cost (amplification over ${AMPLIFICATION_WARN}×):`,
    ...costly.map(({ f, r }) => `  ${basename(f.file)}: ${amplificationLine(f.lengths, r.grouping ?? 'exact', f.totalTokens)}`),
  ];
}

/** Rows dropped as duplicates (--dedup) and rows whose id was renamed because an earlier row used it. */
function duplicateLines(files: readonly FileOfRun[]): string[] {
  const out: string[] = [];
  const dupes = files.reduce((a, { f }) => a + (f.dropped.duplicate?.count ?? 0), 0);
  if (dupes) out.push('', `Duplicates: ${num(dupes)} rows identical to an earlier conversation of the run were dropped (--dedup; lines in report.md).`);
  const dupIds = files.reduce((a, { f }) => a + (f.skipped ? 0 : (f.notes.duplicate_id_renamed ?? 0)), 0);
  if (dupIds)
    out.push(
      '',
      `Duplicate ids: ${num(dupIds)} rows reuse an id used earlier in the run; their records and prompts are named <id>~2, <id>~3, … (note duplicate_id_renamed).`,
    );
  return out;
}

/** The first errors of files with errored rows. */
function erroredRowLines(files: readonly FileOfRun[], cwd: string): string[] {
  const out: string[] = [];
  for (const { f } of files) {
    if (!f.rowsErrored || f.skipped) continue;
    const shown = f.errors.slice(0, 3);
    out.push('', `Errored rows in ${show(f.file, cwd)} (${num(f.rowsErrored)}${f.rowsErrored > shown.length ? `, first ${shown.length}` : ''}):`);
    for (const e of shown) out.push(`  line ${e.line}: ${e.message.split('\n')[0].slice(0, 200)}`);
  }
  return out;
}

/** The failures of the runs not skipped, and the files --skip-failed-files left out (first line of each). */
function failureLines(failures: readonly string[], skipped: NonNullable<PrepareResult['skippedFiles']>): string[] {
  const out: string[] = [];
  if (failures.length) out.push('', 'Failed:', ...failures.map((f) => `  ${f.split('\n')[0]}`));
  if (skipped.length) out.push('', 'Skipped (--skip-failed-files; not in the outputs):', ...skipped.map((s) => `  ${s.reason.split('\n')[0]}`));
  return out;
}

/** A shard run accepts a file with nothing in its share of the rows; the merge fails it when no shard has any. */
function emptyInShardLines(results: readonly PrepareResult[], cwd: string): string[] {
  const emptyInShard = results.flatMap((r) =>
    r.shard && !r.shard.merged && r.shard.count > 1
      ? r.files.filter((f) => !f.skipped && !f.failure && f.rowsRead > 0 && f.recordsWritten === 0 && f.rowsSetAside === 0)
      : [],
  );
  if (!emptyInShard.length) return [];
  return [
    '',
    'Nothing from these files in this shard (merge-reports fails a file no shard has a record or prompt of, unless --allow-empty or --skip-failed-files):',
    ...emptyInShard.map((f) => `  ${show(f.file, cwd)}: ${num(f.rowsRead)} rows read, no record, no prompt`),
  ];
}

/** The closing line of a failed command: nothing was written, and the flags that would let the rest through. */
function failedLine(results: readonly PrepareResult[], ctx: SummaryContext, fileCount: number, failures: readonly string[], skippedCount: number): string {
  const others = results.length + skippedCount > 1 || fileCount > 1 || results.some((r) => r.notProcessed?.length);
  const empty = failures.some((f) => /: no record written and no prompt set aside/.test(f));
  const ways = [
    ...(others && !ctx.skipFailedFiles ? ['--skip-failed-files to write the other files and list the failed ones as skipped'] : []),
    ...(empty && !ctx.allowEmpty ? ['--allow-empty to accept a file that yields nothing'] : []),
  ];
  return `FAILED: nothing was written; the output folders keep their previous files.` + (ways.length ? ` Run again with ${ways.join(', or ')}.` : '');
}

/** What the written runs hold: the output folders and files, the conversation files, and files removed or kept. */
function writtenLines(written: readonly PrepareResult[], cwd: string): string[] {
  const folders = written.map((r) => show(r.outDir, cwd));
  const lines = [
    `Outputs: ${folders.length === 1 ? `${folders[0]}/` : `<input-name>.eagle3/ beside each input (${folders.length} folders)`} — ${outputNames(written)}`,
  ];
  // --format messages: the conversation files, what EAGLE's leaves out, and whose masking applies.
  for (const r of written) lines.push(...conversationsLines(r).map((l, i) => (i === 0 ? `Conversations: ${l}` : `  ${l}`)));
  const removed = written.flatMap((r) => r.outputs.removed ?? []);
  if (removed.length)
    lines.push(
      `Removed: ${removed.map((p) => show(p, cwd)).join(', ')} — ${[...new Set(written.map((r) => removedReason(r.outDir, r.outputs.removed ?? [], r.outputs.format)).filter(Boolean))].join('; ')}, so they are not taken for this run's`,
    );
  const kept = written.flatMap((r) => r.outputs.kept ?? []);
  if (kept.length) lines.push(`Kept: ${kept.map((p) => show(p, cwd)).join(', ')} — ${KEPT_REASON}`);
  return lines;
}

/** What to do next: answer the prompts set aside (prompt lines, not set-aside rows), then the trainer's command (--trainer). */
function nextLines(written: readonly PrepareResult[], cwd: string): string[] {
  const lines: string[] = [];
  // Prompt lines, not set-aside rows: a written row can set a conversation aside too (split_part_set_aside).
  const prompts = written.reduce((a, r) => a + promptLines(r), 0);
  if (prompts) {
    // Only a prompts file the command wrote is named (merge-reports without --data writes the reports only).
    const wrote = (r: PrepareResult) => r.outputs.written === undefined || r.outputs.written.includes(r.outputs.promptsToGenerate);
    const holders = written.filter((r) => promptLines(r) > 0);
    const where = holders.filter(wrote).map((r) => show(r.outputs.promptsToGenerate, cwd));
    const elsewhere = holders.filter((r) => !wrote(r)).reduce((a, r) => a + promptLines(r), 0);
    if (where.length)
      lines.push(
        `Next: ${num(prompts - elsewhere)} ${prompts - elsewhere === 1 ? 'prompt (a prompt-only conversation) awaits its answer' : 'prompts (prompt-only conversations) await answers'}: eagle3-prep generate ${where[0]} --server URL${where.length > 1 ? ` (and ${where.length - 1} more)` : ''}`,
      );
    if (elsewhere)
      lines.push(
        `Next: ${num(elsewhere)} ${elsewhere === 1 ? 'prompt (a prompt-only conversation) awaits its answer' : 'prompts (prompt-only conversations) await answers'} in prompts_to_generate.jsonl files this command did not write (the shards' folders; merge-reports --data merges them), then eagle3-prep generate <file> --server URL`,
      );
  }
  // The next command for the trainer the records were made for (--trainer).
  for (const r of written) lines.push(...nextStepsOfRun(r));
  return lines;
}

/** The last line of a command that wrote: its status word and why (the warnings counted as the list above counts them). */
function statusLine(status: RunStatus, changing: readonly [string, MergedWarning][], skippedCount: number): string {
  const warningTotal = changing.reduce((a, [, w]) => a + w.count, 0);
  const why =
    status === 'ok'
      ? 'every row written or set aside as it is'
      : status === 'warnings'
        ? [
            // Counted as the list above counts them (occurrences, the sum of the × counts), not as codes.
            ...(changing.length ? [`${num(warningTotal)} data-changing warning${warningTotal === 1 ? '' : 's'} (${warningCounts(changing)}; above)`] : []),
            ...(skippedCount ? [`${skippedCount} file${skippedCount === 1 ? '' : 's'} skipped`] : []),
          ].join(', ') || 'data-changing warnings (above)'
        : 'rows errored (above); they are not in the outputs';
  return `Status: ${status.toUpperCase()} — ${why}`;
}

/** `code × count` of the first 3 warnings, then how many more. */
function warningCounts(ws: readonly [string, { count: number }][]): string {
  const shown = ws.slice(0, 3).map(([code, w]) => `${code} × ${num(w.count)}`);
  return ws.length > 3 ? `${shown.join(', ')}, … ${ws.length - 3} more` : shown.join(', ');
}

/** The status of a command's runs: `failed` when one failed and was not skipped, else the worst of the written runs'. */
export function commandStatus(results: readonly PrepareResult[], ctx: SummaryContext = {}): RunStatus {
  const skippedRuns = new Set(ctx.skippedRuns ?? []);
  if (results.some((r) => !r.ok && !skippedRuns.has(r.outDir))) return 'failed';
  const kept = results.filter((r) => !skippedRuns.has(r.outDir));
  if (kept.length === 0) return 'failed';
  const s = worstStatus(kept.map((r) => r.status ?? 'ok'));
  return s === 'ok' && skippedRuns.size > 0 ? 'warnings' : s;
}

/** One run's summary (merge-reports). */
export function formatRunSummary(r: PrepareResult, ctx: SummaryContext = {}): string {
  return formatSummary([r], ctx);
}
