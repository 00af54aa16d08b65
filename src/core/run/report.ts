/**
 * `report.json` and `report.md`: what a run read, wrote, set aside, dropped
 * and errored, per input file, with the settings that produced it.
 */
import { relative } from 'node:path';
import { CODES } from '../codes';
import { writeFileAtomic } from './output';
import { OUTPUT_FILES, TOKEN_COUNTS_FILE } from './outputFiles';
import type { FileReport, PrepareResult } from './contract';
import type { Distribution, LengthStats } from './stats';

/** Exact grouping costing more than this many times the conversations rendered once gets the merged figure named (issue 13). */
export const AMPLIFICATION_WARN = 2;

/**
 * One line on what the records cost: the amplification (record tokens ÷ tokens of the
 * conversations rendered once) and, when grouping `exact` costs more than {@link AMPLIFICATION_WARN}×,
 * what `--grouping merged` would write. Empty when nothing was written.
 */
export function amplificationLine(l: LengthStats | undefined, grouping: string, totalTokens: number): string {
  if (!l || l.amplification === null) return '';
  const a = l.amplification;
  let s = `amplification ${a.toFixed(2)}× (${fmtInt(totalTokens)} record tokens for ${fmtInt(l.renderedTokens)} tokens of the conversations rendered once)`;
  if (grouping !== 'merged' && a > AMPLIFICATION_WARN)
    s += `; --grouping merged would write about ${fmtInt(l.renderedTokens)} tokens (1.0×): one record per conversation, each turn in its final history form`;
  return s;
}

function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function distRow(name: string, d: Distribution): string {
  const v = (x: number | null) => (x === null ? '–' : fmtInt(x));
  return `| ${name} | ${fmtInt(d.count)} | ${d.mean === null ? '–' : d.mean.toFixed(1)} | ${v(d.p50)} | ${v(d.p90)} | ${v(d.p99)} | ${v(d.max)} |`;
}

/** The lengths section of a file or of the totals (Markdown lines). */
function lengthSection(l: LengthStats | undefined, grouping: string, totalTokens: number): string[] {
  if (!l || l.seqLen.count === 0) return [];
  const hist = (d: Distribution) =>
    d.histogram.counts
      .map((c, k) => (c ? `${d.histogram.edges[k]}${k + 1 < d.histogram.edges.length ? `–${d.histogram.edges[k + 1] - 1}` : '+'}: ${fmtInt(c)}` : ''))
      .filter(Boolean)
      .join(', ');
  return [
    `Lengths (${amplificationLine(l, grouping, totalTokens)}):`,
    '',
    '| per record / conversation | count | mean | p50 | p90 | p99 | max |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    distRow('tokens per record (seq_len)', l.seqLen),
    distRow('trainable tokens per record', l.trainableTokens),
    distRow('records per conversation', l.recordsPerConversation),
    '',
    `- seq_len histogram: ${hist(l.seqLen)}`,
    `- trainable tokens histogram: ${hist(l.trainableTokens)}`,
    '- percentiles: nearest rank, read from fixed buckets (exact below 64, at most 1/32 above the exact value), so shard reports merge exactly',
    '',
  ];
}

/** What each drop reason, error and note code means, for the readable report (from the one code table, `core/codes.ts`). */
export const REASON_TEXT: Readonly<Record<string, string>> = Object.freeze(Object.fromEntries(Object.entries(CODES).map(([k, v]) => [k, v.meaning])));

function pct(a: number, b: number): string {
  return b === 0 ? '–' : `${((100 * a) / b).toFixed(1)} %`;
}

function fileSection(f: FileReport, base: string, grouping: string): string {
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
  lines.push(...lengthSection(f.lengths, grouping, f.totalTokens));
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
  const unread = Object.entries(f.unread_fields ?? {});
  if (unread.length) {
    lines.push('Fields not read (neither read by the shape nor known metadata: check whether one holds what the model wrote):', '');
    for (const [k, v] of unread) lines.push(`- \`${k}\` in ${v.count} rows (lines ${v.lines.join(', ')}${v.count > v.lines.length ? ', …' : ''})`);
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
  const a = c.amplification;
  if (a && a.exact !== null && a.merged !== null)
    out.push(
      `- Amplification on the probe conversations: exact ${a.exact.toFixed(2)}×, merged ${a.merged.toFixed(2)}× (record tokens ÷ the conversations rendered once)`,
    );
  for (const w of c.warnings) out.push(`- ⚠ ${w.probe ? `${w.probe}: ` : ''}\`${w.code}\` ${w.message.replace(/\n/g, ' ')}`);
  out.push('', 'Details: `eagle3-prep check-template --tokenizer <dir>` shows the probe renders with their trainable spans.', '');
  return out;
}

/** Lines of `prompts_to_generate.jsonl`: one per set-aside row, plus the extra prompts of rows holding several conversations (`split_part_set_aside`). */
function promptLines(r: PrepareResult): number {
  return r.totals.rowsSetAside + r.files.reduce((a, f) => a + (f.notes.split_part_set_aside ?? 0), 0);
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
    `- Mask policy: \`${r.mask}\`; grouping: \`${r.grouping ?? 'exact'}\`; max length: ${r.maxLength ?? 'none'}${r.maxLength !== null ? ` (longer records: ${r.long ?? (r.truncate ? 'truncate' : 'drop')})` : ''}${(r.minTrainableTokens ?? 1) > 1 ? `; min trainable tokens per record: ${r.minTrainableTokens}` : ''}`,
    `- Template kwargs: \`${JSON.stringify(r.templateKwargs)}\``,
    `- Outputs: \`${OUTPUT_FILES.tokenizedData}\` (${t.recordsWritten} records), \`${OUTPUT_FILES.promptsToGenerate}\` (${promptLines(r)} prompts)${r.tokenCounts ? `, \`${TOKEN_COUNTS_FILE}\` (token-id counts for \`eagle3-prep draft-vocab\`)` : ''}`,
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
    ...lengthSection(t.lengths, r.grouping ?? 'exact', t.totalTokens),
  ];
  return head.join('\n') + '\n' + r.files.map((f) => fileSection(f, r.outDir + '/..', r.grouping ?? 'exact')).join('\n') + '\n';
}

/** Writes `report.json` (the {@link PrepareResult}, 2-space JSON) and `report.md`, atomically. */
export async function writeReports(r: PrepareResult): Promise<void> {
  await writeFileAtomic(r.outputs.reportJson, JSON.stringify(r, null, 2) + '\n');
  await writeFileAtomic(r.outputs.reportMd, renderReportMarkdown(r));
}
