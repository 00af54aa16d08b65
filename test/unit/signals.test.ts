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
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { cliNodeArgs, runCli, tempDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const CLI = cliNodeArgs();
const OUTPUTS = ['data/tokenized_data.jsonl', 'prompts_to_generate.jsonl', 'report.json', 'report.md'];

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

/**
 * A folder with a small and a large input, and an output folder holding a previous run's outputs (written by the CLI
 * in this process: only the signalled runs need a process of their own).
 */
async function setup(): Promise<{ dir: string; a: string; b: string; out: string; before: string[] }> {
  const dir = tempDir('eagle3-signal-');
  const a = join(dir, 'a.jsonl');
  const b = join(dir, 'b.jsonl');
  const out = join(dir, 'out');
  writeFileSync(a, chatRows(3, 'prev'));
  const first = await runCli(['prepare', a, '--out', out, '--quiet'], { cwd: ROOT });
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

/** Temporary files in an output folder and its records folder (data/). */
function temps(dir: string): string[] {
  const sub = join(dir, 'data');
  return [...readdirSync(dir), ...(existsSync(sub) ? readdirSync(sub).map((f) => `data/${f}`) : [])].filter((f) => f.includes('.tmp-'));
}

const POINTS: { name: string; extra: string[]; marker: RegExp }[] = [
  { name: 'tokenizer loaded, no row read yet', extra: ['--workers', '1'], marker: /chat template:/ },
  { name: 'mid-run, one thread, records already in the temporary files', extra: ['--workers', '1'], marker: /reading .*b\.jsonl/ },
  { name: 'mid-run, worker pool', extra: ['--workers', '2'], marker: /reading .*b\.jsonl/ },
];

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  test(`${signal} cancels at every point: exit 1, one line, no temporary file, previous outputs intact`, async () => {
    const { a, b, out, before } = await setup();
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
  const { a, b, out, before } = await setup();
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

/** A small deterministic PRNG (mulberry32), so a failing schedule can be replayed from its seed. */
function rng(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let x = Math.imul(t ^ (t >>> 15), 1 | t);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

test('repeated group signals of any kind at random points: the previous outputs or the new ones, never a temporary file', { timeout: 5 * 60_000 }, async () => {
  const { dir, a, b, out } = await setup();
  // The outputs of an uncancelled run over the same inputs: what "the new ones" must equal.
  const ref = join(dir, 'ref');
  // Run in a process of its own, as the signalled runs are, so its wall time says how long a run lasts on this machine
  // now: the signals' schedule is spread over that span (a fixed span fired after the end on a fast machine).
  const t0 = Date.now();
  const full = spawnSync(process.execPath, [...CLI, 'prepare', a, b, '--out', ref, '--quiet'], { cwd: ROOT, encoding: 'utf8' });
  const span = Date.now() - t0;
  assert.equal(full.status, 0, full.stderr);
  const DATA = ['data/tokenized_data.jsonl', 'prompts_to_generate.jsonl', 'problems.jsonl'];
  const fresh = DATA.map((f) => readFileSync(join(ref, f), 'utf8'));
  let current = OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8'));
  const seed = Number(process.env.EAGLE3_SIGNAL_SEED ?? Date.now() % 100000);
  const rand = rng(seed);
  const kinds = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  let cancelled = 0;
  // Six rounds; up to four more while none was cancelled mid-run (a loaded machine can shift a whole schedule).
  for (let round = 0; round < 6 || (cancelled === 0 && round < 10); round++) {
    // The first signal anywhere from start-up to a little past the run's measured end (the extra rounds in its first
    // half); then 1 to 3 more, 0-80 ms apart, to the whole group (as `timeout` does).
    const firstAt = Math.round(round < 6 ? 50 + rand() * span * 1.1 : 50 + rand() * span * 0.5);
    const more = 1 + Math.floor(rand() * 3);
    const plan = [kinds[Math.floor(rand() * 3)], ...Array.from({ length: more }, () => kinds[Math.floor(rand() * 3)])];
    const gaps = plan.map((_, i) => (i === 0 ? firstAt : Math.round(rand() * 80)));
    const where = `seed ${seed} round ${round}: ${plan.map((s, i) => `${s}+${gaps[i]}ms`).join(' ')}`;
    const r = await new Promise<{ code: number | null; sig: NodeJS.Signals | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [...CLI, 'prepare', a, b, '--out', out, '--workers', round % 2 ? '2' : '1', '--quiet'], {
        cwd: ROOT,
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      p.stderr.on('data', (d) => (stderr += d));
      let exited = false;
      (async () => {
        for (let i = 0; i < plan.length; i++) {
          await new Promise((w) => setTimeout(w, gaps[i]));
          if (exited) return;
          try {
            process.kill(-p.pid!, plan[i]);
          } catch {
            return; // the group is gone
          }
        }
      })();
      // A process still alive a minute after its signals hangs: killed, and the round fails saying so.
      const hang = setTimeout(
        () => {
          stderr += '\n[test] still running 60 s after its signals: killed';
          try {
            process.kill(-p.pid!, 'SIGKILL');
          } catch {
            /* gone */
          }
        },
        60_000 + gaps.reduce((x, y) => x + y, 0),
      );
      p.on('close', (code, sig) => {
        clearTimeout(hang);
        exited = true;
        resolve({ code, sig, stderr });
      });
    });
    assert.doesNotMatch(r.stderr, /still running 60 s after its signals/, `${where}: the process hung after its signals\n${r.stderr}`);
    assert.deepEqual(temps(out), [], `${where}: temporary files left\n${r.stderr}`);
    const now = OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8'));
    const kept = now.every((t, i) => t === current[i]);
    const replaced = DATA.every((f, i) => readFileSync(join(out, f), 'utf8') === fresh[i]);
    assert.ok(kept || replaced, `${where}: the outputs are neither the previous nor the new ones\n${r.stderr}`);
    if (r.sig !== null) assert.ok(kept, `${where}: killed by ${r.sig} (before the handlers were installed) but the outputs changed`);
    else if (r.code === 1) {
      cancelled++;
      assert.ok(kept, `${where}: exit 1 but the outputs changed`);
      assert.match(
        r.stderr.trim().split('\n').pop()!,
        /^eagle3-prep: cancelled \(SIG(INT|TERM|HUP)\): nothing was written; the output folders keep their previous files$/,
        where,
      );
    } else assert.equal(r.code, 0, `${where}: exit ${r.code}\n${r.stderr}`);
    current = now;
  }
  assert.ok(cancelled > 0, `seed ${seed}: no round was cancelled mid-run; the schedule tested nothing`);
});

test('abortOnSignals: the first signal aborts; a repeated one (any kind) says the cleanup goes on, once, and does not end the process', async () => {
  const { abortOnSignals } = await import('../../src/cli/signals');
  const said: string[] = [];
  const c = abortOnSignals({ graceMs: 60_000, say: (l) => said.push(l) });
  try {
    process.emit('SIGINT');
    assert.equal(c.signal.aborted, true);
    assert.equal((c.signal.reason as Error).message, 'cancelled (SIGINT)');
    process.emit('SIGTERM');
    process.emit('SIGINT');
    assert.equal(c.received(), 'SIGINT');
    assert.deepEqual(said, ['eagle3-prep: SIGTERM received; still cleaning up after SIGINT (at most 60 s more)']);
  } finally {
    c.dispose();
  }
  assert.equal(process.listenerCount('SIGINT'), 0);
});
