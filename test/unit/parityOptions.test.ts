// The hover and the mask view (RecordViewer) against prepare, with non-default options: every record
// the view calls written (or cut) is exactly a record prepare writes (id, line, ids, mask), in order,
// and nothing else is written; with --long split the views show prepare's pieces, and on rows answered by `generate`
// the generated token ids. The default-options parity is in recordView.test.ts; every row's verdict with
// non-default options, over the samples, fixtures and real files, in rowVerdictParity.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { recordViewerFor } from '../../src/core/records/recordViewer';
import type { RecordViewOptions } from '../../src/core/records/recordViewTypes';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { normalizeRow } from '../../src/core/formats/normalize';
import { RecordBuilder } from '../../src/core/records/recordBuilder';
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
  { name: 'max length 300, long split', run: { maxLength: 300, long: 'split' }, view: { maxLength: 300, long: 'split' } },
  {
    name: 'max length 512, long split, mask last-assistant, merged, reasoning drop, min trainable 40',
    run: { maxLength: 512, long: 'split', mask: 'last-assistant', grouping: 'merged', reasoning: 'drop', minTrainableTokens: 40 },
    view: { maxLength: 512, long: 'split', mask: 'last-assistant', grouping: 'merged', reasoning: 'drop', minTrainableTokens: 40 },
  },
];

const rowsOf = (f: string): string[] => readFileSync(join(SAMPLES, f), 'utf8').split('\n');

for (const c of CASES) {
  test(`views decide what prepare writes: ${c.name}`, async () => {
    let written = 0;
    let notWritten = 0;
    let pieces = 0;
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
          if (v.warnings.some((w) => w.code === 'split_into_records')) pieces++;
          // The detail's turns are the row's (a piece of --long split holds some of them, renumbered back).
          for (const tr of d.turnRanges) assert.equal(tr.role, v.turns[tr.turn].role, `${f}:${i + 1} record ${d.index}: turn ${tr.turn}`);
          for (const t of rec.targets)
            assert.ok(
              d.turnRanges.some((tr) => tr.turn === t),
              `${f}:${i + 1} record ${d.index}: target turn ${t} in the detail`,
            );
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
    if (c.run.long === 'split') assert.ok(pieces > 0, `${c.name}: the views show records split as prepare splits them (it tests the split)`);
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

/**
 * Rows as `generate` writes them (OpenAI messages with `generation.turns[k].token_ids`, records/generatedIds.ts), made from
 * the chat and reasoning samples: each trained turn gets ids that decode to its span but split it where re-tokenizing
 * does not (the first turn of a row), or ids of another text (the second), or none (the rest).
 */
function generatedRows(): object[] {
  const tok = viewer.tokenizer;
  const builder = new RecordBuilder(tok);
  const rows: object[] = [];
  for (const f of ['chat-sharegpt-human-gpt.jsonl', 'reasoning-sharegpt.jsonl']) {
    rowsOf(f).forEach((text, i) => {
      if (!text.trim()) return;
      const o = normalizeRow(JSON.parse(text), { file: f, line: i + 1 }, f);
      if (o.kind !== 'conversation') return;
      const conv = o.conversation;
      const b = builder.build(conv, {});
      if (b.kind !== 'built') return;
      const turns: { message_index: number; token_ids?: number[] }[] = [];
      for (const rec of b.built.records)
        rec.spans.forEach(([a, z], k) => {
          const span = rec.text.slice(a, z);
          const cut = span.indexOf(' ') > 0 ? span.indexOf(' ') + 2 : 1;
          const n = turns.length;
          const ids =
            n === 0 ? [...tok.encode(span.slice(0, cut)).ids, ...tok.encode(span.slice(cut)).ids] : n === 1 ? tok.encode(`${span} (edited)`).ids : undefined;
          turns.push({ message_index: rec.targets[k], ...(ids ? { token_ids: ids } : {}) });
        });
      const messages = conv.messages.map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.reasoning_content ? { reasoning_content: m.reasoning_content } : {}),
      }));
      rows.push({ id: `gen-${conv.id}`, messages, generation: { turns } });
    });
  }
  return rows;
}

test('rows answered by generate: the views use the generated ids where prepare does, and re-tokenize where it does', async () => {
  const file = writeJsonl(generatedRows(), 'generated.jsonl');
  const res = await prepare({ inputs: [file], outDir: tempDir('e3p-parity-') });
  assert.equal(res.ok, true, res.failures.join('; '));
  const out = readFileSync(res.outputs.tokenizedData, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TokenizedRecord);
  const sources = new Set(out.map((r) => (r as TokenizedRecord & { ids_source?: string }).ids_source));
  assert.ok(sources.has('generated') && sources.has('retokenized'), `both kinds of record: ${[...sources].join(', ')}`);
  const fromViews = readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, i) => (text.trim() ? allRecordViews(viewer, text, file, i + 1) : []))
    .map((v) => {
      const d = v.detail!;
      return [v.records[d.index].id, d.tokens.map((t) => t.id), d.tokens.map((t) => (t.trainable ? 1 : 0))];
    });
  assert.deepEqual(
    fromViews,
    out.map((r) => [r.id, r.input_ids, r.loss_mask]),
  );
  // A generated token's text is where its ids decode: the detail still tiles the record's text.
  for (const v of readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(0, 2)
    .map((text, i) => viewer.view({ text, file, line: i + 1 }, { detailRecord: 0 }))) {
    const starts = v.detail!.tokens.map((t) => t.start);
    assert.deepEqual(
      starts,
      [...starts].sort((a, b) => a - b),
    );
  }
});

test('--long split and the work cap: below it the view shows the pieces; past it the records over the max length are marked split, counted within the cap', () => {
  const file = join(SAMPLES, 'agentic-trajectories.jsonl');
  const text = rowsOf('agentic-trajectories.jsonl')[0];
  const exact = viewer.view({ text, file, line: 1 }, { maxLength: 300, long: 'split' });
  assert.equal(exact.totals.estimated, false);
  assert.ok(exact.warnings.some((w) => w.code === 'split_into_records'));
  assert.ok(
    exact.records.every((r) => r.fate === 'written' && r.tokens <= 300),
    'every piece fits',
  );
  assert.equal(exact.verdict.fate === 'written' && exact.verdict.records, exact.records.length);
  const capped = viewer.view({ text, file, line: 1 }, { maxLength: 300, long: 'split', maxTokenizedChars: 2000 });
  assert.equal(capped.totals.estimated, true);
  const split = capped.records.filter((r) => r.fate === 'split');
  assert.ok(split.length > 0 && split.every((r) => r.tokens > 300));
  // Past the cap no piece is built: one split_into_records warning per record over the max length, none for pieces.
  assert.deepEqual(capped.warnings.filter((w) => w.code === 'split_into_records').length, split.length);
});
