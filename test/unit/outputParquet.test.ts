/**
 * `--format parquet|both` (issue 14 item 8): `tokenized_data.parquet` holds
 * the JSONL's records, record for record, read back with hyparquet (not the
 * writer's code) and with arrow-rs (parquet-wasm, the Rust Arrow library: the
 * Arrow types pyarrow and `datasets` see); row groups are bounded; the file is
 * written atomically (nothing left or replaced on failure or cancel); the pool
 * path and merge-reports give the same file; records of the other format left
 * by a previous run are removed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { expandInputs } from '../../src/core/run/inputs/inputs';
import { type PrepareResult } from '../../src/core/run/contract';
import { mergeReports } from '../../src/core/run/jobs/mergeReports';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { ParquetRecordsOutput, readParquetRecords, RECORDS_SCHEMA } from '../../src/core/run/outputs/parquetOutput';
import type { TokenizedRecord } from '../../src/core/types';
import { main as cli } from '../../src/cli';
import { lenmlModelDir, tempDir } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');

function readJsonl(p: string): TokenizedRecord[] {
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

async function readParquet(p: string): Promise<TokenizedRecord[]> {
  const out: TokenizedRecord[] = [];
  for await (const r of readParquetRecords(p)) out.push(r);
  return out;
}

/** The file read by arrow-rs (parquet-wasm) into an Arrow JS table. */
async function readWithArrowRs(p: string) {
  const pq = await import('parquet-wasm');
  const arrow = await import('apache-arrow');
  const table = pq.readParquet(new Uint8Array(readFileSync(p)));
  return arrow.tableFromIPC(table.intoIPCStream());
}

async function rowGroupSizes(p: string): Promise<number[]> {
  const hp = await import('hyparquet');
  const meta = await hp.parquetMetadataAsync(await hp.asyncBufferFromFile(p));
  return meta.row_groups.map((g) => Number(g.num_rows));
}

/** Temporary files in a folder and, for an output folder, its records folder (data/). */
function tmpLeftovers(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => n.includes('.tmp-'));
}

test('prepare --format both on the samples: tokenized_data.parquet equals tokenized_data.jsonl record for record (1 and 2 workers)', async () => {
  const inputs = expandInputs([SAMPLES]);
  let first: TokenizedRecord[] | undefined;
  for (const workers of [1, 2]) {
    const out = tempDir();
    const res = await prepare({ inputs, outDir: out, tokenizerDir: lenmlModelDir('deepseek_v3'), format: 'both', workers });
    assert.equal(res.ok, true, res.failures.join('\n'));
    assert.equal(res.outputs.format, 'both');
    assert.equal(res.outputs.tokenizedDataParquet, join(out, 'data', 'tokenized_data.parquet'));
    assert.deepEqual(res.outputs.written, [
      join(out, 'data', 'tokenized_data.jsonl'),
      join(out, 'data', 'tokenized_data.parquet'),
      join(out, 'prompts_to_generate.jsonl'),
      join(out, 'problems.jsonl'),
      join(out, 'token_counts.json'),
      join(out, 'report.json'),
      join(out, 'report.md'),
    ]);
    for (const f of res.outputs.written!) assert.ok(existsSync(f), f);
    const jsonl = readJsonl(res.outputs.tokenizedData);
    const parquet = await readParquet(res.outputs.tokenizedDataParquet!);
    assert.equal(parquet.length, res.totals.recordsWritten);
    assert.ok(parquet.length > 10);
    assert.deepEqual(parquet, jsonl);
    // Key order too: a record read back serializes to the very JSONL line.
    assert.deepEqual(
      parquet.map((r) => JSON.stringify(r)),
      readFileSync(res.outputs.tokenizedData, 'utf8').trim().split('\n'),
    );
    if (first) assert.deepEqual(parquet, first, 'the same file for any number of workers');
    first = parquet;
    const report = JSON.parse(readFileSync(res.outputs.reportJson, 'utf8')) as PrepareResult;
    assert.deepEqual(report.outputs.written, res.outputs.written);
    assert.match(readFileSync(res.outputs.reportMd, 'utf8'), /`data\/tokenized_data\.jsonl` and `data\/tokenized_data\.parquet` \(\d+ records\)/);
    assert.deepEqual(tmpLeftovers(out), []);
  }
});

