/**
 * Issue 20, "Tool calls kept beside the turns": per-turn lists of call objects — `{request, response}` or
 * `{name, parameters|arguments, result|output|response}`, under any field name — become structured assistant
 * tool calls followed by tool turns with their results, in order (formats/turnCalls.ts). Synthetic rows written
 * from the layouts' documented structure; then the records of `prepare` through the CLI, with accounting.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeDetailed } from '../../src/core/formats/normalize';
import { runCli, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const src = { file: 'x.jsonl', line: 1 };
const read = (row: unknown) => {
  const d = normalizeDetailed(row, src, 'x');
  assert.equal(d.outcome.kind, 'conversation', JSON.stringify(d.outcome));
  return (d.outcome as Extract<typeof d.outcome, { kind: 'conversation' }>).conversation;
};

/** `{request: {api_name, parameters}, response, exception}` objects under a turn's `apis` (a ToolTalk-style layout). */
const REQUEST_RESPONSE_ROW = {
  conversation_id: 'c1',
  conversation: [
    { index: 0, role: 'user', text: 'Book a meeting with Bob tomorrow at 10.' },
    {
      index: 1,
      role: 'assistant',
      text: 'Bob is busy at 10; I booked 11 instead.',
      apis: [
        { request: { api_name: 'FindUser', parameters: { name: 'Bob' } }, response: { user: 'bob@example.com' }, exception: null },
        { request: { api_name: 'CreateEvent', parameters: { attendee: 'bob@example.com', time: '10:00' } }, response: null, exception: 'Busy at 10:00' },
        { request: { api_name: 'CreateEvent', parameters: { attendee: 'bob@example.com', time: '11:00' } }, response: { event_id: 'e7' }, exception: null },
      ],
    },
    { index: 2, role: 'user', text: 'Thanks!' },
    { index: 3, role: 'assistant', text: 'You are welcome.', apis: [] },
  ],
};

test('{request, response} objects beside a turn: each call an assistant turn, its result (or its exception) a tool turn, the text last', () => {
  const c = read(REQUEST_RESPONSE_ROW);
  assert.deepEqual(c.messages, [
    { role: 'user', content: 'Book a meeting with Bob tomorrow at 10.' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'FindUser', arguments: { name: 'Bob' } } }] },
    { role: 'tool', content: '{"user":"bob@example.com"}' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ type: 'function', function: { name: 'CreateEvent', arguments: { attendee: 'bob@example.com', time: '10:00' } } }],
    },
    { role: 'tool', content: 'Busy at 10:00' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ type: 'function', function: { name: 'CreateEvent', arguments: { attendee: 'bob@example.com', time: '11:00' } } }],
    },
    { role: 'tool', content: '{"event_id":"e7"}' },
    { role: 'assistant', content: 'Bob is busy at 10; I booked 11 instead.' },
    { role: 'user', content: 'Thanks!' },
    { role: 'assistant', content: 'You are welcome.' },
  ]);
  assert.deepEqual(c.notes, ['side_tool_calls_expanded']);
  assert.equal(c.unreadFields, undefined);
});

test('{name, parameters|arguments, result|output} objects under any list name; ids kept; their unread fields reported by path', () => {
  const c = read({
    messages: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Paris is sunny, Rome rainy.',
        reasoning_content: 'Two cities: two calls.',
        calls: [
          { id: 'k1', name: 'get_weather', parameters: { city: 'Paris' }, output: 'sunny', note: 'served from the cache of the previous hour, not live' },
          { id: 'k2', name: 'get_weather', arguments: '{"city": "Rome"}', result: { sky: 'rain' } },
        ],
      },
    ],
  });
  assert.deepEqual(c.messages, [
    { role: 'user', content: 'Weather in Paris and Rome?' },
    {
      role: 'assistant',
      content: null,
      reasoning_content: 'Two cities: two calls.',
      tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } }, id: 'k1' }],
    },
    { role: 'tool', content: 'sunny', tool_call_id: 'k1' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city": "Rome"}' }, id: 'k2' }] },
    { role: 'tool', content: '{"sky":"rain"}', tool_call_id: 'k2' },
    { role: 'assistant', content: 'Paris is sunny, Rome rainy.' },
  ]);
  assert.deepEqual(c.notes, ['side_tool_calls_expanded', 'fields_not_read']);
  assert.deepEqual(c.unreadFields, ['messages[].calls[].note']);
});

