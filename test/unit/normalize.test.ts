import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { normalizeRow, SHAPES } from '../../src/core/formats/normalize';
import { mapRole, roleSpellingKey } from '../../src/core/formats/roles';
import type { Conversation, RowOutcome } from '../../src/core/types';
import { isDataChanging } from '../../src/core/codes';

const SAMPLES = path.join(__dirname, '..', '..', 'samples');
const src = (line = 1) => ({ file: '/data/x.jsonl', line });

function sampleOutcomes(name: string): RowOutcome[] {
  return fs
    .readFileSync(path.join(SAMPLES, name), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => normalizeRow(JSON.parse(l), { file: name, line: i + 1 }, name));
}

function conv(o: RowOutcome, kind: 'conversation' | 'prompt' = 'conversation'): Conversation {
  assert.equal(o.kind, kind, `expected ${kind}, got ${JSON.stringify(o)}`);
  return (o as { conversation: Conversation }).conversation;
}

function norm(value: unknown, line = 1): RowOutcome {
  return normalizeRow(value, src(line), 'x.jsonl');
}

// ------------------------------------------------------------------ roles

test('role alias table', () => {
  assert.equal(mapRole('human'), 'user');
  assert.equal(mapRole('Prompter'), 'user');
  assert.equal(mapRole('GPT'), 'assistant');
  assert.equal(mapRole('ai'), 'assistant');
  assert.equal(mapRole('model'), 'assistant');
  assert.equal(mapRole('bard'), 'assistant');
  assert.equal(mapRole('observation'), 'tool');
  assert.equal(mapRole('function_response'), 'tool');
  assert.equal(mapRole('ipython'), 'tool');
  assert.equal(mapRole('function'), 'tool');
  assert.equal(mapRole('developer'), 'system');
  assert.equal(mapRole(' System '), 'system');
  assert.equal(mapRole('narrator'), undefined);
  assert.equal(mapRole('toString'), undefined);
  assert.equal(mapRole(3), undefined);
});

// ------------------------------------------------------------------ samples

test('sample agentic-trajectories: 84 messages, 41 assistant turns, ends with user, system from system_prompt', () => {
  const outs = sampleOutcomes('agentic-trajectories.jsonl');
  assert.equal(outs.length, 3);
  const c = conv(outs[0]);
  assert.equal(c.id, 'widgets__widgets-101');
  assert.deepEqual(c.source, { file: 'agentic-trajectories.jsonl', line: 1 });
  assert.equal(c.messages.length, 84);
  assert.equal(c.messages.filter((m) => m.role === 'assistant').length, 41);
  assert.equal(c.messages[83].role, 'user');
  assert.deepEqual(c.messages[0], {
    role: 'system',
    content: 'You are a careful software engineering agent. Use the tools to inspect and edit the repository.',
  });
  assert.equal(c.messages[1].role, 'user');
  assert.match(c.messages[2].content!, /^Let me look for where resize is defined\.\n\n<function=execute_bash>/);
  assert.deepEqual(c.notes, ['system_prompt_field_used']);
  assert.ok(c.messages.every((m) => typeof m.content === 'string' && m.content.length > 0));
  assert.equal(c.tools, undefined);
  assert.deepEqual(
    outs.map((o) => conv(o).messages.length),
    [84, 26, 12],
  );
  assert.deepEqual(
    outs.map((o) => conv(o).id),
    ['widgets__widgets-101', 'widgets__widgets-102', 'widgets__widgets-103'],
  );
});

test('sample chat-sharegpt-human-gpt: system/human/gpt mapped, exact messages', () => {
  const outs = sampleOutcomes('chat-sharegpt-human-gpt.jsonl');
  assert.equal(outs.length, 3);
  const c = conv(outs[0]);
  assert.equal(c.id, 'chat-0');
  assert.deepEqual(c.messages, [
    { role: 'system', content: 'You are a friendly assistant.' },
    { role: 'user', content: 'Give me a tip about houseplants (#0).' },
    { role: 'assistant', content: 'Water only when the top inch of soil is dry.' },
    { role: 'user', content: 'And light?' },
    { role: 'assistant', content: 'Bright, indirect light suits most of them.' },
  ]);
  assert.equal(c.notes, undefined);
  assert.equal(conv(outs[2]).messages[1].content, 'Give me a tip about houseplants (#2).');
});

