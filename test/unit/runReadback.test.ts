/**
 * Reading a run back (issue 15): problems.jsonl lists every dropped and errored row (the report
 * keeps 50 errors), readRowProblems / readRunReport, the output's length statistics and exact row
 * counts (outputStats.ts), the dashboard view-model, a stale output after an eagle3prep.jsonc edit,
 * the service worker's handler, the generation preflight on a closed port.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { datasetDashboard, reasonsOf, workspaceDashboard } from '../../src/shared/dashboardModel';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { distributionOf, indexTokenizedData, niceBinWidth, outputStats, parseRecordLine, recordsOfRow } from '../../src/core/run/outputs/outputStats';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { type RowProblemLine } from '../../src/core/run/contract';
import { errorCodeOf, readRowProblems, readRunReport } from '../../src/core/run/reports/readReport';
import { handleServiceRequest } from '../../src/core/run/editor/service';
import { preflightServers } from '../../src/core/generate/preflight';
import { recordSegments } from '../../src/core/records/checkTemplateFormat';
import { turnLabel } from '../../src/shared/maskViewProtocol';
import type { RecordView } from '../../src/core/records/recordViewTypes';
import { tempDir, writeJsonl } from '../helpers';

const good = (i: number) => ({
  conversations: [
    { from: 'human', value: `Question ${i}?` },
    { from: 'gpt', value: `Answer ${i}.` },
    { from: 'human', value: 'And then?' },
    { from: 'gpt', value: 'Then more.' },
  ],
});

/** 4 good rows, 60 invalid lines, 3 unknown roles, 2 empty conversations. */
function damagedRows(): (object | string)[] {
  const rows: (object | string)[] = [];
  for (let i = 0; i < 4; i++) rows.push(good(i));
  for (let i = 0; i < 60; i++) rows.push(`{"conversations": [ cut ${i}`);
  for (let i = 0; i < 3; i++)
    rows.push({
      conversations: [
        { from: 'human', value: 'x' },
        { from: 'oracle', value: 'y' },
      ],
    });
  rows.push({ conversations: [] }, { conversations: [] });
  return rows;
}

