import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tempDir } from '../helpers';
import { countRows, readRows, type RawRow } from '../../src/core/read/readers';

const SAMPLES = path.join(__dirname, '..', '..', 'samples');

function tmpFile(name: string, content: string | Buffer): string {
  const dir = tempDir('e3p-readers-');
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

async function all(file: string, opts?: { signal?: AbortSignal }): Promise<RawRow[]> {
  const out: RawRow[] = [];
  for await (const r of readRows(file, opts)) out.push(r);
  return out;
}

test('JSONL: BOM, CRLF, blank lines, invalid line, truncated last line', async () => {
  const body = '\ufeff{"a":1}\r\n\r\n   \n{"a": }\r\n{"b":"é"}\n{"c":3}';
  const file = tmpFile('x.jsonl', body);
  const rows = await all(file);
  assert.deepEqual(
    rows.map((r) => ({ line: r.line, value: r.value })),
    [
      { line: 1, value: { a: 1 } },
      { line: 4, value: undefined },
      { line: 5, value: { b: 'é' } },
      { line: 6, value: { c: 3 } },
    ],
  );
  assert.equal(rows[0].error, undefined);
  assert.match(rows[1].error!, /^invalid JSON: /);
  // What broke and where, in words; never a fragment of the line (issue 12 "Errors that explain").
  assert.match(rows[1].error!, /^invalid JSON: .+ at character \d+ of \d+/);
  assert.ok(!rows[1].error!.includes('\r'), 'CR of a CRLF line is stripped before parsing');
  // bytes: BOM(3) + `{"a":1}\r\n`(9) = 12; the last row ends at the file size.
  assert.equal(rows[0].bytes, 12);
  assert.equal(rows[3].bytes, Buffer.byteLength(body));
  assert.ok(rows[1].bytes < rows[2].bytes);
});

test('JSONL: a line longer than the stream chunk is read whole', async () => {
  const long = 'x'.repeat(3 * 1024 * 1024 + 17);
  const file = tmpFile('long.jsonl', `{"t":"${long}"}\n{"t":"short"}\n`);
  const rows = await all(file);
  assert.equal(rows.length, 2);
  assert.equal((rows[0].value as { t: string }).t.length, long.length);
  assert.deepEqual(rows[1], { line: 2, value: { t: 'short' }, bytes: fs.statSync(file).size });
});

test('JSONL: multi-byte UTF-8 split across chunk boundaries decodes correctly', async () => {
  // Put a 4-byte emoji across the 1 MiB chunk boundary.
  const pad = 'a'.repeat(1024 * 1024 - 8);
  const file = tmpFile('utf.jsonl', `{"t":"${pad}😀😀"}\n`);
  const rows = await all(file);
  assert.equal((rows[0].value as { t: string }).t, `${pad}😀😀`);
});

test('.json array: one row per element, line = line the element starts on', async () => {
  const file = tmpFile('arr.json', '[\n  {"a": [1, {"b": 2}]},\n  {"c": 1},\n\n  5, "x"\n]\n');
  const rows = await all(file);
  assert.deepEqual(
    rows.map((r) => [r.line, r.value]),
    [
      [2, { a: [1, { b: 2 }] }],
      [3, { c: 1 }],
      [5, 5],
      [5, 'x'],
    ],
  );
  assert.ok(rows.every((r, i) => i === 0 || r.bytes >= rows[i - 1].bytes));
  assert.ok(rows[3].bytes <= fs.statSync(file).size);
});

test('.json object wrapping the rows under "data"', async () => {
  const file = tmpFile('wrap.json', '{"meta": {"x": [1]},\n "data": [\n  {"a": 1},\n  {"b": {"c": [1]}}\n]}');
  const rows = await all(file);
  assert.deepEqual(
    rows.map((r) => [r.line, r.value]),
    [
      [3, { a: 1 }],
      [4, { b: { c: [1] } }],
    ],
  );
});

test('.json single conversation object is one row', async () => {
  const file = tmpFile('one.json', '\n{"conversations": [{"from": "human", "value": "hi"}]}\n');
  const rows = await all(file);
  assert.deepEqual(rows, [{ line: 2, value: { conversations: [{ from: 'human', value: 'hi' }] }, bytes: fs.statSync(file).size }]);
});

test('.json holding JSON Lines is read as JSONL', async () => {
  const file = tmpFile('lines.json', '{"a":1}\n\n{"b":2}\n');
  const rows = await all(file);
  assert.deepEqual(
    rows.map((r) => [r.line, r.value]),
    [
      [1, { a: 1 }],
      [3, { b: 2 }],
    ],
  );
});

test('.json that does not parse: one error row at the error line', async () => {
  const file = tmpFile('bad.json', '[\n {"a": 1},\n {"b": }\n]');
  const rows = await all(file);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].line, 3);
  assert.match(rows[0].error!, /^invalid JSON: /);
});

