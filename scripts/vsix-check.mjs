// Packages the extension (`vsce package`), installs the VSIX into the VS Code server here with its
// `--install-extension` flag, and runs test/host/vsixSmoke.ts inside a real VS Code with the
// extension loaded from the installed folder. See docs/vscode.md "VSIX".
//   node scripts/vsix-check.mjs [--vsix FILE] [--server SERVER_MAIN_JS]
import * as esbuild from 'esbuild';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const arg = (k) => {
  const i = process.argv.indexOf(`--${k}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const repo = resolve(import.meta.dirname, '..');
const server = resolve(
  arg('server') ?? process.env.EAGLE3_VSCODE_SERVER ?? join(repo, '.cache/vscode-host/node_modules/code-server/lib/vscode/out/server-main.js'),
);
if (!existsSync(server)) {
  console.error(`VS Code server not found: ${server} (npm run host:install; see test/host/README.md)`);
  process.exit(2);
}
const pkg = JSON.parse(execFileSync('node', ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: repo, encoding: 'utf8' }));
let vsix = arg('vsix');
if (!vsix) {
  vsix = join(repo, `${pkg.name}-${pkg.version}.vsix`);
  execFileSync('npx', ['vsce', 'package', '--out', vsix], { cwd: repo, stdio: 'inherit' });
}
const mb = statSync(vsix).size / 2 ** 20;
console.log(`VSIX ${vsix}: ${mb.toFixed(2)} MB`);
if (mb >= 15) {
  console.error('the VSIX is 15 MB or more');
  process.exit(1);
}
const listing = execFileSync('unzip', ['-l', vsix], { encoding: 'utf8' });
if (/node_modules\//.test(listing)) {
  console.error('the VSIX holds node_modules');
  process.exit(1);
}

const tmp = mkdtempSync(join(tmpdir(), 'eagle3-vsix-'));
const extDir = join(tmp, 'extensions');
execFileSync(process.execPath, [server, '--install-extension', resolve(vsix), '--extensions-dir', extDir, '--accept-server-license-terms'], {
  stdio: 'inherit',
});
const installed = readdirSync(extDir).find((d) => d.startsWith(`${pkg.publisher}.${pkg.name}-`));
if (!installed) {
  console.error(`not installed in ${extDir}`);
  process.exit(1);
}
const tests = join(tmp, 'vsix-smoke.js');
await esbuild.build({
  entryPoints: [join(repo, 'test/host/vsixSmoke.ts')],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  outfile: tests,
  external: ['vscode'],
  logLevel: 'warning',
});
const folder = mkdtempSync(join(tmp, 'ws-'));
const r = spawnSync(
  process.execPath,
  [
    join(repo, 'scripts', 'vscode-host', 'run-tests.mjs'),
    '--server',
    server,
    '--extension',
    join(extDir, installed),
    '--tests',
    tests,
    '--folder',
    folder,
    '--screenshot',
    join(tmp, 'shot.png'),
    '--timeout-s',
    '240',
  ],
  { cwd: repo, encoding: 'utf8' },
);
const out = `${r.stdout}\n${r.stderr}`
  .split('\n')
  .filter((l) => /vsix-smoke|Error|assert|run-tests/.test(l) && !/refused to show dialog|Service Worker/.test(l));
console.log(out.join('\n'));
console.log(`installed at ${join(extDir, installed)}; screenshot ${join(tmp, 'shot.png')}; exit ${r.status}`);
process.exit(r.status ?? 1);
