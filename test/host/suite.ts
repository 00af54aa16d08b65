/**
 * Extension-host integration tests (bundled to dist-test/host-suite.js).
 *
 * Loaded by VS Code as `extensionTestsPath`: by scripts/vscode-host/run-tests.mjs
 * here (see vscode-host.test.ts) or by @vscode/test-electron's runTests elsewhere
 * (see runElectron.mjs). It needs a workspace folder it may write to; it copies
 * samples into it, runs `eagle3prep.prepare` on them and checks what was written.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PrepareResult } from '../../src/core/run/contract';
import { readReport, REPORT_SCHEMA_VERSION } from '../../src/core/run/reports/report';
import { checkTokenizerFolder, findCachedTokenizers, tokenizerDisplayName } from '../../src/vscode/tokenizerFolders';
import { runPrepareInWorker } from '../../src/vscode/workerClient';
import type { Eagle3PrepExports } from '../../src/extension';
import { runAgreementChecks } from './agreementSuite';
import { runDatasetsChecks } from './datasetsSuite';
import { checkNoConfigurationWarnings } from './hostLogCheck';
import { HostSteps } from './steps';
import { runWorkerLanesCheck } from './workerLanesCheck';
import { sleep, waitFor as waitUntil, type Probe } from './wait';

const EXTENSION_ID = 'eagle3-prep.eagle3-prep';

interface TokenizedRecord {
  id: string;
  source: { file: string; line: number };
  input_ids: number[];
  loss_mask: number[];
  seq_len: number;
  n_prompt_tokens: number;
  n_response_tokens: number;
}

const waitFor = <T>(what: string, probe: Probe<T>, timeoutMs = 15000) => waitUntil(what, probe, timeoutMs);

/** Checks every record of a tokenized_data.jsonl; returns them. */
function checkTokenizedData(file: string, expectedSourceFile: string): TokenizedRecord[] {
  assert.ok(fs.existsSync(file), `${file} was not written`);
  const lines = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  return lines.map((line, i) => {
    const where = `${path.basename(file)} record ${i + 1}`;
    let r: TokenizedRecord;
    try {
      r = JSON.parse(line);
    } catch (e) {
      throw new Error(`${where} is not JSON: ${(e as Error).message}`, { cause: e });
    }
    for (const k of ['id', 'source', 'input_ids', 'loss_mask', 'seq_len', 'n_prompt_tokens', 'n_response_tokens']) {
      assert.ok(k in r, `${where} lacks "${k}" (keys: ${Object.keys(r).join(', ')})`);
    }
    assert.equal(typeof r.id, 'string', `${where}: id must be a string`);
    assert.equal(path.resolve(r.source.file), path.resolve(expectedSourceFile), `${where}: source.file`);
    assert.ok(Number.isInteger(r.source.line) && r.source.line >= 1, `${where}: source.line must be a 1-based line, got ${r.source.line}`);
    assert.ok(Array.isArray(r.input_ids) && r.input_ids.every((t) => Number.isInteger(t) && t >= 0), `${where}: input_ids must be token ids`);
    assert.ok(Array.isArray(r.loss_mask) && r.loss_mask.every((m) => m === 0 || m === 1), `${where}: loss_mask must be 0/1`);
    assert.equal(r.seq_len, r.input_ids.length, `${where}: seq_len != input_ids.length`);
    assert.equal(r.loss_mask.length, r.input_ids.length, `${where}: loss_mask.length != input_ids.length`);
    const trainable = r.loss_mask.reduce<number>((a, b) => a + b, 0);
    assert.equal(r.n_response_tokens, trainable, `${where}: n_response_tokens != sum(loss_mask)`);
    assert.ok(trainable > 0, `${where}: no trainable token`);
    assert.equal(r.n_prompt_tokens + r.n_response_tokens, r.seq_len, `${where}: n_prompt_tokens + n_response_tokens != seq_len`);
    return r;
  });
}

