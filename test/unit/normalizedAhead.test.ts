import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectFormat } from '../../src/core/formats/detect';
import { normalizeDetailed } from '../../src/core/formats/normalize';
import { handAhead, normalizeOnce, NORMALIZED_AHEAD_TESTING, readingIsDefault, rowSourceOf } from '../../src/core/formats/normalizedAhead';
import { prepare } from '../../src/core/run/prepare/pipeline';
import type { Conversation, RowOutcome } from '../../src/core/types';
import { tempDir } from '../helpers';

const chat = () => ({
  conversations: [
    { from: 'human', value: 'What is 2 + 2?' },
    { from: 'gpt', value: 'It is 4.' },
  ],
});
const idOf = (o: RowOutcome) => (o as { conversation: Conversation }).conversation.id;

test('rowSourceOf: the line, and the element only when set', () => {
  assert.deepEqual(rowSourceOf({ line: 3 }, '/d/a.jsonl'), { file: '/d/a.jsonl', line: 3 });
  assert.deepEqual(rowSourceOf({ line: 3, element: 2 }, '/d/a.jsonl'), { file: '/d/a.jsonl', line: 3, element: 2 });
  assert.deepEqual(Object.keys(rowSourceOf({ line: 3, element: undefined }, 'f')), ['file', 'line']);
});

test('readingIsDefault: only when every reading option is unset', () => {
  assert.equal(readingIsDefault({}), true);
  assert.equal(readingIsDefault({ answers: undefined, conversationLists: undefined }), true);
  assert.equal(readingIsDefault({ answers: 'all' }), false);
  assert.equal(readingIsDefault({ conversationLists: 'longest' }), false);
});

test('normalizeOnce takes a handed outcome once, for the same value, source, file name and options only', () => {
  const options = {};
  const value = chat();
  const source = rowSourceOf({ line: 3 }, '/d/a.jsonl');
  const d = normalizeDetailed(value, source, 'a.jsonl', options);
  handAhead(value, source, 'a.jsonl', options, d);
  const taken = NORMALIZED_AHEAD_TESTING.taken;
  assert.equal(normalizeOnce(value, { file: '/d/a.jsonl', line: 3 }, 'a.jsonl', {}), d, 'the handed outcome (both options default)');
  assert.equal(NORMALIZED_AHEAD_TESTING.taken, taken + 1);
  const again = normalizeOnce(value, source, 'a.jsonl', options);
  assert.notEqual(again, d, 'taken once: normalized again');
  assert.deepEqual(again.outcome, d.outcome);
  assert.equal(idOf(again.outcome), 'a.jsonl:3');

  // Anything else normalizes under its own source, file name and options (and the entry is gone).
  const cases: [string, () => RowOutcome, string][] = [
    ['another line', () => normalizeOnce(value, { file: '/d/a.jsonl', line: 4 }, 'a.jsonl', options).outcome, 'a.jsonl:4'],
    ['another element', () => normalizeOnce(value, { file: '/d/a.jsonl', line: 3, element: 1 }, 'a.jsonl', options).outcome, 'a.jsonl:3[1]'],
    ['another file name', () => normalizeOnce(value, source, 'b.jsonl', options).outcome, 'b.jsonl:3'],
    ['another file', () => normalizeOnce(value, { file: '/e/a.jsonl', line: 3 }, 'a.jsonl', options).outcome, 'a.jsonl:3'],
  ];
  for (const [what, run, id] of cases) {
    handAhead(value, source, 'a.jsonl', options, d);
    const before = NORMALIZED_AHEAD_TESTING.taken;
    const o = run();
    assert.equal(NORMALIZED_AHEAD_TESTING.taken, before, what);
    assert.equal(idOf(o), id, what);
    assert.equal(normalizeOnce(value, source, 'a.jsonl', options) === d, false, `${what}: the entry is dropped`);
  }
  // Other options: a row of several answers read another way is not the handed outcome.
  const answers = { prompt: 'Pick one', responses: ['A first answer here.', 'A second answer here.'] };
  const da = normalizeDetailed(answers, source, 'a.jsonl', options);
  handAhead(answers, source, 'a.jsonl', options, da);
  const first = normalizeOnce(answers, source, 'a.jsonl', { answers: 'first' });
  assert.notEqual(first, da);
  assert.deepEqual(first.outcome, normalizeDetailed(answers, source, 'a.jsonl', { answers: 'first' }).outcome);
  // A string row (double-encoded JSON) is never remembered.
  const s = JSON.stringify(chat());
  handAhead(s, source, 'a.jsonl', options, normalizeDetailed(s, source, 'a.jsonl', options));
  const before = NORMALIZED_AHEAD_TESTING.taken;
  normalizeOnce(s, source, 'a.jsonl', options);
  assert.equal(NORMALIZED_AHEAD_TESTING.taken, before);
});

