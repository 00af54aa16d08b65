/**
 * Issue 20 ("Real datasets, round three"), the prompt-set and string-list classes, on small synthetic rows
 * written from each layout's public description (not copied from a real file):
 * - multi-turn prompt sets — MT-bench `question.jsonl` (`question_id`, `category`, `turns: [q1, q2]`, FastChat
 *   llm_judge) and BFCL multi-turn (`question: [[{role: user, content}], …]`, one list per turn, no answers,
 *   Gorilla berkeley-function-call-leaderboard): one prompt of user turns whose answers the target model
 *   writes in order (`answer_after`);
 * - lists of strings read as a dialogue only with evidence (speaker markers, a questions list beside the
 *   answers); answers kept without their questions (MT-bench `model_answer` files: `choices[].turns`) are a
 *   loud failure naming the field;
 * - KTO (`messages` + `label`, LLaMA-Factory; TRL `prompt` + `completion` + `label`): an undesirable
 *   completion is never trained and its prompt is set aside to answer.
 * Every case checks the row accounting: written + set aside + dropped + errored = rows read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from '../../src/core/generate/run';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { startFakeServer } from '../support/fakeOpenAIServer';
import { runCli, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');

/** Rows read and their fates, as [written, set aside, dropped, errored], from a prepare run over one file (in process). */
async function fates(file: string, outDir = tempDir()): Promise<[number, number, number, number]> {
  const res = await prepare({ inputs: [file], outDir, allowEmpty: true });
  assert.equal(res.ok, true, res.failures.join('; '));
  const f = res.files[0];
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
  return [f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored];
}

const bfclRows = [
  {
    id: 'multi_turn_demo_0',
    question: [
      [{ role: 'user', content: 'Create a folder named reports in the current directory.' }],
      [{ role: 'user', content: 'Now move notes.txt into it.' }],
      [{ role: 'user', content: 'List what is inside reports.' }],
    ],
    involved_classes: ['FileSystem'],
  },
  { id: 'multi_turn_demo_1', question: [[{ role: 'user', content: 'Which directory am I in?' }]], involved_classes: ['FileSystem'] },
];