test('pretty-printed JSON array under a .jsonl name is read as a document', async () => {
  const file = tmpFile('pretty.jsonl', '[\n  {"a": 1},\n  {"b": 2}\n]\n');
  const rows = await all(file);
  assert.deepEqual(
    rows.map((r) => [r.line, r.value]),
    [
      [2, { a: 1 }],
      [3, { b: 2 }],
    ],
  );
});

test('missing file and directory throw with the path in the message', async () => {
  const missing = path.join(os.tmpdir(), 'e3p-definitely-missing', 'nope.jsonl');
  await assert.rejects(all(missing), (err: Error) => err.message.includes(missing) && /no such file/.test(err.message));
  const dir = tempDir('e3p-dir-');
  await assert.rejects(all(dir), (err: Error) => err.message.includes(dir) && /directory/.test(err.message));
  await assert.rejects(countRows(missing), (err: Error) => err.message.includes(missing));
});

test('abort signal stops reading', async () => {
  const file = tmpFile('many.jsonl', Array.from({ length: 100 }, (_, i) => `{"i":${i}}`).join('\n'));
  const ac = new AbortController();
  const seen: number[] = [];
  await assert.rejects(async () => {
    for await (const r of readRows(file, { signal: ac.signal })) {
      seen.push(r.line);
      if (r.line === 3) ac.abort(new Error('stop now'));
    }
  }, /stop now/);
  assert.deepEqual(seen, [1, 2, 3]);
});

test('countRows counts non-blank lines (invalid ones too) and .json elements', async () => {
  assert.equal(await countRows(tmpFile('c.jsonl', '\ufeff{"a":1}\r\n\r\n  \n{bad\n{"c":3}')), 3);
  assert.equal(await countRows(tmpFile('e.jsonl', '')), 0);
  assert.equal(await countRows(tmpFile('c.json', '[{"a":1},{"a":2},{"a":3}]')), 3);
  assert.equal(await countRows(path.join(SAMPLES, 'agentic-trajectories.jsonl')), 3);
  assert.equal(await countRows(path.join(SAMPLES, 'prompts-only.jsonl')), 4);
});

test('every sample file reads without errors, with 1-based consecutive lines', async () => {
  const expected: Record<string, number> = {
    'agentic-trajectories.jsonl': 3,
    'chat-sharegpt-human-gpt.jsonl': 3,
    'prompts-only.jsonl': 4,
    'reasoning-sharegpt.jsonl': 3,
    'swe-agent-trajectory-field.jsonl': 2,
  };
  for (const [name, n] of Object.entries(expected)) {
    const file = path.join(SAMPLES, name);
    const rows = await all(file);
    assert.deepEqual(
      rows.map((r) => r.line),
      Array.from({ length: n }, (_, i) => i + 1),
      name,
    );
    assert.ok(
      rows.every((r) => r.error === undefined && typeof r.value === 'object'),
      name,
    );
    assert.equal(rows[rows.length - 1].bytes, fs.statSync(file).size, name);
  }
});
