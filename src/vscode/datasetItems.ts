/**
 * How the Datasets view draws one dataset and its children: the icon and the
 * one-line description say the last run's status (`core/run/reports/status.ts`: ok /
 * warnings / degraded / failed — the CLI summary's words) with the share of
 * rows kept, or that the output is stale; the children list why (stale reasons,
 * drop reasons, errors) and the output files. Pure presentation over a
 * {@link DatasetScan}; the provider is in datasetsTree.ts.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DatasetScan } from '../core/run/editor/datasetScan';
import { OUTPUT_FILES } from '../core/run/outputFiles';
import { filePromptLines } from '../core/run/reports/promptLines';
import { REASON_TEXT } from '../core/run/reports/report';
import type { RunStatus } from '../core/run/contract';
import { COMMANDS, datasetContextValue, DETAIL_CONTEXT, type DatasetItemState } from './ids';
import { failureOf, shortReason } from './runFailures';

/** A dataset file of the tree. `resourceUri` lets commands such as `eagle3prep.prepare` take the node as their argument. */
export interface DatasetNode {
  kind: 'dataset';
  resourceUri: vscode.Uri;
  scan?: DatasetScan;
  /** A scan is queued or running. */
  pending: boolean;
}

/** A child row of a dataset: a drop reason, an error count, a stale reason, or an output file. */
export interface DetailNode {
  kind: 'detail';
  parent: DatasetNode;
  item: vscode.TreeItem;
  resourceUri?: vscode.Uri;
}

export const fmt = (n: number) => n.toLocaleString('en-US');
export const plural = (n: number, w: string) => `${fmt(n)} ${w}${n === 1 ? '' : 's'}`;
const pct = (a: number, b: number) => (b > 0 ? `${Math.round((100 * a) / b)} %` : '–');

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

/** What the node's state is: not scanned yet, unreadable, or its output state. */
export function nodeState(n: DatasetNode): DatasetItemState {
  const s = n.scan;
  if (!s) return n.pending ? 'pending' : 'none';
  if (s.error) return 'error';
  return s.output.state === 'none' && failureOf(n.resourceUri.fsPath) ? 'failed' : s.output.state;
}

/** Icon of each status (shape and colour differ, so high contrast and colour-blind readers tell them apart). */
export const STATUS_ICONS: Readonly<Record<RunStatus, { id: string; color: string }>> = {
  ok: { id: 'pass-filled', color: 'testing.iconPassed' },
  warnings: { id: 'warning', color: 'problemsWarningIcon.foreground' },
  degraded: { id: 'error', color: 'problemsErrorIcon.foreground' },
  failed: { id: 'circle-slash', color: 'errorForeground' },
};

/** The icon of a dataset node (id and theme colour), as drawn. */
export function nodeIcon(n: DatasetNode): { id: string; color?: string } {
  const state = nodeState(n);
  if (state === 'pending') return { id: 'loading~spin' };
  if (state === 'error') return { id: 'error', color: 'problemsErrorIcon.foreground' };
  if (state === 'none') return { id: 'circle-large-outline' };
  if (state === 'failed') return STATUS_ICONS.failed;
  if (state === 'stale') return { id: 'history', color: 'problemsWarningIcon.foreground' };
  return STATUS_ICONS[n.scan?.output.status ?? 'ok'];
}

