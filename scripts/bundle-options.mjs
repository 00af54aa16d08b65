// The esbuild options of every Node bundle this project makes: dist/cli.js and dist/worker.js (scripts/build.mjs),
// the unit tests' CLI bundle (scripts/test-bundle.mjs) and the benchmark's measuring process (scripts/bench.mjs), so
// that the tests and the benchmark run the code as it ships.
// mainFields: prefer ESM builds (jsonc-parser's UMD build does dynamic requires esbuild cannot follow).
// external: the Rust `tokenizers` binding is a napi `.node` file esbuild cannot inline; it is loaded at run time from
// node_modules (a platform VSIX ships it in dist/node_modules/tokenizers/ with its own binary only: scripts/package-platforms.mjs).
// nodeEntries: dist/cli.js and dist/worker.js are small loaders (src/boot/) that run the real bundles beside them,
// cli-bundle.js and worker-bundle.js, from the V8 code cache (src/boot/codeCache.ts).
// define __EAGLE3_CODE_ID__: the code's identity for on-disk caches of computed results (records/templateCheckCache.ts).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The identity of the code a bundle is built from: sha256 (first 32 hex) of every file under `src/` (its path and
 * bytes, in path order) and of `package-lock.json` (the dependencies' versions). Read when a bundle is built, so it is
 * the identity of the sources that bundle holds; a watch build, whose sources change under it, defines null instead.
 */
export function codeId(root = ROOT) {
  const h = createHash('sha256');
  const walk = (d) =>
    readdirSync(d, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .forEach((e) => {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile()) h.update(relative(root, p)).update('\0').update(readFileSync(p)).update('\0');
      });
  walk(join(root, 'src'));
  h.update('package-lock.json\0').update(readFileSync(join(root, 'package-lock.json')));
  return h.digest('hex').slice(0, 32);
}

export const NODE_BUNDLE = Object.freeze({
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  logLevel: 'warning',
  mainFields: ['module', 'main'],
  external: ['tokenizers'],
  define: Object.freeze({ __EAGLE3_CODE_ID__: JSON.stringify(codeId()) }),
});

/**
 * The esbuild builds of the CLI and the worker into `outdir`: the loaders `cli.js` (with the `#!/usr/bin/env node`
 * banner) and `worker.js` (src/boot/), and the bundles they run, `cli-bundle.js` (src/cli.ts) and `worker-bundle.js`
 * (src/worker.ts). `common`: the options of every build (NODE_BUNDLE and the build's shape).
 */
export function nodeEntries(root, outdir, common = NODE_BUNDLE) {
  return [
    { ...common, entryPoints: { cli: join(root, 'src', 'boot', 'cli.ts') }, outdir, banner: { js: '#!/usr/bin/env node' } },
    { ...common, entryPoints: { worker: join(root, 'src', 'boot', 'worker.ts') }, outdir },
    { ...common, entryPoints: { 'cli-bundle': join(root, 'src', 'cli.ts') }, outdir },
    { ...common, entryPoints: { 'worker-bundle': join(root, 'src', 'worker.ts') }, outdir },
  ];
}
