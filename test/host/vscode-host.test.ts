/**
 * Runs the extension-host suite (test/host/suite.ts → dist-test/host-suite.js) inside a real
 * VS Code: the VS Code server installed by scripts/vscode-host/install.mjs (`npm run host:install`),
 * driven by headless Chromium through scripts/vscode-host/run-tests.mjs. See test/host/README.md.
 *
 * Env: EAGLE3_VSCODE_SERVER (path of server-main.js; default: found under .cache/vscode-host),
 * CI / EAGLE3_REQUIRE_VSCODE_HOST (missing host = failure, not a skip). Expects `npm test` to have
 * built dist/ and dist-test/ first.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const repo = resolve(__dirname, '..', '..');
const runner = join(repo, 'scripts', 'vscode-host', 'run-tests.mjs');
const suite = join(repo, 'dist-test', 'host-suite.js');
const required = !!(process.env.CI || process.env.EAGLE3_REQUIRE_VSCODE_HOST);
const installHint = 'run `npm run host:install` (it installs into .cache/vscode-host, where this test looks), or set EAGLE3_VSCODE_SERVER';

/** server-main.js of the VS Code server: $EAGLE3_VSCODE_SERVER, else the first one under <repo>/.cache/vscode-host. */
function findServer(): string | undefined {
  const fromEnv = process.env.EAGLE3_VSCODE_SERVER;
  if (fromEnv) {
    assert.ok(existsSync(fromEnv), `EAGLE3_VSCODE_SERVER=${fromEnv} does not exist (${installHint})`);
    return resolve(fromEnv);
  }
  const root = join(repo, '.cache', 'vscode-host');
  const known = join(root, 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js');
  if (existsSync(known)) return known;
  if (!existsSync(root)) return undefined;
  // Any other layout (e.g. .cache/vscode-host/<version>/…): a bounded search.
  const stack: [string, number][] = [[root, 0]];
  while (stack.length) {
    const [dir, depth] = stack.pop()!;
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (name === 'server-main.js' && p.endsWith(join('out', 'server-main.js'))) return p;
      if (depth < 8 && !name.startsWith('.') && statSync(p, { throwIfNoEntry: false })?.isDirectory()) stack.push([p, depth + 1]);
    }
  }
  return undefined;
}

test('extension in a real VS Code: eagle3prep.prepare on the samples', { timeout: 17 * 60_000 }, async (t) => {
  const server = findServer();
  if (!server) {
    if (required) assert.fail(`VS Code host not installed (CI / EAGLE3_REQUIRE_VSCODE_HOST is set): ${installHint}`);
    t.skip(`VS Code host not installed: ${installHint}`);
    return;
  }
  assert.ok(existsSync(suite), `${suite} is missing: build first (npm test builds it; or node scripts/build.mjs)`);
  assert.ok(existsSync(join(repo, 'dist', 'extension.js')) && existsSync(join(repo, 'dist', 'worker.js')), 'dist/ is not built');

  // <tmp>/ws is the workspace folder the suite writes into; the screenshot is kept for a look
  // in $EAGLE3_SCREENSHOT_DIR (npm test: .cache/screenshots), else in <tmp>.
  const tmp = mkdtempSync(join(tmpdir(), 'eagle3-host-'));
  const folder = join(tmp, 'ws');
  mkdirSync(folder);
  const shots = process.env.EAGLE3_SCREENSHOT_DIR;
  if (shots) mkdirSync(shots, { recursive: true });
  const screenshot = shots ? join(shots, 'host-suite.png') : join(tmp, 'shot.png');
  const args = [runner, '--server', server, '--extension', repo, '--tests', suite, '--folder', folder, '--screenshot', screenshot, '--timeout-s', '900'];
  const t0 = Date.now();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((done, fail) => {
    const child = spawn(process.execPath, args, { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      out += '\n[vscode-host.test] killed after 960 s\n';
      child.kill('SIGTERM');
    }, 960_000);
    child.on('error', fail);
    child.on('close', (c) => {
      clearTimeout(timer);
      done({ code: c, output: out });
    });
  });
  // The workbench's own chatter (sockets, service worker, the refused trust dialog) is noise;
  // keep the suite's lines, errors and the runner's messages.
  const lines = output.split('\n');
  const relevant = lines.filter((l) => /\[host-suite\]|run-tests|Error|assert|failed|✗|killed/i.test(l) && !/refused to show dialog|Service Worker/.test(l));
  console.log(
    `VS Code host run (${((Date.now() - t0) / 1000).toFixed(1)} s, exit ${code}; screenshot ${screenshot}):\n${(code === 0 ? relevant : lines).join('\n')}`,
  );
  // The temp folder goes whatever the outcome (EAGLE3_KEEP_HOST_WS keeps it to look at); the screenshot stays.
  if (!process.env.EAGLE3_KEEP_HOST_WS) rmSync(shots ? tmp : folder, { recursive: true, force: true });
  assert.equal(code, 0, `the extension-host suite failed (exit ${code}; 1 = a test failed, 2 = harness trouble or time-out); output above`);
});
