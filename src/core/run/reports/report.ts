/**
 * `report.json` and `report.md`: what a run read, wrote, set aside, dropped
 * and errored, per input file, with the settings that produced it.
 */
import { conversationsLines } from './conversationsNote';
import { readFileSync } from 'node:fs';
import { basename, relative } from 'node:path';
import { CODES, codeMeaning, codeRemedy } from '../../codes';
import { writeFileAtomic } from '../outputs/output';
import { promptLines } from './promptLines';
import {
  CONVERSATIONS_FILE,
  CONVERSATIONS_SHAREGPT_FILE,
  KEPT_REASON,
  OUTPUT_FILES,
  recordsPathIn,
  removedReason,
  SPECULATORS_DIR,
  TOKEN_COUNTS_FILE,
  TOKENIZED_DATA_PARQUET,
} from '../outputFiles';
import { fromSnakeJson, toSnakeJson } from './jsonCase';
import type { FileReport, PrepareResult, RunStatus, RunWarning } from '../contract';
import { isTemplateNote, settingNotesOf } from './status';
import type { Distribution, LengthStats } from '../stats';
import { nextStepsOfRun } from './nextSteps';
import { TRAINER_IDS, TRAINERS, type TrainerCuts } from '../../trainers/trainers';
import { reportedSettings, runSettingSpec, runSettingsOfReport, shown, type RunSettings } from '../runSettings';
import { groupedInt } from '../../numberText';

/** How a run's log, summary and report.md name the tokenizer backend that ran, with the reason of a fallback. */
export function backendLine(t: Pick<PrepareResult['tokenizer'], 'backend' | 'backendFallback'>): string {
  const name = t.backend === 'rust' ? 'Rust (tokenizers binding)' : 'JavaScript';
  return t.backendFallback ? `${name}, because ${t.backendFallback}` : name;
}

/**
 * Version of the `report.json` schema (docs/outputs.md "report.json"): 2 = snake_case
 * keys with `schema_version`, `status`, `warnings`. Reports without
 * `schema_version` are version 1 (camelCase, written before 0.2).
 */
export const REPORT_SCHEMA_VERSION = 2;

/**
 * The `report.json` document of a run: snake_case, `schema_version` first. The CLI's `--json` prints the same.
 * A `--format messages` run (or a merge of such shards: `outputs.conversations` set) writes no records file, so
 * `outputs.tokenized_data` is left out ({@link parseReport} puts the path back in memory).
 */
export function reportToJson(r: PrepareResult): Record<string, unknown> {
  if (r.outputs.conversations === undefined) return toSnakeJson(r, REPORT_SCHEMA_VERSION);
  const { tokenizedData: _t, ...outputs } = r.outputs;
  return toSnakeJson({ ...r, outputs } as unknown as PrepareResult, REPORT_SCHEMA_VERSION);
}

/** A `report.json` that cannot be read or is not a report; the message names the file. */
export class ReportReadError extends Error {}

/** A report read back: the in-memory shape, and the schema version it was written with. */
export interface ReadReport {
  report: PrepareResult;
  /** 1 for reports of earlier versions (camelCase, no status): readable, but older than this version's runs. */
  schemaVersion: number;
}

/**
 * Turns parsed `report.json` data into the in-memory {@link PrepareResult}:
 * schema 2 (snake_case) converted at this boundary; schema 1 (camelCase, no
 * `schema_version`) taken as it is. The one reader of reports: merge-reports,
 * the Datasets view, Problems and the tests all go through it.
 * @param where the file, for error messages
 * @throws ReportReadError when the data is not an eagle3-prep report
 */
