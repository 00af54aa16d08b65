// What "Prepare for EAGLE-3" says (src/vscode/prepareModel.ts), in plain node over real runs: the bundled samples as one
// folder run, a damaged file (degraded), a file with nothing to write (failed).
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { expandInputs } from '../../src/core/run/inputs/inputs';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { SETTING_DEFAULTS, prepareSettingsFrom, type SettingKey } from '../../src/vscode/settings';
import type { PrepareSettings } from '../../src/vscode/config';
import {
  lossText,
  plural,
  progressPercent,
  runLogHeader,
  runOutcomeToast,
  runStatusOf,
  summarizeResult,
  warningsText,
  writtenFiles,
} from '../../src/vscode/prepareModel';
import { tempDir, writeJsonl } from '../helpers';

const SAMPLES = join(import.meta.dirname, '..', '..', 'samples');

test('the bundled samples as one folder run: a summary line, each file its status, the toast by the worst one', async () => {
  const dir = tempDir();
  for (const n of readdirSync(SAMPLES).filter((x) => x.endsWith('.jsonl'))) copyFileSync(join(SAMPLES, n), join(dir, n));
  const inputs = expandInputs([dir]);
  assert.equal(inputs.length, 5);
  const r = await prepare({ inputs, outDir: join(dir, 'out') });
  assert.ok(r.ok);
  const { status, files } = runStatusOf(r);
  assert.equal(files.length, 5);
  assert.deepEqual(
    files.map((f) => f.file),
    r.files.map((f) => f.file),
  );
  // The run's status is the worst of its files' (core/run/status.ts), and the summary leads with its word.
  const order = ['ok', 'warnings', 'degraded', 'failed'];
  assert.equal(status, files.map((f) => f.status).sort((a, b) => order.indexOf(b) - order.indexOf(a))[0]);
  const t = r.totals;
  assert.ok(
    summarizeResult(r).startsWith(
      `${status.toUpperCase()}: ${plural(t.recordsWritten, 'record')} from ${plural(t.rowsRead, 'row')} (${t.rowsSetAside} set aside for generation, ${t.rowsDropped} dropped, ${t.rowsErrored} errored)`,
    ),
    summarizeResult(r),
  );
  const toast = runOutcomeToast(
    r,
    inputs.map((i) => basename(i)),
  );
  assert.equal(toast.level, status === 'ok' ? 'info' : 'warning');
  assert.ok(toast.message.endsWith(' → out/'), toast.message);
  assert.deepEqual(writtenFiles(r), r.outputs.written);
});

test('a damaged file: degraded, the rows lost and the data-changing warnings in the toast', async () => {
  const f = writeJsonl([
    {
      messages: [
        { role: 'user', content: 'Hi?' },
        { role: 'assistant', content: 'Hello.' },
      ],
    },
    '{"messages": [',
    { messages: [] },
  ]);
  const r = await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3') });
  assert.equal(
    summarizeResult(r),
    'DEGRADED: 1 record from 3 rows (0 set aside for generation, 1 dropped, 1 errored); data-changing warnings: empty_conversation × 1 (see report.md)',
  );
  assert.deepEqual(runStatusOf(r), { status: 'degraded', files: [{ file: f, status: 'degraded' }] });
  assert.equal(lossText(r), 'data.jsonl: 1 of 3 rows kept (1 errored, 1 dropped)');
  assert.equal(warningsText(r), 'data-changing warnings: empty_conversation × 1 (see report.md)');
  assert.deepEqual(runOutcomeToast(r, ['data.jsonl']), {
    level: 'warning',
    message:
      'EAGLE-3 Prep: DEGRADED — data.jsonl: 1 of 3 rows kept (1 errored, 1 dropped); data-changing warnings: empty_conversation × 1 (see report.md) → data.eagle3/',
    actions: ['Show problems', 'Open report', 'Open dashboard'],
  });
  // A result of an earlier version without `status`: worked out from the counts.
  const older = { ...r, status: undefined, files: r.files.map((x) => ({ ...x, status: undefined })) };
  assert.deepEqual(runStatusOf(older), { status: 'degraded', files: [{ file: f, status: 'degraded' }] });
});

test('nothing to write: failed, the file named and the first reason without its path, "Nothing was written."', async () => {
  const f = writeJsonl([{ messages: [] }, '{"x']);
  const r = await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3') });
  assert.equal(r.ok, false);
  assert.deepEqual(runOutcomeToast(r, ['data.jsonl']), {
    level: 'error',
    message:
      'EAGLE-3 Prep failed for data.jsonl: no record written and no prompt set aside (2 rows read: 1 empty_conversation, 1 errored; format openai-messages). Nothing was written.',
    actions: ['Show details'],
  });
});

test("the log's header names every setting the run uses; the progress counts files and the current file's bytes", () => {
  const settings: PrepareSettings = {
    ...(prepareSettingsFrom((k: SettingKey) => SETTING_DEFAULTS[k]) as Omit<PrepareSettings, 'openReport' | 'format'>),
    openReport: 'preview',
    format: 'jsonl',
  };
  assert.deepEqual(runLogHeader(['/d/a.jsonl'], settings, 'Qwen3', '/d/a.eagle3', new Date(Date.UTC(2026, 11, 7, 4, 0, 0))), [
    '',
    '[2026-12-07T04:00:00.000Z] Prepare for EAGLE-3: /d/a.jsonl',
    `  tokenizer: Qwen3 (embedded default); mask: ${settings.mask}; grouping: ${settings.grouping}; max length: none; template kwargs: {}; reasoning: ${settings.reasoning}`,
    '  output: /d/a.eagle3',
  ]);
  const limited = runLogHeader(['/d/a.jsonl'], { ...settings, tokenizerDir: '/m/q', maxLength: 2048, long: 'split', trainer: 'specforge' }, 'q', '/o')[2];
  assert.match(limited, /^ {2}tokenizer: q \(\/m\/q\); .*max length: 2048 \(longer records: split\); .*; trainer: specforge$/);
  assert.equal(progressPercent({ fileIndex: 0, fileCount: 4, bytesRead: 50, bytesTotal: 100 }), 12.5);
  assert.equal(progressPercent({ fileIndex: 3, fileCount: 4, bytesRead: 200, bytesTotal: 100 }), 100);
  assert.equal(progressPercent({ fileIndex: 1, fileCount: 0, bytesRead: 0, bytesTotal: 0 }), 100);
  assert.equal(plural(1, 'record'), '1 record');
  assert.equal(plural(12345, 'row'), '12,345 rows');
});
