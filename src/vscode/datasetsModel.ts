/**
 * What the Datasets view says about one dataset and its children, as plain data (datasetItems.ts
 * turns it into tree items): the state, the icon (codicon id and theme colour) and the one-line
 * description give the last run's status (`core/run/status.ts`: ok / warnings / degraded / failed —
 * the CLI summary's words) with the share of rows kept, or that the output is stale; the tooltip
 * the file, its format and evidence and the output; the children why (stale reasons, drop reasons,
 * errors) and the output files. Everything is computed from the file's {@link DatasetScan} and the
 * editor's memory of failed runs (runFailures.ts).
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/datasetsModel.test.ts).
 */
import * as path from 'node:path';
import type { DatasetScan } from '../core/run/editor/datasetScan';
import { OUTPUT_FILES } from '../core/run/outputFiles';
import { filePromptLines } from '../core/run/reports/promptLines';
import { REASON_TEXT } from '../core/run/reports/report';
import type { RunStatus } from '../core/run/contract';
import { datasetContextValue, DETAIL_CONTEXT, type DatasetItemState } from './ids';
import { folderFiles, folderSummary, type DatasetFolder } from './datasetFolders';
import { configAppliesTo } from '../core/read/projectConfig';
import { failureOf, shortReason } from './runFailures';

/** One dataset file of the view: its path, its last scan, and whether a scan is queued or running. */
export interface DatasetEntry {
  /** Absolute path. */
  file: string;
  scan?: DatasetScan;
  pending: boolean;
}

/** A codicon id and an optional theme colour id. */
export interface IconName {
  id: string;
  color?: string;
}

export const fmt = (n: number) => n.toLocaleString('en-US');
export const plural = (n: number, w: string) => `${fmt(n)} ${w}${n === 1 ? '' : 's'}`;
const pct = (a: number, b: number) => (b > 0 ? `${Math.round((100 * a) / b)} %` : '–');

/** `512 B`, `1.5 KB`, `3.2 MB`, `1.25 GB` (binary units). */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

/** What the entry's state is: not scanned yet, unreadable, failed in its last run (nothing written), or its output state. */
export function nodeState(n: DatasetEntry): DatasetItemState {
  const s = n.scan;
  if (!s) return n.pending ? 'pending' : 'none';
  if (s.error) return 'error';
  return s.output.state === 'none' && failureOf(n.file) ? 'failed' : s.output.state;
}

/** Icon of each status (shape and colour differ, so high contrast and colour-blind readers tell them apart). */
export const STATUS_ICONS: Readonly<Record<RunStatus, { id: string; color: string }>> = {
  ok: { id: 'pass-filled', color: 'testing.iconPassed' },
  warnings: { id: 'warning', color: 'problemsWarningIcon.foreground' },
  degraded: { id: 'error', color: 'problemsErrorIcon.foreground' },
  failed: { id: 'circle-slash', color: 'errorForeground' },
};

/** The icon of a dataset entry (id and theme colour), as drawn. */
export function nodeIcon(n: DatasetEntry): IconName {
  const state = nodeState(n);
  if (state === 'pending') return { id: 'loading~spin' };
  if (state === 'error') return { id: 'error', color: 'problemsErrorIcon.foreground' };
  if (state === 'none') return { id: 'circle-large-outline' };
  if (state === 'failed') return STATUS_ICONS.failed;
  if (state === 'stale') return { id: 'history', color: 'problemsWarningIcon.foreground' };
  return STATUS_ICONS[n.scan?.output.status ?? 'ok'];
}

/** `degraded: 40 % of rows kept (3 errored, 3 dropped)`, `ok`, … for a prepared dataset; undefined otherwise. */
export function statusText(n: DatasetEntry): string | undefined {
  const o = n.scan?.output;
  const fr = o?.fileReport;
  if (!o || !fr || !o.status) return undefined;
  if (o.status === 'ok') return 'ok';
  const lost = [fr.rowsErrored ? `${fmt(fr.rowsErrored)} errored` : '', fr.rowsDropped ? `${fmt(fr.rowsDropped)} dropped` : ''].filter(Boolean).join(', ');
  const kept = fr.rowsWritten + fr.rowsSetAside;
  if (lost) return `${o.status}: ${pct(kept, fr.rowsRead)} of rows kept (${lost})`;
  // Nothing lost, yet the data changed: say what changed (the data-changing warnings), not only that something did.
  const what = (o.warnings ?? []).map((w) => `${w.code} × ${fmt(w.count)}`).join(', ');
  return `${o.status}: ${what || 'output differs from the source'} (see Problems)`;
}

