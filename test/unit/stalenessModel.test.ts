// The one comparison the editor makes for a dataset's output (src/vscode/stalenessModel.ts), in plain node over a real
// run: current with the run's settings; stale for another record-deciding setting or another tokenizer; none in
// another output folder.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { resolveRunSettings } from '../../src/core/run/runSettings';
import type { PrepareSettings } from '../../src/vscode/config';
import { prepareSettingsFrom, SETTING_DEFAULTS, type SettingKey } from '../../src/vscode/settings';
import { editorOutputState, outputStateOptions } from '../../src/vscode/stalenessModel';
import { lenmlModelDir, tempDir, writeJsonl } from '../helpers';

/** The settings of a workspace that sets nothing (config.ts readPrepareSettings over the defaults). */
const DEFAULTS: PrepareSettings = {
  ...(prepareSettingsFrom((k: SettingKey) => SETTING_DEFAULTS[k]) as Omit<PrepareSettings, 'openReport' | 'format' | 'tokenizerDir'>),
  openReport: 'preview',
  format: 'jsonl',
};

test("an output is current with the run's settings, stale for another setting or tokenizer, none in another folder", async () => {
  const f = writeJsonl([
    {
      messages: [
        { role: 'user', content: 'Hi?' },
        { role: 'assistant', content: 'Hello.' },
      ],
    },
  ]);
  const qwen = lenmlModelDir('qwen3');
  assert.ok((await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3'), tokenizerDir: qwen })).ok);
  const settings: PrepareSettings = { ...DEFAULTS, tokenizerDir: qwen };
  const opts = outputStateOptions(f, settings);
  assert.equal(opts.outDir, f.replace(/\.jsonl$/, '.eagle3'));
  assert.match(opts.tokenizerHash ?? '', /^[0-9a-f]{16}$/);
  assert.deepEqual(opts.settings, resolveRunSettings(settings));
  const current = editorOutputState(f, settings);
  assert.equal(current.state, 'prepared');
  assert.deepEqual(current.staleBecause, []);

  const otherMask = editorOutputState(f, { ...settings, mask: 'non-system' });
  assert.equal(otherMask.state, 'stale');
  assert.deepEqual(otherMask.staleBecause, ['settings changed: mask policy (run: assistant, now: non-system)']);
  const otherTokenizer = editorOutputState(f, { ...settings, tokenizerDir: lenmlModelDir('llama3_1') });
  assert.equal(otherTokenizer.state, 'stale');
  assert.match(otherTokenizer.staleBecause.join('; '), /tokenizer/);
  // A tokenizer folder without tokenizer files: not compared (no hash), so the output stays current on the other counts.
  const unreadable = outputStateOptions(f, { ...settings, tokenizerDir: tempDir() });
  assert.equal(unreadable.tokenizerHash, undefined);
  // eagle3prep.outputDirectory elsewhere: the editor looks there, and finds no output.
  const elsewhere = tempDir();
  assert.equal(outputStateOptions(f, { ...settings, outputDirectory: elsewhere }).outDir, join(elsewhere, 'data.eagle3'));
  assert.equal(editorOutputState(f, { ...settings, outputDirectory: elsewhere }).state, 'none');
});
