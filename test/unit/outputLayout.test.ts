/**
 * The output folder's layout (issue 22 item 2; docs/outputs.md): the records in `data/`, the
 * sidecars beside it; and runs written before `data/` (records directly in the output folder)
 * still read back by every reader of a run's outputs: the report read-back, the Datasets view's
 * output state, `recordsFileIn`, `merge-reports --data`; a new run into such a folder removes the
 * old record files and says why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { expandInputs } from '../../src/core/run/inputs/inputs';
import { mergeReports } from '../../src/core/run/jobs/mergeReports';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { readRunReport } from '../../src/core/run/reports/readReport';
import { recordsFileIn } from '../../src/core/run/outputFiles';
import { formatSummary } from '../../src/cli/summary';
import { tempDir } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');
const INPUT = join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl');

/** Turns a run's folder into the layout of versions before data/: records moved up, report.json's paths with them. */
function toOldLayout(out: string): void {
  renameSync(join(out, 'data', 'tokenized_data.jsonl'), join(out, 'tokenized_data.jsonl'));
  rmdirSync(join(out, 'data'));
  const rep = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  rep.outputs.tokenized_data = join(out, 'tokenized_data.jsonl');
  rep.outputs.written = rep.outputs.written.map((p: string) => p.replace('/data/', '/'));
  writeFileSync(join(out, 'report.json'), JSON.stringify(rep, null, 2) + '\n');
}

test('a run writes its records into data/ and nothing else there; report.json says where', async () => {
  const out = join(tempDir(), 'out');
  const r = await prepare({ inputs: [INPUT], outDir: out, workers: 1, format: 'both' });
  assert.equal(r.ok, true, r.failures.join('; '));
  assert.deepEqual(readdirSync(join(out, 'data')).sort(), ['tokenized_data.jsonl', 'tokenized_data.parquet']);
  assert.deepEqual(readdirSync(out).sort(), ['data', 'problems.jsonl', 'prompts_to_generate.jsonl', 'report.json', 'report.md', 'token_counts.json']);
  const raw = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.equal(raw.outputs.tokenized_data, join(out, 'data', 'tokenized_data.jsonl'));
  assert.equal(raw.outputs.tokenized_data_parquet, join(out, 'data', 'tokenized_data.parquet'));
  assert.match(formatSummary([r], { cwd: out }), /^Outputs: \S+ — data\/tokenized_data\.jsonl, data\/tokenized_data\.parquet, prompts_to_generate\.jsonl, /m);
  // A moved folder is read where it is, data/ kept.
  const moved = join(tempDir(), 'moved');
  cpSync(out, moved, { recursive: true });
  assert.equal(readRunReport(join(moved, 'report.json')).report.outputs.tokenizedData, join(moved, 'data', 'tokenized_data.jsonl'));
  // A folder of datasets holding an output folder (--out inside it): data/ is not taken for datasets.
  const root = tempDir();
  cpSync(INPUT, join(root, 'chat.jsonl'));
  cpSync(out, join(root, 'runs'), { recursive: true });
  assert.deepEqual(expandInputs([root]), [join(root, 'chat.jsonl')]);
  assert.deepEqual(expandInputs([join(root, 'runs', 'data')]), [], 'the records folder given as a folder of datasets holds none');
});

