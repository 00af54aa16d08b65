/**
 * Issue 20 ("Real datasets, round three"), several answers to one prompt and short labels beside the real answer.
 * Synthetic rows written from the layouts' public documentation:
 * - pairwise annotations (AlpacaEval `annotations.json`: `instruction`, `output_1`, `output_2`, `preference`
 *   1 or 2 = which output the judge preferred; arena-style `response_a`/`response_b` + `winner` "model_a");
 * - evaluation outputs with a generations list (`question`, `code: [generation]`, per-generation `score`,
 *   the ground truth `answer` as a number), generations written with Sky-T1's
 *   `<|begin_of_thought|>…<|end_of_thought|>` `<|begin_of_solution|>…<|end_of_solution|>` markers;
 * - `{question, answer: "<label>", solution: "<worked solution>"}` (MATH-style rows);
 * - RL rollout dumps: a `prompt` rendered in ChatML (ending in the open assistant header) + the `response` the
 *   model wrote after it (`<think>…</think>answer<|im_end|>`), pretty-printed objects back to back.
 * Exact roles and text, notes, and the row accounting of `prepare` (written + set aside + dropped + errored = rows read).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { runCli, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const turns = (r: Awaited<ReturnType<typeof inspectFile>>) => r.records.map((x) => [x.id, x.messages.map((m) => [m.role, m.content, m.reasoning_content])]);

test('pairwise preference: the preferred output is trained; a null preference trains the first (noted); no preference field: each answer its own record', async () => {
  const file = writeJsonl(
    [
      { instruction: 'Name a prime number.', output_1: 'Nine is a prime number.', output_2: 'Seven is a prime number.', preference: 2, generator_1: 'm1' },
      { instruction: 'Say hello politely.', output_1: 'Hello, nice to meet you.', output_2: 'hey', preference: 1.0 },
      { instruction: 'Pick a colour.', output_1: 'I pick blue, like the sky.', output_2: 'Red is my pick today.', preference: null },
      { prompt: 'Capital of France?', response_a: 'The capital of France is Paris.', response_b: 'It is Lyon.', winner: 'model_a' },
      { question: 'Give a fruit.', response_j: 'An apple is a fruit.', response_k: 'A banana is a fruit.' },
    ],
    'pairs.jsonl',
  );
  const r = await inspectFile(file);
  assert.equal(r.format, 'prompt-answers');
  assert.deepEqual(turns(r), [
    [
      'pairs.jsonl:1',
      [
        ['user', 'Name a prime number.', undefined],
        ['assistant', 'Seven is a prime number.', undefined],
      ],
    ],
    [
      'pairs.jsonl:2',
      [
        ['user', 'Say hello politely.', undefined],
        ['assistant', 'Hello, nice to meet you.', undefined],
      ],
    ],
    [
      'pairs.jsonl:3',
      [
        ['user', 'Pick a colour.', undefined],
        ['assistant', 'I pick blue, like the sky.', undefined],
      ],
    ],
    [
      'pairs.jsonl:4',
      [
        ['user', 'Capital of France?', undefined],
        ['assistant', 'The capital of France is Paris.', undefined],
      ],
    ],
    [
      'pairs.jsonl:5/1',
      [
        ['user', 'Give a fruit.', undefined],
        ['assistant', 'An apple is a fruit.', undefined],
      ],
    ],
    [
      'pairs.jsonl:5/2',
      [
        ['user', 'Give a fruit.', undefined],
        ['assistant', 'A banana is a fruit.', undefined],
      ],
    ],
  ]);
  assert.deepEqual(
    r.records.map((x) => x.notes ?? []),
    [
      ['preferred_answer_used', 'fields_not_read'],
      ['preferred_answer_used'],
      ['no_preferred_answer'],
      ['preferred_answer_used'],
      ['answers_as_records'],
      ['answers_as_records'],
    ],
  );
  assert.deepEqual(Object.keys(r.unread_fields), ['generator_1']);
  assert.ok(
    r.evidence.includes('3/5 rows have "instruction" + answers "output_1"/"output_2" + preference "preference": several answers to one prompt'),
    r.evidence.join('\n'),
  );
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored, f.recordsWritten], [5, 5, 0, 0, 0, 6]);
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
});

test('eval outputs: the generation in a list is the answer (thought markers split into reasoning), the numeric ground truth is a label; several unscored generations: one record each', async () => {
  const gen =
    '<|begin_of_thought|>\n\nTwo plus two: count two more from two.\n\n<|end_of_thought|>\n\n<|begin_of_solution|>\n\n2 + 2 = \\boxed{4}\n\n<|end_of_solution|>';
  const file = writeJsonl(
    [
      { idx: 0, question: 'What is 2 + 2?', gt: '4', answer: 4.0, code: [gen], pred: ['4'], score: [true] },
      {
        idx: 1,
        question: 'What is 3 + 3?',
        answer: 6,
        generations: ['Three and three make six, so the answer is 6.', 'Adding 3 to 3 gives 6; the answer is 6.'],
      },
      {
        idx: 2,
        question: 'What is 5 + 5?',
        answer: 10,
        code: ['<|begin_of_thought|>\n\nFive and five is', '<|begin_of_thought|>\n\nTen.<|end_of_thought|>\n\n<|begin_of_solution|>10<|end_of_solution|>'],
        score: [false, true],
      },
    ],
    'eval.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), [
    [
      '0',
      [
        ['user', 'What is 2 + 2?', undefined],
        ['assistant', '2 + 2 = \\boxed{4}', 'Two plus two: count two more from two.'],
      ],
    ],
    [
      '1/1',
      [
        ['user', 'What is 3 + 3?', undefined],
        ['assistant', 'Three and three make six, so the answer is 6.', undefined],
      ],
    ],
    [
      '1/2',
      [
        ['user', 'What is 3 + 3?', undefined],
        ['assistant', 'Adding 3 to 3 gives 6; the answer is 6.', undefined],
      ],
    ],
    [
      '2',
      [
        ['user', 'What is 5 + 5?', undefined],
        ['assistant', '10', 'Ten.'],
      ],
    ],
  ]);
  assert.deepEqual(r.records[0].notes, ['short_label_not_trained', 'thought_markers_split', 'fields_not_read']);
  assert.deepEqual(r.records[3].notes, ['short_label_not_trained', 'preferred_answer_used', 'thought_markers_split']);
  // The ground truth "gt" and the graded prediction "pred" are reported, never trained.
  assert.deepEqual(Object.keys(r.unread_fields), ['gt', 'pred']);
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored, f.recordsWritten], [3, 3, 0, 0, 0, 4]);
});

test('a short label never wins over a model-written answer in another response field of the same row', async () => {
  const file = writeJsonl(
    [
      { problem: 'Compute 6 * 7.', answer: '42', solution: 'Six sevens: 7 + 7 + 7 + 7 + 7 + 7 = 42. The answer is 42.' },
      // A long "answer" stays the answer.
      { problem: 'Why is the sky blue?', answer: 'Sunlight scatters off air molecules, and blue light scatters the most.', solution: 'B' },
    ],
    'math.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(
    r.records.map((x) => x.messages.map((m) => [m.role, m.content])),
    [
      [
        ['user', 'Compute 6 * 7.'],
        ['assistant', 'Six sevens: 7 + 7 + 7 + 7 + 7 + 7 = 42. The answer is 42.'],
      ],
      [
        ['user', 'Why is the sky blue?'],
        ['assistant', 'Sunlight scatters off air molecules, and blue light scatters the most.'],
      ],
    ],
  );
  assert.deepEqual(
    r.records.map((x) => x.notes),
    [['short_label_not_trained'], ['short_label_not_trained']],
  );
  assert.deepEqual(r.unread_fields, {});
  assert.equal(r.records.length + r.skipped.length, r.rows_read);
});

test('a rendered ChatML prompt string + a response with a <think> block (concatenated pretty-printed objects): turns, reasoning_content, <|im_end|> removed', async () => {
  const rows = [
    {
      prompt: '<|im_start|>system\nBe exact.<|im_end|>\n<|im_start|>user\nWhat is 9 - 4?<|im_end|>\n<|im_start|>assistant\n',
      response: '<think>\nNine minus four is five.\n</think>\n\nThe answer is 5.<|im_end|>',
      response_len: 20,
    },
    // A response cut at max length: the block never closes, the text is kept as written (no reasoning split).
    { prompt: '<|im_start|>user\nWhat is 2 * 8?<|im_end|>\n<|im_start|>assistant\n', response: '<think>\nTwo times eight', response_len: 5 },
  ];
  const file = join(tempDir(), 'dapo.jsonl');
  writeFileSync(file, rows.map((r) => JSON.stringify(r, null, 2)).join('\n'));
  const r = await inspectFile(file);
  assert.equal(r.rows_read, 2);
  assert.deepEqual(
    r.records.map((x) => x.messages),
    [
      [
        { role: 'system', content: 'Be exact.' },
        { role: 'user', content: 'What is 9 - 4?' },
        { role: 'assistant', content: 'The answer is 5.', reasoning_content: 'Nine minus four is five.' },
      ],
      [
        { role: 'user', content: 'What is 2 * 8?' },
        { role: 'assistant', content: '<think>\nTwo times eight' },
      ],
    ],
  );
  assert.deepEqual(
    r.records.map((x) => x.notes),
    [
      ['transcript_split', 'chatml_end_removed', 'fields_not_read'],
      ['transcript_split', 'fields_not_read'],
    ],
  );
  assert.deepEqual(Object.keys(r.unread_fields), ['response_len']);
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [2, 2, 0, 0, 0]);
});

test('an unread field holding model-written text (prose or code) is a data-changing warning (model_text_not_read; longest_text_not_read, DEGRADED, when longer than every turn); --strict fails; metadata and copies of a turn never are', async () => {
  const critique =
    'The answer names the right capital but gives no reasoning at all; a better reply would explain that Canberra was chosen as a compromise between Sydney and Melbourne and has been the seat of government since 1927, which the user would find useful.';
  const code = [
    'CAPITALS = {"Australia": "Canberra", "Brazil": "Brasilia", "Canada": "Ottawa"}',
    '',
    'def capital(country):',
    '    if country not in CAPITALS:',
    '        raise KeyError(country)',
    '    return CAPITALS[country]',
    '',
    'print(capital("Australia"))',
  ].join('\n');
  const long =
    'I am planning a school project about the capital cities of the world and I would like to start with Australia, because many of my classmates think the capital is Sydney. What is the capital of Australia? Please explain in a few sentences why that city was chosen, and say since when it has been the seat of government, with the main reasons that led to the choice, so that I can tell the class.';
  const url = `https://example.org/datasets/capitals/australia?${'x'.repeat(220)}`;
  const row = (question: string, extra: object) => ({
    id: 'r',
    model: 'some-model-7b',
    created_at: '2024-05-01T10:00:00Z',
    score: 8.5,
    source_url: url,
    messages: [
      { role: 'user', content: question },
      { role: 'assistant', content: 'Canberra.' },
    ],
    ...extra,
  });
  const file = writeJsonl(
    [
      row(long, { critique }),
      row('Capital of Australia?', { critique }),
      row(long, { program: code }),
      // A row-level copy of the user turn is not unread text; metadata is never flagged.
      row(long, { question: long }),
    ],
    'judged.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(
    r.records.map((x) => x.notes ?? []),
    [['fields_not_read', 'model_text_not_read'], ['fields_not_read', 'longest_text_not_read'], ['fields_not_read', 'model_text_not_read'], ['fields_not_read']],
  );
  assert.deepEqual(Object.keys(r.unread_fields), ['critique', 'program', 'question']);
  for (const e of [
    '1/4 rows: "critique" looks written by a model (long prose or code) and is not read',
    '1/4 rows: "critique" looks written by a model and is longer than every turn read: not read',
    '1/4 rows: "program" looks written by a model (long prose or code) and is not read',
  ])
    assert.ok(r.evidence.includes(e), r.evidence.join('\n'));
  const res = await prepare({ inputs: [file], outDir: tempDir(), workers: 1 });
  const f = res.files[0];
  assert.equal(f.status, 'degraded');
  assert.deepEqual([f.notes.model_text_not_read, f.notes.longest_text_not_read], [2, 1]);
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [4, 4, 0, 0, 0]);
  const strict = await prepare({ inputs: [file], outDir: tempDir(), workers: 1, strict: true });
  assert.equal(strict.ok, false);
  assert.match(strict.failures.join('\n'), /judged\.jsonl: data-changing warnings \(--strict\): .*model_text_not_read × 2, longest_text_not_read × 1/);
  // Without the row whose longest text is unread: WARNINGS.
  const warned = writeJsonl([row(long, { critique })], 'judged-one.jsonl');
  const one = (await prepare({ inputs: [warned], outDir: tempDir(), workers: 1 })).files[0];
  assert.deepEqual([one.status, one.notes.model_text_not_read, one.notes.longest_text_not_read], ['warnings', 1, undefined]);
});

test('eagle3prep.jsonc "reading": {"answers"} chooses all / first / best; an invalid choice names the setting', async () => {
  const dir = tempDir();
  const file = writeJsonl(
    [
      { instruction: 'Name a prime number.', output_1: 'Nine is a prime number.', output_2: 'Seven is a prime number.', preference: 2 },
      { question: 'Give a fruit.', responses: ['An apple is a fruit.', 'A banana is a fruit.'] },
    ],
    'answers.jsonl',
    dir,
  );
  const read = async (answers: string) => {
    writeFileSync(join(dir, 'eagle3prep.jsonc'), `{ "reading": { "answers": "${answers}" } }\n`);
    const r = await inspectFile(file);
    return r.records.map((x) => [x.id, x.messages[1].content, x.notes]);
  };
  assert.deepEqual(await read('all'), [
    ['answers.jsonl:1/1', 'Nine is a prime number.', ['answers_as_records']],
    ['answers.jsonl:1/2', 'Seven is a prime number.', ['answers_as_records']],
    ['answers.jsonl:2/1', 'An apple is a fruit.', ['answers_as_records']],
    ['answers.jsonl:2/2', 'A banana is a fruit.', ['answers_as_records']],
  ]);
  assert.deepEqual(await read('first'), [
    ['answers.jsonl:1', 'Nine is a prime number.', ['first_answer_used']],
    ['answers.jsonl:2', 'An apple is a fruit.', ['first_answer_used']],
  ]);
  // best: the preferred one; a row without a preference has no best, each answer is kept.
  assert.deepEqual(await read('best'), [
    ['answers.jsonl:1', 'Seven is a prime number.', ['preferred_answer_used']],
    ['answers.jsonl:2/1', 'An apple is a fruit.', ['answers_as_records']],
    ['answers.jsonl:2/2', 'A banana is a fruit.', ['answers_as_records']],
  ]);
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "reading": { "answers": "longest" } }\n');
  await assert.rejects(inspectFile(file), /"reading": "answers" must be "best" or "all" or "first", got "longest"/);
});

test('through the CLI: inspect --json trains the preferred output; prepare --strict fails on unread model text and names the code', async () => {
  const dir = tempDir();
  const pairs = writeJsonl(
    [{ instruction: 'Name a prime number.', output_1: 'Nine is a prime number.', output_2: 'Seven is a prime number.', preference: 2 }],
    'pairs.jsonl',
    dir,
  );
  const run = (args: string[]) => runCli(args, { cwd: ROOT });
  const i = await run(['inspect', pairs, '--json']);
  assert.equal(i.status, 0, i.stderr);
  const j = JSON.parse(i.stdout);
  assert.equal(j.format, 'prompt-answers');
  assert.deepEqual(j.records[0].messages, [
    { role: 'user', content: 'Name a prime number.' },
    { role: 'assistant', content: 'Seven is a prime number.' },
  ]);
  const judged = writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'Capital of Australia?' },
          { role: 'assistant', content: 'Canberra.' },
        ],
        critique:
          'The answer names the right capital but gives no reasoning at all; a better reply would explain that Canberra was chosen as a compromise between Sydney and Melbourne and has been the seat of government since 1927, which the user would find useful.',
      },
    ],
    'judged.jsonl',
    dir,
  );
  const p = await run(['prepare', judged, '--strict', '--out', join(dir, 'out')]);
  assert.equal(p.status, 1, p.stdout + p.stderr);
  assert.match(p.stdout + p.stderr, /longest_text_not_read/);
});

test('an empty response field beside an answer pair does not hide the pair', async () => {
  const file = writeJsonl([{ instruction: 'Say hi.', output: '', output_1: 'Hi there, friend.', output_2: 'Hello to you.', preference: 1 }], 'empty.jsonl');
  const r = await inspectFile(file);
  assert.deepEqual(r.records[0].messages, [
    { role: 'user', content: 'Say hi.' },
    { role: 'assistant', content: 'Hi there, friend.' },
  ]);
  assert.equal(r.records.length + r.skipped.length, r.rows_read);
});

test('a rendered ChatML prompt with a list of sampled responses: one record each, <|im_end|> removed from each', async () => {
  const file = writeJsonl(
    [
      {
        prompt: '<|im_start|>user\nName a colour of the sky.<|im_end|>\n<|im_start|>assistant\n',
        responses: ['<think>\nDaytime sky.\n</think>\n\nThe sky is blue.<|im_end|>', 'At sunset the sky can be orange.<|im_end|>'],
      },
    ],
    'rollouts.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(
    r.records.map((x) => [x.id, x.messages, x.notes]),
    [
      [
        'rollouts.jsonl:1/1',
        [
          { role: 'user', content: 'Name a colour of the sky.' },
          { role: 'assistant', content: 'The sky is blue.', reasoning_content: 'Daytime sky.' },
        ],
        ['transcript_split', 'chatml_end_removed', 'answers_as_records'],
      ],
      [
        'rollouts.jsonl:1/2',
        [
          { role: 'user', content: 'Name a colour of the sky.' },
          { role: 'assistant', content: 'At sunset the sky can be orange.' },
        ],
        ['transcript_split', 'chatml_end_removed', 'answers_as_records'],
      ],
    ],
  );
});

test('--answers best|all|first on inspect and prepare: wins over eagle3prep.jsonc "reading"; default best with a preference, all without', async () => {
  const dir = tempDir();
  const file = writeJsonl(
    [
      { instruction: 'Name a prime number.', output_1: 'Nine is a prime number.', output_2: 'Seven is a prime number.', preference: 2 },
      { question: 'Give a fruit.', responses: ['An apple is a fruit.', 'A banana is a fruit.'] },
    ],
    'answers.jsonl',
    dir,
  );
  const ids = async (answers?: 'best' | 'all' | 'first') => (await inspectFile(file, { answers })).records.map((x) => [x.id, x.messages[1].content]);
  // Default: the preferred answer of row 1, each answer of row 2.
  assert.deepEqual(await ids(), [
    ['answers.jsonl:1', 'Seven is a prime number.'],
    ['answers.jsonl:2/1', 'An apple is a fruit.'],
    ['answers.jsonl:2/2', 'A banana is a fruit.'],
  ]);
  assert.deepEqual(await ids('first'), [
    ['answers.jsonl:1', 'Nine is a prime number.'],
    ['answers.jsonl:2', 'An apple is a fruit.'],
  ]);
  // The flag wins over the file's choice.
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "reading": { "answers": "first" } }\n');
  assert.deepEqual(await ids('all'), [
    ['answers.jsonl:1/1', 'Nine is a prime number.'],
    ['answers.jsonl:1/2', 'Seven is a prime number.'],
    ['answers.jsonl:2/1', 'An apple is a fruit.'],
    ['answers.jsonl:2/2', 'A banana is a fruit.'],
  ]);
  const rep = await prepare({ inputs: [file], outDir: tempDir(), workers: 1, answers: 'all' });
  const f = rep.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [2, 2, 0, 0, 0]);
  assert.equal(f.notes.answers_as_records, 2);
  // Through the CLI: prepare --answers best over the file whose eagle3prep.jsonc says first.
  const ROOT = join(__dirname, '..', '..');
  const cli = (...args: string[]) => runCli(args, { cwd: ROOT });
  const ins = await cli('inspect', file, '--json', '--answers', 'best');
  assert.equal(ins.status, 0, ins.stderr);
  assert.deepEqual(
    JSON.parse(ins.stdout).records.map((x: { id: string }) => x.id),
    ['answers.jsonl:1', 'answers.jsonl:2/1', 'answers.jsonl:2/2'],
  );
  const p = await cli('prepare', file, '--out', tempDir(), '--json', '--answers', 'best');
  assert.equal(p.status, 0, p.stderr);
  const pf = JSON.parse(p.stdout).files[0];
  assert.deepEqual([pf.rows_read, pf.rows_written, pf.notes.preferred_answer_used, pf.notes.answers_as_records], [2, 2, 1, 1]);
  const bad = await cli('prepare', file, '--out', tempDir(), '--answers', 'longest');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--answers.*longest/);
});
