/**
 * Rows sent to the row processors as their line's bytes (docs/scale.md "1 → 2 workers"): with a pool, the reading
 * thread yields JSON Lines object lines unparsed (read/readers `ReadOptions.objectLines`), and the thread that
 * processes a batch parses them (formats/rowSource.ts parsedRow). Every row, value, error and problem record must be
 * what the reader's own parse gives: CRLF, a BOM, a character split between read chunks, an invalid line in the
 * middle of a batch, the truncated last line, a row over the large-row limit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readRows, type RawRow } from '../../src/core/read/readers';
import { CHUNK } from '../../src/core/read/readers/containers';
import { applyProjectConfig, configuredRows, parsedRow, rowConfigData, rowConfigFor } from '../../src/core/formats/rowSource';
import { parseProjectConfig, type ProjectConfig } from '../../src/core/read/projectConfig';
import { batchRows, packRowLines, type BatchRow } from '../../src/core/run/prepare/pool';
import { prepare } from '../../src/core/run/prepare/pipeline';
import type { PrepareOptions, PrepareResult } from '../../src/core/run/contract';
import { SHARED_ROWS_ENV } from '../../src/core/run/prepare/sharedExecutor';
import { comparableResult, lenmlModelDir, tempDir, testWorkerScript } from '../helpers';

const EMOJI = '\u{1F600}'; // 4 bytes in UTF-8

/**
 * A JSON Lines file's bytes with every case of the module comment; `head` rows first (the rows a run parses for the
 * format's detection), then the cases. The line holding {@link EMOJI} is padded so that the emoji's bytes straddle
 * the first read chunk's end ({@link CHUNK}).
 */
function casesFile(head: number, rowOf: (i: number) => object): Buffer {
  const parts: Buffer[] = [Buffer.from('\ufeff')];
  const add = (s: string) => parts.push(Buffer.from(s));
  for (let i = 0; i < head; i++) add(JSON.stringify(rowOf(i)) + (i % 2 ? '\r\n' : '\n'));
  add(JSON.stringify(rowOf(head)) + '\r\n'); // CRLF
  add('\n  \r\n');
  add('   ' + JSON.stringify(rowOf(head + 1)) + '\n'); // spaces before the '{'
  add('{"messages": [{"role": "user", "content": "hi"}, \n'); // invalid, in the middle of a batch
  add(JSON.stringify(rowOf(head + 2)) + '\n');
  add('[' + JSON.stringify(rowOf(head + 3)) + ',' + JSON.stringify(rowOf(head + 4)) + ']\n'); // a list: two rows, one line
  add('\ufeff' + JSON.stringify(rowOf(head + 5)) + '\n'); // a BOM that does not start the file
  add('{"messages": [{"role": "user", "content": "n"}, {"role": "assistant", "content": "m"}], "score": NaN}\n'); // Python's NaN
  add(JSON.stringify({ ...rowOf(head + 6), note: 'x'.repeat(6000) }) + '\n'); // over a 4 kB large-row limit
  // The emoji's first two bytes end the first chunk, its last two start the next.
  const before = parts.reduce((n, p) => n + p.length, 0);
  const open = '{"pad": "';
  const close = '", "messages": [{"role": "user", "content": "' + EMOJI + ' why"}, {"role": "assistant", "content": "because ' + EMOJI + '"}]}\n';
  const pad = CHUNK - 2 - before - Buffer.byteLength(open) - Buffer.byteLength('", "messages": [{"role": "user", "content": "');
  assert.ok(pad > 0, 'the cases fit in the first chunk');
  add(open + 'p'.repeat(pad) + close);
  add(JSON.stringify(rowOf(head + 7)) + '\n');
  add('{"messages": [{"role": "user", "content": "cut'); // the last line: no newline, invalid
  const buf = Buffer.concat(parts);
  const at = buf.indexOf(Buffer.from(EMOJI));
  assert.equal(at, CHUNK - 2, 'the emoji straddles the chunk boundary');
  return buf;
}

const chatRow = (i: number) => ({
  messages: [
    { role: 'user', content: `question ${i} `.repeat(1 + (i % 4)) },
    { role: 'assistant', content: `answer ${i}` },
  ],
});

async function rowsOf(file: string, raw: boolean): Promise<RawRow[]> {
  const out: RawRow[] = [];
  for await (const r of readRows(file, raw ? { objectLines: { raw: true } } : {})) out.push(r);
  return out;
}