/** Checks report.json against the returned result: per-file and total accounting. */
function checkReport(result: PrepareResult): void {
  const reportJson = result.outputs.reportJson;
  assert.ok(fs.existsSync(reportJson), `${reportJson} was not written`);
  assert.ok(fs.existsSync(result.outputs.reportMd), `${result.outputs.reportMd} was not written`);
  const { report, schemaVersion } = readReport(reportJson);
  assert.equal(schemaVersion, REPORT_SCHEMA_VERSION, 'report.json is written with the current schema');
  assert.equal(report.status, result.status, 'report.json and the command result disagree on the status');
  for (const f of [...report.files, { ...report.totals, file: 'totals' }]) {
    const sum = f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored;
    assert.equal(
      sum,
      f.rowsRead,
      `report.json ${f.file}: written ${f.rowsWritten} + set aside ${f.rowsSetAside} + dropped ${f.rowsDropped} + errored ${f.rowsErrored} != rowsRead ${f.rowsRead}`,
    );
  }
  assert.equal(
    report.totals.rowsRead,
    report.files.reduce((a, f) => a + f.rowsRead, 0),
    'report.json totals.rowsRead != sum over files',
  );
  assert.equal(report.totals.recordsWritten, result.totals.recordsWritten, 'report.json and the command result disagree on recordsWritten');
}

/** True when report.md is open as a text editor tab or a Markdown preview tab. */
function reportIsOpen(reportMd: string): string | undefined {
  for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
    const input = tab.input;
    if (input instanceof vscode.TabInputText && path.resolve(input.uri.fsPath) === path.resolve(reportMd)) return `text editor tab "${tab.label}"`;
    if (input instanceof vscode.TabInputWebview && /markdown/i.test(input.viewType) && tab.label.includes('report.md')) {
      return `Markdown preview tab "${tab.label}"`;
    }
  }
  return undefined;
}

async function closeAllEditors(): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
}

/**
 * Runs the tests. Each step runs whatever the steps before it did; a failing step is reported and the
 * suite goes on (steps.ts); rejects at the end, listing every failed step (issue 23). Activation and the
 * workspace folder are the exception: nothing else can run without them.
 */
