// The rooms of src/core follow the pipeline, and imports point down it only (issue 23, "Rooms that say what they
// hold"): a file may import its own room, a room of a lower tier, or the shared vocabulary at the top of src/core
// (codes.ts, errors.ts, jsonDepth.ts, numberText.ts, ownEntry.ts, sortedSearch.ts, types.ts, which import no room). run/ is split the same way: the files at its top
// (contract.ts, outputFiles.ts, runSettings.ts, stats.ts) are the run's vocabulary, and its subfolders are rooms of
// their own. Rooms of one tier are siblings and import neither each other nor anything above them.
// Beside src/core: src/shared/ (what the webview and the extension host both import) never imports src/vscode, the
// CLI or the entry points, src/core never imports src/shared, and the webview's pages import only src/shared.
// docs/development.md "Layout" draws the same order.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';

const ROOT = join(__dirname, '..', '..');
const CORE = join(ROOT, 'src', 'core');
const SHARED = join(ROOT, 'src', 'shared');
const WEBVIEW = join(ROOT, 'webview');

/**
 * The rooms of src/core in tiers, lowest first: a room may import the rooms of the tiers before its own. A room with
 * subrooms (run) names its subfolders `run/<sub>`; the files directly in it are the room `run`.
 */
const TIERS: readonly (readonly string[])[] = [
  ['read'],
  ['formats'],
  ['tokenizers'],
  ['templates'],
  ['trainers'],
  ['records'],
  ['run'],
  ['run/inputs', 'run/outputs'],
  ['run/reports'],
  ['run/prepare'],
  ['run/jobs', 'run/editor'],
  ['generate'],
];
const ROOMS = TIERS.flat();

/** The room of a file under src/core ('' for the shared files at its top); throws for a folder no tier names. */
function roomOf(file: string): string {
  const dirs = relative(CORE, file).split(sep).slice(0, -1);
  if (dirs.length === 0) return '';
  const split = ROOMS.some((r) => r.startsWith(dirs[0] + '/'));
  const room = split && dirs.length > 1 ? `${dirs[0]}/${dirs[1]}` : dirs[0];
  assert.ok(ROOMS.includes(room), `src/core/${room}/ is not a known room: add it to TIERS (and docs/development.md "Layout")`);
  return room;
}