/** `degraded · 40 % of rows kept (3 errored, 3 dropped)`, `ok`, … for a prepared dataset. */
export function statusText(n: DatasetNode): string | undefined {
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
export function describe(n: DatasetNode): string {
  const s = n.scan;
  if (!s) return n.pending ? 'scanning…' : 'not scanned';
  if (s.error) return 'unreadable';
  const parts = [s.format ?? '?', s.rows === undefined ? '? rows' : plural(s.rows, 'row')];
  const o = s.output;
  const setAside = o.fileReport && filePromptLines(o.fileReport) ? `, ${fmt(filePromptLines(o.fileReport))} to generate` : '';
  const failure = o.state === 'none' ? failureOf(n.resourceUri.fsPath) : undefined;
  if (failure) return [`failed: ${shortReason(failure.reason)}`, ...parts].join(' · ');
  if (o.state === 'none') parts.push('not prepared');
  else {
    parts.push(`${o.state === 'stale' ? 'stale: ' : ''}${plural(o.records ?? 0, 'record')}${setAside}`);
    const st = statusText(n);
    if (st) parts.unshift(st);
  }
  return parts.join(' · ');
}

/** The tree item of a dataset node. */
export function datasetTreeItem(n: DatasetNode, tokenizerName: string): vscode.TreeItem {
  const s = n.scan;
  const rel = vscode.workspace.asRelativePath(n.resourceUri, true);
  const item = new vscode.TreeItem(
    path.basename(n.resourceUri.fsPath),
    s && s.output.state !== 'none' ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
  );
  item.id = n.resourceUri.toString();
  item.resourceUri = n.resourceUri;
  item.description = describe(n);
  const state = nodeState(n);
  item.contextValue = datasetContextValue(state, !!s && s.kind.container === 'jsonl' && !s.kind.compression);
  const icon = nodeIcon(n);
  item.iconPath = new vscode.ThemeIcon(icon.id, icon.color ? new vscode.ThemeColor(icon.color) : undefined);
  const md = new vscode.MarkdownString('', true);
  md.appendMarkdown(`**${path.basename(n.resourceUri.fsPath)}** — \`${rel}\`\n\n`);
  if (s) {
    md.appendMarkdown(`${sizeText(s.size)}, ${s.kind.container}${s.kind.compression ? ` (${s.kind.compression})` : ''}`);
    if (s.error) md.appendMarkdown(`\n\n$(error) ${s.error}`);
    else {
      md.appendMarkdown(`, **${s.rows === undefined ? '?' : fmt(s.rows)} rows** (counted by streaming)\n\nFormat **${s.format}**\n`);
      for (const e of s.evidence.slice(0, 6)) md.appendText(`\n- ${e}`);
      md.appendMarkdown('\n\n');
      const o = s.output;
      const failure = o.state === 'none' ? failureOf(n.resourceUri.fsPath) : undefined;
      if (failure)
        md.appendMarkdown(`$(circle-slash) **The last run failed** (${new Date(failure.atMs).toLocaleString()}), nothing was written:\n\n`).appendText(
          failure.reason,
        );
      else if (o.state === 'none') md.appendMarkdown(`Not prepared (no report in \`${o.outDir}\`).`);
      else {
        const fr = o.fileReport!;
        const icon0 = o.status ? STATUS_ICONS[o.status].id : 'info';
        md.appendMarkdown(
          `$(${icon0}) Status **${o.status ?? '?'}**${statusText(n) && o.status !== 'ok' ? ` — ${statusText(n)!.replace(/^\w+: /, '')}` : ''}\n\n`,
        );
        md.appendMarkdown(
          `Output \`${o.outDir}\`: **${plural(fr.recordsWritten, 'record')}** from ${plural(fr.rowsRead, 'row')} ` +
            `(${fr.rowsSetAside} set aside, ${fr.rowsDropped} dropped, ${fr.rowsErrored} errored), ${pct(fr.trainableTokens, fr.totalTokens)} of ${fmt(fr.totalTokens)} tokens trainable, tokenizer ${o.tokenizer?.name ?? '?'}` +
            (o.reportTimeMs ? `, ${new Date(o.reportTimeMs).toLocaleString()}` : ''),
        );
        if (o.state === 'stale') for (const w of o.staleBecause) md.appendMarkdown(`\n\n$(history) Stale: ${w}`);
      }
      md.appendMarkdown(`\n\nActive tokenizer: ${tokenizerName}`);
    }
  }
  item.tooltip = md;
  // Click opens the file, up to the size VS Code syncs to extensions (larger: "Check dataset rows").
  if (s && s.size <= 50 * 1024 * 1024)
    item.command = { command: 'vscode.open', title: 'Open', arguments: [n.resourceUri, { preview: true } satisfies vscode.TextDocumentShowOptions] };
  return item;
}

function detail(
  parent: DatasetNode,
  label: string,
  opts: { description?: string; icon?: string; color?: string; tooltip?: string; command?: vscode.Command; uri?: vscode.Uri; context?: string },
): DetailNode {
  const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
  item.id = `${parent.resourceUri.toString()}#${label}`;
  item.description = opts.description;
  if (opts.icon) item.iconPath = new vscode.ThemeIcon(opts.icon, opts.color ? new vscode.ThemeColor(opts.color) : undefined);
  if (opts.uri) item.resourceUri = opts.uri;
  item.tooltip = opts.tooltip;
  item.command = opts.command;
  item.contextValue = opts.context ?? DETAIL_CONTEXT.detail;
  return { kind: 'detail', parent, item, resourceUri: opts.uri };
}

/** Children of a prepared dataset: stale reasons, status, drop reasons and errors (click: Problems / the first line), set-aside rows, the dashboard, output files. */
export function datasetDetails(n: DatasetNode): DetailNode[] {
  const o = n.scan?.output;
  if (!o || o.state === 'none' || !o.fileReport) return [];
  const fr = o.fileReport;
  const out: DetailNode[] = [];
  const goto = (line: number): vscode.Command => ({
    command: 'vscode.open',
    title: 'Go to line',
    arguments: [n.resourceUri, { selection: new vscode.Range(line - 1, 0, line - 1, 0) } satisfies vscode.TextDocumentShowOptions],
  });
  const problems: vscode.Command = { command: 'workbench.actions.view.problems', title: 'Show Problems' };
  for (const w of o.staleBecause)
    out.push(detail(n, `stale: ${w}`, { icon: 'history', color: 'problemsWarningIcon.foreground', tooltip: `${w}. Prepare again to update the output.` }));
  for (const f of o.failures ?? [])
    if (f.includes(path.basename(n.resourceUri.fsPath)))
      out.push(detail(n, `run failed: ${f}`, { icon: 'error', color: 'problemsErrorIcon.foreground', tooltip: f }));
  out.push(
    detail(n, `${plural(fr.recordsWritten, 'record')} written`, {
      description: `${plural(fr.rowsWritten, 'row')}, ${fmt(fr.trainableTokens)} of ${fmt(fr.totalTokens)} tokens trainable (${pct(fr.trainableTokens, fr.totalTokens)})`,
      icon: 'check',
      tooltip: `Open ${o.outputs?.[0]?.name ?? OUTPUT_FILES.tokenizedData}`,
      command: o.outputs?.[0]?.exists ? { command: 'vscode.open', title: 'Open', arguments: [vscode.Uri.file(o.outputs[0].path)] } : undefined,
    }),
  );
  for (const [reason, d] of Object.entries(fr.dropped)) {
    out.push(
      detail(n, `dropped: ${reason} × ${fmt(d.count)}`, {
        description: `line${d.lines.length === 1 ? '' : 's'} ${d.lines.join(', ')}${d.count > d.lines.length ? ', … (all in Problems)' : ''}`,
        icon: 'circle-slash',
        color: 'problemsWarningIcon.foreground',
        tooltip: REASON_TEXT[reason] ?? reason,
        command: d.count > d.lines.length ? problems : d.lines.length ? goto(d.lines[0]) : undefined,
        context: DETAIL_CONTEXT.reason,
      }),
    );
  }
  if (fr.rowsErrored) {
    out.push(
      detail(n, `errored × ${fmt(fr.rowsErrored)}`, {
        description: `${fr.errors[0] ? `line ${fr.errors[0].line}: ${fr.errors[0].message.split('\n')[0]}` : ''}${fr.rowsErrored > 1 ? ` (all ${fmt(fr.rowsErrored)} in Problems)` : ''}`,
        icon: 'error',
        color: 'problemsErrorIcon.foreground',
        tooltip: fr.errors
          .slice(0, 10)
          .map((e) => `line ${e.line}: ${e.message}`)
          .join('\n'),
        command: fr.rowsErrored > 1 ? problems : fr.errors[0] ? goto(fr.errors[0].line) : undefined,
        context: DETAIL_CONTEXT.reason,
      }),
    );
  }
  if (filePromptLines(fr))
    out.push(
      detail(n, `set aside for generation × ${fmt(filePromptLines(fr))}`, {
        icon: 'comment-discussion',
        tooltip: `Prompt-only rows: in ${OUTPUT_FILES.promptsToGenerate} for the target model to answer`,
      }),
    );
  out.push(
    detail(n, 'dashboard', {
      description: 'lengths, trainable share, reasons',
      icon: 'graph',
      tooltip: "Open this dataset's dashboard",
      command: { command: COMMANDS.openDashboard, title: 'Open dashboard', arguments: [n.resourceUri] },
    }),
  );
  for (const f of o.outputs ?? []) {
    if (!f.exists) continue;
    const uri = vscode.Uri.file(f.path);
    out.push(
      detail(n, f.name, {
        description: path.basename(o.outDir),
        uri,
        icon: f.name.endsWith('.md') ? 'book' : 'file',
        command:
          f.name === OUTPUT_FILES.reportMd
            ? { command: 'markdown.showPreview', title: 'Open report', arguments: [uri] }
            : { command: 'vscode.open', title: 'Open', arguments: [uri] },
        // prompts_to_generate.jsonl gets the "Generate answers with the target model" action (issue 6).
        context: f.name === OUTPUT_FILES.promptsToGenerate ? DETAIL_CONTEXT.promptsFile : DETAIL_CONTEXT.outputFile,
      }),
    );
  }
  return out;
}