test('sample reasoning-sharegpt: top-level system prepended, thought markers split into reasoning and solution, fallback id', () => {
  const outs = sampleOutcomes('reasoning-sharegpt.jsonl');
  const c = conv(outs[1]);
  assert.equal(c.id, 'reasoning-sharegpt.jsonl:2');
  assert.deepEqual(
    c.messages.map((m) => m.role),
    ['system', 'user', 'assistant'],
  );
  assert.equal(c.messages[0].content, 'Your role as an assistant is to think step by step before answering.');
  assert.equal(c.messages[1].content, 'Is 221 prime?');
  assert.equal(c.messages[2].reasoning_content, 'Work it out carefully for question 1.');
  assert.equal(c.messages[2].content, 'No, 221 = 13 * 17.');
  assert.deepEqual(c.notes, ['thought_markers_split', 'system_prompt_field_used']);
});

test('thought markers: without solution markers the rest is the content; not at the start, the text is kept', async () => {
  const { splitThoughtMarkers } = await import('../../src/core/formats/content');
  assert.deepEqual(splitThoughtMarkers('<|begin_of_thought|>\nA\n<|end_of_thought|>\n\nB'), { reasoning: 'A', content: 'B' });
  assert.equal(splitThoughtMarkers('x <|begin_of_thought|>A<|end_of_thought|>B'), null);
  assert.equal(splitThoughtMarkers('<|begin_of_thought|>never closed'), null);
});

test('sample swe-agent-trajectory-field: trajectory of role/text with ai → assistant', () => {
  const outs = sampleOutcomes('swe-agent-trajectory-field.jsonl');
  assert.equal(outs.length, 2);
  const c = conv(outs[0]);
  assert.equal(c.id, 'sorting__0');
  assert.equal(c.messages.length, 10);
  assert.deepEqual(
    c.messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user'],
  );
  assert.equal(c.messages[0].content, 'SETTING: You are an autonomous programmer working in a command line.');
  assert.equal(c.messages[2].content, 'DISCUSSION\nStep 0: inspect the sort helper.\n\n```\nopen src/sorting.py\n```');
  assert.equal(conv(outs[1]).id, 'sorting__1');
});

test('sample prompts-only: 4 prompt outcomes with user turns', () => {
  const outs = sampleOutcomes('prompts-only.jsonl');
  assert.deepEqual(
    outs.map((o) => o.kind),
    ['prompt', 'prompt', 'prompt', 'prompt'],
  );
  assert.deepEqual(conv(outs[0], 'prompt').messages, [{ role: 'user', content: 'Write a haiku about compilers.' }]);
  assert.equal(conv(outs[0], 'prompt').id, 'prompts-only.jsonl:1');
  assert.deepEqual(conv(outs[3], 'prompt').messages, [{ role: 'user', content: 'Summarize the plot of a heist movie you invent.' }]);
  assert.deepEqual(conv(outs[3], 'prompt').source, { file: 'prompts-only.jsonl', line: 4 });
});

// ------------------------------------------------------------------ content rules

test('null content: "" for ordinary turns, null kept for an assistant tool-call turn without text', () => {
  const c = conv(
    norm({
      messages: [
        { role: 'system', content: null },
        { role: 'user', content: null },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{"p":"."}' } }] },
        { role: 'tool', content: null, tool_call_id: 'c1' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'ls', arguments: {} } }] },
        { role: 'assistant', content: null },
        { role: 'assistant' },
      ],
    }),
  );
  assert.deepEqual(c.messages, [
    { role: 'system', content: '' },
    { role: 'user', content: '' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{"p":"."}' } }] },
    { role: 'tool', content: '', tool_call_id: 'c1' },
    { role: 'assistant', content: '', tool_calls: [{ type: 'function', function: { name: 'ls', arguments: {} } }] },
    { role: 'assistant', content: '' },
    { role: 'assistant', content: '' },
  ]);
  assert.ok(c.notes!.includes('tool_call_content_null'));
  assert.ok(c.notes!.includes('null_content'));
});

