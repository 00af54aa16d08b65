// What Problems lists for a dataset (src/vscode/problemsModel.ts), in plain node: a real run's problems.jsonl and a
// real scan of the same file, merged one entry per line; the stale tag; the quick fixes; the eagle3prep.jsonc edit.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { scanRowProblems } from '../../src/core/run/editor/rowProblems';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { resolveRunSettings } from '../../src/core/run/runSettings';
import { parseProjectConfig } from '../../src/core/read/projectConfig';
import {
  addedToConfigMessage,
  addToProjectConfig,
  checkRowsMessage,
  composeProblems,
  quickFixes,
  readRunProblems,
  reportedInputs,
  scanFailure,
  scannedProblems,
} from '../../src/vscode/problemsModel';
import { tempDir, writeJsonl } from '../helpers';

const LONG_QUESTION = 'Please explain in full detail why the sky appears blue during the day and red at sunset, with the physics involved.';

/** A file with one good row, one cut JSON line, one unknown role, one row the run drops for length, one empty conversation. */
function damagedFile(): string {
  return writeJsonl([
    {
      messages: [
        { role: 'user', content: 'Hi?' },
        { role: 'assistant', content: 'Hello.' },
      ],
    },
    '{"messages": [',
    {
      messages: [
        { role: 'user', content: 'Q' },
        { role: 'wizard', content: 'A' },
      ],
    },
    {
      messages: [
        { role: 'user', content: LONG_QUESTION },
        { role: 'assistant', content: 'Rayleigh scattering.' },
      ],
    },
    { messages: [] },
  ]);
}

const RUN = { maxLength: 24, long: 'drop' as const };

test('Problems merges the scan and the last run one entry per line; the run adds the rows only a tokenizer finds', async () => {
  const f = damagedFile();
  const res = await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3'), ...RUN });
  assert.ok(res.ok);
  const out = readOutputState(f, { settings: resolveRunSettings(RUN) });
  assert.equal(out.state, 'prepared');
  const { use, run } = await readRunProblems(f, out, 1000);
  assert.deepEqual(use, { show: true, note: '', rows: true });
  assert.ok(run);
  assert.deepEqual(
    run.problems.map((p) => [p.line, p.fate, p.code]),
    [
      [2, 'errored', 'invalid_json'],
      [3, 'errored', 'unknown_role'],
      [4, 'dropped', 'too_long'],
      [5, 'dropped', 'empty_conversation'],
    ],
  );
  assert.equal(run.reportMd, join(f.replace(/\.jsonl$/, '.eagle3'), 'report.md'));
  assert.equal(run.long, 'drop');

  // The file is closed: only the run's entries, each tagged as the last run's, linking to report.md.
  const closed = composeProblems(undefined, run).entries;
  assert.deepEqual(
    closed.map((e) => [e.line, e.severity, e.code, e.codeTarget === run.reportMd]),
    [
      [2, 'error', 'invalid_json', true],
      [3, 'error', 'unknown_role', true],
      [4, 'warning', 'too_long', true],
      [5, 'warning', 'empty_conversation', true],
      // The record the run dropped is a data-changing warning of the file too: one entry on line 1.
      [1, 'warning', 'record_dropped_too_long', true],
    ],
  );
  assert.equal(closed[3].message, 'empty_conversation: "messages" is an empty list (row 5 was dropped by the last run)');

  // Open: the scan (no tokenizer) finds lines 2, 3 and 5 and says what will happen; line 4 stays the run's.
  const scan = scannedProblems(f, await scanRowProblems(f), { force: false, maxProblems: 1000 });
  assert.ok(scan);
  const { entries, byLine } = composeProblems(scan, run);
  assert.deepEqual(
    entries.map((e) => [e.line, e.severity, e.code, e.codeTarget !== undefined]),
    [
      [2, 'error', 'invalid_json', false],
      [3, 'error', 'unknown_role', false],
      [5, 'warning', 'empty_conversation', false],
      [4, 'warning', 'too_long', true],
      [1, 'warning', 'record_dropped_too_long', true],
    ],
  );
  assert.equal(entries[2].message, '"messages" is an empty list (row 5 will be dropped)');
  assert.match(entries[3].message, /^too_long: .* \(row 4 was dropped by the last run\)$/);
  assert.deepEqual([...byLine.keys()], [2, 3, 5]);
  assert.equal(byLine.get(3)?.role, 'wizard');
  assert.equal(
    checkRowsMessage('data.jsonl', entries.filter((e) => e.severity !== 'information').length),
    'data.jsonl: 5 rows will be dropped or errored (see Problems).',
  );
  assert.equal(checkRowsMessage('data.jsonl', 1), 'data.jsonl: 1 row will be dropped or errored (see Problems).');
  assert.equal(checkRowsMessage('data.jsonl', 0), 'data.jsonl: no row will be dropped or errored before tokenizing.');

  // Another mask policy: the output is stale for a setting, the run's rows stay, tagged.
  const stale = readOutputState(f, { settings: resolveRunSettings({ ...RUN, mask: 'non-system' }) });
  const tagged = await readRunProblems(f, stale, 1000);
  assert.equal(tagged.run?.problems.length, 4);
  assert.equal(
    composeProblems(undefined, tagged.run).entries[3].message,
    'empty_conversation: "messages" is an empty list (row 5 was dropped by the last run; the output is stale (settings changed: mask policy (run: assistant, now: non-system)): prepare again to update)',
  );
  // maxProblems caps the rows read from problems.jsonl.
  assert.equal((await readRunProblems(f, out, 2)).run?.problems.length, 2);
});