test('BFCL multi-turn prompts: the turn lists of a row are one prompt of user turns, answered after each turn (answer_after), not one record per turn', async () => {
  const file = writeJsonl(bfclRows, 'multi_turn.json');
  const r = await inspectFile(file);
  assert.equal(r.format, 'prompt-only');
  assert.equal(r.records.length, 2);
  assert.deepEqual(
    r.records.map((x) => [x.id, x.needs_generation, x.answer_after, x.messages.map((m) => m.role)]),
    [
      ['multi_turn_demo_0', true, [0, 1], ['user', 'user', 'user']],
      ['multi_turn_demo_1', true, undefined, ['user']],
    ],
  );
  assert.deepEqual(
    r.records[0].messages.map((m) => m.content),
    ['Create a folder named reports in the current directory.', 'Now move notes.txt into it.', 'List what is inside reports.'],
  );
  assert.deepEqual(r.records[0].notes, ['conversation_found', 'turn_lists_one_prompt', 'multi_turn_prompt', 'fields_not_read']);
  assert.deepEqual(r.records[0].unread_fields, ['involved_classes']);
  assert.ok(
    r.evidence.includes('1/2 rows: "question[]" holds 3 lists of user turns only: one multi-turn prompt whose turns the target model answers in order'),
  );
  // Every row set aside; the prompt file writes an empty assistant turn where the model answers.
  const out = tempDir();
  assert.deepEqual(await fates(file, out), [0, 2, 0, 0]);
  const lines = readFileSync(join(out, 'prompts_to_generate.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    lines[0].messages.map((m: { role: string; content: string }) => [m.role, m.content.slice(0, 12)]),
    [
      ['user', 'Create a fol'],
      ['assistant', ''],
      ['user', 'Now move not'],
      ['assistant', ''],
      ['user', 'List what is'],
    ],
  );
  // Read back, the prompt line is the same record.
  const back = await inspectFile(join(out, 'prompts_to_generate.jsonl'));
  assert.deepEqual(back.records[0].answer_after, [0, 1]);
  assert.deepEqual(back.records[0].messages, r.records[0].messages);
});

test('generate answers a BFCL multi-turn prompt turn by turn: each question is asked after the answer to the one before', async () => {
  const file = writeJsonl([bfclRows[0]], 'multi_turn.json');
  const srv = await startFakeServer();
  try {
    const res = await generate({ input: file, out: join(tempDir(), 'gen.jsonl'), servers: [srv.url], concurrency: 1, backoffBaseMs: 5, backoffCapMs: 50 });
    assert.equal(res.generated, 1);
    const rows = readFileSync(res.out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      rows[0].messages.map((m: { role: string }) => m.role),
      ['user', 'assistant', 'user', 'assistant', 'user', 'assistant'],
    );
    assert.deepEqual(
      srv.requests.map((b: { messages: unknown[] }) => b.messages.length),
      [1, 3, 5],
    );
    assert.equal(rows[0].messages[1].content, 'answer to: Create a folder named reports in the current directory.');
  } finally {
    await srv.close();
  }
});

test('strings with speaker markers are a dialogue (markers removed); a questions list beside an answers list pairs them', async () => {
  const file = writeJsonl(
    [
      { id: 's1', dialogue_log: ['User: How do I boil an egg?', 'Assistant: Simmer it for nine minutes.', 'User: And soft?', 'Assistant: Six minutes.'] },
      { id: 's2', qa: { questions: ['What is 3+4?', 'And times 2?'], answers: ['7.', '14.'] } },
    ],
    'strings.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(r.records[0].messages, [
    { role: 'user', content: 'How do I boil an egg?' },
    { role: 'assistant', content: 'Simmer it for nine minutes.' },
    { role: 'user', content: 'And soft?' },
    { role: 'assistant', content: 'Six minutes.' },
  ]);
  assert.deepEqual(r.records[0].notes, ['conversation_found', 'speaker_markers_split']);
  assert.deepEqual(r.records[1].messages, [
    { role: 'user', content: 'What is 3+4?' },
    { role: 'assistant', content: '7.' },
    { role: 'user', content: 'And times 2?' },
    { role: 'assistant', content: '14.' },
  ]);
  assert.deepEqual(r.records[1].notes, ['conversation_found', 'question_answer_lists']);
  assert.deepEqual(r.unread_fields, {});
  assert.deepEqual(await fates(file), [2, 0, 0, 0]);
});

test('a documented string-list layout is read as it says: LIMA "conversations" strings alternate user / assistant, user first', async () => {
  const file = writeJsonl(
    [
      {
        conversations: ['How do I reverse a list in Python?', 'Use xs[::-1] or xs.reverse().', 'Which is faster?', 'xs.reverse(), in place.'],
        source: 'stackexchange',
      },
      { conversations: ['Write a haiku about rain.'], source: 'wikihow' },
    ],
    'lima.jsonl',
  );
  const r = await inspectFile(file);
  assert.equal(r.format, 'lima');
  assert.deepEqual(
    r.records.map((x) => [x.needs_generation, x.messages, x.notes]),
    [
      [
        false,
        [
          { role: 'user', content: 'How do I reverse a list in Python?' },
          { role: 'assistant', content: 'Use xs[::-1] or xs.reverse().' },
          { role: 'user', content: 'Which is faster?' },
          { role: 'assistant', content: 'xs.reverse(), in place.' },
        ],
        ['alternating_strings'],
      ],
      [true, [{ role: 'user', content: 'Write a haiku about rain.' }], ['alternating_strings']],
    ],
  );
  assert.deepEqual(await fates(file), [1, 1, 0, 0]);
});