test('object lines read unparsed parse to the rows the reader yields (CRLF, BOM, split character, NaN, truncated last line)', async () => {
  const dir = tempDir();
  const file = join(dir, 'cases.jsonl');
  writeFileSync(file, casesFile(3, chatRow));
  const parsed = await rowsOf(file, false);
  const raw = await rowsOf(file, true);
  // Lines that are one object are unparsed; the list line (two rows) and the line starting with a BOM are parsed as before.
  assert.equal(raw.filter((r) => r.raw).length, 12);
  assert.deepEqual(
    raw.filter((r) => !r.raw).map((r) => [r.line, r.element]),
    [
      [10, 0],
      [10, 1],
      [11, undefined],
    ],
  );
  assert.deepEqual(
    raw.map((r) => ({ ...parsedRow(r, undefined), bytes: r.bytes })),
    parsed.map((r) => ({
      line: r.line,
      ...(r.element === undefined ? {} : { element: r.element }),
      ...(r.error === undefined ? { value: r.value } : { error: r.error }),
      bytes: r.bytes,
    })),
  );
  // The values themselves, by hand.
  const byLine = new Map(raw.map((r) => [r.line, parsedRow(r, undefined)]));
  assert.deepEqual(byLine.get(1)!.value, chatRow(0)); // after the file's BOM
  assert.deepEqual(byLine.get(7)!.value, chatRow(4)); // spaces before the '{'
  assert.match(byLine.get(8)!.error!, /^invalid JSON: /);
  assert.match(byLine.get(11)!.error!, /^invalid JSON: /); // a BOM inside the file is not skipped
  assert.deepEqual((byLine.get(12)!.value as { score: unknown }).score, null);
  const emojiRow = byLine.get(14)!.value as { messages: { content: string }[] };
  assert.equal(emojiRow.messages[0].content, `${EMOJI} why`);
  assert.equal(emojiRow.messages[1].content, `because ${EMOJI}`);
  const last = byLine.get(16)!;
  assert.match(last.error!, /^invalid JSON: .*\(the last line has no newline at its end: the file looks truncated\)$/);
  assert.equal(raw.find((r) => r.line === 16)!.truncated, true);
  assert.equal(raw.find((r) => r.line === 15)!.truncated, undefined);
  // CR left out of the bytes of a CRLF line.
  const crlf = raw.find((r) => r.line === 2)!.raw!;
  assert.notEqual(crlf[crlf.length - 1], 0x0d);
});