test('runs of the layout before data/: read back by the report reader, the Datasets view and merge-reports; the next run removes their records and says why', async () => {
  const dir = tempDir();
  const out = join(dir, 'out');
  const first = await prepare({ inputs: [INPUT], outDir: out, workers: 1 });
  assert.equal(first.ok, true);
  const records = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8');
  toOldLayout(out);
  assert.equal(readRunReport(join(out, 'report.json')).report.outputs.tokenizedData, join(out, 'tokenized_data.jsonl'));
  assert.equal(recordsFileIn(out, 'tokenized_data.jsonl'), join(out, 'tokenized_data.jsonl'));
  assert.equal(recordsFileIn(join(dir, 'none'), 'tokenized_data.jsonl'), join(dir, 'none', 'data', 'tokenized_data.jsonl'));
  const state = readOutputState(INPUT, { outDir: out });
  assert.equal(state.state, 'prepared', state.staleBecause.join('; '));
  assert.deepEqual(state.outputs?.[0], { name: 'tokenized_data.jsonl', path: join(out, 'tokenized_data.jsonl'), exists: true });

  // merge-reports --data over shards of both layouts: the records of one run.
  const inputs = expandInputs([SAMPLES]);
  const single = await prepare({ inputs, outDir: join(dir, 'single'), workers: 1 });
  const shards: string[] = [];
  for (let i = 0; i < 2; i++) {
    const o = join(dir, `shard-${i}`);
    assert.equal((await prepare({ inputs, outDir: o, workers: 1, shard: { index: i, count: 2 } })).ok, true);
    if (i === 0) toOldLayout(o);
    shards.push(o);
  }
  const merged = await mergeReports(shards, join(dir, 'merged'), { data: true });
  assert.equal(merged.ok, true, merged.failures.join('; '));
  assert.equal(merged.outputs.tokenizedData, join(dir, 'merged', 'data', 'tokenized_data.jsonl'));
  assert.equal(readFileSync(merged.outputs.tokenizedData, 'utf8'), readFileSync(single.outputs.tokenizedData, 'utf8'));

  // An input that is an old-layout record file of the output folder is refused (the run would remove it).
  await assert.rejects(prepare({ inputs: [join(out, 'tokenized_data.jsonl')], outDir: out, workers: 1 }), /is an output of this run/);
  // The next run into the old folder: the records move to data/, the old file goes, and the summary and report.md say why.
  const logs: string[] = [];
  const next = await prepare({ inputs: [INPUT], outDir: out, workers: 1 }, { log: (l) => logs.push(l) });
  assert.equal(next.ok, true);
  assert.equal(existsSync(join(out, 'tokenized_data.jsonl')), false);
  assert.equal(readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8'), records);
  assert.deepEqual(next.outputs.removed, [join(out, 'tokenized_data.jsonl')]);
  const why = "a previous run's records directly in the output folder (the layout before data/)";
  assert.ok(logs.includes(`  removed ${join(out, 'tokenized_data.jsonl')}: ${why}`), logs.join('\n'));
  assert.match(
    formatSummary([next], { cwd: dir }),
    new RegExp(`^Removed: out/tokenized_data\\.jsonl — ${why.replace(/[()]/g, '\\$&')}, so they are not taken for this run's$`, 'm'),
  );
  assert.match(
    readFileSync(join(out, 'report.md'), 'utf8'),
    /^- Removed: `tokenized_data\.jsonl` — a previous run's records directly in the output folder \(the layout before `data\/`\)/m,
  );
});

test("files of output names no previous report lists are the user's: kept and said so; a report without outputs.written is read by its path fields", async () => {
  const dir = tempDir();
  const out = join(dir, 'own');
  mkdirSync(join(out, 'speculators'), { recursive: true });
  // The user's own files: a dataset named like old-layout records, speculators' prepare_data.py output.
  writeFileSync(join(out, 'tokenized_data.jsonl'), '{"mine":1}\n');
  for (const n of ['data-00000-of-00001.arrow', 'state.json', 'dataset_info.json']) writeFileSync(join(out, 'speculators', n), 'theirs');
  const r = await prepare({ inputs: [INPUT], outDir: out, workers: 1 });
  assert.equal(r.ok, true, r.failures.join('; '));
  assert.equal(readFileSync(join(out, 'tokenized_data.jsonl'), 'utf8'), '{"mine":1}\n');
  assert.deepEqual(readdirSync(join(out, 'speculators')).sort(), ['data-00000-of-00001.arrow', 'dataset_info.json', 'state.json']);
  assert.equal(r.outputs.removed, undefined);
  assert.deepEqual(r.outputs.kept, [
    join(out, 'tokenized_data.jsonl'),
    join(out, 'speculators', 'data-00000-of-00001.arrow'),
    join(out, 'speculators', 'state.json'),
    join(out, 'speculators', 'dataset_info.json'),
  ]);
  assert.match(
    formatSummary([r], { cwd: dir }),
    /^Kept: own\/tokenized_data\.jsonl, own\/speculators\/data-00000-of-00001\.arrow, .* listed by no previous report\.json here/m,
  );
  assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /^- Kept: `tokenized_data\.jsonl`, `speculators\/data-00000-of-00001\.arrow`/m);
  assert.deepEqual(readRunReport(join(out, 'report.json')).report.outputs.kept, r.outputs.kept);
  // The next run still keeps them: this run's report does not list them either.
  const again = await prepare({ inputs: [INPUT], outDir: out, workers: 1 });
  assert.equal(again.outputs.kept?.length, 4);
  assert.equal(existsSync(join(out, 'tokenized_data.jsonl')), true);

  // An old-layout run whose report has no outputs.written: its tokenized_data path names the file, which goes.
  const old = join(dir, 'old');
  assert.equal((await prepare({ inputs: [INPUT], outDir: old, workers: 1 })).ok, true);
  toOldLayout(old);
  const rep = JSON.parse(readFileSync(join(old, 'report.json'), 'utf8'));
  delete rep.outputs.written;
  writeFileSync(join(old, 'report.json'), JSON.stringify(rep, null, 2) + '\n');
  const next = await prepare({ inputs: [INPUT], outDir: old, workers: 1 });
  assert.deepEqual(next.outputs.removed, [join(old, 'tokenized_data.jsonl')]);
  assert.equal(next.outputs.kept, undefined);
});

test('an output folder inside the input folder: a --format messages run’s conversation files are not read as datasets; a user’s conversations.jsonl is', async () => {
  const root = tempDir();
  cpSync(INPUT, join(root, 'chat.jsonl'));
  const out = join(root, 'out');
  const r = await prepare({ inputs: [join(root, 'chat.jsonl')], outDir: out, workers: 1, format: 'messages', trainer: 'eagle' });
  assert.equal(r.ok, true, r.failures.join('; '));
  assert.ok(existsSync(join(out, 'conversations.jsonl')) && existsSync(join(out, 'conversations_sharegpt.jsonl')));
  assert.deepEqual(expandInputs([root]), [join(root, 'chat.jsonl')]);
  // A records run into a folder holding the user's own conversations.jsonl: not listed by the report, so still a dataset.
  const mine = join(tempDir(), 'mine');
  mkdirSync(mine);
  cpSync(INPUT, join(mine, 'conversations.jsonl'));
  assert.equal((await prepare({ inputs: [join(root, 'chat.jsonl')], outDir: mine, workers: 1 })).ok, true);
  assert.deepEqual(expandInputs([mine]), [join(mine, 'conversations.jsonl')]);
});