test('a "tool_calls"-alike holding results is expanded too (OpenAI tool_calls without results stay as they are)', () => {
  const c = read({
    messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: '', tool_calls: [{ name: 'get_weather', arguments: { city: 'Oslo' }, response: 'snow' }] },
      { role: 'assistant', content: 'Snow in Oslo.' },
    ],
  });
  assert.deepEqual(c.messages, [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
    { role: 'tool', content: 'snow' },
    { role: 'assistant', content: 'Snow in Oslo.' },
  ]);
  const plain = read({
    messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: 'snow' },
    ],
  });
  assert.deepEqual(plain.messages[1].tool_calls, [{ type: 'function', function: { name: 'get_weather', arguments: '{}' }, id: 'a' }]);
  assert.equal(plain.messages.length, 3);
});

test('calls without results stay on the turn with its text; tool definitions and lists on user turns are not calls', () => {
  const c = read({
    messages: [
      { role: 'user', content: 'Weather?', attachments: [{ name: 'photo.png', parameters: { w: 10 } }] },
      { role: 'assistant', content: 'Let me check.', actions: [{ tool: 'get_weather', params: { city: 'Paris' } }] },
    ],
  });
  assert.deepEqual(c.messages, [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: 'Let me check.', tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
  ]);
  assert.deepEqual(c.notes, ['side_tool_calls_read', 'fields_not_read']);
  assert.deepEqual(c.unreadFields, ['messages[].attachments']);
  const defs = read({
    messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'ok', functions: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } }] },
    ],
  });
  assert.deepEqual(defs.messages, [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: 'ok' },
  ]);
  assert.deepEqual(defs.unreadFields, ['messages[].functions']);
});

test('CLI: prepare writes the calls and results into the records; written + set aside + dropped + errored = rows read', async () => {
  const dir = tempDir();
  const file = writeJsonl(
    [
      REQUEST_RESPONSE_ROW,
      {
        id: 'r2',
        messages: [
          { role: 'user', content: 'Time?' },
          { role: 'assistant', content: 'Noon.', calls: [{ name: 'clock', arguments: {}, result: '12:00' }] },
        ],
      },
      { id: 'r3', messages: [{ role: 'user', content: 'Only a question' }] },
      { id: 'r4', messages: [] },
    ],
    'calls.jsonl',
    dir,
  );
  const out = join(dir, 'out');
  const r = await runCli(['prepare', file, '--out', out, '--json'], { cwd: ROOT });
  assert.equal(r.status, 0, r.stderr);
  const f = JSON.parse(r.stdout).files[0];
  assert.deepEqual([f.rows_read, f.rows_written, f.rows_set_aside, f.rows_dropped, f.rows_errored], [4, 2, 1, 1, 0]);
  assert.equal(f.notes.side_tool_calls_expanded, 2);
  const ins = await runCli(['inspect', file, '--json'], { cwd: ROOT });
  assert.equal(ins.status, 0, ins.stderr);
  const o = JSON.parse(ins.stdout);
  assert.deepEqual(
    o.records[0].messages.map((m: { role: string }) => m.role),
    ['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'user', 'assistant'],
  );
  assert.deepEqual(o.records[1].messages, [
    { role: 'user', content: 'Time?' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'clock', arguments: {} } }] },
    { role: 'tool', content: '12:00' },
    { role: 'assistant', content: 'Noon.' },
  ]);
  // Every call is a trained assistant turn: Qwen3's template rewrites history, so --grouping exact writes one record
  // per assistant turn (docs/loss-mask-rules.md "Record grouping"): c1's three calls + two answers, r2's call + answer.
  const lines = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
    .trim()
    .split('\n');
  assert.equal(lines.length, f.records_written);
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).id),
    ['c1#0', 'c1#1', 'c1#2', 'c1#3', 'c1#4', 'r2#0', 'r2#1'],
  );
});
