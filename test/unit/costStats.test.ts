/**
 * Length statistics (run/stats.ts), token-id counts (run/outputs/tokenCounts.ts) and the draft vocabulary
 * (run/jobs/draftVocab.ts, `eagle3-prep draft-vocab`): exact values on hand-made inputs, the counts of a
 * real run against a recount of its records, and the d2t / t2d arrays read back from the `.npy` files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, linkSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli';
import { buildDraftVocab, npyBytes, parseNpy } from '../../src/core/run/jobs/draftVocab';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { DistributionBuilder, fineBucket, HISTOGRAM_EDGES, mergeDistributions } from '../../src/core/run/stats';
import { readTokenCounts } from '../../src/core/run/outputs/tokenCounts';
import { isolateTokenizerCache, tempDir } from '../helpers';

isolateTokenizerCache();
const SAMPLES = join(__dirname, '..', '..', 'samples');

test('distribution: exact percentiles below 64, bucket tops above, display histogram on powers of two', () => {
  const b = new DistributionBuilder();
  for (let v = 1; v <= 100; v++) b.add(v);
  const d = b.result();
  assert.equal(d.count, 100);
  assert.equal(d.sum, 5050);
  assert.equal(d.min, 1);
  assert.equal(d.max, 100);
  assert.equal(d.p50, 50);
  // rank 90 is 90, in the fine bucket [90, 92): its top is 91; rank 99 is 99, bucket [98, 100) → 99.
  assert.equal(d.p90, 91);
  assert.equal(d.p99, 99);
  assert.deepEqual(d.histogram.edges, HISTOGRAM_EDGES);
  assert.deepEqual(d.histogram.counts.slice(0, 9), [0, 1, 2, 4, 8, 16, 32, 37, 0]);
  assert.equal(d.fine['90'], 2);
  assert.deepEqual([fineBucket(63), fineBucket(64), fineBucket(65), fineBucket(1000), fineBucket(1023), fineBucket(1024)], [63, 64, 64, 992, 1008, 1024]);
  const e = new DistributionBuilder().result();
  assert.equal(e.p50, null);
  assert.equal(e.max, null);
});

test('distribution: merging parts gives exactly the distribution of all values', () => {
  const values = Array.from({ length: 5000 }, (_, k) => (k * 7919) % 70000);
  const all = new DistributionBuilder();
  const parts = [new DistributionBuilder(), new DistributionBuilder(), new DistributionBuilder()];
  values.forEach((v, k) => {
    all.add(v);
    parts[k % 3].add(v);
  });
  assert.deepEqual(mergeDistributions(parts.map((p) => p.result())), all.result());
  // Percentiles from buckets: never below the exact value, at most 1/32 above it.
  const sorted = [...values].sort((a, b) => a - b);
  const d = all.result();
  for (const [q, got] of [
    [0.5, d.p50],
    [0.9, d.p90],
    [0.99, d.p99],
  ] as const) {
    const exact = sorted[Math.ceil(q * sorted.length) - 1];
    assert.ok(got! >= exact && got! <= exact * (1 + 1 / 32), `p${q * 100}: ${got} vs ${exact}`);
  }
});

test('draft vocabulary: top-K by trainable count, ties by smaller id, filled with the smallest unused ids', () => {
  const counts = new Map([
    [5, 10],
    [2, 10],
    [9, 3],
    [7, 0],
    [1, 1],
  ]);
  const v = buildDraftVocab(counts, 3, 12);
  assert.deepEqual(v.ids, [2, 5, 9]);
  assert.deepEqual(v.d2t, [2, 4, 7]);
  assert.deepEqual(v.t2d, [false, false, true, false, false, true, false, false, false, true, false, false]);
  assert.deepEqual(v.counts, [10, 10, 3]);
  assert.equal(v.coverage, 23 / 24);
  assert.equal(v.filled, 0);
  // Tie at the cut: 5 and 2 both count 10, K = 1 takes the smaller id.
  assert.deepEqual(buildDraftVocab(counts, 1, 12).ids, [2]);
  const w = buildDraftVocab(counts, 5, 12);
  assert.deepEqual(w.ids, [0, 1, 2, 5, 9]);
  assert.deepEqual(w.d2t, [0, 0, 0, 2, 5]);
  assert.equal(w.filled, 1);
  assert.throws(() => buildDraftVocab(new Map([[12, 1]]), 3, 12), /outside the target vocabulary/);
  assert.throws(() => buildDraftVocab(counts, 13, 12), /at least the draft size/);
});

test('.npy files: NumPy 1.0 header, 64-byte aligned, little-endian data', () => {
  const i8 = npyBytes('<i8', [2, 4, 7, -1]);
  assert.equal(i8.subarray(0, 8).toString('latin1'), '\x93NUMPY\x01\x00');
  const hlen = i8.readUInt16LE(8);
  assert.equal((10 + hlen) % 64, 0);
  const dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }";
  assert.equal(i8.toString('latin1', 10, 10 + hlen), dict + ' '.repeat(hlen - dict.length - 1) + '\n');
  assert.equal(i8.length, 10 + hlen + 32);
  assert.equal(i8.readBigInt64LE(10 + hlen + 24), -1n);
  assert.deepEqual(parseNpy(i8), { dtype: '<i8', values: [2, 4, 7, -1] });
  const b1 = npyBytes('|b1', [false, true, true]);
  assert.deepEqual([...b1.subarray(b1.length - 3)], [0, 1, 1]);
  assert.deepEqual(parseNpy(b1), { dtype: '|b1', values: [0, 1, 1] });
});

test('prepare writes token_counts.json that recounts its records; draft-vocab builds d2t/t2d from it', async () => {
  const out = tempDir('eagle3-counts-');
  const r = await prepare({ inputs: [join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), join(SAMPLES, 'agentic-trajectories.jsonl')], outDir: out });
  assert.equal(r.tokenCounts, join(out, 'token_counts.json'));
  const f = readTokenCounts(out);
  const all = new Map<number, number>();
  const trained = new Map<number, number>();
  const lines = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  for (const l of lines) {
    const rec = JSON.parse(l);
    rec.input_ids.forEach((id: number, k: number) => {
      all.set(id, (all.get(id) ?? 0) + 1);
      if (rec.loss_mask[k]) trained.set(id, (trained.get(id) ?? 0) + 1);
    });
  }
  assert.deepEqual(
    f.ids,
    [...all.keys()].sort((a, b) => a - b),
  );
  assert.deepEqual(
    f.all,
    f.ids.map((id) => all.get(id)),
  );
  assert.deepEqual(
    f.trainable,
    f.ids.map((id) => trained.get(id) ?? 0),
  );
  assert.equal(f.records, lines.length);
  assert.equal(f.tokens, r.totals.totalTokens);
  assert.equal(f.trainableTokens, r.totals.trainableTokens);
  assert.equal(f.tokenizer.hash, r.tokenizer.hash);
  // Length statistics agree with the records.
  const l = r.totals.lengths!;
  assert.equal(l.seqLen.count, lines.length);
  assert.equal(l.seqLen.sum, r.totals.totalTokens);
  assert.equal(l.trainableTokens.sum, r.totals.trainableTokens);
  assert.equal(l.recordsPerConversation.sum, lines.length);
  assert.equal(l.recordsPerConversation.count, r.totals.rowsWritten);
  assert.equal(l.amplification, r.totals.totalTokens / l.renderedTokens);
  assert.ok(l.amplification! > 5, 'Qwen3 on the agent runs: exact costs many times the conversations');
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /--grouping merged would write about [\d,]+ tokens \(1\.0×\)/);

  const dv = tempDir('eagle3-dv-');
  const code = await main(['draft-vocab', '--size', '64', '--counts', out, '--target-vocab-size', '151936', '--out', dv]);
  assert.equal(code, 0);
  const d2t = parseNpy(readFileSync(join(dv, 'd2t.npy')));
  const t2d = parseNpy(readFileSync(join(dv, 't2d.npy')));
  const top = [...trained]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, 64)
    .map(([id]) => id)
    .sort((a, b) => a - b);
  assert.deepEqual(
    d2t.values.map((o, i) => o + i),
    top,
  );
  assert.equal(t2d.values.length, 151936);
  assert.deepEqual(
    t2d.values.flatMap((b, id) => (b ? [id] : [])),
    top,
  );
  const meta = JSON.parse(readFileSync(join(dv, 'draft_vocab.json'), 'utf8'));
  assert.deepEqual(meta.ids, top);
  // The embedded Qwen3 tokenizer knows its model's vocab_size (151,936) and its own length (151,669).
  assert.equal(f.modelVocabSize, 151936);
  assert.equal(f.tokenizerSize, 151669);
  assert.equal(await main(['draft-vocab', '--size', '64', '--counts', out, '--out', dv]), 0);
  assert.equal(parseNpy(readFileSync(join(dv, 't2d.npy'))).values.length, 151936);
  // The same run's counts named twice (its folder and its token_counts.json) would weight it double: refused, nothing written.
  const dv2 = join(tempDir('eagle3-dv2-'), 'out');
  assert.equal(await main(['draft-vocab', '--size', '64', '--counts', out, join(out, 'token_counts.json'), '--out', dv2]), 1);
  assert.equal(existsSync(dv2), false);
  // So are a hard link to it and a copy of its bytes.
  const twin = tempDir('eagle3-dv-twin-');
  linkSync(join(out, 'token_counts.json'), join(twin, 'linked.json'));
  copyFileSync(join(out, 'token_counts.json'), join(twin, 'copy.json'));
  for (const other of ['linked.json', 'copy.json'])
    assert.equal(await main(['draft-vocab', '--size', '64', '--counts', out, join(twin, other), '--out', dv2]), 1, other);
  assert.equal(existsSync(dv2), false);
});
