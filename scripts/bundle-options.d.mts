// Types of scripts/bundle-options.mjs for the TypeScript that imports it (test/unit/templateCheckCache.test.ts).
/** The identity of the code under `root` (default: this repository): sha256 (first 32 hex) of `src/` and `package-lock.json`. */
export function codeId(root?: string): string;
/** The esbuild options of every Node bundle, with `define.__EAGLE3_CODE_ID__` the JSON of {@link codeId}(). */
export const NODE_BUNDLE: Readonly<{
  bundle: true;
  platform: 'node';
  target: string;
  format: 'cjs';
  logLevel: 'warning';
  mainFields: string[];
  external: string[];
  define: Readonly<Record<string, string>>;
}>;
/** The esbuild builds of the loaders `cli.js` and `worker.js` (src/boot/) and the bundles they run, `cli-bundle.js` and `worker-bundle.js`, into `outdir`. */
export function nodeEntries(root: string, outdir: string, common?: object): object[];
