import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { detectFormat } from '../../src/core/formats/detect';

const SAMPLES = path.join(__dirname, '..', '..', 'samples');

function sample(name: string): unknown[] {
  return fs
    .readFileSync(path.join(SAMPLES, name), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

test('agentic-trajectories: openai-messages, system_prompt filling a null system turn', () => {
  assert.deepEqual(detectFormat(sample('agentic-trajectories.jsonl')), {
    format: 'openai-messages',
    evidence: [
      '3/3 rows have "messages": list of {role, content}',
      'roles seen: system, user, assistant',
      '3/3 rows: "system_prompt" top-level field used as system message (system turn content is null)',
      '3/3 rows: conversation ends with a user turn (trailing turns are context only)',
    ],
  });
});

test('chat-sharegpt-human-gpt: sharegpt with source role spellings', () => {
  assert.deepEqual(detectFormat(sample('chat-sharegpt-human-gpt.jsonl')), {
    format: 'sharegpt',
    evidence: ['3/3 rows have "conversations": list of {from, value}', 'roles seen: system, human, gpt'],
  });
});

test('reasoning-sharegpt: sharegpt with a top-level system field', () => {
  const d = detectFormat(sample('reasoning-sharegpt.jsonl'));
  assert.equal(d.format, 'sharegpt');
  assert.deepEqual(d.evidence, [
    '3/3 rows have "conversations": list of {from, value}',
    'roles seen: user, assistant',
    '3/3 rows: <|begin_of_thought|>…<|end_of_thought|> split into reasoning_content, <|begin_of_solution|>…<|end_of_solution|> kept as content',
    '3/3 rows: "system" top-level field used as system message (no system turn in the list)',
  ]);
});

test('swe-agent-trajectory-field: role-text-trajectory under "trajectory"', () => {
  const d = detectFormat(sample('swe-agent-trajectory-field.jsonl'));
  assert.equal(d.format, 'role-text-trajectory');
  assert.equal(d.evidence[0], '2/2 rows have "trajectory": list of {role, text}');
  assert.equal(d.evidence[1], 'roles seen: system, user, ai');
});

test('prompts-only: prompt-only, evidence lists both row kinds', () => {
  assert.deepEqual(detectFormat(sample('prompts-only.jsonl')), {
    format: 'prompt-only',
    evidence: [
      '3/4 rows have "prompt": string, no response field',
      '1/4 rows have "messages": list of {role, content}',
      'roles seen: user',
      '4/4 rows have no assistant turn: prompts for the target model to answer first',
    ],
  });
});

test('mixed: conversations of different shapes', () => {
  const d = detectFormat([
    {
      messages: [
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ],
    },
    {
      conversations: [
        { from: 'human', value: 'u' },
        { from: 'gpt', value: 'a' },
      ],
    },
    { prompt: 'p' },
  ]);
  assert.equal(d.format, 'mixed');
  assert.deepEqual(d.evidence.slice(0, 3), [
    '1/3 rows have "messages": list of {role, content}',
    '1/3 rows have "conversations": list of {from, value}',
    '1/3 rows have "prompt": string, no response field',
  ]);
});

test('openai rows where some lack an assistant turn stay openai-messages, with a count of prompts', () => {
  const d = detectFormat([
    {
      messages: [
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
      ],
    },
    { messages: [{ role: 'user', content: 'u' }] },
  ]);
  assert.equal(d.format, 'openai-messages');
  assert.ok(d.evidence.includes('1/2 rows have no assistant turn: prompts for the target model to answer first'), d.evidence.join(' | '));
});

test('unknown: names the keys found, and says when rows are already tokenized', () => {
  const d = detectFormat([
    { input_ids: [1, 2, 3], attention_mask: [1, 1, 1] },
    { input_ids: [4], attention_mask: [1] },
  ]);
  assert.equal(d.format, 'unknown');
  assert.deepEqual(d.evidence, [
    '2/2 rows match no known shape (keys: input_ids (2), attention_mask (2))',
    'rows with "input_ids" are already tokenized; give the untokenized chat data instead',
  ]);
  assert.deepEqual(detectFormat([1, 'x']).evidence, ['2/2 rows match no known shape (1 is a JSON number; 1 is a JSON string)']);
  assert.equal(detectFormat([]).format, 'unknown');
});

test('errors and unknown roles surface in the evidence', () => {
  const d = detectFormat([
    {
      conversations: [
        { from: 'human', value: 'u' },
        { from: 'narrator', value: 'x' },
      ],
    },
    {
      conversations: [
        { from: 'human', value: 'u' },
        { from: 'gpt', value: 'a' },
      ],
    },
  ]);
  assert.equal(d.format, 'sharegpt');
  assert.ok(d.evidence.includes('roles seen: human, narrator, gpt'));
  assert.ok(
    d.evidence.some((e) => e.startsWith('1/2 rows errored (first: unknown role "narrator" in message 2')),
    d.evidence.join(' | '),
  );
});

test('only the first 50 rows are looked at', () => {
  const conv = {
    messages: [
      { role: 'user', content: 'u' },
      { role: 'assistant', content: 'a' },
    ],
  };
  const rows = [...Array.from({ length: 50 }, () => conv), { prompt: 'late' }];
  assert.deepEqual(detectFormat(rows).evidence[0], '50/50 rows have "messages": list of {role, content}');
});
