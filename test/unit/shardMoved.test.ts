/**
 * Shard folders moved or copied between `prepare --shard` and `merge-reports` (per-node scratch, rsync): the merge
 * reads each shard's outputs from the folder it is given, never from the absolute paths its report recorded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readShardReport } from '../../src/core/run/jobs/mergeReports';
import { MergeError, relocateShardReport } from '../../src/core/run/jobs/shardOutputs';
import type { PrepareResult } from '../../src/core/run/contract';
import { runCli, tempDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const SAMPLES = ['chat-sharegpt-human-gpt.jsonl', 'reasoning-sharegpt.jsonl', 'prompts-only.jsonl'].map((f) => join(ROOT, 'samples', f));

async function cli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const r = await runCli(args, { cwd: ROOT });
  return { code: r.status, stderr: r.stderr };
}

test('shard folders moved and copied elsewhere merge from where they are, never from the paths their reports recorded', async () => {
  const dir = tempDir('eagle3-shard-moved-');
  const single = join(dir, 'single');
  const one = await cli(['prepare', ...SAMPLES, '--format', 'both', '--out', single, '--quiet']);
  assert.equal(one.code, 0, one.stderr);
  for (const i of [0, 1]) {
    const r = await cli(['prepare', ...SAMPLES, '--format', 'both', '--shard', `${i}/2`, '--out', join(dir, 'node', `s${i}`), '--quiet']);
    assert.equal(r.code, 0, r.stderr);
  }
  // Copied to the merge machine; the originals stay where the reports say, but now hold other data
  // (a later job's, here: each shard's records emptied), which a merge reading recorded paths would take.
  cpSync(join(dir, 'node'), join(dir, 'copied'), { recursive: true });
  for (const i of [0, 1]) {
    writeFileSync(join(dir, 'node', `s${i}`, 'data', 'tokenized_data.jsonl'), '');
    rmSync(join(dir, 'node', `s${i}`, 'data', 'tokenized_data.parquet'));
  }
  const copied = [0, 1].map((i) => join(dir, 'copied', `s${i}`));
  const m = await cli(['merge-reports', ...copied, '--data', '--out', join(dir, 'm1')]);
  assert.equal(m.code, 0, m.stderr);
  const text = (p: string) => readFileSync(p, 'utf8');
  assert.equal(text(join(dir, 'm1', 'data', 'tokenized_data.jsonl')), text(join(single, 'data', 'tokenized_data.jsonl')));
  assert.equal(text(join(dir, 'm1', 'prompts_to_generate.jsonl')), text(join(single, 'prompts_to_generate.jsonl')));
  assert.ok(
    text(join(single, 'data', 'tokenized_data.jsonl'))
      .split('\n')
      .filter(Boolean).length > 3,
  );
  // The report read from the copy names the copy's files.
  const r0 = readShardReport(copied[0]);
  assert.equal(r0.outDir, copied[0]);
  assert.equal(r0.outputs.tokenizedDataParquet, join(copied[0], 'data', 'tokenized_data.parquet'));
  assert.equal(r0.tokenCounts, join(copied[0], 'token_counts.json'));
  // Moved (the recorded paths gone): merged the same, also given as report.json files.
  rmSync(join(dir, 'node'), { recursive: true });
  renameSync(join(dir, 'copied'), join(dir, 'moved'));
  const moved = [0, 1].map((i) => join(dir, 'moved', `s${i}`, 'report.json'));
  assert.equal((await cli(['merge-reports', ...moved, '--data', '--out', join(dir, 'm2')])).code, 0);
  assert.equal(text(join(dir, 'm2', 'data', 'tokenized_data.jsonl')), text(join(single, 'data', 'tokenized_data.jsonl')));
  assert.equal(text(join(dir, 'm2', 'token_counts.json')), text(join(single, 'token_counts.json')));
  // A file of the shard missing from its folder: a clear error naming it, and nothing written.
  rmSync(join(dir, 'moved', 's1', 'data', 'tokenized_data.parquet'));
  const bad = await cli(['merge-reports', ...moved, '--data', '--out', join(dir, 'm3')]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /moved\/s1\/data\/tokenized_data\.parquet: missing \(shard 1's report lists its tokenized_data\.parquet\)/);
});

test('a shard report naming an output outside its own output folder is refused, not read', () => {
  const old = join('/', 'scratch', 'node7', 's0');
  const report = {
    outDir: old,
    shard: { index: 0, count: 2 },
    outputs: {
      tokenizedData: join(old, 'data', 'tokenized_data.jsonl'),
      promptsToGenerate: join(old, '..', 'elsewhere', 'prompts_to_generate.jsonl'),
      reportJson: join(old, 'report.json'),
      reportMd: join(old, 'report.md'),
    },
  } as unknown as PrepareResult;
  assert.throws(
    () => relocateShardReport(report, '/merge/s0', '/merge/s0/report.json'),
    (e: Error) =>
      e instanceof MergeError &&
      e.message ===
        "/merge/s0/report.json: names its outputs.prompts_to_generate at /scratch/node7/elsewhere/prompts_to_generate.jsonl, outside the shard's output folder (/scratch/node7/s0); merge-reports reads a shard's outputs from the shard's own folder only",
  );
  // Inside it (the layout before data/ included), each path is moved to the folder given.
  (report.outputs as { promptsToGenerate: string }).promptsToGenerate = join(old, 'prompts_to_generate.jsonl');
  report.outputs.written = [join(old, 'tokenized_data.jsonl'), '/tmp/other.jsonl'];
  const r = relocateShardReport(report, '/merge/s0', '/merge/s0/report.json');
  assert.deepEqual(
    [r.outDir, r.outputs.tokenizedData, r.outputs.promptsToGenerate, r.outputs.written],
    ['/merge/s0', '/merge/s0/data/tokenized_data.jsonl', '/merge/s0/prompts_to_generate.jsonl', ['/merge/s0/tokenized_data.jsonl']],
  );
});

/** A Parquet file's footer as hyparquet reads it: created_by and the key-value metadata. */
async function footer(file: string): Promise<{ created_by?: string; kv: { key: string; value?: string }[]; rows: number }> {
  const hp = await import('hyparquet');
  const m = await hp.parquetMetadataAsync(await hp.asyncBufferFromFile(file));
  return { created_by: m.created_by, kv: m.key_value_metadata ?? [], rows: Number(m.num_rows) };
}

