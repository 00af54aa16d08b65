// The pieces shared by the VS Code host's installer, its test runner and the UI scripts: where the
// host lives, a free loopback port, the VS Code server process, and the headless Chromium that
// opens its web workbench. See scripts/vscode-host/README.md.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository's root folder. */
export const REPO = resolve(import.meta.dirname, '..', '..');

/**
 * code-server release whose VS Code server build the tests run: 4.100.x carries VS Code 1.100.3,
 * the newest line that still runs on Node 20 (package.json `engines.vscode` is ^1.100.0).
 */
export const CODE_SERVER_VERSION = process.env.EAGLE3_CODE_SERVER_VERSION || '4.100.3';

/** Where `npm run host:install` puts the host unless told otherwise. */
export const DEFAULT_HOST_DIR = join(REPO, '.cache', 'vscode-host');

/** server-main.js inside an install folder. */
export function serverMainIn(dir) {
  return join(dir, 'node_modules', 'code-server', 'lib', 'vscode', 'out', 'server-main.js');
}

/**
 * The VS Code server to use: `$EAGLE3_VSCODE_SERVER` when set (it must exist), else the one under
 * .cache/vscode-host (any layout, found by a bounded search); undefined when none is installed.
 */
export function findServerMain(env = process.env) {
  if (env.EAGLE3_VSCODE_SERVER) {
    const p = resolve(env.EAGLE3_VSCODE_SERVER);
    if (!existsSync(p)) throw new Error(`EAGLE3_VSCODE_SERVER=${p} does not exist`);
    return p;
  }
  const known = serverMainIn(DEFAULT_HOST_DIR);
  if (existsSync(known)) return known;
  if (!existsSync(DEFAULT_HOST_DIR)) return undefined;
  const pending = [[DEFAULT_HOST_DIR, 0]];
  while (pending.length) {
    const [dir, depth] = pending.pop();
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (name === 'server-main.js' && p.endsWith(join('out', 'server-main.js'))) return p;
      if (depth < 8 && !name.startsWith('.') && statSync(p, { throwIfNoEntry: false })?.isDirectory()) pending.push([p, depth + 1]);
    }
  }
  return undefined;
}

/** The Chromium the workbench runs in: `$EAGLE3_CHROMIUM`, else the first of chromium / chromium-browser on PATH. */
export function findChromium(env = process.env) {
  if (env.EAGLE3_CHROMIUM) return env.EAGLE3_CHROMIUM;
  for (const name of ['chromium', 'chromium-browser']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return undefined;
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((done, fail) => {
    const s = createServer();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });
}

/**
 * Starts the VS Code server on a free loopback port with a throwaway data folder, without a
 * connection token, and resolves once its extension host agent listens. The server and everything
 * it starts (extension host, tsserver) get a temp folder inside the data folder (TMPDIR), so their
 * sockets and caches go away with it.
 * @returns {Promise<{ port: number, url: string, output: () => string, stop: () => Promise<void> }>}
 *   `stop` ends the server's whole process group (it starts helpers of its own), waits for the
 *   server to exit (at most 5 s) and removes the data folder.
 */
export async function startServer(serverMain, { timeoutMs = 120_000, dataPrefix = 'eagle3-vscode-data-' } = {}) {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), dataPrefix));
  const serverTmp = join(dataDir, 'tmp');
  mkdirSync(serverTmp);
  const child = spawn(
    process.execPath,
    [
      serverMain,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--without-connection-token',
      '--accept-server-license-terms',
      '--disable-telemetry',
      '--server-data-dir',
      dataDir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, TMPDIR: serverTmp, TMP: serverTmp, TEMP: serverTmp } },
  );
  let output = '';
  let exited = false;
  const gone = new Promise((done) => child.once('exit', () => ((exited = true), done())));
  const kill = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      /* already gone */
    }
  };
  const removeData = () => rmSync(dataDir, { recursive: true, force: true, maxRetries: 3 });
  const onExit = () => {
    kill('SIGKILL');
    removeData();
  };
  process.once('exit', onExit);
  const stop = async () => {
    process.off('exit', onExit);
    kill('SIGTERM');
    if (!exited) await Promise.race([gone, new Promise((done) => setTimeout(done, 5000))]);
    kill('SIGKILL'); // helpers that outlived the server
    await new Promise((done) => setTimeout(done, 200));
    removeData();
  };
  await new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the VS Code server did not start within ${timeoutMs / 1000} s:\n${output}`)), timeoutMs);
    const onData = (d) => {
      output += d;
      if (output.includes('Extension host agent listening')) {
        clearTimeout(timer);
        done();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => (output += d));
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the VS Code server exited with ${code}:\n${output}`));
    });
  });
  return { port, url: `http://127.0.0.1:${port}`, output: () => output, stop };
}

/**
 * The workbench URL that opens `folder` (optional) and passes the extension-test payload:
 * `extensionDevelopmentPath` (the extension's folder) and `extensionTestsPath` (a module exporting
 * `run(): Promise<void>`), both as paths on the server's machine.
 */
export function workbenchUrl(server, { extension, tests, folder }) {
  const remote = (p) => `vscode-remote://127.0.0.1:${server.port}${resolve(p)}`;
  const payload = [['skipWelcome', 'true']];
  if (extension) payload.push(['extensionDevelopmentPath', remote(extension)]);
  if (tests) payload.push(['extensionTestsPath', remote(tests)]);
  const query = [folder ? `folder=${encodeURIComponent(resolve(folder))}` : '', `payload=${encodeURIComponent(JSON.stringify(payload))}`].filter(Boolean);
  return `${server.url}/?${query.join('&')}`;
}

/** Launches headless Chromium through playwright-core (a devDependency of this repository). */
export async function launchChromium() {
  const executablePath = findChromium();
  if (!executablePath) throw new Error('Chromium not found: apt-get install chromium, or set EAGLE3_CHROMIUM');
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-sync',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  });
}

/**
 * Opens the workbench in `page` (Playwright) on `folder` with the extension under development at
 * `extension`, waits for it (`.monaco-workbench`, up to `timeoutMs`) and declines workspace trust when
 * VS Code asks (15 s at most), so the extension runs in Restricted Mode, which it declares support for.
 * @param server what {@link startServer} returned (its `port` and `url`)
 */
export async function openWorkbench(page, server, { extension, folder, timeoutMs = 120_000 }) {
  await page.goto(workbenchUrl(server, { extension, folder }));
  await page.waitForSelector('.monaco-workbench', { timeout: timeoutMs });
  const noTrust = page.locator('.monaco-dialog-box a.monaco-button', { hasText: "No, I don't trust the authors" });
  try {
    await noTrust.click({ timeout: 15_000 });
  } catch {
    /* no dialog */
  }
}

/**
 * The frame of a webview page holding `selector`: VS Code nests a webview's page in two iframes, so it
 * is found by polling every frame of `page` (300 ms apart) until one has it.
 * @throws Error after `timeoutMs` ms without such a frame
 */
export async function webviewFrameWith(page, selector, timeoutMs = 60_000) {
  const t0 = Date.now();
  for (;;) {
    for (const f of page.frames()) {
      try {
        if (await f.$(selector)) return f;
      } catch {
        /* detached */
      }
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`no webview frame with ${selector}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