test('problems.jsonl lists every dropped and errored row; readRowProblems reads them back; the dashboard model matches report.json', async () => {
  const dir = tempDir();
  const file = writeJsonl(damagedRows(), 'damaged.jsonl', dir);
  const res = await prepare({ inputs: [file], outDir: join(dir, 'damaged.eagle3') });
  assert.equal(res.ok, true, res.failures.join('; '));
  const fr = res.files[0];
  assert.deepEqual([fr.rowsRead, fr.rowsWritten, fr.rowsErrored, fr.rowsDropped], [69, 4, 63, 2]);
  assert.equal(fr.errors.length, 50, 'the report keeps the first 50 errors');
  assert.equal(res.outputs.problems, join(dir, 'damaged.eagle3', 'problems.jsonl'));
  const lines = readFileSync(res.outputs.problems!, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RowProblemLine);
  assert.equal(lines.length, 65, 'every dropped and errored row');
  assert.deepEqual(
    lines.slice(0, 2).map((p) => [p.line, p.fate, p.code]),
    [
      [5, 'errored', 'invalid_json'],
      [6, 'errored', 'invalid_json'],
    ],
  );
  assert.deepEqual(
    lines.filter((p) => p.code === 'unknown_role').map((p) => p.line),
    [65, 66, 67],
  );
  assert.deepEqual(
    lines.filter((p) => p.fate === 'dropped').map((p) => [p.line, p.code]),
    [
      [68, 'empty_conversation'],
      [69, 'empty_conversation'],
    ],
  );

  const { report } = readRunReport(res.outputs.reportJson);
  const back = await readRowProblems(report, file);
  assert.equal(back.complete, true);
  assert.equal(back.problems.length, 65);
  assert.equal((await readRowProblems(report, file, 10)).problems.length, 10);

  // Without the sidecar: the report's lines only, flagged incomplete.
  const old = { ...report, outputs: { ...report.outputs, problems: undefined } };
  const partial = await readRowProblems(old, file);
  assert.equal(partial.complete, false);
  assert.equal(partial.problems.length, 52);
  assert.equal(partial.missing, 13);

  // Dashboard model: figures equal report.json's, reasons by code, stats from tokenized_data.jsonl.
  const index = await indexTokenizedData(report.outputs.tokenizedData);
  const stats = outputStats([{ index, inputs: [file] }]);
  const d = datasetDashboard(report, file, { stats, problems: back.problems })!;
  assert.equal(d.status, 'degraded');
  assert.deepEqual(d.rows, { read: 69, written: 4, setAside: 0, dropped: 2, errored: 63 });
  assert.equal(d.records, fr.recordsWritten);
  assert.equal(d.tokens.total, fr.totalTokens);
  assert.equal(d.tokens.trainable, fr.trainableTokens);
  assert.equal(d.errorCodesComplete, true);
  assert.deepEqual(
    d.reasons.filter((r) => r.kind !== 'note').map((r) => [r.kind, r.code, r.count]),
    [
      ['error', 'invalid_json', 60],
      ['error', 'unknown_role', 3],
      ['drop', 'empty_conversation', 2],
    ],
  );
  assert.equal(stats.records, fr.recordsWritten);
  assert.equal(stats.totalTokens, fr.totalTokens);
  assert.equal(stats.trainableTokens, fr.trainableTokens);
  assert.equal(stats.conversations, 4);
  // Qwen3 rewrites history: 2 records per 4-turn conversation.
  assert.deepEqual(
    stats.recordsPerConversation.histogram.filter((b) => b.count).map((b) => [b.from, b.count]),
    [[2, 4]],
  );
  assert.ok(stats.amplificationOverall > 1, `amplification ${stats.amplificationOverall}`);
  assert.equal(d.grouping.exact?.tokens, fr.totalTokens);
  // The report's own length statistics win over tokenized_data.jsonl's; merged ≈ the conversations rendered once.
  assert.equal(d.statsSource, 'report');
  assert.equal(d.stats?.seqLen.count, fr.recordsWritten);
  assert.equal(d.stats?.seqLen.max, fr.lengths?.seqLen.max);
  assert.equal(
    d.stats?.seqLen.histogram.reduce((a, b) => a + b.count, 0),
    fr.recordsWritten,
  );
  assert.equal(d.stats?.amplification, null);
  assert.equal(d.stats?.amplificationOverall, fr.lengths?.amplification);
  assert.deepEqual(d.grouping.merged, { records: 4, tokens: fr.lengths!.renderedTokens, trainableTokens: fr.trainableTokens, approximate: true });
  assert.deepEqual(d.notComputed, []);
  // Without the report's statistics (an older report): those of tokenized_data.jsonl, amplification per conversation.
  const older = { ...report, files: [{ ...fr, lengths: undefined }] };
  const d2 = datasetDashboard(older, file, { stats })!;
  assert.equal(d2.statsSource, 'tokenized_data.jsonl');
  assert.equal(d2.stats?.amplification?.count, 4);
  assert.equal(d2.grouping.merged, null);
  assert.ok(d2.notComputed.some((n) => /merged/.test(n)));
  const w = workspaceDashboard([d, d], [], stats);
  assert.equal(w.tokens.total, 2 * fr.totalTokens);
  assert.equal(w.status, 'degraded');
  assert.equal(w.tokenizerNote, undefined, 'one tokenizer: the sums are comparable, no note');
  assert.deepEqual(
    w.tokenizers.map((t) => [t.datasets.length, t.tokens, t.trainableTokens, t.records]),
    [[2, 2 * fr.totalTokens, 2 * fr.trainableTokens, 2 * d.records]],
  );
  // Two tokenizers: the sum mixes vocabularies, so each tokenizer's own totals are given and the note says so.
  const other = { ...d, name: 'other.jsonl', tokenizer: { name: 'Llama-3', hash: 'feedbeef' } };
  const mixed = workspaceDashboard([d, other], [], stats);
  assert.deepEqual(
    mixed.tokenizers.map((t) => [t.name, t.datasets, t.tokens, t.trainableTokens]),
    [
      [d.tokenizer.name, [d.name], fr.totalTokens, fr.trainableTokens],
      ['Llama-3', ['other.jsonl'], fr.totalTokens, fr.trainableTokens],
    ],
  );
  assert.equal(
    mixed.tokenizerNote,
    `tokens summed over 2 tokenizers: ${d.tokenizer.name} (${d.name}), Llama-3 (other.jsonl) — counts of different vocabularies; prepare with one tokenizer to compare them`,
  );

  // Exact counts of one row.
  const recs = recordsOfRow(index, file, 1);
  assert.equal(recs.length, 2);
  assert.deepEqual(
    recs.map((r) => r.id),
    ['damaged-0#0', 'damaged-0#1'].map((x) =>
      x.replace('damaged-0', JSON.parse(readFileSync(report.outputs.tokenizedData, 'utf8').split('\n')[0]).id.split('#')[0]),
    ),
  );
  assert.deepEqual(recordsOfRow(index, file, 5), []);

  // The service handler answers the same.
  const viaService = await handleServiceRequest({ op: 'rowRecords', tokenizedData: report.outputs.tokenizedData, input: file, line: 1, wait: true });
  assert.deepEqual(viaService, recs);
  const s2 = await handleServiceRequest({ op: 'stats', parts: [{ tokenizedData: report.outputs.tokenizedData }] });
  assert.equal(s2.records, stats.records);

  // An eagle3prep.jsonc newer than the report makes the output stale.
  assert.equal(readOutputState(file, { outDir: res.outDir }).state, 'prepared');
  const cfg = join(dir, 'eagle3prep.jsonc');
  writeFileSync(cfg, '{"roleAliases": {"oracle": "assistant"}}\n');
  const future = new Date(Date.now() + 5000);
  utimesSync(cfg, future, future);
  const st = readOutputState(file, { outDir: res.outDir });
  assert.equal(st.state, 'stale');
  assert.match(st.staleBecause.join('; '), /eagle3prep\.jsonc changed since the run/);
  assert.equal(st.status, 'degraded');
});