export function parseReport(data: unknown, where = 'report.json'): ReadReport {
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new ReportReadError(`${where}: not an eagle3-prep report.json (not a JSON object)`);
  const o = data as Record<string, unknown>;
  const v = o.schema_version;
  let report: PrepareResult;
  let schemaVersion: number;
  if (v === undefined) {
    report = o as unknown as PrepareResult;
    schemaVersion = 1;
  } else if (typeof v === 'number' && Number.isInteger(v) && v >= 2) {
    report = fromSnakeJson<PrepareResult>(o);
    schemaVersion = v;
  } else throw new ReportReadError(`${where}: unknown schema_version ${JSON.stringify(v)}`);
  if (!Array.isArray(report.files) || !report.totals || !report.outputs || typeof report.ok !== 'boolean')
    throw new ReportReadError(`${where}: not an eagle3-prep report.json (no files, totals or outputs)`);
  // A --format messages report names no records file (reportToJson): where a run in its folder would put it.
  if (typeof report.outputs.tokenizedData !== 'string' && typeof report.outDir === 'string')
    report = { ...report, outputs: { ...report.outputs, tokenizedData: recordsPathIn(report.outDir, OUTPUT_FILES.tokenizedData) } };
  return { report, schemaVersion };
}

/**
 * Reads a `report.json` file (see {@link parseReport}).
 * @throws ReportReadError naming the file when it cannot be read, is not JSON or not a report
 */
export function readReport(path: string): ReadReport {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ReportReadError(`${path}: cannot be read: ${(e as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ReportReadError(`${path}: not JSON: ${(e as Error).message}`);
  }
  return parseReport(data, path);
}

/** The word a status is shown as: `OK`, `WARNINGS`, `DEGRADED`, `FAILED`. */
export function statusWord(s: RunStatus | undefined): string {
  return (s ?? 'ok').toUpperCase();
}

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
  return groupedInt(Math.round(n));
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
    `Status: **${statusWord(f.status)}**${f.skipped ? ` — skipped (--skip-failed-files): none of its rows are in the outputs${f.leftOut ? ` (${f.leftOut.rowsWritten} rows, ${f.leftOut.recordsWritten} records and ${f.leftOut.rowsSetAside} prompts left out)` : ''}` : ''}${f.failure ? `\n\n${f.failure}` : ''}`,
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
  const unread = Object.entries(f.unreadFields ?? {});
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

/**
 * The record files of a run's format, as Markdown code spans of their paths in the output folder
 * (`data/tokenized_data.jsonl`; `tokenized_data.jsonl` for reports made before `format`), and the
 * speculators dataset folder of a `--trainer speculators` run.
 */
function recordFiles(r: PrepareResult): string {
  const f = r.outputs.format ?? 'jsonl';
  const rel = (p: string | undefined, name: string) => (p ? relative(r.outDir, p) || name : name);
  const names = [
    ...(f !== 'parquet' ? [rel(r.outputs.tokenizedData, OUTPUT_FILES.tokenizedData)] : []),
    ...(f !== 'jsonl' ? [rel(r.outputs.tokenizedDataParquet, TOKENIZED_DATA_PARQUET)] : []),
    ...(r.outputs.speculatorsDataset ? [`${rel(r.outputs.speculatorsDataset, SPECULATORS_DIR)}/`] : []),
  ];
  return names.map((n) => `\`${n}\``).join(' and ');
}

