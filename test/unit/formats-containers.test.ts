/**
 * Containers and damage (issue 3): gzip, zstd, concatenated pretty-printed
 * objects, wrapped arrays, a root array that is one conversation, a several-MB
 * line, BOM + CRLF + blank + invalid + truncated lines — each read through
 * `inspect` with exact messages and through `prepare` (embedded Qwen3) with the
 * row accounting; and the clear failures of `inspect` and `prepare`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { readRows } from '../../src/core/read/readers';
import { runCli, tempDir } from '../helpers';

const rowA = { prompt: 'Say A', response: 'A' };
const rowB = {
  messages: [
    { role: 'user', content: 'Say B' },
    { role: 'assistant', content: 'B' },
  ],
};
const jsonl = [rowA, rowB].map((r) => JSON.stringify(r)).join('\n') + '\n';
const expected = [
  [
    { role: 'user', content: 'Say A' },
    { role: 'assistant', content: 'A' },
  ],
  [
    { role: 'user', content: 'Say B' },
    { role: 'assistant', content: 'B' },
  ],
];

function file(name: string, content: string | Buffer): string {
  const p = join(tempDir('e3p-containers-'), name);
  writeFileSync(p, content);
  return p;
}

async function accounting(path: string) {
  const res = await prepare({ inputs: [path], outDir: tempDir(), allowEmpty: true });
  const f = res.files[0];
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead, path);
  return f;
}

/** `jsonl` compressed by the zstd tool (`zstd -19 --no-check`), committed so the test needs no zstd binary (the reader decompresses with fzstd). */
const JSONL_ZST = join(__dirname, '..', 'fixtures', 'containers', 'two-rows.jsonl.zst');

test('.jsonl.gz: decompressed as a stream, same rows and lines as the plain file', async () => {
  const p = file('d.jsonl.gz', gzipSync(jsonl));
  const r = await inspectFile(p);
  assert.equal(r.format, 'mixed');
  assert.deepEqual(
    r.records.map((x) => x.messages),
    expected,
  );
  assert.deepEqual(
    r.records.map((x) => x.source.line),
    [1, 2],
  );
  const f = await accounting(p);
  assert.equal(f.rowsWritten, 2);
});

test('.jsonl.zst: Zstandard (fzstd), found by magic bytes', async () => {
  const p = file('d.jsonl.zst', readFileSync(JSONL_ZST));
  const r = await inspectFile(p);
  assert.deepEqual(
    r.records.map((x) => x.messages),
    expected,
  );
  assert.equal((await accounting(p)).rowsWritten, 2);
});

test('.json.gz document (array) is parsed whole after decompression', async () => {
  const p = file('d.json.gz', gzipSync(JSON.stringify([rowA, rowB], null, 2)));
  const r = await inspectFile(p);
  assert.deepEqual(
    r.records.map((x) => x.messages),
    expected,
  );
  assert.deepEqual(
    r.records.map((x) => x.source.line),
    [2, 6],
  );
});

test('concatenated pretty-printed objects: one row per object at its first line; a cut-off last object is one error row', async () => {
  const body = JSON.stringify(rowA, null, 2) + '\n' + JSON.stringify(rowB, null, 2) + '\n{\n  "prompt": "cut';
  const p = file('pretty.jsonl', body);
  const r = await inspectFile(p);
  assert.deepEqual(
    r.records.map((x) => x.messages),
    expected,
  );
  assert.deepEqual(
    r.records.map((x) => x.source.line),
    [1, 5],
  );
  assert.deepEqual(
    r.skipped.map((s) => [s.line, s.reason]),
    [[17, 'invalid_json']],
  );
  assert.match(r.skipped[0].message, /cut off at the end of the file/);
  const f = await accounting(p);
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsErrored], [3, 2, 1]);
});

test('wrapped array {"data": [...]}, and a .json array that is one conversation', async () => {
  const w = await inspectFile(file('w.json', JSON.stringify({ version: 1, data: [rowA, rowB] })));
  assert.deepEqual(
    w.records.map((x) => x.messages),
    expected,
  );
  const one = await inspectFile(file('one.json', JSON.stringify(rowB.messages, null, 1)));
  assert.equal(one.rows_read, 1);
  assert.deepEqual(
    one.records.map((x) => x.messages),
    [expected[1]],
  );
  // UltraChat row saved alone as .json: "data" holds strings, not records.
  const u = await inspectFile(file('u.json', JSON.stringify({ id: 'u1', data: ['hi', 'hello'] })));
  assert.deepEqual(
    u.records.map((x) => x.messages),
    [
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    ],
  );
});

test('BOM, CRLF, blank lines, an invalid line and a truncated last line: reported by line, accounting holds', async () => {
  const body = '\ufeff' + JSON.stringify(rowA) + '\r\n\r\n' + '{"prompt": oops}\r\n' + JSON.stringify(rowB) + '\r\n' + '{"prompt": "Say C", "resp';
  const p = file('damaged.jsonl', body);
  const r = await inspectFile(p);
  assert.deepEqual(
    r.records.map((x) => x.messages),
    expected,
  );
  assert.deepEqual(
    r.records.map((x) => x.source.line),
    [1, 4],
  );
  assert.deepEqual(
    r.skipped.map((s) => [s.line, s.reason]),
    [
      [3, 'invalid_json'],
      [5, 'invalid_json'],
    ],
  );
  assert.match(r.skipped[1].message, /the file looks truncated/);
  assert.doesNotMatch(r.skipped[0].message, /truncated/);
  const f = await accounting(p);
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsErrored], [4, 2, 2]);
});

