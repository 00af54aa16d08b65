// npm run check:real — the real-data regression corpus, which is not part of this repository: the
// workplace keeps it in a folder `shared/real-data` beside the checkout's folder (real dataset files
// of public repositories with their expected readings and a checker, check.py). Runs that checker
// against dist/cli.js from the project root and prints its verdict (`real: N/67 files right`).
// Skipped, with exit 0, when the corpus is not there (a fresh clone elsewhere); EAGLE3_REAL_DATA_CHECK
// names another check.py. Builds dist/ first when it is missing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const checker = process.env.EAGLE3_REAL_DATA_CHECK || resolve(root, '..', 'shared', 'real-data', 'check.py');
if (!existsSync(checker)) {
  console.log(`check:real skipped: no real-data checker at ${checker} (set EAGLE3_REAL_DATA_CHECK to its check.py)`);
  process.exit(0);
}
if (!existsSync(join(root, 'dist', 'cli.js'))) {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
const r = spawnSync('python3', [checker, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
