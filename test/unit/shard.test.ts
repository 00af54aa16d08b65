/**
 * Shards for a cluster: N runs of the CLI (`prepare --shard I/N`, in this process) merged
 * with `merge-reports` equal one run — tokenized_data.jsonl line for line
 * (order-insensitive, and in order with --data), report totals exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mergeReports, mergeShardResults } from '../../src/core/run/jobs/mergeReports';
import { MergeError } from '../../src/core/run/jobs/shardOutputs';
import type { PrepareResult } from '../../src/core/run/contract';
import { readReport } from '../../src/core/run/reports/report';
import { lenmlModelDir, runCli, tempDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');

/** The CLI, in this process (the shards of a job array share nothing but the file system: separate processes add nothing here). */
async function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = await runCli(args, { cwd: ROOT });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const readLines = (p: string) => readFileSync(p, 'utf8').split('\n').filter(Boolean);

/** Inputs: the seed samples plus a file with damaged rows, so every fate (written, set aside, dropped, errored) occurs. */
function inputs(): string[] {
  const dir = tempDir('eagle3-shard-in-');
  const damaged = join(dir, 'damaged.jsonl');
  const rows: string[] = [];
  for (let i = 0; i < 23; i++) {
    if (i % 7 === 3) rows.push('{"messages": [');
    else if (i % 7 === 5) rows.push(JSON.stringify({ foo: i }));
    else if (i % 7 === 6) rows.push(JSON.stringify({ prompt: `question ${i}` }));
    else
      rows.push(
        JSON.stringify({
          messages: [
            { role: 'user', content: `hello ${i}` },
            { role: 'assistant', content: `answer number ${i}` },
          ],
        }),
      );
  }
  writeFileSync(damaged, rows.join('\n') + '\n');
  return [join(ROOT, 'samples'), damaged];
}

