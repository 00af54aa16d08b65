/**
 * Issue 20 item 5: agent CLI event logs (one event per line: {type, uuid, parentUuid, sessionId, message}) read by
 * a file-level pass — events joined by parent chain into one conversation per root-to-leaf chain, split assistant
 * events merged, thinking → reasoning_content, tool_use → tool_calls, tool_result → tool turns, summary lines not
 * turns — with every line accounted for. The fixture (test/fixtures/formats/agent-event-log.jsonl) is synthetic,
 * written from the shape described in the issue.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeMeaning, CODES } from '../../src/core/codes';
import { detectFormat } from '../../src/core/formats/detect';
import { normalizeRow } from '../../src/core/formats/normalize';
import { RecordViewer } from '../../src/core/records/recordViewer';
import { scanRowProblems } from '../../src/core/run/editor/rowProblems';
import { viewRow } from '../../src/core/run/editor/fileRows';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { lenmlModelDir, runCli, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const FIXTURE = join(__dirname, '..', 'fixtures', 'formats', 'agent-event-log.jsonl');

const user = { role: 'user', content: 'The add test fails. Fix it.' };
const read = {
  role: 'assistant',
  content: 'Let me read the file.',
  reasoning_content: 'Look at add() first.',
  tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'Read', arguments: '{"path":"add.py"}' } }],
};
const readResult = { role: 'tool', tool_call_id: 'toolu_1', content: 'def add(a, b):\n    return a - b' };
const edit = {
  role: 'assistant',
  content: 'The function subtracts. Fixing it.',
  tool_calls: [{ id: 'toolu_2', type: 'function', function: { name: 'Edit', arguments: '{"path":"add.py","old":"a - b","new":"a + b"}' } }],
};
const editResult = { role: 'tool', tool_call_id: 'toolu_2', content: 'edited' };
const fixed = { role: 'assistant', content: 'Fixed: add() now returns a + b.' };

test('event log: chains joined by parentUuid, one record per leaf, split assistant events merged, tool calls and results structured', async () => {
  const r = await inspectFile(FIXTURE);
  assert.equal(r.format, 'event-log');
  assert.equal(r.rows_read, 19);
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.id, x.needs_generation, x.messages]),
    [
      // A reply retried at the root (e10 beside e2): its own branch.
      [11, 'e10', false, [user, { role: 'assistant', content: 'Which test?' }]],
      // e2-e4 (message msg_1, one block per line) are one turn; the system event e8 links the chain, no turn.
      [
        13,
        'e12',
        false,
        [user, read, readResult, edit, editResult, fixed, { role: 'user', content: 'Also add a test.' }, { role: 'assistant', content: 'Added test_add.' }],
      ],
      // The second branch after e9: the shared assistant turns are context here (trained once, in the first branch).
      [
        15,
        'e14',
        false,
        [
          user,
          { ...read, trainable: false },
          readResult,
          { ...edit, trainable: false },
          editResult,
          { ...fixed, trainable: false },
          { role: 'user', content: 'Run the tests too.' },
          { role: 'assistant', content: 'All tests pass.' },
        ],
      ],
    ],
  );
  assert.deepEqual(r.records[0].notes, ['event_log_rebuilt']);
  assert.deepEqual(r.records[2].notes, ['event_log_rebuilt', 'event_log_shared_turns_trained_once']);
  assert.deepEqual(r.part_of, [
    { line: 2, in_records_of: [11, 13, 15] },
    ...[3, 4, 5, 6, 7, 8, 9, 10].map((line) => ({ line, in_records_of: [13, 15] })),
    { line: 12, in_records_of: [13] },
    { line: 14, in_records_of: [15] },
  ]);
  assert.deepEqual(r.skipped, [
    { line: 1, reason: 'summary_event', message: 'a session summary line (of the conversation ending at event e12): a title the CLI wrote, not a turn' },
    { line: 16, reason: 'orphan_event', message: 'event e20: its parent e19-not-in-file is not in the file, so its conversation cannot be rebuilt' },
    {
      line: 17,
      reason: 'orphan_event',
      message: 'event e21: its ancestor e20 (line 16) has a parent (e19-not-in-file) that is not in the file, so its conversation cannot be rebuilt',
    },
    { line: 18, reason: 'duplicate_event', message: 'event e9 appears again (first on line 10): this copy is not used' },
    { line: 19, reason: 'non_conversation_event', message: 'a "file-history-snapshot" line without uuid or message: the CLI\'s own bookkeeping, not a turn' },
  ]);
  assert.equal(r.records.length + r.skipped.length + r.part_of!.length, r.rows_read);
  assert.deepEqual(r.unread_fields, {});
  assert.ok(r.evidence.some((e) => e.startsWith("11/19 lines are events inside other lines' conversations (agent CLI event log")));
  for (const c of ['summary_event', 'orphan_event', 'duplicate_event', 'non_conversation_event', 'event_chain_not_written', 'event_log_rebuilt'] as const)
    assert.ok(CODES[c].meaning.includes('agent CLI event log'), c);
});

test('event log: prepare writes the three chains; written + set aside + dropped + errored = lines read', async () => {
  const out = tempDir();
  const res = await prepare({ inputs: [FIXTURE], outDir: out });
  const f = res.files[0];
  assert.equal(f.format, 'event-log');
  // 3 leaf lines + 11 lines inside their chains written; summary, 2 orphans, the duplicate, the snapshot dropped.
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [19, 14, 0, 5, 0]);
  assert.deepEqual(Object.keys(f.dropped).sort(), ['duplicate_event', 'non_conversation_event', 'orphan_event', 'summary_event']);
  assert.deepEqual(f.dropped.orphan_event.lines, [16, 17]);
  // The default (Qwen3) template drops earlier turns' reasoning, so chain e12 is written as one record per segment
  // (docs/loss-mask-rules.md); e14's shared turns are context, so it is one record.
  const records = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; source: { line: number } });
  assert.deepEqual(
    records.map((x) => [x.id, x.source.line]),
    [
      ['e10', 11],
      ['e12#0', 13],
      ['e12#1', 13],
      ['e12#2', 13],
      ['e14', 15],
    ],
  );
  assert.equal(readFileSync(join(out, 'prompts_to_generate.jsonl'), 'utf8'), '');
});

test('event log: a block that cannot be read errors the chain with its line; the lines inside it are dropped event_chain_not_written', async () => {
  const ev = (uuid: string, parentUuid: string | null, type: string, content: unknown) => ({
    type,
    uuid,
    parentUuid,
    sessionId: 's',
    message: { role: type, content },
  });
  const file = writeJsonl([
    ev('u1', null, 'user', 'Describe the picture.'),
    ev('a1', 'u1', 'assistant', [{ type: 'text', text: 'Send it.' }]),
    ev('u2', 'a1', 'user', [{ type: 'image', source: { type: 'base64', data: 'AAAA' } }]),
    ev('a2', 'u2', 'assistant', [{ type: 'text', text: 'A cat.' }]),
  ]);
  const r = await inspectFile(file);
  assert.equal(r.format, 'event-log');
  // The chain's only leaf is errored as it is read: prepare drops the events inside it, and inspect and Problems say so
  // (issue 23: inspect listed them as part of line 4's records, which has none, and Problems did not list them).
  const chain = codeMeaning('event_chain_not_written');
  assert.deepEqual(r.skipped, [
    ...[1, 2, 3].map((line) => ({ line, reason: 'event_chain_not_written', message: chain })),
    { line: 4, reason: 'errored', code: 'bad_turn', message: 'line 3: user event u2 holds a "image" block that is not read' },
  ]);
  assert.equal(r.part_of, undefined);
  const scan = await scanRowProblems(file);
  assert.deepEqual(
    scan.problems.map((p) => [p.line, p.code, p.severity]),
    [
      [1, 'event_chain_not_written', 'warning'],
      [2, 'event_chain_not_written', 'warning'],
      [3, 'event_chain_not_written', 'warning'],
      [4, 'bad_turn', 'error'],
    ],
  );
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [4, 0, 0, 3, 1]);
  assert.deepEqual(f.dropped.event_chain_not_written.lines, [1, 2, 3]);
  assert.deepEqual(f.errors, [{ line: 4, message: scan.problems[3].message }]);
});

test('event log: a chain ending with a tool result is set aside to answer, and written up to its last answer', async () => {
  const file = writeJsonl([
    { type: 'user', uuid: 'u1', parentUuid: null, sessionId: 's', message: { role: 'user', content: 'List files.' } },
    {
      type: 'assistant',
      uuid: 'a1',
      parentUuid: 'u1',
      sessionId: 's',
      message: { id: 'm1', role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] },
    },
    {
      type: 'user',
      uuid: 'u2',
      parentUuid: 'a1',
      sessionId: 's',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'a.txt' }] },
    },
  ]);
  const r = await inspectFile(file);
  const call = { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } }] };
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.id, x.needs_generation, x.messages]),
    [
      [3, 'u2/1', false, [{ role: 'user', content: 'List files.' }, call]],
      [3, 'u2/2', true, [{ role: 'user', content: 'List files.' }, call, { role: 'tool', tool_call_id: 't1', content: 'a.txt' }]],
    ],
  );
  assert.equal(r.records.length + r.skipped.length + r.part_of!.length - 1, r.rows_read); // the leaf line carries two records
  const f = (await prepare({ inputs: [file], outDir: tempDir() })).files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [3, 3, 0, 0, 0]);
});

test('event log: one line read on its own (hover, mask view) says it is an event of a file-level log; the file scan reports no fragments', async () => {
  const line = { type: 'assistant', uuid: 'e3', parentUuid: 'e2', sessionId: 's', message: { role: 'assistant', content: [{ type: 'text', text: 'Hi.' }] } };
  const message =
    'the line is one assistant event (uuid e3, parent e2) of an agent CLI event log; its conversation is rebuilt from the parent chain when the file is read as a whole and its lines are events (format "event-log"); this line was read on its own';
  const o = normalizeRow(line, { file: 'x.jsonl', line: 3 }, 'x');
  assert.deepEqual(o.kind === 'dropped' && [o.reason, o.message], ['message_fragment', message]);
  const view = new RecordViewer(loadTokenizer(lenmlModelDir('qwen3'))).view({ text: JSON.stringify(line), file: 'x.jsonl', line: 3 });
  assert.deepEqual([view.status, view.reason, view.message, view.shape?.format], ['dropped', 'message_fragment', message, 'event-log']);
  const summary = normalizeRow({ type: 'summary', summary: 'A title', leafUuid: 'e9' }, { file: 'x.jsonl', line: 1 }, 'x');
  assert.equal(summary.kind === 'dropped' && summary.reason, 'message_fragment');
  assert.equal(detectFormat([line]).format, 'event-log');
  // Not an event: no uuid / parentUuid envelope.
  assert.notEqual(detectFormat([{ type: 'user', message: { role: 'user', content: 'x' } }]).format, 'event-log');
  // The Problems scan of the file reads it as prepare does (run/editor/fileRows.ts): no message_fragment problems, and the
  // drops of the file pass with prepare's codes (its 5 dropped rows, below).
  const scan = await scanRowProblems(FIXTURE);
  assert.deepEqual(
    scan.problems.map((p) => [p.line, p.code]),
    [
      [1, 'summary_event'],
      [16, 'orphan_event'],
      [17, 'orphan_event'],
      [18, 'duplicate_event'],
      [19, 'non_conversation_event'],
    ],
  );
  // The hover of a line of the file itself: the line as the file pass reads it (a message inside a later line's chain).
  const inFile = await viewRow(new RecordViewer(loadTokenizer(lenmlModelDir('qwen3'))), {
    text: readFileSync(FIXTURE, 'utf8').split('\n')[1],
    file: FIXTURE,
    line: 2,
  });
  assert.equal(inFile.verdict.fate, 'written');
  assert.match(inFile.message ?? '', /^line 2 is a message inside the conversations? of lines? [\d, ]+.*event-log: the file is read whole/);
});

test('CLI: prepare --json and inspect --json on an event log; accounting adds up', async () => {
  const out = tempDir();
  const r = await runCli(['prepare', FIXTURE, '--out', out, '--json'], { cwd: ROOT });
  assert.equal(r.status, 0, r.stderr);
  const f = JSON.parse(r.stdout).files[0];
  assert.deepEqual([f.rows_read, f.rows_written, f.rows_set_aside, f.rows_dropped, f.rows_errored], [19, 14, 0, 5, 0]);
  assert.equal(
    readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
      .trim()
      .split('\n').length,
    5,
  );
  const ins = await runCli(['inspect', FIXTURE], { cwd: ROOT });
  assert.equal(ins.status, 0, ins.stderr);
  assert.match(ins.stdout, /: event-log\n/);
  assert.match(ins.stdout, /18\/19 rows: agent CLI event lines: the file is read whole and its events joined by parentUuid/);
  assert.match(ins.stdout, /3 records \(0 need generation\), 5 skipped/);
});
