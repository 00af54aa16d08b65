import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeRow } from '../../src/core/formats/normalize';
import { scanRowProblems } from '../../src/core/run/editor/rowProblems';
import { writeJsonl } from '../helpers';

// An unknown role is an error that carries the role as written and its 0-based turn, whatever the
// shape's message says around it (a preference row prefixes "chosen": …), so no reader parses the message.

test('an unknown role carries its role and turn on the errored outcome, in every shape that reads turns', () => {
  const src = { file: 'd.jsonl', line: 1 };
  const chat = normalizeRow(
    {
      messages: [
        { role: 'user', content: 'q' },
        { role: 'narrator', content: 'x' },
        { role: 'assistant', content: 'a' },
      ],
    },
    src,
    'd',
  );
  assert.equal(chat.kind, 'errored');
  assert.deepEqual(chat.kind === 'errored' && [chat.code, chat.role, chat.turn], ['unknown_role', 'narrator', 1]);

  const pref = normalizeRow(
    {
      chosen: [
        { role: 'user', content: 'q' },
        { role: 'Narrator "N"', content: 'a' },
      ],
      rejected: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'b' },
      ],
    },
    src,
    'd',
  );
  assert.equal(pref.kind, 'errored');
  assert.ok(pref.kind === 'errored' && !pref.message.startsWith('unknown role'), 'the message is prefixed by the field');
  assert.deepEqual(pref.kind === 'errored' && [pref.code, pref.role, pref.turn], ['unknown_role', 'Narrator "N"', 1]);

  const missing = normalizeRow({ messages: [{ content: 'q' }, { role: 'assistant', content: 'a' }] }, src, 'd');
  assert.deepEqual(missing.kind === 'errored' && [missing.code, missing.role, missing.turn], ['missing_role', undefined, undefined]);
});

test('the Problems scan names the unknown role of a preference row (its message does not start with "unknown role")', async () => {
  const f = writeJsonl([
    {
      chosen: [
        { role: 'user', content: 'q' },
        { role: 'narrator', content: 'a' },
      ],
      rejected: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'b' },
      ],
    },
  ]);
  const r = await scanRowProblems(f);
  assert.deepEqual(
    r.problems.map((p) => [p.line, p.code, p.role]),
    [[1, 'unknown_role', 'narrator']],
  );
});
