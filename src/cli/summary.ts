/**
 * The terminal summary of `prepare` and `merge-reports`.
 */
import type { PrepareResult } from '../core/run/pipeline';
import { amplificationLine } from '../core/run/report';

/** One run's summary: status, folder, per-file accounting and failures. */
export function formatRunSummary(r: PrepareResult): string {
  const lines = [`${r.ok ? 'OK' : 'FAILED'}  ${r.outDir}  (tokenizer ${r.tokenizer.name}, mask ${r.mask})`];
  for (const f of r.files) {
    const drops = Object.entries(f.dropped)
      .map(([k, v]) => `${k} ${v.count}`)
      .join(', ');
    lines.push(
      `  ${f.file}\n    format ${f.format}; rows ${f.rowsRead}: written ${f.rowsWritten} (${f.recordsWritten} records, ${f.trainableTokens}/${f.totalTokens} tokens trainable), ` +
        `to generate ${f.rowsSetAside}, dropped ${f.rowsDropped}${drops ? ` (${drops})` : ''}, errored ${f.rowsErrored}`,
    );
    const amp = amplificationLine(f.lengths, r.grouping ?? 'exact', f.totalTokens);
    if (amp) lines.push(`    ${amp}`);
    // Fields no shape read (issue 12): never dropped in silence, named here and in report.md.
    const unread = Object.entries(f.unread_fields ?? {});
    if (unread.length)
      lines.push(
        `    fields not read: ${unread
          .slice(0, 8)
          .map(([k, v]) => `${k} (${v.count} rows, first line ${v.lines[0]})`)
          .join(', ')}${unread.length > 8 ? ', …' : ''} — see report.md`,
      );
    for (const e of f.errors.slice(0, 5)) lines.push(`    line ${e.line}: ${e.message.split('\n')[0]}`);
  }
  for (const fl of r.failures) lines.push(`  error: ${fl}`);
  return lines.join('\n');
}

/** The summary of several runs (one per output folder). */
export function formatSummary(results: readonly PrepareResult[]): string {
  return results.map(formatRunSummary).join('\n');
}
