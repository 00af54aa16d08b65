/**
 * Extension-host checks of issue 15 (the extension tells the truth at a glance), run by
 * datasetsSuite.ts inside the real VS Code: a damaged file prepared without being opened gets the
 * degraded icon and description, a warning toast with "Show problems" / "Open report", and a
 * Problems entry for every errored row (63 > the report's 50); its dashboard draws report.json's
 * figures; the workspace dashboard; generation's preflight fails in seconds on a closed port.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PrepareResult } from '../../src/core/run/contract';
import { readReport, REPORT_SCHEMA_VERSION } from '../../src/core/run/reports/report';
import type { DashboardResult } from '../../src/vscode/dashboard';
import type { DatasetStateSummary } from '../../src/vscode/datasetsModel';
import type { GenerateCommandResult } from '../../src/vscode/generateCommand';
import type { ShownNotification } from '../../src/vscode/notify';
import { waitFor as waitUntil, type Probe } from './wait';

const waitFor = <T>(what: string, probe: Probe<T>, timeoutMs = 20000) => waitUntil(what, probe, timeoutMs);

/** 4 good rows, 60 truncated lines, 3 unknown roles, 3 empty conversations: 63 errored, 3 dropped of 70. */
export function bigDamageRows(): string[] {
  const rows: string[] = [];
  for (let i = 0; i < 4; i++)
    rows.push(
      JSON.stringify({
        conversations: [
          { from: 'human', value: `Question ${i}?` },
          { from: 'gpt', value: `Answer ${i}.` },
        ],
      }),
    );
  for (let i = 0; i < 60; i++) rows.push(`{"conversations": [{"from": "human", "value": "cut off ${i}`);
  for (let i = 0; i < 3; i++)
    rows.push(
      JSON.stringify({
        conversations: [
          { from: 'human', value: 'Who speaks?' },
          { from: 'oracle', value: 'I do.' },
        ],
      }),
    );
  for (let i = 0; i < 3; i++) rows.push(JSON.stringify({ conversations: [] }));
  return rows;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Runs the checks; throws on the first failure. Leaves `big-damage.jsonl` prepared in `ws`. */
export async function runHonestStatesChecks(ws: string): Promise<void> {
  const file = path.join(ws, 'big-damage.jsonl');
  fs.writeFileSync(file, bigDamageRows().join('\n') + '\n');
  const uri = vscode.Uri.file(file);
  const since = Date.now();
  let t = Date.now();
  // Prepared from the Datasets view's node shape (not opened in an editor).
  const result = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', { resourceUri: uri });
  assert.ok(result?.ok, 'prepare big-damage.jsonl');
  const fr = result.files[0];
  assert.deepEqual([fr.rowsRead, fr.rowsWritten, fr.rowsErrored, fr.rowsDropped], [70, 4, 63, 3]);
  assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.fsPath === file), 'big-damage.jsonl must not be open');

  // The toast: a warning naming the status and the rows lost, with Show problems / Open report.
  const toast = await waitFor('the run toast', async () =>
    (await vscode.commands.executeCommand<ShownNotification[]>('eagle3prep.notifications', since)).find((n) => n.message.startsWith('EAGLE-3 Prep:')),
  );
  assert.equal(toast.severity, 'warning', `toast: ${JSON.stringify(toast)}`);
  assert.match(toast.message, /^EAGLE-3 Prep: DEGRADED — big-damage\.jsonl: 4 of 70 rows kept \(63 errored, 3 dropped\)/);
  assert.deepEqual(toast.actions, ['Show problems', 'Open report', 'Open dashboard']);

  // Problems: every errored row (63, more than the 50 report.json keeps) and every dropped one, without opening the file.
  const diags = await waitFor('Problems for big-damage.jsonl', () => {
    const d = vscode.languages.getDiagnostics(uri).filter((x) => x.source === 'eagle3-prep');
    return d.length >= 66 ? d : undefined;
  });
  const code = (d: vscode.Diagnostic) => (typeof d.code === 'object' ? String(d.code.value) : String(d.code));
  const errors = diags.filter((d) => d.severity === vscode.DiagnosticSeverity.Error);
  const allWarnings = diags.filter((d) => d.severity === vscode.DiagnosticSeverity.Warning);
  const warnings = allWarnings.filter((d) => /\(row \d+ was dropped by the last run\)$/.test(d.message));
  assert.equal(errors.length, 63, 'one error per errored row');
  assert.equal(warnings.length, 3, 'one warning per dropped row');
  // The empty think block the default template writes is a chat template note of the run, not a
  // file-level warning in Problems (issue 24: a warning on every file is not a warning).
  const fileLevel = allWarnings.filter((d) => !warnings.includes(d));
  assert.deepEqual(
    fileLevel.map((d) => [d.range.start.line + 1, code(d)]),
    [],
  );
  assert.deepEqual(
    errors.map((d) => d.range.start.line + 1),
    Array.from({ length: 63 }, (_, i) => i + 5),
  );
  assert.deepEqual([...new Set(errors.map(code))].sort(), ['invalid_json', 'unknown_role']);
  assert.deepEqual(
    warnings.map((d) => [d.range.start.line + 1, code(d)]),
    [
      [68, 'empty_conversation'],
      [69, 'empty_conversation'],
      [70, 'empty_conversation'],
    ],
  );
  assert.match(errors[62].message, /^unknown_role: .*\(row 67 was errored by the last run\)$/);
  assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.fsPath === file), 'Problems were filled without opening the file');
  console.log(
    `[host-suite] ok: big-damage.jsonl prepared unopened: toast "${toast.message}" [${toast.actions.join(', ')}]; Problems ${errors.length} errors + ${warnings.length} warnings (${Date.now() - t} ms)`,
  );

  // The Datasets view: degraded icon and description with the share kept.
  const node = await waitFor('big-damage.jsonl degraded in the Datasets view', async () => {
    const s = await vscode.commands.executeCommand<DatasetStateSummary[]>('eagle3prep.datasets.state');
    const n = s.find((d) => path.basename(d.file) === 'big-damage.jsonl');
    return n?.status === 'degraded' ? n : undefined;
  });
  assert.equal(node.state, 'prepared');
  assert.deepEqual(node.icon, { id: 'error', color: 'problemsErrorIcon.foreground' });
  assert.equal(node.description, 'degraded: 6 % of rows kept (63 errored, 3 dropped) · sharegpt · 70 rows · 4 records');
  assert.ok(
    node.children.some((c) => c === 'errored × 63 (line 5: ' + fr.errors[0].message.split('\n')[0] + ' (all 63 in Problems))'),
    node.children.join(' | '),
  );
  console.log(`[host-suite] ok: Datasets view: big-damage.jsonl [${node.description}] icon ${node.icon.id}`);

  // The dashboard draws report.json's figures and its charts.
  t = Date.now();
  const dash = await vscode.commands.executeCommand<DashboardResult>('eagle3prep.openDashboard', uri);
  assert.ok(dash?.model?.kind === 'dataset', `dashboard: ${JSON.stringify(dash?.error)}`);
  // report.json on disk is schema 2 (snake_case); it is read back through the one reader, as the dashboard reads it.
  const raw = JSON.parse(fs.readFileSync(result.outputs.reportJson, 'utf8')) as { schema_version: number; files: { rows_read: number }[] };
  assert.deepEqual([raw.schema_version, raw.files[0].rows_read], [REPORT_SCHEMA_VERSION, 70]);
  const { report } = readReport(result.outputs.reportJson);
  const rf = report.files[0];
  assert.equal(rf.status, 'degraded', 'report.json says degraded');
  const d = dash.model.dataset;
  assert.deepEqual(d.rows, { read: rf.rowsRead, written: rf.rowsWritten, setAside: rf.rowsSetAside, dropped: rf.rowsDropped, errored: rf.rowsErrored });
  assert.deepEqual([d.records, d.tokens.total, d.tokens.trainable], [rf.recordsWritten, rf.totalTokens, rf.trainableTokens]);
  assert.equal(d.status, 'degraded');
  assert.equal(d.format.name, rf.format);
  assert.equal(d.stats?.records, rf.recordsWritten, 'the length statistics cover every record');
  assert.equal(d.stats?.totalTokens, rf.totalTokens);
  assert.deepEqual(
    d.reasons.filter((r) => r.kind !== 'note').map((r) => [r.code, r.count]),
    [
      ['invalid_json', 60],
      ['empty_conversation', 3],
      ['unknown_role', 3],
    ],
  );
  assert.ok(dash.drawn, 'the dashboard webview did not acknowledge');
  // The report's own length statistics (amplification as one figure, no per-conversation chart).
  assert.equal(d.statsSource, 'report');
  assert.deepEqual(dash.drawn.charts.sort(), ['reasons', 'recordsPerConversation', 'seqLen', 'share', 'trainablePerRecord']);
  assert.equal(dash.drawn.figures.rowsRead, fmt(rf.rowsRead));
  assert.equal(dash.drawn.figures.records, fmt(rf.recordsWritten));
  assert.equal(dash.drawn.figures.tokens, fmt(rf.totalTokens));
  assert.equal(dash.drawn.figures.trainable, fmt(rf.trainableTokens));
  assert.equal(dash.drawn.figures.status, 'degraded');
  assert.equal(dash.drawn.figures.amplification, `${rf.lengths!.amplification}×`);
  assert.equal(dash.drawn.notComputed, 1, 'only the per-conversation amplification is not computed by this run');
  console.log(
    `[host-suite] ok: dashboard of big-damage.jsonl drew ${dash.drawn.charts.length} charts; figures ${JSON.stringify(dash.drawn.figures)} = report.json (${Date.now() - t} ms)`,
  );

  const wsDash = await vscode.commands.executeCommand<DashboardResult>('eagle3prep.openWorkspaceDashboard');
  assert.ok(wsDash?.model?.kind === 'workspace' && wsDash.drawn, `workspace dashboard: ${JSON.stringify(wsDash?.error)}`);
  const w = wsDash.model.workspace;
  assert.ok(
    w.datasets.some((x) => x.name === 'big-damage.jsonl'),
    w.datasets.map((x) => x.name).join(', '),
  );
  assert.equal(
    w.tokens.total,
    w.datasets.reduce((a, x) => a + x.tokens.total, 0),
  );
  assert.ok(wsDash.drawn.charts.includes('datasets') && wsDash.drawn.charts.includes('seqLen'), wsDash.drawn.charts.join(', '));
  assert.equal(wsDash.drawn.figures.tokens, fmt(w.tokens.total));
  console.log(`[host-suite] ok: workspace dashboard: ${w.datasets.length} datasets, ${fmt(w.tokens.total)} tokens, charts ${wsDash.drawn.charts.join(', ')}`);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');

  // Generate: the preflight fails in seconds on a closed port, with Retry / Open settings.
  const port = await new Promise<number>((ok) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => ok(p));
    });
  });
  const config = vscode.workspace.getConfiguration('eagle3prep');
  await config.update('generate.servers', [`http://127.0.0.1:${port}`], vscode.ConfigurationTarget.Global);
  try {
    const prompts = path.join(ws, 'big-damage.jsonl');
    const since2 = Date.now();
    t = Date.now();
    const g = await vscode.commands.executeCommand<GenerateCommandResult>('eagle3prep.generate', vscode.Uri.file(prompts));
    const ms = Date.now() - t;
    assert.equal(g?.stopped, 'preflight', JSON.stringify(g));
    assert.ok(ms < 5000, `the preflight took ${ms} ms`);
    assert.equal(g.preflight?.[0].code, 'ECONNREFUSED');
    const shown = await vscode.commands.executeCommand<ShownNotification[]>('eagle3prep.notifications', since2);
    const err = shown.find((n) => n.severity === 'error' && n.message.startsWith('Generate:'));
    assert.ok(err, JSON.stringify(shown));
    assert.match(err.message, new RegExp(`http://127\\.0\\.0\\.1:${port} — connection refused: nothing listens on 127\\.0\\.0\\.1:${port}`));
    assert.deepEqual(err.actions, ['Retry', 'Open settings', 'Show log']);
    console.log(`[host-suite] ok: generate on a closed port stopped at the preflight in ${ms} ms: "${err.message}" [${err.actions.join(', ')}]`);
  } finally {
    await config.update('generate.servers', undefined, vscode.ConfigurationTarget.Global);
  }
}
