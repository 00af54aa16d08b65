/**
 * Chaos: the built CLI (dist/cli.js) is killed with SIGKILL mid-run, twice, and
 * restarted with the same --out; every row must end in the output exactly once.
 * Builds dist/ first (as `npm test` does).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeServer } from '../support/fakeOpenAIServer';
import { tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const lines = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8').split('\n').filter(Boolean) : []);

test('kill -9 mid-run and restart: every row present exactly once', async () => {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(b.status, 0, b.stderr);
  const N = 300;
  const srv = await startFakeServer({ latencyMs: 15 });
  try {
    const dir = tempDir();
    const ids = Array.from({ length: N }, (_, i) => `row-${i}`);
    const input = writeJsonl(
      ids.map((id, i) => ({ id, messages: [{ role: 'user', content: `q${i}` }] })),
      'prompts.jsonl',
      dir,
    );
    const out = join(dir, 'out.jsonl');
    const args = [join(ROOT, 'dist', 'cli.js'), 'generate', input, '--server', srv.url, '--out', out, '--concurrency', '8', '--backoff-ms', '10', '--json'];
    const killAt = async (n: number) => {
      const child = spawn(process.execPath, args, { stdio: 'ignore' });
      const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
      for (;;) {
        if (lines(out).length >= n) break;
        if (child.exitCode !== null) assert.fail(`the CLI exited (${child.exitCode}) before ${n} rows were written`);
        await new Promise((r) => setTimeout(r, 5));
      }
      child.kill('SIGKILL');
      await exited;
      const have = lines(out).length;
      assert.ok(have < N, `killed mid-run (${have} of ${N} written)`);
      return have;
    };
    const first = await killAt(60);
    const second = await killAt(first + 90);
    assert.ok(second > first);
    const requestsBefore = srv.requests.length;
    // Async spawn: the fake server lives in this process and must keep answering.
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const status = await new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    const last = { status, stdout, stderr };
    assert.equal(last.status, 0, last.stderr + last.stdout);
    const rep = JSON.parse(last.stdout);
    const written = lines(out).map((l) => JSON.parse(l).id);
    // Rows done before the last start are skipped, not re-sent.
    assert.equal(rep.already_done, second);
    assert.equal(rep.already_done + rep.generated, N);
    assert.ok(srv.requests.length - requestsBefore >= N - rep.already_done);
    const counts = new Map<string, number>();
    for (const id of written) counts.set(id, (counts.get(id) ?? 0) + 1);
    assert.deepEqual(
      [...counts.entries()].filter(([, c]) => c !== 1),
      [],
      'ids written more than once',
    );
    assert.deepEqual([...counts.keys()].sort(), [...ids].sort());
  } finally {
    await srv.close();
  }
});
