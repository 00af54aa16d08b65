/**
 * `--long split` (records/split.ts): over every sample file, at several `--max-length` values,
 * decoding the records proves that every assistant turn the unlimited run trains is trained
 * exactly once across the pieces (or reported `target_too_long`), with the same trained text;
 * every piece fits the limit, ends with a trained turn, and is a real render that starts with the
 * conversation's head. Also `--long truncate` / `--truncate`, `drop`, and `--min-trainable-tokens`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { type PrepareOptions } from '../../src/core/run/contract';
import type { TargetTokenizer } from '../../src/core/tokenizers/types';
import { isolateTokenizerCache, lenmlModelDir, sharedTokenizer, tempDir } from '../helpers';

isolateTokenizerCache();
const SAMPLES = join(__dirname, '..', '..', 'samples');
const INPUTS = readdirSync(SAMPLES)
  .filter((f) => f.endsWith('.jsonl') && f !== 'prompts-only.jsonl')
  .map((f) => join(SAMPLES, f));

interface Rec {
  id: string;
  source: { file: string; line: number };
  input_ids: number[];
  loss_mask: number[];
  seq_len: number;
}

async function run(opts: Partial<PrepareOptions>): Promise<{ recs: Rec[]; report: any }> {
  const out = tempDir('eagle3-long-');
  const r = await prepare({ inputs: INPUTS, outDir: out, allowEmpty: true, ...opts });
  const recs = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);
  return { recs, report: r };
}

/** Decoded runs of consecutive trainable tokens, per conversation (`file:line`). */
function trainedRuns(tok: TargetTokenizer, recs: Rec[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of recs) {
    const key = `${r.source.file}:${r.source.line}`;
    const runs = out.get(key) ?? [];
    let cur: number[] = [];
    r.loss_mask.forEach((m, k) => {
      if (m) cur.push(r.input_ids[k]);
      if ((!m || k === r.loss_mask.length - 1) && cur.length) {
        runs.push(tok.decode(cur));
        cur = [];
      }
    });
    out.set(key, runs);
  }
  return out;
}

const sorted = (xs: string[]) => [...xs].sort();

for (const [name, dir] of [
  ['Qwen3', undefined],
  ['DeepSeek-V3', lenmlModelDir('deepseek_v3')],
] as const) {
  test(`${name}: --long split trains every assistant turn exactly once at several --max-length`, async () => {
    const tok = sharedTokenizer(dir);
    const full = await run({ tokenizerDir: dir });
    const want = trainedRuns(tok, full.recs);
    const targets = [...want.values()].reduce((a, r) => a + r.length, 0);
    let cutSeen = 0;
    for (const max of [384, 768, 1536]) {
      const { recs, report } = await run({ tokenizerDir: dir, maxLength: max, long: 'split' });
      assert.equal(report.long, 'split');
      const got = trainedRuns(tok, recs);
      const tooLong = report.files.reduce((a: number, f: any) => a + (f.notes.target_too_long ?? 0), 0);
      let placed = 0;
      for (const [key, runs] of want) {
        const g = got.get(key) ?? [];
        placed += g.length;
        // Every trained turn of the split run is one the unlimited run trains, with the same text, and none twice.
        const pool = [...runs];
        for (const x of g) {
          const k = pool.indexOf(x);
          assert.ok(k >= 0, `${key} at ${max}: trained ${JSON.stringify(x.slice(0, 80))} that the unlimited run does not (or twice)`);
          pool.splice(k, 1);
        }
        if (!tooLong) assert.deepEqual(sorted(g), sorted(runs), `${key} at ${max}`);
      }
      assert.equal(placed + tooLong, targets, `${max}: every target trained once or reported target_too_long`);
      for (const r of recs) {
        assert.ok(r.seq_len <= max, `${r.id}: ${r.seq_len} > ${max}`);
        // Ends with a trained turn: nothing but the text after its end-of-turn token follows.
        const lastTrained = r.loss_mask.lastIndexOf(1);
        assert.ok(r.seq_len - 1 - lastTrained <= 1, `${r.id}: ends ${r.seq_len - 1 - lastTrained} tokens after its last trained one`);
      }
      cutSeen += report.files.reduce((a: number, f: any) => a + (f.notes.context_window_cut ?? 0), 0);
    }
    assert.ok(cutSeen > 0, 'some records were cut');
  });
}

