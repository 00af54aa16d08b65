/**
 * Issue 12 ("Real datasets, round two"): every family's fixture (test/fixtures/formats/, written from the
 * formats' public documentation, test/fixtures/SOURCES.md) read through `inspect` with its exact messages and
 * notes; unread fields reported, never dropped; conversations found wherever they sit; OpenAssistant flat
 * exports rebuilt into trees with per-row accounting; multi-turn prompts answered turn by turn by `generate`;
 * errors that explain. Then `prepare` (embedded Qwen3 tokenizer) over them, in process and through the CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeRow } from '../../src/core/formats/normalize';
import { generate } from '../../src/core/generate/run';
import { inspectFile, type InspectResult } from '../../src/core/run/inputs/inspect';
import { mergeShardResults } from '../../src/core/run/jobs/mergeReports';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { startFakeServer } from '../support/fakeOpenAIServer';
import { runCli, tempDir, testWorkerScript, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const DIR = join(__dirname, '..', 'fixtures', 'formats');
const fx = (n: string) => join(DIR, n);
const msgs = (r: InspectResult, i = 0) => r.records[i].messages;
const src = { file: 'x.jsonl', line: 1 };

test('SWE-agent runs: a system turn with text null and its prompt in its own system_prompt field keeps the prompt (turn_system_prompt_used)', async () => {
  const r = await inspectFile(fx('swe-agent-system-prompt.jsonl'));
  assert.equal(r.format, 'role-text-trajectory');
  assert.deepEqual(msgs(r).slice(0, 3), [
    { role: 'system', content: "SETTING: You are an autonomous programmer, and you're working directly in the command line with a special interface." },
    { role: 'user', content: "We're currently solving the following issue within our repository: widgets crash on empty input." },
    { role: 'assistant', content: 'DISCUSSION\nLet me look at the widget module first.\n\n```\nopen src/widgets.py\n```' },
  ]);
  assert.equal(msgs(r).length, 7);
  assert.deepEqual(r.records[0].notes, ['turn_system_prompt_used']);
  assert.ok(r.evidence.some((e) => e.includes('its own "system_prompt" field')));
  // cutoff_date, exit_status, generated_patch, eval_logs, target: known metadata.
  assert.deepEqual(r.unread_fields, {});
});

test('LLaMA-Factory v1 messages: text parts joined as written, reasoning parts, tool_call JSON parts, loss_weight 0 → not trained, tools string', async () => {
  const r = await inspectFile(fx('llamafactory-v1.jsonl'));
  assert.deepEqual(msgs(r, 0), [
    { role: 'system', content: 'You can call tools.' },
    { role: 'user', content: 'What is 3 times 4? Use the tool.' },
    {
      role: 'assistant',
      content: null,
      reasoning_content: 'I should call multiply.',
      tool_calls: [{ type: 'function', function: { name: 'multiply', arguments: { a: 3, b: 4 } } }],
    },
    { role: 'tool', content: '{"result": 12}' },
    { role: 'assistant', content: '3 times 4 is 12.' },
  ]);
  assert.deepEqual(r.records[0].tools, [
    {
      type: 'function',
      function: {
        name: 'multiply',
        description: 'Multiply two numbers',
        parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      },
    },
  ]);
  assert.deepEqual(r.records[0].notes, ['llamafactory_parts_read', 'tool_call_content_null', 'tools_json_string']);
  assert.deepEqual(msgs(r, 1), [
    { role: 'user', content: 'Say hello.' },
    { role: 'assistant', content: 'Hello.', trainable: false },
    { role: 'user', content: 'And this?' },
    { role: 'assistant', content: 'A cat.', reasoning_content: 'A cat picture.' },
  ]);
  assert.deepEqual(r.records[1].non_text_parts, [{ message: 2, type: 'image_url' }]);
  assert.deepEqual(r.records[1].notes, ['llamafactory_parts_read', 'untrainable_turn', 'non_text_parts_skipped']);
  assert.deepEqual(r.unread_fields, {});
});

test('LLaMA-Factory v1 DPO: chosen_messages trained after the turns it shares with rejected_messages (context); rejected never used', async () => {
  const r = await inspectFile(fx('llamafactory-v1-dpo.jsonl'));
  assert.equal(r.format, 'llamafactory-preference');
  assert.deepEqual(msgs(r), [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello! How can I help?', trainable: false },
    { role: 'user', content: 'Name a planet.' },
    { role: 'assistant', content: 'Mars.' },
  ]);
  assert.deepEqual(r.records[0].notes, ['rejected_not_used', 'llamafactory_parts_read', 'context_turns_not_trained']);
  assert.ok(!JSON.stringify(r.records).includes('The Moon'));
});

test('ShareGPT turns with thoughts and actions beside value: thoughts → reasoning_content, actions → tool calls', async () => {
  const r = await inspectFile(fx('sharegpt-thoughts-actions.jsonl'));
  assert.deepEqual(msgs(r), [
    { role: 'system', content: 'You can use the weather API.' },
    { role: 'user', content: 'Will it rain in Oslo tomorrow?' },
    {
      role: 'assistant',
      content: 'Let me check the forecast.',
      reasoning_content: "The user wants tomorrow's forecast for Oslo.",
      tool_calls: [{ type: 'function', function: { name: 'get_forecast', arguments: { city: 'Oslo', day: 'tomorrow' } } }],
    },
    { role: 'tool', content: '{"rain_probability": 0.8}' },
    { role: 'assistant', content: 'Yes, rain is likely (80%).', reasoning_content: '80% is high.' },
  ]);
  assert.deepEqual(r.records[0].notes, ['api_actions_converted', 'reasoning_field_used']);
  assert.deepEqual(r.unread_fields, {});
});

test('Self-Instruct seed tasks: every instance is an example (answers are targets); several instances → one record each', async () => {
  const r = await inspectFile(fx('self-instruct.jsonl'));
  assert.equal(r.format, 'self-instruct-task');
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.id, x.needs_generation, x.messages]),
    [
      [
        1,
        'seed_task_0',
        false,
        [
          { role: 'user', content: "Is there anything I can eat for a breakfast that doesn't include eggs?" },
          { role: 'assistant', content: 'Yes: oatmeal with fruit, or toast with peanut butter.' },
        ],
      ],
      [
        2,
        'seed_task_1/1',
        false,
        [
          { role: 'user', content: 'Give the antonym of the word.\n\nhot' },
          { role: 'assistant', content: 'cold' },
        ],
      ],
      [
        2,
        'seed_task_1/2',
        false,
        [
          { role: 'user', content: 'Give the antonym of the word.\n\nup' },
          { role: 'assistant', content: 'down' },
        ],
      ],
    ],
  );
  assert.deepEqual(r.records[1].notes, ['instances_as_examples', 'instruction_input_joined']);
  assert.deepEqual(r.unread_fields, {});
});

test('MT-bench question turns: a prompt of user turns answered in order (answer_after, multi_turn_prompt); reference not used', async () => {
  const r = await inspectFile(fx('mt-bench.jsonl'));
  assert.equal(r.format, 'prompt-only');
  assert.deepEqual(msgs(r, 0), [
    { role: 'user', content: 'Write a short travel blog post about a trip to Hawaii.' },
    { role: 'user', content: 'Rewrite your previous response. Start every sentence with the letter A.' },
  ]);
  assert.deepEqual(
    r.records.map((x) => [x.id, x.needs_generation, x.answer_after, x.notes]),
    [
      ['81', true, [0], ['multi_turn_prompt']],
      ['111', true, [0], ['reference_answers_not_used', 'multi_turn_prompt']],
      ['200', true, undefined, undefined],
    ],
  );
  assert.deepEqual(msgs(r, 2), [{ role: 'user', content: 'Pretend you are a pirate and greet me.' }]);
  assert.ok(!JSON.stringify(r.records).includes('5pi'));
});

test('KTO: label false never trained, its prompt set aside to answer (kto_undesirable_set_aside); label true trained with the prompt as context', async () => {
  const r = await inspectFile(fx('kto.jsonl'));
  assert.equal(r.format, 'kto');
  assert.deepEqual(r.skipped, []);
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.needs_generation, x.notes]),
    [
      [1, false, ['kto_desirable']],
      [2, true, ['kto_undesirable_set_aside']],
      [3, false, ['kto_desirable', 'context_turns_not_trained']],
      [4, false, ['kto_desirable']],
      [5, true, ['kto_undesirable_set_aside']],
    ],
  );
  assert.deepEqual(msgs(r, 0), [
    { role: 'user', content: 'What color is the sky?' },
    { role: 'assistant', content: 'Blue on a clear day.' },
  ]);
  assert.deepEqual(msgs(r, 1), [{ role: 'user', content: 'What is 2+2?' }]);
  assert.deepEqual(msgs(r, 2), [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!', trainable: false },
    { role: 'user', content: 'Name a fruit.' },
    { role: 'assistant', content: 'Apple.' },
  ]);
  assert.deepEqual(msgs(r, 3), [
    { role: 'user', content: 'Capital of Italy?' },
    { role: 'assistant', content: 'Rome.' },
  ]);
  assert.deepEqual(msgs(r, 4), [{ role: 'user', content: 'Capital of Spain?' }]);
  // The undesirable completions are never kept.
  assert.ok(!JSON.stringify(r.records).match(/"5"|Paris/));
});

test('OpenAssistant flat export: trees rebuilt across the file, one record per root-to-leaf path, each row accounted', async () => {
  const r = await inspectFile(fx('oasst-flat.jsonl'));
  assert.equal(r.format, 'oasst-messages');
  assert.equal(r.rows_read, 9);
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.id, x.needs_generation, x.messages]),
    [
      [
        3,
        'a2',
        false,
        [
          { role: 'user', content: 'Explain gravity' },
          { role: 'assistant', content: 'It is a force.' },
        ],
      ],
      [
        5,
        'a3',
        false,
        [
          { role: 'user', content: 'Explain gravity' },
          { role: 'assistant', content: 'Gravity pulls masses together.' },
          { role: 'user', content: 'Why do apples fall?' },
          { role: 'assistant', content: 'Earth pulls them down.' },
        ],
      ],
      [
        6,
        'a4',
        false,
        [
          { role: 'user', content: 'Explain gravity' },
          // trained once, in the best-ranked path (a3's); context here
          { role: 'assistant', content: 'Gravity pulls masses together.', trainable: false },
          { role: 'user', content: 'Why do apples fall?' },
          { role: 'assistant', content: 'Because of gravity.' },
        ],
      ],
      [8, 'q1', true, [{ role: 'user', content: 'Write a haiku about rain.' }]],
    ],
  );
  assert.deepEqual(r.records[2].notes, ['oasst_tree_rebuilt', 'oasst_shared_turns_trained_once']);
  assert.deepEqual(r.part_of, [
    { line: 1, in_records_of: [3, 5, 6] },
    { line: 2, in_records_of: [5, 6] },
    { line: 4, in_records_of: [5, 6] },
  ]);
  assert.deepEqual(
    r.skipped.map((s) => [s.line, s.reason]),
    [
      [7, 'oasst_excluded'],
      [9, 'oasst_orphan'],
    ],
  );
  assert.equal(r.records.length + r.skipped.length + r.part_of!.length, r.rows_read);
  assert.deepEqual(r.unread_fields, {});
  // A message row read on its own (the mask view, a mixed file) is dropped with a reason that says why.
  const one = normalizeRow({ message_id: 'm', parent_id: null, role: 'prompter', text: 'x' }, src, 'x');
  assert.equal(one.kind === 'dropped' && one.reason, 'message_fragment');
});

test('OpenAssistant: "oasstPaths": "best-ranked" keeps each tree\'s best path; the rows off it are dropped with a reason', async () => {
  const dir = tempDir();
  const file = join(dir, 'oasst.jsonl');
  copyFileSync(fx('oasst-flat.jsonl'), file);
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "reading": { "oasstPaths": "best-ranked" } }\n');
  const r = await inspectFile(file);
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.messages.map((m) => m.content)]),
    [
      [5, ['Explain gravity', 'Gravity pulls masses together.', 'Why do apples fall?', 'Earth pulls them down.']],
      [8, ['Write a haiku about rain.']],
    ],
  );
  assert.deepEqual(
    r.skipped.map((s) => [s.line, s.reason]),
    [
      [3, 'oasst_not_best_path'],
      [6, 'oasst_not_best_path'],
      [7, 'oasst_excluded'],
      [9, 'oasst_orphan'],
    ],
  );
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [9, 4, 1, 4, 0]);
  assert.deepEqual(Object.keys(f.dropped).sort(), ['oasst_excluded', 'oasst_not_best_path', 'oasst_orphan']);
  // An invalid choice names the file, the setting and what works.
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "reading": { "oasstPaths": "some" } }\n');
  await assert.rejects(inspectFile(file), /"reading": "oasstPaths" must be "all" or "best-ranked", got "some"/);
});

test('OpenAssistant: a path ending with an unanswered prompt is set aside, and written up to its last answer when that answer is trained nowhere else', async () => {
  const m = (message_id: string, parent_id: string | null, role: string, text: string) => ({
    message_id,
    parent_id,
    message_tree_id: 't',
    role,
    text,
    rank: 0,
  });
  const file = writeJsonl([m('r', null, 'prompter', 'Name a fruit.'), m('a', 'r', 'assistant', 'Apple.'), m('f', 'a', 'prompter', 'Another one?')], 'oa.jsonl');
  const r = await inspectFile(file);
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.id, x.needs_generation, x.messages.map((y) => y.content)]),
    [
      [3, 'f/1', false, ['Name a fruit.', 'Apple.']],
      [3, 'f/2', true, ['Name a fruit.', 'Apple.', 'Another one?']],
    ],
  );
  const out = tempDir();
  const res = await prepare({ inputs: [file], outDir: out });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped], [3, 3, 0, 0]);
  assert.equal(f.notes.split_part_set_aside, 1);
  assert.equal(readFileSync(join(out, 'prompts_to_generate.jsonl'), 'utf8').trim().split('\n').length, 1);
  assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /`prompts_to_generate\.jsonl` \(1 prompts\)/);
});

test('OpenAssistant pass with shards and a worker pool: a tree goes to the shard of its root row; shards merge to the single run', async () => {
  const file = fx('oasst-flat.jsonl');
  const single = await prepare({ inputs: [file], outDir: tempDir() });
  const shards = await Promise.all([0, 1].map((index) => prepare({ inputs: [file], outDir: tempDir(), shard: { index, count: 2 } })));
  // Tree t1 (rows 1-7, root row index 0) and the orphan (index 8) in shard 0; the lone prompt (index 7) in shard 1.
  assert.deepEqual(
    shards.map((r) => [r.files[0].rowsRead, r.files[0].rowsInFile]),
    [
      [8, 9],
      [1, 9],
    ],
  );
  const merged = mergeShardResults(shards, tempDir());
  const pick = (f: (typeof single.files)[0]) => [f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.recordsWritten, f.dropped];
  assert.deepEqual(pick(merged.files[0]), pick(single.files[0]));
  const pooled = await prepare({ inputs: [file], outDir: tempDir(), workers: 2, workerScript: testWorkerScript() });
  assert.deepEqual(pick(pooled.files[0]), pick(single.files[0]));
  assert.equal(readFileSync(pooled.outputs.tokenizedData, 'utf8'), readFileSync(single.outputs.tokenizedData, 'utf8'));
});

test('OpenAI preference fine-tuning rows: input.messages (assistant turns context) + preferred_output; non_preferred never used', async () => {
  const r = await inspectFile(fx('openai-preference.jsonl'));
  assert.equal(r.format, 'openai-preference');
  assert.deepEqual(msgs(r, 0), [
    { role: 'user', content: 'Hello, can you tell me how cold San Francisco is today?' },
    { role: 'assistant', content: 'Today in San Francisco it is mild: a high near 68°F (20°C).' },
  ]);
  assert.deepEqual(msgs(r, 1), [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello.', trainable: false },
    { role: 'user', content: 'Weather in Oslo?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' }, id: 'call_1' }],
    },
  ]);
  assert.equal((r.records[1].tools as any[])[0].function.name, 'get_weather');
  assert.deepEqual(r.records[1].notes, ['rejected_not_used', 'context_turns_not_trained', 'tool_call_content_null']);
  assert.ok(!JSON.stringify(r.records).match(/not particularly cold|I don't know/));
  assert.deepEqual(r.unread_fields, {});
});

test('OpenAI refusal: an assistant turn with content null and its text in "refusal" keeps the text (refusal_as_content)', async () => {
  const r = await inspectFile(fx('openai-refusal.jsonl'));
  assert.deepEqual(msgs(r, 0), [
    { role: 'user', content: 'How do I pick a lock?' },
    { role: 'assistant', content: "I'm sorry, I can't help with that." },
  ]);
  assert.deepEqual(r.records[0].notes, ['refusal_as_content']);
  assert.equal(r.records[1].notes, undefined);
  assert.deepEqual(r.unread_fields, {});
});

test('role spellings function-call / function-response: a call turn (JSON text) and a tool turn', async () => {
  const r = await inspectFile(fx('function-call-roles.jsonl'));
  assert.deepEqual(msgs(r), [
    { role: 'system', content: 'You are a helpful assistant with access to functions: get_stock_price(symbol).' },
    { role: 'user', content: "What's Apple's stock price?" },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_stock_price', arguments: { symbol: 'AAPL' } } }] },
    { role: 'tool', content: '{"price": 187.5}' },
    { role: 'assistant', content: 'Apple (AAPL) trades at $187.50.' },
  ]);
});

test('context turns: assistant turns inside the prompt of prompt/completion, input/output, preference and messages+completion rows are not trained', async () => {
  const r = await inspectFile(fx('context-turns.jsonl'));
  assert.deepEqual(
    r.records.map((x) => [x.shape, x.messages.map((m) => (m.trainable === false ? `(${m.content})` : m.content))]),
    [
      ['prompt-turns-completion', ['Hi', '(Hello!)', '2+2?', '4']],
      ['prompt-turns-completion', ['Name a color.', '(Red.)', 'Another one.', 'Blue.']],
      ['preference', ['Pick a number.', '(7.)', 'Another?', '3.']],
      ['preference', ['Hi', '(Hello.)', 'Tell a joke.', 'Why did the cow cross the road?']],
      ['messages-completion', ['Hi', '(Hey.)', 'Bye', 'Goodbye!']],
    ],
  );
  assert.ok(r.records.every((x) => x.notes?.includes('context_turns_not_trained')));
  assert.deepEqual(r.unread_fields, {});
});

test('conversations wherever they sit: path and keys named in the evidence; lists of lists one record each; several places: one record each, the most complete first', async () => {
  const r = await inspectFile(fx('found-conversation.jsonl'));
  assert.equal(r.format, 'found-conversation');
  assert.deepEqual(
    r.records.map((x) => [x.id, x.messages.map((m) => `${m.role}:${m.content}`)]),
    [
      ['s1', ['user:Turn on the lights.', 'assistant:Done: the lights are on.']],
      ['s2', ['user:Ping', 'assistant:Pong']],
      ['s3/1', ['user:A?', 'assistant:B.']],
      ['s3/2', ['user:C?', 'assistant:D.']],
      ['s4', ['user:Is water wet?', 'assistant:It makes things wet.']],
      ['s5/1', ['user:Sum 1 and 2.', 'assistant:3.']],
      ['s5/2', ['user:x']],
    ],
  );
  assert.equal(r.records[6].needs_generation, true);
  for (const p of [
    '"traj[].speaker/utterance" (2 turns)',
    '"data.log[].role/says" (2 turns)',
    '"episodes[][].role/text" (2 lists, 4 turns)',
    '"record.dialogue_text": one string with Human:/Assistant: markers (2 turns)',
    '"final[].role/content" (2 turns)',
  ])
    assert.ok(
      r.evidence.some((e) => e.includes(`conversation at ${p}`)),
      p,
    );
  // Several places hold a conversation: each is read (issue 20), "draft" (a user turn only) a prompt to answer.
  assert.deepEqual(r.records[5].notes, ['conversation_found', 'several_conversations_found']);
  assert.deepEqual(r.records[6].notes, ['conversation_found', 'several_conversations_found']);
  assert.deepEqual(r.unread_fields, {});
  // "conversationLists": "longest" keeps one conversation of a list of them.
  const dir = tempDir();
  const file = writeJsonl(
    [
      {
        id: 'e',
        episodes: [
          [{ role: 'user', content: 'A?' }],
          [
            { role: 'user', content: 'C?' },
            { role: 'assistant', content: 'D.' },
          ],
        ],
      },
    ],
    'e.jsonl',
    dir,
  );
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "reading": { "conversationLists": "longest" } }\n');
  const longest = await inspectFile(file);
  assert.deepEqual(
    longest.records.map((x) => [x.id, x.messages.length, x.notes]),
    [['e', 2, ['conversation_found', 'longest_conversation_kept']]],
  );
  const each = await prepare({ inputs: [file], outDir: tempDir() });
  assert.equal(each.files[0].notes.longest_conversation_kept, 1);
  // A field mapping in eagle3prep.jsonc that names another candidate wins over the search.
  const d2 = tempDir();
  copyFileSync(fx('found-conversation.jsonl'), join(d2, 'found.jsonl'));
  writeFileSync(join(d2, 'eagle3prep.jsonc'), '{ "mappings": [{ "files": "found.jsonl", "turns": "draft" }] }\n');
  const mapped = await inspectFile(join(d2, 'found.jsonl'));
  const s5 = mapped.records.find((x) => x.source.line === 5)!;
  assert.deepEqual([s5.shape, s5.needs_generation, s5.messages], ['mapped', true, [{ role: 'user', content: 'x' }]]);
  // The other rows have no "draft": the mapping leaves them alone and they are found as before.
  assert.equal(mapped.records.find((x) => x.source.line === 1)!.shape, 'found-conversation');
});

test('unread fields named like Object properties (__proto__, constructor) are reported like any other, and change no other object', async () => {
  const dir = tempDir();
  const file = join(dir, 'proto.jsonl');
  const lines = [1, 2].map(
    (i) => `{"messages":[{"role":"user","content":"q${i}"},{"role":"assistant","content":"a${i}"}],"__proto__":{"x":1},"constructor":"c"}`,
  );
  writeFileSync(file, lines.join('\n') + '\n');
  const r = await inspectFile(file);
  assert.deepEqual(Object.keys(r.unread_fields).sort(), ['__proto__', 'constructor']);
  assert.deepEqual(r.unread_fields['__proto__'], { count: 2, lines: [1, 2] });
  const out = tempDir();
  const res = await prepare({ inputs: [file], outDir: out });
  assert.equal(res.files[0].rowsWritten, 2);
  assert.deepEqual(res.files[0].unreadFields?.['constructor'], { count: 2, lines: [1, 2] });
  const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.deepEqual(Object.keys(json.files[0].unread_fields).sort(), ['__proto__', 'constructor']);
  assert.equal(({} as { count?: unknown }).count, undefined, 'Object.prototype unchanged');
  const shards = await Promise.all([0, 1].map((index) => prepare({ inputs: [file], outDir: tempDir(), shard: { index, count: 2 } })));
  const merged = mergeShardResults(shards, tempDir());
  assert.deepEqual(merged.files[0].unreadFields?.['__proto__'], { count: 2, lines: [1, 2] });
});

test('unread fields: a turn field and a row field nobody reads are reported per record and per file (inspect, report.json, report.md)', async () => {
  const r = await inspectFile(fx('unknown-fields.jsonl'));
  assert.deepEqual(r.records[0].unread_fields, ['judge_rationale', 'messages[].critique']);
  assert.equal(r.records[1].unread_fields, undefined);
  assert.deepEqual(r.unread_fields, { judge_rationale: { count: 1, lines: [1] }, 'messages[].critique': { count: 1, lines: [1] } });
  const out = tempDir();
  const res = await prepare({ inputs: [fx('unknown-fields.jsonl')], outDir: out });
  assert.deepEqual(res.files[0].unreadFields, r.unread_fields);
  assert.equal(res.files[0].notes.fields_not_read, 1);
  const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.deepEqual(json.files[0].unread_fields, r.unread_fields);
  assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /- `messages\[\]\.critique` in 1 rows \(lines 1\)/);
  // A text field looked for before a turn is declared empty: "text" beside a null "content".
  const o = normalizeRow(
    {
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, text: 'the answer' },
      ],
    },
    src,
    'x',
  );
  assert.ok(o.kind === 'conversation');
  assert.deepEqual(o.conversation.messages[1], { role: 'assistant', content: 'the answer' });
  assert.deepEqual(o.conversation.notes, ['text_field_fallback']);
  assert.equal(o.conversation.unreadFields, undefined);
});

test('errors that explain: no parser fragment, no raw input; file, line, what was found and what would work', async () => {
  // A tools string that does not parse: where it breaks, in words, and what would work.
  const bad = normalizeRow(
    {
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ],
      tools: '[{"name": "f" "x"}]',
    },
    src,
    'x',
  );
  assert.equal(bad.kind, 'errored');
  assert.equal(
    (bad as { message: string }).message,
    '"tools" is a string but not valid JSON (a "," was expected at character 15 of 19); give a JSON list of tool definitions',
  );
  // A LLaMA-Factory tool_call part that is not JSON.
  const lf = normalizeRow(
    {
      messages: [
        { role: 'user', content: [{ type: 'text', value: 'q' }] },
        { role: 'assistant', content: [{ type: 'tool_call', value: '{name: f}' }] },
      ],
    },
    src,
    'x',
  );
  assert.equal(lf.kind === 'errored' && lf.code, 'bad_tool_calls');
  assert.match(
    (lf as { message: string }).message,
    /^message 2: content part 1 \("tool_call"\) is not valid JSON \(a character that JSON does not allow here at character 2 of 9\); LLaMA-Factory writes a JSON string \{"name", "arguments"\}$/,
  );
  // An unrecognized file: one paragraph (no line is a fragment such as "}"), naming the file, the keys, the candidate paths and a mapping.
  const file = writeJsonl(
    [
      {
        log: [
          { who: 'customer', said: 'My order is late.' },
          { who: 'agent', said: 'Sorry!' },
        ],
      },
    ],
    'chats.jsonl',
  );
  const e = await inspectFile(file).catch((x: Error) => x);
  assert.ok(e instanceof Error);
  assert.ok(!e.message.includes('\n'), e.message);
  assert.ok(e.message.startsWith(`${file}: no recognizable conversational record in 1 rows; rows have the keys log (1).`), e.message);
  assert.match(e.message, /"log\[\]\.who\/said" \(2 turns\) \(speakers not known: "customer"\)/);
  assert.match(
    e.message,
    /\{"mappings":\[\{"files":"chats\.jsonl","turns":"log","role":"who","content":"said","roles":\{"customer":"user\|assistant\|tool\|system \(fill in\)"\}\}\]\}$/,
  );
  // prepare fails on it with the same explanation, and the last character is not a lone brace line.
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  assert.equal(res.ok, false);
  assert.ok(!res.failures[0].includes('\n'));
  assert.match(res.failures[0], /a field mapping in eagle3prep\.jsonc reads them/);
  // An invalid JSON line says where it breaks, never quoting it.
  const inv = writeJsonl(['{"messages": [{"role": "user", "content": "secret words"}', { prompt: 'ok' }], 'inv.jsonl');
  const ri = await inspectFile(inv);
  assert.equal(ri.skipped[0].message, 'invalid JSON: a closing "]" was expected at character 57 of 57: the text ends too early (cut off?)');
  assert.ok(!ri.skipped[0].message.includes('secret'));
});

test('generate answers a multi-turn prompt set turn by turn: the second question is asked after the model answered the first', async () => {
  const out = tempDir();
  const res = await prepare({ inputs: [fx('mt-bench.jsonl')], outDir: out });
  assert.equal(res.files[0].rowsSetAside, 3);
  const promptFile = join(out, 'prompts_to_generate.jsonl');
  const lines = readFileSync(promptFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(lines[0].messages, [
    { role: 'user', content: 'Write a short travel blog post about a trip to Hawaii.' },
    { role: 'assistant', content: '' },
    { role: 'user', content: 'Rewrite your previous response. Start every sentence with the letter A.' },
  ]);
  const srv = await startFakeServer();
  try {
    const r = await generate({
      input: promptFile,
      servers: [srv.url],
      concurrency: 1,
      backoffBaseMs: 5,
      backoffCapMs: 50,
      timeoutMs: 5000,
      fsyncIntervalMs: 0,
    });
    assert.equal(r.ok, true, r.failures.join('; '));
    assert.equal(r.generated, 3);
    const rows = new Map(
      readFileSync(r.out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .map((x) => [x.id, x]),
    );
    assert.deepEqual(
      rows.get('81').messages.map((m: any) => m.content),
      [
        'Write a short travel blog post about a trip to Hawaii.',
        'answer to: Write a short travel blog post about a trip to Hawaii.',
        'Rewrite your previous response. Start every sentence with the letter A.',
        'turn 1: answer to: Rewrite your previous response. Start every sentence with the letter A.',
      ],
    );
    // The second request of that row carried the model's own first answer (not an empty turn).
    const second = srv.requests.find((b) => b.messages.length === 3 && b.messages[0].content.startsWith('Write a short travel'));
    assert.equal(second.messages[1].content, 'answer to: Write a short travel blog post about a trip to Hawaii.');
    assert.equal(rows.get('200').messages.length, 2);
    // The answered rows are training data: prepare writes them.
    const again = await prepare({ inputs: [r.out], outDir: tempDir() });
    assert.equal(again.files[0].rowsWritten, 3);
  } finally {
    await srv.close();
  }
});

/** Fixtures whose fields are not all understood on purpose (their unread fields are asserted above). */
const UNREAD_ON_PURPOSE = new Set(['unknown-fields.jsonl', 'found-conversation.jsonl']);
/** The families of issue 12 and the expected row fates: [written, set aside, dropped, errored]. */
const ROUND2: Record<string, [number, number, number, number]> = {
  'swe-agent-system-prompt.jsonl': [1, 0, 0, 0],
  'llamafactory-v1.jsonl': [2, 0, 0, 0],
  'llamafactory-v1-dpo.jsonl': [1, 0, 0, 0],
  'sharegpt-thoughts-actions.jsonl': [1, 0, 0, 0],
  'self-instruct.jsonl': [2, 0, 0, 0],
  'mt-bench.jsonl': [0, 3, 0, 0],
  'kto.jsonl': [3, 2, 0, 0],
  'oasst-flat.jsonl': [6, 1, 2, 0],
  'openai-preference.jsonl': [2, 0, 0, 0],
  'openai-refusal.jsonl': [2, 0, 0, 0],
  'function-call-roles.jsonl': [1, 0, 0, 0],
  'context-turns.jsonl': [5, 0, 0, 0],
  'found-conversation.jsonl': [5, 0, 0, 0],
  'unknown-fields.jsonl': [2, 0, 0, 0],
};

