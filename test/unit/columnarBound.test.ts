/**
 * A columnar JSON document (issue 25 item 7): `{"messages": [[turns of conversation 0], [turns of 1], …]}`, 1.6 MB,
 * generated here. Reading it (inspect) and preparing it are bounded in time: without a blow-up (under 60 s each), and linear in its size
 * (a quarter of the document takes about a quarter of the time), not the minutes a quadratic path would take.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir, writeJsonl } from '../helpers';

/** Writes `{"messages": [...]}` with as many two-turn conversations as fit in `bytes`; returns the path and the count. */
function columnar(dir: string, name: string, bytes: number): { file: string; count: number } {
  const convs: unknown[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const c = [
      { role: 'user', content: `Question ${i}: how do I sort a list of ${i % 97} items in Python?` },
      { role: 'assistant', content: `Use sorted(items) for list ${i}; it returns a new list and keeps the original.` },
    ];
    convs.push(c);
    size += JSON.stringify(c).length + 1;
  }
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ messages: convs }));
  return { file, count: convs.length };
}

test('a 1.6 MB columnar {"messages": [[...], ...]} document: inspect and prepare finish without a blow-up (under 60 s), every conversation written, time linear in size', async () => {
  const dir = tempDir();
  const big = columnar(dir, 'columns.json', 1.6e6);
  const quarter = columnar(dir, 'quarter.json', 0.4e6);
  const KW = { enable_thinking: false };
  // Warm up (tokenizer and template check are loaded once per process), so the timings below are the document's own.
  await prepare({
    inputs: [
      writeJsonl(
        [
          {
            messages: [
              { role: 'user', content: 'hi' },
              { role: 'assistant', content: 'hello' },
            ],
          },
        ],
        'w.jsonl',
        dir,
      ),
    ],
    outDir: join(dir, 'w'),
    workers: 1,
    templateKwargs: KW,
  });

  let t0 = Date.now();
  const ins = await inspectFile(big.file);
  const inspectMs = Date.now() - t0;
  assert.equal(ins.records.length, big.count);

  t0 = Date.now();
  const q = await prepare({ inputs: [quarter.file], outDir: join(dir, 'q'), workers: 1, templateKwargs: KW });
  const quarterMs = Date.now() - t0;
  t0 = Date.now();
  const r = await prepare({ inputs: [big.file], outDir: join(dir, 'out'), workers: 1, templateKwargs: KW });
  const prepareMs = Date.now() - t0;
  console.log(`${big.count} conversations: inspect ${inspectMs} ms, prepare ${prepareMs} ms; a quarter of it (${quarter.count}): prepare ${quarterMs} ms`);
  assert.ok(q.ok && r.ok, r.failures.join('\n'));
  assert.equal(r.totals.recordsWritten, big.count);
  // Not a speed target (those live in `npm run bench`): a bound that only a blow-up in the document's size
  // (a quadratic pass over the columns) crosses, even on a loaded 2-core machine (14 s seen there, ~3 s idle).
  assert.ok(inspectMs < 60_000, `inspect ${inspectMs} ms`);
  assert.ok(prepareMs < 60_000, `prepare ${prepareMs} ms`);
  // Linear: four times the conversations cost at most about four times the time (8x with slack for a loaded machine).
  assert.ok(prepareMs < 8 * quarterMs + 1000, `prepare ${prepareMs} ms for ${big.count}, ${quarterMs} ms for ${quarter.count}`);
});
