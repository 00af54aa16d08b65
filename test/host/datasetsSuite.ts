/**
 * Extension-host checks of the Datasets view, the Problems entries with their quick fix, "Prepare
 * all datasets in workspace" and "Check chat template" (issue 5 part B). Called by suite.ts after
 * its own steps, in the same workspace folder (it already holds two prepared samples).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PrepareResult } from '../../src/core/run/contract';
import type { CheckTemplateResult } from '../../src/vscode/checkTemplateCommand';
import { runHonestStatesChecks } from './honestStatesSuite';
import type { BatchResult } from '../../src/vscode/batchCommand';
import type { DatasetStateSummary } from '../../src/vscode/datasetsModel';
import type { DashboardResult } from '../../src/vscode/dashboard';
import { sleep, waitFor as waitUntil, type Probe } from './wait';

// 60 s: CI machines are shared; with a load average above 10 on 2 cores the re-scans after "Prepare all" took over 20 s there.
const waitFor = <T>(what: string, probe: Probe<T>, timeoutMs = 60000) => waitUntil(what, probe, timeoutMs);

/**
 * A damaged dataset: good rows, a truncated line, an unknown role, a row with its turns under an unknown key
 * and an unknown speaker (a turn list under any key is read when every speaker is known, issue 12), an empty conversation.
 */
export const DAMAGED_ROWS = [
  JSON.stringify({
    conversations: [
      { from: 'human', value: 'What is 2+2?' },
      { from: 'gpt', value: '4.' },
    ],
  }),
  '{"conversations": [{"from": "human", "value": "cut off',
  JSON.stringify({
    conversations: [
      { from: 'human', value: 'Tell a story.' },
      { from: 'narrator', value: 'Once upon a time.' },
    ],
  }),
  JSON.stringify({
    dialogue_turns: [
      { role: 'user', content: 'Hi' },
      { role: 'narrator', content: 'Hello!' },
    ],
  }),
  JSON.stringify({ conversations: [] }),
  JSON.stringify({
    conversations: [
      { from: 'human', value: 'Name a color.' },
      { from: 'gpt', value: 'Blue.' },
    ],
  }),
];

async function treeState(): Promise<DatasetStateSummary[]> {
  const s = await vscode.commands.executeCommand<DatasetStateSummary[]>('eagle3prep.datasets.state');
  assert.ok(Array.isArray(s), 'eagle3prep.datasets.state returned no list');
  return s;
}

