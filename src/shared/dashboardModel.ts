/**
 * The dataset dashboard's view-model: what a run did to one dataset (or to every
 * prepared dataset of a workspace), as plain data the dashboard webview draws.
 * Built by adapters from what a run left behind — `report.json` (through
 * `readReport.ts`), `problems.jsonl` (error codes) and the length statistics of
 * `tokenized_data.jsonl` (`outputStats.ts`) — so the webview never reads a report.
 * A figure a run did not compute is `null`, and the dashboard says so.
 */
import * as path from 'node:path';
import { CODES, codeMeaning, isDataChanging } from '../core/codes';
import type { FileReport, PrepareResult, RowProblemLine } from '../core/run/contract';
import { distributionOf, niceBinWidth, type Distribution, type OutputStats } from '../core/run/outputs/outputStats';
import type { Distribution as LengthDistribution } from '../core/run/stats';
import { fileStatus, worstStatus } from '../core/run/reports/status';
import { type RunStatus } from '../core/run/contract';

/** The token-length statistics the dashboard draws (read from the written data by `run/outputs/outputStats.ts`). */
export type { Distribution, OutputStats } from '../core/run/outputs/outputStats';

/** One drop reason, error code or data-changing note, with its count. */
export interface ReasonCount {
  code: string;
  kind: 'drop' | 'error' | 'note';
  count: number;
  meaning: string;
  remedy?: string;
  changesData: boolean;
}

/** Token totals of one record grouping (`exact`: one record per stable run of the template; `merged`: see the CLI's `--grouping`). */
export interface GroupingTotals {
  records: number;
  tokens: number;
  trainableTokens: number;
  /** True when derived (≈) rather than written by a run with that grouping. */
  approximate?: boolean;
}

/** Everything the dashboard shows for one dataset of one run. */
export interface DatasetDashboard {
  /** The dataset file (absolute). */
  file: string;
  name: string;
  outDir: string;
  reportJson: string;
  status: RunStatus;
  /** Whether the output is stale, and why (from the Datasets view's output state). */
  staleBecause: string[];
  format: { name: string; evidence: string[] };
  rows: { read: number; written: number; setAside: number; dropped: number; errored: number };
  /** (written + set aside) ÷ read: the share of rows whose content reaches training data. */
  rowsKeptShare: number;
  records: number;
  tokens: { total: number; trainable: number; share: number };
  reasons: ReasonCount[];
  /** Whether every errored row's code is known (problems.jsonl), or only the report's first errors. */
  errorCodesComplete: boolean;
  tokenizer: { name: string; hash: string };
  settings: { mask: string; maxLength: number | null; truncate: boolean; templateKwargs: Record<string, unknown> };
  /** Length statistics, null when neither the report nor the output gives them. */
  stats: OutputStats | null;
  /** Where `stats` came from. */
  statsSource: 'report' | 'tokenized_data.jsonl' | null;
  /** Totals per record grouping: the run's own grouping, and the other one when the run computed it. */
  grouping: { used: 'exact' | 'merged'; exact: GroupingTotals | null; merged: GroupingTotals | null };
  /** Figures this run did not compute (shown as "not computed by this run"). */
  notComputed: string[];
  reportTimeMs?: number;
}

/** The workspace dashboard: every prepared dataset, their totals and their combined statistics. */
export interface WorkspaceDashboard {
  datasets: DatasetDashboard[];
  /** Datasets found but not prepared (names). */
  notPrepared: string[];
  status: RunStatus;
  rows: DatasetDashboard['rows'];
  records: number;
  tokens: DatasetDashboard['tokens'];
  reasons: ReasonCount[];
  stats: OutputStats | null;
  /**
   * The tokenizers the outputs were made with (name, hash, dataset names) and the totals of the outputs
   * each made (records, tokens, trainable tokens: counts of that tokenizer's vocabulary), in first-seen
   * order. More than one: the workspace's token sums add counts of different vocabularies, so the page
   * shows these per-tokenizer totals and says so ({@link tokenizerNote}).
   */
  tokenizers: TokenizerTotals[];
  /** {@link tokenizerNote} of these tokenizers; absent for one. */
  tokenizerNote?: string;
}