test('strings without evidence of who speaks are never read as a dialogue: answers kept without questions fail loudly, naming the field', async () => {
  // An MT-bench style model-answer file: the answers of a model to questions kept elsewhere.
  const answers = writeJsonl(
    [
      { question_id: 7, answer_id: 'a7', model_id: 'some-model', choices: [{ index: 0, turns: ['First answer.', 'Second answer.'] }], tstamp: 1.5 },
      { question_id: 8, answer_id: 'a8', model_id: 'some-model', choices: [{ index: 0, turns: ['Only answer.', 'Follow-up answer.'] }], tstamp: 2.5 },
    ],
    'model_answer.jsonl',
  );
  await assert.rejects(inspectFile(answers), (e: Error) => {
    assert.match(e.message, /no recognizable conversational record in 2 rows/);
    assert.ok(
      e.message.includes(
        '"choices[0].turns[]" strings (2 turns) (answers, by their path ("choices"), with no questions beside them: no prompt to pair them with)',
      ),
      e.message,
    );
    return true;
  });
  const cli = await runCli(['inspect', answers, '--json'], { cwd: ROOT });
  assert.notEqual(cli.status, 0);
  assert.match(cli.stderr, /choices\[0\]\.turns/);
  // Plain strings under a conversation-like name, without markers: not read either (who speaks is not known).
  const plain = writeJsonl([{ utterances: ['hello there', 'hi, how are you', 'fine'] }], 'plain.jsonl');
  await assert.rejects(inspectFile(plain), /"utterances\[\]" strings \(3 turns\) \(no speaker markers \("User: …"\) and no questions list beside them/);
  // Markers that name no user: answers alone, not read either.
  const marked = writeJsonl([{ replies: ['Assistant: First reply.', 'Assistant: Second reply.'] }], 'marked.jsonl');
  await assert.rejects(
    inspectFile(marked),
    /"replies\[\]" strings \(2 turns\) \(every string is marked as a speaker other than the user: no prompt to pair them with\)/,
  );
  // In a file whose other rows are read, such a row is errored/dropped with the reason, and the rows add up.
  const mixed = writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello.' },
        ],
      },
      { choices: [{ turns: ['An answer.', 'Another answer.'] }] },
    ],
    'mixed.jsonl',
  );
  const m = await inspectFile(mixed);
  assert.equal(m.records.length, 1);
  assert.deepEqual(
    m.skipped.map((s) => [s.line, s.reason]),
    [[2, 'unrecognized_shape']],
  );
  assert.match(m.skipped[0].message, /"choices\[0\]\.turns\[\]" strings \(2 turns\) \(answers, by their path/);
  assert.deepEqual(await fates(mixed), [1, 0, 1, 0]);
});

test('KTO (messages + label): an undesirable multi-turn row is never trained; its prompt (context turns kept) is set aside to answer', async () => {
  const file = writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'Name a planet.' },
          { role: 'assistant', content: 'Mars.' },
          { role: 'user', content: 'Another one?' },
          { role: 'assistant', content: 'The Moon.' },
        ],
        label: false,
      },
      {
        messages: [
          { role: 'user', content: 'Name a colour.' },
          { role: 'assistant', content: 'Green.' },
        ],
        label: true,
      },
      { prompt: 'Spell cat.', completion: 'K-A-T.', label: false },
      { prompt: [{ role: 'system', content: 'Be brief.' }], completion: 'Nothing asked.', label: false },
    ],
    'kto.jsonl',
  );
  const r = await inspectFile(file);
  assert.equal(r.format, 'kto');
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.needs_generation, x.messages, x.notes]),
    [
      [
        1,
        true,
        [
          { role: 'user', content: 'Name a planet.' },
          { role: 'assistant', content: 'Mars.', trainable: false },
          { role: 'user', content: 'Another one?' },
        ],
        ['context_turns_not_trained', 'kto_undesirable_set_aside'],
      ],
      [
        2,
        false,
        [
          { role: 'user', content: 'Name a colour.' },
          { role: 'assistant', content: 'Green.' },
        ],
        ['kto_desirable'],
      ],
      [3, true, [{ role: 'user', content: 'Spell cat.' }], ['kto_undesirable_set_aside']],
    ],
  );
  // No user turn before the undesirable completion: nothing to answer, dropped with the KTO reason.
  assert.deepEqual(
    r.skipped.map((s) => [s.line, s.reason]),
    [[4, 'kto_undesirable']],
  );
  assert.ok(!JSON.stringify(r.records).includes('Moon') && !JSON.stringify(r.records).includes('K-A-T'));
  assert.deepEqual(await fates(file), [1, 2, 1, 0]);
});