test('content parts: text parts joined, non-text parts skipped with a note, never [object Object]', () => {
  const c = conv(
    norm({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look at this:' },
            { type: 'image_url', image_url: { url: 'http://x/y.png' } },
            { type: 'text', text: 'what is it?' },
          ],
        },
        { role: 'assistant', content: [{ type: 'output_text', text: 'A cat.' }, 'plain'] },
      ],
    }),
  );
  assert.deepEqual(c.messages, [
    { role: 'user', content: 'Look at this:\nwhat is it?' },
    { role: 'assistant', content: 'A cat.\nplain' },
  ]);
  assert.deepEqual(c.notes, ['content_parts_joined', 'non_text_parts_skipped']);
  assert.ok(!JSON.stringify(c.messages).includes('[object Object]'));
});

test('a text part with its text under "content" is read as text; a turn whose every part was skipped is noted (data-changing)', () => {
  const c = conv(
    norm({
      messages: [
        { role: 'user', content: [{ type: 'text', content: 'What is 2+2?' }] },
        { role: 'assistant', content: [{ type: 'text', text: '4' }] },
      ],
    }),
  );
  assert.deepEqual(c.messages, [
    { role: 'user', content: 'What is 2+2?' },
    { role: 'assistant', content: '4' },
  ]);
  assert.deepEqual(c.notes, ['content_parts_joined', 'text_part_content_read']);
  const d = conv(
    norm({
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x/y.png' } }] },
        { role: 'assistant', content: 'A cat.' },
      ],
    }),
  );
  assert.equal(d.messages[0].content, '');
  assert.ok(d.notes?.includes('turn_empty_after_skipped_parts'), JSON.stringify(d.notes));
  assert.equal(isDataChanging('turn_empty_after_skipped_parts'), true);
});

test('numbers, booleans and objects where text belongs are stringified; null never becomes "None"', () => {
  const c = conv(
    norm({
      conversations: [
        { from: 'human', value: 42 },
        { from: 'gpt', value: { answer: 7 } },
        { from: 'human', value: true },
        { from: 'gpt', value: null },
      ],
    }),
  );
  assert.deepEqual(
    c.messages.map((m) => m.content),
    ['42', '{"answer":7}', 'true', ''],
  );
  assert.ok(c.notes!.includes('content_stringified'));
});

test('tool calls: string and object arguments kept as given, flat form and JSON-string list accepted', () => {
  const c = conv(
    norm({
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: 'calling',
          tool_calls: [
            { id: 'a', type: 'function', function: { name: 'f', arguments: '{"x": 1}' } },
            { id: 'b', type: 'function', function: { name: 'g', arguments: { y: [2] } } },
            { name: 'h', arguments: { z: 3 } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: '[{"function": {"name": "k", "arguments": "{}"}}]' },
      ],
    }),
  );
  assert.deepEqual(c.messages[1].tool_calls, [
    { id: 'a', type: 'function', function: { name: 'f', arguments: '{"x": 1}' } },
    { id: 'b', type: 'function', function: { name: 'g', arguments: { y: [2] } } },
    { type: 'function', function: { name: 'h', arguments: { z: 3 } } },
  ]);
  assert.equal(c.messages[1].content, 'calling');
  assert.deepEqual(c.messages[2], { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'k', arguments: '{}' } }] });
});

test('tool call without a function name is an error naming the message', () => {
  const o = norm({
    messages: [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ function: { arguments: '{}' } }] },
    ],
  });
  assert.deepEqual(o, { kind: 'errored', source: src(), message: 'message 2: tool call 1 has no function name', code: 'bad_tool_calls' });
});

test('legacy function_call → tool_calls; function and observation roles → tool', () => {
  const c = conv(
    norm({
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        { role: 'function', name: 'get_weather', content: '{"t": 3}' },
        { role: 'observation', content: 'ok' },
        { role: 'assistant', content: 'It is 3 degrees.' },
      ],
    }),
  );
  assert.deepEqual(c.messages, [
    { role: 'user', content: 'weather?' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    { role: 'tool', content: '{"t": 3}', name: 'get_weather' },
    { role: 'tool', content: 'ok' },
    { role: 'assistant', content: 'It is 3 degrees.' },
  ]);
  assert.ok(c.notes!.includes('function_call_converted'));
});

test('reasoning_content / reasoning / thinking → reasoning_content', () => {
  const c = conv(
    norm({
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a1', reasoning_content: 'r1' },
        { role: 'user', content: 'q2' },
        { role: 'assistant', content: 'a2', reasoning: 'r2' },
        { role: 'user', content: 'q3' },
        { role: 'assistant', content: 'a3', thinking: 'r3' },
      ],
    }),
  );
  assert.deepEqual(
    c.messages.filter((m) => m.role === 'assistant').map((m) => [m.content, m.reasoning_content]),
    [
      ['a1', 'r1'],
      ['a2', 'r2'],
      ['a3', 'r3'],
    ],
  );
  assert.equal(c.messages[0].reasoning_content, undefined);
});