/** The outputs one tokenizer made in the workspace: its datasets and their summed counts (one vocabulary). */
export interface TokenizerTotals {
  name: string;
  hash: string;
  datasets: string[];
  records: number;
  tokens: number;
  trainableTokens: number;
}

/**
 * What the workspace dashboard says about its token sums when its outputs were made with more than
 * one tokenizer, e.g. `tokens summed over 2 tokenizers: Qwen3 (a.jsonl, b.jsonl), Llama-3 (c.jsonl) —
 * counts of different vocabularies; prepare with one tokenizer to compare them`; undefined for one.
 */
export function tokenizerNote(w: Pick<WorkspaceDashboard, 'tokenizers'>): string | undefined {
  if (w.tokenizers.length < 2) return undefined;
  const names = w.tokenizers.map((t) => `${t.name}${w.tokenizers.filter((o) => o.name === t.name).length > 1 ? ` ${t.hash}` : ''} (${t.datasets.join(', ')})`);
  return `tokens summed over ${w.tokenizers.length} tokenizers: ${names.join(', ')} — counts of different vocabularies; prepare with one tokenizer to compare them`;
}

/** The model a dashboard panel draws. */
export type DashboardModel = { kind: 'dataset'; dataset: DatasetDashboard } | { kind: 'workspace'; workspace: WorkspaceDashboard };

const share = (a: number, b: number) => (b > 0 ? a / b : 0);

/** Reason counts of a file: drops by reason, errors by code, data-changing notes. */
export function reasonsOf(fr: FileReport, problems?: readonly RowProblemLine[]): { reasons: ReasonCount[]; errorCodesComplete: boolean } {
  const info = (code: string, kind: ReasonCount['kind'], count: number): ReasonCount => ({
    code,
    kind,
    count,
    meaning: codeMeaning(code) || code,
    ...(CODES[code]?.remedy ? { remedy: CODES[code].remedy } : {}),
    changesData: isDataChanging(code) || kind !== 'note',
  });
  const out: ReasonCount[] = [];
  for (const [code, d] of Object.entries(fr.dropped)) out.push(info(code, 'drop', d.count));
  const errors = new Map<string, number>();
  let complete = false;
  if (problems) {
    for (const p of problems) if (p.fate === 'errored') errors.set(p.code, (errors.get(p.code) ?? 0) + 1);
    complete = [...errors.values()].reduce((a, b) => a + b, 0) === fr.rowsErrored;
  }
  if (!complete) {
    errors.clear();
    // Errors the report counts by code (`errorReasons`), then the report's first error messages for
    // the others; the rest as `errored`.
    const counted = new Set(Object.keys(fr.errorReasons ?? {}));
    for (const [code, d] of Object.entries(fr.errorReasons ?? {})) errors.set(code, d.count);
    for (const e of fr.errors) {
      const code = /^unknown role /.test(e.message) ? 'unknown_role' : (/^([a-z][a-z0-9_]+): /.exec(e.message)?.[1] ?? 'errored');
      if (!counted.has(code)) errors.set(code, (errors.get(code) ?? 0) + 1);
    }
    const known = [...errors.values()].reduce((a, b) => a + b, 0);
    if (fr.rowsErrored > known) errors.set('errored', (errors.get('errored') ?? 0) + fr.rowsErrored - known);
    complete = fr.rowsErrored === 0;
  }
  for (const [code, n] of errors) out.push(info(code, 'error', n));
  for (const [code, n] of Object.entries(fr.notes)) if (isDataChanging(code)) out.push(info(code, 'note', n));
  out.sort((a, b) => b.count - a.count || a.code.localeCompare(b.code));
  return { reasons: out, errorCodesComplete: complete };
}