test("detectFormat gives the same format and evidence from outcomes normalized under the run's own sources and file name", () => {
  const samples: unknown[][] = [
    [chat(), chat(), { conversations: [{ from: 'human', value: 'Only a question?' }] }],
    [
      chat(),
      {
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello!' },
        ],
        note: 'x',
      },
      { foo: 1, bar: [1, 2] },
      5,
      'not json',
      JSON.stringify(chat()),
      {
        conversations: [
          { from: 'narrator', value: 'Once' },
          { from: 'gpt', value: 'upon' },
        ],
      },
      { conversations: [] },
      { prompt: 'Pick one', responses: ['A first answer here.', 'A second answer here.'], score: [1, 2] },
      { instruction: 'Add 2 and 2.', output: '4', solution: 'Two plus two is four, so the answer is 4.' },
    ],
  ];
  for (const values of samples) {
    const normalized = values.map((v, i) => normalizeDetailed(v, rowSourceOf({ line: 2 * i + 5 }, '/data/real name.jsonl'), 'real name.jsonl', {}));
    const own = detectFormat(values);
    assert.deepEqual(detectFormat(values, normalized), own);
    assert.ok(own.evidence.length > 0);
  }
});

test("prepare hands the detection sample's outcomes to the row path (1 worker): same ids, lines and records as normalized again", async () => {
  const dir = tempDir();
  const input = join(dir, 'd.jsonl');
  const lines = [
    JSON.stringify(chat()),
    '',
    '{"conversations": [',
    JSON.stringify(chat()),
    JSON.stringify({ id: 'x', ...chat() }),
    JSON.stringify({ foo: 1 }),
    JSON.stringify({ conversations: [{ from: 'human', value: 'Only a question?' }] }),
  ];
  writeFileSync(input, lines.join('\n') + '\n');
  const runs: { taken: number; data: string; problems: string; prompts: string; files: unknown }[] = [];
  for (const answers of [undefined, 'all' as const]) {
    // --answers all is not the default reading: detection normalizes on its own and nothing is handed over.
    const out = join(dir, `out-${answers ?? 'default'}`);
    const before = NORMALIZED_AHEAD_TESTING.taken;
    const res = await prepare({ inputs: [input], outDir: out, workers: 1, ...(answers ? { answers } : {}) });
    const { file: _f, ...rest } = res.files[0] as unknown as Record<string, unknown>;
    void _f;
    runs.push({
      taken: NORMALIZED_AHEAD_TESTING.taken - before,
      data: readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8'),
      problems: readFileSync(join(out, 'problems.jsonl'), 'utf8'),
      prompts: readFileSync(join(out, 'prompts_to_generate.jsonl'), 'utf8'),
      files: { format: rest.format, evidence: rest.evidence, rowsRead: rest.rowsRead, rowsWritten: rest.rowsWritten },
    });
  }
  const [handed, own] = runs;
  assert.equal(handed.taken, 5, 'the five rows that parsed');
  assert.equal(own.taken, 0);
  const records = handed.data
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; source: { line: number } });
  assert.deepEqual(
    records.map((r) => [r.id, r.source.line]),
    [
      ['d.jsonl:1', 1],
      ['d.jsonl:4', 4],
      ['x', 5],
    ],
  );
  assert.deepEqual(
    handed.problems
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { line: number }).line),
    [3, 6],
  );
  assert.match(handed.prompts, /"line":7/);
  // The same rows read another way (no answers lists here): every output the same.
  assert.equal(handed.data, own.data);
  assert.equal(handed.problems, own.problems);
  assert.equal(handed.prompts, own.prompts);
  assert.deepEqual(handed.files, own.files);
});