/** The tier of a room (-1 for the shared vocabulary at the top of src/core). */
function tier(room: string): number {
  return room === '' ? -1 : TIERS.findIndex((t) => t.includes(room));
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

const inside = (dir: string, p: string) => p.startsWith(dir + sep);

/** Why an import of `spec` by `file` breaks the layout, or undefined when it may stay. */
function violation(file: string, spec: string): string | undefined {
  const target = resolve(dirname(file), spec);
  const at = `${relative(ROOT, file)} → ${spec}`;
  if (inside(WEBVIEW, file)) {
    if (!inside(WEBVIEW, target) && !inside(SHARED, target)) return `${at} (the webview imports only webview/ and src/shared/)`;
    return undefined;
  }
  if (inside(SHARED, file)) {
    if (!inside(SHARED, target) && !inside(CORE, target)) return `${at} (src/shared/ imports only itself and src/core/)`;
    return undefined;
  }
  if (!inside(CORE, file)) return undefined;
  if (inside(SHARED, target)) return `${at} (src/core never imports src/shared/)`;
  if (!inside(CORE, target)) return undefined; // package.json and the like
  const from = roomOf(file);
  const to = roomOf(target + '.ts');
  if (to === from) return undefined;
  if (tier(to) < tier(from)) return undefined;
  if (tier(to) === tier(from)) return `${at} (${from} and ${to} are siblings: neither imports the other)`;
  return `${at} (${from || 'shared'} imports ${to}, which is above it)`;
}

/** Every import in `files` that breaks the layout, as `file → spec (why)`. */
function violations(files: readonly { file: string; text: string }[]): string[] {
  return files.flatMap(({ file, text }) => importsOf(text).flatMap((spec) => violation(file, spec) ?? []));
}

const sources = () => [CORE, SHARED, WEBVIEW].flatMap(tsFiles).map((file) => ({ file, text: readFileSync(file, 'utf8') }));

test('imports in src/core point down the pipeline only (read → formats → … → records → run → run/… → generate), and the webview reaches the host only through src/shared', () => {
  assert.deepEqual(violations(sources()), []);
});

test('every folder of src/core is a room of a tier', () => {
  for (const file of tsFiles(CORE)) roomOf(file);
});

test('the check finds an upward import, a sibling import and a webview import past src/shared (it can fail)', () => {
  assert.deepEqual(importsOf("import { x } from '../run/contract';\nconst y = await import('./z');"), ['../run/contract', './z']);
  assert.ok(tier('run') > tier('records') && tier('records') > tier('templates') && tier('formats') > tier('read'));
  assert.ok(tier('run/prepare') > tier('run/reports') && tier('run/reports') > tier('run/outputs') && tier('run/outputs') > tier('run'));
  assert.equal(tier(''), -1);
  const at = (p: string) => join(ROOT, ...p.split('/'));
  const bad = violations([
    { file: at('src/core/run/reports/report.ts'), text: "import { prepare } from '../prepare/pipeline';" },
    { file: at('src/core/run/outputs/output.ts'), text: "import type { RunOutcome } from '../prepare/runResult';" },
    { file: at('src/core/run/jobs/mergeReports.ts'), text: "import { scanDataset } from '../editor/datasetScan';" },
    { file: at('src/core/run/contract.ts'), text: "import type { X } from './reports/status';" },
    { file: at('src/core/records/fate.ts'), text: "import type { RunSetup } from '../run/contract';" },
    { file: at('src/core/run/editor/service.ts'), text: "import type { DashboardModel } from '../../../shared/dashboardModel';" },
    { file: at('src/shared/maskViewProtocol.ts'), text: "import { ids } from '../vscode/ids';" },
    { file: at('webview/main.ts'), text: "import type { RecordView } from '../src/core/records/recordView';" },
    { file: at('webview/dashboard.ts'), text: "import { x } from '../src/vscode/dashboard';" },
  ]);
  assert.deepEqual(bad, [
    'src/core/run/reports/report.ts → ../prepare/pipeline (run/reports imports run/prepare, which is above it)',
    'src/core/run/outputs/output.ts → ../prepare/runResult (run/outputs imports run/prepare, which is above it)',
    'src/core/run/jobs/mergeReports.ts → ../editor/datasetScan (run/jobs and run/editor are siblings: neither imports the other)',
    'src/core/run/contract.ts → ./reports/status (run imports run/reports, which is above it)',
    'src/core/records/fate.ts → ../run/contract (records imports run, which is above it)',
    'src/core/run/editor/service.ts → ../../../shared/dashboardModel (src/core never imports src/shared/)',
    'src/shared/maskViewProtocol.ts → ../vscode/ids (src/shared/ imports only itself and src/core/)',
    'webview/main.ts → ../src/core/records/recordView (the webview imports only webview/ and src/shared/)',
    'webview/dashboard.ts → ../src/vscode/dashboard (the webview imports only webview/ and src/shared/)',
  ]);
  // Downward and same-room imports pass.
  assert.deepEqual(
    violations([
      {
        file: at('src/core/run/prepare/pipeline.ts'),
        text: "import { x } from '../reports/report';\nimport { y } from './fileJob';\nimport { z } from '../contract';",
      },
      { file: at('src/core/run/editor/fileRows.ts'), text: "import { x } from '../prepare/batches';\nimport { y } from '../inputs/oasstRun';" },
      { file: at('src/shared/dashboardModel.ts'), text: "import { x } from '../core/run/reports/status';" },
      { file: at('webview/main.ts'), text: "import { x } from '../src/shared/maskViewProtocol';\nimport { y } from './dashboardCharts';" },
    ]),
    [],
  );
  assert.throws(() => roomOf(at('src/core/run/misc/x.ts')), /src\/core\/run\/misc\/ is not a known room/);
});
