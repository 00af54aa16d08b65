import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tempDir } from '../helpers';
import { inspectFile } from '../../src/core/run/inputs/inspect';

const SAMPLES = path.join(__dirname, '..', '..', 'samples');

function tmpFile(name: string, content: string): string {
  const dir = tempDir('e3p-inspect-');
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

test('every sample yields records', async () => {
  const expected: Record<string, { format: string; records: number; prompts: number }> = {
    'agentic-trajectories.jsonl': { format: 'openai-messages', records: 3, prompts: 0 },
    'chat-sharegpt-human-gpt.jsonl': { format: 'sharegpt', records: 3, prompts: 0 },
    'prompts-only.jsonl': { format: 'prompt-only', records: 4, prompts: 4 },
    'reasoning-sharegpt.jsonl': { format: 'sharegpt', records: 3, prompts: 0 },
    'swe-agent-trajectory-field.jsonl': { format: 'role-text-trajectory', records: 2, prompts: 0 },
  };
  for (const [name, want] of Object.entries(expected)) {
    const r = await inspectFile(path.join(SAMPLES, name));
    assert.equal(r.format, want.format, name);
    assert.equal(r.records.length, want.records, name);
    assert.equal(r.records.filter((x) => x.needs_generation).length, want.prompts, name);
    assert.deepEqual(r.skipped, [], name);
    assert.deepEqual(
      r.records.map((x) => x.source.line),
      Array.from({ length: want.records }, (_, i) => i + 1),
      name,
    );
    assert.ok(r.evidence.length > 0, name);
  }
});

test('agentic sample: record JSON shape (CLI contract)', async () => {
  const r = await inspectFile(path.join(SAMPLES, 'agentic-trajectories.jsonl'));
  const first = r.records[0];
  assert.deepEqual(Object.keys(r), ['file', 'format', 'evidence', 'rows_read', 'records', 'skipped', 'unread_fields']);
  // Every field of the sample is read or known metadata.
  assert.deepEqual(r.unread_fields, {});
  assert.equal(r.rows_read, 3);
  assert.deepEqual(Object.keys(first), ['source', 'id', 'shape', 'messages', 'needs_generation', 'notes']);
  assert.equal(first.shape, 'openai-messages');
  assert.deepEqual(first.notes, ['system_prompt_field_used']);
  assert.deepEqual(first.source, { line: 1 });
  assert.equal(first.id, 'widgets__widgets-101');
  assert.equal(first.needs_generation, false);
  assert.equal(first.messages.length, 84);
  assert.equal(first.messages.filter((m) => m.role === 'assistant').length, 41);
  assert.equal(first.messages[83].role, 'user');
  assert.deepEqual(Object.keys(first.messages[0]), ['role', 'content']);
  assert.equal(first.messages[0].content, 'You are a careful software engineering agent. Use the tools to inspect and edit the repository.');
});

test('prompts-only sample: 4 records needing generation', async () => {
  const r = await inspectFile(path.join(SAMPLES, 'prompts-only.jsonl'));
  assert.deepEqual(r.records[3], {
    source: { line: 4 },
    id: 'prompts-only.jsonl:4',
    shape: 'openai-messages',
    messages: [{ role: 'user', content: 'Summarize the plot of a heist movie you invent.' }],
    needs_generation: true,
  });
});

test('skipped rows: invalid JSON, dropped and errored, with their lines and reasons', async () => {
  const file = tmpFile(
    'mixed.jsonl',
    [
      JSON.stringify({
        id: 'ok',
        messages: [
          { role: 'user', content: 'u' },
          { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{}' } }], reasoning_content: 'r' },
        ],
      }),
      '{"messages": [',
      '',
      JSON.stringify({ messages: [] }),
      JSON.stringify({
        conversations: [
          { from: 'human', value: 'u' },
          { from: 'narrator', value: 'x' },
        ],
      }),
      JSON.stringify({ foo: 1 }),
    ].join('\n'),
  );
  const r = await inspectFile(file);
  assert.equal(r.format, 'mixed');
  assert.deepEqual(r.records, [
    {
      source: { line: 1 },
      id: 'ok',
      shape: 'openai-messages',
      notes: ['tool_call_content_null'],
      messages: [
        { role: 'user', content: 'u' },
        { role: 'assistant', content: null, reasoning_content: 'r', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] },
      ],
      needs_generation: false,
    },
  ]);
  assert.deepEqual(
    r.skipped.map((s) => [s.line, s.reason]),
    [
      [2, 'invalid_json'],
      [4, 'empty_conversation'],
      [5, 'errored'],
      [6, 'unrecognized_shape'],
    ],
  );
  assert.match(r.skipped[0].message, /^invalid JSON: /);
  assert.match(r.skipped[2].message, /^unknown role "narrator" in message 2/);
  assert.equal(r.skipped[2].code, 'unknown_role');
  assert.equal(r.rows_read, 5);
  assert.match(r.skipped[3].message, /keys found: foo/);
  assert.ok(
    r.evidence.some((e) => e.startsWith('1/5 rows are not valid JSON (first: line 2: invalid JSON')),
    r.evidence.join(' | '),
  );
});

test('.json array: element lines are reported', async () => {
  const file = tmpFile(
    'arr.json',
    '[\n  {"conversations": [{"from": "human", "value": "a"}, {"from": "gpt", "value": "b"}]},\n\n  {"conversations": [\n    {"from": "human", "value": "c"},\n    {"from": "gpt", "value": "d"}]}\n]',
  );
  const r = await inspectFile(file);
  assert.equal(r.format, 'sharegpt');
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.id, x.messages.map((m) => m.content)]),
    [
      [2, 'arr.json:2', ['a', 'b']],
      [4, 'arr.json:4', ['c', 'd']],
    ],
  );
});