/**
 * One-line description of a dataset: `degraded: 40 % of rows kept (3 errored, 3 dropped) · sharegpt · 10 rows · 4 records`.
 * The status comes first: a narrow view cuts the end of the line, and the state is what must stay visible.
 */
export function describe(n: DatasetEntry): string {
  const s = n.scan;
  if (!s) return n.pending ? 'scanning…' : 'not scanned';
  if (s.error) return 'unreadable';
  const parts = [s.format ?? '?', s.rows === undefined ? '? rows' : plural(s.rows, 'row')];
  const o = s.output;
  const setAside = o.fileReport && filePromptLines(o.fileReport) ? `, ${fmt(filePromptLines(o.fileReport))} to generate` : '';
  const failure = o.state === 'none' ? failureOf(n.file) : undefined;
  if (failure) return [`failed: ${shortReason(failure.reason)}`, ...parts].join(' · ');
  if (o.state === 'none') parts.push('not prepared');
  else {
    parts.push(`${o.state === 'stale' ? 'stale: ' : ''}${plural(o.records ?? 0, 'record')}${setAside}`);
    const st = statusText(n);
    if (st) parts.unshift(st);
  }
  return parts.join(' · ');
}

/** A piece of a Markdown tooltip: Markdown as written, or text that is escaped when drawn. */
export type TooltipPart = { markdown: string } | { text: string };

/** How a dataset's row is drawn (datasetItems.ts makes the tree item). */
export interface DatasetItemModel {
  label: string;
  /** Whether the row has children (a prepared output). */
  expandable: boolean;
  description: string;
  contextValue: string;
  icon: IconName;
  /** Markdown with theme icons (`$(history)`), in order. */
  tooltip: TooltipPart[];
  /** A click opens the file: up to the size VS Code syncs to extensions (larger: "Check dataset rows"). */
  opensOnClick: boolean;
}

/** Largest file a click opens, bytes: VS Code syncs files up to 50 MB to extensions. */
export const OPEN_ON_CLICK_MAX_BYTES = 50 * 1024 * 1024;

/**
 * The row of a dataset. `relativePath` is the file as the workspace names it; `tokenizerName` the
 * active tokenizer's display name.
 */
export function datasetItemModel(n: DatasetEntry, relativePath: string, tokenizerName: string): DatasetItemModel {
  const s = n.scan;
  const name = path.basename(n.file);
  return {
    label: name,
    expandable: !!s && s.output.state !== 'none',
    description: describe(n),
    contextValue: datasetContextValue(nodeState(n), !!s && s.kind.container === 'jsonl' && !s.kind.compression),
    icon: nodeIcon(n),
    tooltip: [{ markdown: `**${name}** — \`${relativePath}\`\n\n` }, ...(s ? scanTooltip(n, s, tokenizerName) : [])],
    opensOnClick: !!s && s.size <= OPEN_ON_CLICK_MAX_BYTES,
  };
}

/** The tooltip's part after the title: size and container, rows, format and evidence, the last run or failure, the tokenizer. */
function scanTooltip(n: DatasetEntry, s: DatasetScan, tokenizerName: string): TooltipPart[] {
  const parts: TooltipPart[] = [{ markdown: `${sizeText(s.size)}, ${s.kind.container}${s.kind.compression ? ` (${s.kind.compression})` : ''}` }];
  if (s.error) return [...parts, { markdown: `\n\n$(error) ${s.error}` }];
  parts.push({ markdown: `, **${s.rows === undefined ? '?' : fmt(s.rows)} rows** (counted by streaming)\n\nFormat **${s.format}**\n` });
  for (const e of s.evidence.slice(0, 6)) parts.push({ text: `\n- ${e}` });
  parts.push({ markdown: '\n\n' });
  const o = s.output;
  const failure = o.state === 'none' ? failureOf(n.file) : undefined;
  if (failure)
    parts.push(
      { markdown: `$(circle-slash) **The last run failed** (${new Date(failure.atMs).toLocaleString()}), nothing was written:\n\n` },
      { text: failure.reason },
    );
  else if (o.state === 'none') parts.push({ markdown: `Not prepared (no report in \`${o.outDir}\`).` });
  else {
    const fr = o.fileReport!;
    const icon0 = o.status ? STATUS_ICONS[o.status].id : 'info';
    const st = statusText(n);
    parts.push({ markdown: `$(${icon0}) Status **${o.status ?? '?'}**${st && o.status !== 'ok' ? ` — ${st.replace(/^\w+: /, '')}` : ''}\n\n` });
    parts.push({
      markdown:
        `Output \`${o.outDir}\`: **${plural(fr.recordsWritten, 'record')}** from ${plural(fr.rowsRead, 'row')} ` +
        `(${fr.rowsSetAside} set aside, ${fr.rowsDropped} dropped, ${fr.rowsErrored} errored), ${pct(fr.trainableTokens, fr.totalTokens)} of ${fmt(fr.totalTokens)} tokens trainable, tokenizer ${o.tokenizer?.name ?? '?'}` +
        (o.reportTimeMs ? `, ${new Date(o.reportTimeMs).toLocaleString()}` : ''),
    });
    if (o.state === 'stale') for (const w of o.staleBecause) parts.push({ markdown: `\n\n$(history) Stale: ${w}` });
  }
  parts.push({ markdown: `\n\nActive tokenizer: ${tokenizerName}` });
  return parts;
}

