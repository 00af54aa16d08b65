/**
 * Extension-host checks of the record hover and the mask view (issue 5, part A), run by suite.ts
 * inside the real VS Code. Each check prints a `[host-suite] ok: …` line.
 *
 * Needs the workspace folder to hold `chat-sharegpt-human-gpt.jsonl` (and its prepared
 * `chat-sharegpt-human-gpt.eagle3/data/tokenized_data.jsonl` written with the default settings) and
 * `agentic-trajectories.jsonl`, as suite.ts leaves them.
 */
import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

/** What `eagle3prep.openMaskView` resolves with (src/vscode/maskView.ts MaskViewResult), as far as checked here. */
interface MaskViewResult {
  state: { uri: string; line: number; lineCount: number; record: number; mask: string; source: 'editor' | 'disk' };
  view?: {
    status: string;
    records: { id: string; tokens: number; trainableTokens: number }[];
    totals: { tokens: number; trainableTokens: number; records: number };
    detail?: { index: number; tokens: { id: number; trainable: boolean; special: boolean; turn: number }[] };
  };
  error?: string;
  drawn?: { line: number; record: number; tokens: number; labels: string[]; trainedSpans: number };
  exact?: { records: { id: string; tokens: number; trainableTokens: number }[]; tokens: number; trainableTokens: number } | { none: string };
}

function hoverText(hovers: vscode.Hover[]): { text: string; hover?: vscode.Hover } {
  for (const h of hovers) {
    const text = h.contents.map((c) => (typeof c === 'string' ? c : 'value' in c ? c.value : '')).join('\n');
    if (text.includes('EAGLE-3')) return { text, hover: h };
  }
  return { text: '' };
}

function maskViewTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes('eagle3prep.maskView'));
}