test('arrow-rs reads the file with the documented Arrow types and the same values (what pyarrow / datasets see)', async () => {
  const out = tempDir();
  const res = await prepare({ inputs: [join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl')], outDir: out, format: 'parquet', workers: 1 });
  assert.equal(res.ok, true, res.failures.join('\n'));
  assert.equal(existsSync(res.outputs.tokenizedData), false, 'format parquet writes no JSONL');
  assert.deepEqual(res.outputs.written, [
    join(out, 'data', 'tokenized_data.parquet'),
    join(out, 'prompts_to_generate.jsonl'),
    join(out, 'problems.jsonl'),
    join(out, 'token_counts.json'),
    join(out, 'report.json'),
    join(out, 'report.md'),
  ]);
  const t = await readWithArrowRs(res.outputs.tokenizedDataParquet!);
  assert.deepEqual(
    t.schema.fields.map((f) => `${f.name}: ${f.type} ${f.nullable ? 'null' : 'not null'}`),
    [
      'id: Utf8 not null',
      'source: Struct<{file:Utf8, line:Int64, element:Int32}> not null',
      'input_ids: List<Int32> not null',
      'loss_mask: List<Int8> not null',
      'seq_len: Int32 not null',
      'n_prompt_tokens: Int32 not null',
      'n_response_tokens: Int32 not null',
      'ids_source: Utf8 null',
    ],
  );
  const back = await readParquet(res.outputs.tokenizedDataParquet!);
  assert.equal(t.numRows, back.length);
  for (let i = 0; i < t.numRows; i++) {
    const row = t.get(i)!.toJSON() as Record<string, any>;
    assert.equal(row.id, back[i].id);
    assert.deepEqual(Array.from(row.input_ids.toArray()), back[i].input_ids);
    assert.deepEqual(Array.from(row.loss_mask.toArray()), back[i].loss_mask);
    assert.equal(Number(row.source.toJSON().line), back[i].source.line);
    assert.equal(row.seq_len, back[i].seq_len);
  }
  const meta = JSON.parse(String(t.schema.metadata.get('eagle3_prep')));
  assert.equal(meta.mask, 'assistant');
  assert.equal(meta.tokenizer.hash, res.tokenizer.hash);
});

test('ParquetRecordsOutput: bounded row groups, every field (element, ids_source, large ids) round-trips; an empty file is valid', async () => {
  const dir = tempDir();
  const recs: TokenizedRecord[] = [];
  for (let i = 0; i < 57; i++) {
    const n = 1 + ((i * 37) % 90);
    const ids = Array.from({ length: n }, (_, k) => (k * 7919 + i) % 262_144);
    const mask = ids.map((_, k) => (k >= n / 3 ? 1 : 0));
    const r = {
      id: `f.jsonl:${i + 1}${i % 5 === 0 ? '#1' : ''}`,
      source: i % 4 === 0 ? { file: `/d/é ${i % 3}.jsonl`, line: 2 ** 40 + i, element: i % 7 } : { file: '/d/f.jsonl', line: i + 1 },
      input_ids: ids,
      loss_mask: mask,
      seq_len: n,
      n_prompt_tokens: mask.filter((m) => m === 0).length,
      n_response_tokens: mask.filter((m) => m === 1).length,
      ...(i % 6 === 0 ? { ids_source: i % 12 === 0 ? 'generated' : 'retokenized' } : {}),
    } as TokenizedRecord;
    recs.push(r);
  }
  const p = join(dir, 'tokenized_data.parquet');
  const o = new ParquetRecordsOutput(p, { rowGroupTokens: 500, rowGroupRecords: 10 });
  for (const r of recs) await o.write(JSON.stringify(r) + '\n');
  assert.equal(existsSync(p), false, 'nothing at the final path before commit');
  await o.commit();
  assert.deepEqual(await readParquet(p), recs);
  const groups = await rowGroupSizes(p);
  assert.equal(
    groups.reduce((a, b) => a + b, 0),
    57,
  );
  assert.ok(groups.length >= 6 && groups.every((g) => g <= 10), `${groups}`);
  const arrowRows = (await readWithArrowRs(p)).toArray().map((r: any) => r.toJSON());
  assert.equal(arrowRows.length, 57);
  assert.equal(arrowRows[4].ids_source, null);
  assert.equal(arrowRows[12].ids_source, 'generated');
  assert.equal(arrowRows[8].source.toJSON().element, 1);
  assert.deepEqual(tmpLeftovers(dir), []);
  // No records (a run of prompts only): a valid file with the schema and no row, for both readers.
  const empty = join(dir, 'empty.parquet');
  const e = new ParquetRecordsOutput(empty);
  await e.commit();
  assert.deepEqual(await readParquet(empty), []);
  const et = await readWithArrowRs(empty);
  assert.equal(et.numRows, 0);
  assert.equal(et.schema.fields.length, RECORDS_SCHEMA[0].num_children);
  // abort leaves nothing.
  const a = new ParquetRecordsOutput(join(dir, 'aborted.parquet'), { rowGroupRecords: 2 });
  for (const r of recs.slice(0, 5)) await a.write(r);
  await a.abort();
  await a.abort();
  assert.deepEqual(readdirSync(dir).sort(), ['empty.parquet', 'tokenized_data.parquet']);
});

test('atomic: a cancelled run and a failed run leave the previous outputs as they were and no temporary file', async () => {
  const dir = tempDir();
  const input = join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl');
  const out = join(dir, 'out');
  const first = await prepare({ inputs: [input], outDir: out, format: 'both', workers: 1 });
  assert.equal(first.ok, true);
  const before = readFileSync(first.outputs.tokenizedDataParquet!);
  const ac = new AbortController();
  await assert.rejects(
    prepare(
      { inputs: [input], outDir: out, format: 'both', workers: 1, maxLength: 64 },
      { signal: ac.signal, onProgress: () => ac.abort(new Error('cancelled')) },
    ),
    /cancelled/,
  );
  // A run that fails (no record, no prompt) writes nothing either.
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"text": "just prose"}\n');
  const failed = await prepare({ inputs: [bad], outDir: out, format: 'parquet', workers: 1 });
  assert.equal(failed.ok, false);
  assert.deepEqual(failed.outputs.written, []);
  assert.deepEqual(readFileSync(join(out, 'data', 'tokenized_data.parquet')), before);
  assert.equal(existsSync(join(out, 'data', 'tokenized_data.jsonl')), true);
  assert.deepEqual(tmpLeftovers(out), []);
});

test('a run in one format removes the record file of the other format a previous run left (no stale records beside the report); the Datasets view sees a Parquet-only output as prepared', async () => {
  const out = tempDir();
  const input = join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl');
  const logs: string[] = [];
  await prepare({ inputs: [input], outDir: out, format: 'both', workers: 1 });
  await prepare({ inputs: [input], outDir: out, format: 'parquet', workers: 1 }, { log: (l) => logs.push(l) });
  assert.equal(existsSync(join(out, 'data', 'tokenized_data.jsonl')), false);
  assert.ok(logs.some((l) => l.includes('removed') && l.includes('tokenized_data.jsonl')));
  const state = readOutputState(input, { outDir: out });
  assert.equal(state.state, 'prepared', state.staleBecause.join('; '));
  assert.deepEqual(state.outputs?.[0], { name: 'tokenized_data.parquet', path: join(out, 'data', 'tokenized_data.parquet'), exists: true });
  await prepare({ inputs: [input], outDir: out, workers: 1 });
  assert.equal(existsSync(join(out, 'data', 'tokenized_data.parquet')), false);
  assert.equal(existsSync(join(out, 'data', 'tokenized_data.jsonl')), true);
});

test('merge-reports --data merges the shards’ Parquet files into the single run’s file (input order)', async () => {
  const dir = tempDir();
  const inputs = expandInputs([SAMPLES]);
  const single = await prepare({ inputs, outDir: join(dir, 'single'), format: 'both', workers: 1 });
  const shards: string[] = [];
  for (let i = 0; i < 3; i++) {
    const o = join(dir, `shard-${i}`);
    const r = await prepare({ inputs, outDir: o, format: i === 1 ? 'both' : 'parquet', workers: 1, shard: { index: i, count: 3 } });
    assert.equal(r.ok, true, r.failures.join('\n'));
    shards.push(o);
  }
  const merged = await mergeReports(shards, join(dir, 'merged'), { data: true });
  assert.equal(merged.ok, true, merged.failures.join('\n'));
  assert.equal(merged.outputs.format, 'parquet', 'only the format every shard wrote');
  assert.equal(existsSync(merged.outputs.tokenizedData), false);
  assert.deepEqual(await readParquet(merged.outputs.tokenizedDataParquet!), await readParquet(single.outputs.tokenizedDataParquet!));
  assert.deepEqual(readFileSync(merged.outputs.promptsToGenerate, 'utf8'), readFileSync(single.outputs.promptsToGenerate, 'utf8'));
  assert.deepEqual(merged.outputs.written, [
    join(dir, 'merged', 'data', 'tokenized_data.parquet'),
    join(dir, 'merged', 'prompts_to_generate.jsonl'),
    join(dir, 'merged', 'problems.jsonl'),
    join(dir, 'merged', 'token_counts.json'),
    join(dir, 'merged', 'report.json'),
    join(dir, 'merged', 'report.md'),
  ]);
});

test('CLI: --format parquet writes the Parquet file; a bad value is a usage error naming the option', async () => {
  const out = tempDir();
  const code = await cli(['prepare', join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), '--out', out, '--format', 'parquet', '--workers', '1', '--quiet']);
  assert.equal(code, 0);
  assert.equal(existsSync(join(out, 'data', 'tokenized_data.parquet')), true);
  assert.equal(existsSync(join(out, 'data', 'tokenized_data.jsonl')), false);
  const writes: string[] = [];
  const orig = process.stderr.write.bind(process.stderr);
  (process.stderr as any).write = (s: string) => (writes.push(String(s)), true);
  try {
    assert.equal(await cli(['prepare', join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), '--format', 'arrow']), 2);
  } finally {
    (process.stderr as any).write = orig;
  }
  assert.match(writes.join(''), /--format <format>.*'arrow'.*jsonl, parquet, both/s);
});