test('prepare over every fixture (Qwen3): rows add up per file; unread_fields empty wherever every field is understood; the families of issue 12 end as expected', async () => {
  const files = readdirSync(DIR).map(fx);
  const res = await prepare({ inputs: files, outDir: tempDir(), allowEmpty: true });
  assert.equal(res.ok, true, res.failures.join('; '));
  for (const f of res.files) {
    const name = f.file.split('/').pop()!;
    assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead, name);
    if (!UNREAD_ON_PURPOSE.has(name)) assert.deepEqual(f.unreadFields, {}, name);
    const want = ROUND2[name];
    if (want) assert.deepEqual([f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], want, name);
  }
  const by = Object.fromEntries(res.files.map((f) => [f.file.split('/').pop()!, f]));
  assert.deepEqual(by['kto.jsonl'].dropped, {});
  assert.equal(by['kto.jsonl'].notes.kto_undesirable_set_aside, 2);
  assert.deepEqual(by['oasst-flat.jsonl'].dropped, { oasst_excluded: { count: 1, lines: [7] }, oasst_orphan: { count: 1, lines: [9] } });
  assert.equal(by['oasst-flat.jsonl'].notes.oasst_tree_rebuilt, 7);
  assert.equal(by['self-instruct.jsonl'].recordsWritten >= 3, true);
});