/**
 * Length statistics a report carries itself (`files[].lengths`, `run/stats.ts`), as the dashboard's
 * distributions: each histogram rebinned from the report's fine buckets into at most 30 equal,
 * round-width bins (a bucket's count goes to the bin of its lower edge), the report's own count,
 * sum, min, max, mean and percentiles kept. The report gives amplification as one figure (record
 * tokens ÷ the conversations rendered once), so the per-conversation distribution is null.
 * Null when the report has no length statistics (older versions).
 */
export function statsFromReport(fr: FileReport): OutputStats | null {
  const l = fr.lengths;
  if (!l || typeof l !== 'object' || !l.seqLen || typeof l.seqLen.count !== 'number') return null;
  return {
    records: l.seqLen.count,
    conversations: l.recordsPerConversation?.count ?? 0,
    totalTokens: l.seqLen.sum,
    trainableTokens: l.trainableTokens?.sum ?? fr.trainableTokens,
    seqLen: fromLengthDistribution(l.seqLen),
    trainablePerRecord: fromLengthDistribution(l.trainableTokens),
    recordsPerConversation: fromLengthDistribution(l.recordsPerConversation),
    amplification: null,
    amplificationOverall: l.amplification ?? 1,
    renderedTokens: l.renderedTokens,
  };
}

/** A report distribution (fine buckets) as a dashboard {@link Distribution}. */
export function fromLengthDistribution(d: LengthDistribution | undefined): Distribution {
  if (!d || d.count === 0 || d.min === null || d.max === null) return distributionOf([]);
  const edges = Object.keys(d.fine ?? {})
    .map(Number)
    .sort((a, b) => a - b);
  const w = niceBinWidth(d.min, d.max, 30);
  const first = Math.floor(d.min / w) * w;
  const nb = Math.max(1, Math.floor((d.max - first) / w) + 1);
  const histogram = Array.from({ length: nb }, (_, i) => ({ from: first + i * w, to: first + (i + 1) * w, count: 0 }));
  for (const e of edges) histogram[Math.min(nb - 1, Math.max(0, Math.floor((Math.max(e, d.min) - first) / w)))].count += d.fine[String(e)];
  return { count: d.count, sum: d.sum, min: d.min, max: d.max, mean: d.mean ?? d.sum / d.count, p50: d.p50 ?? 0, p90: d.p90 ?? 0, p99: d.p99 ?? 0, histogram };
}

/**
 * The dashboard of one dataset of a run.
 * @param stats length statistics from `tokenized_data.jsonl` (used when the report has none)
 * @param problems the file's rows of `problems.jsonl` (error codes), when read
 */
