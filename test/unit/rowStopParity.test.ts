// Issue 23, "one row path": `inspect` and the Problems scan stop early on prepare's own row trace
// (records/rowTrace.ts `traceRow` with `until: 'conversations'`), so what they report of a row is what prepare's trace
// of that row has through that stage: the notes and unread fields of each conversation, and for a row reading drops or
// errors, its code, message and (an unknown role) role. Checked on files of different shapes with an eagle3prep.jsonc
// (role aliases, field roles, several answers each a record) and non-default prepare settings (last-assistant,
// reasoning dropped, a short --max-length split), against the full trace prepare's row processor writes
// (`RowProcessor.processRow`, the same function) and against prepare's row results. The comparison itself is checked
// to fail when one side changes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { codeMeaning } from '../../src/core/codes';
import { configuredRows, rowConfigFor } from '../../src/core/formats/rowSource';
import { RecordBuilder } from '../../src/core/records/recordBuilder';
import { RowProcessor } from '../../src/core/records/rowProcessor';
import { cachedTokenizer } from '../../src/core/tokenizers/loadedTokenizers';
import type { RowSettings } from '../../src/core/records/rowResult';
import { traceRow } from '../../src/core/records/rowTrace';
import type { RowTrace } from '../../src/core/records/rowTraceTypes';
import { filePlanOf } from '../../src/core/run/editor/fileRows';
import { scanRowProblems, type RowProblem } from '../../src/core/run/editor/rowProblems';
import { inspectFile, type InspectResult } from '../../src/core/run/inputs/inspect';
import { partRowFate } from '../../src/core/run/inputs/oasstRun';
import { rowKey } from '../../src/core/run/prepare/batches';
import { tempDir, writeJsonl } from '../helpers';

/** prepare's settings for the run compared: none of them the default. */
const SETTINGS: RowSettings = { mask: 'last-assistant', reasoning: 'drop', maxLength: 48, long: 'split', grouping: 'merged' };

const tok = cachedTokenizer(undefined).tok; // the embedded Qwen3, prepare's default
const builder = new RecordBuilder(tok);

/** A project folder with an eagle3prep.jsonc that aliases roles, assigns field roles and reads every answer. */
function project(): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'eagle3prep.jsonc'),
    '{ "roleAliases": { "bot": "assistant" }, "fieldRoles": { "question": "prompt", "reply": "answer", "ticket": "metadata" }, "reading": { "answers": "all" } }\n',
  );
  return dir;
}

const ev = (uuid: string, parentUuid: string | null, type: string, content: unknown) => ({
  type,
  uuid,
  parentUuid,
  sessionId: 's',
  message: { role: type, content },
});

/** Files of different shapes, each with rows that reading notes, drops or errors. */
function files(): string[] {
  const dir = project();
  const chat = writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'bot', content: '<think>greet back</think>hello there' },
        ],
        extra: 1,
      },
      {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'narrator', content: 'meanwhile' },
          { role: 'assistant', content: 'a' },
        ],
      },
      { messages: [] },
      '{"messages": [',
      JSON.stringify(
        JSON.stringify({
          messages: [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'a' },
          ],
        }),
      ),
      {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: '' },
        ],
      },
      {
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get', arguments: '{not json' } }] },
          { role: 'tool', content: 'sunny' },
          { role: 'assistant', content: 'It is sunny.' },
        ],
      },
      { messages: [{ role: 'user', content: 'q' }, { content: 'no role' }] },
      { foo: [{ a: 1 }] },
      // Only reasoning in the last turn: a target kept, a generation placeholder once `--reasoning drop` empties it.
      {
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: '', reasoning_content: 'thinking it over' },
        ],
      },
      // An untrainable last answer, then a placeholder: a prompt under last-assistant, a target left under assistant.
      {
        messages: [
          { role: 'user', content: 'q1' },
          { role: 'assistant', content: 'a1' },
          { role: 'user', content: 'q2' },
          { role: 'assistant', content: 'a2', weight: 0 },
          { role: 'user', content: 'q3' },
          { role: 'assistant', content: '' },
        ],
      },
    ],
    'chat.jsonl',
    dir,
  );
  const sharegpt = writeJsonl(
    [
      {
        conversations: [
          { from: 'human', value: 'q' },
          { from: 'gpt', value: 'a' },
        ],
        source: 'x',
        score: 3,
      },
      { conversations: [{ from: 'system', value: 's' }] },
      {
        conversations: [
          { from: 'human', value: 'q1' },
          { from: 'gpt', value: 'a1' },
          { from: 'human', value: 'q2' },
          { from: 'gpt', value: 'a2' },
        ],
      },
    ],
    'sharegpt.jsonl',
    dir,
  );
  const qa = writeJsonl(
    [
      { question: '2+2?', reply: '4', ticket: 'T-1' },
      { question: '3+3?', reply: '6', notes: 'unread' },
      { prompt: 'p', output_1: 'a', output_2: 'b' },
      {
        instruction: 'Add.',
        instances: [
          { input: '1 1', output: '2' },
          { input: '2 2', output: '4' },
        ],
      },
      { question: 'only a question' },
    ],
    'qa.jsonl',
    dir,
  );
  const events = writeJsonl(
    [
      ev('u1', null, 'user', 'Describe the picture.'),
      ev('a1', 'u1', 'assistant', [{ type: 'text', text: 'Send it.' }]),
      ev('u2', 'a1', 'user', [{ type: 'image', source: { type: 'base64', data: 'AAAA' } }]),
      ev('a2', 'u2', 'assistant', [{ type: 'text', text: 'A cat.' }]),
      ev('v1', null, 'user', 'Say hi.'),
      ev('b1', 'v1', 'assistant', [{ type: 'text', text: 'Hi.' }]),
    ],
    'events.jsonl',
    dir,
  );
  return [chat, sharegpt, qa, events];
}

