/**
 * `--long split` with `--mask non-system`: non-system records are never split (a too-long one is dropped), so the
 * combination is refused where the user asked for it (CLI usage error, a run's error) and said in VS Code, where an
 * unusable setting falls back with a warning; a trainer's default split becomes drop, which the report then says.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { invalidRunSetting, longSplitConflict } from '../../src/core/run/runSettings';
import { withTrainerDefaults, type TrainerId } from '../../src/core/trainers/trainers';
import { prepareSettingsFrom, SETTING_DEFAULTS, type SettingKey, type SettingsSource } from '../../src/vscode/settings';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { runCli, tempDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const SAMPLE = join(ROOT, 'samples', 'chat-sharegpt-human-gpt.jsonl');
const MESSAGE =
  '--long split cannot go with --mask non-system: non-system records are never split, so a record longer than --max-length ' +
  'would be dropped (too_long), not split. Use --long drop (the same, said so) or --long truncate with --mask non-system, ' +
  'or --mask assistant or last-assistant to split';

test('prepare --mask non-system --long split is a usage error naming both options and the ways out; nothing written', async () => {
  const dir = tempDir('eagle3-long-split-ns-');
  const out = join(dir, 'out');
  const r = await runCli(['prepare', SAMPLE, '--mask', 'non-system', '--long', 'split', '--max-length', '512', '--out', out], { cwd: ROOT });
  assert.equal(r.status, 2);
  assert.ok(r.stderr.includes(MESSAGE), r.stderr);
  assert.equal(existsSync(out), false);
  // The other masks split, and non-system with drop or truncate runs.
  for (const [mask, long] of [
    ['assistant', 'split'],
    ['non-system', 'drop'],
    ['non-system', 'truncate'],
  ]) {
    const ok = await runCli(['prepare', SAMPLE, '--mask', mask, '--long', long, '--max-length', '512', '--out', join(dir, `${mask}-${long}`), '--quiet'], {
      cwd: ROOT,
    });
    assert.equal(ok.status, 0, ok.stderr);
  }
});

test('a trainer with --mask non-system defaults to long drop (what the run does), not split; the report says drop', async () => {
  assert.deepEqual(withTrainerDefaults({ trainer: 'specforge' as TrainerId, mask: 'non-system' }), {
    trainer: 'specforge',
    mask: 'non-system',
    maxLength: 2048,
    long: 'drop',
  });
  assert.equal(
    withTrainerDefaults<{ trainer: TrainerId; mask: string; long?: 'drop' | 'truncate' | 'split' }>({ trainer: 'specforge', mask: 'assistant' }).long,
    'split',
  );
  const dir = tempDir('eagle3-long-split-trainer-');
  const r = await runCli(['prepare', SAMPLE, '--mask', 'non-system', '--trainer', 'specforge', '--out', join(dir, 'o'), '--quiet'], { cwd: ROOT });
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(readFileSync(join(dir, 'o', 'report.json'), 'utf8')) as { mask: string; long: string; max_length: number };
  assert.deepEqual([report.mask, report.long, report.max_length], ['non-system', 'drop', 2048]);
});

test('the run refuses the combination too (config, extension), with the same words', async () => {
  assert.equal(longSplitConflict({ mask: 'non-system', long: 'split' }), MESSAGE);
  assert.equal(longSplitConflict({ mask: 'last-assistant', long: 'split' }), undefined);
  assert.equal(longSplitConflict({ mask: 'non-system', long: 'drop' }), undefined);
  assert.equal(invalidRunSetting({ mask: 'non-system', long: 'split', maxLength: 100 }), MESSAGE);
  const dir = tempDir('eagle3-long-split-run-');
  await assert.rejects(prepare({ inputs: [SAMPLE], outDir: join(dir, 'o'), mask: 'non-system', long: 'split', maxLength: 512, workers: 1 }), {
    message: MESSAGE,
  });
  assert.equal(existsSync(join(dir, 'o')), false);
});

test('VS Code settings: longRecords split with maskPolicy non-system falls back to drop with a warning; a trainer default silently', () => {
  const source =
    (values: Partial<Record<SettingKey, unknown>>): SettingsSource =>
    (key) =>
      key in values ? values[key] : SETTING_DEFAULTS[key];
  const warnings: string[] = [];
  const warn = (m: string) => warnings.push(m);
  const asked = (key: SettingKey) => (key === 'longRecords' ? 'split' : undefined);
  assert.equal(prepareSettingsFrom(source({ maskPolicy: 'non-system', maxLength: 512 }), warn, asked).long, 'drop');
  assert.deepEqual(warnings, [
    'eagle3prep.longRecords "split" does not apply with eagle3prep.maskPolicy "non-system": non-system records are never split, so a too-long one ' +
      'is dropped (too_long); using "drop". Set longRecords to drop or truncate, or maskPolicy to assistant or last-assistant to split.',
  ]);
  assert.equal(prepareSettingsFrom(source({ maskPolicy: 'assistant', maxLength: 512 }), warn, asked).long, 'split');
  assert.equal(prepareSettingsFrom(source({ maskPolicy: 'non-system', trainer: 'specforge' }), warn).long, 'drop');
  assert.equal(warnings.length, 1);
});
