import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configWarnings } from '../host/hostLogLines';

// Lines as VS Code 1.100's extension host wrote them (remoteexthost.log of a host run before config.ts read
// resource-scoped settings for null, plus a canary of the suite's own).
const LOG = [
  "2026-12-07 00:39:28.199 [info] ExtensionService#_doActivateExtension eagle3-prep.eagle3-prep, startup: false, activationEvent: 'api'",
  "2026-12-07 00:39:28.273 [warning] [eagle3-prep.eagle3-prep] Accessing a resource scoped configuration without providing a resource is not expected. To get the effective value for 'eagle3prep.tokenizerPath', provide the URI of a resource or 'null' for any resource.",
  "2026-12-07 00:39:28.274 [warning] [eagle3-prep.eagle3-prep] Accessing a resource scoped configuration without providing a resource is not expected. To get the effective value for 'eagle3prep.outputDirectory', provide the URI of a resource or 'null' for any resource.",
  "2026-12-07 00:39:28.301 [info] Extension 'eagle3-prep.eagle3-prep' uses a document selector without scheme.",
  "2026-12-07 00:39:28.354 [warning] [nullExtensionDescription] Accessing a window scoped configuration for a resource is not expected. To associate 'eagle3prep.maskPolicy' to a resource, define its scope to 'resource' in configuration contributions in 'package.json'.",
];
const canary =
  "2026-12-07 00:40:00.000 [warning] [eagle3-prep.eagle3-prep] Accessing a window scoped configuration for a resource is not expected. To associate 'eagle3prep.modelFolders' to a resource, define its scope to 'resource' in configuration contributions in 'package.json'.";

test("host log: the extension's configuration warnings are found, the canary's one line left out", () => {
  const before = configWarnings([...LOG, canary], 'eagle3-prep.eagle3-prep', 'eagle3prep.modelFolders');
  assert.equal(before.canarySeen, true);
  assert.equal(before.extension.length, 2);
  assert.deepEqual(before.keys, ['eagle3prep.tokenizerPath', 'eagle3prep.outputDirectory']);
  // Another extension's (or the test runner's) warning is not the extension's.
  const clean = configWarnings([LOG[0], LOG[3], LOG[4], canary], 'eagle3-prep.eagle3-prep', 'eagle3prep.modelFolders');
  assert.deepEqual([clean.canarySeen, clean.extension], [true, []]);
  // A second read of the canary's setting is the extension's own.
  const twice = configWarnings([canary, canary], 'eagle3-prep.eagle3-prep', 'eagle3prep.modelFolders');
  assert.deepEqual(twice.keys, ['eagle3prep.modelFolders']);
  // No canary yet: the log is not read far enough to judge.
  assert.equal(configWarnings(LOG, 'eagle3-prep.eagle3-prep', 'eagle3prep.modelFolders').canarySeen, false);
});