test('unknown role → errored with the role, the message index and the known spellings', () => {
  const o = norm(
    {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'narrator', content: 'c' },
      ],
    },
    7,
  );
  assert.equal(o.kind, 'errored');
  const msg = (o as { message: string }).message;
  assert.match(msg, /^unknown role "narrator" in message 3 \(known: user, human, prompter, assistant, gpt/);
  assert.match(msg, /; add it to "roleAliases" in eagle3prep\.jsonc$/);
  assert.deepEqual((o as { source: unknown }).source, src(7));
  // A turn without any role key is an error too, not dropped.
  const o2 = norm({ conversations: [{ from: 'human', value: 'a' }, { value: 'b' }] });
  assert.equal(o2.kind, 'errored');
  assert.match((o2 as { message: string }).message, /^message 2 has no role/);
});

test('per-turn training flags → trainable: false on that message only', () => {
  const c = conv(
    norm({
      conversations: [
        { from: 'human', value: 'q' },
        { from: 'gpt', value: 'a', weight: 0 },
        { from: 'human', value: 'q' },
        { from: 'gpt', value: 'b', loss: false },
        { from: 'human', value: 'q' },
        { from: 'gpt', value: 'c', train: false },
        { from: 'human', value: 'q' },
        { from: 'gpt', value: 'd', trainable: false },
        { from: 'human', value: 'q' },
        { from: 'gpt', value: 'e', weight: 1, loss: true },
      ],
    }),
  );
  assert.deepEqual(
    c.messages.filter((m) => m.role === 'assistant').map((m) => [m.content, m.trainable]),
    [
      ['a', false],
      ['b', false],
      ['c', false],
      ['d', false],
      ['e', undefined],
    ],
  );
  assert.ok(c.notes!.includes('untrainable_turn'));
});

// ------------------------------------------------------------------ system field, ids, tools

test('top-level system: fills an empty system turn, is prepended when none, loses to a non-empty own turn', () => {
  const filled = conv(
    norm({
      system: 'S',
      messages: [
        { role: 'system', content: '' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ],
    }),
  );
  assert.deepEqual(filled.messages[0], { role: 'system', content: 'S' });
  assert.deepEqual(filled.notes, ['system_prompt_field_used']);

  const own = conv(
    norm({
      system_prompt: 'S',
      messages: [
        { role: 'system', content: 'own' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ],
    }),
  );
  assert.deepEqual(
    own.messages.map((m) => m.content),
    ['own', 'u', 'a'],
  );
  assert.deepEqual(own.notes, ['system_field_ignored']);

  const prepended = conv(
    norm({
      system: 'S',
      messages: [
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ],
    }),
  );
  assert.deepEqual(
    prepended.messages.map((m) => [m.role, m.content]),
    [
      ['system', 'S'],
      ['user', 'u'],
      ['assistant', 'a'],
    ],
  );
});

test('record id: own id field (string or number), else file:line', () => {
  const base = {
    messages: [
      { role: 'user', content: 'u' },
      { role: 'assistant', content: 'a' },
    ],
  };
  assert.equal(conv(norm({ ...base, id: 17 })).id, '17');
  assert.equal(conv(norm({ ...base, uuid: 'u-1' })).id, 'u-1');
  assert.equal(conv(norm({ ...base, conversation_id: 'c-9' })).id, 'c-9');
  assert.equal(conv(norm({ ...base, id: { nested: 1 } }, 12)).id, 'x.jsonl:12');
  assert.equal(conv(norm({ ...base, id: '' }, 3)).id, 'x.jsonl:3');
});

test('tools: array kept, empty array omitted, JSON string parsed, bad string errored', () => {
  const base = {
    messages: [
      { role: 'user', content: 'u' },
      { role: 'assistant', content: 'a' },
    ],
  };
  const tool = { type: 'function', function: { name: 'f', parameters: { type: 'object' } } };
  assert.deepEqual(conv(norm({ ...base, tools: [tool] })).tools, [tool]);
  assert.equal(conv(norm({ ...base, tools: [] })).tools, undefined);
  const parsed = conv(norm({ ...base, tools: JSON.stringify([tool]) }));
  assert.deepEqual(parsed.tools, [tool]);
  assert.deepEqual(parsed.notes, ['tools_json_string']);
  const bad = norm({ ...base, tools: '[{' });
  assert.equal(bad.kind, 'errored');
  assert.match((bad as { message: string }).message, /^"tools" is a string but not valid JSON/);
});

// ------------------------------------------------------------------ prompt rows

test('prompt rows: prompt-only → prompt outcome; prompt + response → conversation; instruction + input joined', () => {
  assert.deepEqual(conv(norm({ question: 'Why?', system: 'Be brief.' }), 'prompt').messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Why?' },
  ]);
  assert.deepEqual(conv(norm({ prompt: 'P', completion: 'C' })).messages, [
    { role: 'user', content: 'P' },
    { role: 'assistant', content: 'C' },
  ]);
  const alpaca = conv(norm({ instruction: 'Translate.', input: 'hund', output: 'dog' }));
  assert.deepEqual(alpaca.messages, [
    { role: 'user', content: 'Translate.\n\nhund' },
    { role: 'assistant', content: 'dog' },
  ]);
  assert.deepEqual(alpaca.notes, ['instruction_input_joined']);
  // An empty response is no response: the row needs generation.
  assert.deepEqual(conv(norm({ instruction: 'Say hi.', input: '', output: '' }), 'prompt').messages, [{ role: 'user', content: 'Say hi.' }]);
  assert.deepEqual(conv(norm({ prompt: 'What is 6*7?', answer: 42 })).messages[1], { role: 'assistant', content: '42' });
});

test('messages with no assistant turn are prompts (whole list kept); only-system lists are dropped', () => {
  const p = conv(
    norm({
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
      ],
    }),
    'prompt',
  );
  assert.deepEqual(
    p.messages.map((m) => m.role),
    ['system', 'user'],
  );
  const o = norm({ messages: [{ role: 'system', content: 's' }] }, 4);
  assert.equal(o.kind, 'dropped');
  assert.equal((o as { reason: string }).reason, 'no_assistant_turn');
});

