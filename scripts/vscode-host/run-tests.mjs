#!/usr/bin/env node
// Runs extension tests inside a real VS Code without downloading one: the VS Code server build of
// the npm package code-server (scripts/vscode-host/install.mjs) serves its web workbench, headless
// Chromium opens it with the extension under development, and the workbench runs the tests module
// exactly as @vscode/test-electron's runTests would (the module exports `run(): Promise<void>`).
//
//   node scripts/vscode-host/run-tests.mjs --extension DIR --tests FILE.js
//        [--server SERVER_MAIN_JS] [--folder WORKSPACE] [--timeout-s 300] [--screenshot OUT.png]
//
// --server defaults to $EAGLE3_VSCODE_SERVER, else the host under .cache/vscode-host.
// Exit status: 0 the tests passed, 1 they failed, 2 the harness failed or timed out.
// Whatever the tests log (console.log in the extension host) is printed.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { findServerMain, launchChromium, startServer, workbenchUrl } from './host.mjs';

const { values: opt } = parseArgs({
  options: {
    server: { type: 'string' },
    extension: { type: 'string' },
    tests: { type: 'string' },
    folder: { type: 'string' },
    'timeout-s': { type: 'string', default: '300' },
    screenshot: { type: 'string' },
  },
});

/** Lines of the workbench's own console that are noise offline (the marketplace, built-in extension activation). */
const OFFLINE_NOISE = /open-vsx|ENOTFOUND|Activating extension 'vscode\./;

async function main() {
  if (!opt.extension || !opt.tests) {
    console.error('run-tests: --extension and --tests are required');
    return 2;
  }
  const serverMain = opt.server ?? findServerMain();
  if (!serverMain || !existsSync(serverMain)) {
    console.error(`run-tests: no VS Code server (${serverMain ?? 'none installed'}); run: npm run host:install`);
    return 2;
  }
  const timeoutMs = Number(opt['timeout-s']) * 1000;
  const server = await startServer(serverMain);
  let browser;
  try {
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // The web workbench reports an extension-test run through these two window functions.
    let reportExit;
    const exited = new Promise((done) => (reportExit = done));
    await page.exposeFunction('codeAutomationExit', (code) => reportExit(Number(code)));
    await page.exposeFunction('codeAutomationLog', (type, args) => {
      const line = (args ?? []).map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
      if (!(type === 'error' && OFFLINE_NOISE.test(line))) console.log(line);
    });
    await page.goto(workbenchUrl(server, { extension: opt.extension, tests: opt.tests, folder: opt.folder }));
    let timer;
    const result = await Promise.race([exited, new Promise((done) => (timer = setTimeout(() => done('timeout'), timeoutMs)))]);
    clearTimeout(timer);
    if (opt.screenshot) await page.screenshot({ path: opt.screenshot }).catch((e) => console.error(`run-tests: no screenshot (${e.message})`));
    if (result === 'timeout') {
      console.error(`run-tests: the tests reported no result within ${timeoutMs / 1000} s`);
      return 2;
    }
    return result;
  } finally {
    await browser?.close().catch(() => {});
    await server.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`run-tests: ${e instanceof Error ? e.message : e}`);
    process.exit(2);
  },
);
