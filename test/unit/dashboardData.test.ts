// What the dashboards show (src/vscode/dashboardData.ts), in plain node over a real run: a dataset's model from its
// output (rows, reasons, lengths read from report.json or from tokenized_data.jsonl), why a file has none, and the
// workspace's over every dataset.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { readRunReport } from '../../src/core/run/reports/readReport';
import { resolveRunSettings } from '../../src/core/run/runSettings';
import { handleServiceRequest } from '../../src/core/run/editor/service';
import { datasetDashboardOf, workspaceDashboardOf, type StatsReader } from '../../src/vscode/dashboardData';
import { clearFailures, noteRunOutcome } from '../../src/vscode/runFailures';
import { tempDir, writeJsonl } from '../helpers';

const ROWS = [
  {
    messages: [
      { role: 'user', content: 'Hi?' },
      { role: 'assistant', content: 'Hello.' },
    ],
  },
  '{"messages": [',
  {
    messages: [
      { role: 'user', content: 'What is 2 + 2?' },
      { role: 'assistant', content: '4.' },
    ],
  },
  { messages: [] },
];

/** The service worker's stats, counting its calls. */
function countingStats(): { stats: StatsReader; calls: number } {
  const r = { calls: 0, stats: (parts: { tokenizedData: string; inputs: string[] }[]) => (r.calls++, handleServiceRequest({ op: 'stats', parts })) };
  return r;
}

test("a dataset's dashboard: the run's rows and reasons, lengths from report.json (no second read), stale reasons", async () => {
  const f = writeJsonl(ROWS);
  assert.ok((await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3') })).ok);
  const s = countingStats();
  const d = await datasetDashboardOf(f, readOutputState(f, { settings: resolveRunSettings({}) }), s.stats);
  assert.equal(d.status, 'degraded');
  assert.deepEqual(d.rows, { read: 4, written: 2, setAside: 0, dropped: 1, errored: 1 });
  assert.equal(d.records, 2);
  assert.deepEqual(
    d.reasons.map((r) => [r.code, r.kind, r.count]),
    [
      ['empty_conversation', 'drop', 1],
      ['invalid_json', 'error', 1],
    ],
  );
  assert.equal(d.statsSource, 'report');
  assert.equal(s.calls, 0);
  assert.deepEqual(d.staleBecause, []);
  const stale = await datasetDashboardOf(f, readOutputState(f, { settings: resolveRunSettings({ mask: 'non-system' }) }), s.stats);
  assert.deepEqual(stale.staleBecause, ['settings changed: mask policy (run: assistant, now: non-system)']);
});

test('a report without record lengths: they are read from tokenized_data.jsonl; a failing read draws without them', async () => {
  const f = writeJsonl(ROWS);
  const res = await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3') });
  // An earlier version's report.json: no lengths in the file's entry.
  const { report } = readRunReport(res.outputs.reportJson);
  const raw = JSON.parse(JSON.stringify(report));
  for (const fr of raw.files) for (const k of Object.keys(fr)) if (/length|histogram|seqLen/i.test(k)) delete fr[k];
  writeFileSync(res.outputs.reportJson, JSON.stringify(raw));
  const out = readOutputState(f);
  const s = countingStats();
  const d = await datasetDashboardOf(f, out, s.stats);
  assert.equal(s.calls, 1);
  assert.equal(d.statsSource, 'tokenized_data.jsonl');
  assert.equal(d.stats?.records, 2);
  const failing = await datasetDashboardOf(f, out, () => Promise.reject(new Error('worker gone')));
  assert.equal(failing.stats, null);
});

test('no output: the dashboard says so, or why the last run wrote nothing', async () => {
  const f = writeJsonl(ROWS);
  await assert.rejects(datasetDashboardOf(f, readOutputState(f), countingStats().stats), {
    message: `data.jsonl has no prepared output in ${f.replace(/\.jsonl$/, '.eagle3')}: prepare it first.`,
  });
  try {
    noteRunOutcome([f], { error: `${f}: no record written and no prompt set aside` });
    await assert.rejects(datasetDashboardOf(f, readOutputState(f), countingStats().stats), {
      message: 'data.jsonl failed in its last run, which wrote nothing: no record written and no prompt set aside',
    });
  } finally {
    clearFailures();
  }
});

test('the workspace: every prepared dataset, the others named as not prepared, lengths over all records files', async () => {
  const dir = tempDir();
  const a = writeJsonl(ROWS, 'a.jsonl', dir);
  const b = writeJsonl(ROWS.slice(0, 1), 'b.jsonl', dir);
  const c = writeJsonl(ROWS, 'c.jsonl', dir);
  for (const f of [a, b]) assert.ok((await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3') })).ok);
  const s = countingStats();
  const model = await workspaceDashboardOf([a, b, c], (f) => datasetDashboardOf(f, readOutputState(f), s.stats), s.stats);
  assert.equal(model.kind, 'workspace');
  if (model.kind !== 'workspace') return;
  const w = model.workspace;
  assert.deepEqual(
    w.datasets.map((d) => d.name),
    ['a.jsonl', 'b.jsonl'],
  );
  assert.deepEqual(w.notPrepared, ['c.jsonl']);
  assert.deepEqual(w.rows, { read: 5, written: 3, setAside: 0, dropped: 1, errored: 1 });
  assert.equal(w.records, 3);
  assert.equal(s.calls, 1);
  assert.equal(w.stats?.records, 3);
  assert.equal(join(dir, 'a.eagle3'), w.datasets[0].outDir);
});