test('3 shards (3 runs), merged, equal one run: records, prompts and report totals', async () => {
  const ins = inputs();
  const tk = ['--tokenizer', lenmlModelDir('deepseek_v3')];
  const single = tempDir('eagle3-single-');
  const N = 3;
  const shardDirs = Array.from({ length: N }, (_, i) => tempDir(`eagle3-shard${i}-`));
  // The single run uses 2 workers, the shards 1: the worker count must not matter either.
  const [one, ...shards] = await Promise.all([
    run(['prepare', ...ins, ...tk, '--out', single, '--workers', '2', '--quiet']),
    ...shardDirs.map((d, i) => run(['prepare', ...ins, ...tk, '--out', d, '--shard', `${i}/${N}`, '--workers', '1', '--quiet'])),
  ]);
  assert.equal(one.code, 0, one.stderr);
  for (const s of shards) assert.equal(s.code, 0, s.stderr);
  const merged = tempDir('eagle3-merged-');
  const m = await run(['merge-reports', ...shardDirs.reverse(), '--out', merged, '--data', '--json']);
  assert.equal(m.code, 0, m.stderr);

  const a: PrepareResult = readReport(join(single, 'report.json')).report;
  const b: PrepareResult = readReport(join(merged, 'report.json')).report;
  assert.deepEqual(b.totals, a.totals);
  assert.equal(a.totals.rowsRead, 15 + 23);
  assert.ok(a.totals.rowsErrored > 0 && a.totals.rowsDropped > 0 && a.totals.rowsSetAside > 0);
  // Per file: every counter, the first drop/error lines and the notes are those of the single run.
  for (let i = 0; i < a.files.length; i++) {
    const { rowsInFile, ...fb } = b.files[i] as PrepareResult['files'][number];
    assert.equal(rowsInFile, undefined);
    assert.deepEqual(fb, a.files[i]);
  }
  assert.deepEqual(b.shard, { index: 0, count: N, merged: true });
  // Each shard holds a third of the rows (by run-wide row index).
  const shardReports = shardDirs.map((d) => readReport(join(d, 'report.json')).report);
  assert.deepEqual(shardReports.map((r) => r.totals.rowsRead).sort(), [12, 13, 13]);
  // tokenized_data.jsonl: the shards' lines together are the single run's lines (order-insensitive) …
  const shardLines = shardDirs.flatMap((d) => readLines(join(d, 'data', 'tokenized_data.jsonl')));
  assert.deepEqual([...shardLines].sort(), readLines(join(single, 'data', 'tokenized_data.jsonl')).sort());
  // … and merge-reports --data restores input order byte for byte.
  assert.equal(readFileSync(join(merged, 'data', 'tokenized_data.jsonl'), 'utf8'), readFileSync(join(single, 'data', 'tokenized_data.jsonl'), 'utf8'));
  assert.equal(readFileSync(join(merged, 'prompts_to_generate.jsonl'), 'utf8'), readFileSync(join(single, 'prompts_to_generate.jsonl'), 'utf8'));
  // problems.jsonl (every dropped and errored row) too: merged in input order, equal to the single run's.
  const problems = readLines(join(single, 'problems.jsonl'));
  assert.equal(problems.length, a.totals.rowsDropped + a.totals.rowsErrored);
  assert.equal(readFileSync(join(merged, 'problems.jsonl'), 'utf8'), readFileSync(join(single, 'problems.jsonl'), 'utf8'));
  assert.match(readFileSync(join(merged, 'report.md'), 'utf8'), /Merged from 3 shards/);
  // draft-vocab: the merged counts already add the shards'; both together would count every token twice.
  const both = await run(['draft-vocab', '--size', '16', '--counts', merged, ...shardDirs, '--out', join(tempDir('eagle3-dv-'), 'o')]);
  assert.equal(both.code, 1, both.stdout + both.stderr);
  assert.match(both.stderr, /are the counts of a merge-reports run, which already adds its shards'/);
  // Without --data only the reports are written: the summary names no prompts file in --out.
  const reportsOnly = tempDir('eagle3-merged-reports-');
  const r = await run(['merge-reports', ...shardDirs, '--out', reportsOnly]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(existsSync(join(reportsOnly, 'prompts_to_generate.jsonl')), false);
  assert.doesNotMatch(r.stdout, /generate \S*prompts_to_generate\.jsonl/);
  assert.match(r.stdout, /prompts \(prompt-only conversations\) await answers in prompts_to_generate\.jsonl files this command did not write/);
  // Length statistics (in totals and files above) and token-id counts add up to the single run's.
  assert.ok(a.totals.lengths && a.totals.lengths.seqLen.count === a.totals.recordsWritten);
  assert.deepEqual(JSON.parse(readFileSync(join(merged, 'token_counts.json'), 'utf8')), JSON.parse(readFileSync(join(single, 'token_counts.json'), 'utf8')));
});

test('merge-reports refuses shards that do not add up', () => {
  const base = (index: number, count: number, rowsRead: number, rowsInFile = 10): PrepareResult =>
    ({
      ok: true,
      failures: [],
      outDir: `/s${index}`,
      outputs: { tokenizedData: '', promptsToGenerate: '', reportJson: '', reportMd: '' },
      tokenizer: { dir: '/t', name: 't', hash: 'h', embeddedDefault: false },
      templateKwargs: {},
      mask: 'assistant',
      reasoning: 'keep',
      maxLength: null,
      truncate: false,
      long: 'drop',
      grouping: 'exact',
      minTrainableTokens: 1,
      templateCheck: null,
      files: [
        {
          file: '/in.jsonl',
          format: 'x',
          evidence: [],
          rowsRead,
          rowsWritten: rowsRead,
          recordsWritten: rowsRead,
          rowsSetAside: 0,
          rowsDropped: 0,
          rowsErrored: 0,
          dropped: {},
          errors: [],
          notes: {},
          unreadFields: { 'turns[].mask': { count: 1, lines: [index + 1] } },
          trainableTokens: 1,
          totalTokens: 2,
          rowsInFile,
        },
      ],
      totals: {} as PrepareResult['totals'],
      elapsedMs: 1,
      shard: { index, count },
    }) as PrepareResult;
  const merged = mergeShardResults([base(0, 2, 5), base(1, 2, 5)], tempDir());
  assert.equal(merged.totals.rowsRead, 10);
  // Unread fields of the shards add up, their first lines merged in order.
  assert.deepEqual(merged.files[0].unreadFields, { 'turns[].mask': { count: 2, lines: [1, 2] } });
  assert.throws(() => mergeShardResults([base(0, 2, 5)], tempDir()), /1 reports given for 2 shards/);
  assert.throws(() => mergeShardResults([base(0, 2, 5), base(0, 2, 5)], tempDir()), /shard 0\/2 given twice/);
  assert.throws(
    () => mergeShardResults([base(0, 2, 5), base(1, 2, 4)], tempDir()),
    (e: Error) => e instanceof MergeError && /read 9 rows, the file has 10/.test(e.message),
  );
  assert.throws(() => mergeShardResults([base(0, 2, 5), base(1, 2, 5, 11)], tempDir()), /different row counts \(10, 11\)/);
  const other = base(1, 2, 5);
  other.tokenizer.hash = 'other';
  assert.throws(() => mergeShardResults([base(0, 2, 5), other], tempDir()), /other settings/);
  const unsharded = base(0, 1, 10);
  delete unsharded.shard;
  assert.throws(() => mergeShardResults([unsharded], tempDir()), /not a shard run/);
});

test('--shard usage errors exit 2', async () => {
  const r = await runCli(['prepare', 'samples/prompts-only.jsonl', '--out', tempDir(), '--shard', '3/3'], { cwd: ROOT });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /option '--shard <i\/n>' argument '3\/3' is invalid\. I\/N with 0 <= I < N is expected/);
});

test('merge-reports: a file no shard has anything of fails the merge and writes nothing; --skip-failed-files and --allow-empty as prepare', async () => {
  const dir = tempDir('eagle3-shard-empty-');
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, [1, 2, 3, 4].map((i) => JSON.stringify({ foo: i })).join('\n') + '\n');
  const ins = [join(ROOT, 'samples', 'chat-sharegpt-human-gpt.jsonl'), join(ROOT, 'samples', 'prompts-only.jsonl'), bad];
  const tk = ['--tokenizer', lenmlModelDir('deepseek_v3')];
  const shardDirs = [0, 1].map((i) => join(dir, `s${i}`));
  const shards = await Promise.all(shardDirs.map((d, i) => run(['prepare', ...ins, ...tk, '--out', d, '--shard', `${i}/2`])));
  for (const s of shards) {
    assert.equal(s.code, 0, s.stderr);
    // The shard says that this file has nothing in it, and what the merge will do about it.
    assert.match(s.stdout, /Nothing from these files in this shard \(merge-reports fails a file no shard has a record or prompt of/);
    assert.match(s.stdout, /^ {2}.*bad\.jsonl: 2 rows read, no record, no prompt$/m);
  }
  const out = join(dir, 'merged');
  mkdirSync(out);
  writeFileSync(join(out, 'previous.txt'), 'kept');
  const failed = await run(['merge-reports', ...shardDirs, '--out', out, '--data']);
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stdout, /^the merge of 2 shards failed$/m);
  assert.match(
    failed.stdout,
    /^FAILED: nothing was written; the output folders keep their previous files\. Run again with --skip-failed-files to write the other files and list the failed ones as skipped, or --allow-empty to accept a file that yields nothing\.$/m,
  );
  // It said nothing was written, and nothing was.
  assert.deepEqual(readdirSync(out), ['previous.txt']);

  const skipped = await run(['merge-reports', ...shardDirs, '--out', out, '--data', '--skip-failed-files']);
  assert.equal(skipped.code, 0, skipped.stderr);
  assert.match(
    skipped.stdout,
    /^Skipped \(--skip-failed-files; not in the outputs\):\n {2}.*bad\.jsonl: no record written and no prompt set aside \(4 rows read: 4 unrecognized_shape/m,
  );
  const rep = readReport(join(out, 'report.json')).report;
  assert.deepEqual(
    rep.skippedFiles?.map((s) => s.file),
    [bad],
  );
  assert.equal(rep.policy?.skipFailedFiles, true);
  assert.equal(readLines(join(out, 'data', 'tokenized_data.jsonl')).length, rep.totals.recordsWritten);
  assert.equal(readLines(join(out, 'prompts_to_generate.jsonl')).length, rep.totals.rowsSetAside);
  // The left-out file's rows are not in problems.jsonl either (as in one run with --skip-failed-files).
  assert.deepEqual(
    readLines(join(out, 'problems.jsonl')).filter((l) => JSON.parse(l).file === bad),
    [],
  );
  assert.equal(rep.totals.rowsRead, 3 + 4);

  const allowed = await run(['merge-reports', ...shardDirs, '--out', join(dir, 'merged2'), '--allow-empty']);
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.match(allowed.stdout, /^merged 2 shards$/m);
  rmSync(dir, { recursive: true, force: true });
});

test('a conversation set aside from a written row (split_part_set_aside) counts as a prompt: summary, report.md, merge --data; a failed merge writes nothing', async () => {
  const { prepare } = await import('../../src/core/run/prepare/pipeline');
  const { mergeReports } = await import('../../src/core/run/jobs/mergeReports');
  const { formatSummary } = await import('../../src/cli/summary');
  const { promptLines } = await import('../../src/core/run/reports/promptLines');
  const dir = tempDir();
  const file = join(dir, 'rows.jsonl');
  writeFileSync(
    file,
    [
      // One row, two conversations: one written, one prompt-only (set aside from a written row).
      {
        id: 'a',
        messages: [
          { role: 'user', content: 'Question about cats' },
          { role: 'assistant', content: 'Cats answer' },
        ],
        conversations: [{ from: 'human', value: 'Totally unrelated question about dogs' }],
      },
      { id: 'p', messages: [{ role: 'user', content: 'Tell me a joke.' }] },
      {
        id: 'w',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello.' },
        ],
      },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  const one = await prepare({ inputs: [file], outDir: join(dir, 'one'), workers: 1 });
  assert.equal(one.ok, true, one.failures.join('; '));
  assert.equal(readLines(one.outputs.promptsToGenerate).length, 2);
  assert.deepEqual([one.totals.rowsSetAside, one.files[0].notes.split_part_set_aside, promptLines(one)], [1, 1, 2]);
  assert.match(
    formatSummary([one], { cwd: dir }),
    /^Next: 2 prompts \(prompt-only conversations\) await answers: eagle3-prep generate one\/prompts_to_generate\.jsonl --server URL$/m,
  );
  assert.match(readFileSync(one.outputs.reportMd, 'utf8'), /`prompts_to_generate\.jsonl` \(2 prompts\)/);
  // Shards (the split row alone in shard 0): the merge checks the prompt lines against the same count.
  const shards: string[] = [];
  for (let i = 0; i < 2; i++) {
    const o = join(dir, `s${i}`);
    assert.equal((await prepare({ inputs: [file], outDir: o, workers: 1, shard: { index: i, count: 2 } })).ok, true);
    shards.push(o);
  }
  const merged = await mergeReports(shards, join(dir, 'm'), { data: true });
  assert.equal(merged.ok, true, merged.failures.join('; '));
  assert.deepEqual(readLines(merged.outputs.promptsToGenerate), readLines(one.outputs.promptsToGenerate));
  assert.match(formatSummary([merged], { cwd: dir }), /^Next: 2 prompts \(prompt-only conversations\) await answers/m);
  // A shard's prompts file that disagrees with its report: the merge fails and leaves no folder behind.
  writeFileSync(join(shards[0], 'prompts_to_generate.jsonl'), '');
  await assert.rejects(mergeReports(shards, join(dir, 'bad'), { data: true }), /prompts_to_generate\.jsonl hold 1 prompts, their reports 2/);
  assert.equal(existsSync(join(dir, 'bad')), false);
});

test('problems.jsonl of an OpenAssistant message file is in line order, and 3 merged shards equal one run; a shard without its problems.jsonl fails the merge', async () => {
  const dir = tempDir('eagle3-shard-oasst-');
  const oa = join(dir, 'oa2.jsonl');
  writeFileSync(
    oa,
    [
      { message_id: 'a1', parent_id: null, message_tree_id: 'A', role: 'prompter', text: 'What is 2+2?', rank: 0 },
      { message_id: 'a2', parent_id: 'a1', message_tree_id: 'A', role: 'assistant', text: '4', rank: 0 },
      { message_id: 'd1', parent_id: null, message_tree_id: 'D', role: 'prompter', text: 'Another', rank: 0 },
      { message_id: 'd2', parent_id: 'd1', message_tree_id: 'D', role: 'assistant', text: 'Answer D', rank: 0 },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  );
  // --max-length 12: every path is too long, so every row of the file has a problems.jsonl line.
  const common = [oa, '--max-length', '12', '--allow-empty', '--quiet'];
  const single = join(dir, 'single');
  const one = await run(['prepare', ...common, '--out', single]);
  assert.equal(one.code, 0, one.stderr);
  const lines = readLines(join(single, 'problems.jsonl')).map((l) => JSON.parse(l).line);
  assert.deepEqual(lines, [1, 2, 3, 4]);
  const shards = [0, 1, 2].map((i) => join(dir, `sh${i}`));
  for (const [i, d] of shards.entries()) {
    const s = await run(['prepare', ...common, '--out', d, '--shard', `${i}/3`]);
    assert.equal(s.code, 0, s.stderr);
  }
  const merged = join(dir, 'merged');
  const m = await run(['merge-reports', ...shards, '--out', merged, '--data', '--allow-empty']);
  assert.equal(m.code, 0, m.stderr);
  assert.equal(readFileSync(join(merged, 'problems.jsonl'), 'utf8'), readFileSync(join(single, 'problems.jsonl'), 'utf8'));
  // A cancelled merge (merge-reports got a signal) removes what it staged: no folder, no temporary file.
  await assert.rejects(mergeReports(shards, join(dir, 'merged3'), { data: true, allowEmpty: true, signal: AbortSignal.abort() }), { name: 'AbortError' });
  assert.equal(existsSync(join(dir, 'merged3')), false);
  // A shard's problems.jsonl gone: the merge fails and says which, instead of a merged file missing its rows.
  rmSync(join(shards[2], 'problems.jsonl'));
  const m2 = await run(['merge-reports', ...shards, '--out', join(dir, 'merged2'), '--data', '--allow-empty']);
  assert.equal(m2.code, 1, m2.stdout + m2.stderr);
  assert.match(m2.stdout + m2.stderr, /sh2\/problems\.jsonl: missing/);
  assert.equal(existsSync(join(dir, 'merged2', 'problems.jsonl')), false);
});

test('merge-reports --data says when two shards used the same record id (one run renames it <id>~2): duplicate_id_across_shards, WARNINGS', async () => {
  const dir = tempDir('eagle3-shard-ids-');
  const row = (q: string) =>
    JSON.stringify({
      id: '1',
      messages: [
        { role: 'user', content: q },
        { role: 'assistant', content: `The answer to ${q}` },
      ],
    }) + '\n';
  const a = join(dir, 'a.jsonl');
  const b = join(dir, 'b.jsonl');
  writeFileSync(a, row('first question'));
  writeFileSync(b, row('second question'));
  const single = join(dir, 'single');
  const one = await run(['prepare', a, b, '--out', single, '--quiet']);
  assert.equal(one.code, 0, one.stderr);
  const singleIds = readLines(join(single, 'data', 'tokenized_data.jsonl')).map((l) => JSON.parse(l).id);
  assert.equal(new Set(singleIds).size, singleIds.length, `one run's ids are unique: ${singleIds}`);
  const shards = [0, 1].map((i) => join(dir, `sh${i}`));
  for (const [i, d] of shards.entries()) {
    const s = await run(['prepare', a, b, '--out', d, '--shard', `${i}/2`, '--quiet']);
    assert.equal(s.code, 0, s.stderr);
  }
  const merged = join(dir, 'merged');
  const m = await run(['merge-reports', ...shards, '--out', merged, '--data']);
  assert.equal(m.code, 0, m.stderr);
  const ids = readLines(join(merged, 'data', 'tokenized_data.jsonl')).map((l) => JSON.parse(l).id);
  const repeats = ids.length - new Set(ids).size;
  assert.ok(repeats > 0, `the shards repeat an id: ${ids}`);
  const rep = readReport(join(merged, 'report.json')).report;
  assert.equal(rep.files.find((f) => f.file === b)?.notes.duplicate_id_across_shards, repeats);
  assert.equal(rep.status, 'warnings');
  assert.match(m.stdout, /duplicate_id_across_shards/);
});

test('an OpenAssistant file whose set-aside path spans two message rows counts one prompt line: summary, report (prompts_written), and 3 merged shards equal one run', async () => {
  const dir = tempDir('eagle3-shard-oaprompt-');
  const oa = join(dir, 'oa.jsonl');
  const m = (id: string, parent: string | null, tree: string, role: string, text: string) =>
    JSON.stringify({ message_id: id, parent_id: parent, message_tree_id: tree, role, text, rank: 0 });
  writeFileSync(
    oa,
    [
      m('a1', null, 'A', 'prompter', 'What is 2+2?'),
      m('a2', 'a1', 'A', 'assistant', '   '),
      m('b1', null, 'B', 'prompter', 'Hello there'),
      m('b2', 'b1', 'B', 'assistant', 'Hi!'),
      m('c1', null, 'C', 'prompter', 'Third'),
      m('c2', 'c1', 'C', 'assistant', 'Three'),
    ].join('\n') + '\n',
  );
  const single = join(dir, 'single');
  const one = await run(['prepare', oa, '--out', single]);
  assert.equal(one.code, 0, one.stderr);
  assert.equal(readLines(join(single, 'prompts_to_generate.jsonl')).length, 1);
  assert.match(one.stdout, /^Next: 1 prompt \(a prompt-only conversation\) awaits its answer: /m);
  const f = readReport(join(single, 'report.json')).report.files[0];
  assert.equal(f.rowsSetAside, 2, 'both rows of the path are set aside');
  assert.equal(f.promptsWritten, 1, 'one prompt line');
  const shards = [0, 1, 2].map((i) => join(dir, `sh${i}`));
  for (const [i, d] of shards.entries()) assert.equal((await run(['prepare', oa, '--out', d, '--shard', `${i}/3`, '--quiet'])).code, 0);
  const merged = join(dir, 'merged');
  const r = await run(['merge-reports', ...shards, '--out', merged, '--data']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(readFileSync(join(merged, 'prompts_to_generate.jsonl'), 'utf8'), readFileSync(join(single, 'prompts_to_generate.jsonl'), 'utf8'));
});
