/** The samples round-trip: prepare → prompts_to_generate.jsonl → generate (fake server) → prepare yields records for every prompt. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { expandInputs } from '../../src/core/run/inputs/inputs';
import { generate } from '../../src/core/generate/run';
import { startFakeServer } from '../support/fakeOpenAIServer';
import { tempDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const jsonl = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

test('samples: prepare → generate → prepare yields a record for every prompt', async () => {
  const srv = await startFakeServer({ reasoning: true, latencyMs: 2 });
  try {
    const first = await prepare({ inputs: expandInputs([join(ROOT, 'samples')]), outDir: tempDir() });
    assert.equal(first.ok, true, first.failures.join('; '));
    const prompts = jsonl(first.outputs.promptsToGenerate);
    assert.ok(prompts.length >= 4, `${prompts.length} prompts`);
    assert.equal(prompts.length, first.totals.rowsSetAside);

    const gen = await generate({ input: first.outputs.promptsToGenerate, servers: [srv.url], fsyncIntervalMs: 0 }, {});
    assert.equal(gen.ok, true, gen.failures.join('; '));
    assert.equal(gen.generated, prompts.length);
    const rows = jsonl(gen.out);
    // id and source of the original dataset row are kept.
    for (const p of prompts) {
      const row = rows.find((r) => r.id === p.id);
      assert.ok(row, `no generated row for ${p.id}`);
      assert.deepEqual(row.source, p.source);
      assert.deepEqual(row.messages.slice(0, -1), p.messages);
      assert.equal(row.messages.at(-1).role, 'assistant');
      assert.match(row.messages.at(-1).content, /^answer to: /);
      assert.match(row.messages.at(-1).reasoning_content, /^thinking about: /);
    }

    const second = await prepare({ inputs: [gen.out], outDir: tempDir() });
    assert.equal(second.ok, true, second.failures.join('; '));
    const f = second.files[0];
    assert.equal(f.format, 'openai-messages');
    assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [prompts.length, prompts.length, 0, 0, 0]);
    const recIds = new Set(jsonl(second.outputs.tokenizedData).map((r) => String(r.id).replace(/#\d+$/, '')));
    assert.deepEqual([...recIds].sort(), prompts.map((p) => p.id).sort());
  } finally {
    await srv.close();
  }
});