/** Renders the readable report (Markdown) of a run. */
export function renderReportMarkdown(r: PrepareResult): string {
  const t = r.totals;
  // The totals count the files kept, as the terminal's "total (N files)" does; skipped files are named beside.
  const skippedCount = r.files.filter((f) => f.skipped).length;
  const keptFiles = r.files.length - skippedCount;
  const head = [
    '# EAGLE-3 prepare report',
    '',
    `**Status: ${statusWord(r.status ?? (r.ok ? 'ok' : 'failed'))}**`,
    '',
    ...(r.ok ? [] : [...r.failures.map((f) => `- ${f}`), '']),
    ...warningsSection(r),
    `- Tokenizer: ${r.tokenizer.name} — \`${r.tokenizer.dir}\` (files hash \`${r.tokenizer.hash}\`: the first 16 hex digits of a SHA-256 over its tokenizer and template files)`,
    ...(r.tokenizer.backend ? [`- Tokenizer backend: ${backendLine(r.tokenizer)} (the records are the same with either backend)`] : []),
    `- Mask policy: \`${r.mask}\`; reasoning: \`${r.reasoning ?? 'keep'}\`; grouping: \`${r.grouping ?? 'exact'}\`; max length: ${r.maxLength ?? 'none'}${r.maxLength !== null ? ` (longer records: ${r.long ?? (r.truncate ? 'truncate' : 'drop')})` : ''}${(r.minTrainableTokens ?? 1) > 1 ? `; min trainable tokens per record: ${r.minTrainableTokens}` : ''}${newerSettingsText(r)}`,
    `- Template kwargs: \`${JSON.stringify(r.templateKwargs)}\``,
    `- Outputs: ${
      r.outputs.format === 'messages'
        ? `\`${CONVERSATIONS_FILE}\`${r.outputs.conversationsSharegpt ? ` and \`${CONVERSATIONS_SHAREGPT_FILE}\`` : ''} (\`--format messages\`: no records; the ${t.recordsWritten} records counted are what the rules would train)`
        : `${recordFiles(r)} (${t.recordsWritten} records)`
    }, \`${OUTPUT_FILES.promptsToGenerate}\` (${promptLines(r)} prompts)${r.tokenCounts ? `, \`${TOKEN_COUNTS_FILE}\` (token-id counts for \`eagle3-prep draft-vocab\`)` : ''}`,
    ...conversationsLines(r).map((l, i) => (i === 0 ? `- Conversations: ${l}` : `  ${l}`)),
    ...(r.outputs.removed?.length
      ? [
          `- Removed: ${r.outputs.removed.map((p) => `\`${relative(r.outDir, p) || basename(p)}\``).join(', ')} — ${removedReason(r.outDir, r.outputs.removed, r.outputs.format, true)}, so they are not taken for this run's`,
        ]
      : []),
    ...(r.outputs.kept?.length ? [`- Kept: ${r.outputs.kept.map((p) => `\`${relative(r.outDir, p) || basename(p)}\``).join(', ')} — ${KEPT_REASON}`] : []),
    `- Time: ${(r.elapsedMs / 1000).toFixed(1)} s${r.shard?.merged ? ' (slowest shard)' : ''}${r.throughput ? `; ${groupedInt(r.throughput.tokensPerSecond)} tokens/s, ${groupedInt(r.throughput.rowsPerSecond)} rows/s${r.shard?.merged ? " (all shards over the slowest one's time)" : ''}` : ''}`,
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
    `| ${keptFiles}${skippedCount ? ` (+${skippedCount} skipped)` : ''} | ${t.rowsRead} | ${t.rowsWritten} | ${t.rowsSetAside} | ${t.rowsDropped} | ${t.rowsErrored} | ${t.recordsWritten} | ${t.totalTokens} | ${t.trainableTokens} (${pct(t.trainableTokens, t.totalTokens)}) |`,
    '',
    ...lengthSection(t.lengths, r.grouping ?? 'exact', t.totalTokens),
    ...trainerSection(r),
  ];
  return head.join('\n') + '\n' + r.files.map((f) => fileSection(f, r.outDir + '/..', r.grouping ?? 'exact')).join('\n') + '\n';
}

const LENGTH_RULE_TEXT = {
  'truncate-skip': 'keeps the first tokens; skips a record left with nothing to train',
  'truncate-keep': 'keeps the first tokens; keeps a record left with nothing to train',
  drop: 'leaves a longer record out',
} as const;

/**
 * "Trainer lengths": what each trainer's default length does to the written records (a table), and
 * for a run made for one trainer (`--trainer`) the commands that follow.
 */
/** `; <label>: <value>` for each setting newer than the report's own fields that the run set (runSettings.ts `reportedSettings`). */
function newerSettingsText(r: PrepareResult): string {
  const set = reportedSettings(runSettingsOfReport(r));
  return (Object.keys(set) as (keyof RunSettings)[]).map((k) => `; ${runSettingSpec(k).label}: ${shown(set[k])}`).join('');
}

function trainerSection(r: PrepareResult): string[] {
  // Records only: a --format messages run writes conversations, whose length is checked whole (conversation_over_trainer_length).
  const cuts: TrainerCuts | undefined = r.outputs.format === 'messages' ? undefined : r.totals.trainerCuts;
  const out: string[] = [];
  if (cuts) {
    const trainable = r.totals.trainableTokens;
    out.push(
      '## Trainer lengths',
      '',
      r.trainer
        ? `Made for ${TRAINERS[r.trainer].name} (\`--trainer ${r.trainer}\`, max length ${r.maxLength ?? 'none'}). What each trainer's default length would do to these records:`
        : "What each trainer's default length does to these records (set the trainer's length, or prepare with `--trainer`, to train them whole):",
      '',
      '| trainer | length setting | default | at a longer record | records longer | records trained not at all | trainable tokens not trained |',
      '| --- | --- | ---: | --- | ---: | ---: | ---: |',
      ...TRAINER_IDS.map((id) => {
        const c = cuts[id];
        const tr = TRAINERS[id];
        return `| ${tr.name} | \`${tr.lengthSetting}\` | ${c ? c.length : '–'} | ${LENGTH_RULE_TEXT[tr.rule]} | ${c ? fmtInt(c.recordsOver) : '–'} | ${c ? fmtInt(c.recordsUntrained) : '–'} | ${c ? `${fmtInt(c.trainableLost)} of ${fmtInt(trainable)} (${pct(c.trainableLost, trainable)})` : '–'} |`;
      }),
      '',
    );
  }
  if (r.trainer && r.maxLength && r.ok) out.push(`## Train with ${TRAINERS[r.trainer].name}`, '', '```', ...nextStepsOfRun(r), '```', '');
  return out;
}

