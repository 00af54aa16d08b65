#!/usr/bin/env node
// Runs the same extension-host suite (dist-test/host-suite.js) in desktop VS Code through
// @vscode/test-electron, on a machine that can download VS Code (not the offline CI here:
// there, test/host/vscode-host.test.ts runs it in the VS Code server + headless Chromium).
//
//   node scripts/build.mjs && node test/host/runElectron.mjs [--version 1.100.3]
//
// On Linux without a display, wrap it: xvfb-run -a node test/host/runElectron.mjs
import { runTests } from '@vscode/test-electron';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const i = process.argv.indexOf('--version');
const version = i > 0 ? process.argv[i + 1] : '1.100.3';
// The suite writes its samples and outputs into the opened folder: give it a throwaway one.
const workspace = mkdtempSync(join(tmpdir(), 'eagle3-host-ws-'));
try {
  await runTests({
    version,
    extensionDevelopmentPath: repo,
    extensionTestsPath: join(repo, 'dist-test', 'host-suite.js'),
    // --disable-extensions: only the extension under test; the suite also passes in Restricted Mode,
    // --disable-workspace-trust just keeps the trust prompt away.
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
  });
  console.log('host suite passed');
} catch (e) {
  console.error('host suite failed:', e?.message ?? e);
  process.exitCode = 1;
} finally {
  rmSync(workspace, { recursive: true, force: true });
}
