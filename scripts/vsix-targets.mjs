// The VSIX packages the extension is built as, in one table, and what each must hold.
// scripts/package-platforms.mjs packages from it, scripts/vsix-check.mjs and
// test/unit/vsixTargets.test.ts check against it. See docs/development.md "Packaging".
//
// The Rust tokenizer binding (npm `tokenizers`, napi) is one `.node` file per platform, all in one
// npm package; its index.js picks the file for the running platform (musl or glibc on Linux, the
// armv7 hard-float build for `arm`). A platform VSIX (`vsce package --target <target>`) carries the
// binding's index.js, package.json, LICENSE and its own platform's `.node` file only, in
// dist/node_modules/tokenizers/, where `require('tokenizers')` from dist/cli.js, dist/worker.js and
// dist/extension.js finds it. The universal VSIX (no --target) carries no binary: the extension
// falls back to the JavaScript tokenizer.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

/** The repository root. */
export const REPO = resolve(import.meta.dirname, '..');

/**
 * VS Code's platform targets (`vsce package --target`) and the binding's binary for each.
 * `target` null is the universal package; `platform`, `arch` and `libc` are the Node values
 * (`process.platform`, `process.arch`, musl or glibc) a machine of that target reports.
 */
export const VSIX_TARGETS = [
  { target: 'win32-x64', platform: 'win32', arch: 'x64', libc: null, binary: 'tokenizers.win32-x64-msvc.node' },
  { target: 'win32-arm64', platform: 'win32', arch: 'arm64', libc: null, binary: 'tokenizers.win32-arm64-msvc.node' },
  { target: 'linux-x64', platform: 'linux', arch: 'x64', libc: 'glibc', binary: 'tokenizers.linux-x64-gnu.node' },
  { target: 'linux-arm64', platform: 'linux', arch: 'arm64', libc: 'glibc', binary: 'tokenizers.linux-arm64-gnu.node' },
  { target: 'linux-armhf', platform: 'linux', arch: 'arm', libc: 'glibc', binary: 'tokenizers.linux-arm-gnueabihf.node' },
  { target: 'alpine-x64', platform: 'linux', arch: 'x64', libc: 'musl', binary: 'tokenizers.linux-x64-musl.node' },
  { target: 'alpine-arm64', platform: 'linux', arch: 'arm64', libc: 'musl', binary: 'tokenizers.linux-arm64-musl.node' },
  { target: 'darwin-x64', platform: 'darwin', arch: 'x64', libc: null, binary: 'tokenizers.darwin-x64.node' },
  { target: 'darwin-arm64', platform: 'darwin', arch: 'arm64', libc: null, binary: 'tokenizers.darwin-arm64.node' },
  { target: null, platform: null, arch: null, libc: null, binary: null },
];

/** Largest VSIX accepted, in MB (2^20 bytes): today's packages are 3-5 MB; a binding twice its size still fits. */
export const VSIX_MAX_MB = 10;

/** Where a platform VSIX holds the binding, relative to the extension's root. */
export const TOKENIZERS_DIR = 'dist/node_modules/tokenizers';

/** The binding's files a platform VSIX carries besides its binary. */
export const TOKENIZERS_FILES = ['LICENSE', 'index.js', 'package.json'];

/** Files every VSIX holds, relative to the extension's root (the bundles and the embedded default tokenizer). */
export const REQUIRED_FILES = [
  'package.json',
  'dist/extension.js',
  'dist/worker.js',
  'dist/cli.js',
  'dist/worker-bundle.js',
  'dist/cli-bundle.js',
  'dist/webview.js',
  'dist/dashboard.js',
  'dist/templateCheck.js',
  'dist/default-tokenizer/qwen3/tokenizer.json',
  'dist/default-tokenizer/qwen3/tokenizer_config.json',
  'schemas/eagle3prep.schema.json',
];