test('Alpaca / LLaMA-Factory rows with "history": [] are single-turn rows, not empty conversations; history pairs still come first', async () => {
  const file = writeJsonl(
    [
      { query: 'What is 2+2?', response: '4.', history: [] },
      { instruction: 'Say hi.', input: '', output: 'Hi!', history: [] },
      { query: 'And 3+3?', response: '6.', history: [['What is 2+2?', '4.']] },
      { messages: [], id: 'empty' },
    ],
    'alpaca_history.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(
    r.records.map((x) => x.messages),
    [
      [
        { role: 'user', content: 'What is 2+2?' },
        { role: 'assistant', content: '4.' },
      ],
      [
        { role: 'user', content: 'Say hi.' },
        { role: 'assistant', content: 'Hi!' },
      ],
      [
        { role: 'user', content: 'What is 2+2?' },
        { role: 'assistant', content: '4.' },
        { role: 'user', content: 'And 3+3?' },
        { role: 'assistant', content: '6.' },
      ],
    ],
  );
  // A row whose only conversation field is an empty list is still an empty conversation.
  assert.deepEqual(
    r.skipped.map((s) => [s.line, s.reason]),
    [[4, 'empty_conversation']],
  );
  assert.deepEqual(r.unread_fields, {});
  assert.deepEqual(await fates(file), [3, 0, 1, 0]);
});

test('exchanges keyed by role names ({"human", "assistant"}) are read as user / assistant turns; their other fields are reported', async () => {
  const file = writeJsonl(
    [
      {
        conversation_id: 'c1',
        conversation: [
          { human: 'Hi there', assistant: 'Hello! How can I help?' },
          { human: 'Tell me a joke', assistant: 'Why did the chicken cross the road?', critique: 'An old joke, told well.' },
        ],
      },
      { conversation_id: 'c2', conversation: [{ system: 'Be brief.', user: 'Name a sea.', bot: 'The Baltic.' }] },
      { conversation_id: 'c3', conversation: [{ human: 'Unanswered question?', assistant: '' }] },
    ],
    'pairs.jsonl',
  );
  const r = await inspectFile(file);
  assert.equal(r.format, 'input-output-pairs');
  assert.deepEqual(
    r.records.map((x) => [x.id, x.needs_generation, x.messages]),
    [
      [
        'c1',
        false,
        [
          { role: 'user', content: 'Hi there' },
          { role: 'assistant', content: 'Hello! How can I help?' },
          { role: 'user', content: 'Tell me a joke' },
          { role: 'assistant', content: 'Why did the chicken cross the road?' },
        ],
      ],
      [
        'c2',
        false,
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Name a sea.' },
          { role: 'assistant', content: 'The Baltic.' },
        ],
      ],
      ['c3', true, [{ role: 'user', content: 'Unanswered question?' }]],
    ],
  );
  assert.ok(r.evidence.includes('1/3 rows have "conversation": list of {user, bot} exchanges'), r.evidence.join(' | '));
  assert.deepEqual(r.unread_fields, { 'conversation[].critique': { count: 1, lines: [1] } });
  assert.deepEqual(await fates(file), [2, 1, 0, 0]);
});

test('a suggested mapping is shown only when it reads the row: exchanges keyed by role names are never suggested as speaker/text keys', async () => {
  // Role-keyed exchanges under a field no shape reads: the only mapping the row suggests would take "human" as the speaker.
  const file = writeJsonl(
    [
      {
        log: [
          { human: 'Hi there', assistant: 'Hello.' },
          { human: 'Tell me a joke', assistant: 'No.' },
        ],
      },
    ],
    'log.jsonl',
  );
  await assert.rejects(inspectFile(file), (e: Error) => {
    assert.match(e.message, /no recognizable conversational record in 1 rows/);
    assert.ok(!e.message.includes('suggested from the first row'), e.message);
    assert.ok(!e.message.includes('"role":"human"'), e.message);
    return true;
  });
  // A speaker key with real speakers still gets its suggestion (the unknown one to fill in).
  const good = writeJsonl(
    [
      {
        log: [
          { who: 'customer', said: 'My order is late.' },
          { who: 'agent', said: 'Sorry, checking now.' },
        ],
      },
    ],
    'good.jsonl',
  );
  await assert.rejects(
    inspectFile(good),
    /suggested from the first row \(fill in what is marked\): \{"mappings":\[\{"files":"good\.jsonl","turns":"log","role":"who","content":"said","roles":\{"customer":"user\|assistant\|tool\|system \(fill in\)"\}\}\]\}/,
  );
});