test('CLI: prepare and inspect --json over the issue 12 fixtures; accounting adds up per file', async () => {
  const names = Object.keys(ROUND2);
  const out = tempDir();
  const r = await runCli(['prepare', ...names.map(fx), '--out', out, '--json'], { cwd: ROOT });
  assert.equal(r.status, 0, r.stderr);
  const rep = JSON.parse(r.stdout);
  for (const f of rep.files) {
    const name = f.file.split('/').pop();
    // --json prints the report's on-disk schema (snake_case)
    assert.deepEqual([f.rows_written, f.rows_set_aside, f.rows_dropped, f.rows_errored], ROUND2[name], name);
    assert.equal(f.rows_written + f.rows_set_aside + f.rows_dropped + f.rows_errored, f.rows_read, name);
  }
  const prompts = readFileSync(join(out, 'prompts_to_generate.jsonl'), 'utf8').trim().split('\n');
  // 3 MT-bench questions + 2 undesirable KTO rows' prompts + the unanswered OpenAssistant prompt + the user-only "draft" conversation beside "final"
  assert.equal(prompts.length, 7);
  const ins = await runCli(['inspect', fx('oasst-flat.jsonl'), '--json'], { cwd: ROOT });
  assert.equal(ins.status, 0, ins.stderr);
  const o = JSON.parse(ins.stdout);
  assert.equal(o.records.length + o.skipped.length + o.part_of.length, o.rows_read);
  assert.equal(o.records.find((x: any) => x.id === 'a4').messages[1].trainable, false);
});
