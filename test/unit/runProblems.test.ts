// Problems keeps a file's run problems until the file is prepared again (src/vscode/runProblems.ts), and every
// setting that decides records is one a configuration change re-compares (src/vscode/settings.ts).
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { test } from 'node:test';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { resolveRunSettings, RUN_SETTING_KEYS } from '../../src/core/run/runSettings';
import { runProblemsUse, runRowMessage } from '../../src/vscode/runProblems';
import { prepareSettingsFrom, RUN_SETTING_SOURCES, SETTING_DEFAULTS, STALENESS_SETTING_KEYS, type SettingKey } from '../../src/vscode/settings';
import { writeJsonl } from '../helpers';

test('run problems stay while the output is stale for a setting, go when the input itself changes', async () => {
  const f = writeJsonl([
    {
      messages: [
        { role: 'user', content: 'Hi?' },
        { role: 'assistant', content: 'Hello.' },
      ],
    },
    { messages: [{ role: 'user', content: 'only a question' }] },
  ]);
  const res = await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3') });
  assert.ok(res.ok);
  const current = readOutputState(f, { settings: resolveRunSettings({}) });
  assert.deepEqual(runProblemsUse(current), { show: true, note: '', rows: true });
  const otherMask = readOutputState(f, { settings: resolveRunSettings({ mask: 'non-system' }) });
  assert.equal(otherMask.state, 'stale');
  assert.equal(otherMask.inputChanged, false);
  const use = runProblemsUse(otherMask);
  assert.deepEqual(use, {
    show: true,
    note: '; the output is stale (settings changed: mask policy (run: assistant, now: non-system)): prepare again to update',
    rows: true,
  });
  // a config change that changes how the rows are read: the file-level warnings stay, the row entries go (the live scan re-reads them)
  assert.deepEqual(
    runProblemsUse({ ...otherMask, readingChanged: true, staleBecause: ['eagle3prep.jsonc changed since the run: role alias "bot", used in this file'] }),
    {
      show: true,
      note: '; the output is stale (eagle3prep.jsonc changed since the run: role alias "bot", used in this file): prepare again to update',
      rows: false,
    },
  );
  assert.equal(
    runRowMessage({ code: 'no_assistant_turn', message: 'no_assistant_turn', line: 2, fate: 'dropped' }, use.show ? use.note : ''),
    'no_assistant_turn (row 2 was dropped by the last run; the output is stale (settings changed: mask policy (run: assistant, now: non-system)): prepare again to update)',
  );
  appendFileSync(
    f,
    JSON.stringify({
      messages: [
        { role: 'user', content: 'new' },
        { role: 'assistant', content: 'row' },
      ],
    }) + '\n',
  );
  const edited = readOutputState(f, { settings: resolveRunSettings({}) });
  assert.equal(edited.inputChanged, true);
  assert.deepEqual(runProblemsUse(edited), { show: false });
  assert.deepEqual(runProblemsUse({ state: 'none', staleBecause: [] }), { show: false });
});

test('every record-deciding setting has a VS Code setting that changes it, and those are re-compared on change', () => {
  const changed: Partial<Record<SettingKey, unknown>> = {
    maskPolicy: 'non-system',
    reasoning: 'drop',
    maxLength: 512,
    longRecords: 'split',
    truncate: true,
    grouping: 'merged',
    minTrainableTokens: 4,
    minTrainableShare: 0.1,
    templateKwargs: { enable_thinking: false },
    trainer: 'specforge',
  };
  const dflt = (s: SettingKey): unknown => SETTING_DEFAULTS[s];
  const base = resolveRunSettings(prepareSettingsFrom(dflt));
  assert.deepEqual(Object.keys(RUN_SETTING_SOURCES), RUN_SETTING_KEYS);
  for (const k of RUN_SETTING_KEYS) {
    for (const key of RUN_SETTING_SOURCES[k]) {
      // long only applies with a limit: compare it with one
      const get = (s: SettingKey) => (s === key ? changed[key] : k === 'long' && s === 'maxLength' ? 512 : dflt(s));
      const explicit = (s: SettingKey) => (s === 'longRecords' && key === 'longRecords' ? changed.longRecords : undefined);
      const withLimit = k === 'long' ? resolveRunSettings(prepareSettingsFrom((s) => (s === 'maxLength' ? 512 : dflt(s)))) : base;
      assert.notDeepEqual(resolveRunSettings(prepareSettingsFrom(get, (w) => assert.fail(String(w)), explicit))[k], withLimit[k], `${key} changes ${k}`);
      assert.ok(STALENESS_SETTING_KEYS.includes(key));
    }
  }
  assert.ok(STALENESS_SETTING_KEYS.includes('tokenizerPath') && STALENESS_SETTING_KEYS.includes('outputDirectory'));
});