// ------------------------------------------------------------------ drops

test('empty conversation, unrecognized shapes, non-object rows, already tokenized rows', () => {
  assert.deepEqual(norm({ messages: [] }, 2), { kind: 'dropped', source: src(2), reason: 'empty_conversation', message: '"messages" is an empty list' });
  assert.deepEqual(norm({ trajectory: [] }).kind, 'dropped');

  const u = norm({ foo: 1, bar: 'x' }) as { kind: string; reason: string; message: string };
  assert.equal(u.kind, 'dropped');
  assert.equal(u.reason, 'unrecognized_shape');
  assert.match(u.message, /^unrecognized row shape; keys found: foo, bar — expected "messages"/);

  const n = norm(5) as { reason: string; message: string };
  assert.equal(n.reason, 'unrecognized_shape');
  assert.equal(n.message, 'row is a JSON number, not an object');

  const t = norm({ input_ids: [1, 2], loss_mask: [0, 1] }) as { reason: string; message: string };
  assert.equal(t.reason, 'unrecognized_shape');
  assert.match(t.message, /already tokenized \("input_ids"\)/);
});

test('shape table is shared and ordered', () => {
  assert.deepEqual(
    SHAPES.map((h) => h.name),
    [
      'mapped',
      'oasst-messages',
      'event-log',
      'event-log',
      'kto',
      'openai-preference',
      'llamafactory-preference',
      'preference',
      'swe-agent-traj',
      'messages-completion',
      'openai-messages',
      'sharegpt',
      'openhands-events',
      'atif-trajectory',
      'input-output-pairs',
      'role-text-trajectory',
      'role-text-trajectory',
      'trajectory-steps',
      'prompt-turns-completion',
      'chat-completions-log',
      'gemini-batch',
      'ultrachat',
      'lima',
      'question-turns',
      'oasst-tree',
      'query-tools-answers',
      'glaive',
      'chatml-transcript',
      'llama2-transcript',
      'human-assistant-transcript',
      'hh-transcript',
      'prompt-answers',
      'self-instruct-task',
      'prompt-response',
      'prompt-only',
      'alpaca-transcript',
      'oasst-messages',
      'batch-output',
      'found-conversation',
    ],
  );
  // `conversations` with role/content (not from/value) goes to the role/text handler.
  const c = conv(
    norm({
      conversations: [
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ],
    }),
  );
  assert.deepEqual(
    c.messages.map((m) => m.role),
    ['user', 'assistant'],
  );
  const dialog = conv(
    norm({
      dialog: [
        { role: 'human', text: 'u' },
        { role: 'bot', text: 'a' },
      ],
    }),
  );
  assert.deepEqual(dialog.messages, [
    { role: 'user', content: 'u' },
    { role: 'assistant', content: 'a' },
  ]);
});

