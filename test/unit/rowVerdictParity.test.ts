// The editor's verdict on every row equals prepare's (issue 24, "Editor and prepare read rows the same
// way"): for every sample, every dataset fixture and every file of the real-data corpus (shared/real-data beside the
// checkout, or EAGLE3_REAL_DATA; skipped when absent), each row's fate in
// the hover / mask view (RecordViewer, with the hover's default work cap) and in the Problems scan
// (rowProblems.ts scanRowProblems) is the fate prepare gave it in its outputs (tokenized_data.jsonl,
// prompts_to_generate.jsonl, problems.jsonl): written with N records, set aside, dropped with a code,
// errored with a code.
// Bounded: a file with more than ROWS_PER_FILE rows is compared on a copy holding its first rows (JSON Lines:
// its first lines as they are; other layouts: those rows as a JSON array); files over MAX_BYTES are skipped
// (named); all files go through one prepare run.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { test, type TestContext } from 'node:test';
import { recordViewerFor } from '../../src/core/records/recordViewer';
import type { RowVerdict } from '../../src/core/records/recordViewTypes';
import { containerKind } from '../../src/core/read/readers/containers';
import { isJsonDocument } from '../../src/core/read/readers/jsonDocument';
import { readRows, DATASET_FILE_RE, type RawRow } from '../../src/core/read/readers';
import { scanRowProblems } from '../../src/core/run/editor/rowProblems';
import { viewRow } from '../../src/core/run/editor/fileRows';
import { prepare } from '../../src/core/run/prepare/pipeline';
import type { PrepareOptions } from '../../src/core/run/contract';
import { SETTING_DEFAULTS } from '../../src/vscode/settings';
import { tempDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const REAL = process.env.EAGLE3_REAL_DATA || join(ROOT, '..', 'shared', 'real-data');
/** Rows compared per file. */
const ROWS_PER_FILE = 25;
/** Files larger than this are skipped. */
const MAX_BYTES = 16 * 1024 * 1024;
/** The hover's work cap (characters tokenized per row), as VS Code has it by default. */
const HOVER_CAP = SETTING_DEFAULTS['hover.maxTokenizedCharacters'];

const viewer = recordViewerFor(undefined); // embedded Qwen3, as prepare's default

function datasetFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && DATASET_FILE_RE.test(e.name))
    .map((e) => join(dir, e.name))
    .sort();
}

const key = (line: number, element?: number) => (element === undefined ? `${line}` : `${line}[${element}]`);

const show = (v: RowVerdict | undefined) =>
  !v ? 'nothing' : v.fate === 'written' ? `written (${v.records} records)` : v.fate === 'setAside' ? 'set aside' : `${v.fate} ${v.code}`;

interface Row {
  line: number;
  element?: number;
  /** The text the editor's row path gets: the line itself (JSON Lines), else the row's JSON. */
  text: string;
}

/** A file's rows (raw: no field mapping, the views apply it as prepare does), at most `limit`. */
async function rawRows(file: string, limit = Infinity): Promise<RawRow[]> {
  const rows: RawRow[] = [];
  for await (const r of readRows(file)) {
    if (rows.length >= limit) break;
    rows.push(r);
  }
  return rows;
}

/** The file prepare and the editor are compared on: the file itself, or a copy of its first rows. */
async function comparedFile(file: string, dir: string): Promise<string> {
  const rows = await rawRows(file, ROWS_PER_FILE + 1);
  if (rows.length <= ROWS_PER_FILE) return file;
  const copy = join(dir, `${Math.random().toString(36).slice(2)}`, basename(file));
  mkdirSync(join(copy, '..'));
  const kind = await containerKind(file);
  if (kind === 'plain' && !(await isJsonDocument(file, kind))) {
    const last = rows[ROWS_PER_FILE - 1].line;
    writeFileSync(copy, readFileSync(file, 'utf8').split('\n').slice(0, last).join('\n') + '\n');
  } else {
    const kept = rows.slice(0, ROWS_PER_FILE).filter((r) => r.error === undefined);
    writeFileSync(copy.replace(/\.(gz|zst)$/i, ''), `[\n${kept.map((r) => JSON.stringify(r.value)).join(',\n')}\n]\n`);
    return copy.replace(/\.(gz|zst)$/i, '');
  }
  return copy;
}

