/**
 * `generate` checks its servers before any row (`core/generate/preflight.ts`, shared with the editor):
 * a closed port or a server that accepts connections but answers nothing fails in under 2 s with what
 * to check, and a run that wrote nothing leaves no generated.jsonl or journal behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { awaitServers, preflightServers } from '../../src/core/generate/preflight';
import { generate } from '../../src/core/generate/run';
import { cliNodeArgs, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const c = spawn(process.execPath, [...cliNodeArgs(), ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('exit', (code) => res({ code, stdout, stderr }));
  });
}

/** A port nothing listens on (bound, then closed). */
function closedPort(): Promise<number> {
  return new Promise((ok) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => ok(p));
    });
  });
}

/** A TCP server that accepts connections and never writes a byte. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const s = net.createServer((c) => {
    sockets.add(c);
    c.on('error', () => {});
  });
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  return {
    port: (s.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((ok) => {
        for (const c of sockets) c.destroy();
        s.close(() => ok());
      }),
  };
}

const prompts = () => [1, 2, 3].map((i) => ({ id: `p${i}`, messages: [{ role: 'user', content: `question ${i}` }] }));

test('preflight: a closed port and a silent server each fail in under 2 s, saying which it is', async () => {
  const port = await closedPort();
  const silent = await silentServer();
  try {
    const t0 = Date.now();
    const [closed, mute] = await preflightServers([`http://127.0.0.1:${port}`, `http://127.0.0.1:${silent.port}`], { timeoutMs: 1500 });
    const ms = Date.now() - t0;
    assert.ok(ms < 2000, `${ms} ms`);
    assert.equal(closed.code, 'ECONNREFUSED');
    assert.equal(closed.error, `connection refused: nothing listens on 127.0.0.1:${port} (is the SGLang / vLLM server running?)`);
    assert.equal(mute.code, 'timeout');
    assert.match(
      mute.error!,
      new RegExp(`^no answer from 127\\.0\\.0\\.1:${silent.port} within 1\\.5 s: something accepts connections there but does not answer GET /v1/models`),
    );
  } finally {
    await silent.close();
  }
});

test('CLI generate against a closed port or a silent server: exit 1 in one line naming what to check; no file left behind', async () => {
  const port = await closedPort();
  const silent = await silentServer();
  const input = writeJsonl(prompts(), 'prompts_to_generate.jsonl');
  try {
    for (const [server, words] of [
      [`http://127.0.0.1:${port}`, /connection refused: nothing listens on 127\.0\.0\.1:\d+/],
      [`http://127.0.0.1:${silent.port}`, /no answer from 127\.0\.0\.1:\d+ within 1\.5 s/],
    ] as const) {
      const r = await cli(['generate', input, '--server', server]);
      assert.equal(r.code, 1, r.stderr);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0], /^eagle3-prep: generate: http:\/\/127\.0\.0\.1:\d+ — /);
      assert.match(lines[0], words);
      assert.match(
        lines[0],
        /Check --server \(the SGLang \/ vLLM server's host and port\), or wait for a server still starting with --wait-for-server SECONDS; nothing was written$/,
      );
      assert.deepEqual(readdirSync(dirname(input)), ['prompts_to_generate.jsonl']);
    }
  } finally {
    await silent.close();
    rmSync(dirname(input), { recursive: true, force: true });
  }
});

test('--wait-for-server: a server that starts listening later is waited for; a refused key is not', async () => {
  const port = await closedPort();
  const srv = createHttpServer((req, res) => {
    if (req.headers.authorization !== 'Bearer k') {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"invalid api key"}}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"m"}]}');
  });
  const later = setTimeout(() => srv.listen(port, '127.0.0.1'), 700);
  try {
    const lines: string[] = [];
    const checks = await awaitServers([`http://127.0.0.1:${port}`], { apiKey: 'k', timeoutMs: 1500, waitMs: 10_000, retryMs: 200, log: (l) => lines.push(l) });
    assert.deepEqual(
      checks.map((c) => [c.ok, c.models]),
      [[true, ['m']]],
    );
    assert.match(lines[0], /^waiting for http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): \d+ s left$/);
    const t0 = Date.now();
    const [denied] = await awaitServers([`http://127.0.0.1:${port}`], { apiKey: 'wrong', timeoutMs: 1500, waitMs: 10_000, keyHint: 'set KEY' });
    assert.ok(Date.now() - t0 < 2000, 'a refused key is not waited for');
    assert.equal(denied.code, 'http_401');
    assert.match(denied.error!, /^the server refused the API key \(HTTP 401 from http:\/\/127\.0\.0\.1:\d+\/v1\/models: invalid api key\): set KEY$/);
  } finally {
    clearTimeout(later);
    await new Promise<void>((ok) => srv.close(() => ok()));
  }
});

test('a run that writes nothing leaves no generated.jsonl and no journal', async () => {
  const dir = tempDir('eagle3-gen-nothing-');
  // No row holds a conversation: every row fails before any request, so no server is needed.
  const input = writeJsonl([{ foo: 1 }, { foo: 2 }], 'data.jsonl', dir);
  const r = await generate({ input, servers: ['http://127.0.0.1:9'], model: 'm', concurrency: 1, fsyncIntervalMs: 0 });
  assert.equal(r.ok, false);
  assert.equal(r.rowsRead, 2);
  assert.match(r.failures.join('\n'), /nothing written to .*data\.generated\.jsonl \(2 rows read\)/);
  assert.deepEqual(readdirSync(dir), ['data.jsonl']);
  rmSync(dir, { recursive: true, force: true });
});
