/**
 * Fail early (issue 25): a file that cannot be read or whose first rows hold nothing recognizable fails the run at
 * its first rows, before the other files' work is spent; with --skip-failed-files it is skipped then.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { defaultOutDir } from '../../src/core/run/inputs/inputs';
import { type PrepareProgress } from '../../src/core/run/contract';
import { preflightFile, PREFLIGHT_ROWS } from '../../src/core/run/inputs/preflight';
import { runCli, tempDir, writeJsonl } from '../helpers';

/** `n` chat rows of a few dozen tokens each, distinct per file. */
function chats(tag: string, n: number): object[] {
  const rows: object[] = [];
  for (let i = 0; i < n; i++)
    rows.push({
      messages: [
        { role: 'user', content: `Question ${tag}-${i}: what is ${i} times ${(i * 37) % 101}? Explain the steps.` },
        { role: 'assistant', content: `${i} times ${(i * 37) % 101} is ${i * ((i * 37) % 101)}. Multiply the tens, then the units, and add them.` },
      ],
    });
  return rows;
}

/** Runs prepare and records which files it read rows of (its `reading …` log lines and its progress events). */
async function run(inputs: string[], out: string, extra: { skipFailedFiles?: boolean } = {}) {
  const reading: string[] = [];
  const rowsByFile = new Map<string, number>();
  const t0 = Date.now();
  const res = await prepare(
    { inputs, outDir: out, workers: 1, ...extra },
    {
      log: (line) => {
        const m = /^reading (.*)$/.exec(line);
        if (m) reading.push(m[1]);
      },
      onProgress: (p: PrepareProgress) => rowsByFile.set(p.file, p.rowsRead),
    },
  );
  return { res, reading, rowsByFile, ms: Date.now() - t0 };
}

test('a file of an unknown shape fails the run before any good file is read; --skip-failed-files skips it at once and writes the rest', async () => {
  const dir = tempDir();
  const bad = writeJsonl(
    Array.from({ length: 3000 }, (_, i) => ({ foo: i, bar: 'not a conversation' })),
    'bad.jsonl',
    dir,
  );
  const goods = [0, 1, 2].map((k) => writeJsonl(chats(`g${k}`, 1500), `good${k}.jsonl`, dir));

  // The bad file alone: what failing costs by itself (the tokenizer and template check are loaded once per process).
  const alone = await run([bad], join(dir, 'out0'));
  assert.equal(alone.res.ok, false);
  // Bad file first: the run fails without reading a row of the good files.
  const failed = await run([bad, ...goods], join(dir, 'out1'));
  assert.equal(failed.res.ok, false);
  assert.deepEqual(failed.reading, [], 'no file was processed');
  assert.equal(failed.rowsByFile.size, 0);
  assert.deepEqual(
    failed.res.files.map((f) => [f.file, f.rowsRead, f.status]),
    [[bad, 0, 'failed']],
  );
  assert.deepEqual(failed.res.notProcessed, goods);
  assert.match(
    failed.res.failures[0],
    new RegExp(
      `^${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: no record written and no prompt set aside \\(its first ${PREFLIGHT_ROWS} rows read: ${PREFLIGHT_ROWS} unrecognized_shape; found before any file was processed\\)\\. .*rows have the keys foo`,
    ),
  );
  assert.equal(
    failed.res.failures[1],
    '3 other file(s) not processed: the first rows of each input are checked before any file is processed, and the file(s) above fail the run (good0.jsonl, good1.jsonl, good2.jsonl)',
  );
  assert.equal(existsSync(join(dir, 'out1', 'data', 'tokenized_data.jsonl')), false);

  // Bad file last: the same (the check reads every input's first rows before the first file is processed).
  const last = await run([...goods, bad], join(dir, 'out2'));
  assert.equal(last.res.ok, false);
  assert.deepEqual(last.reading, []);
  assert.deepEqual(last.res.notProcessed, goods);

  // --skip-failed-files: the bad file is skipped without being read past its first rows; the good files are written.
  const skipped = await run([bad, ...goods], join(dir, 'out3'), { skipFailedFiles: true });
  assert.equal(skipped.res.ok, true, skipped.res.failures.join('\n'));
  assert.deepEqual(skipped.reading, goods, 'only the good files were processed');
  assert.equal(skipped.res.files[0].skipped, true);
  assert.equal(skipped.res.files[0].rowsRead, 0);
  assert.equal(skipped.res.totals.recordsWritten, 4500);
  assert.equal(
    readFileSync(join(dir, 'out3', 'data', 'tokenized_data.jsonl'), 'utf8')
      .trim()
      .split('\n').length,
    4500,
  );
  // The work the failed run did not spend: after the first run of the process (tokenizer and template check loaded),
  // failing costs a fraction of processing the good files.
  console.log(`bad file alone ${alone.ms} ms (first run: setup), bad file first of 4 ${failed.ms} ms, skipped and the 3 good files written ${skipped.ms} ms`);
  assert.ok(failed.ms * 4 < skipped.ms, `failed run ${failed.ms} ms, full run ${skipped.ms} ms`);
});