/** The rows of a file as the editor sees them. */
async function editorRows(file: string): Promise<Row[]> {
  const kind = await containerKind(file);
  const lineText = kind === 'plain' && !(await isJsonDocument(file, kind)) ? readFileSync(file, 'utf8').split('\n') : undefined;
  return (await rawRows(file)).map((r) => {
    // JSON Lines: the line's own text (a line holding several rows: the view is asked for its k-th row).
    const text = lineText ? lineText[r.line - 1].replace(/\r$/, '') : r.error !== undefined ? '{' : JSON.stringify(r.value);
    return { line: r.line, element: r.element, text };
  });
}

/** Per file, per row (line, element): what prepare made of it, from its outputs. */
async function prepareVerdicts(files: string[], options: Partial<PrepareOptions> = {}): Promise<Map<string, Map<string, RowVerdict>>> {
  const res = await prepare({ inputs: files, outDir: tempDir('e3p-verdict-'), allowEmpty: true, skipFailedFiles: true, workers: 1, ...options });
  const skipped = res.files.filter((f) => f.skipped).map((f) => f.file);
  const all = [
    res,
    ...(await Promise.all(skipped.map((f) => prepare({ inputs: [f], outDir: tempDir('e3p-verdict-'), allowEmpty: true, workers: 1, ...options })))),
  ];
  const out = new Map<string, Map<string, RowVerdict>>();
  const of = (file: string) => out.get(file) ?? out.set(file, new Map()).get(file)!;
  const lines = (p: string | undefined) =>
    p && existsSync(p)
      ? readFileSync(p, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
  for (const r of all) {
    const left = r === res ? new Set(skipped) : new Set<string>();
    for (const rec of lines(r.outputs.tokenizedData)) {
      if (left.has(rec.source.file)) continue;
      const m = of(rec.source.file);
      const k = key(rec.source.line, rec.source.element);
      const v = m.get(k);
      m.set(k, { fate: 'written', records: (v?.fate === 'written' ? v.records : 0) + 1 });
    }
    for (const p of lines(r.outputs.promptsToGenerate)) {
      if (left.has(p.source.file)) continue;
      const k = key(p.source.line, p.source.element);
      if (!of(p.source.file).has(k)) of(p.source.file).set(k, { fate: 'setAside' });
    }
    for (const p of lines(r.outputs.problems)) if (!left.has(p.file)) of(p.file).set(key(p.line, p.element), { fate: p.fate, code: p.code });
  }
  return out;
}

const SOURCES = [
  join(ROOT, 'samples'),
  join(ROOT, 'test', 'fixtures', 'formats'),
  join(ROOT, 'test', 'fixtures', 'formats-mapping'),
  join(ROOT, 'test', 'fixtures', 'containers'),
  join(REAL, 'files'),
  join(REAL, 'adp_std'),
];

/** What {@link comparedFilesOnce} found: the files compared and the notes on what was skipped. */
let compared: Promise<{ files: { name: string; file: string }[]; notes: string[] }> | undefined;

/**
 * The files compared: each source file, or a copy of its first rows; files over {@link MAX_BYTES} skipped (named).
 * Read and copied once per process: both tests compare the same rows (the copies are read-only), only the options differ.
 */
function comparedFilesOnce() {
  return (compared ??= (async () => {
    const notes: string[] = [];
    if (!existsSync(REAL)) notes.push(`the real-data corpus is not beside the checkout (${REAL}; EAGLE3_REAL_DATA names it): its files are skipped`);
    const dir = tempDir('e3p-verdict-files-');
    const files: { name: string; file: string }[] = [];
    for (const file of SOURCES.flatMap((d) => datasetFiles(d))) {
      const name = relative(join(ROOT, '..'), file);
      const size = statSync(file).size;
      if (size > MAX_BYTES) notes.push(`skipped ${name}: ${size.toLocaleString('en-US')} bytes, over ${MAX_BYTES.toLocaleString('en-US')}`);
      else files.push({ name, file: await comparedFile(file, dir) });
    }
    return { files, notes };
  })());
}

/** The files compared ({@link comparedFilesOnce}), their notes given to this test. */
async function comparedFiles(t: TestContext): Promise<{ name: string; file: string }[]> {
  const { files, notes } = await comparedFilesOnce();
  for (const n of notes) t.diagnostic(n);
  assert.ok(files.length >= (existsSync(REAL) ? 140 : 55), `${files.length} files`);
  return files;
}

test('the editor (hover, mask view, Problems) gives every row the fate prepare gives it', async (t) => {
  const files = await comparedFiles(t);
  const expected = await prepareVerdicts(files.map((f) => f.file));
  const wrong: string[] = [];
  let compared = 0;
  for (const { name, file } of files) {
    const want = expected.get(file) ?? new Map<string, RowVerdict>();
    const problems = new Map((await scanRowProblems(file)).problems.map((p) => [p.line, p]));
    for (const row of await editorRows(file)) {
      const k = key(row.line, row.element);
      const view = await viewRow(viewer, { text: row.text, file, line: row.line }, { element: row.element, maxTokenizedChars: HOVER_CAP });
      // A row with no output line of its own is written inside other rows' records (a message of a file read whole).
      const w = want.get(k) ?? { fate: 'written', records: 0 };
      compared++;
      if (JSON.stringify(view.verdict) !== JSON.stringify(w)) wrong.push(`${name}:${k}: prepare ${show(w)}, the view ${show(view.verdict)}`);
      // Problems lists a row that normalization drops or errors, with prepare's code; never a row prepare keeps.
      if (row.element) continue;
      const p = problems.get(row.line);
      if (p && JSON.stringify(w) !== JSON.stringify({ fate: p.severity === 'error' ? 'errored' : 'dropped', code: p.code }))
        wrong.push(`${name}:${k}: prepare ${show(w)}, Problems ${p.severity} ${p.code}`);
      if (!p && !view.template && (w?.fate === 'dropped' || w?.fate === 'errored')) wrong.push(`${name}:${k}: prepare ${show(w)}, not in Problems`);
    }
  }
  t.diagnostic(`${compared} rows of ${files.length} files compared`);
  assert.ok(compared > 500, `${compared} rows`);
  assert.deepEqual(wrong, []);
});

// Non-default options, every option the row path reads at once: the view (with no work cap: below the cap it is
// prepare's path, records/rowTrace.ts) gives every row the verdict prepare gives it, records split by --long split counted.
test('with --long split (max length 512), mask last-assistant, merged grouping, reasoning drop and min trainable 8, the view gives every row the fate prepare gives it', async (t) => {
  const run = { maxLength: 512, long: 'split', mask: 'last-assistant', grouping: 'merged', reasoning: 'drop', minTrainableTokens: 8 } as const;
  const files = await comparedFiles(t);
  const expected = await prepareVerdicts(
    files.map((f) => f.file),
    run,
  );
  const wrong: string[] = [];
  const fates = new Map<string, number>();
  for (const { name, file } of files) {
    const want = expected.get(file) ?? new Map<string, RowVerdict>();
    for (const row of await editorRows(file)) {
      const k = key(row.line, row.element);
      const view = await viewRow(viewer, { text: row.text, file, line: row.line }, { element: row.element, ...run });
      const w = want.get(k) ?? { fate: 'written', records: 0 };
      fates.set(show(w), (fates.get(show(w)) ?? 0) + 1);
      if (JSON.stringify(view.verdict) !== JSON.stringify(w)) wrong.push(`${name}:${k}: prepare ${show(w)}, the view ${show(view.verdict)}`);
    }
  }
  t.diagnostic(`fates: ${[...fates].map(([f, n]) => `${f} × ${n}`).join('; ')}`);
  assert.ok(
    [...fates.keys()].some((f) => /written \([2-9]|written \(\d\d/.test(f)),
    'some row is split into several records',
  );
  assert.ok(fates.has('dropped too_long') || fates.has('dropped too_few_trainable_tokens'), 'some record is dropped for its length or its trainable tokens');
  assert.deepEqual(wrong, []);
});
