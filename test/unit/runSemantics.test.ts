/**
 * Run-level guarantees across the merged features: a failed run leaves the
 * output folder as it was; an empty eagle3prep.jsonc is no mapping; a field
 * mapping keeps what `generate` added; merge-reports never writes into a
 * shard's own folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyMapping } from '../../src/core/formats/mapping';
import { mergeReports } from '../../src/core/run/jobs/mergeReports';
import { MergeError } from '../../src/core/run/jobs/shardOutputs';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir, writeJsonl } from '../helpers';

const chat = (i: number) => ({
  messages: [
    { role: 'user', content: `q${i}` },
    { role: 'assistant', content: `a${i}` },
  ],
});

test('a failed run leaves the previous tokenized_data.jsonl, prompts and report untouched', async () => {
  const dir = tempDir();
  const good = writeJsonl([chat(1), chat(2)], 'good.jsonl', dir);
  const out = join(dir, 'out');
  const first = await prepare({ inputs: [good], outDir: out, workers: 1 });
  assert.equal(first.ok, true);
  const before = ['data/tokenized_data.jsonl', 'prompts_to_generate.jsonl', 'report.json'].map((f) => readFileSync(join(out, f), 'utf8'));
  assert.equal(before[0].trim().split('\n').length, 2);
  const empty = join(dir, 'empty.jsonl');
  writeFileSync(empty, '');
  const second = await prepare({ inputs: [empty], outDir: out, workers: 1 });
  assert.equal(second.ok, false);
  assert.match(second.failures.join('\n'), /empty\.jsonl: no record written/);
  const after = ['data/tokenized_data.jsonl', 'prompts_to_generate.jsonl', 'report.json'].map((f) => readFileSync(join(out, f), 'utf8'));
  assert.deepEqual(after, before);
});

test('an eagle3prep.jsonc holding only a comment is no configuration, not an error', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '// project config\n');
  const file = writeJsonl([chat(1)], 'd.jsonl', dir);
  const r = await prepare({ inputs: [file], outDir: join(dir, 'o'), workers: 1 });
  assert.equal(r.ok, true, r.failures.join('; '));
  assert.equal(r.totals.recordsWritten, 1);
});

test('a field mapping keeps the generation block that generate wrote (its token ids)', () => {
  const generation = { model: 'm', outcome: 'ok', turns: [{ message_index: 1, token_ids: [1, 2, 3] }] };
  const row = applyMapping(
    { dialogue: [{ speaker: 'user', text: 'hi' }], generation },
    { files: '*', turns: 'dialogue', role: 'speaker', content: 'text' } as never,
    'x#1',
  ) as Record<string, unknown>;
  assert.deepEqual(row.generation, generation);
  assert.deepEqual(row.messages, [{ role: 'user', content: 'hi' }]);
});

test("merge-reports refuses an --out that is one of the shards' folders, and writes nothing there", async () => {
  const dir = tempDir();
  const file = writeJsonl([chat(1), chat(2), chat(3), chat(4)], 'd.jsonl', dir);
  const a = join(dir, 's0');
  const b = join(dir, 's1');
  assert.equal((await prepare({ inputs: [file], outDir: a, workers: 1, shard: { index: 0, count: 2 } })).ok, true);
  assert.equal((await prepare({ inputs: [file], outDir: b, workers: 1, shard: { index: 1, count: 2 } })).ok, true);
  const before = readFileSync(join(a, 'data', 'tokenized_data.jsonl'), 'utf8');
  await assert.rejects(
    mergeReports([a, b], a, { data: true }),
    (e: unknown) => e instanceof MergeError && /output folder of shard 0/.test((e as Error).message),
  );
  assert.equal(readFileSync(join(a, 'data', 'tokenized_data.jsonl'), 'utf8'), before);
  const merged = await mergeReports([a, b], join(dir, 'all'), { data: true });
  assert.equal(merged.totals.recordsWritten, 4);
});

test('rows of a one-line JSON array get distinct ids, sources and order, also across shards', async () => {
  const dir = tempDir();
  const rows = [0, 1, 2, 3, 4].map(chat) as object[];
  rows.push({ prompt: 'p1' }, { prompt: 'p2' });
  const file = join(dir, 'minarr.json');
  writeFileSync(file, JSON.stringify(rows));
  const one = await prepare({ inputs: [file], outDir: join(dir, 'one'), workers: 1 });
  assert.equal(one.ok, true, one.failures.join('; '));
  const recs = readFileSync(join(dir, 'one', 'data', 'tokenized_data.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    recs.map((r) => r.id),
    [0, 1, 2, 3, 4].map((i) => `minarr.json:1[${i}]`),
  );
  assert.deepEqual(
    recs.map((r) => r.source.element),
    [0, 1, 2, 3, 4],
  );
  const prompts = readFileSync(join(dir, 'one', 'prompts_to_generate.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    prompts.map((p) => p.id),
    ['minarr.json:1[5]', 'minarr.json:1[6]'],
  );
  const a = join(dir, 's0');
  const b = join(dir, 's1');
  await prepare({ inputs: [file], outDir: a, workers: 1, shard: { index: 0, count: 2 } });
  await prepare({ inputs: [file], outDir: b, workers: 1, shard: { index: 1, count: 2 } });
  await mergeReports([a, b], join(dir, 'all'), { data: true });
  assert.equal(readFileSync(join(dir, 'all', 'data', 'tokenized_data.jsonl'), 'utf8'), readFileSync(join(dir, 'one', 'data', 'tokenized_data.jsonl'), 'utf8'));
  assert.equal(readFileSync(join(dir, 'all', 'prompts_to_generate.jsonl'), 'utf8'), readFileSync(join(dir, 'one', 'prompts_to_generate.jsonl'), 'utf8'));
});

test('a truncated .jsonl.gz fails naming the file and the damage, and leaves no temporary file', async () => {
  const { gzipSync } = await import('node:zlib');
  const { existsSync } = await import('node:fs');
  const dir = tempDir();
  let text = '';
  for (let i = 0; i < 20000; i++)
    text +=
      JSON.stringify({
        messages: [
          { role: 'user', content: `question ${i} ${(i * 7919) % 10007}` },
          { role: 'assistant', content: `answer ${(i * 104729) % 99991}` },
        ],
      }) + '\n';
  const gz = gzipSync(text);
  const file = join(dir, 'trunc.jsonl.gz');
  writeFileSync(file, gz.subarray(0, gz.length >> 1));
  const out = join(dir, 'out');
  const r = await prepare({ inputs: [file], outDir: out, workers: 1 });
  assert.equal(r.ok, false);
  assert.match(r.failures.join('\n'), /trunc\.jsonl\.gz: cannot read: .*the gzip data is damaged/);
  assert.equal(r.files[0].status, 'failed');
  // The run created the folder and wrote nothing into it: it is gone, temporary files with it.
  assert.equal(existsSync(out), false);
});

test('same-named files of one run into one --out get distinct default ids (their path from the common folder)', async () => {
  const { mkdirSync } = await import('node:fs');
  const dir = tempDir();
  for (const sub of ['a', 'b']) mkdirSync(join(dir, sub));
  const a = writeJsonl([{ prompt: 'x' }, chat(1)], 'data.jsonl', join(dir, 'a'));
  const b = writeJsonl([{ prompt: 'y' }, chat(2)], 'data.jsonl', join(dir, 'b'));
  const other = writeJsonl([chat(3)], 'other.jsonl', join(dir, 'a'));
  const r = await prepare({ inputs: [a, b, other], outDir: join(dir, 'out'), workers: 1 });
  assert.equal(r.ok, true, r.failures.join('; '));
  const ids = (f: string) =>
    readFileSync(join(dir, 'out', f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
  assert.deepEqual(ids('prompts_to_generate.jsonl'), ['a/data.jsonl:1', 'b/data.jsonl:1']);
  assert.deepEqual(ids('data/tokenized_data.jsonl'), ['a/data.jsonl:2', 'b/data.jsonl:2', 'other.jsonl:1']);
});