test('CLI: prepare --json over the classes of this file; every row written, set aside, dropped or errored, and they add up', async () => {
  const dir = tempDir();
  writeJsonl(bfclRows, 'multi_turn.json', dir);
  writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'Q?' },
          { role: 'assistant', content: 'Bad answer.' },
        ],
        label: false,
      },
      {
        messages: [
          { role: 'user', content: 'Q2?' },
          { role: 'assistant', content: 'Good answer.' },
        ],
        label: true,
      },
    ],
    'kto.jsonl',
    dir,
  );
  writeJsonl([{ query: 'Hi?', response: 'Hello.', history: [] }, { conversation: [{ human: 'Yo', assistant: 'Hey.' }] }], 'layouts.jsonl', dir);
  writeJsonl(
    [
      { dialogue_log: ['User: Ping?', 'Assistant: Pong.'] },
      {
        request: { contents: [{ role: 'user', parts: [{ text: 'Say yes.' }] }] },
        response: { candidates: [{ content: { role: 'model', parts: [{ text: 'Yes.' }] } }] },
      },
      { custom_id: 'r9', response: { body: { choices: [{ message: { role: 'assistant', content: 'Orphan answer.' } }] } } },
    ],
    'strings_batch.jsonl',
    dir,
  );
  const out = tempDir();
  const names = ['multi_turn.json', 'kto.jsonl', 'layouts.jsonl', 'strings_batch.jsonl'];
  const r = await runCli(['prepare', ...names.map((n) => join(dir, n)), '--out', out, '--json'], { cwd: ROOT });
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(r.stdout);
  const got = Object.fromEntries(
    rep.files.map((f: Record<string, number | string>) => {
      assert.equal(Number(f.rows_written) + Number(f.rows_set_aside) + Number(f.rows_dropped) + Number(f.rows_errored), f.rows_read);
      return [String(f.file).split('/').pop(), [f.rows_written, f.rows_set_aside, f.rows_dropped, f.rows_errored]];
    }),
  );
  assert.deepEqual(got, { 'multi_turn.json': [0, 2, 0, 0], 'kto.jsonl': [1, 1, 0, 0], 'layouts.jsonl': [2, 0, 0, 0], 'strings_batch.jsonl': [2, 0, 0, 1] });
  const prompts = readFileSync(join(out, 'prompts_to_generate.jsonl'), 'utf8').trim().split('\n');
  assert.equal(prompts.length, 3);
  assert.ok(!prompts.join('').includes('Bad answer.'));
});