test('reasonsOf without problems.jsonl: error codes from the report messages, the rest counted as errored', () => {
  const fr = {
    rowsErrored: 3,
    errors: [
      { line: 2, message: 'unknown role "x" in message 2' },
      { line: 3, message: 'template_unsupported: cannot locate' },
    ],
    dropped: { too_long: { count: 2, lines: [4, 5] } },
    notes: { content_stringified: 1, null_content: 4 },
  } as never;
  const r = reasonsOf(fr);
  assert.equal(r.errorCodesComplete, false);
  assert.deepEqual(
    r.reasons.map((x) => [x.kind, x.code, x.count]),
    [
      ['drop', 'too_long', 2],
      ['note', 'content_stringified', 1],
      ['error', 'errored', 1],
      ['error', 'template_unsupported', 1],
      ['error', 'unknown_role', 1],
    ],
  );
  assert.equal(errorCodeOf('chat template error: boom'), 'template_error');
});

test('distributions: nearest-rank percentiles, round bin widths, every value in a bin', () => {
  const d = distributionOf([1, 2, 3, 4, 5, 6, 7, 8, 9, 100]);
  assert.deepEqual([d.min, d.p50, d.p90, d.p99, d.max, d.mean], [1, 5, 9, 100, 100, 14.5]);
  assert.equal(
    d.histogram.reduce((a, b) => a + b.count, 0),
    10,
  );
  assert.ok(d.histogram.length <= 30);
  assert.equal(niceBinWidth(0, 1000, 30), 50);
  assert.equal(niceBinWidth(1, 1, 30), 1);
  assert.equal(niceBinWidth(1, 1, 20, false), 0.1);
  assert.equal(distributionOf([]).count, 0);
  assert.deepEqual(
    parseRecordLine(
      '{"id":"a#1","source":{"file":"/x.jsonl","line":7},"input_ids":[1,2],"loss_mask":[0,1],"seq_len":2,"n_prompt_tokens":1,"n_response_tokens":1}',
    ),
    {
      id: 'a#1',
      file: '/x.jsonl',
      line: 7,
      seqLen: 2,
      trainable: 1,
    },
  );
  assert.equal(parseRecordLine('not json'), undefined);
});

