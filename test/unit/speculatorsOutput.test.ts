/**
 * `prepare --trainer speculators` writes `speculators/`, the folder `datasets.save_to_disk` writes
 * and speculators' `train.py --data-path` opens with `datasets.load_from_disk` (issue 22 item 3;
 * run/outputs/speculatorsOutput.ts names the sources). Read back here with apache-arrow's IPC stream
 * reader and compared with `data/tokenized_data.jsonl` record for record; loaded with Python's
 * `datasets` (or `pyarrow`) too when the machine has it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { expandInputs } from '../../src/core/run/inputs/inputs';
import { SPECULATORS_FEATURES, SpeculatorsDatasetOutput } from '../../src/core/run/outputs/speculatorsOutput';
import { readReport } from '../../src/core/run/reports/report';
import { mergeReports } from '../../src/core/run/jobs/mergeReports';
import { tempDir, testWorkerScript } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');

interface Rec {
  input_ids: number[];
  loss_mask: number[];
  seq_len: number;
}

function jsonlRecords(file: string): Rec[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);
}

/** The folder's Arrow file read with apache-arrow: its rows as numbers, and its schema. */
function arrowRecords(dir: string): { rows: Rec[]; types: string[]; metadata: string | undefined } {
  const t = tableFromIPC(readFileSync(join(dir, 'data-00000-of-00001.arrow')));
  const rows: Rec[] = [];
  for (const r of t) {
    const o = r!.toJSON() as { input_ids: { toArray(): BigInt64Array }; loss_mask: { toArray(): BigInt64Array }; seq_len: bigint };
    rows.push({ input_ids: Array.from(o.input_ids.toArray(), Number), loss_mask: Array.from(o.loss_mask.toArray(), Number), seq_len: Number(o.seq_len) });
  }
  return { rows, types: t.schema.fields.map((f) => `${f.name}: ${f.type}`), metadata: t.schema.metadata.get('huggingface') };
}

