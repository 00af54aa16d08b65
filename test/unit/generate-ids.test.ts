/** prepare on generate output: the generated token ids replace re-tokenized answers when they decode to the same text; otherwise the record is marked retokenized. Real Qwen3 tokenizer. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { generatedTurnsOf } from '../../src/core/records/generatedIds';
import { lenmlModelDir, tempDir, writeJsonl } from '../helpers';

const QWEN = lenmlModelDir('qwen3');
const tok = loadTokenizer(QWEN);
const messages = [
  { role: 'user', content: 'hi' },
  { role: 'assistant', content: 'Hello there' },
];

async function run(rows: object[]) {
  const r = await prepare({ inputs: [writeJsonl(rows)], outDir: tempDir(), tokenizerDir: QWEN });
  assert.equal(r.ok, true, r.failures.join('; '));
  return {
    rep: r.files[0],
    recs: readFileSync(r.outputs.tokenizedData, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  };
}

test('generated ids are used when they decode to the trained span; records are marked', async () => {
  const plain = (await run([{ id: 'g', messages }])).recs[0];
  assert.equal(plain.ids_source, undefined);
  const firstResp = plain.loss_mask.indexOf(1);
  const nResp = plain.n_response_tokens;
  const spanIds: number[] = plain.input_ids.slice(firstResp, firstResp + nResp);
  const spanText = tok.decode(spanIds);
  assert.match(spanText, /Hello there<\|im_end\|>$/);
  // The model sampled "Hel" + "lo" where re-tokenizing gives "Hello": a non-canonical split.
  const cut = spanText.indexOf('Hello') + 3;
  const generated = [...tok.encode(spanText.slice(0, cut)).ids, ...tok.encode(spanText.slice(cut)).ids];
  assert.notDeepEqual(generated, spanIds);
  assert.equal(tok.decode(generated), spanText);

  const { rep, recs } = await run([{ id: 'g', messages, generation: { turns: [{ message_index: 1, token_ids: generated }] } }]);
  const rec = recs[0];
  assert.equal(rec.ids_source, 'generated');
  assert.deepEqual(rec.input_ids, [...plain.input_ids.slice(0, firstResp), ...generated, ...plain.input_ids.slice(firstResp + nResp)]);
  assert.deepEqual(rec.loss_mask, [...plain.loss_mask.slice(0, firstResp), ...generated.map(() => 1), ...plain.loss_mask.slice(firstResp + nResp)]);
  assert.equal(rec.n_response_tokens, generated.length);
  assert.equal(rec.seq_len, rec.input_ids.length);
  assert.equal(rep.notes.generated_token_ids_used, 1);
});

test('ids that do not decode to the rendered turn, or no ids: re-tokenized and marked with the reason', async () => {
  const plain = (await run([{ id: 'g', messages }])).recs[0];
  const { rep, recs } = await run([
    { id: 'a', messages, generation: { turns: [{ message_index: 1, token_ids: tok.encode('Something else<|im_end|>').ids }] } },
    { id: 'b', messages, generation: { turns: [{ message_index: 1 }] } },
  ]);
  assert.deepEqual(
    recs.map((r) => r.ids_source),
    ['retokenized', 'retokenized'],
  );
  assert.deepEqual(recs[0].input_ids, plain.input_ids);
  assert.deepEqual(recs[0].loss_mask, plain.loss_mask);
  assert.deepEqual(rep.notes, { ...rep.notes, retokenized_text_differs: 1, retokenized_no_token_ids: 1 });
  assert.equal(generatedTurnsOf({ generation: {} }), undefined);
});