/** What clicking a child row does. */
export type DetailAction =
  /** Open the dataset at a 1-based line. */
  | { kind: 'goToLine'; line: number }
  /** Show the Problems panel. */
  | { kind: 'problems' }
  /** Open the dataset's dashboard. */
  | { kind: 'dashboard' }
  /** Open a file in an editor. */
  | { kind: 'open'; file: string }
  /** Open a Markdown file as a preview. */
  | { kind: 'preview'; file: string };

/** A child row of a dataset: a stale reason, a run failure, the records written, a drop reason, errors, set-aside rows, the dashboard, an output file. */
export interface DetailModel {
  label: string;
  description?: string;
  icon?: IconName;
  tooltip?: string;
  action?: DetailAction;
  /** The output file the row stands for (its resource, for the Explorer's menus). */
  file?: string;
  contextValue: string;
}

/** The children of a prepared dataset (none for one without output), in the order drawn. */
export function datasetDetails(n: DatasetEntry): DetailModel[] {
  const o = n.scan?.output;
  if (!o || o.state === 'none' || !o.fileReport) return [];
  const fr = o.fileReport;
  const out: DetailModel[] = [];
  const detail = (label: string, d: Omit<DetailModel, 'label' | 'contextValue'> & { contextValue?: string }) =>
    out.push({ label, ...d, contextValue: d.contextValue ?? DETAIL_CONTEXT.detail });
  const warn = 'problemsWarningIcon.foreground';
  const err = 'problemsErrorIcon.foreground';
  for (const w of o.staleBecause) detail(`stale: ${w}`, { icon: { id: 'history', color: warn }, tooltip: `${w}. Prepare again to update the output.` });
  for (const f of o.failures ?? []) if (f.includes(path.basename(n.file))) detail(`run failed: ${f}`, { icon: { id: 'error', color: err }, tooltip: f });
  detail(`${plural(fr.recordsWritten, 'record')} written`, {
    description: `${plural(fr.rowsWritten, 'row')}, ${fmt(fr.trainableTokens)} of ${fmt(fr.totalTokens)} tokens trainable (${pct(fr.trainableTokens, fr.totalTokens)})`,
    icon: { id: 'check' },
    tooltip: `Open ${o.outputs?.[0]?.name ?? OUTPUT_FILES.tokenizedData}`,
    action: o.outputs?.[0]?.exists ? { kind: 'open', file: o.outputs[0].path } : undefined,
  });
  for (const [reason, d] of Object.entries(fr.dropped)) {
    detail(`dropped: ${reason} × ${fmt(d.count)}`, {
      description: `line${d.lines.length === 1 ? '' : 's'} ${d.lines.join(', ')}${d.count > d.lines.length ? ', … (all in Problems)' : ''}`,
      icon: { id: 'circle-slash', color: warn },
      tooltip: REASON_TEXT[reason] ?? reason,
      action: d.count > d.lines.length ? { kind: 'problems' } : d.lines.length ? { kind: 'goToLine', line: d.lines[0] } : undefined,
      contextValue: DETAIL_CONTEXT.reason,
    });
  }
  if (fr.rowsErrored) {
    detail(`errored × ${fmt(fr.rowsErrored)}`, {
      description: `${fr.errors[0] ? `line ${fr.errors[0].line}: ${fr.errors[0].message.split('\n')[0]}` : ''}${fr.rowsErrored > 1 ? ` (all ${fmt(fr.rowsErrored)} in Problems)` : ''}`,
      icon: { id: 'error', color: err },
      tooltip: fr.errors
        .slice(0, 10)
        .map((e) => `line ${e.line}: ${e.message}`)
        .join('\n'),
      action: fr.rowsErrored > 1 ? { kind: 'problems' } : fr.errors[0] ? { kind: 'goToLine', line: fr.errors[0].line } : undefined,
      contextValue: DETAIL_CONTEXT.reason,
    });
  }
  if (filePromptLines(fr))
    detail(`set aside for generation × ${fmt(filePromptLines(fr))}`, {
      icon: { id: 'comment-discussion' },
      tooltip: `Prompt-only rows: in ${OUTPUT_FILES.promptsToGenerate} for the target model to answer`,
    });
  detail('dashboard', {
    description: 'lengths, trainable share, reasons',
    icon: { id: 'graph' },
    tooltip: "Open this dataset's dashboard",
    action: { kind: 'dashboard' },
  });
  for (const f of o.outputs ?? []) {
    if (!f.exists) continue;
    detail(f.name, {
      description: path.basename(o.outDir),
      file: f.path,
      icon: { id: f.name.endsWith('.md') ? 'book' : 'file' },
      action: f.name === OUTPUT_FILES.reportMd ? { kind: 'preview', file: f.path } : { kind: 'open', file: f.path },
      // prompts_to_generate.jsonl gets the "Generate answers with the target model" action (issue 6).
      contextValue: f.name === OUTPUT_FILES.promptsToGenerate ? DETAIL_CONTEXT.promptsFile : DETAIL_CONTEXT.outputFile,
    });
  }
  return out;
}