/** What no VSIX may hold, relative to the extension's root: the reason, then the pattern. */
export const JUNK = [
  ['a test, fixture, source, script or cache folder', /(^|\/)(test|tests|__tests__|fixtures?|coverage|\.cache|\.vscode-test|src|scripts|dist-test|scratch)\//],
  ['a source map', /\.map$/],
  ['TypeScript source', /\.(ts|mts|cts)$/],
  ['a VSIX', /\.vsix$/i],
  ['a prepare output folder', /\.eagle3\//],
  ['git metadata', /(^|\/)\.git(\/|$)/],
  ['an environment file', /(^|\/)\.env(\.|$)/],
];

/** The modules a shipped bundle may require besides Node's own: the editor's API and the binding (external, packaged per platform). */
export const RUNTIME_EXTERNALS = ['vscode', 'tokenizers'];

/**
 * The modules a bundle's text requires that are neither Node's own nor RUNTIME_EXTERNALS nor
 * relative paths: what it would need from a node_modules the VSIX does not carry (a devDependency,
 * say). Empty for a self-contained bundle. Calls are `require("x")` as esbuild prints them (double
 * quotes); `require('x')` inside a string is not a call (src/core/run/pool.ts's eval'd worker source
 * for a `.ts` worker script, used from source only, names tsx that way).
 */
export function foreignRequires(code) {
  const names = new Set([...code.matchAll(/\brequire\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]));
  const builtin = (n) => n.startsWith('node:') || builtinModules.includes(n.split('/')[0]) || builtinModules.includes(n);
  return [...names]
    .filter((n) => !n.startsWith('.') && !n.startsWith('/') && !builtin(n) && !RUNTIME_EXTERNALS.some((x) => n === x || n.startsWith(`${x}/`)))
    .sort();
}

/** The label of a target in tables and file names: its name, or `universal`. */
export function targetLabel(t) {
  return t.target ?? 'universal';
}

/** The VSIX file name vsce writes for a target: `<name>-<target>-<version>.vsix`, or `<name>-<version>.vsix` for the universal one. */
export function vsixFileName(pkg, t) {
  return t.target ? `${pkg.name}-${t.target}-${pkg.version}.vsix` : `${pkg.name}-${pkg.version}.vsix`;
}

/** Whether this machine's C library is musl (Alpine): Node's process report names glibc when it is not. */
export function isMusl() {
  if (process.platform !== 'linux') return false;
  const header = /** @type {{ glibcVersionRuntime?: string }} */ (process.report.getReport().header);
  return !header.glibcVersionRuntime;
}

/** The target this machine runs (its platform, architecture and C library), or undefined when no target matches. */
export function hostTarget() {
  const libc = process.platform === 'linux' ? (isMusl() ? 'musl' : 'glibc') : null;
  return VSIX_TARGETS.find((t) => t.platform === process.platform && t.arch === process.arch && t.libc === libc);
}

/** The folder of the development install of the binding (node_modules/tokenizers, every platform's binary). */
export function tokenizersSource() {
  return dirname(createRequire(join(REPO, 'package.json')).resolve('tokenizers/package.json'));
}

/**
 * Copies the binding for one target into `dest` (made afresh): TOKENIZERS_FILES and the target's
 * binary, nothing else. Throws when the development install lacks one of them. Returns the names copied.
 */
export function stageTokenizers(dest, t, source = tokenizersSource()) {
  if (!t.binary) throw new Error('the universal package carries no tokenizers binding');
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const names = [...TOKENIZERS_FILES, t.binary];
  for (const f of names) copyFileSync(join(source, f), join(dest, f));
  return names;
}

/** The binaries the development install holds (every `tokenizers.*.node`). */
export function installedBinaries(source = tokenizersSource()) {
  return readdirSync(source).filter((f) => f.endsWith('.node'));
}

/**
 * Checks a VSIX's entry names (as the zip lists them: `extension/...`, `extension.vsixmanifest`,
 * `[Content_Types].xml`), its size in bytes and its manifest's text against the target.
 * Returns the problems found, one sentence each; empty when the package is right.
 */
export function checkVsixEntries(entries, t, sizeBytes, manifestXml) {
  const problems = [];
  const files = entries.filter((e) => e.startsWith('extension/') && !e.endsWith('/')).map((e) => e.slice('extension/'.length));
  for (const f of REQUIRED_FILES) if (!files.includes(f)) problems.push(`missing ${f}`);
  const binding = t.binary ? [...TOKENIZERS_FILES, t.binary].map((f) => `${TOKENIZERS_DIR}/${f}`) : [];
  for (const f of binding) if (!files.includes(f)) problems.push(`missing ${f}`);
  for (const f of files) {
    if (f.endsWith('.node') && f !== `${TOKENIZERS_DIR}/${t.binary}`) problems.push(`holds another platform's binary: ${f}`);
    else if (/(^|\/)node_modules\//.test(f) && !binding.includes(f)) problems.push(`holds a node_modules file besides the binding: ${f}`);
    for (const [why, re] of JUNK) if (re.test(f)) problems.push(`holds ${why}: ${f}`);
  }
  const mb = sizeBytes / 2 ** 20;
  if (mb >= VSIX_MAX_MB) problems.push(`is ${mb.toFixed(2)} MB, the limit is ${VSIX_MAX_MB} MB`);
  const platform = /TargetPlatform="([^"]*)"/.exec(manifestXml)?.[1];
  if ((platform ?? null) !== t.target) problems.push(`its manifest's TargetPlatform is ${platform ?? 'absent'}, expected ${t.target ?? 'absent'}`);
  return problems;
}