function warningsSection(r: PrepareResult): string[] {
  const out: string[] = [];
  if (r.skippedFiles?.length) {
    out.push('Skipped files (--skip-failed-files; not in the outputs):', '');
    for (const s of r.skippedFiles) out.push(`- ${s.reason}`);
    out.push('');
  }
  const line = (w: RunWarning) =>
    `- \`${w.code}\` × ${w.count}${w.source === 'template' ? ' (chat template check, probes)' : ''}: ${w.meaning}${w.remedy ? `. **What to do:** ${w.remedy}` : ''}`;
  const warnings = (r.warnings ?? []).filter((w) => !isTemplateNote(w));
  const notes = (r.warnings ?? []).filter(isTemplateNote);
  if (warnings.length) out.push('Data-changing warnings (the records differ from what the source holds):', '', ...warnings.map(line), '');
  // Notes of the template and its kwargs (codes.ts settingNote), counted over the files: once per run.
  const settingLines = settingNotesOf(r.files).map(
    ({ code, count }) => `- \`${code}\` × ${count}: ${codeMeaning(code)}${codeRemedy(code) ? `. **What to do:** ${codeRemedy(code)}` : ''}`,
  );
  if (notes.length || settingLines.length)
    out.push(
      'Chat template notes (what this template and its kwargs write, or found by the template check for row shapes none of these files has; not a file status):',
      '',
      ...notes.map(line),
      ...settingLines,
      '',
    );
  return out;
}

/** Writes `report.json` ({@link reportToJson}, 2-space JSON) and `report.md`, atomically. */
export async function writeReports(r: PrepareResult): Promise<void> {
  await writeFileAtomic(r.outputs.reportJson, JSON.stringify(reportToJson(r), null, 2) + '\n');
  await writeFileAtomic(r.outputs.reportMd, renderReportMarkdown(r));
}