/**
 * The datasets whose output state a change re-reads (the view's file watchers): a run's `report.json`
 * written, changed or deleted (the datasets whose output folder holds it); a file deleted (the datasets
 * whose output folder holds it: one of their outputs is gone).
 */
export function outputsAffectedBy<T extends DatasetEntry>(entries: Iterable<T>, changedPath: string, kind: 'report' | 'deleted'): T[] {
  const out: T[] = [];
  for (const n of entries) {
    const dir = n.scan?.output.outDir;
    if (kind === 'report' ? dir === path.dirname(changedPath) : !!dir && changedPath.startsWith(dir)) out.push(n);
  }
  return out;
}

/** The datasets an `eagle3prep.jsonc` applies to (its folder and below, where no nearer one wins): a change re-reads them whole. */
export function readWithConfig<T extends DatasetEntry>(entries: Iterable<T>, config: string): T[] {
  return [...entries].filter((n) => configAppliesTo(config, n.file));
}

/** A child row as `eagle3prep.datasets.state` lists it: `label (description)`. */
export function detailSummary(d: Pick<DetailModel, 'label' | 'description'>): string {
  return `${d.label}${d.description ? ` (${d.description})` : ''}`;
}

/** A folder row's description: the summary of every file under it (datasetFolders.ts `folderSummary`). */
export function folderDescription<T extends DatasetEntry>(f: DatasetFolder<T>): string {
  return folderSummary(folderFiles(f).map((n) => ({ state: nodeState(n), status: n.scan?.output.status })));
}

/** What `eagle3prep.datasets.state` returns per dataset (for tests and scripts). */
export interface DatasetStateSummary {
  file: string;
  format?: string;
  rows?: number;
  state: DatasetItemState;
  /** The last run's status for the file (`core/run/status.ts`), when prepared. */
  status?: RunStatus;
  /** The icon drawn: codicon id and theme colour. */
  icon: IconName;
  records?: number;
  staleBecause: string[];
  description: string;
  children: string[];
  error?: string;
  /** The folder row that holds the file (its label path from the top, and its summary); absent at the top. */
  folder?: { label: string; description: string };
}

/** The summary of one dataset; `folders` is the chain of folder rows above it, top first (empty at the top). */
export function datasetStateSummary<T extends DatasetEntry>(n: T, folders: DatasetFolder<T>[]): DatasetStateSummary {
  return {
    folder: folders.length ? { label: folders.map((f) => f.label).join('/'), description: folderDescription(folders[folders.length - 1]) } : undefined,
    file: n.file,
    format: n.scan?.format,
    rows: n.scan?.rows,
    state: n.scan ? nodeState(n) : 'pending',
    status: n.scan?.output.status,
    icon: nodeIcon(n),
    records: n.scan?.output.records,
    staleBecause: n.scan?.output.staleBecause ?? [],
    description: describe(n),
    children: datasetDetails(n).map(detailSummary),
    error: n.scan?.error,
  };
}
