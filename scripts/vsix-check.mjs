// Checks the VSIX packages (see docs/vscode.md "VSIX" and docs/development.md "Packaging"):
// 1. packages every target of scripts/vsix-targets.mjs (scripts/package-platforms.mjs) into .cache/vsix/,
//    unless --no-package (then the packages already there are checked);
// 2. opens each (a zip) and checks its entries: its own tokenizers binary and no other platform's, the
//    bundles and the embedded tokenizer, no test / fixture / cache / source files, the manifest's
//    target platform, the size limit;
// 3. extracts this machine's package and the universal one into a temporary folder outside the
//    repository (so nothing resolves from the development node_modules): the binding loads from
//    where the bundles require it and encodes with the bundled default tokenizer the ids the
//    development install gives; the universal one has no binding to load, another platform's binding
//    does not load here; the CLI of each prepares the walkthrough's sample from its extracted files
//    alone, and all write the same ids and masks;
// 4. installs this machine's package into the VS Code server with its `--install-extension` flag
//    and runs test/host/vsixSmoke.ts inside a real VS Code (skipped with --no-host).
//   node scripts/vsix-check.mjs [--no-package] [--dir DIR] [--no-host] [--server SERVER_MAIN_JS]
import * as esbuild from 'esbuild';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { VSIX_DIR, packagePlatforms, sizeTable } from './package-platforms.mjs';
import { REPO, TOKENIZERS_DIR, VSIX_TARGETS, checkVsixEntries, foreignRequires, hostTarget, targetLabel, vsixFileName } from './vsix-targets.mjs';

const arg = (k) => {
  const i = process.argv.indexOf(`--${k}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const flag = (k) => process.argv.includes(`--${k}`);
const dir = resolve(arg('dir') ?? VSIX_DIR);
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
const failures = [];
const fail = (msg) => {
  failures.push(msg);
  console.error(`FAIL ${msg}`);
};

// 1. Package.
if (!flag('no-package')) packagePlatforms({ outDir: dir });

// 2. Entries.
const rows = [];
for (const t of VSIX_TARGETS) {
  const file = join(dir, vsixFileName(pkg, t));
  if (!existsSync(file)) {
    fail(`${targetLabel(t)}: no package at ${file} (npm run package:platforms)`);
    continue;
  }
  const bytes = statSync(file).size;
  rows.push({ target: targetLabel(t), file, bytes, binary: t.binary });
  const entries = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8', maxBuffer: 64 << 20 })
    .split('\n')
    .filter(Boolean);
  const manifest = execFileSync('unzip', ['-p', file, 'extension.vsixmanifest'], { encoding: 'utf8' });
  const problems = checkVsixEntries(entries, t, bytes, manifest);
  for (const p of problems) fail(`${targetLabel(t)}: ${p}`);
  if (!problems.length) console.log(`ok ${targetLabel(t)}: ${entries.length} entries, ${(bytes / 2 ** 20).toFixed(2)} MB, binary ${t.binary ?? 'none'}`);
}
console.log(`\n${sizeTable(rows, dir)}\n`);

// 3. Extracted packages, outside the repository.
const tmp = mkdtempSync(join(tmpdir(), 'eagle3-vsix-'));
const host = hostTarget();
const universal = VSIX_TARGETS.find((t) => !t.target);
const SAMPLE = 'samples/chat-sharegpt-human-gpt.jsonl';
const TEXT = 'Hello, wörld! 2+2=4 <|im_start|>assistant\n<think>\n\n</think>\n\n東京 🚀 def f(x):\n    return x ** 2';

/** Unzips a package into tmp/<label>/ and returns its extension folder. */
function extract(t) {
  const out = join(tmp, targetLabel(t));
  execFileSync('unzip', ['-q', join(dir, vsixFileName(pkg, t)), '-d', out]);
  return join(out, 'extension');
}

/** Encodes TEXT in a child process with the binding `require('tokenizers')` resolves from `fromFile`: `{ resolved, ids }`, or `{ resolved?, error }` when it does not resolve or load. */
function encodeFrom(fromFile, tokenizerJson) {
  const code = `
    const r = require('node:module').createRequire(${JSON.stringify(fromFile)});
    let resolved;
    try { resolved = r.resolve('tokenizers'); } catch (e) { console.log(JSON.stringify({ error: e.code ?? String(e) })); process.exit(0); }
    let binding;
    try { binding = r('tokenizers'); } catch (e) { console.log(JSON.stringify({ resolved, error: String(e.message).split('\\n')[0] })); process.exit(0); }
    const { Tokenizer } = binding;
    Tokenizer.fromFile(${JSON.stringify(tokenizerJson)}).encode(${JSON.stringify(TEXT)}, null, { addSpecialTokens: false })
      .then((enc) => console.log(JSON.stringify({ resolved, ids: enc.getIds() })));`;
  const r = spawnSync(process.execPath, ['-e', code], { cwd: tmp, encoding: 'utf8', env: { ...process.env, NODE_PATH: '' } });
  if (r.status !== 0) return { error: `exit ${r.status}: ${r.stderr.trim().split('\n').slice(-3).join(' ')}` };
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

/** Runs the extracted CLI's prepare on a copy of the sample; returns its records (id, input_ids, loss_mask; one JSON text each), or undefined after a failure. */
function prepareWith(ext, label) {
  const work = join(tmp, `${label}-run`);
  mkdirSync(work, { recursive: true });
  cpSync(join(ext, SAMPLE), join(work, 'sample.jsonl'));
  const r = spawnSync(process.execPath, [join(ext, 'dist', 'cli.js'), 'prepare', join(work, 'sample.jsonl'), '--out', join(work, 'out')], {
    cwd: work,
    encoding: 'utf8',
    env: { ...process.env, NODE_PATH: '' },
  });
  const said = `${r.stdout}\n${r.stderr}`;
  const tokenizerLines = said.split('\n').filter((l) => /tokeni[sz]er/i.test(l));
  console.log(`${label}: prepare exit ${r.status}${tokenizerLines.length ? `; ${tokenizerLines.map((l) => l.trim()).join(' | ')}` : ''}`);
  if (r.status !== 0) {
    fail(`${label}: the extracted CLI's prepare failed:\n${said}`);
    return undefined;
  }
  // What the run says of its tokenizer (report.json "tokenizer", its folder aside): the universal package has no
  // Rust binding, so neither its report nor its output may claim one.
  const { dir: _dir, ...tokenizer } = JSON.parse(readFileSync(join(work, 'out', 'report.json'), 'utf8')).tokenizer ?? {};
  console.log(`${label}: report.json tokenizer ${JSON.stringify(tokenizer)}`);
  if (label === 'universal' && /\b(rust|napi|native)\b/i.test(`${JSON.stringify(tokenizer)}\n${tokenizerLines.join('\n')}`)) {
    fail('universal: the run claims the Rust tokenizer, which the universal package does not carry');
  }
  // The records' ids and masks (their source names the run's own copy of the sample).
  return readFileSync(join(work, 'out', 'data', 'tokenized_data.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const { id, input_ids, loss_mask } = JSON.parse(l);
      return JSON.stringify({ id, input_ids, loss_mask });
    });
}

