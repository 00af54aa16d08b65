// The rooms of src/core follow the pipeline, and imports point down it only (issue 23, "Rooms that say what they
// hold"): a file may import its own room, a room below it, or the shared vocabulary at the top of src/core (codes.ts,
// errors.ts, jsonDepth.ts, types.ts, which import no room). docs/development.md "Layout" draws the same order.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';

const CORE = join(__dirname, '..', '..', 'src', 'core');

/** The rooms of src/core, lowest first: a room may import the ones before it. */
const ROOMS = ['read', 'formats', 'tokenizers', 'templates', 'trainers', 'records', 'run', 'generate'] as const;

/** The room of a file under src/core ('' for the shared files at its top). */
function roomOf(file: string): string {
  const parts = relative(CORE, file).split(sep);
  return parts.length > 1 ? parts[0] : '';
}

function rank(room: string): number {
  if (room === '') return -1;
  const r = ROOMS.indexOf(room as (typeof ROOMS)[number]);
  assert.ok(r >= 0, `src/core/${room}/ is not a known room: add it to ROOMS (and docs/development.md "Layout")`);
  return r;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The relative module specifiers a file imports or re-exports (static and dynamic imports). */
function importsOf(text: string): string[] {
  const out: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m[1]);
  return out;
}

/** Every import of src/core that points up the pipeline, as `from → to`. */
function upwardImports(): string[] {
  const bad: string[] = [];
  for (const file of tsFiles(CORE)) {
    const from = roomOf(file);
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(CORE + sep)) continue; // package.json and the like
      const to = roomOf(target + '.ts');
      if (rank(to) > rank(from)) bad.push(`${relative(CORE, file)} → ${spec} (${from || 'shared'} imports ${to})`);
    }
  }
  return bad;
}

test('imports in src/core point down the pipeline only (read → formats → tokenizers → templates → trainers → records → run → generate)', () => {
  assert.deepEqual(upwardImports(), []);
});

test('the check finds an upward import (it can fail)', () => {
  assert.deepEqual(importsOf("import { x } from '../run/contract';\nconst y = await import('./z');"), ['../run/contract', './z']);
  assert.ok(rank('run') > rank('records') && rank('records') > rank('templates') && rank('formats') > rank('read'));
  assert.equal(rank(''), -1);
});