/** Runs the hover and mask view checks; throws on the first failure. */
export async function runRecordViewChecks(ws: string): Promise<void> {
  const commands = await vscode.commands.getCommands(true);
  assert.ok(commands.includes('eagle3prep.openMaskView'), 'command eagle3prep.openMaskView is not registered');

  // Hover: over the first assistant turn's text of line 1.
  const chat = vscode.Uri.file(path.join(ws, 'chat-sharegpt-human-gpt.jsonl'));
  const doc = await vscode.workspace.openTextDocument(chat);
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
  const line0 = doc.lineAt(0).text;
  const col = line0.indexOf('Water only');
  assert.ok(col > 0, 'sample line 1 has the text "Water only"');
  let t = Date.now();
  const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', chat, new vscode.Position(0, col + 3));
  const first = hoverText(hovers);
  assert.ok(first.hover, `no EAGLE-3 hover on line 1 (language ${doc.languageId}; ${hovers.length} hovers)`);
  const ms = Date.now() - t;
  for (const want of [
    '**EAGLE-3 · line 1**',
    '`sharegpt`',
    '**114 tokens**',
    '**30 trainable**',
    '2 records',
    'mask `assistant`',
    'Qwen3 (embedded default)',
    '**turn 3 · assistant** — 44 characters, 11 tokens, **trained**',
    '| 1 | system | 29 | 6 |',
    'command:eagle3prep.openMaskView',
  ]) {
    assert.ok(first.text.includes(want), `hover lacks ${JSON.stringify(want)}:\n${first.text}`);
  }
  // The hover's range is the turn's JSON object: {"from": "gpt", "value": "Water only …"}.
  const r = first.hover.range!;
  const turnText = doc.getText(r);
  assert.deepEqual(JSON.parse(turnText), { from: 'gpt', value: 'Water only when the top inch of soil is dry.' }, `hover range ${turnText}`);
  console.log(
    `[host-suite] ok: hover on line 1, turn 3 → sharegpt, 114 tokens, 30 trainable, 2 records, the turn's range ${r.start.character}-${r.end.character} (${ms} ms, tokenizer load included)`,
  );

  // Outside any turn ("id"): the whole row, no turn marked.
  const hoverId = hoverText(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', chat, new vscode.Position(0, 2)));
  assert.ok(hoverId.hover && !hoverId.text.includes('$(arrow-right) **turn'), 'a hover outside any turn marks no turn');
  assert.equal(hoverId.hover.range?.end.character, line0.length, 'outside a turn, the hover covers the line');

  // Settings reach the hover: last-assistant → 1 record, 14 trainable tokens.
  const config = vscode.workspace.getConfiguration('eagle3prep');
  await config.update('maskPolicy', 'last-assistant', vscode.ConfigurationTarget.Global);
  try {
    t = Date.now();
    const h2 = hoverText(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', chat, new vscode.Position(0, col)));
    for (const want of ['**14 trainable**', '1 record ·', 'mask `last-assistant`'])
      assert.ok(h2.text.includes(want), `last-assistant hover lacks ${want}:\n${h2.text}`);
    console.log(`[host-suite] ok: hover follows eagle3prep.maskPolicy (last-assistant: 1 record, 14 trainable; ${Date.now() - t} ms warm)`);
  } finally {
    await config.update('maskPolicy', undefined, vscode.ConfigurationTarget.Global);
  }

  // Mask view on line 1: the webview draws record #0, whose tokens are what prepare wrote.
  t = Date.now();
  const mv = await vscode.commands.executeCommand<MaskViewResult | undefined>('eagle3prep.openMaskView', chat, 1);
  assert.ok(mv?.view?.detail, `mask view returned no record: ${JSON.stringify(mv?.error ?? mv)}`);
  assert.equal(mv.state.line, 1);
  assert.equal(mv.state.source, 'editor', 'an open document is read from the editor');
  assert.equal(mv.view.records.length, 2);
  assert.ok(mv.drawn, 'the webview did not acknowledge the render within 10 s (protocol round trip)');
  assert.deepEqual(
    { line: mv.drawn.line, record: mv.drawn.record, tokens: mv.drawn.tokens },
    { line: 1, record: 0, tokens: mv.view.detail.tokens.length },
    'the webview drew another row/record than the host sent',
  );
  const written = fs
    .readFileSync(path.join(ws, 'chat-sharegpt-human-gpt.eagle3', 'data', 'tokenized_data.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; input_ids: number[]; loss_mask: number[] });
  const rec0 = written.find((w) => w.id === 'chat-0#0');
  assert.ok(rec0, 'tokenized_data.jsonl has chat-0#0');
  assert.deepEqual(
    mv.view.detail.tokens.map((x) => x.id),
    rec0.input_ids,
    'mask view token ids != tokenized_data.jsonl input_ids',
  );
  assert.deepEqual(
    mv.view.detail.tokens.map((x) => (x.trainable ? 1 : 0)),
    rec0.loss_mask,
    'mask view trainable flags != loss_mask',
  );
  assert.equal(mv.view.detail.tokens.filter((x) => x.special).length, 6, 'record chat-0#0 has 3 <|im_start|> and 3 <|im_end|>');
  assert.equal(maskViewTabs().length, 1, 'one mask view tab');
  console.log(
    `[host-suite] ok: mask view opened on line 1: webview drew ${mv.drawn.tokens} tokens of record ${mv.view.records[0].id}, equal to tokenized_data.jsonl (ids and loss_mask), ${Date.now() - t} ms`,
  );

  // Issue 15: turn labels are true for the record shown. Record #0 trains turn 3; record #1 trains
  // turn 5 and holds turn 3 as context.
  assert.deepEqual(mv.drawn.labels, ['turn 1 · system', 'turn 2 · user', 'turn 3 · assistant · trained']);
  // Record #1, as the webview's record picker asks for it.
  const rec1 = await vscode.commands.executeCommand<MaskViewResult | undefined>('eagle3prep.maskView.showRecord', 1);
  assert.equal(rec1?.drawn?.record, 1);
  assert.deepEqual(rec1?.drawn?.labels, [
    'turn 1 · system',
    'turn 2 · user',
    'turn 3 · assistant · context here (trained in record #0)',
    'turn 4 · user',
    'turn 5 · assistant · trained',
  ]);
  // Counts from the current prepared output (exact), equal to tokenized_data.jsonl.
  assert.ok(mv.exact && 'records' in mv.exact, `exact counts: ${JSON.stringify(mv.exact)}`);
  const fromFile = written.filter((w) => w.id.startsWith('chat-0#'));
  assert.deepEqual(
    mv.exact.records.map((r) => [r.id, r.tokens, r.trainableTokens]),
    fromFile.map((w) => [w.id, w.input_ids.length, w.loss_mask.reduce((a, b) => a + b, 0)]),
  );
  // Clicking a token of turn 3's content reveals that field's value in the JSON line.
  const sel = await vscode.commands.executeCommand<vscode.Range | undefined>('eagle3prep.maskView.revealToken', 2, 'content');
  assert.ok(sel, 'reveal returned no range');
  const revealed = vscode.window.activeTextEditor;
  assert.equal(revealed?.document.uri.fsPath, chat.fsPath);
  assert.equal(revealed?.document.getText(revealed.selection), '"Water only when the top inch of soil is dry."');
  console.log(
    `[host-suite] ok: mask view labels per record (#1: ${rec1.drawn.labels.slice(2, 5).join(' | ')}); exact counts from tokenized_data.jsonl; token → source field ${sel.start.character}-${sel.end.character}`,
  );

  // Same panel, another row, the Uri given as a string (the hover link's form).
  const mv3 = await vscode.commands.executeCommand<MaskViewResult | undefined>('eagle3prep.openMaskView', chat.toString(), 3);
  assert.equal(mv3?.state.line, 3);
  assert.equal(mv3?.drawn?.line, 3, 'the webview drew line 3');
  assert.equal(maskViewTabs().length, 1, 'the mask view panel is reused');
  assert.equal(maskViewTabs()[0].label, 'Mask: chat-sharegpt-human-gpt.jsonl:3');

  // A file that is not open: read from disk through the line index.
  // (outside the workspace, so the Datasets view checks that run later see only the samples)
  const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'eagle3-maskview-')), 'agentic-copy.jsonl');
  fs.copyFileSync(path.join(ws, 'agentic-trajectories.jsonl'), copy);
  t = Date.now();
  const mvDisk = await vscode.commands.executeCommand<MaskViewResult | undefined>('eagle3prep.openMaskView', vscode.Uri.file(copy), 2);
  assert.equal(mvDisk?.state.source, 'disk', 'a file not open in an editor is read from disk');
  assert.equal(mvDisk?.state.lineCount, 3);
  assert.ok(
    mvDisk?.view && mvDisk.view.records.length >= 1 && mvDisk.drawn && mvDisk.drawn.tokens > 0,
    `line 2 of the agentic copy: ${JSON.stringify(mvDisk?.error)}`,
  );
  console.log(
    `[host-suite] ok: mask view reused for line 3, then line 2 of a file not open (read from disk: ${mvDisk.view.records.length} records, ${mvDisk.drawn.tokens} tokens drawn, ${Date.now() - t} ms)`,
  );

  // A line past the end: an error shown in the view, not a throw.
  const past = await vscode.commands.executeCommand<MaskViewResult | undefined>('eagle3prep.openMaskView', vscode.Uri.file(copy), 99);
  assert.match(past?.error ?? '', /line 99 is outside 1\.\.3/);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  fs.rmSync(path.dirname(copy), { recursive: true, force: true }); // the workspace is shared with later checks (the Datasets view lists its files)
  console.log('[host-suite] ok: a line past the end shows an error in the mask view');

  // Issue 24: a long agent record whose training starts past the 20,000 tokens the view draws:
  // the view draws the trained span (with context), not the record's first 20,000 tokens.
  const longDir = fs.mkdtempSync(path.join(os.tmpdir(), 'eagle3-long-'));
  try {
    const words = Array.from({ length: 26_000 }, (_, i) => `step${i % 997} ok`).join(' ');
    const longRow = {
      messages: [
        { role: 'user', content: `Read this log and say whether it passed:\n${words}` },
        { role: 'assistant', content: 'It passed: every step reports ok.' },
      ],
    };
    const longFile = path.join(longDir, 'long-agent.jsonl');
    fs.writeFileSync(longFile, JSON.stringify(longRow) + '\n');
    t = Date.now();
    const mvLong = await vscode.commands.executeCommand<MaskViewResult | undefined>('eagle3prep.openMaskView', vscode.Uri.file(longFile), 1);
    const toks = mvLong?.view?.detail?.tokens ?? [];
    const firstTrained = toks.findIndex((x) => x.trainable);
    assert.ok(
      toks.length > 20_000 && firstTrained > 20_000,
      `a record trained past token 20,000 (${toks.length} tokens, first trained ${firstTrained}): ${mvLong?.error}`,
    );
    assert.ok(mvLong?.drawn && mvLong.drawn.tokens <= 20_000, `at most 20,000 tokens drawn (${mvLong?.drawn?.tokens})`);
    assert.equal(mvLong.drawn.trainedSpans, 1, 'the trained span is drawn');
    console.log(
      `[host-suite] ok: a ${toks.length}-token record trained from token ${firstTrained}: ${mvLong.drawn.tokens} tokens drawn around its trained span (${Date.now() - t} ms)`,
    );
  } finally {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(longDir, { recursive: true, force: true });
  }

  // Issue 15: a hostile chat template (a loop of 10^9 steps) in a model folder neither freezes nor
  // crashes the extension host: the hover is rendered in a worker and stopped at its budget.
  const hostile = fs.mkdtempSync(path.join(os.tmpdir(), 'eagle3-hostile-'));
  const qwen = path.join(vscode.extensions.getExtension('eagle3-prep.eagle3-prep')!.extensionPath, 'dist', 'default-tokenizer', 'qwen3');
  fs.copyFileSync(path.join(qwen, 'tokenizer.json'), path.join(hostile, 'tokenizer.json'));
  const cfg = JSON.parse(fs.readFileSync(path.join(qwen, 'tokenizer_config.json'), 'utf8'));
  cfg.chat_template = '{% for i in range(1000000000) %}{{ i }}{% endfor %}';
  fs.writeFileSync(path.join(hostile, 'tokenizer_config.json'), JSON.stringify(cfg));
  await config.update('tokenizerPath', hostile, vscode.ConfigurationTarget.Global);
  try {
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.One });
    t = Date.now();
    const timer = Date.now();
    let ticks = 0;
    const tick = setInterval(() => ticks++, 100); // the extension host's event loop keeps running meanwhile
    const hh = hoverText(await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', chat, new vscode.Position(0, col)));
    clearInterval(tick);
    const took = Date.now() - t;
    assert.match(hh.text, /longer than|budget|template|worker/i, `hostile template hover: ${hh.text}`);
    assert.ok(took < 30000, `the hover took ${took} ms`);
    // A blocked thread would tick ~0 times; timers drift under load, so half the expected count is the bar.
    assert.ok(ticks >= Math.floor((Date.now() - timer) / 200), `the extension host's event loop stalled (${ticks} ticks in ${took} ms)`);
    console.log(
      `[host-suite] ok: a looping chat template: hover answered in ${took} ms ("${hh.text.split('\n')[0].slice(0, 120)}"), event loop ticked ${ticks}×`,
    );
  } finally {
    await config.update('tokenizerPath', undefined, vscode.ConfigurationTarget.Global);
    fs.rmSync(hostile, { recursive: true, force: true });
  }
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}
