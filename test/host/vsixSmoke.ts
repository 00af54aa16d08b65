/**
 * Smoke test of the packaged extension (scripts/vsix-check.mjs): VS Code loads the extension from
 * the folder `--install-extension` unpacked the VSIX into, and it works from those files alone —
 * the bundles, the embedded default tokenizer, no node_modules at its root; a platform package's
 * Rust tokenizer binding (dist/node_modules/tokenizers/, one `.node` file) loads in the extension
 * host's own Node and encodes.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PrepareResult } from '../../src/core/run/contract';
import type { DatasetStateSummary } from '../../src/vscode/datasetsModel';

const SAMPLE = JSON.stringify({
  conversations: [
    { from: 'human', value: 'What is 2+2?' },
    { from: 'gpt', value: '4.' },
  ],
});

export async function run(): Promise<void> {
  const ext = vscode.extensions.getExtension('eagle3-prep.eagle3-prep');
  assert.ok(ext, 'the installed extension is not loaded');
  await ext.activate();
  console.log(`[vsix-smoke] extension ${ext.packageJSON.version} from ${ext.extensionPath}`);
  assert.ok(!fs.existsSync(path.join(ext.extensionPath, 'node_modules')), 'the installed extension has a node_modules folder');
  const binding = path.join(ext.extensionPath, 'dist', 'node_modules', 'tokenizers');
  const binaries = fs.existsSync(binding) ? fs.readdirSync(binding).filter((f) => f.endsWith('.node')) : [];
  assert.ok(binaries.length <= 1, `more than one tokenizers binary: ${binaries.join(', ')}`);
  if (binaries.length) {
    const { Tokenizer } = createRequire(__filename)(binding) as typeof import('tokenizers');
    const qwen3 = path.join(ext.extensionPath, 'dist', 'default-tokenizer', 'qwen3', 'tokenizer.json');
    const enc = await Tokenizer.fromFile(qwen3).encode('Hello world', null, { addSpecialTokens: false });
    assert.deepEqual(enc.getIds(), [9707, 1879], 'Qwen3 ids of "Hello world" from the packaged binding');
  }
  console.log(`[vsix-smoke] tokenizers binding: ${binaries[0] ?? 'none (universal package: the JavaScript tokenizer)'}`);
  const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.ok(ws, 'no workspace folder');
  const file = path.join(ws, 'smoke.jsonl');
  fs.writeFileSync(file, `${SAMPLE}\n${SAMPLE}\n`);
  const r = await vscode.commands.executeCommand<PrepareResult | undefined>('eagle3prep.prepare', vscode.Uri.file(file));
  assert.ok(r?.ok, 'prepare failed from the installed extension');
  assert.equal(r.totals.recordsWritten, 2);
  assert.ok(r.tokenizer.embeddedDefault && r.tokenizer.dir.startsWith(ext.extensionPath), `embedded tokenizer from the VSIX: ${r.tokenizer.dir}`);
  const state = await vscode.commands.executeCommand<DatasetStateSummary[]>('eagle3prep.datasets.state');
  assert.deepEqual(
    state.map((s) => [path.basename(s.file), s.state, s.records]),
    [['smoke.jsonl', 'prepared', 2]],
  );
  console.log(`[vsix-smoke] ok: prepare → ${r.totals.recordsWritten} records with ${r.tokenizer.name}; Datasets view: ${state[0].description}`);
}
