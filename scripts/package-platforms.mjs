// Packages the extension once per VS Code platform target plus once universal (`vsce package
// [--target <target>]`, targets from scripts/vsix-targets.mjs) into one folder, and prints the table
// of target → file, size and the tokenizers binary included. Each platform package carries the Rust
// tokenizer binding with its own binary only (staged in dist/node_modules/tokenizers/ for the
// package's run and removed after it); the universal one carries none. Needs no network: vsce
// packages locally (each run's vscode:prepublish makes the production build).
//   node scripts/package-platforms.mjs [--out DIR] [--targets linux-x64,universal,...]
//   npm run package:platforms
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO, TOKENIZERS_DIR, VSIX_TARGETS, stageTokenizers, targetLabel, vsixFileName } from './vsix-targets.mjs';

/** The default output folder of the packages. */
export const VSIX_DIR = join(REPO, '.cache', 'vsix');

/**
 * Packages the targets named (labels as in targetLabel; all by default) into `outDir`.
 * Returns one row per package: target label, file path, size in bytes, the binary included (or null).
 * Throws when vsce fails (its output in the message).
 */
export function packagePlatforms({ outDir = VSIX_DIR, targets } = {}) {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8'));
  const vsce = join(createRequire(join(REPO, 'package.json')).resolve('@vscode/vsce/package.json'), '..', 'vsce');
  const chosen = targets ? VSIX_TARGETS.filter((t) => targets.includes(targetLabel(t))) : VSIX_TARGETS;
  if (targets && chosen.length !== targets.length) {
    throw new Error(`unknown target in ${targets.join(',')}; known: ${VSIX_TARGETS.map(targetLabel).join(', ')}`);
  }
  mkdirSync(outDir, { recursive: true });
  const staged = join(REPO, TOKENIZERS_DIR);
  const stagedRoot = join(REPO, 'dist', 'node_modules');
  const rows = [];
  for (const t of chosen) {
    const file = join(outDir, vsixFileName(pkg, t));
    rmSync(file, { force: true });
    rmSync(stagedRoot, { recursive: true, force: true });
    try {
      if (t.binary) stageTokenizers(staged, t);
      const args = [vsce, 'package', '--out', file, ...(t.target ? ['--target', t.target] : [])];
      try {
        execFileSync(process.execPath, args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        throw new Error(`vsce package for ${targetLabel(t)} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: e });
      }
    } finally {
      rmSync(stagedRoot, { recursive: true, force: true });
    }
    rows.push({ target: targetLabel(t), file, bytes: statSync(file).size, binary: t.binary });
  }
  return rows;
}

/** The rows as a Markdown table (target, file, MB, binary), as docs/scale.md shows it. */
export function sizeTable(rows, outDir = VSIX_DIR) {
  const lines = ['| target | file | MB | tokenizers binary |', '| --- | --- | ---: | --- |'];
  for (const r of rows)
    lines.push(`| ${r.target} | ${relative(outDir, r.file)} | ${(r.bytes / 2 ** 20).toFixed(2)} | ${r.binary ?? 'none (JavaScript tokenizer)'} |`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (k) => {
    const i = process.argv.indexOf(`--${k}`);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const outDir = resolve(arg('out') ?? VSIX_DIR);
  const rows = packagePlatforms({ outDir, targets: arg('targets')?.split(',') });
  console.log(`VSIX packages in ${outDir}:\n`);
  console.log(sizeTable(rows, outDir));
}
