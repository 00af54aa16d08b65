/**
 * Extension-host checks of issue 24 item 6 ("staleness from one comparison"): after a record-deciding
 * setting changes, after a quick fix writes `eagle3prep.jsonc`, and after a tokenizer switch, the
 * Datasets view, the dashboard, Problems and the hover say the same thing about each output — current,
 * or stale for the same first reason — and Problems keeps a file's run entries (tagged stale) until
 * that file is prepared again. Called by suite.ts after datasetsSuite.ts, in the same workspace (its
 * root `eagle3prep.jsonc` maps "narrator" and "dialogue_turns", which the files here do not hold).
 *
 * Files (in `<ws>/agree/`, prepared one by one):
 * - `a-storyteller.jsonl`: a row with the unknown speaker "storyteller" (errored) — the quick fix's target;
 * - `b-dropped.jsonl`: a row with an empty conversation (dropped) — its run entry in Problems is watched,
 *   and it is never opened (an open file's live row check would stand in for the run's entry on that line);
 * - `c-clean.jsonl`: two good rows — hovered;
 * - `d-closed.jsonl`: the same unknown speaker and a truncated line, never opened — after the quick fix its
 *   rows are checked again without opening it: the fixed row leaves Problems, the truncated one stays.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PrepareResult } from '../../src/core/run/contract';
import type { DashboardResult } from '../../src/vscode/dashboard';
import type { DatasetStateSummary } from '../../src/vscode/datasetsModel';
import { waitFor as waitUntil, type Probe } from './wait';

const waitFor = <T>(what: string, probe: Probe<T>, timeoutMs = 60_000) => waitUntil(what, probe, timeoutMs);

const chat = (speaker: string, q: string, a: string) =>
  JSON.stringify({
    conversations: [
      { from: 'human', value: q },
      { from: speaker, value: a },
    ],
  });

const codeOf = (d: vscode.Diagnostic) => (typeof d.code === 'object' ? String(d.code.value) : String(d.code));

/** The run's row entries of a file in Problems ("… (row N was dropped by the last run…)"). */
function runEntries(uri: vscode.Uri): vscode.Diagnostic[] {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'eagle3-prep' && /\(row \d+ was \w+ by the last run/.test(d.message));
}

/** The Problems tag of a run entry for an output in this state (src/vscode/runProblems.ts). */
function runNote(staleBecause: string[]): string {
  return staleBecause.length ? `; the output is stale (${staleBecause[0]}): prepare again to update` : '';
}

async function treeNode(file: string): Promise<DatasetStateSummary | undefined> {
  const s = await vscode.commands.executeCommand<DatasetStateSummary[]>('eagle3prep.datasets.state');
  return s.find((d) => d.file === file);
}

/** The hover's text on line 1 of `uri`, turn 2 (the answer). */
async function hoverOn(uri: vscode.Uri): Promise<string> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const col = doc.lineAt(0).text.indexOf('"from":"gpt"');
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, new vscode.Position(0, Math.max(0, col + 3)));
  for (const h of hovers) {
    const text = h.contents.map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : '')).join('\n');
    if (text.includes('EAGLE-3')) return text;
  }
  throw new Error(`no EAGLE-3 hover on ${path.basename(uri.fsPath)} line 1 (${hovers.length} hovers)`);
}

/**
 * Waits until the Datasets view shows `file` in the expected state (every stale reason matching one of
 * `stale`, in order, or current when `stale` is empty), then checks that the dashboard gives the same
 * reasons. Returns the tree's reasons.
 */
async function treeAndDashboard(file: string, stale: RegExp[], event: string): Promise<string[]> {
  const name = path.basename(file);
  const node = await waitFor(`${name} ${stale.length ? 'stale' : 'current'} in the Datasets view after ${event}`, async () => {
    const n = await treeNode(file);
    if (!n) return undefined;
    const ok = stale.length
      ? n.state === 'stale' && n.staleBecause.length === stale.length && stale.every((re, i) => re.test(n.staleBecause[i]))
      : n.state === 'prepared' && n.staleBecause.length === 0;
    return ok ? n : undefined;
  });
  const dash = await vscode.commands.executeCommand<DashboardResult>('eagle3prep.openDashboard', vscode.Uri.file(file));
  assert.ok(dash?.model?.kind === 'dataset', `dashboard of ${name} after ${event}: ${JSON.stringify(dash?.error)}`);
  assert.deepEqual(dash.model.dataset.staleBecause, node.staleBecause, `${name} after ${event}: the dashboard's staleness is the tree's`);
  assert.equal(dash.model.dataset.records, node.records, `${name} after ${event}: the dashboard counts the tree's records`);
  return node.staleBecause;
}