test("merged shards' Parquet file has a single run's footer: created_by and the eagle3_prep key-value metadata", async () => {
  const dir = tempDir('eagle3-shard-parquet-meta-');
  const args = [...SAMPLES, '--format', 'parquet', '--max-length', '4096', '--template-kwargs', '{"enable_thinking": true}', '--quiet'];
  assert.equal((await cli(['prepare', ...args, '--out', join(dir, 'single')])).code, 0);
  for (const i of [0, 1, 2]) assert.equal((await cli(['prepare', ...args, '--shard', `${i}/3`, '--out', join(dir, `s${i}`)])).code, 0);
  const m = await cli(['merge-reports', ...[0, 1, 2].map((i) => join(dir, `s${i}`)), '--data', '--out', join(dir, 'm')]);
  assert.equal(m.code, 0, m.stderr);
  const one = await footer(join(dir, 'single', 'data', 'tokenized_data.parquet'));
  const merged = await footer(join(dir, 'm', 'data', 'tokenized_data.parquet'));
  assert.deepEqual(merged, one);
  assert.deepEqual(
    one.kv.map((kv) => kv.key),
    ['eagle3_prep'],
  );
  const made = JSON.parse(one.kv[0].value!);
  assert.deepEqual([made.max_length, made.template_kwargs, made.mask], [4096, { enable_thinking: true }, 'assistant']);
  assert.match(one.created_by!, /^eagle3-prep \d+\.\d+\.\d+/);
  assert.ok(one.rows > 3);
  // A shard whose file says another version made it: refused, naming both files.
  const s2 = join(dir, 's2', 'data', 'tokenized_data.parquet');
  const bytes = readFileSync(s2);
  const from = Buffer.from('"version":"'),
    at = bytes.indexOf(from) + from.length;
  bytes[at] = bytes[at] === 0x39 ? 0x38 : bytes[at] + 1; // the version's first digit, same length
  writeFileSync(s2, bytes);
  const bad = await cli(['merge-reports', ...[0, 1, 2].map((i) => join(dir, `s${i}`)), '--data', '--out', join(dir, 'm2')]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /s2\/data\/tokenized_data\.parquet and .*s0\/data\/tokenized_data\.parquet say different things about how they were made/);
});