export function datasetDashboard(
  report: PrepareResult,
  file: string,
  opts: { stats?: OutputStats | null; problems?: readonly RowProblemLine[]; staleBecause?: string[]; reportTimeMs?: number } = {},
): DatasetDashboard | undefined {
  const abs = path.resolve(file);
  const fr = report.files.find((f) => path.resolve(f.file) === abs);
  if (!fr) return undefined;
  const failed = !report.ok && report.failures.some((f) => f.includes(abs) || f.includes(path.basename(abs)));
  const { reasons, errorCodesComplete } = reasonsOf(fr, opts.problems);
  const fromReport = statsFromReport(fr);
  const stats = fromReport ?? opts.stats ?? null;
  const used: 'exact' | 'merged' = report.grouping === 'merged' ? 'merged' : 'exact';
  const own: GroupingTotals = { records: fr.recordsWritten, tokens: fr.totalTokens, trainableTokens: fr.trainableTokens };
  const other = otherGrouping(fr, used, fromReport);
  const notComputed: string[] = [];
  if (!stats) notComputed.push('length statistics (seq_len, trainable tokens per record, records per conversation, amplification)');
  if (!other) notComputed.push(`token totals with ${used === 'exact' ? 'merged' : 'exact'} record grouping`);
  return {
    file: abs,
    name: path.basename(abs),
    outDir: path.dirname(report.outputs.reportJson),
    reportJson: report.outputs.reportJson,
    // The run's own word (report.json `status`, template findings included); worked out from the counts for earlier reports.
    status: fr.status ?? fileStatus(fr, failed || fr.skipped === true),
    staleBecause: opts.staleBecause ?? [],
    format: { name: fr.format, evidence: fr.evidence },
    rows: { read: fr.rowsRead, written: fr.rowsWritten, setAside: fr.rowsSetAside, dropped: fr.rowsDropped, errored: fr.rowsErrored },
    rowsKeptShare: share(fr.rowsWritten + fr.rowsSetAside, fr.rowsRead),
    records: fr.recordsWritten,
    tokens: { total: fr.totalTokens, trainable: fr.trainableTokens, share: share(fr.trainableTokens, fr.totalTokens) },
    reasons,
    errorCodesComplete,
    tokenizer: { name: report.tokenizer.name, hash: report.tokenizer.hash },
    settings: { mask: report.mask, maxLength: report.maxLength, truncate: report.truncate, templateKwargs: report.templateKwargs },
    stats,
    statsSource: fromReport ? 'report' : stats ? 'tokenized_data.jsonl' : null,
    grouping: { used, exact: used === 'exact' ? own : other, merged: used === 'merged' ? own : other },
    notComputed,
    reportTimeMs: opts.reportTimeMs,
  };
}

/**
 * The other grouping's totals when the report gives them: for an `exact` run, `merged` writes about
 * the conversations rendered once (`lengths.renderedTokens`, one record per conversation; the same
 * turns trained); an exact count of the other grouping needs a run with it.
 */
function otherGrouping(fr: FileReport, used: 'exact' | 'merged', stats: OutputStats | null): GroupingTotals | null {
  if (used === 'exact' && stats?.renderedTokens)
    return { records: stats.conversations, tokens: stats.renderedTokens, trainableTokens: fr.trainableTokens, approximate: true };
  return null;
}

/** The workspace dashboard from the dashboards of its prepared datasets. */
export function workspaceDashboard(datasets: DatasetDashboard[], notPrepared: string[], stats: OutputStats | null): WorkspaceDashboard {
  const rows = { read: 0, written: 0, setAside: 0, dropped: 0, errored: 0 };
  let records = 0;
  let total = 0;
  let trainable = 0;
  const reasons = new Map<string, ReasonCount>();
  const tokenizers = new Map<string, TokenizerTotals>();
  for (const d of datasets) {
    const t = tokenizers.get(d.tokenizer.hash) ?? { name: d.tokenizer.name, hash: d.tokenizer.hash, datasets: [], records: 0, tokens: 0, trainableTokens: 0 };
    t.datasets.push(d.name);
    t.records += d.records;
    t.tokens += d.tokens.total;
    t.trainableTokens += d.tokens.trainable;
    tokenizers.set(d.tokenizer.hash, t);
    for (const k of Object.keys(rows) as (keyof typeof rows)[]) rows[k] += d.rows[k];
    records += d.records;
    total += d.tokens.total;
    trainable += d.tokens.trainable;
    for (const r of d.reasons) {
      const key = `${r.kind}:${r.code}`;
      const have = reasons.get(key);
      if (have) have.count += r.count;
      else reasons.set(key, { ...r });
    }
  }
  const note = tokenizerNote({ tokenizers: [...tokenizers.values()] });
  return {
    datasets,
    notPrepared,
    status: worstStatus(datasets.map((d) => d.status)),
    rows,
    records,
    tokens: { total, trainable, share: share(trainable, total) },
    reasons: [...reasons.values()].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)),
    stats,
    tokenizers: [...tokenizers.values()],
    ...(note ? { tokenizerNote: note } : {}),
  };
}