/** Waits until Problems shows the run entries of `uri` (`lines`), each tagged as the tree's state says. */
async function problemsKept(uri: vscode.Uri, lines: number[], staleBecause: string[], event: string): Promise<vscode.Diagnostic[]> {
  const note = runNote(staleBecause);
  return waitFor(`${path.basename(uri.fsPath)}'s run entries in Problems ${note ? 'tagged stale' : 'untagged'} after ${event}`, () => {
    const d = runEntries(uri);
    const got = d.map((x) => x.range.start.line + 1).sort((a, b) => a - b);
    return JSON.stringify(got) === JSON.stringify(lines) && d.every((x) => x.message.endsWith(`by the last run${note})`)) ? d : undefined;
  });
}

/** The hover of `uri` agrees with the tree: exact counts from the output when current, else the tree's first reason. */
async function hoverAgrees(uri: vscode.Uri, staleBecause: string[], event: string): Promise<string> {
  const name = path.basename(uri.fsPath);
  // The hover re-reads the output state on each call; the first call after a setting change may race the change.
  const text = await waitFor(`the hover of ${name} to agree after ${event}`, async () => {
    const t = await hoverOn(uri);
    return (staleBecause.length ? t.includes(`(output stale: ${staleBecause[0]})`) : t.includes('exact, from')) ? t : undefined;
  });
  assert.ok(!/settings differ from the run/.test(text), `${name}: the hover's own comparison: ${text}`);
  return text;
}

