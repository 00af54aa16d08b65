// The project's test command (`npm test`): builds dist/, then runs every test file
// under node's own test runner, so one summary line counts them all.
//   --unit  only test/unit (no build, no VS Code host)
//   --host  only test/host (the extension in a real VS Code; see test/host/README.md)
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const only = args.includes('--unit') ? 'unit' : args.includes('--host') ? 'host' : null;
const dirs = only ? [`test/${only}`] : ['test/unit', 'test/host'];

if (only !== 'unit') {
  const b = spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}
const files = dirs.flatMap((d) =>
  readdirSync(d, { recursive: true })
    .map(String)
    .filter((f) => /\.test\.(ts|mjs)$/.test(f))
    .sort()
    .map((f) => join(d, f)),
);
if (files.length === 0) {
  console.error('no test files found in', dirs.join(', '));
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
