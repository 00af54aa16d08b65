#!/usr/bin/env node
// Installs the VS Code the host tests run in, from the npm registry alone: the VS Code server build
// shipped in the npm package code-server (see host.mjs for the version). Idempotent; the last line
// printed is the path of server-main.js.
//
//   node scripts/vscode-host/install.mjs [DEST]        (npm run host:install; DEST: .cache/vscode-host)
//
// A plain `npm install code-server` does not work on a machine that reaches only the npm registry
// and the distribution's packages, for three reasons, each handled here:
//   1. As root, code-server's install script stops unless npm runs scripts with unsafe-perm.
//   2. That script runs npm again without a terminal; anything that would prompt must be answered
//      (npm_config_yes).
//   3. VS Code's dependency @vscode/ripgrep downloads its `rg` binary from GitHub when installed,
//      unless the archive it wants is already in its download cache (<tmp>/vscode-ripgrep-cache-
//      <version>/). The install runs in two steps so that the cache can be filled first with the
//      system's own rg, under the exact version and release tag that will be asked for: the
//      packages are fetched with their scripts off, the pinned @vscode/ripgrep version is read from
//      VS Code's npm-shrinkwrap.json and its release tag from that version's install script (npm
//      pack), and only then are the install scripts run (npm rebuild).
// Native modules are built on the spot (node-gyp): a C/C++ toolchain, Python 3 and the Kerberos
// headers are needed; Chromium runs the workbench. On Debian: see APT_PACKAGES below; as root with
// apt-get, missing ones are installed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { arch, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CODE_SERVER_VERSION, DEFAULT_HOST_DIR, findChromium, serverMainIn } from './host.mjs';

/** Debian packages the install and the tests need, and the command each is checked by. */
const APT_PACKAGES = [
  ['build-essential', 'g++'],
  ['python3', 'python3'],
  ['libkrb5-dev', 'krb5-config'],
  ['ripgrep', 'rg'],
  ['chromium', 'chromium'],
];

const log = (m) => console.error(`[host:install] ${m}`);
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

/** Runs a command with its output on stderr (stdout is kept for the result line); throws when it fails. */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', process.stderr, 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

/** Runs a command and returns its stdout; throws when it fails. */
function capture(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
  return r.stdout;
}

function ensureSystemPackages() {
  const missing = APT_PACKAGES.filter(([, cmd]) => !(cmd === 'chromium' ? findChromium() : has(cmd))).map(([p]) => p);
  if (!missing.length) return;
  if (process.getuid?.() === 0 && has('apt-get')) {
    log(`apt-get install ${missing.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['update', '-qq'], { env });
    run('apt-get', ['install', '-y', '-qq', ...missing], { env });
    return;
  }
  throw new Error(`missing system packages: ${missing.join(' ')} (Debian/Ubuntu: sudo apt-get install ${missing.join(' ')})`);
}

/** The Rust target triple @vscode/ripgrep downloads for this machine (Linux). */
function ripgrepTarget() {
  const a = process.env.npm_config_arch || arch();
  if (a === 'x64') return 'x86_64-unknown-linux-musl';
  if (a === 'arm64') return 'aarch64-unknown-linux-musl';
  throw new Error(`no offline ripgrep seeding for Linux ${a}`);
}

/**
 * Puts the system's rg into @vscode/ripgrep's download cache under the name that `version` will look
 * for, so its install script finds it instead of going to GitHub.
 */
function seedRipgrepCache(version, npmEnv) {
  const work = mkdtempSync(join(tmpdir(), 'eagle3-rg-'));
  try {
    const tarball = capture('npm', ['pack', `@vscode/ripgrep@${version}`, '--silent', '--pack-destination', work], { env: npmEnv })
      .trim()
      .split('\n')
      .pop();
    run('tar', ['xzf', join(work, tarball), '-C', work]);
    const script = readFileSync(join(work, 'package', 'lib', 'postinstall.js'), 'utf8');
    const tag = /\bconst VERSION\s*=\s*['"]([^'"]+)['"]/.exec(script)?.[1];
    if (!tag) throw new Error(`@vscode/ripgrep@${version}: release tag not found in lib/postinstall.js`);
    const cache = join(tmpdir(), `vscode-ripgrep-cache-${version}`);
    const archive = join(cache, `ripgrep-${tag}-${ripgrepTarget()}.tar.gz`);
    if (!existsSync(archive)) {
      const stage = join(work, 'stage');
      mkdirSync(stage);
      run('cp', [capture('sh', ['-c', 'command -v rg']).trim(), join(stage, 'rg')]);
      mkdirSync(cache, { recursive: true });
      run('tar', ['czf', archive, '-C', stage, 'rg']);
    }
    log(`@vscode/ripgrep ${version} (${tag}) will use ${archive}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function main() {
  const dest = resolve(process.argv[2] ?? DEFAULT_HOST_DIR);
  const serverMain = serverMainIn(dest);
  const marker = join(dest, '.installed');
  if (existsSync(serverMain) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === CODE_SERVER_VERSION) {
    console.log(serverMain);
    return;
  }
  ensureSystemPackages();
  const npmEnv = {
    ...process.env,
    npm_config_unsafe_perm: 'true', // trap 1
    npm_config_yes: 'true', // trap 2
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  mkdirSync(dest, { recursive: true });
  // allowScripts: npm 11 asks for install scripts to be approved per package (older npm ignores the field).
  const manifest = { name: 'eagle3-vscode-host', private: true, allowScripts: { 'code-server': true, argon2: true } };
  writeFileSync(join(dest, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const t0 = Date.now();
  log(`fetching code-server@${CODE_SERVER_VERSION} into ${dest} (scripts off)`);
  run('npm', ['install', '--ignore-scripts', `code-server@${CODE_SERVER_VERSION}`], { cwd: dest, env: npmEnv });
  // Trap 3: VS Code pins its dependencies in npm-shrinkwrap.json, so the version asked for is known now.
  const shrinkwrap = JSON.parse(readFileSync(join(dest, 'node_modules', 'code-server', 'lib', 'vscode', 'npm-shrinkwrap.json'), 'utf8'));
  const rg = shrinkwrap.packages?.['node_modules/@vscode/ripgrep']?.version;
  if (!rg) throw new Error("code-server's VS Code shrinkwrap names no @vscode/ripgrep version");
  seedRipgrepCache(rg, npmEnv);
  log('running the install scripts (builds native modules, installs VS Code server dependencies; a few minutes)');
  run('npm', ['rebuild'], { cwd: dest, env: npmEnv });
  if (!existsSync(serverMain)) throw new Error(`${serverMain} is missing after the install`);
  writeFileSync(marker, `${CODE_SERVER_VERSION}\n`);
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  console.log(serverMain);
}

try {
  main();
} catch (e) {
  log(e instanceof Error ? e.message : String(e));
  process.exit(1);
}