test('split pieces are renders of the head plus recent history (Qwen3, agent sample)', async () => {
  const tok = sharedTokenizer(undefined);
  const file = join(SAMPLES, 'agentic-trajectories.jsonl');
  const out = tempDir('eagle3-long-');
  await prepare({ inputs: [file], outDir: out, maxLength: 600, long: 'split', grouping: 'merged' });
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const recs = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);
  let checked = 0;
  for (const r of recs) {
    const text = tok.decode(r.input_ids);
    const msgs = rows[r.source.line - 1].messages as { role: string; content: string | null }[];
    const firstUser = msgs.find((m) => m.role === 'user')!;
    assert.ok(text.startsWith('<|im_start|>system\n'), 'the head: system turn first');
    assert.ok(text.includes(firstUser.content!.slice(0, 60)), 'the head: first user turn');
    assert.ok(text.endsWith('<|im_end|>\n') || text.endsWith('<|im_end|>'), 'ends with a turn');
    assert.equal(text.split('<|im_start|>').length - 1, text.split('<|im_end|>').length - 1, 'whole turns only (a render, not a splice)');
    checked++;
  }
  assert.ok(checked > 3, `pieces: ${checked}`);
});

test('--long drop and truncate (alias --truncate), --min-trainable-tokens', async () => {
  const drop = await run({ maxLength: 384 });
  assert.equal(drop.report.long, 'drop');
  assert.ok(drop.recs.every((r) => r.seq_len <= 384));
  assert.ok((drop.report.totals.dropped.too_long ?? 0) > 0 || drop.report.files.some((f: any) => f.notes.record_dropped_too_long));
  const trunc = await run({ maxLength: 384, truncate: true });
  const trunc2 = await run({ maxLength: 384, long: 'truncate' });
  assert.equal(trunc.report.long, 'truncate');
  assert.deepEqual(
    trunc.recs.map((r) => r.input_ids),
    trunc2.recs.map((r) => r.input_ids),
  );
  assert.ok(trunc.recs.some((r) => r.seq_len === 384));
  const all = await run({});
  const min = 40;
  const few = await run({ minTrainableTokens: min });
  const kept = all.recs.filter((r) => r.loss_mask.reduce((a, b) => a + b, 0) >= min);
  assert.ok(kept.length < all.recs.length && kept.length > 0);
  assert.deepEqual(
    few.recs.map((r) => r.input_ids),
    kept.map((r) => r.input_ids),
  );
  const notes = few.report.files.reduce((a: number, f: any) => a + (f.notes.record_dropped_few_trainable_tokens ?? 0), 0);
  assert.equal(notes, all.recs.length - kept.length);
});

test('--long split: a turn longer than --max-length even alone is not written (target_too_long); the others are', async () => {
  const tok = sharedTokenizer(undefined);
  const long = Array.from({ length: 400 }, (_, k) => `word${k}`).join(' ');
  const file = join(tempDir('eagle3-long-in-'), 'one.jsonl');
  const row = {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Write a lot.' },
      { role: 'assistant', content: long },
      { role: 'user', content: 'Now say ok.' },
      { role: 'assistant', content: 'ok' },
    ],
  };
  writeFileSync(file, JSON.stringify(row) + '\n');
  const out = tempDir('eagle3-long-');
  const r = await prepare({ inputs: [file], outDir: out, maxLength: 120, long: 'split' });
  assert.equal(r.files[0].notes.target_too_long, 1);
  assert.equal(r.files[0].notes.context_window_cut, 1);
  const recs = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);
  assert.equal(recs.length, 1);
  const text = tok.decode(recs[0].input_ids);
  // The head, then the short exchange: the long turn and its question are left out.
  assert.equal(
    text,
    '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWrite a lot.<|im_end|>\n<|im_start|>user\nNow say ok.<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nok<|im_end|>\n',
  );
  assert.equal(tok.decode(recs[0].input_ids.filter((_, k) => recs[0].loss_mask[k])), '<think>\n\n</think>\n\nok<|im_end|>');
  // Nothing fits at all: the row is dropped too_long.
  const r2 = await prepare({ inputs: [file], outDir: tempDir('eagle3-long-'), maxLength: 20, long: 'split', allowEmpty: true });
  assert.equal(r2.files[0].dropped.too_long?.count, 1);
});