test('an unreadable file (damaged compression at its start) or an empty one fails at the first look; a file with one recognizable row among its first rows passes it', async () => {
  const dir = tempDir();
  const gz = join(dir, 'broken.jsonl.gz');
  // A gzip header, then bytes that are not deflate data: the reader fails on its first rows.
  const zipped = gzipSync(Buffer.from(JSON.stringify(chats('z', 1)[0]) + '\n'));
  writeFileSync(gz, Buffer.concat([zipped.subarray(0, 10), Buffer.alloc(64, 0xff)]));
  const empty = join(dir, 'empty.jsonl');
  writeFileSync(empty, '\n\n');
  const mixed = writeJsonl(['{not json', { foo: 1 }, ...chats('m', 1)], 'mixed.jsonl', dir);

  const broken = await preflightFile(gz);
  assert.equal(broken?.kind, 'unreadable');
  assert.match(broken!.message, new RegExp(`^${gz.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: cannot read: `));
  assert.deepEqual(await preflightFile(empty), {
    kind: 'nothing_recognized',
    message: `${empty}: no record written and no prompt set aside (0 rows read; found before any file was processed)`,
  });
  // --allow-empty (and shard runs) accept a file with nothing recognizable; an unreadable file still fails.
  assert.equal(await preflightFile(empty, { allowEmpty: true }), undefined);
  assert.equal((await preflightFile(gz, { allowEmpty: true }))?.kind, 'unreadable');
  assert.equal(await preflightFile(mixed), undefined);

  const good = writeJsonl(chats('g', 5), 'good.jsonl', dir);
  const res = await prepare({ inputs: [good, gz], outDir: join(dir, 'out'), workers: 1 });
  assert.equal(res.ok, false);
  assert.deepEqual(
    res.files.map((f) => f.file),
    [gz],
  );
  assert.deepEqual(res.notProcessed, [good]);
  assert.match(res.failures[0], /broken\.jsonl\.gz: cannot read: /);
});

test('without --out (one folder per input) a bad input fails the command before the other inputs are processed; the summary names them and the ways out', async () => {
  const dir = tempDir();
  const bad = writeJsonl([{ foo: 1 }, { foo: 2 }], 'bad.jsonl', dir);
  const goods = [0, 1].map((k) => writeJsonl(chats(`c${k}`, 3), `good${k}.jsonl`, dir));
  const root = join(__dirname, '..', '..');
  const r = await runCli(['prepare', bad, ...goods, '--workers', '1'], { cwd: root });
  assert.equal(r.status, 1, r.stderr);
  assert.match(
    r.stdout,
    /Failed:\n {2}.*bad\.jsonl: no record written and no prompt set aside \(2 rows read: 2 unrecognized_shape; found before any file was processed\)/,
  );
  assert.match(r.stdout, /^ {2}2 other file\(s\) not processed: .*\(good0\.jsonl, good1\.jsonl\)$/m);
  assert.match(r.stdout, /FAILED: nothing was written; the output folders keep their previous files\. Run again with --skip-failed-files .*, or --allow-empty/);
  // Not processed: no output folder was even created for the good inputs.
  for (const g of goods) assert.equal(existsSync(defaultOutDir(g)), false, defaultOutDir(g));
});