test('mask view turn labels are per record: trained here, context here (trained in record #k), or neither', () => {
  const view = {
    mask: 'assistant',
    turns: [
      { index: 0, role: 'user', target: false },
      { index: 1, role: 'assistant', target: true },
      { index: 2, role: 'user', target: false },
      { index: 3, role: 'assistant', target: true },
    ],
    records: [
      { index: 0, targets: [1] },
      { index: 1, targets: [3] },
    ],
    detail: { index: 1 },
  } as unknown as RecordView;
  assert.equal(turnLabel(view, 1, false), 'turn 2 · assistant · context here (trained in record #0)');
  assert.equal(turnLabel(view, 3, true), 'turn 4 · assistant · trained');
  assert.equal(turnLabel(view, 0, false), 'turn 1 · user');
  assert.equal(turnLabel(view, -1, false), 'template text');
});

test('recordSegments cuts at span and special-token edges', () => {
  const segs = recordSegments('<|a|>hi<|e|>\n', [[5, 12]], ['<|a|>', '<|e|>']);
  assert.deepEqual(
    segs.map((s) => [s.text, s.trained, s.special]),
    [
      ['<|a|>', false, true],
      ['hi', true, false],
      ['<|e|>', true, true],
      ['\n', false, false],
    ],
  );
});

test('generation preflight: a closed port fails in well under a second, with words to act on', async () => {
  const port = await new Promise<number>((ok) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => ok(p));
    });
  });
  const t0 = Date.now();
  const [c] = await preflightServers([`http://127.0.0.1:${port}/v1`]);
  assert.ok(Date.now() - t0 < 1000, `${Date.now() - t0} ms`);
  assert.equal(c.ok, false);
  assert.equal(c.code, 'ECONNREFUSED');
  assert.equal(c.url, `http://127.0.0.1:${port}`);
  assert.match(c.error!, /connection refused: nothing listens on 127\.0\.0\.1:\d+/);
  const [bad] = await preflightServers(['ftp://x']);
  assert.equal(bad.code, 'bad_url');
});

test('problems.jsonl follows the staged run: a skipped file is taken back out, --dedup drops are listed, a dry run writes none', async () => {
  const dir = tempDir();
  const kept = writeJsonl([good(1), { conversations: [] }, good(1)], 'kept.jsonl', dir);
  const bad = writeJsonl([good(2), '{"conversations": [ cut a', '{"conversations": [ cut b'], 'bad.jsonl', dir);
  const out = join(dir, 'out');
  const res = await prepare({ inputs: [kept, bad], outDir: out, workers: 1, maxErrorRate: 0.5, skipFailedFiles: true, dedup: true });
  assert.equal(res.ok, true, res.failures.join('; '));
  assert.deepEqual(
    res.files.map((f) => [f.rowsErrored, f.skipped === true]),
    [
      [0, false],
      [2, true],
    ],
  );
  const lines = readFileSync(join(out, 'problems.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RowProblemLine);
  // kept.jsonl: the empty conversation (line 2) and the duplicate of line 1 (line 3); bad.jsonl's errored rows were rolled back.
  assert.deepEqual(
    lines.map((p) => [p.file, p.line, p.fate, p.code]),
    [
      [kept, 2, 'dropped', 'empty_conversation'],
      [kept, 3, 'dropped', 'duplicate'],
    ],
  );
  assert.ok(res.outputs.written?.includes(join(out, 'problems.jsonl')), `written: ${res.outputs.written?.join(', ')}`);
  const { report } = readRunReport(join(out, 'report.json'));
  assert.equal(report.outputs.problems, join(out, 'problems.jsonl'), 'report.json (snake_case on disk) names the sidecar');

  const dry = join(dir, 'dry');
  const d = await prepare({ inputs: [kept], outDir: dry, dryRun: { sampleRows: 10 } });
  assert.equal(d.ok, true, d.failures.join('; '));
  assert.equal(existsSync(join(dry, 'problems.jsonl')), false, 'a dry run writes nothing');
});