/** Runs the checks; throws on the first failure. */
export async function runAgreementChecks(ws: string, ext: vscode.Extension<unknown>): Promise<void> {
  const dir = path.join(ws, 'agree');
  fs.mkdirSync(dir, { recursive: true });
  const a = path.join(dir, 'a-storyteller.jsonl');
  const b = path.join(dir, 'b-dropped.jsonl');
  const c = path.join(dir, 'c-clean.jsonl');
  const d = path.join(dir, 'd-closed.jsonl');
  fs.writeFileSync(
    a,
    [chat('gpt', 'Tell me a tale.', 'Once there was a fox.'), chat('storyteller', 'And then?', 'It ran away.'), chat('gpt', 'The end?', 'Yes.')].join('\n') +
      '\n',
  );
  fs.writeFileSync(b, [chat('gpt', 'What is 3+3?', 'Six.'), JSON.stringify({ conversations: [] }), chat('gpt', 'And 4+4?', 'Eight.')].join('\n') + '\n');
  fs.writeFileSync(c, [chat('gpt', 'Name a planet.', 'Mars.'), chat('gpt', 'Name a star.', 'Vega.')].join('\n') + '\n');
  fs.writeFileSync(
    d,
    [chat('gpt', 'Hello?', 'Hi.'), chat('storyteller', 'A riddle?', 'No.'), '{"conversations": [{"from": "human", "value": "cut'].join('\n') + '\n',
  );
  const [ua, ub, uc, ud] = [a, b, c, d].map((f) => vscode.Uri.file(f));
  await waitFor('the agree/ files in the Datasets view', async () => (await Promise.all([a, b, c, d].map(treeNode))).every(Boolean), 15_000).catch(async () => {
    await vscode.commands.executeCommand('eagle3prep.datasets.refresh');
    await waitFor('the agree/ files in the Datasets view after Refresh', async () => (await Promise.all([a, b, c, d].map(treeNode))).every(Boolean));
  });
  for (const u of [ua, ub, uc, ud]) {
    const r = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', u);
    assert.ok(r?.ok, `prepare ${path.basename(u.fsPath)}: ${r?.failures.join('; ')}`);
  }
  const rb = (await treeNode(b))!;
  assert.equal(rb.records, 2, `b-dropped.jsonl: 2 rows written as 2 records (${rb.description})`);

  // Before any event: current everywhere.
  let t = Date.now();
  for (const f of [a, b, c, d]) await treeAndDashboard(f, [], 'the runs');
  await problemsKept(ub, [2], [], 'the runs');
  await problemsKept(ud, [2, 3], [], 'the runs');
  await hoverAgrees(uc, [], 'the runs');
  console.log(
    `[host-suite] ok: agreement after the runs: a, b, c, d current in the tree, the dashboard, Problems (b row 2 dropped; d rows 2-3 errored) and the hover (${Date.now() - t} ms)`,
  );

  // 1. A record-deciding setting changes: every output stale for it, the same reason everywhere; Problems keeps b's entry, tagged.
  const config = vscode.workspace.getConfiguration('eagle3prep');
  t = Date.now();
  await config.update('maskPolicy', 'last-assistant', vscode.ConfigurationTarget.Global);
  try {
    const mask = /^settings changed: mask policy \(run: assistant, now: last-assistant\)$/;
    for (const f of [a, b, c, d]) await treeAndDashboard(f, [mask], 'the mask policy change');
    const why = (await treeNode(b))!.staleBecause;
    await problemsKept(ub, [2], why, 'the mask policy change');
    await hoverAgrees(uc, (await treeNode(c))!.staleBecause, 'the mask policy change');
    console.log(`[host-suite] ok: agreement after maskPolicy=last-assistant: tree, dashboard, Problems and hover say "${why[0]}" (${Date.now() - t} ms)`);
  } finally {
    await config.update('maskPolicy', undefined, vscode.ConfigurationTarget.Global);
  }
  t = Date.now();
  for (const f of [a, b, c, d]) await treeAndDashboard(f, [], 'the mask policy reset');
  await problemsKept(ub, [2], [], 'the mask policy reset');
  await hoverAgrees(uc, [], 'the mask policy reset');
  console.log(`[host-suite] ok: agreement after the mask policy reset: current everywhere again (${Date.now() - t} ms)`);

  // 2. A quick fix adds a role alias to the workspace's eagle3prep.jsonc: only the file holding that speaker goes stale;
  // the others (here and elsewhere in the workspace) keep their state and their run entries in Problems.
  const bigDamage = vscode.Uri.file(path.join(ws, 'big-damage.jsonl'));
  const bigBefore = runEntries(bigDamage).length;
  const bigNode = await treeNode(bigDamage.fsPath);
  await vscode.window.showTextDocument(ua);
  const unknown = await waitFor('the row check of a-storyteller.jsonl', () =>
    vscode.languages.getDiagnostics(ua).find((d) => codeOf(d) === 'unknown_role' && /\(row 2 will be errored\)/.test(d.message)),
  );
  const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider',
    ua,
    unknown.range,
    vscode.CodeActionKind.QuickFix.value,
  );
  const fix = actions.find((x) => x.title === 'Add role alias "storyteller" → assistant to eagle3prep.jsonc');
  assert.ok(fix?.command, `quick fixes offered: ${actions.map((x) => x.title).join(' | ')}`);
  t = Date.now();
  const fixed = await vscode.commands.executeCommand<{ file: string } | undefined>(fix.command.command, ...(fix.command.arguments ?? []));
  assert.equal(fixed?.file, path.join(ws, 'eagle3prep.jsonc'), 'the quick fix writes the eagle3prep.jsonc that covers the file (the workspace root one)');
  const whyA = await treeAndDashboard(a, [/eagle3prep\.jsonc changed since the run: role alias "storyteller", used in this file$/], 'the quick fix');
  for (const f of [b, c]) await treeAndDashboard(f, [], 'the quick fix');
  await problemsKept(ub, [2], [], 'the quick fix');
  await hoverAgrees(uc, [], 'the quick fix');
  // a-storyteller.jsonl: its run's row entries go (the rows are read again with the alias: row 2 is fine now).
  await waitFor('the fixed row of a-storyteller.jsonl to leave Problems', () => !vscode.languages.getDiagnostics(ua).some((d) => codeOf(d) === 'unknown_role'));
  assert.deepEqual(runEntries(ua), [], 'a-storyteller.jsonl: no run entry left (its rows are read with the new alias)');
  const hoverA = await hoverOn(ua);
  assert.ok(hoverA.includes(`(output stale: ${whyA[0]})`), `a-storyteller.jsonl's hover names the tree's reason "${whyA[0]}":\n${hoverA}`);
  // d-closed.jsonl, never opened, holds the speaker too: stale for the same reason, its rows checked again without
  // opening it — the fixed row 2 leaves Problems, the truncated row 3 stays ("will be errored").
  await treeAndDashboard(d, [/eagle3prep\.jsonc changed since the run: role alias "storyteller", used in this file$/], 'the quick fix');
  const dRows = await waitFor('d-closed.jsonl checked again after the quick fix', () => {
    const x = vscode.languages.getDiagnostics(ud).filter((e) => e.source === 'eagle3-prep' && /\(row \d+ (will be|was) \w+/.test(e.message));
    return x.length === 1 && codeOf(x[0]) === 'invalid_json' && !x.some((e) => codeOf(e) === 'unknown_role') ? x : undefined;
  });
  assert.deepEqual([dRows[0].range.start.line + 1, /will be errored/.test(dRows[0].message)], [3, true], dRows[0].message);
  assert.ok(!vscode.workspace.textDocuments.some((x) => x.uri.fsPath === d), 'd-closed.jsonl was not opened');
  // A file elsewhere in the workspace with run entries: untouched.
  if (bigNode) {
    const bigAfter = await treeNode(bigDamage.fsPath);
    assert.deepEqual([bigAfter?.state, bigAfter?.staleBecause], [bigNode.state, bigNode.staleBecause], 'big-damage.jsonl keeps its state');
    assert.equal(runEntries(bigDamage).length, bigBefore, "big-damage.jsonl keeps its run's entries in Problems");
  }
  console.log(
    `[host-suite] ok: agreement after the quick fix: a-storyteller.jsonl stale ("${whyA[0]}") in the tree, dashboard and hover; b and c current; b's and big-damage.jsonl's run entries kept (${bigBefore}) (${Date.now() - t} ms)`,
  );
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');

  // 3. A tokenizer switch (another tokenizer folder: the embedded Qwen3 files with its config rewritten): every output stale for it.
  const variant = path.join(ws, 'tokenizer-variant');
  fs.mkdirSync(variant, { recursive: true });
  const embedded = path.join(ext.extensionPath, 'dist', 'default-tokenizer', 'qwen3');
  fs.copyFileSync(path.join(embedded, 'tokenizer.json'), path.join(variant, 'tokenizer.json'));
  const tc = JSON.parse(fs.readFileSync(path.join(embedded, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(path.join(variant, 'tokenizer_config.json'), JSON.stringify({ ...tc, model_max_length: 4096 }, null, 1));
  t = Date.now();
  await config.update('tokenizerPath', variant, vscode.ConfigurationTarget.Global);
  try {
    const tok = /^tokenizer changed \(run: .+, active: [0-9a-f]+\)$/;
    for (const f of [b, c]) await treeAndDashboard(f, [tok], 'the tokenizer switch');
    for (const f of [a, d]) await treeAndDashboard(f, [tok, /eagle3prep\.jsonc changed since the run/], 'the tokenizer switch');
    const why = (await treeNode(b))!.staleBecause;
    await problemsKept(ub, [2], why, 'the tokenizer switch');
    await hoverAgrees(uc, (await treeNode(c))!.staleBecause, 'the tokenizer switch');
    console.log(`[host-suite] ok: agreement after the tokenizer switch: tree, dashboard, Problems and hover say "${why[0]}" (${Date.now() - t} ms)`);
  } finally {
    await config.update('tokenizerPath', undefined, vscode.ConfigurationTarget.Global);
  }
  for (const f of [b, c]) await treeAndDashboard(f, [], 'the tokenizer reset');
  await problemsKept(ub, [2], [], 'the tokenizer reset');
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(variant, { recursive: true, force: true });
}
