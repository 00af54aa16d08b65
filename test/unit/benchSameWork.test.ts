/**
 * The benchmark's warm-run check (scripts/benchSameWork.ts): a warm `prepare` (warmed up on another input) that skipped
 * work, or wrote other outputs, than the cold run of the same input in another process fails the benchmark; report
 * times and the output folder's path do not count, nor do the tokenizer caches' hits (a warm cache finds more).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertSameWork, comparable, type RunWork } from '../../scripts/benchSameWork';
import { tempDir } from '../helpers';

const work = (over: Partial<RunWork> = {}): RunWork => ({
  encode: { ms: 5, cpuMs: 5, tokens: 100, calls: 3, chars: 400, pieces: 90, found: 40 },
  renders: { render: 10, spans: 0, traced: 4, proven: 80, fallback: 0 },
  totals: { recordsWritten: 4, totalTokens: 100 },
  ...over,
});

/** Two output folders as two runs write them: equal data, reports that differ by path and time only. */
function twoRuns(): { a: string; b: string } {
  const root = tempDir();
  const out = { a: join(root, 'out-cold'), b: join(root, 'out-warm') };
  for (const [dir, ms] of [
    [out.a, 1156],
    [out.b, 914],
  ] as const) {
    mkdirSync(join(dir, 'data'), { recursive: true });
    writeFileSync(join(dir, 'data', 'tokenized_data.jsonl'), '{"input_ids":[1,2,3],"loss_mask":[0,1,1]}\n');
    writeFileSync(
      join(dir, 'report.json'),
      `{\n  "output_dir": ${JSON.stringify(dir)},\n  "elapsed_ms": ${ms},\n  "throughput": {\n    "tokens_per_second": ${ms * 7},\n    "rows_per_second": ${ms % 13}\n  }\n}\n`,
    );
    writeFileSync(join(dir, 'report.md'), `# Report\n\n- Output: ${dir}/\n- Time: ${ms / 1000} s; ${ms * 7} tokens/s\n- Records: 4\n`);
  }
  return out;
}

test('two runs with the same work and outputs pass; report times, the folder path and cache hits are not compared', () => {
  const { a, b } = twoRuns();
  assert.equal(comparable(a, 'report.json'), comparable(b, 'report.json'));
  assert.equal(comparable(a, 'report.md'), '# Report\n\n- Output: <out>/\n- Records: 4\n');
  assert.doesNotThrow(() => assertSameWork(work(), work(), ['x', 'yz'], ['x', 'yz'], a, b));
  // The warm run found 85 of the 90 pieces in its caches (the cold run 40), in less time: the same work.
  const warm = work({ encode: { ms: 1, cpuMs: 1, tokens: 100, calls: 3, chars: 400, pieces: 90, found: 85 } });
  assert.doesNotThrow(() => assertSameWork(work(), warm, ['x', 'yz'], ['x', 'yz'], a, b));
});

test('a measured run that encoded, rendered or wrote less fails, naming what differs', () => {
  const { a, b } = twoRuns();
  const fails = (w: RunWork, texts: string[], re: RegExp) => assert.throws(() => assertSameWork(work(), w, ['x', 'yz'], texts, a, b), re);
  const enc = { ms: 1, cpuMs: 1, tokens: 100, calls: 3, chars: 400, pieces: 90, found: 90 };
  fails(work({ encode: { ...enc, calls: 2 } }), ['x', 'yz'], /encode calls: 3 \(cold run\) vs 2 \(warm run\)/);
  fails(work({ encode: { ...enc, chars: 399 } }), ['x', 'yz'], /encoded characters/);
  fails(work({ encode: { ...enc, tokens: 101 } }), ['x', 'yz'], /encoded tokens: 100 \(cold run\) vs 101 \(warm run\)/);
  fails(work({ encode: { ...enc, pieces: 80, found: 80 } }), ['x', 'yz'], /pieces looked up: 90 \(cold run\) vs 80 \(warm run\)/);
  fails(work({ renders: { render: 10, spans: 0, traced: 4, proven: 79, fallback: 0 } }), ['x', 'yz'], /template renders/);
  fails(work({ totals: { recordsWritten: 4, totalTokens: 99 } }), ['x', 'yz'], /totals/);
  fails(work(), ['x', 'yy'], /encoded texts differ \(first at call 1\)/);
  fails(work(), ['x'], /encoded texts differ \(first at call 1\)/);
});

test('an output file that differs by one byte, a report line other than the time, or a missing file fails', () => {
  const fails = (change: (b: string) => void, re: RegExp) => {
    const { a, b } = twoRuns();
    change(b);
    assert.throws(() => assertSameWork(work(), work(), [], [], a, b), re);
  };
  fails(
    (b) => writeFileSync(join(b, 'data', 'tokenized_data.jsonl'), '{"input_ids":[1,2,3],"loss_mask":[0,0,1]}\n'),
    /output file data\/tokenized_data.jsonl differs/,
  );
  fails((b) => writeFileSync(join(b, 'report.md'), `# Report\n\n- Output: ${b}/\n- Time: 1 s; 7 tokens/s\n- Records: 5\n`), /output file report.md differs/);
  fails((b) => writeFileSync(join(b, 'problems.jsonl'), ''), /output files: .*problems.jsonl/);
});