test("a row read unparsed gets the file's mapping entry and project config as a parsed row does", async () => {
  const dir = tempDir();
  const file = join(dir, 'conv.jsonl');
  const rows = Array.from({ length: 6 }, (_, i) => ({
    conv: [
      { from: 'Human', value: `q${i}` },
      { from: 'bot', value: `a${i}` },
    ],
    extra: i,
  }));
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n{"conv": [\n');
  const project: ProjectConfig = {
    file: '',
    roleAliases: { human: 'user', bot: 'assistant' },
    fieldMappings: { conv: 'conversations' },
    fieldRoles: {},
    reading: {},
  };
  const config = rowConfigFor(file, { project, mapping: false });
  const data = rowConfigData(config);
  assert.ok(data);
  const parsed: RawRow[] = [];
  for await (const r of configuredRows(file, config)) parsed.push(r);
  const raw: RawRow[] = [];
  for await (const r of configuredRows(file, config, { objectLines: { raw: true } })) raw.push(r);
  assert.equal(raw.filter((r) => r.raw).length, 7);
  const clean = (r: Pick<RawRow, 'line' | 'value' | 'error'>) => ({ line: r.line, value: r.value, error: r.error });
  assert.deepEqual(
    raw.map((r) => clean(parsedRow(r, data))),
    parsed.map(clean),
  );
  // The config did apply: the field renamed and the roles aliased.
  assert.deepEqual((parsedRow(raw[0], data).value as { conversations: unknown }).conversations, [
    { from: 'user', value: 'q0' },
    { from: 'assistant', value: 'a0' },
  ]);
});

test('a batch crosses as one transferred buffer and parses on the other side', () => {
  const a = Buffer.from('xx{"messages": []}yy');
  const b = Buffer.from('{"broken": ');
  const rows: BatchRow[] = [
    { line: 3, raw: a.subarray(2, 18) },
    { line: 4, value: { kept: true } },
    { line: 5, raw: b, truncated: true },
  ];
  const buffer = packRowLines(rows)!;
  assert.equal(buffer.byteLength, 16 + b.length);
  assert.ok(rows.every((r) => !r.raw || r.raw.buffer === buffer));
  const moved = structuredClone({ rows, config: undefined }, { transfer: [buffer] });
  assert.equal(rows[0].raw!.byteLength, 0); // transferred: gone from the sender
  assert.equal(moved.rows[0].raw!.buffer, moved.rows[2].raw!.buffer);
  const got = batchRows(moved);
  assert.deepEqual(got[0], { line: 3, value: { messages: [] } });
  assert.deepEqual(got[1], { line: 4, value: { kept: true } });
  assert.match(got[2].error!, /^invalid JSON: .*the file looks truncated\)$/);
  assert.equal(packRowLines([{ line: 1, value: 1 }]), undefined);
});

const strip = comparableResult;

test('1 worker, 2 pool workers and the shared form write the same bytes, problems.jsonl included, on rows sent unparsed', async () => {
  const dir = tempDir();
  const file = join(dir, 'cases.jsonl');
  // 60 rows before the cases: the first 50 detect the format (parsed here), the rest cross as bytes.
  writeFileSync(file, casesFile(60, chatRow));
  const workerScript = testWorkerScript();
  const base: PrepareOptions = { inputs: [file], outDir: '', tokenizerDir: lenmlModelDir('deepseek_v3'), workerScript, largeRowBytes: 4096 };
  const runs: { out: string; result: PrepareResult }[] = [];
  for (const [workers, shared, shard] of [
    [1, false, undefined],
    [2, false, undefined],
    [2, true, undefined],
    [1, false, { index: 1, count: 2 }],
    [2, false, { index: 1, count: 2 }],
  ] as const) {
    const out = tempDir();
    process.env[SHARED_ROWS_ENV] = shared ? '1' : '';
    try {
      runs.push({ out, result: await prepare({ ...base, outDir: out, workers, ...(shard ? { shard } : {}) }) });
    } finally {
      delete process.env[SHARED_ROWS_ENV];
    }
  }
  const files = ['data/tokenized_data.jsonl', 'problems.jsonl', 'prompts_to_generate.jsonl', 'token_counts.json'];
  for (const [k, ref] of [
    [1, 0],
    [2, 0],
    [4, 3],
  ]) {
    for (const f of files) assert.equal(readFileSync(join(runs[k].out, f), 'utf8'), readFileSync(join(runs[ref].out, f), 'utf8'), `run ${k}: ${f}`);
    assert.deepEqual(strip(runs[k].result), strip(runs[ref].result), `run ${k}`);
  }
  // The problem records, by hand: the invalid line in the middle of a batch, the BOM line, the truncated last line.
  const problems = readFileSync(join(runs[1].out, 'problems.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const invalid = problems.filter((p) => p.code === 'invalid_json');
  assert.deepEqual(
    invalid.map((p) => [p.file, p.line, p.fate]),
    [
      [file, 65, 'errored'],
      [file, 68, 'errored'],
      [file, 73, 'errored'],
    ],
  );
  assert.match(invalid[0].message, /^invalid JSON: /);
  assert.match(invalid[2].message, /the file looks truncated\)$/);
  // The emoji split between the read chunks is in the written records, as its tokens.
  const r = runs[1].result.files[0];
  assert.equal(r.rowsRead, 60 + 12); // the list line is two rows
  assert.equal(r.rowsErrored, 3);
  const data = readFileSync(join(runs[1].out, 'data/tokenized_data.jsonl'), 'utf8');
  assert.ok(data.includes(`"line":71}`), 'the row with the split character is written');
});

test('roleAliases are looked up by their own keys: a turn role spelled like an Object property ("constructor", "__proto__") stays as written', () => {
  const cfg = parseProjectConfig('{"roleAliases": {"bot": "assistant"}}');
  for (const spelled of ['constructor', 'Constructor', '__proto__', 'hasOwnProperty']) {
    const row = {
      messages: [
        { role: spelled, content: 'q' },
        { role: 'bot', content: 'a' },
      ],
    };
    const applied = applyProjectConfig(row, cfg) as { messages: { role: unknown }[] };
    assert.deepEqual(
      applied.messages.map((m) => m.role),
      [spelled, 'assistant'],
      spelled,
    );
    // A row crosses to a pool worker as a structured clone: an inherited function taken as a role could not.
    assert.doesNotThrow(() => structuredClone(applied), spelled);
  }
});

test('a role spelled like an Object property, with roleAliases, among the detection rows and after: 1 worker and 2 pool workers write the same bytes', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{"roleAliases": {"bot": "assistant"}}');
  const file = join(dir, 'roles.jsonl');
  const rows = Array.from({ length: 60 }, (_, i) => ({
    messages: [
      { role: 'user', content: `question ${i}` },
      { role: 'bot', content: `answer ${i}` },
    ],
  }));
  // One among the first 50 rows (parsed by the reading thread, sent as a value), one after (sent as its line's bytes).
  const odd = (i: number) => ({
    messages: [
      { role: 'constructor', content: `odd ${i}` },
      { role: 'assistant', content: 'x' },
    ],
  });
  rows.splice(3, 0, odd(3));
  rows.splice(57, 0, odd(57));
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const base: PrepareOptions = { inputs: [file], outDir: '', tokenizerDir: lenmlModelDir('deepseek_v3'), workerScript: testWorkerScript() };
  const outs: string[] = [];
  for (const workers of [1, 2]) {
    const out = tempDir();
    await prepare({ ...base, outDir: out, workers });
    outs.push(out);
  }
  for (const f of ['data/tokenized_data.jsonl', 'problems.jsonl', 'token_counts.json'])
    assert.equal(readFileSync(join(outs[1], f), 'utf8'), readFileSync(join(outs[0], f), 'utf8'), f);
  const problems = readFileSync(join(outs[0], 'problems.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    problems.map((p) => [p.line, p.code]),
    [
      [4, 'unknown_role'],
      [58, 'unknown_role'],
    ],
  );
  // The message names the role as the data spells it.
  for (const p of problems) assert.match(p.message, /^unknown role "constructor" in message 1 /);
});

test('a gzip file: a row read unparsed over largeRowBytes is processed in the run’s own thread, not sent to a pool worker', async () => {
  const dir = tempDir();
  const rows = Array.from({ length: 60 }, (_, i) => JSON.stringify(chatRow(i)));
  // After the detection rows (they are parsed here): a 6 kB row, over a 4 kB limit; gzip packs it into a few bytes.
  rows.push(JSON.stringify({ ...chatRow(60), note: 'x'.repeat(6000) }), JSON.stringify(chatRow(61)));
  const text = rows.join('\n') + '\n';
  const gz = join(dir, 'big.jsonl.gz');
  writeFileSync(gz, gzipSync(text));
  const plain = join(dir, 'big.jsonl');
  writeFileSync(plain, text);
  // A pool worker that fails on a row over the limit (its uncaught error fails the pool, and the run), then the real one.
  const real = testWorkerScript() ?? join(__dirname, '..', '..', 'src', 'worker.ts');
  const guard = join(dir, 'guardWorker.js');
  writeFileSync(
    guard,
    [
      `const { parentPort } = require('node:worker_threads');`,
      `parentPort.on('message', (m) => { if (m && m.type === 'batch') for (const r of m.rows) if (r.raw && r.raw.byteLength > 4096) throw new Error('a row over largeRowBytes was sent to a pool worker'); });`,
      real.endsWith('.ts') ? `require(${JSON.stringify(require.resolve('tsx/cjs'))});` : '',
      `require(${JSON.stringify(real)});`,
    ].join('\n'),
  );
  const outs: string[] = [];
  for (const input of [plain, gz]) {
    const out = tempDir();
    const r = await prepare({ inputs: [input], outDir: out, tokenizerDir: lenmlModelDir('deepseek_v3'), workerScript: guard, workers: 2, largeRowBytes: 4096 });
    assert.equal(r.files[0].failure, undefined, input);
    assert.equal(r.files[0].rowsWritten, 62, input);
    outs.push(out);
  }
  // The same records (their ids and sources name the file read).
  const records = (out: string) =>
    readFileSync(join(out, 'data/tokenized_data.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const { input_ids, loss_mask } = JSON.parse(l);
        return { input_ids, loss_mask };
      });
  assert.deepEqual(records(outs[1]), records(outs[0]));
});
