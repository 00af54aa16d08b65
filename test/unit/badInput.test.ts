/**
 * Bad input never breaks the run's contract (issue 14 item 11): rows nested
 * thousands of levels deep (a JSON document, a JSONL line, JSON text inside a
 * string field, a project config), a file that only looks compressed, and
 * hundreds of MiB of blank lines. Each bad row is one errored row with its line;
 * the file's other rows are written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { countRows, readRows, scanElements, type RawRow } from '../../src/core/read/readers';
import { jsonTextDepth, MAX_JSON_DEPTH, parseJsonLimited, valueDeeperThan } from '../../src/core/jsonDepth';
import { parseProjectConfig } from '../../src/core/read/projectConfig';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { RowProcessor, unexpectedRowError } from '../../src/core/records/rowProcessor';
import { tempDir } from '../helpers';

const GOOD = {
  messages: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
  ],
};
const nestedArrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
const nestedObjects = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

async function all(file: string): Promise<RawRow[]> {
  const out: RawRow[] = [];
  for await (const r of readRows(file)) out.push(r);
  return out;
}

function file(name: string, content: string | Buffer, dir = tempDir()): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

test('jsonTextDepth / valueDeeperThan / parseJsonLimited: exact depths, strings skipped, iterative at any depth', () => {
  assert.equal(jsonTextDepth('1'), 0);
  assert.equal(jsonTextDepth('{}'), 1);
  assert.equal(jsonTextDepth('{"a":[1,{"b":[]}]}'), 4);
  assert.equal(jsonTextDepth('{"a":"[[[[{{{{\\"[["}'), 1, 'brackets and escaped quotes inside strings do not count');
  assert.equal(jsonTextDepth(nestedArrays(MAX_JSON_DEPTH)), MAX_JSON_DEPTH);
  assert.equal(jsonTextDepth(nestedArrays(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH + 1);
  assert.equal(jsonTextDepth(nestedArrays(1_000_000)), MAX_JSON_DEPTH + 1, 'capped at limit + 1');
  assert.equal(jsonTextDepth(nestedArrays(10), 3), 4);
  const deep = JSON.parse(nestedArrays(100_000));
  assert.equal(valueDeeperThan(deep), true);
  assert.equal(valueDeeperThan(JSON.parse(nestedArrays(MAX_JSON_DEPTH))), false);
  assert.equal(valueDeeperThan(JSON.parse(nestedArrays(MAX_JSON_DEPTH + 1))), true);
  assert.deepEqual(parseJsonLimited('{"a":[1,2]}'), { a: [1, 2] });
  assert.throws(
    () => parseJsonLimited(nestedObjects(5000)),
    (e: Error) => e instanceof SyntaxError && /nested more than 512 levels/.test(e.message),
  );
  assert.throws(() => parseJsonLimited('{"a":'), SyntaxError);
});

test('a JSONL line nested thousands of levels deep is one errored row with its line; the other rows are read', async () => {
  for (const deep of [`{"messages":${nestedArrays(5000)}}`, nestedObjects(5000), nestedArrays(200_000)]) {
    const rows = await all(file('d.jsonl', [JSON.stringify(GOOD), deep, JSON.stringify(GOOD), ''].join('\n')));
    assert.deepEqual(
      rows.map((r) => [r.line, r.error === undefined]),
      [
        [1, true],
        [2, false],
        [3, true],
      ],
    );
    assert.match(rows[1].error!, /^invalid row: the row is nested more than 512 levels deep/);
  }
  // Exactly at the limit a row is read; one level more is refused.
  const atLimit = await all(file('l.jsonl', `{"x":${nestedArrays(MAX_JSON_DEPTH - 1)}}\n{"x":${nestedArrays(MAX_JSON_DEPTH)}}\n`));
  assert.equal(atLimit[0].error, undefined);
  assert.match(atLimit[1].error!, /nested more than 512/);
  // An invalid line that is also deep: the parser's message, no crash looking for the error's position.
  const bad = await all(file('b.jsonl', `${'['.repeat(20_000)}\n${JSON.stringify(GOOD)}\n`));
  assert.match(bad[0].error!, /^invalid JSON: /);
  assert.equal(bad[1].error, undefined);
});

test('a .json document: a deep element is one errored row at its line; a deep whole document is one errored row; lines and ids of the others unchanged', async () => {
  const doc = ['[', JSON.stringify(GOOD) + ',', `{"messages":${nestedArrays(5000)}},`, '  ' + JSON.stringify(GOOD), ']'].join('\n');
  const rows = await all(file('d.json', doc));
  assert.deepEqual(
    rows.map((r) => [r.line, r.error === undefined]),
    [
      [2, true],
      [3, false],
      [4, true],
    ],
  );
  assert.match(rows[1].error!, /nested more than 512 levels/);
  // Wrapped under a key (a duplicated key: the last one counts, as JSON.parse keeps it).
  const wrapped = `{"data": [1],\n "data": [\n${JSON.stringify(GOOD)},\n${nestedObjects(3000)}\n]}`;
  const w = await all(file('w.json', wrapped));
  assert.deepEqual(
    w.map((r) => [r.line, r.error === undefined]),
    [
      [3, true],
      [4, false],
    ],
  );
  // One object nested 5,000 deep, and a root array 100,000 deep.
  for (const text of [nestedObjects(5000), nestedArrays(100_000)]) {
    const one = await all(file('one.json', text));
    assert.equal(one.length, 1);
    assert.match(one[0].error!, /nested more than 512 levels/);
  }
  // An invalid deep document: the parser's message (no position search that recurses), one row.
  const bad = await all(file('bad.json', '['.repeat(50_000)));
  assert.equal(bad.length, 1);
  assert.match(bad[0].error!, /^invalid JSON: /);
  assert.equal(await countRows(file('c.json', doc)), 3);
});

test('scanElements: start lines, ends and depths of root array elements, root object values and a wrapped array', () => {
  const text = '[\n {"a": [1, [2]]},\n 3, "x,]",\n [[[]]]\n]';
  const s = scanElements(text, []);
  assert.deepEqual(s.starts, [2, 3, 3, 4]);
  assert.deepEqual(s.depths, [3, 0, 0, 3]);
  assert.deepEqual(
    s.ends.map((e) => text.slice(0, e).slice(-3)),
    [']]}', '\n 3', ',]"', ']]]'],
  );
  const byId = '{"k1": {"m": 1},\n"k2": {"m": [2]}}';
  const r = scanElements(byId, []);
  assert.deepEqual(r.starts, [1, 2]);
  assert.deepEqual(r.depths, [1, 2]);
  const wrapped = '{"meta": [[1]], "rows": [\n{"a": 1},\n{"b": [2]}]}';
  const k = scanElements(wrapped, ['rows']);
  assert.deepEqual(k.starts, [2, 3]);
  assert.deepEqual(k.depths, [1, 2]);
});

test('prepare: deep rows (document and line, one and two workers) error with their line, the good rows are written, nothing escapes', async () => {
  const dir = tempDir();
  const deepLine = file('lines.jsonl', [JSON.stringify(GOOD), `{"messages":${nestedArrays(5000)}}`, JSON.stringify(GOOD)].join('\n') + '\n', dir);
  const deepDoc = file('doc.json', `[\n${JSON.stringify(GOOD)},\n${nestedObjects(4000)},\n${JSON.stringify(GOOD)}\n]\n`, dir);
  // Just under the limit: tool-call arguments and a tool schema ~505 levels deep go through every step
  // (normalizing, the template's tojson, the structured clone to a pool worker, JSON.stringify) and are written.
  let deepArg: unknown = 1;
  for (let i = 0; i < 505; i++) deepArg = { a: deepArg };
  const near = {
    messages: [
      GOOD.messages[0],
      { role: 'assistant', content: 'calling', tool_calls: [{ type: 'function', function: { name: 'f', arguments: deepArg } }] },
      { role: 'tool', content: 'r' },
      { role: 'assistant', content: 'ok' },
    ],
    tools: [{ type: 'function', function: { name: 'f', parameters: deepArg } }],
  };
  const nearLimit = file('near.jsonl', [near, near].map((r) => JSON.stringify(r)).join('\n') + '\n', dir);
  for (const workers of [1, 2]) {
    const out = join(dir, `out-${workers}`);
    const res = await prepare({ inputs: [deepLine, deepDoc, nearLimit], outDir: out, workers });
    assert.equal(res.ok, true, res.failures.join('\n'));
    assert.deepEqual(
      res.files.map((f) => [f.rowsRead, f.rowsWritten, f.rowsErrored, f.errors.map((e) => e.line)]),
      [
        [3, 2, 1, [2]],
        [3, 2, 1, [3]],
        [2, 2, 0, []],
      ],
    );
    for (const f of res.files.slice(0, 2)) assert.match(f.errors[0].message, /nested more than 512 levels deep/);
    const lines = readFileSync(res.outputs.tokenizedData, 'utf8').trim().split('\n');
    assert.equal(lines.length, 4 + res.files[2].recordsWritten);
  }
});

test('JSON text nested deep inside string fields (tool arguments, tools, a JSON-string row) is not parsed past the limit: no stack overflow, no lost row', async () => {
  const dir = tempDir();
  const args = nestedObjects(6000);
  const rows = [
    { messages: [GOOD.messages[0], { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: args } }] }] },
    { messages: GOOD.messages, tools: nestedArrays(6000) },
    JSON.stringify(JSON.stringify({ messages: [{ role: 'user', content: 'x', extra: JSON.parse(nestedArrays(400)) }, GOOD.messages[1]] })),
    GOOD,
  ];
  const input = file('s.jsonl', rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n', dir);
  const res = await prepare({ inputs: [input], outDir: join(dir, 'out'), workers: 1 });
  const f = res.files[0];
  assert.equal(f.rowsRead, 4);
  assert.equal(f.rowsWritten + f.rowsErrored + f.rowsDropped, 4);
  for (const e of f.errors) assert.doesNotMatch(e.message, /^Maximum call stack size exceeded$/);
  // The row with the deep "tools" string errors naming the field; the others are written.
  assert.deepEqual(
    f.errors.map((e) => e.line),
    [2],
  );
  assert.match(f.errors[0].message, /"tools" is a string but not valid JSON \(.*nested more than 512 levels/);
});

test('a row the code cannot process (a stack overflow) is an errored row with a message that says so; processRow never throws', () => {
  const p = new RowProcessor({});
  // A cyclic value cannot come from JSON; it stands for any value that makes a step throw.
  const cyclic: Record<string, unknown> = {
    messages: [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ],
  };
  const tools: unknown[] = [];
  tools.push(tools);
  cyclic.tools = tools;
  const r = p.processRow({ line: 7, value: cyclic }, '/x.jsonl', 'x.jsonl');
  assert.equal(r.fate, 'errored');
  assert.equal(r.line, 7);
  assert.ok(r.message && r.message.length > 10, r.message);
  let overflow: unknown;
  const recurse = (n: number): number => recurse(n + 1) + 1;
  try {
    recurse(0);
  } catch (e) {
    overflow = e;
  }
  assert.match(unexpectedRowError(overflow), /^the row is nested too deep to process \(JavaScript stack overflow/);
  assert.match(unexpectedRowError(new Error('boom')), /^internal error processing the row: boom$/);
  assert.equal(unexpectedRowError(null), 'internal error processing the row: null');
  const hostile = {
    get message(): string {
      throw new Error('no');
    },
  };
  assert.equal(typeof unexpectedRowError(Object.setPrototypeOf(hostile, Error.prototype)), 'string');
});

test('a project config nested thousands of levels deep: a one-line error naming the file, not a stack overflow', () => {
  assert.throws(
    () => parseProjectConfig(`{"roleAliases": ${nestedObjects(20_000)}}`, '/p/eagle3prep.jsonc'),
    (e: Error) => e.message.startsWith('/p/eagle3prep.jsonc: the file is nested more than 512 levels deep'),
  );
});

test('a .json file that only looks compressed (zstd / gzip magic, then plain text): a clean error naming the file; prepare fails the file cleanly', async () => {
  const dir = tempDir();
  const zst = file('z.json', Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from('[{"a": 1}]')]), dir);
  const gz = file('g.json', Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.from('[{"a": 1}]')]), dir);
  const zl = file('z.jsonl', Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), Buffer.from('{"a": 1}\n')]), dir);
  for (const [f, kind] of [
    [zst, 'zstd'],
    [gz, 'gzip'],
    [zl, 'zstd'],
  ]) {
    await assert.rejects(all(f), (e: Error) => e.message === `cannot read ${f}: the ${kind} data is damaged (${(e.cause as Error).message})`);
    await assert.rejects(countRows(f), (e: Error) => e.message.startsWith(`cannot read ${f}: the ${kind} data is damaged`));
  }
  const r = await prepare({ inputs: [zst], outDir: join(dir, 'out'), workers: 1 });
  assert.equal(r.ok, false);
  assert.deepEqual(r.failures, [`${zst}: cannot read: the zstd data is damaged (invalid zstd data)`]);
  assert.deepEqual(r.outputs.written, []);
});

test('blank lines: hundreds of MiB of them (a small gzip) are skipped at the speed of the newline scan; lines still count', async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  const blank = Buffer.alloc(200 * 1024 * 1024, 0x0a);
  // a row, 200 MiB of blank lines with a few spaces/CRs in between, a row
  blank.write('  \r', 1000);
  const body = Buffer.concat([Buffer.from(JSON.stringify(GOOD) + '\n'), blank, Buffer.from('\t \r\n' + JSON.stringify(GOOD) + '\n\n\n')]);
  const gz = file('blank.jsonl.gz', gzipSync(body, { level: 1 }), dir);
  const t0 = Date.now();
  const rows = await all(gz);
  const ms = Date.now() - t0;
  assert.deepEqual(
    rows.map((r) => [r.line, r.error]),
    [
      [1, undefined],
      // line 1, then one line per newline of the blank run (3 of them overwritten by spaces and a CR), then the tab line
      [1 + (blank.length - 3) + 1 + 1, undefined],
    ],
  );
  assert.equal(await countRows(gz), 2);
  // Generous bound (the newline scan takes ~1 s here; the old per-line path took about a minute).
  assert.ok(ms < 30_000, `${ms} ms`);
  console.log(`200 MiB of blank lines (gzip ${(readFileSync(gz).length / 1024).toFixed(0)} KiB): read in ${ms} ms`);
});

test('the record view (hover, mask view) of a line nested thousands of levels deep: a message, no stack overflow', async () => {
  const { recordViewerFor } = await import('../../src/core/records/recordViewer');
  const v = recordViewerFor(undefined).view({ text: `{"messages":${nestedArrays(20_000)}}`, file: '/x/d.jsonl', line: 9 });
  assert.equal(v.records.length, 0);
  assert.match(v.message ?? '', /^line 9: the row is nested more than 512 levels deep/);
});

test('a byte-order mark in the middle of a file (files concatenated) is named in the row error', async () => {
  const row = '{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}';
  const rows = await all(file('bom.jsonl', `\ufeff${row}\n\ufeff${row}\n`));
  assert.equal(rows[0].error, undefined, 'a BOM at the start of the file is stripped');
  assert.match(rows[1].error ?? '', /byte-order mark \(U\+FEFF\) in the middle of the file/);
  assert.doesNotMatch(rows[1].error ?? '', /a character that JSON does not allow/);
});
