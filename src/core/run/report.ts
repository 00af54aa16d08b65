/**
 * `report.json` and `report.md`: what a run read, wrote, set aside, dropped
 * and errored, per input file, with the settings that produced it.
 */
import { relative } from 'node:path';
import { CODES } from '../codes';
import { writeFileAtomic } from './output';
import { OUTPUT_FILES } from './outputFiles';
import type { FileReport, PrepareResult } from './contract';

/** What each drop reason, error and note code means, for the readable report (from the one code table, `core/codes.ts`). */
export const REASON_TEXT: Readonly<Record<string, string>> = Object.freeze(Object.fromEntries(Object.entries(CODES).map(([k, v]) => [k, v.meaning])));

function pct(a: number, b: number): string {
  return b === 0 ? '–' : `${((100 * a) / b).toFixed(1)} %`;
}

function fileSection(f: FileReport, base: string): string {
  const rel = relative(base, f.file) || f.file;
  const lines = [
    `## ${rel}`,
    '',
    `Format: **${f.format}**`,
    '',
    ...f.evidence.map((e) => `- ${e}`),
    '',
    '| rows read | written | set aside (to generate) | dropped | errored | records | tokens | trainable |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${f.rowsRead} | ${f.rowsWritten} | ${f.rowsSetAside} | ${f.rowsDropped} | ${f.rowsErrored} | ${f.recordsWritten} | ${f.totalTokens} | ${f.trainableTokens} (${pct(f.trainableTokens, f.totalTokens)}) |`,
    '',
  ];
  if (Object.keys(f.dropped).length) {
    lines.push('Dropped:', '');
    for (const [k, v] of Object.entries(f.dropped))
      lines.push(`- \`${k}\` × ${v.count} (lines ${v.lines.join(', ')}${v.count > v.lines.length ? ', …' : ''}): ${REASON_TEXT[k] ?? ''}`);
    lines.push('');
  }
  if (f.errors.length) {
    lines.push(`Errored (${f.rowsErrored}${f.rowsErrored > f.errors.length ? `, first ${f.errors.length}` : ''}):`, '');
    for (const [k, v] of Object.entries(f.errorReasons ?? {}))
      lines.push(`- \`${k}\` × ${v.count} (lines ${v.lines.join(', ')}${v.count > v.lines.length ? ', …' : ''}): ${REASON_TEXT[k] ?? ''}`);
    for (const e of f.errors) lines.push(`- line ${e.line}: ${e.message.replace(/\n/g, ' ')}`);
    lines.push('');
  }
  if (Object.keys(f.notes).length) {
    lines.push('Notes:', '');
    for (const [k, v] of Object.entries(f.notes)) lines.push(`- \`${k}\` × ${v}${REASON_TEXT[k] ? `: ${REASON_TEXT[k]}` : ''}`);
    lines.push('');
  }
  return lines.join('\n');
}

function templateCheckSection(r: PrepareResult): string[] {
  const c = r.templateCheck;
  if (!c) return [];
  const out = [
    '## Chat template',
    '',
    `- Prefix-stable: ${c.prefixStable ? 'yes (one record per conversation)' : 'no — the template rewrites earlier turns; conversations split into several records'}`,
    `- End-of-turn token trained: ${c.endOfTurnTrained.map((t) => `\`${t}\``).join(', ') || 'none found'}; text after it (not trained): ${c.textAfterEndOfTurn.map((t) => `\`${JSON.stringify(t)}\``).join(', ') || '–'}`,
    `- Default system prompt injected: ${c.defaultSystemPrompt ? `\`${JSON.stringify(c.defaultSystemPrompt)}\`` : 'none'}`,
    `- Generation prompt scaffold (never trained): ${c.generationPromptScaffold ? `\`${JSON.stringify(c.generationPromptScaffold)}\`` : 'none'}`,
  ];
  for (const w of c.warnings) out.push(`- ⚠ ${w.probe ? `${w.probe}: ` : ''}\`${w.code}\` ${w.message.replace(/\n/g, ' ')}`);
  out.push('', 'Details: `eagle3-prep check-template --tokenizer <dir>` shows the probe renders with their trainable spans.', '');
  return out;
}

/** Renders the readable report (Markdown) of a run. */
export function renderReportMarkdown(r: PrepareResult): string {
  const t = r.totals;
  const head = [
    '# EAGLE-3 prepare report',
    '',
    r.ok ? '**Status: OK**' : `**Status: FAILED**\n\n${r.failures.map((f) => `- ${f}`).join('\n')}`,
    '',
    `- Tokenizer: ${r.tokenizer.name} — \`${r.tokenizer.dir}\` (sha256 ${r.tokenizer.hash})`,
    `- Mask policy: \`${r.mask}\`; max length: ${r.maxLength ?? 'none'}${r.truncate ? ' (truncate)' : ''}`,
    `- Template kwargs: \`${JSON.stringify(r.templateKwargs)}\``,
    `- Outputs: \`${OUTPUT_FILES.tokenizedData}\` (${t.recordsWritten} records), \`${OUTPUT_FILES.promptsToGenerate}\` (${t.rowsSetAside} prompts)`,
    `- Time: ${(r.elapsedMs / 1000).toFixed(1)} s${r.shard?.merged ? ' (slowest shard)' : ''}`,
    ...(r.shard
      ? [
          r.shard.merged
            ? `- Merged from ${r.shard.count} shards (\`eagle3-prep merge-reports\`); every row of every file was read by exactly one shard`
            : `- Shard ${r.shard.index}/${r.shard.count}: the rows whose run-wide index k has k mod ${r.shard.count} = ${r.shard.index}; combine the shards with \`eagle3-prep merge-reports\``,
        ]
      : []),
    '',
    ...templateCheckSection(r),
    '## Totals',
    '',
    '| files | rows read | written | set aside | dropped | errored | records | tokens | trainable |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| ${r.files.length} | ${t.rowsRead} | ${t.rowsWritten} | ${t.rowsSetAside} | ${t.rowsDropped} | ${t.rowsErrored} | ${t.recordsWritten} | ${t.totalTokens} | ${t.trainableTokens} (${pct(t.trainableTokens, t.totalTokens)}) |`,
    '',
  ];
  return head.join('\n') + '\n' + r.files.map((f) => fileSection(f, r.outDir + '/..')).join('\n') + '\n';
}

/** Writes `report.json` (the {@link PrepareResult}, 2-space JSON) and `report.md`, atomically. */
export async function writeReports(r: PrepareResult): Promise<void> {
  await writeFileAtomic(r.outputs.reportJson, JSON.stringify(r, null, 2) + '\n');
  await writeFileAtomic(r.outputs.reportMd, renderReportMarkdown(r));
}
