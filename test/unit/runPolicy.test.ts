/**
 * The run policies of `prepare` through the CLI: status words and exit codes
 * (a 50 %-errored file is DEGRADED, exit 0), --strict, --max-error-rate,
 * --skip-failed-files (multi-file runs), --dedup accounting, --dry-run, and
 * output folders that cannot be written (one line, exit 1, before any row is read).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkOutputDir, OutputError } from '../../src/core/run/outputs/output';
import { BATCH_ROWS } from '../../src/core/run/prepare/batches';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { readReport } from '../../src/core/run/reports/report';
import { cliNodeArgs, lenmlModelDir, runCli, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
/**
 * The CLI: in this process (runCli), or as a child process when it must run as another user (`uid`, `gid`, `env`:
 * the EACCES case, which needs a real unprivileged process).
 */
async function cli(args: string[], opts: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {}) {
  if (opts.uid === undefined) {
    const r = await runCli(args, { cwd: ROOT });
    return { code: r.status as number | null, stdout: r.stdout, stderr: r.stderr };
  }
  const r = spawnSync(process.execPath, [...cliNodeArgs(), ...args], { encoding: 'utf8', cwd: ROOT, ...opts });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const chat = (i: number, extra = '') => ({
  messages: [
    { role: 'user', content: `q${i}${extra}` },
    { role: 'assistant', content: `a${i}${extra}` },
  ],
});
/** A row that errors (a role outside the alias table). */
const bad = (i: number) => ({
  messages: [
    { role: 'wizard', content: `w${i}` },
    { role: 'assistant', content: `a${i}` },
  ],
});
const KW = ['--template-kwargs', '{"enable_thinking": false}'];

test('a 50 %-errored file is DEGRADED and exits 0; --max-error-rate and --strict fail it and write nothing', async () => {
  const dir = tempDir();
  const file = writeJsonl([chat(1), bad(2), chat(3), bad(4)], 'half.jsonl', dir);
  const out = join(dir, 'out');
  const r = await cli(['prepare', file, '--out', out, ...KW]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ {2}DEGRADED {2}.*half\.jsonl .* {2}4 {2,}2 {2,}0 {2,}0 {2,}2 /m);
  assert.match(r.stdout, /Errored rows in .*half\.jsonl \(2\):\n {2}line 2: .*wizard/);
  assert.match(r.stdout, /^Status: DEGRADED — rows errored/m);
  const rep = readReport(join(out, 'report.json')).report;
  assert.equal(rep.status, 'degraded');
  assert.equal(rep.files[0].status, 'degraded');
  assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /\*\*Status: DEGRADED\*\*/);
  const before = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8');

  const m = await cli(['prepare', file, '--out', out, ...KW, '--max-error-rate', '0.25']);
  assert.equal(m.code, 1);
  assert.match(m.stdout, /half\.jsonl: 2 of 4 rows errored \(50\.0 %\), over --max-error-rate 0\.25/);
  assert.match(m.stdout, /^FAILED: nothing was written/m);
  const ok = await cli(['prepare', file, '--out', out, ...KW, '--max-error-rate', '50%']);
  assert.equal(ok.code, 0, 'a rate equal to the limit is within it');

  const s = await cli(['prepare', file, '--out', out, ...KW, '--strict']);
  assert.equal(s.code, 1);
  assert.match(s.stdout, /half\.jsonl: 2 rows errored \(--strict\)/);
  assert.equal(readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8'), before, 'a failed run replaces nothing');
  assert.equal((await cli(['prepare', file, '--out', out, '--max-error-rate', '1.5'])).code, 2);
});

test('the empty think block of the default Qwen3 template is a chat template note, once per run: OK, and --strict passes', async () => {
  const dir = tempDir();
  const file = writeJsonl([chat(1), chat(2)], 'clean.jsonl', dir);
  const plain = await cli(['prepare', file, '--out', join(dir, 'o1'), '--strict']);
  assert.equal(plain.code, 0, plain.stdout);
  assert.match(plain.stdout, /^ {2}OK {2}/m);
  assert.match(
    plain.stdout,
    /Chat template notes \(what this template and its kwargs write; not a file status, not a --strict failure\):\n {2}empty_think_trained × 2\n {6}an assistant turn without reasoning .*\n {6}→ .*enable_thinking/,
  );
  assert.match(plain.stdout, /^Status: OK/m);
  assert.match(
    readFileSync(join(dir, 'o1', 'report.md'), 'utf8'),
    /Chat template notes [^\n]*\n\n- `empty_think_trained` × 2: an assistant turn without reasoning/,
  );
  // With thinking off the block is prompt: no note at all.
  const off = await cli(['prepare', file, '--out', join(dir, 'o3'), '--strict', ...KW]);
  assert.equal(off.code, 0, off.stdout);
  assert.doesNotMatch(off.stdout, /empty_think_trained/);
  assert.match(off.stdout, /^Status: OK — every row written or set aside as it is/m);
});

test('--strict fails on a data-changing warning alone (a row dropped)', async () => {
  const dir = tempDir();
  const file = writeJsonl([chat(1), chat(2), { messages: [] }], 'clean.jsonl', dir);
  const plain = await cli(['prepare', file, '--out', join(dir, 'o1'), ...KW]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, /^ {2}WARNINGS {2}/m);
  assert.match(plain.stdout, /^Status: WARNINGS — 1 data-changing warning \(empty_conversation × 1; above\)/m);
  const strict = await cli(['prepare', file, '--out', join(dir, 'o2'), ...KW, '--strict']);
  assert.equal(strict.code, 1);
  assert.match(strict.stdout, /clean\.jsonl: data-changing warnings \(--strict\): empty_conversation × 1/);
  assert.equal(existsSync(join(dir, 'o2', 'data', 'tokenized_data.jsonl')), false);
});

test('a failing file fails a multi-file run, naming it and the way out; --skip-failed-files writes the rest and lists it', async () => {
  const dir = tempDir();
  const good = writeJsonl([chat(1), chat(2)], 'good.jsonl', dir);
  const empty = join(dir, 'empty.jsonl');
  writeFileSync(empty, '');
  const out = join(dir, 'out');
  const first = await cli(['prepare', good, '--out', out, ...KW]);
  assert.equal(first.code, 0);
  const before = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8');
  writeFileSync(good, [chat(5), chat(6), chat(7)].map((x) => JSON.stringify(x)).join('\n') + '\n');

  const r = await cli(['prepare', good, empty, '--out', out, ...KW]);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /Failed:\n {2}.*empty\.jsonl: no record written and no prompt set aside \(0 rows read/);
  assert.match(r.stdout, /FAILED: nothing was written; the output folders keep their previous files\. Run again with --skip-failed-files/);
  assert.equal(readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8'), before, "the good file's records are not written either");

  const s = await cli(['prepare', good, empty, '--out', out, ...KW, '--skip-failed-files']);
  assert.equal(s.code, 0, s.stdout);
  assert.match(s.stdout, /^ {2}SKIPPED {2}.*empty\.jsonl/m);
  assert.match(s.stdout, /Skipped \(--skip-failed-files; not in the outputs\):\n {2}.*empty\.jsonl: no record written/);
  const rep = readReport(join(out, 'report.json')).report;
  assert.deepEqual(
    rep.skippedFiles?.map((x) => x.file),
    [empty],
  );
  assert.equal(rep.status, 'warnings');
  assert.equal(rep.totals.rowsRead, 3);
  assert.equal(
    readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
      .trim()
      .split('\n').length,
    3,
  );

  // Without --out, each input has its own folder: one failing folder holds back the others (none replaced).
  const g2 = writeJsonl([chat(8)], 'g2.jsonl', dir);
  const r2 = await cli(['prepare', g2, empty, ...KW]);
  assert.equal(r2.code, 1);
  assert.equal(existsSync(join(dir, 'g2.eagle3', 'data', 'tokenized_data.jsonl')), false);
  const s2 = await cli(['prepare', g2, empty, ...KW, '--skip-failed-files']);
  assert.equal(s2.code, 0, s2.stdout);
  assert.equal(existsSync(join(dir, 'g2.eagle3', 'data', 'tokenized_data.jsonl')), true);
  assert.equal(existsSync(join(dir, 'empty.eagle3', 'data', 'tokenized_data.jsonl')), false);
  // Everything skipped: a run that writes nothing fails.
  assert.equal((await cli(['prepare', empty, ...KW, '--skip-failed-files'])).code, 1);
});

test('a file that fails mid-way under --skip-failed-files leaves none of its rows in the outputs (rollback)', async () => {
  const { gzipSync } = await import('node:zlib');
  const dir = tempDir();
  const good = writeJsonl([chat(1), chat(2)], 'good.jsonl', dir);
  // 4,000 distinct rows (~30 KB gzipped): the first half of the gzip holds ~2,000 rows, far more than one batch
  // (batches.ts BATCH_ROWS), so batches are written to the temporary file before the damage is read.
  let text = '';
  for (let i = 0; i < 4000; i++) text += JSON.stringify(chat(i, ` ${(i * 7919) % 10007}`)) + '\n';
  const gz = gzipSync(text);
  const damaged = join(dir, 'damaged.jsonl.gz');
  writeFileSync(damaged, gz.subarray(0, gz.length >> 1));
  const tail = writeJsonl([chat(3)], 'tail.jsonl', dir);
  const r = await prepare({
    inputs: [good, damaged, tail],
    outDir: join(dir, 'out'),
    workers: 1,
    skipFailedFiles: true,
    templateKwargs: { enable_thinking: false },
  });
  assert.equal(r.ok, true, r.failures.join('; '));
  const damagedReport = r.files[1];
  assert.equal(damagedReport.skipped, true);
  assert.ok(damagedReport.rowsRead > 0, 'rows were read (and written to the temporary file) before the damage');
  assert.ok(damagedReport.rowsRead > 10 * BATCH_ROWS, `${damagedReport.rowsRead} rows read before the damage: several batches`);
  // none of its rows are in the outputs, so it reports none written; what it had written is under leftOut
  assert.equal(damagedReport.rowsWritten, 0);
  assert.equal(damagedReport.recordsWritten, 0);
  assert.equal(damagedReport.totalTokens, 0);
  assert.equal(damagedReport.leftOut!.rowsWritten, damagedReport.rowsRead);
  assert.equal(damagedReport.leftOut!.recordsWritten, damagedReport.rowsRead);
  const json = JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'));
  assert.equal(json.files[1].rows_written, 0);
  assert.equal(json.files[1].left_out.rows_written, damagedReport.rowsRead);
  assert.match(damagedReport.failure!, /damaged\.jsonl\.gz: cannot read: .*damaged/);
  const ids = readFileSync(join(dir, 'out', 'data', 'tokenized_data.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).id);
  assert.deepEqual(ids, ['good.jsonl:1', 'good.jsonl:2', 'tail.jsonl:1']);
  assert.equal(r.totals.rowsRead, 3);
});

test('--dedup writes identical conversations once, across files and with the worker pool; the others are dropped as duplicate', async () => {
  const dir = tempDir();
  // Same conversation in two shapes (ShareGPT and OpenAI messages): identical after normalization.
  const a = writeJsonl([chat(1), chat(2), chat(1), { prompt: 'p' }, { prompt: 'p' }], 'a.jsonl', dir);
  const b = writeJsonl(
    [
      {
        conversations: [
          { from: 'human', value: 'q2' },
          { from: 'gpt', value: 'a2' },
        ],
      },
      {
        conversations: [
          { from: 'human', value: 'q9' },
          { from: 'gpt', value: 'a9' },
        ],
      },
    ],
    'b.jsonl',
    dir,
  );
  for (const workers of [1, 2]) {
    const r = await prepare({ inputs: [a, b], outDir: join(dir, `out${workers}`), workers, dedup: true, templateKwargs: { enable_thinking: false } });
    assert.equal(r.ok, true, r.failures.join('; '));
    const [fa, fb] = r.files;
    assert.deepEqual(fa.dropped.duplicate, { count: 2, lines: [3, 5] });
    assert.equal(fa.rowsWritten, 2);
    assert.equal(fa.rowsSetAside, 1);
    assert.deepEqual(fb.dropped.duplicate, { count: 1, lines: [1] });
    assert.equal(fb.rowsWritten, 1);
    for (const f of r.files) assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
    // A drop the user asked for: not a data-changing warning.
    assert.equal(r.status, 'ok');
    const ids = readFileSync(join(dir, `out${workers}`, 'data', 'tokenized_data.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    assert.deepEqual(ids, ['a.jsonl:1', 'a.jsonl:2', 'b.jsonl:2']);
  }
  const plain = await prepare({ inputs: [a, b], outDir: join(dir, 'plain'), workers: 1, templateKwargs: { enable_thinking: false } });
  assert.equal(plain.totals.recordsWritten, 5, 'without --dedup every row is written');
  const c = await cli(['prepare', a, b, '--out', join(dir, 'cli'), '--dedup', ...KW]);
  assert.equal(c.code, 0, c.stderr);
  assert.match(c.stdout, /Duplicates: 3 rows identical to an earlier conversation of the run were dropped/);
});

test('--dry-run writes nothing and estimates the whole file from its first rows', async () => {
  const dir = tempDir();
  const rows = [];
  for (let i = 0; i < 400; i++) rows.push(i % 4 === 3 ? bad(i) : chat(i, ' padding text that is the same length'));
  const file = writeJsonl(rows, 'big.jsonl', dir);
  const out = join(dir, 'out');
  const r = await cli(['prepare', file, '--out', out, '--dry-run', '100', '--json', ...KW]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(existsSync(out), false, 'a dry run creates nothing');
  const rep = JSON.parse(r.stdout);
  assert.equal(rep.files[0].rows_read, 100);
  assert.equal(rep.files[0].rows_errored, 25);
  const est = rep.dry_run.files[0];
  assert.equal(est.rows_sampled, 100);
  assert.equal(est.complete, false);
  assert.ok(Math.abs(est.rows - 400) <= 8, `estimated rows ${est.rows}`);
  assert.ok(Math.abs(est.records - 300) <= 8, `estimated records ${est.records}`);
  const text = await cli(['prepare', file, '--out', out, '--dry-run', ...KW]);
  assert.equal(text.code, 0);
  assert.match(text.stdout, /Estimates for the whole files \(the first 1,000 rows of each, scaled by bytes\):\n.*\n {2}.*big\.jsonl +400 +300 .* whole file/);
  assert.match(text.stdout, /^Dry run: nothing written/m);
  assert.equal(existsSync(out), false);
});

test('--dry-run N on a small file (every row read for format detection) scales from the bytes of the N rows', async () => {
  const dir = tempDir();
  for (const n of [16, 50]) {
    const rows = [];
    for (let i = 0; i < n; i++) rows.push(chat(i, ' padding text that is the same length'));
    const file = writeJsonl(rows, `s${n}.jsonl`, dir);
    const r = await prepare({
      inputs: [file],
      outDir: join(dir, `out${n}`),
      workers: 1,
      dryRun: { sampleRows: 5 },
      templateKwargs: { enable_thinking: false },
    });
    const est = r.dryRun!.files[0];
    assert.equal(est.rowsSampled, 5);
    assert.equal(est.complete, false, `${n} rows: 5 sampled is not the whole file`);
    assert.ok(est.bytesSampled < est.bytesTotal, JSON.stringify(est));
    assert.ok(Math.abs(est.rows - n) <= 1, `${n} rows: estimated ${est.rows}`);
    // a sample as large as the file is exact
    const all = await prepare({
      inputs: [file],
      outDir: join(dir, `all${n}`),
      workers: 1,
      dryRun: { sampleRows: n },
      templateKwargs: { enable_thinking: false },
    });
    assert.equal(all.dryRun!.files[0].complete, true);
    assert.equal(all.dryRun!.files[0].rows, n);
  }
});

/** The one line an unwritable output folder ends in: exit 1, nothing on stdout, no row read (no "reading" step logged). */
function assertOneLineFailure(r: { code: number | null; stdout: string; stderr: string }, re: RegExp): void {
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], re);
  assert.doesNotMatch(r.stderr, /reading |Error: |\n {4}at /);
}

test('an output folder with a file in the way fails in one line before any row is read', async () => {
  const dir = tempDir();
  const file = writeJsonl([chat(1)], 'd.jsonl', dir);
  const blocker = join(dir, 'blocker');
  writeFileSync(blocker, 'x');
  assertOneLineFailure(
    await cli(['prepare', file, '--out', join(blocker, 'out'), '--verbose']),
    /^eagle3-prep: cannot create the output folder .*blocker\/out: a file is in the way \(not a folder\) \(ENOTDIR\)$/,
  );
  assertOneLineFailure(
    await cli(['prepare', file, '--out', blocker, '--verbose']),
    /^eagle3-prep: cannot create the output folder .*blocker: a file is in the way \(not a folder\) \(EEXIST\)$/,
  );
});

test('a folder the user may not write (EACCES) fails in one line before any row is read', async (t) => {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  const file = writeJsonl([chat(1)], 'd.jsonl', dir);
  const locked = join(dir, 'locked');
  mkdirSync(locked);
  chmodSync(locked, 0o555);
  // root bypasses permission bits: run the CLI as an unprivileged user then (proves the real EACCES path, not a simulation).
  const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534, env: { ...process.env, HOME: dir, TMPDIR: dir } } : {};
  if (process.getuid?.() === 0) chmodSync(dir, 0o777);
  const r = await cli(['prepare', file, '--out', join(locked, 'out'), '--verbose'], asUser);
  if (r.code !== 1 && /EPERM|setuid|uid/i.test(r.stderr)) return t.skip(`cannot run as an unprivileged user here: ${r.stderr.split('\n')[0]}`);
  assertOneLineFailure(r, /^eagle3-prep: cannot create the output folder .*locked\/out: permission denied \(EACCES\)$/);
  const r2 = await cli(['prepare', file, '--out', locked, '--verbose'], asUser);
  assertOneLineFailure(r2, /^eagle3-prep: cannot write to the output folder .*locked: permission denied \(EACCES\)$/);
  assert.deepEqual(readdirSync(locked), []);
});

test('a full disk (ENOSPC) and a read-only file system (EROFS) fail in one line before any row is read (real tmpfs mounts)', async (t) => {
  const dir = tempDir();
  const file = writeJsonl([chat(1)], 'd.jsonl', dir);
  const mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=32k', 'tmpfs', mnt], { encoding: 'utf8' });
  if (m.status !== 0) return t.skip(`cannot mount a tmpfs here (${(m.stderr || m.error?.message || '').trim()}); covered by the injected-error test below`);
  try {
    assertOneLineFailure(
      await cli(['prepare', file, '--out', mnt, '--verbose']),
      /^eagle3-prep: cannot write to the output folder .*mnt: no space left on device \(ENOSPC\)$/,
    );
    assert.deepEqual(readdirSync(mnt), [], 'the write check leaves nothing behind');
    // Room for the write check but not for the records: the disk fills mid-run; one line still, and no temporary file left.
    assert.equal(spawnSync('mount', ['-o', 'remount,size=256k', mnt]).status, 0);
    const rows = [];
    for (let i = 0; i < 3000; i++) rows.push(chat(i, ` and a longer text so that the records need more room than the disk has ${i}`));
    const big = writeJsonl(rows, 'big.jsonl', dir);
    const full = await cli(['prepare', big, '--out', mnt, '--workers', '1']);
    assert.equal(full.code, 1, full.stdout);
    assert.equal(
      full.stderr.trim().split('\n').pop(),
      `eagle3-prep: cannot write ${join(mnt, 'data', 'tokenized_data.jsonl')}: no space left on device (ENOSPC)`,
    );
    assert.doesNotMatch(full.stderr, /\n {4}at |Unhandled/);
    assert.deepEqual(readdirSync(mnt), []);
    assert.equal(spawnSync('mount', ['-o', 'remount,ro', mnt]).status, 0);
    assertOneLineFailure(
      await cli(['prepare', file, '--out', join(mnt, 'sub'), '--verbose']),
      /^eagle3-prep: cannot create the output folder .*mnt\/sub: read-only file system \(EROFS\)$/,
    );
  } finally {
    spawnSync('umount', [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
});

test('checkOutputDir names the folder and the reason for each failing step (injected errors: create, write, rename)', () => {
  const fail = (code: string) => () => {
    throw Object.assign(new Error(`${code}: simulated`), { code });
  };
  const ok = () => undefined;
  const cases: [Parameters<typeof checkOutputDir>[1], RegExp][] = [
    [
      { mkdirSync: fail('EROFS'), writeFileSync: ok, renameSync: ok, rmSync: ok } as never,
      /^cannot create the output folder \/x: read-only file system \(EROFS\)$/,
    ],
    [
      { mkdirSync: ok, writeFileSync: fail('ENOSPC'), renameSync: ok, rmSync: ok } as never,
      /^cannot write to the output folder \/x: no space left on device \(ENOSPC\)$/,
    ],
    [
      { mkdirSync: ok, writeFileSync: ok, renameSync: fail('EACCES'), rmSync: ok } as never,
      /^cannot write to the output folder \/x: permission denied \(EACCES\)$/,
    ],
    [
      { mkdirSync: ok, writeFileSync: fail('EDQUOT'), renameSync: ok, rmSync: ok } as never,
      /^cannot write to the output folder \/x: disk quota exceeded \(EDQUOT\)$/,
    ],
  ];
  for (const [ops, re] of cases)
    assert.throws(
      () => checkOutputDir('/x', ops),
      (e: unknown) => e instanceof OutputError && re.test((e as Error).message),
    );
});

test('a chat template finding counts against a file only when it has rows of the probe shape (--strict passes plain chat)', async () => {
  // DeepSeek-V3 ends tool-call turns without a special token (probes tool_call, agent_reasoning, trailing_tool_result) and
  // Gemma-3 raises on tool turns: neither concerns a plain chat or a preference file.
  const dir = tempDir();
  const plain = writeJsonl([{ messages: [{ role: 'system', content: 'Be brief.' }, ...chat(1).messages] }, chat(2)], 'plain.jsonl', dir);
  const pref = writeJsonl([{ prompt: 'Q?', chosen: 'Good.', rejected: 'Bad.' }], 'pref.jsonl', dir);
  const tools = writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'W?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'w', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c', content: '4' },
          { role: 'assistant', content: '4.' },
        ],
      },
    ],
    'tools.jsonl',
    dir,
  );
  for (const model of ['deepseek_v3', 'gemma3'] as const) {
    const r = await prepare({ inputs: [plain, pref], outDir: join(dir, `${model}-plain`), workers: 1, strict: true, tokenizerDir: lenmlModelDir(model) });
    assert.equal(r.ok, true, `${model}: ${r.failures.join('; ')}`);
    assert.deepEqual(
      r.files.map((f) => f.status),
      ['ok', 'ok'],
    );
    // still visible: listed as a template finding that concerns no file
    const tw = r.warnings!.filter((w) => w.source === 'template');
    assert.ok(tw.length > 0 && tw.every((w) => w.files.length === 0), JSON.stringify(r.warnings));
    const c = await cli(['prepare', plain, '--strict', '--tokenizer', lenmlModelDir(model), '--out', join(dir, `${model}-cli`)]);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /Chat template notes/);
  }
  const r = await prepare({ inputs: [plain, tools], outDir: join(dir, 'ds-tools'), workers: 1, strict: true, tokenizerDir: lenmlModelDir('deepseek_v3') });
  assert.equal(r.ok, false);
  assert.deepEqual(
    r.files.map((f) => f.status),
    ['ok', 'failed'],
  );
  assert.match(r.failures.join('\n'), /tools\.jsonl: data-changing warnings \(--strict\): .*span_without_special_token/);
  assert.deepEqual(r.warnings!.find((w) => w.code === 'span_without_special_token')!.files, [tools]);
});

test('rows reusing an id get unique record and prompt ids (<id>~2, …) and a note counted in the summary', async () => {
  const dir = tempDir();
  const a = writeJsonl(
    [
      { id: 'a1', ...chat(1) },
      { id: 'a1', ...chat(2) },
      { id: 'p', prompt: 'q?' },
    ],
    'a.jsonl',
    dir,
  );
  const b = writeJsonl(
    [
      { id: 'a1', ...chat(3) },
      { id: 'p', prompt: 'r?' },
    ],
    'b.jsonl',
    dir,
  );
  const out = join(dir, 'out');
  const r = await prepare({ inputs: [a, b], outDir: out, workers: 1, templateKwargs: { enable_thinking: false } });
  assert.equal(r.ok, true, r.failures.join('; '));
  const ids = (f: string) =>
    readFileSync(join(out, f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
  assert.deepEqual(ids('data/tokenized_data.jsonl'), ['a1', 'a1~2', 'a1~3']);
  assert.deepEqual(ids('prompts_to_generate.jsonl'), ['p', 'p~2']);
  assert.deepEqual(
    r.files.map((f) => f.notes.duplicate_id_renamed),
    [1, 2],
  );
  const c = await cli(['prepare', a, '--out', join(dir, 'cli'), ...KW]);
  assert.equal(c.code, 0, c.stderr);
  assert.match(c.stdout, /Duplicate ids: 1 rows reuse an id/);
});
