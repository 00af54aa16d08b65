/**
 * Cancel by signal, the way `timeout`, Slurm, Kubernetes and a closed terminal
 * stop jobs: SIGINT, SIGTERM and SIGHUP, each sent at several points of a run
 * (tokenizer loaded, mid-run with records already in the temporary files,
 * with the worker pool), end the run with exit 1 and one line; no temporary
 * file is left and the previous outputs are byte for byte as they were. A
 * `kill -9` run's temporary files are removed by the next run on the folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const CLI = ['--import', 'tsx', join(ROOT, 'src', 'cli.ts')];
const OUTPUTS = ['tokenized_data.jsonl', 'prompts_to_generate.jsonl', 'report.json', 'report.md'];

function chatRows(n: number, tag: string): string {
  let s = '';
  for (let i = 0; i < n; i++)
    s +=
      JSON.stringify({
        messages: [
          { role: 'user', content: `${tag} question ${i} about item ${(i * 7919) % 10007}` },
          { role: 'assistant', content: `${tag} answer ${(i * 104729) % 99991} with a few more words to tokenize` },
        ],
      }) + '\n';
  return s;
}

/** A folder with a small and a large input, and an output folder holding a previous run's outputs. */
function setup(): { dir: string; a: string; b: string; out: string; before: string[] } {
  const dir = tempDir('eagle3-signal-');
  const a = join(dir, 'a.jsonl');
  const b = join(dir, 'b.jsonl');
  const out = join(dir, 'out');
  writeFileSync(a, chatRows(3, 'prev'));
  const first = spawnSync(process.execPath, [...CLI, 'prepare', a, '--out', out, '--quiet'], { encoding: 'utf8', cwd: ROOT });
  assert.equal(first.status, 0, first.stderr);
  const before = OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8'));
  writeFileSync(a, chatRows(200, 'a'));
  writeFileSync(b, chatRows(6000, 'b'));
  return { dir, a, b, out, before };
}

/** Runs prepare, sends `signal` once stderr shows `marker` (then waits `delayMs`); resolves with the exit code and stderr. */
function runAndSignal(
  args: string[],
  marker: RegExp,
  signal: NodeJS.Signals,
  delayMs = 150,
): Promise<{ code: number | null; sig: NodeJS.Signals | null; stderr: string; sent: boolean }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let sent = false;
    p.stderr.on('data', (d) => {
      stderr += d;
      if (!sent && marker.test(stderr)) {
        sent = true;
        setTimeout(() => p.kill(signal), delayMs);
      }
    });
    p.stdout.resume();
    p.on('close', (code, sig) => resolve({ code, sig, stderr, sent }));
  });
}

function temps(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.includes('.tmp-'));
}

const POINTS: { name: string; extra: string[]; marker: RegExp }[] = [
  { name: 'tokenizer loaded, no row read yet', extra: ['--workers', '1'], marker: /chat template:/ },
  { name: 'mid-run, one thread, records already in the temporary files', extra: ['--workers', '1'], marker: /reading .*b\.jsonl/ },
  { name: 'mid-run, worker pool', extra: ['--workers', '2'], marker: /reading .*b\.jsonl/ },
];

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  test(`${signal} cancels at every point: exit 1, one line, no temporary file, previous outputs intact`, async () => {
    const { a, b, out, before } = setup();
    for (const point of POINTS) {
      const r = await runAndSignal(['prepare', a, b, '--out', out, '--verbose', ...point.extra], point.marker, signal);
      assert.ok(r.sent, `${point.name}: the marker never appeared:\n${r.stderr}`);
      assert.equal(r.sig, null, `${point.name}: the process was killed by ${r.sig} instead of cancelling`);
      assert.equal(r.code, 1, `${point.name}: exit ${r.code}\n${r.stderr}`);
      const last = r.stderr.trim().split('\n').pop()!;
      assert.match(last, new RegExp(`^eagle3-prep: cancelled \\(${signal}\\): nothing was written; the output folders keep their previous files$`), point.name);
      assert.deepEqual(temps(out), [], `${point.name}: temporary files left`);
      assert.deepEqual(
        OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8')),
        before,
        `${point.name}: the previous outputs changed`,
      );
    }
  });
}

test('temporary files of a kill -9 run are removed by the next run on that folder; a live run’s are kept', async () => {
  const { a, b, out, before } = setup();
  const r = await runAndSignal(['prepare', a, b, '--out', out, '--verbose', '--workers', '1'], /reading .*b\.jsonl/, 'SIGKILL', 300);
  assert.equal(r.sig, 'SIGKILL');
  const left = temps(out);
  assert.ok(left.length >= 1, 'a killed run leaves its temporary files (the case the cleanup is for)');
  assert.deepEqual(
    OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8')),
    before,
  );
  // A temporary file of a process that is still running (this test's own) must survive the cleanup.
  const live = join(out, `.tokenized_data.jsonl.tmp-${hostname().replace(/[^A-Za-z0-9_.]/g, '_')}-${process.pid}-0badf00d`);
  writeFileSync(live, 'in use');
  const next = spawnSync(process.execPath, [...CLI, 'prepare', a, '--out', out, '--verbose'], { encoding: 'utf8', cwd: ROOT });
  assert.equal(next.status, 0, next.stderr);
  assert.match(next.stderr, /removed \d+ temporary file\(s\) left by an interrupted run/);
  assert.deepEqual(temps(out), [live.split('/').pop()]);
});