test('limit bounds the rows read', async () => {
  const r = await inspectFile(path.join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), { limit: 2 });
  assert.deepEqual(
    r.records.map((x) => x.id),
    ['chat-0', 'chat-1'],
  );
});

test('nothing recognizable: clear errors naming file, what was found, what would work', async () => {
  const empty = tmpFile('empty.jsonl', '\n\n');
  await assert.rejects(inspectFile(empty), (e: Error) => {
    assert.ok(e.message.startsWith(`${empty} holds no rows (the file is empty`), e.message);
    assert.match(e.message, /Give JSON Lines .*"messages"/);
    return true;
  });

  const csv = tmpFile('data.jsonl', 'prompt,response\nhello,world\n');
  await assert.rejects(inspectFile(csv), (e: Error) => {
    assert.ok(e.message.startsWith(`${csv}: no line is JSON; line 1 looks like a CSV header ("prompt,response")`), e.message);
    assert.match(e.message, /Convert it to JSON Lines/);
    return true;
  });

  const tok = tmpFile('tok.jsonl', '{"input_ids": [1, 2], "loss_mask": [0, 1]}\n{"input_ids": [3], "loss_mask": [1]}\n');
  await assert.rejects(inspectFile(tok), (e: Error) => {
    assert.ok(e.message.startsWith(`${tok}: the rows are already tokenized (2/2 rows have "input_ids")`), e.message);
    return true;
  });

  const keys = tmpFile('keys.jsonl', '{"foo": 1, "bar": 2}\n');
  await assert.rejects(inspectFile(keys), (e: Error) => {
    assert.ok(e.message.startsWith(`${keys}: no recognizable conversational record in 1 rows; rows have the keys foo (1), bar (1).`), e.message);
    return true;
  });

  const missing = path.join(os.tmpdir(), 'e3p-missing-dir', 'gone.jsonl');
  await assert.rejects(inspectFile(missing), (e: Error) => e.message.includes(missing));
});

test('recognized rows that are all errored do not throw: they are listed as skipped', async () => {
  const file = tmpFile('err.jsonl', JSON.stringify({ messages: [{ role: 'narrator', content: 'x' }] }) + '\n');
  const r = await inspectFile(file);
  assert.deepEqual(r.records, []);
  assert.equal(r.skipped.length, 1);
  assert.equal(r.skipped[0].reason, 'errored');
});

test('eagle3prep.jsonc with roleAliases, fieldMappings and mappings: all three apply through inspectFile', async () => {
  const dir = tempDir('e3p-inspect-config-');
  fs.writeFileSync(
    path.join(dir, 'eagle3prep.jsonc'),
    `{
  // project config (projectConfig.ts)
  "roleAliases": { "Narrator": "assistant", "patron": "user" },
  "fieldMappings": { "chat": "messages" },
  // field mapping (formats/mapping.ts)
  "mappings": [{ "files": "support.jsonl", "turns": "dialogue", "role": "speaker", "content": "utterance", "roles": { "customer": "user" } }],
}`,
  );
  // Matched by the mapping entry; "narrator" is not in its roles, the project's role alias reads it.
  const support = path.join(dir, 'support.jsonl');
  fs.writeFileSync(
    support,
    JSON.stringify({
      ticket: 't1',
      dialogue: [
        { speaker: 'customer', utterance: 'Hi?' },
        { speaker: 'narrator', utterance: 'Hello.' },
      ],
    }) + '\n',
  );
  // Not matched by the mapping: fieldMappings renames "chat", roleAliases reads "patron" / "Narrator".
  const chat = path.join(dir, 'chat.jsonl');
  fs.writeFileSync(
    chat,
    JSON.stringify({
      id: 'c1',
      chat: [
        { role: 'patron', content: 'Q' },
        { role: 'Narrator', content: 'A' },
      ],
    }) + '\n',
  );

  const a = await inspectFile(support);
  assert.deepEqual(a.skipped, []);
  assert.equal(a.records.length, 1);
  assert.equal(a.records[0].shape, 'mapped');
  assert.deepEqual(
    a.records[0].messages.map((m) => [m.role, m.content]),
    [
      ['user', 'Hi?'],
      ['assistant', 'Hello.'],
    ],
  );

  const b = await inspectFile(chat);
  assert.deepEqual(b.skipped, []);
  assert.equal(b.format, 'openai-messages');
  assert.equal(b.records[0].id, 'c1');
  assert.deepEqual(
    b.records[0].messages.map((m) => [m.role, m.content]),
    [
      ['user', 'Q'],
      ['assistant', 'A'],
    ],
  );
});