const devIds = encodeFrom(join(REPO, 'package.json'), join(REPO, 'dist', 'default-tokenizer', 'qwen3', 'tokenizer.json'));
if (!devIds.ids) fail(`the development install of tokenizers does not encode: ${devIds.error}`);
let hostRecords;
if (!host) console.log(`no VSIX target for this machine (${process.platform}-${process.arch}): the extracted platform package is not run`);
else if (existsSync(join(dir, vsixFileName(pkg, host)))) {
  const ext = extract(host);
  const bundled = encodeFrom(join(ext, 'dist', 'cli.js'), join(ext, 'dist', 'default-tokenizer', 'qwen3', 'tokenizer.json'));
  if (!bundled.ids) fail(`${host.target}: the packaged binding does not load from the extracted extension: ${bundled.error}`);
  else if (!bundled.resolved.startsWith(join(ext, TOKENIZERS_DIR))) fail(`${host.target}: tokenizers resolved outside the package: ${bundled.resolved}`);
  else if (JSON.stringify(bundled.ids) !== JSON.stringify(devIds.ids)) fail(`${host.target}: ids differ from the development install's`);
  else
    console.log(
      `ok ${host.target}: the packaged binding loads from ${bundled.resolved} and encodes ${bundled.ids.length} ids equal to the development install's`,
    );
  hostRecords = prepareWith(ext, host.target);
}
/** Compares a run's records with this machine's package's run (when there was one). */
function sameRecords(label, records) {
  if (records === undefined || hostRecords === undefined) return;
  if (!records.length || records.join('\n') !== hostRecords.join('\n')) fail(`${label} and ${host.target} write different records for ${SAMPLE}`);
  else console.log(`ok ${label} and ${host.target} write the same ids and masks (${records.length} records) for ${SAMPLE}`);
}
if (existsSync(join(dir, vsixFileName(pkg, universal)))) {
  const ext = extract(universal);
  // The production bundles need nothing from node_modules but the binding (no devDependency at run time).
  for (const f of readdirSync(join(ext, 'dist')).filter((n) => n.endsWith('.js'))) {
    const foreignMods = foreignRequires(readFileSync(join(ext, 'dist', f), 'utf8'));
    if (foreignMods.length) fail(`universal: dist/${f} requires ${foreignMods.join(', ')}, which no VSIX carries`);
  }
  const none = encodeFrom(join(ext, 'dist', 'cli.js'), join(ext, 'dist', 'default-tokenizer', 'qwen3', 'tokenizer.json'));
  if (none.resolved) fail(`universal: tokenizers resolves from the extracted extension (${none.resolved}); the universal package must carry no binding`);
  else console.log(`ok universal: no tokenizers binding resolves from the extracted extension (${none.error})`);
  sameRecords('universal', prepareWith(ext, 'universal'));
}
// Another platform's package (VS Code installs a VSIX of another platform without a word): its binding cannot load
// here, and the extension must still work, with the JavaScript tokenizer.
const foreign = VSIX_TARGETS.find((t) => t.target && t.platform !== process.platform && existsSync(join(dir, vsixFileName(pkg, t))));
if (foreign) {
  const ext = extract(foreign);
  const r = encodeFrom(join(ext, 'dist', 'cli.js'), join(ext, 'dist', 'default-tokenizer', 'qwen3', 'tokenizer.json'));
  if (r.ids) fail(`${foreign.target}: its binding loaded on ${process.platform}-${process.arch}`);
  else console.log(`ok ${foreign.target} here: its binding does not load (${r.error.slice(0, 120)})`);
  sameRecords(foreign.target, prepareWith(ext, foreign.target));
}