test('a line of several MB is one row', async () => {
  const big = 'x'.repeat(3 * 1024 * 1024);
  const p = file('big.jsonl', JSON.stringify({ prompt: 'Repeat', response: big }) + '\n' + JSON.stringify(rowA) + '\n');
  const rows = [];
  for await (const row of readRows(p)) rows.push(row);
  assert.equal(rows.length, 2);
  assert.equal((rows[0].value as { response: string }).response.length, big.length);
  assert.deepEqual(rows[1].value, rowA);
});

test('clear failures: empty, CSV and plain text named .jsonl, tokenized rows, no conversation — inspect throws, prepare fails, both name the file and what would work', async () => {
  const cases: [string, string, RegExp][] = [
    ['empty.jsonl', '', /holds no rows \(the file is empty/],
    ['table.jsonl', 'prompt,response\nhi,there\n', /line 1 looks like a CSV header/],
    ['notes.jsonl', 'The quick brown fox\njumps over\n', /line 1 is plain text/],
    ['tok.jsonl', '{"input_ids": [1, 2, 3], "labels": [-100, 2, 3]}\n', /already tokenized/],
    ['meta.jsonl', '{"name": "x", "score": 3}\n', /no recognizable conversational record in 1 rows; rows have the keys name \(1\), score \(1\)/],
  ];
  for (const [name, body, why] of cases) {
    const p = file(name, body);
    await assert.rejects(inspectFile(p), (e: Error) => {
      assert.ok(e.message.includes(p), e.message);
      assert.match(e.message, why);
      assert.match(e.message, /Give JSON Lines/);
      return true;
    });
    const res = await prepare({ inputs: [p], outDir: tempDir() });
    assert.equal(res.ok, false, name);
    assert.ok(res.failures[0].includes(p), res.failures[0]);
    assert.match(res.failures[0], why);
    const f = res.files[0];
    assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
  }
});

test('Python NaN/Infinity values, a JSONL line holding a conversation list or several records, column-oriented JSON', async () => {
  const p = file(
    'py.jsonl',
    '{"prompt": "Say NaN", "response": "NaN", "score": NaN, "low": -Infinity}\n' +
      JSON.stringify(rowB.messages) +
      '\n' +
      JSON.stringify([rowA, { question: 'Q?', answer: 'A.' }]) +
      '\n',
  );
  const r = await inspectFile(p);
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.messages.map((m) => m.content)]),
    [
      [1, ['Say NaN', 'NaN']],
      [2, ['Say B', 'B']],
      [3, ['Say A', 'A']],
      [3, ['Q?', 'A.']],
    ],
  );
  const f = await accounting(p);
  assert.deepEqual([f.rowsRead, f.rowsWritten], [4, 4]);
  const cols = await inspectFile(file('cols.json', JSON.stringify({ prompt: ['Say A', 'Say C'], response: ['A', 'C'] })));
  assert.deepEqual(
    cols.records.map((x) => x.messages.map((m) => m.content)),
    [
      ['Say A', 'A'],
      ['Say C', 'C'],
    ],
  );
  const pandas = await inspectFile(file('pandas.json', JSON.stringify({ prompt: { 0: 'Say A', 1: 'Say C' }, response: { 0: 'A', 1: 'C' } })));
  assert.deepEqual(
    pandas.records.map((x) => x.messages.map((m) => m.content)),
    [
      ['Say A', 'A'],
      ['Say C', 'C'],
    ],
  );
  // An OpenAssistant flat export saved as a .json array stays one message per row, and its tree is rebuilt: a lone prompt is a prompt.
  const oa = await inspectFile(file('oa.json', JSON.stringify([{ message_id: 'm1', parent_id: null, role: 'prompter', text: 'Hi' }]))).catch((e: Error) => e);
  assert.ok(!(oa instanceof Error));
  assert.equal((oa as any).format, 'oasst-messages');
  assert.deepEqual((oa as any).records[0].messages, [{ role: 'user', content: 'Hi' }]);
  assert.equal((oa as any).records[0].needs_generation, true);
});

test('CLI: inspect --json exits 1 naming the file on clear failures and on files whose rows all fail; 0 with the JSON otherwise', async () => {
  const root = join(__dirname, '..', '..');
  const run = (...args: string[]) => runCli(args, { cwd: root });
  const tok = file('tok.jsonl', '{"input_ids": [1, 2], "attention_mask": [1, 1]}\n');
  let r = await run('inspect', '--json', tok);
  assert.equal(r.status, 1);
  assert.ok(r.stderr.includes(tok) && /already tokenized/.test(r.stderr), r.stderr);
  const bad = file(
    'roles.jsonl',
    JSON.stringify({
      messages: [
        { role: 'user', content: 'u' },
        { role: 'narrator', content: 'x' },
      ],
    }) + '\n',
  );
  r = await run('inspect', '--json', bad);
  assert.equal(r.status, 1);
  assert.equal(JSON.parse(r.stdout).skipped[0].code, 'unknown_role');
  assert.match(r.stderr, /no usable record: all 1 rows skipped \(first: line 1: errored unknown_role: unknown role "narrator"/);
  const good = file('ok.jsonl', jsonl);
  r = await run('inspect', '--json', good);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).rows_read, 2);
});
