import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { prepare } from '../../src/core/run/prepare/pipeline';
import {
  DEFAULT_RUN_SETTINGS,
  describeDifferences,
  differingSettings,
  invalidRunSetting,
  reportedSettings,
  RUN_SETTING_KEYS,
  resolveRunSettings,
  runOptionsOf,
  runSettingSpec,
  runSettingsOfReport,
} from '../../src/core/run/runSettings';
import { settingsOf } from '../../src/core/run/prepare/runSetup';
import { PREPARE_OPTIONS } from '../../src/cli/prepare';
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
    minTrainableShare: 0,
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
    minTrainableShare: 0.25,
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
    'settings changed: min trainable share (run: 0, now: 0.25)',
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

test('the table drives the prepare options, the row settings, the options passed on and the validation', () => {
  for (const key of RUN_SETTING_KEYS) {
    const spec = runSettingSpec(key);
    const option = PREPARE_OPTIONS.find((o) => o.flags === spec.flag);
    assert.ok(option, `prepare has ${spec.flag}`);
    assert.equal(option.help, spec.help);
    assert.deepEqual(option.choices, spec.choices);
  }
  const given = {
    mask: 'last-assistant', // not non-system: its records are never split (longSplitConflict)
    reasoning: 'drop',
    maxLength: 64,
    long: 'split',
    grouping: 'merged',
    minTrainableTokens: 3,
    minTrainableShare: 0.1,
    templateKwargs: { a: 1 },
  } as const;
  const row = settingsOf({ inputs: [], outDir: '', ...given, dedup: true });
  for (const key of RUN_SETTING_KEYS) assert.deepEqual(row[key], given[key], `the row processors get ${key}`);
  assert.equal(row.dedup, true);
  // `long` is passed on only with a max length (it does not apply without one)
  assert.deepEqual(runOptionsOf({ mask: 'assistant', long: 'split' }), { mask: 'assistant' });
  assert.deepEqual(runOptionsOf({ maxLength: 8, long: 'split' }), { maxLength: 8, long: 'split' });
  assert.equal(invalidRunSetting(given), undefined);
  assert.equal(invalidRunSetting({ maxLength: 0 }), undefined, '0 is no limit');
  assert.equal(invalidRunSetting({ minTrainableTokens: 0 }), 'minTrainableTokens must be a positive integer (got 0)');
  assert.equal(invalidRunSetting({ minTrainableTokens: 2.5 }), 'minTrainableTokens must be a positive integer (got 2.5)');
  assert.equal(invalidRunSetting({ mask: 'all' as never }), 'mask must be one of assistant, last-assistant, non-system (got all)');
  assert.equal(invalidRunSetting({ minTrainableShare: 1.5 }), 'minTrainableShare must be a number from 0 to 1 (got 1.5)');
  // the settings report.json has always carried are written by the run itself; a newer one only off its default
  assert.deepEqual(reportedSettings(resolveRunSettings(given)), { minTrainableShare: 0.1 });
  assert.deepEqual(reportedSettings(DEFAULT_RUN_SETTINGS), {});
});

test('--min-trainable-share: a CLI option and a report entry from its row; changing it makes the output stale', async () => {
  const option = PREPARE_OPTIONS.find((o) => o.flags === '--min-trainable-share <f>');
  assert.ok(option?.parse);
  assert.equal(option.parse('5%', undefined), 0.05);
  assert.equal(option.parse('0.25', undefined), 0.25);
  // A percentage is the decimal number it names, not a division's rounding: 2.24% is exactly 0.0224.
  assert.equal(option.parse!('2.24%', undefined), 0.0224);
  for (let k = 1; k < 1000; k++) assert.equal(option.parse!(`${k / 10}%`, undefined), Number(`${k / 10}e-2`), `${k / 10}%`);
  assert.throws(() => option.parse!('1.5', undefined), /A fraction from 0 to 1/);
  const dir = tempDir();
  const f = join(dir, 'chat.jsonl');
  copyFileSync(join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), f);
  const res = await prepare({ inputs: [f], outDir: join(dir, 'chat.eagle3'), minTrainableShare: 0.25 });
  assert.ok(res.ok);
  const json = JSON.parse(readFileSync(res.outputs.reportJson, 'utf8'));
  assert.equal(json.min_trainable_share, 0.25);
  assert.match(readFileSync(res.outputs.reportMd, 'utf8'), /; min trainable share: 0\.25\n/);
  const ran = resolveRunSettings({ minTrainableShare: 0.25 });
  assert.equal(readOutputState(f, { settings: ran }).state, 'prepared');
  const now = readOutputState(f, { settings: resolveRunSettings({}) });
  assert.deepEqual(now.staleBecause, ['settings changed: min trainable share (run: 0.25, now: 0)']);
  // a default run's report has no such key (older reports and default runs read back alike)
  const plain = await prepare({ inputs: [f], outDir: join(dir, 'plain.eagle3') });
  assert.ok(!('min_trainable_share' in JSON.parse(readFileSync(plain.outputs.reportJson, 'utf8'))));
});