export async function run(): Promise<void> {
  const t0 = Date.now();
  const steps = new HostSteps();
  console.log(
    `[host-suite] VS Code ${vscode.version}, ${vscode.env.appName}, uiKind ${vscode.UIKind[vscode.env.uiKind]}, workspace trusted: ${vscode.workspace.isTrusted}`,
  );
  const ext = vscode.extensions.getExtension<Eagle3PrepExports>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is not loaded (is it disabled in Restricted Mode?)`);
  const exportsOf = await ext.activate();
  const commands = await vscode.commands.getCommands(true);
  for (const c of ['eagle3prep.prepare', 'eagle3prep.selectTokenizer']) assert.ok(commands.includes(c), `command ${c} is not registered`);
  console.log('[host-suite] ok: extension active, commands eagle3prep.prepare and eagle3prep.selectTokenizer registered');

  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open: the runner must open a temp folder (--folder)');
  assert.equal(folder.uri.scheme, 'file', 'the workspace folder must be on the local file system');
  const ws = folder.uri.fsPath;
  const samples = path.join(ext.extensionPath, 'samples');
  for (const f of ['chat-sharegpt-human-gpt.jsonl', 'agentic-trajectories.jsonl']) {
    fs.copyFileSync(path.join(samples, f), path.join(ws, f));
  }
  const config = vscode.workspace.getConfiguration('eagle3prep');
  // tokenizerPath is resource-scoped: read for `null` (any resource), as config.ts does (hostLogCheck.ts counts every unscoped read).
  const tokenizerPath = vscode.workspace.getConfiguration('eagle3prep', null).get('tokenizerPath');
  console.log(`[host-suite] workspace ${ws}; settings: mask ${config.get('maskPolicy')}, tokenizer "${tokenizerPath}"`);

  // 1. The chat sample, through the command exactly as the explorer menu invokes it.
  const chat = vscode.Uri.file(path.join(ws, 'chat-sharegpt-human-gpt.jsonl'));
  const agentic = vscode.Uri.file(path.join(ws, 'agentic-trajectories.jsonl'));
  const first = await steps.run('the chat sample from the Explorer', async () => {
    const t = Date.now();
    const result = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', chat, [chat]);
    assert.ok(result, 'eagle3prep.prepare returned no result (it failed or was cancelled; see the "EAGLE-3 Prep" output)');
    assert.ok(result.ok, `prepare failed: ${result.failures.join('; ')}`);
    assert.equal(result.outDir, path.join(ws, 'chat-sharegpt-human-gpt.eagle3'), 'output folder is not the default <input-name>.eagle3/ beside the input');
    assert.equal(result.mask, 'assistant', 'default mask policy');
    assert.ok(result.tokenizer.embeddedDefault, `expected the embedded default tokenizer, got ${result.tokenizer.name}`);
    const records = checkTokenizedData(result.outputs.tokenizedData, chat.fsPath);
    checkReport(result);
    assert.equal(result.totals.rowsRead, 3, 'chat sample: rowsRead');
    assert.equal(result.totals.rowsWritten, 3, 'chat sample: all 3 rows (conversations) must be written');
    assert.equal(records.length, result.totals.recordsWritten, 'chat sample: lines in tokenized_data.jsonl != recordsWritten');
    assert.deepEqual([...new Set(records.map((r) => r.source.line))], [1, 2, 3], 'chat sample: every row yields records, in order');
    // Each row has 2 assistant turns. Qwen3's template rewrites history (docs/loss-mask-rules.md: one
    // record per stable run, for Qwen3 one per assistant turn), so the embedded default gives 6.
    assert.equal(records.length, 6, `chat sample with Qwen3: expected 6 records (3 conversations x 2 assistant turns), got ${records.length}`);
    console.log(
      `[host-suite] ok: chat sample → 3 rows written as ${records.length} records (seq_len ${records.map((r) => r.seq_len).join('/')}, trainable ${records.map((r) => r.n_response_tokens).join('/')}), ` +
        `report.json totals add up, tokenizer ${result.tokenizer.name}, ${Date.now() - t} ms`,
    );
    const openedAs = await waitFor('report.md to be opened', () => reportIsOpen(result.outputs.reportMd));
    console.log(`[host-suite] ok: report.md opened as ${openedAs}`);
    return { result, records };
  });
  /** Step 1's run, for the steps that compare with it. */
  const firstRun = (): { result: PrepareResult; records: TokenizedRecord[] } => {
    assert.ok(first, 'needs the chat sample prepared by the first step, which failed');
    return first;
  };

  // 2. The agentic trajectories sample (system prompt in a top-level field, tool results as user turns).
  await steps.run('the agentic sample', async () => {
    const t = Date.now();
    const r2 = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', agentic);
    assert.ok(r2, 'eagle3prep.prepare returned no result for the agentic sample');
    assert.ok(r2.ok, `prepare failed on the agentic sample: ${r2.failures.join('; ')}`);
    const rec2 = checkTokenizedData(r2.outputs.tokenizedData, agentic.fsPath);
    checkReport(r2);
    assert.equal(r2.totals.rowsRead, 3, 'agentic sample: rowsRead');
    assert.ok(rec2.length >= 1, 'agentic sample: no record written');
    console.log(
      `[host-suite] ok: agentic sample → ${rec2.length} records from ${r2.totals.rowsRead} rows (longest ${Math.max(...rec2.map((r) => r.seq_len))} tokens), report.json totals add up, ${Date.now() - t} ms`,
    );
  });

  // 3. Settings flow into the run: maskPolicy last-assistant trains on fewer tokens.
  await steps.run('eagle3prep.maskPolicy reaches the pipeline', async () => {
    const { records } = firstRun();
    await config.update('maskPolicy', 'last-assistant', vscode.ConfigurationTarget.Global);
    try {
      const r3 = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', chat);
      assert.ok(r3?.ok, 'prepare with maskPolicy last-assistant failed');
      assert.equal(r3.mask, 'last-assistant', 'the eagle3prep.maskPolicy setting did not reach the pipeline');
      const rec3 = checkTokenizedData(r3.outputs.tokenizedData, chat.fsPath);
      assert.equal(rec3.length, 3, 'last-assistant: one record per conversation');
      for (const line of [1, 2, 3]) {
        const all = records.filter((r) => r.source.line === line).reduce((a, r) => a + r.n_response_tokens, 0);
        const last = rec3.filter((r) => r.source.line === line).reduce((a, r) => a + r.n_response_tokens, 0);
        assert.ok(last > 0 && last < all, `row ${line}: last-assistant should train on fewer tokens (${last}) than assistant (${all})`);
      }
      console.log(`[host-suite] ok: maskPolicy=last-assistant reached the pipeline (trainable ${rec3.map((r) => r.n_response_tokens).join('/')})`);
    } finally {
      await config.update('maskPolicy', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  // 4. A multi-selection (explorer passes clicked + selected) goes into one run, named after the first file.
  await steps.run('a multi-selection is one run', async () => {
    const r4 = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', chat, [chat, agentic]);
    assert.ok(r4?.ok, 'multi-select prepare failed');
    assert.equal(r4.files.length, 2, 'multi-select: both files are inputs of one run');
    assert.equal(r4.totals.rowsRead, 6, 'multi-select: rowsRead');
    checkReport(r4);
    console.log(`[host-suite] ok: multi-select run over 2 files → ${r4.totals.recordsWritten} records`);
  });

  // 5. Worker cancellation: the promise settles promptly and leaves no partial tokenized_data.jsonl.
  await steps.run('worker cancellation', async () => {
    const cancelOut = path.join(ws, 'cancelled.eagle3');
    const cts = new vscode.CancellationTokenSource();
    const started = Date.now();
    const pending = runPrepareInWorker(ext.extensionUri, { inputs: [agentic.fsPath, chat.fsPath], outDir: cancelOut }, { token: cts.token, graceMs: 3000 });
    cts.cancel();
    const outcome = await pending.then(
      (r) => `finished before the cancel arrived (ok ${r.ok})`,
      (e) => {
        if (e instanceof vscode.CancellationError) return 'cancelled';
        throw new Error(`cancelled run rejected with something else than CancellationError: ${e?.message ?? e}`);
      },
    );
    assert.ok(Date.now() - started < 10000, 'cancellation took more than 10 s');
    if (outcome === 'cancelled') {
      assert.ok(!fs.existsSync(path.join(cancelOut, 'data', 'tokenized_data.jsonl')), 'a cancelled run left data/tokenized_data.jsonl behind');
    }
    console.log(`[host-suite] ok: worker cancellation → ${outcome} in ${Date.now() - started} ms`);
  });

  // 6. Tokenizer selection: a Hugging Face cache snapshot is found, the setting reaches the worker,
  // and the quick pick opens and closes cleanly.
  await steps.run('tokenizer selection', async () => {
    const { result } = firstRun();
    const hub = path.join(ws, 'hf-home', 'hub');
    const snapshot = path.join(hub, 'models--Qwen--Qwen3-Test', 'snapshots', '0123456789abcdef');
    fs.mkdirSync(snapshot, { recursive: true });
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
      fs.copyFileSync(path.join(ext.extensionPath, 'dist', 'default-tokenizer', 'qwen3', f), path.join(snapshot, f));
    }
    assert.ok(checkTokenizerFolder(snapshot).ok, 'checkTokenizerFolder refuses a folder with tokenizer.json + tokenizer_config.json');
    assert.ok(!checkTokenizerFolder(ws).ok, 'checkTokenizerFolder accepts a folder without tokenizer files');
    const found = findCachedTokenizers([hub]);
    assert.deepEqual(
      found.map((c) => [c.name, c.dir]),
      [['Qwen/Qwen3-Test', snapshot]],
      'Hugging Face cache scan',
    );
    assert.equal(tokenizerDisplayName(undefined), 'Qwen3', 'embedded default name');
    const picking = vscode.commands.executeCommand<string | undefined>('eagle3prep.selectTokenizer');
    await sleep(1000);
    await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
    assert.equal(await picking, undefined, 'a dismissed tokenizer quick pick must change nothing');
    await config.update('tokenizerPath', snapshot, vscode.ConfigurationTarget.Global);
    try {
      const r5 = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', chat);
      assert.ok(r5?.ok, 'prepare with eagle3prep.tokenizerPath set failed');
      assert.ok(!r5.tokenizer.embeddedDefault, 'eagle3prep.tokenizerPath did not reach the pipeline (embedded default used)');
      assert.equal(path.resolve(r5.tokenizer.dir), snapshot, 'tokenizer folder used by the pipeline');
      assert.equal(r5.totals.recordsWritten, result.totals.recordsWritten, 'the same tokenizer files must give the same records');
      console.log(
        `[host-suite] ok: HF cache snapshot found as ${found[0].name}; tokenizerPath reached the pipeline (${r5.tokenizer.name}); quick pick opened and dismissed`,
      );
    } finally {
      await config.update('tokenizerPath', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  await steps.run('the record hover and the mask view', async () => (await import('./recordViewChecks')).runRecordViewChecks(ws)); // issue 5a
  // 7. From an open editor (no argument = the active editor's file): report.md opens beside it.
  // This also leaves the dataset, the report and the tokenizer status bar item on screen for the
  // runner's screenshot.
  await steps.run("prepare with no argument: the active editor's file", async () => {
    const { result } = firstRun();
    await closeAllEditors();
    await vscode.window.showTextDocument(chat, { viewColumn: vscode.ViewColumn.One });
    const r6 = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare');
    assert.ok(r6?.ok, 'prepare on the active editor failed');
    assert.equal(path.resolve(r6.files[0].file), path.resolve(chat.fsPath), "without an argument the active editor's file is prepared");
    const reopened = await waitFor('report.md to be reopened', () => reportIsOpen(result.outputs.reportMd));
    const editorStillVisible = vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === chat.toString());
    assert.ok(editorStillVisible, 'report.md replaced the dataset editor instead of opening beside it');
    console.log(`[host-suite] ok: prepare with no argument used the active editor's file; report.md opened beside it (${reopened})`);
    await sleep(1500); // let the preview render
  });

  // 8. Datasets view, Problems + quick fix, Prepare all, Check chat template (test/host/datasetsSuite.ts).
  await steps.run('Datasets view, Problems, quick fixes, Prepare all, folder run, failed file, Check chat template', () => runDatasetsChecks(ext, ws));
  // 9. Issue 24: after a settings change, a quick fix and a tokenizer switch, the views agree (test/host/agreementSuite.ts).
  await steps.run('tree, dashboard, Problems and hover agree after a settings change, a quick fix and a tokenizer switch', () => runAgreementChecks(ws, ext));
  // 10. Issue 24: a render past its budget does not end a running template check (test/host/workerLanesCheck.ts).
  await steps.run('a render past its budget does not end a running template check', () => runWorkerLanesCheck(ext, ws));
  // 11. Issue 24: no configuration warning of the extension in the extension host log, after everything above.
  await steps.run("the extension host log holds none of the extension's configuration warnings", async () => {
    const { files, lines } = await checkNoConfigurationWarnings(EXTENSION_ID, exportsOf.logUri);
    console.log(`[host-suite] ok: no configuration warning of ${EXTENSION_ID} in ${files.map((f) => path.basename(f)).join(', ')} (${lines} lines)`);
  });
  steps.finish();
  console.log(`[host-suite] all checks passed in ${Date.now() - t0} ms`);
}
