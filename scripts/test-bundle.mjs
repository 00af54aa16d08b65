// The CLI bundle of a unit test run (scripts/test.mjs): `cli.js` and `worker.js` bundled from src/ with esbuild, as
// scripts/build.mjs bundles dist/, into a folder of the checkout's .cache/ (so that `tokenizers`, the embedded
// tokenizer's package and package.json resolve from it as from dist/). The tests that start the CLI as a process of
// its own (signals, heap caps, another user, the entry point's exit) run it (test/helpers.ts `cliNodeArgs`), and the
// worker pool's threads of the in-process runs start `worker.js` (`testWorkerScript`): a bundle starts in ~0.2 CPU s
// where `node --import tsx src/cli.ts` spends ~1.5 s on tsx and its module loading, per process and per pool worker.
// The runner passes the folder's `cli.js` in EAGLE3_TEST_CLI and removes the folder after the run; a file run alone
// (`node --import tsx --test <file>`) has no bundle and starts src/cli.ts under tsx.
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { nodeEntries } from './bundle-options.mjs';

/** The environment variable naming the run's bundled `cli.js` (its `worker.js` beside it). */
export const TEST_CLI_ENV = 'EAGLE3_TEST_CLI';

const ROOT = resolve(import.meta.dirname ?? new URL('..', import.meta.url).pathname, '..');
const PREFIX = 'test-bundle-';

/** Whether process `pid` is alive (signal 0; EPERM: alive, another user's). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/**
 * Builds the bundle into `.cache/test-bundle-<pid>/` (a folder a dead run left there is removed first).
 * @returns the folder, or null when esbuild fails (its errors printed; the tests then start src/cli.ts under tsx)
 */
export async function buildTestBundle() {
  const cache = join(ROOT, '.cache');
  mkdirSync(cache, { recursive: true });
  for (const name of readdirSync(cache)) {
    const pid = Number(name.startsWith(PREFIX) ? name.slice(PREFIX.length) : NaN);
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) rmSync(join(cache, name), { recursive: true, force: true });
  }
  const dir = join(cache, `${PREFIX}${process.pid}`);
  try {
    // As dist/: the loaders cli.js and worker.js and the bundles they run (scripts/bundle-options.mjs nodeEntries).
    await Promise.all(nodeEntries(ROOT, dir).map((b) => esbuild.build(b)));
  } catch {
    removeTestBundle(dir);
    return null;
  }
  return ['cli.js', 'worker.js', 'cli-bundle.js', 'worker-bundle.js'].every((f) => existsSync(join(dir, f))) ? dir : null;
}

/** Removes the folder {@link buildTestBundle} made. */
export function removeTestBundle(dir) {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
