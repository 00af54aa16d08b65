// The esbuild options of every Node bundle this project makes: dist/cli.js and dist/worker.js (scripts/build.mjs),
// the unit tests' CLI bundle (scripts/test-bundle.mjs) and the benchmark's measuring process (scripts/bench.mjs), so
// that the tests and the benchmark run the code as it ships.
// mainFields: prefer ESM builds (jsonc-parser's UMD build does dynamic requires esbuild cannot follow).
// external: the Rust `tokenizers` binding is a napi `.node` file esbuild cannot inline; it is loaded at run time from
// node_modules (a platform VSIX ships it in dist/node_modules/tokenizers/ with its own binary only: scripts/package-platforms.mjs).
export const NODE_BUNDLE = Object.freeze({
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  logLevel: 'warning',
  mainFields: ['module', 'main'],
  external: ['tokenizers'],
});