test('inline <think> reasoning (and a lone closing </think>) is read as reasoning_content, the text around it kept so the content as written comes back exactly', () => {
  const { asWrittenInline, inlineThinkParts, splitInlineThink } = require('../../src/core/formats/content');
  assert.deepEqual(splitInlineThink('<think>\nadd them\n</think>\n\n4'), { reasoning: 'add them', content: '4' });
  assert.deepEqual(splitInlineThink('add them\n</think>\n\n4'), { reasoning: 'add them', content: '4' });
  assert.equal(splitInlineThink('no reasoning here'), null);
  assert.equal(splitInlineThink('text first <think>x</think>y'), null);
  assert.deepEqual(inlineThinkParts(' <think>\n\nadd them\n</think>\n\n4\n'), {
    open: ' <think>\n\n',
    reasoning: 'add them',
    close: '\n</think>\n\n',
    content: '4\n',
  });
  assert.deepEqual(inlineThinkParts('add them</think>4'), { open: '', reasoning: 'add them', close: '</think>', content: '4' });
  // An empty block holds no reasoning: the content stays as written.
  assert.equal(inlineThinkParts('<think>\n\n</think>\n\n4'), null);
  const out = normalizeRow(
    {
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: '<think>\nr\n</think>\n\na' },
        { role: 'user', content: '<think>not mine</think>' },
      ],
    },
    { file: 'f', line: 1 },
    'f',
  );
  assert.equal(out.kind, 'conversation');
  if (out.kind !== 'conversation') return;
  assert.deepEqual(out.conversation.messages[1], {
    role: 'assistant',
    content: 'a',
    reasoning_content: 'r',
    reasoning_inline: { open: '<think>\n', close: '\n</think>\n\n' },
  });
  assert.deepEqual(asWrittenInline(out.conversation.messages[1]), { role: 'assistant', content: '<think>\nr\n</think>\n\na' });
  // Reasoning removed since (--reasoning drop): only the marker goes.
  assert.deepEqual(asWrittenInline({ role: 'assistant', content: 'a', reasoning_inline: { open: '<think>', close: '</think>' } }), {
    role: 'assistant',
    content: 'a',
  });
  assert.equal(out.conversation.messages[2].content, '<think>not mine</think>');
  assert.deepEqual(out.conversation.notes ?? [], []);
});

test('roleSpellingKey: trimmed, lower case, "-" as "_", the same key when asked again; mapRole and function-call turns read through it', () => {
  for (let k = 0; k < 2; k++) {
    assert.equal(roleSpellingKey(' Tool-Call '), 'tool_call');
    assert.equal(roleSpellingKey('GPT'), 'gpt');
    assert.equal(mapRole(' GPT'), 'assistant');
    assert.equal(mapRole('Human'), 'user');
    assert.equal(mapRole('no-such-role'), undefined);
  }
  // A turn whose role says it holds a function call (any case, "-" or "_") is read as one, on every row.
  for (const spelling of ['Function-Call', 'function_call']) {
    const out = normalizeRow(
      {
        conversations: [
          { from: 'human', value: 'Weather in Paris?' },
          { from: spelling, value: '{"name": "get_weather", "arguments": {"city": "Paris"}}' },
          { from: 'observation', value: '{"temp_c": 21}' },
          { from: 'gpt', value: 'It is 21 °C.' },
        ],
      },
      { file: 'f.jsonl', line: 1 },
      'f.jsonl',
    );
    assert.equal(out.kind, 'conversation');
    const msgs = (out as { conversation: Conversation }).conversation.messages;
    assert.deepEqual(
      msgs.map((m) => m.role),
      ['user', 'assistant', 'tool', 'assistant'],
    );
    assert.equal(msgs[1].tool_calls?.[0].function.name, 'get_weather');
  }
});