test("a run's data-changing warning that no row lists gets one entry on line 1, with the code's meaning and remedy", async () => {
  const f = damagedFile();
  const opts = { maxLength: 24, long: 'truncate' as const, truncate: true };
  assert.ok((await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3'), ...opts })).ok);
  const { run } = await readRunProblems(f, readOutputState(f, { settings: resolveRunSettings(opts) }), 1000);
  assert.ok(run);
  // Truncating the long question to 24 tokens leaves its record nothing to train on: dropped, and that is said too.
  assert.deepEqual(run.fileWarnings, [
    { code: 'record_dropped_no_trainable_tokens', count: 1 },
    { code: 'record_truncated', count: 1 },
  ]);
  const warning = composeProblems(undefined, run).entries.find((e) => e.code === 'record_truncated');
  assert.deepEqual(warning, {
    line: 1,
    severity: 'warning',
    message:
      'record_truncated × 1: a record longer than --max-length was cut to its first --max-length tokens (--truncate). What to do: raise --max-length if the cut turns matter (data-changing warning of the last run)',
    code: 'record_truncated',
    codeTarget: run.reportMd,
  });
  // An older output without problems.jsonl: the rows it does not list are counted in one note.
  const older = composeProblems(undefined, { ...run, problems: run.problems.slice(0, 1), missing: 3, complete: false }).entries;
  assert.deepEqual(older.at(-1), {
    line: 1,
    severity: 'information',
    message: '3 more dropped or errored rows of the last run are not listed: this output has no problems.jsonl (prepare again to list every row).',
  });
});

test('no output, or an input edited since the run: no run entries', async () => {
  const f = damagedFile();
  assert.deepEqual(await readRunProblems(f, readOutputState(f), 1000), { use: { show: false } });
  assert.ok((await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3'), ...RUN })).ok);
  writeFileSync(f, readFileSync(f, 'utf8') + '{"messages": []}\n');
  const edited = readOutputState(f, { settings: resolveRunSettings(RUN) });
  assert.equal(edited.inputChanged, true);
  assert.deepEqual(await readRunProblems(f, edited, 1000), { use: { show: false } });
});

test('the scan: a .json file with no readable row is left alone unless forced; a capped scan and an unreadable file get a note', async () => {
  const dir = tempDir();
  const pkg = join(dir, 'package.json');
  writeFileSync(pkg, JSON.stringify({ name: 'x', version: '1.0.0', scripts: { build: 'tsc' } }));
  const r = await scanRowProblems(pkg);
  assert.equal(r.problems.length, r.rowsRead);
  assert.equal(scannedProblems(pkg, r, { force: false, maxProblems: 1000 }), undefined);
  assert.deepEqual(
    scannedProblems(pkg, r, { force: true, maxProblems: 1000 })?.problems.map((p) => p.code),
    r.problems.map((p) => p.code),
  );
  // The same rows in a .jsonl file are listed.
  const f = damagedFile();
  const capped = await scanRowProblems(f, { maxProblems: 1 });
  assert.equal(capped.truncated, true);
  const s = scannedProblems(f, capped, { force: false, maxProblems: 1 });
  assert.deepEqual(
    s?.problems.map((p) => p.line),
    [2],
  );
  assert.deepEqual(s?.notes, [
    {
      line: 1,
      severity: 'information',
      message: 'Only the first 1 problem rows are listed (eagle3prep.diagnostics.maxProblems); more rows may be dropped or errored.',
    },
  ]);
  // The entries: the scanned row, then the note.
  assert.deepEqual(
    composeProblems(s, undefined).entries.map((e) => [e.line, e.severity]),
    [
      [2, 'error'],
      [1, 'information'],
    ],
  );
  // A bad eagle3prep.jsonc and an unreadable file, as the service worker reports them.
  const cfg = Object.assign(new Error('eagle3prep.jsonc: "roleAliases" must be an object'), { errorName: 'ProjectConfigError' });
  assert.deepEqual(scanFailure(cfg).notes, [
    { line: 1, severity: 'error', message: 'eagle3prep.jsonc: "roleAliases" must be an object', code: 'project_config' },
  ]);
  assert.equal(scanFailure(new Error('ENOENT: no such file')).notes[0].code, 'unreadable');
});

test('quick fixes: an unknown role gets an alias to each role, the model side first; an unrecognized shape its field mappings', async () => {
  const f = damagedFile();
  const scan = await scanRowProblems(f);
  const unknown = scan.problems.find((p) => p.code === 'unknown_role');
  assert.ok(unknown);
  assert.deepEqual(
    quickFixes(unknown).map((q) => [q.title, q.section, q.key, q.value, q.isPreferred]),
    [
      ['Add role alias "wizard" → assistant to eagle3prep.jsonc', 'roleAliases', 'wizard', 'assistant', undefined],
      ['Add role alias "wizard" → user to eagle3prep.jsonc', 'roleAliases', 'wizard', 'user', undefined],
      ['Add role alias "wizard" → tool to eagle3prep.jsonc', 'roleAliases', 'wizard', 'tool', undefined],
      ['Add role alias "wizard" → system to eagle3prep.jsonc', 'roleAliases', 'wizard', 'system', undefined],
    ],
  );
  assert.deepEqual(quickFixes(scan.problems.find((p) => p.code === 'invalid_json')!), []);
  const shape = writeJsonl([{ turns: [{ speaker: 'a', text: 'x' }] }, { first: [{ speaker: 'a', text: 'x' }], second: [{ from: 'a', text: 'y' }] }]);
  const rows = await scanRowProblems(shape);
  const fixes = rows.problems.map((p) => quickFixes(p).map((q) => [q.title, q.section, q.key, q.value, q.isPreferred]));
  // One candidate list: the preferred fix. Two: both offered, neither preferred; turns using `from` map to `conversations`.
  assert.deepEqual(fixes, [
    [['Map field "turns" → "messages" in eagle3prep.jsonc', 'fieldMappings', 'turns', 'messages', true]],
    [
      ['Map field "first" → "messages" in eagle3prep.jsonc', 'fieldMappings', 'first', 'messages', false],
      ['Map field "second" → "conversations" in eagle3prep.jsonc', 'fieldMappings', 'second', 'conversations', false],
    ],
  ]);
});

test('the quick fix writes the entry into the eagle3prep.jsonc that applies, keeping its comments, or creates one', () => {
  const dir = tempDir();
  const f = writeJsonl([{ messages: [] }], 'data.jsonl', dir);
  const created = addToProjectConfig(f, 'roleAliases', 'wizard', 'assistant');
  assert.equal(created.file, join(dir, 'eagle3prep.jsonc'));
  const text = readFileSync(created.file, 'utf8');
  assert.match(text, /^\/\/ eagle3-prep project configuration/);
  assert.equal(text.slice(created.offset, created.offset + created.length), '"wizard": "assistant"');
  assert.deepEqual(parseProjectConfig(text, created.file).roleAliases, { wizard: 'assistant' });
  // The next fix goes into the same file; its comment and the first entry stay.
  const second = addToProjectConfig(f, 'fieldMappings', 'turns', 'messages');
  assert.equal(second.file, created.file);
  const after = readFileSync(created.file, 'utf8');
  assert.match(after, /^\/\/ eagle3-prep project configuration/);
  assert.equal(after.slice(second.offset, second.offset + second.length), '"turns": "messages"');
  assert.equal(
    addedToConfigMessage(second.file, f, 'fieldMappings', 'turns', 'messages', 2),
    'eagle3prep.jsonc: field "turns" → "messages"; data.jsonl re-checked (2 problem rows); prepare it again to update its output.',
  );
  assert.equal(
    addedToConfigMessage(second.file, f, 'roleAliases', 'wizard', 'assistant', 0),
    'eagle3prep.jsonc: role "wizard" → assistant; data.jsonl re-checked (0 problem rows); prepare it again to update its output.',
  );
  // No config up the tree: a new one in the folder the editor gives (the workspace folder).
  const ws = tempDir();
  const g = writeJsonl([{ messages: [] }], 'data.jsonl', tempDir());
  assert.equal(addToProjectConfig(g, 'roleAliases', 'bot2', 'user', ws).file, join(ws, 'eagle3prep.jsonc'));
});

test('at activation Problems reads the inputs every report.json lists: each once, existing ones, unreadable reports skipped', async () => {
  const dir = tempDir();
  const rows = [
    {
      messages: [
        { role: 'user', content: 'Hi?' },
        { role: 'assistant', content: 'Hello.' },
      ],
    },
  ];
  const a = writeJsonl(rows, 'a.jsonl', dir);
  const b = writeJsonl(rows, 'b.jsonl', dir);
  const c = writeJsonl(rows, 'c.jsonl', dir);
  const folderRun = await prepare({ inputs: [a, b, c], outDir: join(dir, 'all.eagle3') });
  const own = await prepare({ inputs: [b], outDir: join(dir, 'b.eagle3') });
  assert.ok(folderRun.ok && own.ok);
  rmSync(c);
  const broken = join(dir, 'broken.json');
  writeFileSync(broken, '{"files": [');
  assert.deepEqual(reportedInputs([folderRun.outputs.reportJson, broken, own.outputs.reportJson]), [a, b]);
  assert.deepEqual(reportedInputs([own.outputs.reportJson]), [b]);
});