/** What a row is, through reading, as a plain value to compare: its drop or error, or each conversation's notes and unread fields. */
type Reading =
  | { fate: 'dropped' | 'errored'; code: string; message: string; role?: string }
  | { fate: 'read'; conversations: { notes: string[]; unread: string[]; generate: boolean }[] }
  /** A row inside others' conversations (a file read whole): the code it is dropped with as it is read, else false. */
  | { fate: 'part'; dropped: string | false };

/** Prepare's side: every row of `file` traced whole (prepare's row path and settings), and prepare's row results. */
async function prepareSide(
  file: string,
  settings: RowSettings = SETTINGS,
): Promise<{ readings: Map<string, Reading>; results: Map<string, string>; traces: Map<string, RowTrace> }> {
  const config = rowConfigFor(file);
  const plan = await filePlanOf(file);
  const processor = new RowProcessor(settings);
  const traces = new Map<string, RowTrace>();
  const readings = new Map<string, Reading>();
  const results = new Map<string, string>();
  const parts: [string, string[], string][] = [];
  for await (const row of configuredRows(file, config)) {
    const k = rowKey(row);
    const planned = plan?.get(k);
    if (planned?.kind === 'part') {
      parts.push([k, planned.leaves.map(rowKey), planned.partReason]);
      continue;
    }
    const input = planned ? { ...row, value: planned.value } : row;
    const t = traceRow(input, file, basename(file), config.reading, settings, { tok, builder });
    traces.set(k, t);
    const f = t.fate;
    if (!t.parts.length && (f.fate === 'dropped' || f.fate === 'errored')) {
      const code = f.fate === 'dropped' ? f.reason : (f.code ?? 'errored');
      readings.set(k, { fate: f.fate, code, message: f.message!, ...(f.fate === 'errored' && f.role !== undefined ? { role: f.role } : {}) });
    } else
      readings.set(k, {
        fate: 'read',
        conversations: t.parts.map((p) => ({
          notes: [...(p.conversation.notes ?? [])],
          unread: [...(p.conversation.unreadFields ?? [])],
          // prepare's decision: a prompt as read, or set aside by its build (records/mask.ts `buildRecords`).
          generate: p.kind === 'prompt' || p.prompt !== undefined,
        })),
      });
    const res = processor.processRow(input, file, basename(file), config.reading);
    results.set(k, `${res.fate} ${res.reason ?? res.code ?? 'errored'}`);
  }
  // A row inside others' conversations: dropped by prepare's rule when every row carrying it was dropped or errored as it was read.
  for (const [k, leaves, reason] of parts) {
    const read = leaves.map((l) => traces.get(l)!);
    const decided = read.every((t) => !t.parts.length);
    readings.set(k, { fate: 'part', dropped: decided && partRowFate(read.map((t) => t.fate.fate as 'dropped' | 'errored')) === 'dropped' && reason });
  }
  return { readings, results, traces };
}

