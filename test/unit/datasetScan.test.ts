/** datasetScan (datasets tree / Problems data) and projectConfig (eagle3prep.jsonc). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { countDatasetRows, datasetKind, readOutputState, scanDataset, tokenizerFilesHash, mapLimit } from '../../src/core/run/editor/datasetScan';
import { scanRowProblems } from '../../src/core/run/editor/rowProblems';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { parseProjectConfig, PROJECT_CONFIG_NAME } from '../../src/core/read/projectConfig';
import { applyProjectConfig } from '../../src/core/formats/rowSource';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { lenmlModelDir, tempDir, writeJsonl } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');

test('datasetKind: containers and compression from the name', () => {
  assert.deepEqual(datasetKind('a/b.jsonl'), { container: 'jsonl', compression: null });
  assert.deepEqual(datasetKind('b.JSON'), { container: 'json', compression: null });
  assert.deepEqual(datasetKind('b.jsonl.gz'), { container: 'jsonl', compression: 'gzip' });
  assert.deepEqual(datasetKind('b.json.zst'), { container: 'json', compression: 'zstd' });
  assert.deepEqual(datasetKind('b.parquet'), { container: 'parquet', compression: null });
  assert.deepEqual(datasetKind('run.traj'), { container: 'json', compression: null });
  assert.equal(datasetKind('b.txt'), undefined);
  assert.equal(datasetKind('b.gz'), undefined);
});

test('scanDataset on a sample: format, streamed row count, no output; a gzip copy counts the same', async () => {
  const dir = tempDir();
  const f = join(dir, 'chat.jsonl');
  copyFileSync(join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), f);
  const s = await scanDataset(f);
  assert.equal(s.format, 'sharegpt');
  assert.equal(s.rows, 3);
  assert.equal(s.error, undefined);
  assert.equal(s.output.state, 'none');
  assert.equal(s.output.outDir, join(dir, 'chat.eagle3'));
  const gz = join(dir, 'chat.jsonl.gz');
  writeFileSync(gz, gzipSync(readFileSync(f)));
  const g = await scanDataset(gz);
  assert.equal(g.format, 'sharegpt');
  assert.equal(g.rows, 3);
  assert.equal(g.output.outDir, join(dir, 'chat.eagle3'));
  // blank lines and a line without a trailing newline: rows are non-blank lines
  const blanky = writeJsonl(['{"prompt":"a"}', '', '  ', '{"prompt":"b"}'], 'p.jsonl', dir);
  writeFileSync(blanky, readFileSync(blanky, 'utf8').trimEnd());
  assert.equal(await countDatasetRows(blanky), 2);
});

test('countDatasetRows equals readers countRows on blank lines, CRLF, BOM, chunk boundaries', async () => {
  const dir = tempDir();
  const cases: [string, string | Buffer][] = [
    ['a', '{"a":1}\n\n  \n\t\r\n{"b":2}'],
    ['b', '\ufeff{"a":1}\r\n{"b":2}\r\n\r\n'],
    ['c', '\n\n\n'],
    ['d', ''],
    ['e', '   {"lead":"spaces"}\n   \n'],
    // lines straddling the 1 MiB chunk boundary, blank runs across it
    ['f', ('x'.repeat(1000) + '\n').repeat(1100) + ' '.repeat(5000) + '\n' + '{"end":1}'],
    ['g', '['.padEnd(1, ' ') + '\n{"a":1}\n]\n'], // a JSON document under a .jsonl name
  ];
  const { countRows } = await import('../../src/core/read/readers');
  for (const [name, body] of cases) {
    const f = join(dir, `${name}.jsonl`);
    writeFileSync(f, body);
    assert.equal(await countDatasetRows(f), await countRows(f), name);
  }
  assert.equal(await countDatasetRows(join(dir, 'a.jsonl')), 2);
  assert.equal(await countDatasetRows(join(dir, 'f.jsonl')), 1101);
});

test('output state: prepared with N records, then stale when the input or the tokenizer changes', async () => {
  const dir = tempDir();
  const f = join(dir, 'chat.jsonl');
  copyFileSync(join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), f);
  const res = await prepare({ inputs: [f], outDir: join(dir, 'chat.eagle3') });
  assert.ok(res.ok);
  const qwenHash = tokenizerFilesHash(undefined);
  assert.equal(qwenHash, res.tokenizer.hash, 'tokenizerFilesHash must equal the hash prepare records');
  const ok = readOutputState(f, { tokenizerHash: qwenHash, rowCount: 3 });
  assert.equal(ok.state, 'prepared', ok.staleBecause.join('; '));
  assert.equal(ok.records, 6);
  assert.equal(ok.fileReport?.rowsRead, 3);
  assert.deepEqual(
    ok.outputs?.map((o) => [o.name, o.exists]),
    [
      ['tokenized_data.jsonl', true],
      ['prompts_to_generate.jsonl', true],
      ['report.md', true],
    ],
  );

  // another tokenizer is active
  const dsHash = tokenizerFilesHash(lenmlModelDir('deepseek_v3'));
  assert.equal(dsHash, loadTokenizer(lenmlModelDir('deepseek_v3')).hash);
  const tokStale = readOutputState(f, { tokenizerHash: dsHash });
  assert.equal(tokStale.state, 'stale');
  assert.match(tokStale.staleBecause.join(), /tokenizer changed/);

  // the input is touched (same size, new mtime), then grows by a row
  const later = new Date(Date.now() + 60_000);
  utimesSync(f, later, later);
  assert.match(readOutputState(f, { tokenizerHash: qwenHash }).staleBecause.join(), /input modified since the run/);
  writeFileSync(f, readFileSync(f, 'utf8') + '{"conversations":[{"from":"human","value":"hi"},{"from":"gpt","value":"yo"}]}\n');
  const grown = readOutputState(f, { tokenizerHash: qwenHash, rowCount: 4 });
  assert.equal(grown.state, 'stale');
  assert.match(grown.staleBecause.join(' | '), /input changed since the run \(size/);
  assert.match(grown.staleBecause.join(' | '), /the file has 4 rows, the run read 3/);
});

test('scanRowProblems: the bad rows of a damaged file, by line and reason code', async () => {
  const f = writeJsonl([
    {
      conversations: [
        { from: 'human', value: 'hi' },
        { from: 'gpt', value: 'hello' },
      ],
    },
    '{"conversations": [',
    {
      conversations: [
        { from: 'human', value: 'hi' },
        { from: 'narrator', value: 'once upon' },
      ],
    },
    // A turn list under an unknown field is found by searching the row (issue 12), unless a speaker is unknown: then it is a problem.
    {
      dialogue_turns: [
        { role: 'customer', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
      meta: 1,
    },
    { messages: [] },
    { prompt: 'set aside, not a problem' },
  ]);
  const r = await scanRowProblems(f);
  assert.equal(r.rowsRead, 6);
  assert.equal(r.truncated, false);
  assert.deepEqual(
    r.problems.map((p) => [p.line, p.code, p.severity]),
    [
      [2, 'invalid_json', 'error'],
      [3, 'unknown_role', 'error'],
      [4, 'unrecognized_shape', 'warning'],
      [5, 'empty_conversation', 'warning'],
    ],
  );
  assert.equal(r.problems[1].role, 'narrator');
  assert.deepEqual(r.problems[2].fieldMappings, [{ from: 'dialogue_turns', to: 'messages' }]);
  assert.equal((await scanRowProblems(f, { maxProblems: 2 })).truncated, true);

  // eagle3prep.jsonc beside the file fixes two of them, for the scan and for prepare alike
  writeFileSync(
    join(f, '..', PROJECT_CONFIG_NAME),
    '{\n  // project spellings\n  "roleAliases": {"Narrator": "assistant", "customer": "user"},\n  "fieldMappings": {"dialogue_turns": "messages"},\n}\n',
  );
  const fixed = await scanRowProblems(f);
  assert.deepEqual(
    fixed.problems.map((p) => [p.line, p.code]),
    [
      [2, 'invalid_json'],
      [5, 'empty_conversation'],
    ],
  );
  const res = await prepare({ inputs: [f], outDir: join(f, '..', 'out') });
  assert.equal(res.files[0].rowsWritten, 3);
  assert.equal(res.files[0].rowsSetAside, 1);
  assert.equal(res.files[0].rowsErrored, 1);
  assert.equal(res.files[0].rowsDropped, 1);
});

test('projectConfig: parse errors name file and line; applyProjectConfig does not touch the input row', () => {
  assert.throws(
    () => parseProjectConfig('{\n "roleAliases": {"bot": "robot"}\n}', '/x/eagle3prep.jsonc'),
    /eagle3prep.jsonc: "roleAliases": "bot" maps to "robot"; use one of system, user, assistant, tool/,
  );
  assert.throws(() => parseProjectConfig('{\n\n "roleAliases": {,}', '/x/eagle3prep.jsonc'), /\/x\/eagle3prep.jsonc:3: /);
  const cfg = parseProjectConfig('{"roleAliases": {" BOT ": "assistant"}, "fieldMappings": {"turns2": "messages"}}');
  const row = { turns2: [{ role: 'Bot', content: 'x' }], other: [{ from: 'bot' }] };
  const before = JSON.stringify(row);
  assert.deepEqual(applyProjectConfig(row, cfg), { messages: [{ role: 'assistant', content: 'x' }], other: [{ from: 'assistant' }] });
  assert.equal(JSON.stringify(row), before);
  assert.equal(applyProjectConfig('text', cfg), 'text');
});

test('mapLimit keeps order and bounds concurrency', async () => {
  let inFlight = 0;
  let peak = 0;
  const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise((r) => setTimeout(r, x * 3));
    inFlight--;
    return x * 10;
  });
  assert.deepEqual(out, [50, 10, 40, 20, 30]);
  assert.equal(peak, 2);
});