// 4. Installed into a real VS Code.
if (flag('no-host')) {
  console.log('--no-host: the install and smoke test in VS Code are skipped');
} else {
  const server = resolve(
    arg('server') ?? process.env.EAGLE3_VSCODE_SERVER ?? join(REPO, '.cache/vscode-host/node_modules/code-server/lib/vscode/out/server-main.js'),
  );
  const vsix = join(dir, vsixFileName(pkg, host ?? universal));
  if (!existsSync(server)) fail(`VS Code server not found: ${server} (npm run host:install; see test/host/README.md), or pass --no-host`);
  else if (!existsSync(vsix)) fail(`no package to install: ${vsix}`);
  else smoke(server, vsix);
}

function smoke(server, vsix) {
  const extDir = join(tmp, 'extensions');
  execFileSync(process.execPath, [server, '--install-extension', vsix, '--extensions-dir', extDir, '--accept-server-license-terms'], { stdio: 'inherit' });
  const installed = readdirSync(extDir).find((d) => d.startsWith(`${pkg.publisher}.${pkg.name}-`));
  if (!installed) return fail(`not installed in ${extDir}`);
  const tests = join(tmp, 'vsix-smoke.js');
  esbuild.buildSync({
    entryPoints: [join(REPO, 'test/host/vsixSmoke.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: tests,
    external: ['vscode'],
    logLevel: 'warning',
  });
  const folder = mkdtempSync(join(tmp, 'ws-'));
  const shot = join(tmp, 'shot.png');
  const args = [join(REPO, 'scripts', 'vscode-host', 'run-tests.mjs'), '--server', server, '--extension', join(extDir, installed)];
  args.push('--tests', tests, '--folder', folder, '--screenshot', shot, '--timeout-s', '240');
  const r = spawnSync(process.execPath, args, { cwd: REPO, encoding: 'utf8' });
  const out = `${r.stdout}\n${r.stderr}`
    .split('\n')
    .filter((l) => /vsix-smoke|Error|assert|run-tests/.test(l) && !/refused to show dialog|Service Worker/.test(l));
  console.log(out.join('\n'));
  console.log(`installed at ${join(extDir, installed)}; exit ${r.status}`);
  if (r.status !== 0) fail(`the smoke test in VS Code failed (exit ${r.status}; screenshot ${shot})`);
}

if (failures.length) {
  console.error(`\n${failures.length} problem(s); extracted packages kept in ${tmp}`);
  process.exit(1);
}
rmSync(tmp, { recursive: true, force: true });
console.log('\nVSIX check passed');