test('batch results: a Gemini / Vertex AI line reads request then candidate (one record each); answers without their request are errored answers_without_prompt, naming the join', async () => {
  const vertex = writeJsonl(
    [
      {
        request: {
          contents: [{ role: 'user', parts: [{ text: 'Name a river.' }] }],
          systemInstruction: { parts: [{ text: 'Be brief.' }] },
        },
        response: { candidates: [{ content: { role: 'model', parts: [{ text: 'The Nile.' }] }, finishReason: 'STOP' }] },
        status: '',
      },
      {
        request: {
          contents: [{ role: 'user', parts: [{ text: 'Weather in Oslo?' }] }],
          tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] }],
        },
        response: {
          candidates: [
            { content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }] } },
            { content: { role: 'model', parts: [{ text: 'Let me look that up.' }] } },
          ],
        },
      },
      // Blocked: no candidate, the request is a prompt to answer.
      {
        request: { contents: [{ role: 'user', parts: [{ text: 'Something blocked.' }] }] },
        response: { candidates: [], promptFeedback: { blockReason: 'SAFETY' } },
      },
    ],
    'predictions.jsonl',
  );
  const r = await inspectFile(vertex);
  assert.equal(r.format, 'gemini-batch');
  assert.deepEqual(
    r.records.map((x) => [x.id, x.needs_generation, x.messages]),
    [
      [
        'predictions.jsonl:1',
        false,
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Name a river.' },
          { role: 'assistant', content: 'The Nile.' },
        ],
      ],
      [
        'predictions.jsonl:2/1',
        false,
        [
          { role: 'user', content: 'Weather in Oslo?' },
          { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
        ],
      ],
      [
        'predictions.jsonl:2/2',
        false,
        [
          { role: 'user', content: 'Weather in Oslo?' },
          { role: 'assistant', content: 'Let me look that up.' },
        ],
      ],
      ['predictions.jsonl:3', true, [{ role: 'user', content: 'Something blocked.' }]],
    ],
  );
  assert.deepEqual(r.records[1].tools, [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ]);
  assert.ok(r.records[1].notes?.includes('batch_candidates_split'));
  assert.deepEqual(await fates(vertex), [2, 1, 0, 0]);

  // OpenAI Batch API output lines: the answers only. Never read as prompts or answers to nothing.
  const out = {
    custom_id: 'req-1',
    response: { status_code: 200, body: { choices: [{ index: 0, message: { role: 'assistant', content: 'The Nile.' } }] } },
    error: null,
  };
  const answersOnly = writeJsonl(
    [out, { key: 'k1', response: { candidates: [{ content: { role: 'model', parts: [{ text: 'Hi.' }] } }] } }],
    'batch_output.jsonl',
  );
  const a = await inspectFile(answersOnly);
  assert.equal(a.records.length, 0);
  assert.deepEqual(
    a.skipped.map((s) => [s.line, s.reason, s.code, s.message]),
    [
      [
        1,
        'errored',
        'answers_without_prompt',
        'batch output without its request: the answer at "response.body.choices[].message" has no prompt in this row; join each line with the batch input line of the same "custom_id" into one row {"custom_id", "body": <the input line\'s body>, "response": <this line\'s response>} (read as a chat-completions log)',
      ],
      [
        2,
        'errored',
        'answers_without_prompt',
        'batch output without its request: the answer at "response.candidates[].content" has no prompt in this row; give lines that hold the request beside its response ({"request": {…}, "response": {…}})',
      ],
    ],
  );
  const res = await prepare({ inputs: [answersOnly], outDir: tempDir() });
  assert.equal(res.ok, false);
  assert.deepEqual([res.files[0].rowsRead, res.files[0].rowsErrored], [2, 2]);
  // Joined as the message says, the line is read: the input line's messages, then the output's answer.
  const joined = writeJsonl(
    [{ custom_id: 'req-1', body: { model: 'm', messages: [{ role: 'user', content: 'Name a river.' }] }, response: out.response }],
    'joined.jsonl',
  );
  const j = await inspectFile(joined);
  assert.deepEqual(j.records[0].messages, [
    { role: 'user', content: 'Name a river.' },
    { role: 'assistant', content: 'The Nile.' },
  ]);
  assert.deepEqual(await fates(joined), [1, 0, 0, 0]);
  // A logged request with several choices (n = 2): each answer its own record, never only the first.
  const n2 = writeJsonl(
    [
      {
        id: 'log-1',
        request: { messages: [{ role: 'user', content: 'Name a colour.' }] },
        response: {
          choices: [
            { index: 0, message: { role: 'assistant', content: 'Red.' } },
            { index: 1, message: { role: 'assistant', content: 'Blue.' } },
          ],
        },
      },
    ],
    'log.jsonl',
  );
  const c = await inspectFile(n2);
  assert.deepEqual(
    c.records.map((x) => [x.id, x.messages.map((m) => m.content)]),
    [
      ['log-1/1', ['Name a colour.', 'Red.']],
      ['log-1/2', ['Name a colour.', 'Blue.']],
    ],
  );
  assert.deepEqual(c.records[0].notes, ['batch_candidates_split']);
  assert.deepEqual(await fates(n2), [1, 0, 0, 0]);
});
