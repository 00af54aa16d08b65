/**
 * The terminal summary of `prepare` and `merge-reports`: one table row per
 * input file with its status word, then every data-changing warning once
 * with its count, meaning and what to do, the first errors of degraded files,
 * failures with the way out, and one status line at the end. The status
 * words are those of `report.md` / `report.json` (`core/run/status.ts`).
 */
import { basename, relative } from 'node:path';
import { codeMeaning, codeRemedy } from '../core/codes';
import type { FileReport, PrepareResult, RunStatus } from '../core/run/contract';
import { AMPLIFICATION_WARN, amplificationLine, backendLine } from '../core/run/report';
import { KEPT_REASON, removedReason, SPECULATORS_DIR } from '../core/run/outputFiles';
import { promptLines } from '../core/run/promptLines';
import { settingNotesOf, worstStatus } from '../core/run/status';
import { nextStepsOfRun } from '../core/run/nextSteps';
import { conversationsLines } from '../core/run/conversationsNote';
import { compact } from './progress';
import { addTrainerCuts, emptyTrainerCuts, trainerCutLines } from '../core/trainers/trainers';

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
  return n.toLocaleString('en-US');
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

/**
 * The summary of a command's runs (one per output folder).
 * @returns lines without a trailing newline
 */
export function formatSummary(results: readonly PrepareResult[], ctx: SummaryContext = {}): string {
  const cwd = ctx.cwd ?? process.cwd();
  const files = results.flatMap((r) => r.files.map((f) => ({ f, r })));
  const withAmp = files.some(({ f }) => amplificationOf(f) !== undefined);
  const dry = ctx.dryRun === true;
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
  const r0 = results[0];
  const out: string[] = [];
  if (r0) {
    const secs = Math.max(...results.map((r) => r.elapsedMs)) / 1000;
    const tokens = results.reduce((a, r) => a + r.totals.totalTokens, 0);
    const speed = secs > 0 ? ` · ${compact(tokens / secs)} tok/s` : '';
    out.push(
      `tokenizer ${r0.tokenizer.name} · mask ${r0.mask}${r0.reasoning === 'drop' ? ' · reasoning dropped' : ''}${r0.maxLength ? ` · max length ${r0.maxLength}${r0.truncate ? ' (truncate)' : ''}` : ''}` +
        `${Object.keys(r0.templateKwargs).length ? ` · template kwargs ${JSON.stringify(r0.templateKwargs)}` : ''} · ${secs.toFixed(1)} s${speed}`,
      // The backend is said only when auto fell back (the records are the same; the speed is not).
      ...(r0.tokenizer.backendFallback ? [`tokenizer backend: ${backendLine(r0.tokenizer)}`] : []),
      '',
    );
  }
  out.push(...table(rows, 3).map((l) => `  ${l}`));

  // Every data-changing warning once, with its count, meaning and remedy.
  const warnings = new Map<string, { count: number; source: string; meaning: string; remedy?: string; files: Set<string> }>();
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
  // Template findings for row shapes no file has are notes: listed, but they changed no record.
  const noteOf = (w: { source: string; files: Set<string> }) => w.source === 'template' && w.files.size === 0;
  const changing = [...warnings].filter(([, w]) => !noteOf(w));
  const notes = [...warnings].filter(([, w]) => noteOf(w));
  if (changing.length) {
    out.push('', 'Data-changing warnings (the records differ from what the source holds):');
    for (const [code, w] of changing.sort((a, b) => b[1].count - a[1].count)) {
      let where = '';
      if (w.source === 'template') {
        where = ' (found by the chat template check; applies to every record of that shape)';
        const names = [...w.files].map((f) => basename(f));
        if (files.length > 1)
          where = ` (found by the chat template check; applies to every record of that shape in ${names.length > 3 ? `${names.slice(0, 3).join(', ')}, … ${names.length - 3} more files` : names.join(', ')})`;
      } else if (files.length > 1) {
        const per = files.flatMap(({ f }) => {
          const n = (f.notes[code] ?? 0) + (f.dropped[code]?.count ?? 0);
          return n && !f.skipped ? [`${basename(f.file)} ${num(n)}`] : [];
        });
        where = ` (${per.length > 3 ? `${per.slice(0, 3).join(', ')}, … ${per.length - 3} more files` : per.join(', ')})`;
      }
      out.push(`  ${code} × ${num(w.count)}${where}`, `      ${w.meaning}`);
      if (w.remedy) out.push(`      → ${w.remedy}`);
    }
  }
  // What each trainer's default length does to the records, when no --trainer chose the length (core/trainers/trainers.ts).
  // Records only: a --format messages run writes conversations, whose length is checked whole (conversation_over_trainer_length).
  const untrainered = results.filter((r) => !r.trainer && r.totals.trainerCuts && r.outputs.format !== 'messages');
  const cutLines = trainerCutLines(
    untrainered.reduce((a, r) => addTrainerCuts(a, r.totals.trainerCuts!), emptyTrainerCuts()),
    untrainered.reduce((a, r) => a + r.totals.trainableTokens, 0),
  );
  if (cutLines.length)
    out.push(
      '',
      "Trainer lengths (each trainer at its default length would not train all of these records' trainable tokens):",
      ...cutLines.map((l) => `  ${l}`),
      "  → prepare with --trainer specforge|speculators|eagle|modelopt, or --max-length N --long split and set the trainer's length to N",
    );
  // Notes of the chat template and its kwargs (codes.ts settingNote): the same on every file, so once per run.
  const settingNotes = settingNotesOf(files.map(({ f }) => f));
  if (notes.length || settingNotes.length) {
    out.push('', 'Chat template notes (what this template and its kwargs write; not a file status, not a --strict failure):');
    for (const [code, w] of notes.sort((a, b) => b[1].count - a[1].count)) {
      out.push(`  ${code} × ${num(w.count)} (found by the chat template check; no input row has that shape)`, `      ${w.meaning}`);
      if (w.remedy) out.push(`      → ${w.remedy}`);
    }
    for (const { code, count, files: on } of settingNotes) {
      const per = on.map((x) => `${basename(x.file)} ${num(x.count)}`);
      const where = files.length > 1 ? ` (${per.length > 3 ? `${per.slice(0, 3).join(', ')}, … ${per.length - 3} more files` : per.join(', ')})` : '';
      out.push(`  ${code} × ${num(count)}${where}`, `      ${codeMeaning(code)}`);
      if (codeRemedy(code)) out.push(`      → ${codeRemedy(code)}`);
    }
  }
  if (dry) {
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
    out.push('', `Estimates for the whole files (the first ${num(sample)} rows of each, scaled by bytes):`, ...table(erows, 1).map((l) => `  ${l}`));
  }
  // Fields no shape read (issue 12): never dropped in silence, named here and in report.md.
  const unreadFiles = files.filter(({ f }) => !f.skipped && Object.keys(f.unreadFields ?? {}).length > 0);
  if (unreadFiles.length) {
    out.push('', 'Fields not read (neither a known shape field nor metadata; a mapping in eagle3prep.jsonc can read them):');
    for (const { f } of unreadFiles) {
      const unread = Object.entries(f.unreadFields ?? {});
      out.push(
        `  ${show(f.file, cwd)}: ${unread
          .slice(0, 8)
          .map(([k, v]) => `${k} (${num(v.count)} rows, first line ${v.lines[0]})`)
          .join(', ')}${unread.length > 8 ? `, … ${unread.length - 8} more in report.md` : ''}`,
      );
    }
  }
  // What the records cost, where exact grouping multiplies the tokens (run/report.ts amplificationLine).
  const costly = files.filter(({ f, r }) => !f.skipped && (r.grouping ?? 'exact') !== 'merged' && (amplificationOf(f) ?? 0) > AMPLIFICATION_WARN);
  if (costly.length) {
    out.push('', `Cost (amplification over ${AMPLIFICATION_WARN}×):`);
    for (const { f, r } of costly) out.push(`  ${basename(f.file)}: ${amplificationLine(f.lengths, r.grouping ?? 'exact', f.totalTokens)}`);
  }
  const dupes = files.reduce((a, { f }) => a + (f.dropped.duplicate?.count ?? 0), 0);
  if (dupes) out.push('', `Duplicates: ${num(dupes)} rows identical to an earlier conversation of the run were dropped (--dedup; lines in report.md).`);
  const dupIds = files.reduce((a, { f }) => a + (f.skipped ? 0 : (f.notes.duplicate_id_renamed ?? 0)), 0);
  if (dupIds)
    out.push(
      '',
      `Duplicate ids: ${num(dupIds)} rows reuse an id used earlier in the run; their records and prompts are named <id>~2, <id>~3, … (note duplicate_id_renamed).`,
    );

  // The first errors of files with errored rows.
  for (const { f } of files) {
    if (!f.rowsErrored || f.skipped) continue;
    const shown = f.errors.slice(0, 3);
    out.push('', `Errored rows in ${show(f.file, cwd)} (${num(f.rowsErrored)}${f.rowsErrored > shown.length ? `, first ${shown.length}` : ''}):`);
    for (const e of shown) out.push(`  line ${e.line}: ${e.message.split('\n')[0].slice(0, 200)}`);
  }

  // Failures, and what the user can do.
  const skippedRuns = new Set(ctx.skippedRuns ?? []);
  const failures = results.filter((r) => !skippedRuns.has(r.outDir)).flatMap((r) => r.failures);
  const skipped = results.flatMap((r) => r.skippedFiles ?? []);
  if (failures.length) {
    out.push('', 'Failed:');
    for (const f of failures) out.push(`  ${f.split('\n')[0]}`);
  }
  if (skipped.length) {
    out.push('', 'Skipped (--skip-failed-files; not in the outputs):');
    for (const s of skipped) out.push(`  ${s.reason.split('\n')[0]}`);
  }

  // A shard run accepts a file with nothing in its share of the rows; the merge fails it when no shard has any.
  const emptyInShard = results.flatMap((r) =>
    r.shard && !r.shard.merged && r.shard.count > 1
      ? r.files.filter((f) => !f.skipped && !f.failure && f.rowsRead > 0 && f.recordsWritten === 0 && f.rowsSetAside === 0)
      : [],
  );
  if (emptyInShard.length) {
    out.push(
      '',
      'Nothing from these files in this shard (merge-reports fails a file no shard has a record or prompt of, unless --allow-empty or --skip-failed-files):',
    );
    for (const f of emptyInShard) out.push(`  ${show(f.file, cwd)}: ${num(f.rowsRead)} rows read, no record, no prompt`);
  }

  const status = commandStatus(results, ctx);
  const lines = [...out, ''];
  const written = results.filter((r) => r.ok && !(ctx.heldBack ?? []).includes(r.outDir) && !(ctx.skippedRuns ?? []).includes(r.outDir));
  if (dry) lines.push('Dry run: nothing written. Estimates from the first rows of each file are above (report.json "dry_run" with --json).');
  else if (status === 'failed') {
    const others = results.length + skipped.length > 1 || files.length > 1 || results.some((r) => r.notProcessed?.length);
    const empty = failures.some((f) => /: no record written and no prompt set aside/.test(f));
    const ways = [
      ...(others && !ctx.skipFailedFiles ? ['--skip-failed-files to write the other files and list the failed ones as skipped'] : []),
      ...(empty && !ctx.allowEmpty ? ['--allow-empty to accept a file that yields nothing'] : []),
    ];
    lines.push(`FAILED: nothing was written; the output folders keep their previous files.` + (ways.length ? ` Run again with ${ways.join(', or ')}.` : ''));
  } else {
    const folders = written.map((r) => show(r.outDir, cwd));
    lines.push(
      `Outputs: ${folders.length === 1 ? `${folders[0]}/` : `<input-name>.eagle3/ beside each input (${folders.length} folders)`} — ${outputNames(written)}`,
    );
    // --format messages: the conversation files, what EAGLE's leaves out, and whose masking applies.
    for (const r of written) lines.push(...conversationsLines(r).map((l, i) => (i === 0 ? `Conversations: ${l}` : `  ${l}`)));
    const removed = written.flatMap((r) => r.outputs.removed ?? []);
    if (removed.length)
      lines.push(
        `Removed: ${removed.map((p) => show(p, cwd)).join(', ')} — ${[...new Set(written.map((r) => removedReason(r.outDir, r.outputs.removed ?? [], r.outputs.format)).filter(Boolean))].join('; ')}, so they are not taken for this run's`,
      );
    const kept = written.flatMap((r) => r.outputs.kept ?? []);
    if (kept.length) lines.push(`Kept: ${kept.map((p) => show(p, cwd)).join(', ')} — ${KEPT_REASON}`);
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
    const warningTotal = changing.reduce((a, [, w]) => a + w.count, 0);
    const why =
      status === 'ok'
        ? 'every row written or set aside as it is'
        : status === 'warnings'
          ? [
              // Counted as the list above counts them (occurrences, the sum of the × counts), not as codes.
              ...(changing.length ? [`${num(warningTotal)} data-changing warning${warningTotal === 1 ? '' : 's'} (${warningCounts(changing)}; above)`] : []),
              ...(skipped.length ? [`${skipped.length} file${skipped.length === 1 ? '' : 's'} skipped`] : []),
            ].join(', ') || 'data-changing warnings (above)'
          : 'rows errored (above); they are not in the outputs';
    lines.push(`Status: ${status.toUpperCase()} — ${why}`);
  }
  return lines.join('\n');
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
