/**
 * report.json: one boundary between the camelCase in-memory shape and the
 * snake_case file (schema 2), one reader for every consumer; reports of
 * earlier versions (camelCase, no schema_version) are read and shown as stale,
 * never a crash.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { parseReport, readReport, REPORT_SCHEMA_VERSION, reportToJson, ReportReadError } from '../../src/core/run/reports/report';
import { throughputOf } from '../../src/core/run/reports/accounting';
import { compact } from '../../src/cli/progress';
import { formatSummary } from '../../src/cli/summary';
import { tempDir, writeJsonl } from '../helpers';

const chat = (i: number) => ({
  messages: [
    { role: 'user', content: `q${i}` },
    { role: 'assistant', content: `a${i}` },
  ],
});

test('report.json is snake_case with schema_version; data keys (kwargs, codes) are kept; reading it back gives the result', async () => {
  const dir = tempDir();
  const file = writeJsonl([chat(1), { a: 1 }, chat(2)], 'd.jsonl', dir);
  const r = await prepare({ inputs: [file], outDir: join(dir, 'out'), workers: 1, templateKwargs: { enable_thinking: false, myCamelKwarg: 1 } });
  assert.equal(r.ok, true, r.failures.join('; '));
  const raw = JSON.parse(readFileSync(r.outputs.reportJson, 'utf8'));
  assert.equal(Object.keys(raw)[0], 'schema_version');
  assert.equal(raw.schema_version, REPORT_SCHEMA_VERSION);
  assert.deepEqual(raw.template_kwargs, { enable_thinking: false, myCamelKwarg: 1 }, 'kwargs are data: not renamed');
  assert.deepEqual(raw.files[0].dropped, { unrecognized_shape: { count: 1, lines: [2] } });
  assert.equal(raw.files[0].rows_read, 3);
  assert.equal(raw.outputs.tokenized_data, r.outputs.tokenizedData);
  assert.equal(typeof raw.files[0].input.mtime_ms, 'number');
  assert.equal(raw.status, 'warnings');
  // No camelCase key anywhere outside the data maps.
  const keys: string[] = [];
  const walk = (v: unknown, inData = false) => {
    if (Array.isArray(v)) v.forEach((x) => walk(x, inData));
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        if (!inData) keys.push(k);
        walk(x, inData || ['template_kwargs', 'dropped', 'notes'].includes(k));
      }
  };
  walk(raw);
  assert.deepEqual(
    keys.filter((k) => /[A-Z]/.test(k)),
    [],
  );
  const back = readReport(r.outputs.reportJson);
  assert.equal(back.schemaVersion, REPORT_SCHEMA_VERSION);
  assert.deepEqual(back.report, JSON.parse(JSON.stringify(r)));
  assert.deepEqual(parseReport(reportToJson(r)).report, JSON.parse(JSON.stringify(r)));
});

test('a report of an earlier version (camelCase, no schema_version) is read and the dataset shown as stale; garbage is an error, not a crash', async () => {
  const dir = tempDir();
  const file = writeJsonl([chat(1)], 'd.jsonl', dir);
  const r = await prepare({ inputs: [file], outDir: join(dir, 'd.eagle3'), workers: 1 });
  assert.equal(readOutputState(file).state, 'prepared');
  assert.equal(readOutputState(file).status, 'ok'); // the empty think block is a chat template note, not a file warning
  // What 0.1 wrote: the in-memory shape as it was, no status.
  const { status: _s, warnings: _w, policy: _p, ...legacy } = JSON.parse(JSON.stringify(r));
  for (const f of legacy.files) delete f.status;
  writeFileSync(r.outputs.reportJson, JSON.stringify(legacy, null, 2));
  const old = readReport(r.outputs.reportJson);
  assert.equal(old.schemaVersion, 1);
  assert.equal(old.report.files[0].rowsRead, 1);
  const st = readOutputState(file);
  assert.equal(st.state, 'stale');
  assert.deepEqual(st.staleBecause, ['report.json was written by an earlier eagle3-prep (schema 1, no status): prepare again']);
  assert.equal(st.records, 1);

  writeFileSync(r.outputs.reportJson, '{"schema_version": 2, "files": "nope"}');
  assert.throws(
    () => readReport(r.outputs.reportJson),
    (e: unknown) => e instanceof ReportReadError && /not an eagle3-prep report\.json/.test((e as Error).message),
  );
  const bad = readOutputState(file);
  assert.equal(bad.state, 'none');
  assert.match(bad.staleBecause[0], /report\.json: not an eagle3-prep report\.json/);
  writeFileSync(r.outputs.reportJson, '{"schema_version": "x"}');
  assert.throws(() => readReport(r.outputs.reportJson), /unknown schema_version "x"/);
  mkdirSync(join(dir, 'empty'));
  assert.throws(() => readReport(join(dir, 'empty', 'report.json')), /cannot be read/);
});

test('tokens/s and rows/s: in report.json (throughput), report.md (Time) and the summary header, from the tokens written and the wall time', async () => {
  assert.deepEqual(throughputOf({ totalTokens: 12_345, rowsRead: 10 }, 2_000), { tokensPerSecond: 6_173, rowsPerSecond: 5 });
  assert.deepEqual(throughputOf({ totalTokens: 5, rowsRead: 1 }, 0), { tokensPerSecond: 0, rowsPerSecond: 0 });
  const dir = tempDir();
  const file = writeJsonl([chat(1), chat(2), chat(3)], 'd.jsonl', dir);
  const r = await prepare({ inputs: [file], outDir: join(dir, 'out'), workers: 1 });
  assert.equal(r.ok, true, r.failures.join('; '));
  assert.deepEqual(r.throughput, throughputOf(r.totals, r.elapsedMs));
  assert.ok(r.totals.totalTokens > 0);
  const raw = JSON.parse(readFileSync(r.outputs.reportJson, 'utf8'));
  assert.deepEqual(raw.throughput, { tokens_per_second: r.throughput?.tokensPerSecond, rows_per_second: r.throughput?.rowsPerSecond });
  assert.deepEqual(readReport(r.outputs.reportJson).report.throughput, r.throughput);
  const md = readFileSync(r.outputs.reportMd, 'utf8');
  const tps = (r.throughput?.tokensPerSecond ?? -1).toLocaleString('en-US');
  assert.ok(md.includes(`- Time: ${(r.elapsedMs / 1000).toFixed(1)} s; ${tps} tokens/s, `), md);
  const header = formatSummary([r]).split('\n')[0] ?? '';
  assert.ok(header.endsWith(` · ${(r.elapsedMs / 1000).toFixed(1)} s · ${compact(r.totals.totalTokens / (r.elapsedMs / 1000))} tok/s`), header);
});
