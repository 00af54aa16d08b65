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
 * check sees such warnings at all, the suite first makes one itself (a window-scoped setting read
 * for a resource, logged under the test runner's name, not the extension's) and waits for it to
 * reach the file.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A configuration access warning of VS Code's extension host (either direction). */
const CONFIG_WARNING = /Accessing a (window|resource) scoped configuration/;

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
  // The canary: a read the extension never makes (a window-scoped setting for a resource), from the suite itself.
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  assert.ok(folder, 'no workspace folder');
  vscode.workspace.getConfiguration('eagle3prep', folder).get('maskPolicy');
  const t0 = Date.now();
  let files: string[];
  let lines: string[];
  for (;;) {
    files = hostLogs(logUri);
    lines = files.flatMap((f) => fs.readFileSync(f, 'utf8').split('\n'));
    if (lines.some((l) => CONFIG_WARNING.test(l) && l.includes("'eagle3prep.maskPolicy'") && !l.includes(`[${extensionId}]`))) break;
    if (Date.now() - t0 > 30_000)
      assert.fail(
        `the suite's own configuration warning did not reach the extension host log within 30 s (looked in ${files.join(', ') || `${path.dirname(logUri.fsPath)}: no exthost*.log`}): the check cannot see warnings`,
      );
    await sleep(500);
  }
  const mine = lines.filter((l) => CONFIG_WARNING.test(l) && l.includes(`[${extensionId}]`));
  const keys = [...new Set(mine.map((l) => /'([^']+)'/.exec(l)?.[1] ?? l))];
  assert.equal(mine.length, 0, `${mine.length} configuration warnings of ${extensionId} in the extension host log (${keys.join(', ')}); first:\n${mine[0]}`);
  return { files, lines: lines.length };
}
