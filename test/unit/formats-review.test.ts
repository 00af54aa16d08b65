/**
 * Found by a fresh-eyes review of issue 20's readers (synthetic rows):
 * - strings that each open with a speaker marker (`User: …`, `Assistant: …`) are read by their markers under
 *   every key, also the keys of layouts that alternate plain strings (UltraChat `data`, LIMA `conversations`)
 *   and MT-bench `turns`: the marker never trained as text, a role never flipped, answers never made questions;
 * - a list of short answers named like answers with scores (per item or a parallel list) is read as answers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { writeJsonl } from '../helpers';

const turns = (r: Awaited<ReturnType<typeof inspectFile>>) => r.records.map((x) => x.messages.map((m) => [m.role, m.content]));

test('speaker-marked strings are read by their markers under turns, conversations and data; plain strings keep their layouts', async () => {
  const file = writeJsonl(
    [
      { turns: ['User: what is x?', 'Assistant: x is a letter.'] },
      { conversations: ['Human: hi', 'Assistant: hello'] },
      { data: ['User: hi', 'Assistant: hello'] },
      { conversations: ['Assistant: I greet first', 'User: hi', 'Assistant: welcome'] },
      { turns: ['What is x?', 'And y?'] },
      { conversations: ['hi', 'hello'] },
    ],
    'marked.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), [
    [
      ['user', 'what is x?'],
      ['assistant', 'x is a letter.'],
    ],
    [
      ['user', 'hi'],
      ['assistant', 'hello'],
    ],
    [
      ['user', 'hi'],
      ['assistant', 'hello'],
    ],
    [
      ['assistant', 'I greet first'],
      ['user', 'hi'],
      ['assistant', 'welcome'],
    ],
    [
      ['user', 'What is x?'],
      ['user', 'And y?'],
    ],
    [
      ['user', 'hi'],
      ['assistant', 'hello'],
    ],
  ]);
  assert.deepEqual(
    r.records.map((x) => x.notes?.includes('speaker_markers_split') ?? false),
    [true, true, true, true, false, false],
  );
});

test('short answers with scores are answers (the best trained); without a score a short answers list stays unread (a label is not trained)', async () => {
  const file = writeJsonl(
    [
      { prompt: 'Capital of Italy?', responses: ['Rome', 'Milan'], scores: [1, 0] },
      {
        prompt: 'Capital of Spain?',
        completions: [
          { text: 'Madrid', score: 1 },
          { text: 'Seville', score: 0 },
        ],
      },
      { question: 'Who won?', answers: ['Denver Broncos', 'Broncos'] },
    ],
    'short.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), [
    [
      ['user', 'Capital of Italy?'],
      ['assistant', 'Rome'],
    ],
    [
      ['user', 'Capital of Spain?'],
      ['assistant', 'Madrid'],
    ],
    [['user', 'Who won?']],
  ]);
  assert.deepEqual(
    r.records.map((x) => x.needs_generation),
    [false, false, true],
  );
});

test('an answers list beside a label-like answer field: the list is the answer, the label is not trained', async () => {
  const file = writeJsonl(
    [
      { prompt: 'What is 7+7?', responses: ['Fourteen.'], answer: '14' },
      { question: '2+2?', answer: '4' },
    ],
    'label.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), [
    [
      ['user', 'What is 7+7?'],
      ['assistant', 'Fourteen.'],
    ],
    [
      ['user', '2+2?'],
      ['assistant', '4'],
    ],
  ]);
  assert.deepEqual(r.records[0].notes, ['short_label_not_trained']);
});