function python(code: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('python3', ['-c', code], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}
const hasModule = (m: string) => python(`import ${m}`).status === 0;

test('prepare --trainer speculators on the samples: speculators/ holds the records of data/tokenized_data.jsonl as save_to_disk writes them', async () => {
  const out = join(tempDir(), 'out');
  const r = await prepare({ inputs: expandInputs([SAMPLES]), outDir: out, workers: 1, trainer: 'speculators', maxLength: 8192, long: 'split' });
  assert.equal(r.ok, true, r.failures.join('; '));
  const dir = join(out, 'speculators');
  assert.equal(r.outputs.speculatorsDataset, dir);
  assert.deepEqual(readdirSync(dir).sort(), ['data-00000-of-00001.arrow', 'dataset_info.json', 'state.json']);
  for (const f of ['data-00000-of-00001.arrow', 'dataset_info.json', 'state.json']) assert.ok(r.outputs.written!.includes(join(dir, f)), f);
  // The records are only in data/, the sidecars beside it.
  assert.deepEqual(readdirSync(join(out, 'data')), ['tokenized_data.jsonl']);
  const want = jsonlRecords(join(out, 'data', 'tokenized_data.jsonl')).map((x) => ({ input_ids: x.input_ids, loss_mask: x.loss_mask, seq_len: x.seq_len }));
  assert.ok(want.length > 50 && want.some((x) => x.seq_len > 2048), 'the samples hold long records');
  const got = arrowRecords(dir);
  assert.deepEqual(got.rows, want);
  assert.deepEqual(got.types, ['input_ids: List<Int64>', 'loss_mask: List<Int64>', 'seq_len: Int64']);
  assert.deepEqual(JSON.parse(got.metadata!), { info: { features: SPECULATORS_FEATURES } });
  // The IPC *stream* format (no "ARROW1" file magic), as pa.ipc.open_stream reads it; 0xFFFFFFFF continuation first.
  const bytes = readFileSync(join(dir, 'data-00000-of-00001.arrow'));
  assert.equal(bytes.readUInt32LE(0), 0xffffffff);
  assert.notEqual(bytes.subarray(0, 6).toString('latin1'), 'ARROW1');
  const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'));
  assert.deepEqual(Object.keys(state), ['_data_files', '_fingerprint', '_format_columns', '_format_kwargs', '_format_type', '_output_all_columns', '_split']);
  assert.deepEqual(state._data_files, [{ filename: 'data-00000-of-00001.arrow' }]);
  assert.equal(state._format_type, 'torch', 'train.py calls .tolist() on the items: the torch format prepare_data.py saves');
  assert.match(state._fingerprint, /^[0-9a-f]{16}$/);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'dataset_info.json'), 'utf8')), {
    citation: '',
    description: '',
    features: SPECULATORS_FEATURES,
    homepage: '',
    license: '',
  });
  // report.json names the folder; report.md lists it with the records.
  assert.equal(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).outputs.speculators_dataset, dir);
  assert.equal(readReport(join(out, 'report.json')).report.outputs.speculatorsDataset, dir);
  assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /`data\/tokenized_data\.jsonl` and `speculators\/` \(\d+ records\)/);

  // The same records give the same folder (the fingerprint is the content's).
  const again = await prepare({
    inputs: expandInputs([SAMPLES]),
    outDir: out,
    workers: 2,
    workerScript: testWorkerScript(),
    trainer: 'speculators',
    maxLength: 8192,
    long: 'split',
  });
  assert.equal(again.ok, true);
  assert.deepEqual(readFileSync(join(dir, 'data-00000-of-00001.arrow')), bytes);
  assert.equal(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'))._fingerprint, state._fingerprint);

  // A failed run changes nothing in the folder and leaves no temporary file.
  const bad = join(tempDir(), 'bad.jsonl');
  writeFileSync(bad, '{"text": "just prose"}\n');
  const failed = await prepare({ inputs: [bad], outDir: out, workers: 1, trainer: 'speculators' });
  assert.equal(failed.ok, false);
  assert.deepEqual(readFileSync(join(dir, 'data-00000-of-00001.arrow')), bytes);
  assert.deepEqual(
    readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((n) => n.includes('.tmp-')),
    [],
  );

  // A run without --trainer speculators removes prepare's files there (stale records), keeps the user's, and says so.
  writeFileSync(join(dir, 'd2t.npy'), 'draft-vocab output');
  const logs: string[] = [];
  const plain = await prepare({ inputs: [join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl')], outDir: out, workers: 1 }, { log: (l) => logs.push(l) });
  assert.equal(plain.ok, true);
  assert.deepEqual(readdirSync(dir), ['d2t.npy']);
  assert.deepEqual(plain.outputs.removed?.sort(), [join(dir, 'data-00000-of-00001.arrow'), join(dir, 'dataset_info.json'), join(dir, 'state.json')]);
  assert.ok(
    logs.some((l) => /removed .*state\.json: a previous run's speculators dataset \(this run has no --trainer speculators\)/.test(l)),
    logs.join('\n'),
  );
});

test('SpeculatorsDatasetOutput: batches of 1,000 rows read back whole and in order; no record gives a valid empty dataset; abort leaves nothing', async () => {
  const dir = join(tempDir(), 'speculators');
  const o = new SpeculatorsDatasetOutput(dir);
  const recs: Rec[] = [];
  for (let i = 0; i < 2345; i++) {
    const n = 1 + (i % 7);
    const ids = Array.from({ length: n }, (_, k) => (i * 31 + k * 151_643) % 262_144);
    const mask = Array.from({ length: n }, (_, k) => (k >= n / 2 ? 1 : 0));
    recs.push({ input_ids: ids, loss_mask: mask, seq_len: n });
    await o.write(i % 2 ? JSON.stringify({ id: `r${i}`, ...recs[i] }) + '\n' : recs[i]);
  }
  assert.equal(existsSync(join(dir, 'data-00000-of-00001.arrow')), false, 'nothing at the final path before commit');
  await o.commit();
  assert.equal(o.rows, 2345);
  const t = tableFromIPC(readFileSync(join(dir, 'data-00000-of-00001.arrow')));
  assert.equal(t.batches.length, 3);
  assert.deepEqual(arrowRecords(dir).rows, recs);
  await assert.rejects(new SpeculatorsDatasetOutput(join(dir, 'x')).write({ input_ids: [1, 2], loss_mask: [1] }), /input_ids and loss_mask of one length/);
  // Values are checked when the batch is built (at the 1,000th record or at commit).
  for (const bad of [
    { input_ids: [1, -2], loss_mask: [0, 1] },
    { input_ids: [1, 2 ** 31], loss_mask: [0, 1] },
    { input_ids: [1, 2], loss_mask: [0, 2] },
  ]) {
    const x = new SpeculatorsDatasetOutput(join(tempDir(), 'x'));
    await x.write(bad);
    await assert.rejects(x.commit(), /input_ids must be token ids and loss_mask 0 or 1/);
    await x.abort();
  }
  // Token ids up to 2^31 - 1 and the largest vocabularies' ids round-trip exactly.
  const big = join(tempDir(), 'big');
  const b = new SpeculatorsDatasetOutput(big);
  await b.write({ input_ids: [0, 151_935, 262_143, 2 ** 31 - 1], loss_mask: [0, 1, 1, 0] });
  await b.commit();
  assert.deepEqual(arrowRecords(big).rows, [{ input_ids: [0, 151_935, 262_143, 2 ** 31 - 1], loss_mask: [0, 1, 1, 0], seq_len: 4 }]);

  const empty = join(tempDir(), 'empty');
  await new SpeculatorsDatasetOutput(empty).commit();
  assert.equal(tableFromIPC(readFileSync(join(empty, 'data-00000-of-00001.arrow'))).numRows, 0);

  const aborted = join(tempDir(), 'aborted');
  const a = new SpeculatorsDatasetOutput(aborted);
  for (const r of recs.slice(0, 1500)) await a.write(r);
  await a.abort();
  assert.deepEqual(readdirSync(aborted), []);
});

test('Python: datasets.load_from_disk (or pyarrow) reads the folder as train.py does', async (t) => {
  const haveDatasets = hasModule('datasets');
  const havePyarrow = haveDatasets || hasModule('pyarrow');
  if (!havePyarrow) {
    t.skip('python3 has neither datasets nor pyarrow (neither is a Debian package here; the apache-arrow read-back above stands in)');
    return;
  }
  const out = join(tempDir(), 'out');
  const r = await prepare({ inputs: [join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl')], outDir: out, workers: 1, trainer: 'speculators' });
  assert.equal(r.ok, true);
  const dir = join(out, 'speculators');
  const want = jsonlRecords(join(out, 'data', 'tokenized_data.jsonl')).map((x) => [x.input_ids, x.loss_mask, x.seq_len]);
  const code = haveDatasets
    ? `import json, sys, datasets
ds = datasets.load_from_disk(sys.argv[1])
assert ds.format["type"] == "torch", ds.format
ds = ds.with_format(None)
print(json.dumps({"types": {k: str(v) for k, v in ds.features.items()}, "rows": [[x["input_ids"], x["loss_mask"], x["seq_len"]] for x in ds]}))`
    : `import json, sys, pyarrow as pa
t = pa.ipc.open_stream(pa.memory_map(sys.argv[1] + "/data-00000-of-00001.arrow")).read_all()
print(json.dumps({"types": {f.name: str(f.type) for f in t.schema}, "rows": [[x["input_ids"], x["loss_mask"], x["seq_len"]] for x in t.to_pylist()]}))`;
  const res = spawnSync('python3', ['-c', code, dir], { encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  const got = JSON.parse(res.stdout) as { types: Record<string, string>; rows: unknown[] };
  assert.deepEqual(got.rows, want);
  if (!haveDatasets) assert.deepEqual(got.types, { input_ids: 'list<item: int64>', loss_mask: 'list<item: int64>', seq_len: 'int64' });
});

test('merge-reports --data of shards made for speculators writes the same speculators/ as one run', async () => {
  const dir = tempDir();
  const inputs = [join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), join(SAMPLES, 'agentic-trajectories.jsonl')];
  const opts = { workers: 1, trainer: 'speculators' as const, maxLength: 8192, long: 'split' as const };
  const single = await prepare({ inputs, outDir: join(dir, 'single'), ...opts });
  assert.equal(single.ok, true);
  const shards: string[] = [];
  for (let i = 0; i < 2; i++) {
    const o = join(dir, `s${i}`);
    assert.equal((await prepare({ inputs, outDir: o, ...opts, shard: { index: i, count: 2 } })).ok, true);
    shards.push(o);
  }
  const merged = await mergeReports(shards, join(dir, 'merged'), { data: true });
  assert.equal(merged.ok, true, merged.failures.join('; '));
  assert.equal(merged.outputs.speculatorsDataset, join(dir, 'merged', 'speculators'));
  for (const f of ['data-00000-of-00001.arrow', 'state.json', 'dataset_info.json'])
    assert.deepEqual(readFileSync(join(dir, 'merged', 'speculators', f)), readFileSync(join(dir, 'single', 'speculators', f)), f);
  assert.ok(merged.outputs.written!.includes(join(dir, 'merged', 'speculators', 'state.json')));
  // Without --data the records stay in the shards: no folder here.
  const reportsOnly = await mergeReports(shards, join(dir, 'reports-only'));
  assert.equal(reportsOnly.outputs.speculatorsDataset, undefined);
  assert.equal(existsSync(join(dir, 'reports-only', 'speculators')), false);
});
