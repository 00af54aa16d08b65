// The hover and the mask view (RecordViewer) against prepare, with non-default options: every record
// the view calls written (or cut) is exactly a record prepare writes (id, line, ids, mask), in order,
// and nothing else is written. The default-options parity is in recordView.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { recordViewerFor } from '../../src/core/records/recordViewer';
import type { RecordViewOptions } from '../../src/core/records/recordViewTypes';
import { prepare } from '../../src/core/run/pipeline';
import type { PrepareOptions } from '../../src/core/run/contract';
import type { TokenizedRecord } from '../../src/core/types';
import { allRecordViews, tempDir, writeJsonl } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');
const FILES = ['chat-sharegpt-human-gpt.jsonl', 'agentic-trajectories.jsonl', 'reasoning-sharegpt.jsonl'];
const viewer = recordViewerFor(undefined); // embedded Qwen3

const CASES: { name: string; run: Partial<PrepareOptions>; view: RecordViewOptions }[] = [
  { name: 'merged grouping', run: { grouping: 'merged' }, view: { grouping: 'merged' } },
  { name: 'mask non-system', run: { mask: 'non-system' }, view: { mask: 'non-system' } },
  { name: 'mask last-assistant', run: { mask: 'last-assistant' }, view: { mask: 'last-assistant' } },
  { name: 'reasoning drop', run: { reasoning: 'drop' }, view: { reasoning: 'drop' } },
  { name: 'min trainable tokens 20', run: { minTrainableTokens: 20 }, view: { minTrainableTokens: 20 } },
  { name: 'max length 300, long drop', run: { maxLength: 300, long: 'drop' }, view: { maxLength: 300, long: 'drop' } },
  { name: 'max length 300, long truncate', run: { maxLength: 300, long: 'truncate' }, view: { maxLength: 300, long: 'truncate' } },
];

const rowsOf = (f: string): string[] => readFileSync(join(SAMPLES, f), 'utf8').split('\n');

for (const c of CASES) {
  test(`views decide what prepare writes: ${c.name}`, async () => {
    let written = 0;
    let notWritten = 0;
    for (const f of FILES) {
      const file = join(SAMPLES, f);
      const res = await prepare({ inputs: [file], outDir: tempDir('e3p-parity-'), ...c.run, allowEmpty: true });
      const out: TokenizedRecord[] = readFileSync(res.outputs.tokenizedData, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as TokenizedRecord);
      const expected: [string, number, number[], number[]][] = [];
      rowsOf(f).forEach((text, i) => {
        if (!text.trim()) return;
        for (const v of allRecordViews(viewer, text, file, i + 1, c.view)) {
          const d = v.detail;
          if (!d) continue;
          const rec = v.records[d.index];
          if (rec.fate !== 'written' && rec.fate !== 'truncated') {
            notWritten++;
            continue;
          }
          const keep = rec.fate === 'truncated' ? c.view.maxLength! : d.tokens.length;
          expected.push([rec.id, i + 1, d.tokens.slice(0, keep).map((t) => t.id), d.tokens.slice(0, keep).map((t) => (t.trainable ? 1 : 0))]);
        }
      });
      written += out.length;
      assert.deepEqual(
        expected,
        out.map((r) => [r.id, r.source.line, r.input_ids, r.loss_mask]),
        `${f} with ${c.name}: the views' written records differ from tokenized_data.jsonl`,
      );
    }
    assert.ok(written > 0, `${c.name}: something is written`);
    if (c.run.minTrainableTokens || c.run.long === 'drop') assert.ok(notWritten > 0, `${c.name}: the case drops some records (it tests the drop)`);
  });
}

test('a line that is a bare list of turns (XTuner-style OpenAI rows) is the same conversation in the view as in prepare', async () => {
  const convs = [
    [
      { role: 'system', content: 'You answer in one sentence.' },
      { role: 'user', content: 'What is the capital of France?' },
      { role: 'assistant', content: 'Paris is the capital of France.' },
    ],
    [
      { role: 'user', content: 'Name a prime number above 10.' },
      { role: 'assistant', content: 'Eleven is a prime number above ten.' },
    ],
  ];
  const file = writeJsonl(convs, 'list-rows.jsonl');
  const res = await prepare({ inputs: [file], outDir: tempDir('e3p-parity-') });
  const out = readFileSync(res.outputs.tokenizedData, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TokenizedRecord);
  assert.equal(out.length, 2);
  const lines = readFileSync(file, 'utf8').split('\n');
  const fromViews = [0, 1].flatMap((i) =>
    allRecordViews(viewer, lines[i], file, i + 1).map((v) => [
      v.status,
      v.records[v.detail!.index].id,
      v.detail!.tokens.map((t) => t.id),
      v.detail!.tokens.map((t) => (t.trainable ? 1 : 0)),
    ]),
  );
  assert.deepEqual(
    fromViews,
    out.map((r) => ['conversation', r.id, r.input_ids, r.loss_mask]),
  );
});

test('a line holding a list of row objects: the view shows the first row and says the line holds several', () => {
  const row = (q: string, a: string) => ({
    messages: [
      { role: 'user', content: q },
      { role: 'assistant', content: a },
    ],
  });
  const text = JSON.stringify([row('One?', 'One.'), row('Two?', 'Two.')]);
  const v = viewer.view({ text, file: '/nowhere/rows.jsonl', line: 1 });
  assert.equal(v.status, 'conversation');
  assert.deepEqual(
    v.turns.map((t) => [t.role, t.chars]),
    [
      ['user', 4],
      ['assistant', 4],
    ],
  );
  assert.deepEqual(
    v.warnings.filter((w) => w.code === 'line_holds_rows').map((w) => w.message),
    ['line 1 holds 2 rows (a list of objects): the view shows the first; prepare reads each as its own row'],
  );
});