/** inspect's side: each row's skipped entry, or its records' notes and unread fields, or its place inside others. */
function inspectSide(r: InspectResult, traces: Map<string, RowTrace>): Map<string, Reading> {
  const out = new Map<string, Reading>();
  for (const s of r.skipped) {
    const planned = s.reason.endsWith('_not_written');
    out.set(
      `${s.line}`,
      planned
        ? { fate: 'part', dropped: s.reason }
        : { fate: s.reason === 'errored' || s.reason === 'invalid_json' ? 'errored' : 'dropped', code: s.code ?? s.reason, message: s.message },
    );
  }
  for (const p of r.part_of ?? []) out.set(`${p.line}`, { fate: 'part', dropped: false });
  for (const rec of r.records) {
    const k = rowKey(rec.source);
    const prev = out.get(k);
    const conversations = prev?.fate === 'read' ? prev.conversations : [];
    // inspect notes the turns a prompt to generate lost (prepare's build notes them so: checked against the trace).
    const notes = (rec.notes ?? []).filter((n) => !PROMPT_NOTES.includes(n) || !isPromptNoted(traces.get(k)!, conversations.length, n));
    conversations.push({ notes, unread: rec.unread_fields ?? [], generate: rec.needs_generation });
    out.set(k, { fate: 'read', conversations });
  }
  return out;
}

/** The notes of the turns a prompt to generate loses before the template (records/turns.ts `prepareTurns`). */
const PROMPT_NOTES = ['generation_placeholder_removed', 'reasoning_dropped'];

/** Whether prepare's trace of the row sets the conversation aside as a prompt and notes `note` in its records stage. */
function isPromptNoted(t: RowTrace, part: number, note: string): boolean {
  return t.parts[part].notes.includes(note as never) && t.parts[part].prompt !== undefined;
}

/** The Problems scan's side, for the rows prepare decided as it read them: the scan's code, message and role. */
function scanSide(problems: RowProblem[]): Map<string, { code: string; message: string; severity: string; role?: string }> {
  return new Map(
    problems.map((p) => [`${p.line}`, { code: p.code, message: p.message, severity: p.severity, ...(p.role === undefined ? {} : { role: p.role }) }]),
  );
}

/** The scan's expectation from prepare's side: a problem exactly for each row dropped or errored as it was read. */
function expectedScan(readings: Map<string, Reading>): Map<string, { code: string; message: string; severity: string; role?: string }> {
  const out = new Map<string, { code: string; message: string; severity: string; role?: string }>();
  for (const [k, r] of readings) {
    if (r.fate === 'dropped' || r.fate === 'errored')
      out.set(k, { code: r.code, message: r.message, severity: r.fate === 'errored' ? 'error' : 'warning', ...(r.role === undefined ? {} : { role: r.role }) });
    // prepare writes a dropped part's code with its meaning (run/reports/accounting.ts problemLine).
    else if (r.fate === 'part' && r.dropped) out.set(k, { code: r.dropped, message: codeMeaning(r.dropped), severity: 'warning' });
  }
  return out;
}

const sorted = <V>(m: Map<string, V>) => [...m].sort(([a], [b]) => parseFloat(a) - parseFloat(b));

test('inspect and the Problems scan report, for every row, what prepare’s trace of it has through reading', async () => {
  let notesSeen = 0;
  for (const file of files()) {
    const { readings, results, traces } = await prepareSide(file);
    const inspected = inspectSide(await inspectFile(file, { settings: SETTINGS }), traces);
    // inspect: a part row's message is the code's meaning; compare parts by their fate only.
    const comparable = (m: Map<string, Reading>) =>
      sorted(new Map([...m].map(([k, r]) => [k, r.fate === 'errored' || r.fate === 'dropped' ? { ...r, role: undefined } : r])));
    assert.deepEqual(comparable(inspected), comparable(readings), basename(file));
    const scan = await scanRowProblems(file, { yieldEveryMs: 0 });
    const expected = expectedScan(readings);
    assert.deepEqual(sorted(scanSide(scan.problems)), sorted(expected), basename(file));
    // prepare's row processor (the outputs) agrees with its trace on every row reading decided.
    for (const [k, r] of readings)
      if (r.fate === 'dropped' || r.fate === 'errored') assert.equal(results.get(k), `${r.fate} ${r.code}`, `${basename(file)}:${k}`);
    for (const r of readings.values()) if (r.fate === 'read') notesSeen += r.conversations.reduce((a, c) => a + c.notes.length + c.unread.length, 0);
  }
  // The files exercise notes and unread fields, drops and errors (else the comparison would be empty).
  assert.ok(notesSeen >= 6, `${notesSeen} notes and unread fields`);
});

