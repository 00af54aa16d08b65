import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { prepare } from '../../src/core/run/prepare/pipeline';
import {
  DEFAULT_RUN_SETTINGS,
  describeDifferences,
  differingSettings,
  RUN_SETTING_KEYS,
  resolveRunSettings,
  runSettingsOfReport,
} from '../../src/core/run/runSettings';
import { tempDir } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');

test('run settings: the defaults prepare uses, resolved from options and from older reports', () => {
  assert.deepEqual(DEFAULT_RUN_SETTINGS, {
    mask: 'assistant',
    reasoning: 'keep',
    maxLength: null,
    long: 'drop',
    grouping: 'exact',
    minTrainableTokens: 1,
    templateKwargs: {},
  });
  assert.deepEqual(resolveRunSettings({}), DEFAULT_RUN_SETTINGS);
  // the legacy --truncate flag is long: truncate; a max length of 0 is no limit
  assert.equal(resolveRunSettings({ truncate: true, maxLength: 512 }).long, 'truncate');
  assert.equal(resolveRunSettings({ maxLength: 0 }).maxLength, null);
  // a report of an older version: no reasoning, grouping, long or minTrainableTokens
  assert.deepEqual(runSettingsOfReport({ mask: 'non-system', maxLength: 1024, truncate: true }), {
    ...DEFAULT_RUN_SETTINGS,
    mask: 'non-system',
    maxLength: 1024,
    long: 'truncate',
  });
  // every key of the table is a field of the resolved settings
  assert.deepEqual(Object.keys(resolveRunSettings({})), RUN_SETTING_KEYS);
});

test('differingSettings: each record-deciding setting compared, long only with a limit, kwargs by value', () => {
  const d = DEFAULT_RUN_SETTINGS;
  assert.deepEqual(differingSettings(d, { ...d }), []);
  assert.deepEqual(differingSettings(d, { ...d, long: 'split' }), [], 'long does not apply without a max length');
  assert.deepEqual(
    differingSettings({ ...d, maxLength: 2048 }, { ...d, maxLength: 2048, long: 'split' }).map((x) => [x.key, x.run, x.now]),
    [['long', 'drop', 'split']],
  );
  assert.deepEqual(differingSettings({ ...d, templateKwargs: { a: 1, b: [2] } }, { ...d, templateKwargs: { b: [2], a: 1 } }), []);
  const all = differingSettings(d, {
    mask: 'non-system',
    reasoning: 'drop',
    maxLength: 4096,
    long: 'truncate',
    grouping: 'merged',
    minTrainableTokens: 8,
    templateKwargs: { enable_thinking: false },
  });
  assert.deepEqual(
    all.map((x) => x.key),
    RUN_SETTING_KEYS,
  );
  assert.deepEqual(describeDifferences(all), [
    'settings changed: mask policy (run: assistant, now: non-system)',
    'settings changed: reasoning (run: keep, now: drop)',
    'settings changed: max length (run: none, now: 4096)',
    'settings changed: long records (run: drop, now: truncate)',
    'settings changed: grouping (run: exact, now: merged)',
    'settings changed: min trainable tokens (run: 1, now: 8)',
    'settings changed: template kwargs (run: {}, now: {"enable_thinking":false})',
  ]);
});

test('output state: a run with non-default settings is current for those settings and stale for others', async () => {
  const dir = tempDir();
  const f = join(dir, 'chat.jsonl');
  copyFileSync(join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), f);
  const res = await prepare({ inputs: [f], outDir: join(dir, 'chat.eagle3'), mask: 'non-system', reasoning: 'drop', minTrainableTokens: 2 });
  assert.ok(res.ok);
  const ran = resolveRunSettings({ mask: 'non-system', reasoning: 'drop', minTrainableTokens: 2 });
  const same = readOutputState(f, { settings: ran });
  assert.equal(same.state, 'prepared', same.staleBecause.join('; '));
  assert.deepEqual(same.settings, ran);
  const now = readOutputState(f, { settings: resolveRunSettings({}) });
  assert.equal(now.state, 'stale');
  assert.deepEqual(now.staleBecause, [
    'settings changed: mask policy (run: non-system, now: assistant)',
    'settings changed: reasoning (run: drop, now: keep)',
    'settings changed: min trainable tokens (run: 2, now: 1)',
  ]);
  // without current settings the comparison is not made
  assert.equal(readOutputState(f).state, 'prepared');
});
