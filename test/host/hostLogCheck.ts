/**
 * Extension-host check of issue 24 ("the extension host log stays free of the extension's
 * configuration warnings during the host suite"): VS Code's extension host logs a warning for each
 * read of a window-scoped setting with a resource, and of a resource-scoped one without a resource
 * (`Accessing a window scoped configuration for a resource is not expected …`), prefixed with the
 * extension's id; 10,443 of them were logged in 50 minutes of use. Run by suite.ts last, after every
 * feature has read its settings many times.
 *
 * The log is found beside the extension's `logUri` (`<logs>/<session>/exthost<n>/<extension id>`):
 * `remoteexthost.log` under the VS Code server, `exthost.log` in desktop VS Code. To show that the
 * check sees such warnings at all, it first makes one itself — `eagle3prep.modelFolders` (window-scoped)
 * read for a resource, once — and waits for it to reach the file. The suite's bundle lives in the
 * extension's folder, so VS Code hands it the extension's API and logs its reads under the
 * extension's id: the canary's line is the one warning allowed, and the suite's own reads follow
 * config.ts's rule (suite.ts reads `tokenizerPath` for `null`).
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { configWarnings } from './hostLogLines';
import { sleep } from './wait';

/** The extension host's log files beside `logUri`'s folder. */
function hostLogs(logUri: vscode.Uri): string[] {
  const dir = path.dirname(logUri.fsPath);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => /exthost.*\.log$/i.test(n))
    .map((n) => path.join(dir, n));
}

/**
 * Asserts that no configuration warning names `extensionId`; returns how many log lines were read.
 * @param logUri the extension's `context.logUri` (its `activate` returns it)
 */
export async function checkNoConfigurationWarnings(extensionId: string, logUri: vscode.Uri): Promise<{ files: string[]; lines: number }> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  assert.ok(folder, 'no workspace folder');
  const canary = 'eagle3prep.modelFolders';
  vscode.workspace.getConfiguration('eagle3prep', folder).get('modelFolders');
  const t0 = Date.now();
  for (;;) {
    const files = hostLogs(logUri);
    const lines = files.flatMap((f) => fs.readFileSync(f, 'utf8').split('\n'));
    const found = configWarnings(lines, extensionId, canary);
    if (found.canarySeen) {
      assert.equal(
        found.extension.length,
        0,
        `${found.extension.length} configuration warnings of ${extensionId} in the extension host log (${found.keys.join(', ')}); first:\n${found.extension[0]}`,
      );
      return { files, lines: lines.length };
    }
    if (Date.now() - t0 > 30_000)
      assert.fail(
        `the suite's own configuration warning ('${canary}' read for a resource) did not reach the extension host log within 30 s (looked in ${files.join(', ') || `${path.dirname(logUri.fsPath)}: no exthost*.log`}): the check cannot see warnings`,
      );
    await sleep(500);
  }
}