test('inspect’s needs_generation is prepare’s decision, under the default settings and others; a prepare run with other settings may decide otherwise', async () => {
  const [chat] = files();
  const generating = (m: Map<string, Reading>) =>
    sorted(m).flatMap(([k, r]) => (r.fate === 'read' ? r.conversations.map((c, i) => `${k}.${i} ${c.generate}`) : []));
  const seen = new Map<string, string[]>();
  for (const settings of [{}, SETTINGS, { mask: 'last-assistant' }, { reasoning: 'drop' }, { mask: 'non-system' }] as RowSettings[]) {
    const { readings, traces } = await prepareSide(chat, settings);
    const inspected = inspectSide(await inspectFile(chat, { settings }), traces);
    assert.deepEqual(generating(inspected), generating(readings), JSON.stringify(settings));
    seen.set(JSON.stringify(settings), generating(readings));
  }
  // The rows above make the settings matter (else the comparison would not show that inspect follows them).
  const defaults = seen.get('{}')!;
  assert.ok(defaults.includes('6.0 true') && defaults.includes('10.0 false') && defaults.includes('11.0 false'), defaults.join(', '));
  assert.ok(seen.get(JSON.stringify({ reasoning: 'drop' }))!.includes('10.0 true'));
  assert.ok(seen.get(JSON.stringify({ mask: 'last-assistant' }))!.includes('11.0 true'));
  // Without settings, inspect decides for prepare's defaults: a `--reasoning drop` run sets row 10 aside, inspect does not.
  const { readings, traces } = await prepareSide(chat, { reasoning: 'drop' });
  assert.notDeepEqual(generating(inspectSide(await inspectFile(chat), traces)), generating(readings));
});

test('the parity comparison fails when one side changes: a note, an unread field, a code, a role, needs_generation', async () => {
  const [chat] = files();
  const { readings, traces } = await prepareSide(chat);
  const r = await inspectFile(chat, { settings: SETTINGS });
  const base = inspectSide(r, traces);
  assert.deepEqual(sorted(base).length, sorted(readings).length);
  const withNote = structuredClone(r);
  withNote.records[0].notes = [...(withNote.records[0].notes ?? []), 'reasoning_dropped'];
  assert.notDeepEqual(sorted(inspectSide(withNote, traces)), sorted(base));
  const withoutUnread = structuredClone(r);
  delete withoutUnread.records[0].unread_fields;
  assert.notDeepEqual(sorted(inspectSide(withoutUnread, traces)), sorted(base));
  const flipped = structuredClone(r);
  flipped.records[0].needs_generation = !flipped.records[0].needs_generation;
  assert.notDeepEqual(sorted(inspectSide(flipped, traces)), sorted(base));
  const otherCode = structuredClone(r);
  otherCode.skipped[0] = { ...otherCode.skipped[0], code: 'bad_turn' };
  assert.notDeepEqual(sorted(inspectSide(otherCode, traces)), sorted(base));
  const scan = await scanRowProblems(chat, { yieldEveryMs: 0 });
  const noRole = scan.problems.map((p) => ({ ...p, role: undefined }));
  assert.notDeepEqual(sorted(scanSide(noRole)), sorted(expectedScan(readings)));
  const warned = scan.problems.map((p) => ({ ...p, severity: 'warning' as const }));
  assert.notDeepEqual(sorted(scanSide(warned)), sorted(expectedScan(readings)));
});

test('traceRow stopped after reading: no tokenizer; the fate reading decides, else pending; the same conversations as the whole trace', () => {
  const read = (value: unknown, error?: string) =>
    traceRow(error === undefined ? { line: 7, value } : { line: 7, error }, 'f.jsonl', 'f.jsonl', {}, SETTINGS, { until: 'conversations' });
  assert.deepEqual(read(undefined, 'invalid JSON: x'), {
    stoppedAt: 'conversations',
    source: { file: 'f.jsonl', line: 7 },
    parts: [],
    fate: { fate: 'errored', code: 'invalid_json', message: 'invalid JSON: x' },
  });
  const unknown = read({
    messages: [
      { role: 'user', content: 'q' },
      { role: 'narrator', content: 'n' },
      { role: 'assistant', content: 'a' },
    ],
  });
  assert.deepEqual({ ...unknown.fate, message: undefined }, { fate: 'errored', code: 'unknown_role', message: undefined, role: 'narrator', turn: 1 });
  assert.deepEqual(read({ prompt: 'only a question' }).fate, { fate: 'setAside' });
  assert.deepEqual(read({ messages: [] }).fate, { fate: 'dropped', reason: 'empty_conversation', message: '"messages" is an empty list' });
  const row = {
    messages: [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
    ],
    extra: 1,
  };
  const stopped = read(row);
  assert.equal(stopped.fate.fate, 'pending');
  const whole = traceRow({ line: 7, value: row }, 'f.jsonl', 'f.jsonl', {}, SETTINGS, { tok, builder });
  assert.equal(whole.fate.fate, 'written');
  assert.deepEqual(
    stopped.parts.map((p) => [p.kind, p.conversation]),
    whole.parts.map((p) => [p.kind, p.conversation]),
  );
  assert.deepEqual(stopped.parts[0].conversation.unreadFields, ['extra']);
});