/** Runs the checks; throws on the first failure. */
export async function runDatasetsChecks(ext: vscode.Extension<unknown>, ws: string): Promise<void> {
  const samples = path.join(ext.extensionPath, 'samples');
  for (const f of ['reasoning-sharegpt.jsonl', 'prompts-only.jsonl', 'swe-agent-trajectory-field.jsonl'])
    fs.copyFileSync(path.join(samples, f), path.join(ws, f));
  const damaged = path.join(ws, 'damaged.jsonl');
  fs.writeFileSync(damaged, DAMAGED_ROWS.join('\n') + '\n');

  // 1. The Datasets view: every sample with its format, streamed row count and output state.
  await vscode.commands.executeCommand('eagle3prep.datasets.focus');
  let t = Date.now();
  const byName = (s: DatasetStateSummary[], n: string) => s.find((d) => path.basename(d.file) === n);
  // Files created after the view's discovery arrive through its file watcher.
  let state = await waitFor('the six samples in the Datasets view', async () => {
    const s = await treeState();
    return s.length >= 6 ? s : undefined;
  });
  const names = state.map((d) => path.basename(d.file)).sort();
  assert.deepEqual(
    names,
    [
      'agentic-trajectories.jsonl',
      'chat-sharegpt-human-gpt.jsonl',
      'damaged.jsonl',
      'prompts-only.jsonl',
      'reasoning-sharegpt.jsonl',
      'swe-agent-trajectory-field.jsonl',
    ],
    'datasets found (outputs under *.eagle3/ and tokenizer JSON files must be excluded)',
  );
  const chat = byName(state, 'chat-sharegpt-human-gpt.jsonl')!;
  assert.equal(chat.format, 'sharegpt');
  assert.equal(chat.rows, 3);
  assert.equal(chat.state, 'prepared', `chat sample: ${chat.description} ${chat.staleBecause.join('; ')}`);
  assert.equal(chat.records, 6);
  assert.ok(
    chat.children.some((c) => c.startsWith('6 records written')),
    `chat children: ${chat.children.join(' | ')}`,
  );
  assert.ok(
    chat.children.some((c) => c.startsWith('report.md')),
    'chat children list report.md',
  );
  const agentic = byName(state, 'agentic-trajectories.jsonl')!;
  assert.equal(agentic.format, 'openai-messages');
  assert.equal(agentic.rows, 3);
  assert.equal(agentic.state, 'prepared');
  const prompts = byName(state, 'prompts-only.jsonl')!;
  assert.deepEqual([prompts.format, prompts.rows, prompts.state], ['prompt-only', 4, 'none']);
  assert.deepEqual([byName(state, 'swe-agent-trajectory-field.jsonl')!.format, byName(state, 'damaged.jsonl')!.rows], ['role-text-trajectory', 6]);
  console.log(
    `[host-suite] ok: Datasets view lists ${state.length} files in ${Date.now() - t} ms: ${state.map((d) => `${path.basename(d.file)} [${d.description}]`).join('; ')}`,
  );

  // 2. Per-file invalidation: a row appended to the chat sample makes its output stale.
  fs.appendFileSync(
    path.join(ws, 'chat-sharegpt-human-gpt.jsonl'),
    JSON.stringify({
      conversations: [
        { from: 'human', value: 'One more?' },
        { from: 'gpt', value: 'Sure.' },
      ],
    }) + '\n',
  );
  t = Date.now();
  state = await waitFor('the chat sample to turn stale', async () => {
    const s = await treeState();
    return byName(s, 'chat-sharegpt-human-gpt.jsonl')?.state === 'stale' ? s : undefined;
  });
  const stale = byName(state, 'chat-sharegpt-human-gpt.jsonl')!;
  assert.equal(stale.rows, 4);
  assert.ok(
    stale.staleBecause.some((w) => /input changed since the run/.test(w)),
    stale.staleBecause.join('; '),
  );
  assert.ok(
    stale.staleBecause.some((w) => /4 rows, the run read 3/.test(w)),
    stale.staleBecause.join('; '),
  );
  console.log(`[host-suite] ok: appending a row made chat-sharegpt-human-gpt.jsonl stale in ${Date.now() - t} ms (${stale.staleBecause.join('; ')})`);

  // 2b. Issue 15: a damaged file prepared without opening it — icon, toast, Problems, dashboard; generate's preflight.
  await runHonestStatesChecks(ws);
  const damagedUri = vscode.Uri.file(damaged);
  const prepDamaged = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', damagedUri);
  assert.ok(prepDamaged?.ok, 'prepare damaged.jsonl');
  await waitFor('damaged.jsonl prepared in the Datasets view', async () => byName(await treeState(), 'damaged.jsonl')?.state === 'prepared');

  // 3. Problems: the damaged file's bad rows on their lines, with reason codes.
  await vscode.window.showTextDocument(damagedUri);
  const codeOf = (d: vscode.Diagnostic) => (typeof d.code === 'object' ? String(d.code.value) : String(d.code));
  // Row entries (the file-level data-changing warnings of the last run, on line 1, are checked in honestStatesSuite.ts).
  const rowEntry = (x: vscode.Diagnostic) => x.source === 'eagle3-prep' && /\(row \d+ (will be|was) \w+/.test(x.message);
  // The quick fixes act on the scan's entries of the open file ("will be"); the last run's entries
  // ("was … by the last run") can be there first, so wait for the scan's on the lines fixed below.
  const scanned = (d: vscode.Diagnostic[], code: string) => d.some((x) => codeOf(x) === code && /\(row \d+ will be/.test(x.message));
  const diags = await waitFor('diagnostics on damaged.jsonl', () => {
    const d = vscode.languages.getDiagnostics(damagedUri).filter(rowEntry);
    return d.length >= 4 && scanned(d, 'unknown_role') && scanned(d, 'unrecognized_shape') ? d : undefined;
  });
  const got = diags.map((d) => [d.range.start.line + 1, codeOf(d), vscode.DiagnosticSeverity[d.severity]]).sort((a, b) => Number(a[0]) - Number(b[0]));
  assert.deepEqual(got, [
    [2, 'invalid_json', 'Error'],
    [3, 'unknown_role', 'Error'],
    [4, 'unrecognized_shape', 'Warning'],
    [5, 'empty_conversation', 'Warning'],
  ]);
  console.log(`[host-suite] ok: Problems lists damaged.jsonl rows ${got.map((g) => `${g[0]}:${g[1]}`).join(', ')}`);

  // 4. Quick fixes (both offered before either is applied: the alias alone already makes line 4 readable):
  // add the role alias to eagle3prep.jsonc, map the unknown field; the unknown_role and unrecognized_shape entries go away.
  const roleDiag = diags.find((d) => codeOf(d) === 'unknown_role')!;
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider',
    damagedUri,
    roleDiag.range,
    vscode.CodeActionKind.QuickFix.value,
  );
  const titles = actions.map((a) => a.title);
  const alias = actions.find((a) => a.title === 'Add role alias "narrator" → assistant to eagle3prep.jsonc');
  assert.ok(alias?.command, `quick fixes offered: ${titles.join(' | ')}`);
  const fieldDiag = diags.find((d) => codeOf(d) === 'unrecognized_shape')!;
  const fieldActions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider',
    damagedUri,
    fieldDiag.range,
    vscode.CodeActionKind.QuickFix.value,
  );
  const mapping = fieldActions.find((a) => a.title === 'Map field "dialogue_turns" → "messages" in eagle3prep.jsonc');
  assert.ok(mapping?.command, `quick fixes offered: ${fieldActions.map((a) => a.title).join(' | ')}`);
  t = Date.now();
  const fixed = await vscode.commands.executeCommand<{ file: string; selection: vscode.Range } | undefined>(
    alias.command.command,
    ...(alias.command.arguments ?? []),
  );
  const config = path.join(ws, 'eagle3prep.jsonc');
  assert.ok(fs.existsSync(config), 'eagle3prep.jsonc was not created in the workspace folder');
  assert.match(fs.readFileSync(config, 'utf8'), /"roleAliases":\s*\{\s*"narrator":\s*"assistant"\s*\}/);
  // Issue 15: the dataset's output is now stale, its rows re-checked, and the entry shown in eagle3prep.jsonc.
  assert.equal(fixed?.file, config);
  const staleDamaged = byName(await treeState(), 'damaged.jsonl')!;
  assert.equal(staleDamaged.state, 'stale', `damaged.jsonl after the quick fix: ${staleDamaged.description}`);
  assert.ok(
    staleDamaged.staleBecause.some((w) => /eagle3prep\.jsonc changed since the run/.test(w)),
    staleDamaged.staleBecause.join('; '),
  );
  assert.equal(staleDamaged.icon.id, 'history');
  const rechecked = vscode.languages.getDiagnostics(damagedUri).filter((x) => x.source === 'eagle3-prep');
  assert.ok(!rechecked.some((d) => codeOf(d) === 'unknown_role'), `re-checked: the unknown role is gone (${rechecked.map(codeOf).join(', ')})`);
  assert.ok(
    ['invalid_json', 'empty_conversation'].every((c) => rechecked.some((d) => codeOf(d) === c)),
    rechecked.map(codeOf).join(', '),
  );
  const shownConfig = vscode.window.visibleTextEditors.find((e) => e.document.uri.fsPath === config);
  assert.ok(shownConfig, 'eagle3prep.jsonc is shown');
  assert.equal(shownConfig.document.getText(shownConfig.selection), '"narrator": "assistant"', 'the inserted entry is selected');
  console.log(
    `[host-suite] ok: quick fix → damaged.jsonl stale (${staleDamaged.staleBecause.join('; ')}), re-checked (${rechecked.map(codeOf).join(', ')}), entry revealed in eagle3prep.jsonc (${Date.now() - t} ms)`,
  );
  await vscode.commands.executeCommand(mapping.command.command, ...(mapping.command.arguments ?? []));
  const after = await waitFor('the fixed rows to leave Problems', () => {
    const d = vscode.languages.getDiagnostics(damagedUri).filter(rowEntry);
    return d.length === 2 ? d : undefined;
  });
  assert.deepEqual(after.map(codeOf).sort(), ['empty_conversation', 'invalid_json']);
  console.log(
    `[host-suite] ok: quick fixes "${alias.title}" and "${mapping.title}" wrote eagle3prep.jsonc; Problems now ${after.map((d) => d.code).join(', ')}`,
  );

  // 5. Prepare all datasets in workspace: the pick list pre-selects missing / stale outputs; accept it.
  t = Date.now();
  const batch = vscode.commands.executeCommand<BatchResult | undefined>('eagle3prep.prepareAll');
  await sleep(2000);
  await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
  const br = await batch;
  assert.ok(br, 'prepareAll returned nothing (the pick list was not accepted?)');
  const ran = br.runs.map((r) => path.basename(r.inputs[0])).sort();
  assert.deepEqual(
    ran,
    // Issue 24: the quick fixes' eagle3prep.jsonc ("narrator", "dialogue_turns") stales only the files that hold
    // those spellings: agentic-trajectories.jsonl and big-damage.jsonl stay prepared and are not picked.
    ['chat-sharegpt-human-gpt.jsonl', 'damaged.jsonl', 'prompts-only.jsonl', 'reasoning-sharegpt.jsonl', 'swe-agent-trajectory-field.jsonl'],
    'files picked by default',
  );
  for (const r of br.runs) {
    assert.ok(r.result, `${r.inputs[0]}: ${r.error}`);
    assert.equal(r.outDir, path.join(ws, path.basename(r.inputs[0]).replace(/\.jsonl$/, '.eagle3')));
    assert.ok(fs.existsSync(path.join(r.outDir, 'report.json')));
  }
  const dmg = br.runs.find((r) => r.inputs[0] === damaged)!.result!.files[0];
  // with eagle3prep.jsonc: rows 1, 3, 4, 6 written; 2 errored (invalid JSON); 5 dropped (empty)
  assert.deepEqual([dmg.rowsRead, dmg.rowsWritten, dmg.rowsErrored, dmg.rowsDropped], [6, 4, 1, 1], 'damaged.jsonl accounting with the project config');
  state = await waitFor('every dataset to be prepared', async () => {
    const s = await treeState();
    return s.every((d) => d.state === 'prepared') ? s : undefined;
  });
  console.log(
    `[host-suite] ok: Prepare all datasets ran ${br.runs.length} runs in ${Date.now() - t} ms; tree now: ${state.map((d) => `${path.basename(d.file)} [${d.description}]`).join('; ')}`,
  );

  // A dataset created after discovery appears on its own (watcher, no rescan of the others).
  fs.copyFileSync(path.join(samples, 'prompts-only.jsonl'), path.join(ws, 'late-arrival.jsonl'));
  t = Date.now();
  const late = await waitFor('late-arrival.jsonl in the Datasets view', async () => byName(await treeState(), 'late-arrival.jsonl'));
  assert.deepEqual([late.format, late.rows, late.state], ['prompt-only', 4, 'none']);
  console.log(`[host-suite] ok: a new file appeared in the Datasets view in ${Date.now() - t} ms [${late.description}]`);

  // New files: the watcher (checked above for late-arrival.jsonl) or, when a loaded machine's watcher
  // misses files made inside a new folder, the view's Refresh; the checks below are about the runs.
  const seen = async <T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> => {
    try {
      return await waitFor(what, probe, 15_000);
    } catch {
      console.log(`[host-suite] note: the file watcher did not report ${what} within 15 s; Refresh`);
      await vscode.commands.executeCommand('eagle3prep.datasets.refresh');
      return waitFor(what, probe);
    }
  };

  // Issue 24: a folder prepared from the Explorer (one run, <folder>.eagle3/): each of its files shows
  // that run's figures for it in the tree and the dashboard, equal to report.json.
  const folder = path.join(ws, 'agent-runs');
  fs.mkdirSync(folder);
  for (const f of ['chat-sharegpt-human-gpt.jsonl', 'reasoning-sharegpt.jsonl']) fs.copyFileSync(path.join(samples, f), path.join(folder, f));
  await seen('the folder files in the Datasets view', async () => (await treeState()).filter((d) => d.file.startsWith(folder + path.sep)).length === 2);
  const folderRun = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', vscode.Uri.file(folder));
  assert.ok(folderRun?.ok && folderRun.files.length === 2, `folder run: ${folderRun?.failures.join('; ')}`);
  assert.equal(folderRun.outDir, path.join(ws, 'agent-runs.eagle3'));
  const inFolder = await waitFor('the folder run in the Datasets view', async () => {
    const s = (await treeState()).filter((d) => d.file.startsWith(folder + path.sep));
    return s.length === 2 && s.every((d) => d.state === 'prepared') ? s : undefined;
  });
  for (const d of inFolder) {
    const fr: PrepareResult['files'][number] | undefined = folderRun.files.find((f) => f.file === d.file);
    assert.ok(fr, `${d.file} is in the folder run`);
    assert.equal(d.records, fr.recordsWritten, `${d.file}: the tree's records are the folder run's`);
    const dash = await vscode.commands.executeCommand<DashboardResult>('eagle3prep.openDashboard', vscode.Uri.file(d.file));
    assert.ok(dash?.model?.kind === 'dataset', `dashboard of ${d.file}: ${JSON.stringify(dash?.error)}`);
    assert.deepEqual([dash.model.dataset.records, dash.model.dataset.tokens.total], [fr.recordsWritten, fr.totalTokens]);
  }
  // Issue 24: the view is a tree by folder; the folder's row summarizes its files.
  for (const d of inFolder) {
    assert.equal(d.folder?.label, 'agent-runs', `${d.file}: its folder row`);
    assert.match(d.folder.description, /^2 datasets · 2 prepared/, `the folder row's summary: ${d.folder.description}`);
  }
  assert.equal(byName(await treeState(), 'damaged.jsonl')?.folder, undefined, 'a file at the workspace root is at the top of the tree');
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  console.log(
    `[host-suite] ok: a folder run (agent-runs.eagle3/) is each file's output in the tree and the dashboard: ${inFolder.map((d) => `${path.basename(d.file)} [${d.description}]`).join('; ')}`,
  );

  // Issue 24: a file that fails is 'failed' in the tree with its reason, leaves no output folder, and its rows are in Problems.
  const failing = path.join(ws, 'unknown-shape.jsonl');
  fs.writeFileSync(failing, '{"foo": 1, "bar": "x"}\n{"foo": 2, "bar": "y"}\n');
  await seen('unknown-shape.jsonl in the Datasets view', async () => byName(await treeState(), 'unknown-shape.jsonl'));
  const failedRun = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', vscode.Uri.file(failing));
  assert.equal(failedRun?.ok, false, 'the unknown shape fails');
  assert.equal(fs.existsSync(path.join(ws, 'unknown-shape.eagle3')), false, 'no empty output folder is left');
  const failedNode = await waitFor('unknown-shape.jsonl failed in the tree', async () => {
    const d = byName(await treeState(), 'unknown-shape.jsonl');
    return d?.state === 'failed' ? d : undefined;
  });
  assert.match(failedNode.description, /^failed: no record written and no prompt set aside \(2 rows read: 2 unrecognized_shape/);
  assert.equal(failedNode.icon.id, 'circle-slash');
  const failedDiags = await waitFor('Problems for unknown-shape.jsonl', () => {
    const d = vscode.languages.getDiagnostics(vscode.Uri.file(failing)).filter((x) => x.source === 'eagle3-prep');
    return d.length >= 2 ? d : undefined;
  });
  assert.deepEqual(failedDiags.map((d) => [d.range.start.line + 1, typeof d.code === 'object' ? String(d.code.value) : String(d.code)]).sort(), [
    [1, 'unrecognized_shape'],
    [2, 'unrecognized_shape'],
  ]);
  // The dashboard says the same (a failed run wrote nothing to show), not "prepare it first".
  const failedDash = await vscode.commands.executeCommand<{ error?: string }>('eagle3prep.openDashboard', vscode.Uri.file(failing));
  assert.match(failedDash?.error ?? '', /^unknown-shape\.jsonl failed in its last run, which wrote nothing: no record written and no prompt set aside/);
  console.log(
    `[host-suite] ok: a failed file: tree [${failedNode.description}], dashboard [${failedDash?.error}], no output folder, Problems rows 1-2 unrecognized_shape`,
  );
  fs.rmSync(failing);
  fs.rmSync(folder, { recursive: true, force: true });
  fs.rmSync(path.join(ws, 'agent-runs.eagle3'), { recursive: true, force: true });

  // 6. Check chat template (the embedded Qwen3): rewrites history, trains <|im_end|>.
  t = Date.now();
  const check = await vscode.commands.executeCommand<CheckTemplateResult | undefined>('eagle3prep.checkTemplate');
  assert.ok(check, 'eagle3prep.checkTemplate returned nothing (see the output channel)');
  assert.equal(check.prefixStable, false, 'Qwen3 rewrites history');
  assert.deepEqual(check.endOfTurnTrained, ['<|im_end|>']);
  // Issue 15: a webview with the decisions and the probe renders coloured (trained segments drawn).
  assert.ok(check.drawn, 'the template check webview did not acknowledge');
  assert.equal(check.drawn.probes, check.records.length);
  assert.ok(check.drawn.trainedSegments > 0, 'trained text is coloured');
  assert.deepEqual(check.drawn.decisions.slice(0, 3), ['Prefix-stable', 'End-of-turn token trained', 'Text after it (not trained)']);
  const tab = vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .find((x) => x.input instanceof vscode.TabInputWebview && x.input.viewType.includes('eagle3prep.templateCheck'));
  assert.equal(tab?.label, 'Chat template: Qwen3 (embedded default)');
  console.log(
    `[host-suite] ok: Check chat template in ${Date.now() - t} ms: prefix-stable ${check.prefixStable}, end of turn ${check.endOfTurnTrained.join(', ')}, ${check.warnings.length} warnings`,
  );
  // Issue 24: a tokenizer switch while the check is open (what its "Select tokenizer…" button does: it
  // writes eagle3prep.tokenizerPath) checks again, for the new tokenizer, and the page names it.
  const other = path.join(ws, 'models', 'Other-Model');
  fs.mkdirSync(other, { recursive: true });
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    fs.copyFileSync(path.join(ext.extensionPath, 'dist', 'default-tokenizer', 'qwen3', f), path.join(other, f));
  const since = Date.now();
  const cfg = vscode.workspace.getConfiguration('eagle3prep');
  await cfg.update('tokenizerPath', other, vscode.ConfigurationTarget.Global);
  try {
    const tabLabel = () =>
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .find((x) => x.input instanceof vscode.TabInputWebview && x.input.viewType.includes('eagle3prep.templateCheck'))?.label;
    await waitFor('the template check re-run for Other-Model', async () => {
      const shown = await vscode.commands.executeCommand<{ message: string }[]>('eagle3prep.notifications', since);
      return shown.some((n) => n.message.startsWith('Chat template of Other-Model:')) && tabLabel() === 'Chat template: Other-Model';
    });
    console.log(`[host-suite] ok: Check chat template followed the tokenizer switch (tab "${tabLabel()}") in ${Date.now() - since} ms`);
  } finally {
    await cfg.update('tokenizerPath', undefined, vscode.ConfigurationTarget.Global);
    fs.rmSync(path.join(ws, 'models'), { recursive: true, force: true });
  }

  // Leave the damaged file, the Datasets view and the Problems panel on screen for the screenshot.
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  fs.appendFileSync(damaged, '{"conversations": [{"from": "human", "value": "x"}, {"from": "oracle", "value": "y"}]}\n');
  await vscode.window.showTextDocument(damagedUri);
  await vscode.commands.executeCommand('eagle3prep.datasets.focus');
  await vscode.commands.executeCommand('workbench.actions.view.problems');
  await waitFor('the new unknown role in Problems', () => vscode.languages.getDiagnostics(damagedUri).some((d) => codeOf(d) === 'unknown_role'));
  await sleep(1000);
}
