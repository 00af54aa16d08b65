/**
 * Issue 20 ("Real datasets, round three"): several conversations in one row, field roles with evidence, and
 * roles assigned to fields in eagle3prep.jsonc. Synthetic rows written from the layouts' public documentation:
 * - OpenAI chat `messages` (`{role, content}`, platform.openai.com/docs/api-reference/chat) and ShareGPT
 *   `conversations` (`{from: human|gpt, value}`, FastChat / LLaMA-Factory sharegpt format) side by side in one
 *   row, as merged collections keep them; an LMSYS-Chat-style `conversation` list; a `{speaker, text}` list
 *   nested in an object; a list of conversation lists;
 * - MATH-style rows (`problem`, `solution` = the worked solution, `answer` = the short ground truth) and
 *   reasoning sets with the trace under the dataset's own name.
 * Exact records, notes, evidence and the row accounting (written + set aside + dropped + errored = rows read),
 * in the core and through the CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectDatasetFormat } from '../../src/core/run/editor/datasetScan';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { recordViewerFor } from '../../src/core/records/recordViewer';
import { runCli, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const turns = (r: Awaited<ReturnType<typeof inspectFile>>) =>
  r.records.map((x) => [
    x.id,
    x.needs_generation === true,
    x.messages.map((m) => `${m.role}:${m.content}${m.reasoning_content ? ` [${m.reasoning_content}]` : ''}`),
  ]);

const u = (content: string) => ({ role: 'user', content });
const a = (content: string) => ({ role: 'assistant', content });

/** Rows holding several conversations, and rows that only look like it. */
const SEVERAL = [
  // Two different conversations, in two spellings.
  {
    id: 'a',
    messages: [u('Hi, who are you?'), a('I am a helpful assistant.')],
    conversations: [
      { from: 'human', value: 'What is 2 + 2?' },
      { from: 'gpt', value: '2 + 2 = 4.' },
    ],
  },
  // The same conversation in two spellings: a copy, read once.
  {
    id: 'b',
    messages: [u('Name a color.'), a('Blue.')],
    conversations: [
      { from: 'human', value: 'Name a color.' },
      { from: 'gpt', value: 'Blue.' },
    ],
  },
  // The losing side of a comparison is never trained: reported as unread.
  { id: 'c', messages: [u('Is the sky green?'), a('No, it is blue.')], negative_messages: [u('Is the sky green?'), a('Yes, always.')] },
  // A prompt/response row beside a conversation list; a nested list with another spelling of the speaker; a user-only list (a prompt).
  { id: 'd', instruction: 'Translate "chat" from French.', output: 'Cat.', sample_dialog: [u('Spell "dog" backwards.'), a('god')] },
  { id: 'e', messages: [u('Say hi.'), a('Hi!')], extra: { dialog: [{ speaker: 'user', text: 'Say bye.' }] } },
  // A list of conversation lists beside the messages: one record each.
  {
    id: 'f',
    messages: [u('One?'), a('1.')],
    episodes: [
      [u('Two?'), a('2.')],
      [u('Three?'), a('3.')],
    ],
  },
];

test('several conversations in one row: one record each (ids <id>/<k> in the row order), copies read once, the losing side never read', async () => {
  const file = writeJsonl(SEVERAL, 'several.jsonl');
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), [
    ['a/1', false, ['user:Hi, who are you?', 'assistant:I am a helpful assistant.']],
    ['a/2', false, ['user:What is 2 + 2?', 'assistant:2 + 2 = 4.']],
    ['b', false, ['user:Name a color.', 'assistant:Blue.']],
    ['c', false, ['user:Is the sky green?', 'assistant:No, it is blue.']],
    ['d/1', false, ['user:Translate "chat" from French.', 'assistant:Cat.']],
    ['d/2', false, ['user:Spell "dog" backwards.', 'assistant:god']],
    ['e/1', false, ['user:Say hi.', 'assistant:Hi!']],
    ['e/2', true, ['user:Say bye.']],
    ['f/1', false, ['user:One?', 'assistant:1.']],
    ['f/2', false, ['user:Two?', 'assistant:2.']],
    ['f/3', false, ['user:Three?', 'assistant:3.']],
  ]);
  // Every record carries the row's source (its line); the conversation's index is the id's /<k>.
  assert.deepEqual(
    r.records.map((x) => x.source.line),
    [1, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6],
  );
  assert.deepEqual(
    r.records.map((x) => x.notes ?? []),
    [
      ['several_conversations_found'],
      ['several_conversations_found'],
      [],
      ['fields_not_read'],
      ['several_conversations_found'],
      ['several_conversations_found'],
      ['several_conversations_found'],
      ['several_conversations_found'],
      ['several_conversations_found'],
      ['several_conversations_found'],
      ['several_conversations_found'],
    ],
  );
  assert.deepEqual(r.unread_fields, { negative_messages: { count: 1, lines: [3] } });
  for (const e of [
    '1/6 rows: the row holds several conversations ("conversations" besides the one read first): one record each',
    '1/6 rows: "conversations" repeats turns already read: a copy, not another conversation',
    '1/6 rows: the row holds several conversations ("sample_dialog" besides the one read first): one record each',
    '1/6 rows: the row holds several conversations ("extra.dialog" besides the one read first): one record each',
    '1/6 rows: the row holds several conversations ("episodes[]" besides the one read first): one record each',
    'fields not read (neither read by the shape nor known metadata): negative_messages (1/6 rows)',
  ])
    assert.ok(r.evidence.includes(e), `${e}\n--\n${r.evidence.join('\n')}`);

  // prepare: a row is written when any of its conversations is; a prompt among them goes to prompts_to_generate.
  const out = tempDir();
  const res = await prepare({ inputs: [file], outDir: out });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored, f.recordsWritten], [6, 6, 0, 0, 0, 10]);
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
  assert.equal(f.notes.several_conversations_found, 4); // rows a, d, e, f
  assert.equal(f.notes.split_part_set_aside, 1);
  const recs = readFileSync(res.outputs.tokenizedData, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    recs.map((x) => [x.id, x.source.line, x.source.element]),
    [
      ['a/1', 1, undefined],
      ['a/2', 1, undefined],
      ['b', 2, undefined],
      ['c', 3, undefined],
      ['d/1', 4, undefined],
      ['d/2', 4, undefined],
      ['e/1', 5, undefined],
      ['f/1', 6, undefined],
      ['f/2', 6, undefined],
      ['f/3', 6, undefined],
    ],
  );
  const prompts = readFileSync(join(out, 'prompts_to_generate.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    prompts.map((p) => [p.id, p.messages]),
    [['e/2', [{ role: 'user', content: 'Say bye.' }]]],
  );
});

test('several conversations: a row whose conversations are all prompts is set aside once; one whose extra conversation errors is errored', async () => {
  const file = writeJsonl(
    [
      { id: 'p', messages: [u('First question?')], conversations: [{ from: 'human', value: 'Second question?' }] },
      { id: 'q', messages: [u('Hi'), a('Hello.')], conversation: [u('Call it.'), { role: 'assistant', content: null, tool_calls: 'not a list' }] },
    ],
    'prompts.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), [
    ['p/1', true, ['user:First question?']],
    ['p/2', true, ['user:Second question?']],
  ]);
  assert.equal(r.skipped.length, 1);
  assert.equal(r.skipped[0].line, 2);
  assert.equal(r.skipped[0].code, 'bad_tool_calls');
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [2, 0, 1, 0, 1]);
  assert.equal(f.notes.split_part_set_aside, 1);
});

test('several conversations: a mappings entry in eagle3prep.jsonc reads the one it names only', async () => {
  const dir = tempDir();
  const file = writeJsonl(SEVERAL.slice(0, 1), 'mapped.jsonl', dir);
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "mappings": [{ "files": "mapped.jsonl", "turns": "conversations", "role": "from", "content": "value" }] }\n');
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), [['a', false, ['user:What is 2 + 2?', 'assistant:2 + 2 = 4.']]]);
  assert.deepEqual(Object.keys(r.unread_fields), ['messages']);
});

test('CLI: prepare --json and inspect --json on rows holding several conversations; accounting adds up', async () => {
  const file = writeJsonl(SEVERAL, 'several.jsonl');
  const out = tempDir();
  const p = await runCli(['prepare', file, '--out', out, '--json'], { cwd: ROOT });
  assert.equal(p.status, 0, p.stderr);
  const f = JSON.parse(p.stdout).files[0];
  assert.deepEqual([f.rows_read, f.rows_written, f.rows_set_aside, f.rows_dropped, f.rows_errored, f.records_written], [6, 6, 0, 0, 0, 10]);
  assert.equal(f.rows_written + f.rows_set_aside + f.rows_dropped + f.rows_errored, f.rows_read);
  const i = await runCli(['inspect', file, '--json'], { cwd: ROOT });
  assert.equal(i.status, 0, i.stderr);
  const o = JSON.parse(i.stdout);
  assert.deepEqual(
    o.records.map((x: { id: string }) => x.id),
    ['a/1', 'a/2', 'b', 'c', 'd/1', 'd/2', 'e/1', 'e/2', 'f/1', 'f/2', 'f/3'],
  );
});

/** MATH-style rows (github.com/hendrycks/math: `problem`, `solution`) with the short ground truth beside them, and reasoning rows. */
const MATH = [
  {
    problem: 'What is 3 times 9?',
    solution: 'We multiply: 3 times 9 is 27, since 9 + 9 + 9 = 27. So the product is 27.',
    answer: '27',
  },
  {
    problem: 'What is 2 + 5?',
    solution: 'Adding 2 and 5 gives 7: count five steps up from two, 3, 4, 5, 6, 7.',
    answer: '7',
  },
];
const ROLE_LINES = [
  '"solution" (avg 71 chars) is the answer (the assistant turn trained)',
  '"problem" (avg 16 chars) is the prompt (the user turn)',
  '"answer" (avg 2 chars) is a label (a short value beside the answer: never trained)',
];

test('field roles in the evidence: which field is the answer, the prompt, a label, with mean lengths; inspect, report.json, report.md and the Datasets hover', async () => {
  const dir = tempDir();
  const file = writeJsonl(MATH, 'math.jsonl', dir);
  const r = await inspectFile(file);
  assert.deepEqual(r.evidence.slice(0, 4), ['2/2 rows have "problem" + "solution": strings', ...ROLE_LINES]);
  // The reasoning under its own field, beside the prompt and the answer.
  const reasoning = writeJsonl(
    [
      {
        question: 'Is 91 prime?',
        reasoning: 'Try small divisors: 91 / 7 = 13 exactly, so 91 has a divisor other than 1 and itself.',
        answer: 'No: 91 = 7 × 13.',
      },
    ],
    'reasoning.jsonl',
    dir,
  );
  const rr = await inspectFile(reasoning);
  assert.deepEqual(rr.records[0].messages[1], {
    role: 'assistant',
    content: 'No: 91 = 7 × 13.',
    reasoning_content: 'Try small divisors: 91 / 7 = 13 exactly, so 91 has a divisor other than 1 and itself.',
  });
  assert.deepEqual(rr.evidence.slice(1, 4), [
    '"answer" (avg 16 chars) is the answer (the assistant turn trained)',
    '"reasoning" (avg 85 chars) is the reasoning (reasoning_content before the answer)',
    '"question" (avg 12 chars) is the prompt (the user turn)',
  ]);
  // A file of turn lists has its roles in its turns: no field-role lines.
  const chat = await inspectFile(writeJsonl([{ messages: [u('Hi'), a('Hello!')] }], 'chat.jsonl', dir));
  assert.deepEqual(chat.evidence, ['1/1 rows have "messages": list of {role, content}', 'roles seen: user, assistant']);
  // report.json and report.md per file, and the Datasets view's hover (its evidence, first lines shown).
  const out = tempDir();
  const res = await prepare({ inputs: [file], outDir: out });
  assert.deepEqual(res.files[0].evidence.slice(1, 4), ROLE_LINES);
  const rep = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  assert.deepEqual(rep.files[0].evidence.slice(1, 4), ROLE_LINES);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  for (const l of ROLE_LINES) assert.ok(md.includes(`- ${l}\n`), l);
  const hover = await detectDatasetFormat(file);
  assert.deepEqual(hover.evidence.slice(1, 4), ROLE_LINES);
  // The CLI: inspect prints them under the format, and in --json.
  const text = await runCli(['inspect', file], { cwd: ROOT });
  assert.equal(text.status, 0, text.stderr);
  for (const l of ROLE_LINES) assert.ok(text.stdout.includes(`  - ${l}\n`), `${l}\n${text.stdout}`);
  const json = await runCli(['inspect', file, '--json'], { cwd: ROOT });
  assert.deepEqual(JSON.parse(json.stdout).evidence.slice(1, 4), ROLE_LINES);
});

test('eagle3prep.jsonc "fieldRoles": a field path is read in the role given (answer, reasoning, label, metadata); the field it displaces is reported; inspect, prepare and the CLI', async () => {
  const dir = tempDir();
  const file = writeJsonl(
    [
      {
        problem: 'What is 3 times 9?',
        answer: 'The product is 27.',
        worked_solution: '3 × 9 = 9 + 9 + 9 = 27, so the answer is 27.',
        gt: '27',
        cot: 'Three nines make twenty-seven.',
      },
      {
        messages: [
          { role: 'user', content: 'Hi', critique: 'A greeting.' },
          { role: 'assistant', content: 'Hello!', thought: 'Greet back.' },
        ],
      },
    ],
    'roles.jsonl',
    dir,
  );
  // Without a config: "answer" (a sentence, not a label) is trained; "worked_solution", "gt", "cot" and the turn fields are unread.
  const before = await inspectFile(file);
  assert.deepEqual(turns(before)[0][2], ['user:What is 3 times 9?', 'assistant:The product is 27.']);
  assert.deepEqual(Object.keys(before.unread_fields), ['worked_solution', 'gt', 'cot', 'messages[].critique', 'messages[].thought']);

  writeFileSync(
    join(dir, 'eagle3prep.jsonc'),
    '{ "fieldRoles": { "worked_solution": "answer", "gt": "label", "cot": "reasoning", "messages[].critique": "metadata", "messages[].thought": "reasoning" } }\n',
  );
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), [
    ['roles.jsonl:1', false, ['user:What is 3 times 9?', 'assistant:3 × 9 = 9 + 9 + 9 = 27, so the answer is 27. [Three nines make twenty-seven.]']],
    ['roles.jsonl:2', false, ['user:Hi', 'assistant:Hello! [Greet back.]']],
  ]);
  // "answer" held the answer's place: the config says it is not the answer, so it is reported, never trained.
  assert.deepEqual(r.unread_fields, { answer: { count: 1, lines: [1] } });
  assert.deepEqual(
    r.records.map((x) => x.notes),
    // Each row lacks the other row's paths: said per path (a misspelled path is seen the same way).
    [
      ['field_role_assigned', 'field_role_unmatched', 'fields_not_read'],
      ['field_role_assigned', 'field_role_unmatched'],
    ],
  );
  assert.deepEqual(r.evidence, [
    '1/2 rows have "problem" + "response": strings',
    '1/2 rows have "messages": list of {role, content}',
    '"worked_solution" (avg 44 chars in 1/2 rows; eagle3prep.jsonc) is the answer (the assistant turn trained)',
    '"cot" (avg 30 chars in 1/2 rows; eagle3prep.jsonc) is the reasoning (reasoning_content before the answer)',
    '"problem" (avg 18 chars in 1/2 rows) is the prompt (the user turn)',
    '"gt" (avg 2 chars in 1/2 rows; eagle3prep.jsonc) is a label (a short value beside the answer: never trained)',
    'roles seen: user, assistant',
    '1/2 rows: read as eagle3prep.jsonc "fieldRoles" says: "worked_solution" as the answer (read as "response"), "gt" as a label (never read as text), "cot" as the reasoning (read as "reasoning_content")',
    '1/2 rows: eagle3prep.jsonc "fieldRoles" paths "messages[].critique", "messages[].thought" matched no field',
    '1/2 rows: read as eagle3prep.jsonc "fieldRoles" says: "messages[].critique" as metadata (never read as text), "messages[].thought" as the reasoning',
    '1/2 rows: eagle3prep.jsonc "fieldRoles" paths "worked_solution", "gt", "cot" matched no field',
    'fields not read (neither read by the shape nor known metadata): answer (1/2 rows)',
  ]);
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored, f.recordsWritten], [2, 2, 0, 0, 0, 2]);
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
  assert.equal(f.notes.field_role_assigned, 2);
  assert.deepEqual(f.input?.projectConfig?.fieldRoles, {
    worked_solution: 'answer',
    gt: 'label',
    cot: 'reasoning',
    'messages[].critique': 'metadata',
    'messages[].thought': 'reasoning',
  });
  const out = tempDir();
  const p = await runCli(['prepare', file, '--out', out, '--json'], { cwd: ROOT });
  assert.equal(p.status, 0, p.stderr);
  const j = JSON.parse(p.stdout).files[0];
  assert.deepEqual([j.rows_read, j.rows_written, j.rows_set_aside, j.rows_dropped, j.rows_errored], [2, 2, 0, 0, 0]);
  assert.deepEqual(j.input.project_config.field_roles['messages[].critique'], 'metadata');
});

test('eagle3prep.jsonc "fieldRoles": a role that is not one, a path that is not a field path, a text role inside list elements are refused with the line to fix', async () => {
  const { parseProjectConfig } = await import('../../src/core/read/projectConfig');
  const bad = (v: object) =>
    assert.throws(
      () => parseProjectConfig(JSON.stringify({ fieldRoles: v }), 'p/eagle3prep.jsonc'),
      (e: Error) => (msgs.push(e.message), true),
    );
  const msgs: string[] = [];
  bad({ solution: 'answers' });
  bad({ 'messages[]': 'metadata' });
  bad({ 'messages[].content': 'answer' });
  bad(['solution']);
  assert.deepEqual(msgs, [
    'p/eagle3prep.jsonc: "fieldRoles": "solution" is given "answers"; use one of prompt, answer, reasoning, system, label, metadata',
    'p/eagle3prep.jsonc: "fieldRoles": "messages[]" is not a field path (keys joined by ".", "[]" after a key for each element of its list, a field last: "output.text", "messages[].cot")',
    'p/eagle3prep.jsonc: "fieldRoles": "messages[].content" is a field of list elements (turns): it can be reasoning, label, metadata (a turn\'s own role says whether its text is the prompt or the answer)',
    'p/eagle3prep.jsonc: "fieldRoles" must be an object of field path → role, like {"worked_solution": "answer"}',
  ]);
  assert.deepEqual(parseProjectConfig('{ "fieldRoles": { "output.text": "answer" } }').fieldRoles, { 'output.text': 'answer' });
});

test('the row hover (record view): several conversations are named; a row read through "fieldRoles" shows the assigned answer with its source position', () => {
  const viewer = recordViewerFor(undefined); // embedded Qwen3
  const dir = tempDir();
  const text = JSON.stringify(SEVERAL[0]);
  const v = viewer.view({ text, file: join(dir, 'several.jsonl'), line: 1 });
  assert.deepEqual(
    v.warnings.map((w) => [w.code, w.message]),
    [['several_conversations_found', 'the row holds 2 conversations (one record each); the first is shown; prepare writes 2 records from the row']],
  );
  assert.deepEqual(v.notes, ['several_conversations_found']);
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "fieldRoles": { "worked_solution": "answer", "gt": "label" } }\n');
  const row = { problem: 'What is 3 times 9?', response: '27', gt: '27', worked_solution: '3 × 9 = 27.' };
  const line = JSON.stringify(row);
  const r = viewer.view({ text: line, file: join(dir, 'roles.jsonl'), line: 1 });
  assert.deepEqual(
    r.turns.map((t) => [t.role, t.chars]),
    [
      ['user', 18],
      ['assistant', 11],
    ],
  );
  // The assistant turn's place in the line is the "worked_solution" property (the field it was read from), not "response".
  const prop = '"worked_solution":"3 × 9 = 27."';
  const at = line.indexOf(prop);
  assert.deepEqual(r.turns[1].range, [at, at + prop.length]);
  assert.deepEqual(r.notes, ['field_role_assigned', 'fields_not_read']);
  assert.deepEqual(
    r.warnings.map((w) => w.message),
    ['fields not read (neither a known field nor metadata): response'],
  );
});

test('eagle3prep.jsonc "fieldRoles": recorded per file (report.json input.project_config), and any change of it makes the output stale', async () => {
  const { appliedConfigOf, configChange } = await import('../../src/core/formats/appliedConfig');
  const dir = tempDir();
  const file = writeJsonl(MATH, 'math.jsonl', dir);
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "fieldRoles": { "answer": "label" } }\n');
  const run = appliedConfigOf(file);
  assert.ok(!('error' in run));
  assert.deepEqual(run.fieldRoles, { answer: 'label' });
  assert.deepEqual(configChange(run, run).always, []);
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "fieldRoles": { "answer": "metadata" } }\n');
  assert.deepEqual(configChange(run, appliedConfigOf(file)).always, ['"fieldRoles" (run: {"answer":"label"}, now: {"answer":"metadata"})']);
  // A report written before "fieldRoles" existed has none: a config without it is no change.
  const { fieldRoles: _f, ...old } = run;
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "roleAliases": { "bot": "assistant" } }\n');
  assert.deepEqual(configChange(old, appliedConfigOf(file)).always, []);
});

test('eagle3prep.jsonc "fieldRoles": an assigned answer or reasoning is read however short (never a label, never a switch); a path no row has is noted; no internal key in a message', async () => {
  const dir = tempDir();
  const file = writeJsonl(
    [
      { problem: 'What is 3*9?', worked_solution: '27', answer: 'The product is twenty seven.', cot: 'multiply' },
      { problem: 'What is 2*5?', worked_solution: '2 times 5 is 10.', cot: 'I need to multiply two by five.' },
    ],
    'short.jsonl',
    dir,
  );
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "fieldRoles": { "worked_solution": "answer", "cot": "reasoning", "worked_soluton": "label" } }\n');
  const r = await inspectFile(file);
  // Before: "answer" (a sentence) was trained and the assigned "27" called a label; "multiply" (one word) not read.
  assert.deepEqual(turns(r), [
    ['short.jsonl:1', false, ['user:What is 3*9?', 'assistant:27 [multiply]']],
    ['short.jsonl:2', false, ['user:What is 2*5?', 'assistant:2 times 5 is 10. [I need to multiply two by five.]']],
  ]);
  assert.deepEqual(r.unread_fields, { answer: { count: 1, lines: [1] } });
  assert.deepEqual(
    r.records.map((x) => x.notes),
    [
      ['field_role_assigned', 'field_role_unmatched', 'fields_not_read'],
      ['field_role_assigned', 'field_role_unmatched'],
    ],
  );
  assert.ok(r.evidence.includes('2/2 rows: eagle3prep.jsonc "fieldRoles" path "worked_soluton" matched no field'), r.evidence.join('\n'));
  assert.ok(!r.evidence.some((e) => /short label/.test(e)), r.evidence.join('\n'));
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored, f.recordsWritten], [2, 2, 0, 0, 0, 2]);
  assert.equal(f.notes.field_role_unmatched, 2);
  assert.equal(f.notes.short_label_not_trained, undefined);

  // A row whose only turn list the config took out: the message names the dataset's keys, never "$fieldRoles".
  const { applyFieldRoles } = await import('../../src/core/formats/rowSource');
  const { unrecognizedMessage } = await import('../../src/core/formats/normalize');
  const row = applyFieldRoles({ messages: [{ role: 'user', content: 'Hi' }] }, { messages: 'label' });
  const msg = unrecognizedMessage(row);
  assert.ok(msg.startsWith('unrecognized row shape; keys found: messages (eagle3prep.jsonc "fieldRoles": label, never read)'), msg);
  assert.ok(!msg.includes('$'), msg);
});

test('several conversations: a copy is the same turns (another spelling, or fewer of them); a shorter question or answer inside the first is another conversation, read', async () => {
  const dir = tempDir();
  const file = writeJsonl(
    [
      {
        id: 's2',
        messages: [
          { role: 'user', content: 'What is 2+2? Answer with a number and explain.' },
          { role: 'assistant', content: '4. Because 2 plus 2 equals 4.' },
        ],
        conversations: [
          { from: 'human', value: 'What is 2+2?' },
          { from: 'gpt', value: '4' },
        ],
      },
      {
        id: 'a',
        messages: [
          { role: 'user', content: 'Question about cats' },
          { role: 'assistant', content: 'Cats answer' },
        ],
        conversations: [{ from: 'human', value: 'Question' }],
      },
      {
        id: 'copy',
        messages: [
          { role: 'user', content: 'Hi  there' },
          { role: 'assistant', content: 'Hello!' },
          { role: 'user', content: 'Bye' },
          { role: 'assistant', content: 'Goodbye.' },
        ],
        // The same turns in the ShareGPT spelling, fewer of them: a copy, read once.
        conversations: [
          { from: 'human', value: 'Hi there' },
          { from: 'gpt', value: 'Hello!' },
        ],
      },
    ],
    'sub.jsonl',
    dir,
  );
  const r = await inspectFile(file);
  // Before: rows s2 and a were one record each (their second conversation dropped as "a copy").
  assert.deepEqual(turns(r), [
    ['s2/1', false, ['user:What is 2+2? Answer with a number and explain.', 'assistant:4. Because 2 plus 2 equals 4.']],
    ['s2/2', false, ['user:What is 2+2?', 'assistant:4']],
    ['a/1', false, ['user:Question about cats', 'assistant:Cats answer']],
    ['a/2', true, ['user:Question']],
    ['copy', false, ['user:Hi  there', 'assistant:Hello!', 'user:Bye', 'assistant:Goodbye.']],
  ]);
  assert.ok(r.evidence.includes('1/3 rows: "conversations" repeats turns already read: a copy, not another conversation'), r.evidence.join('\n'));
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [3, 3, 0, 0, 0]);
  assert.equal(f.notes.several_conversations_found, 2);
});

test('--dedup on rows holding several conversations: a row all of whose conversations were written before is dropped as duplicate; one with new ones is written whole, its repeats noted', async () => {
  const dir = tempDir();
  const conv = (q: string) => [
    { role: 'user', content: q },
    { role: 'assistant', content: `${q} answer` },
  ];
  const share = (q: string) => [
    { from: 'human', value: q },
    { from: 'gpt', value: `${q} answer` },
  ];
  const file = writeJsonl(
    [
      { id: 'a', messages: conv('Beta') },
      { id: 'b', messages: conv('Beta'), conversations: share('Delta') },
      { id: 'c', messages: conv('Eps'), conversations: share('Beta') },
      { id: 'd', messages: conv('Delta'), conversations: share('Eps') },
    ],
    'dd.jsonl',
    dir,
  );
  const out = tempDir();
  const res = await prepare({ inputs: [file], outDir: out, dedup: true, templateKwargs: { enable_thinking: false } });
  const f = res.files[0];
  // Before: nothing dropped (a row's key was its conversations' together), "Beta" written 3 times, no note.
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored, f.recordsWritten], [4, 3, 0, 1, 0, 5]);
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
  assert.deepEqual(f.dropped, { duplicate: { count: 1, lines: [4] } });
  assert.equal(f.notes.duplicate_conversation_kept, 2);
  const ids = readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).id);
  assert.deepEqual(ids, ['a', 'b/1', 'b/2', 'c/1', 'c/2']);
});

test('several conversations: the error of a row with one good and one bad conversation names the bad one and says the others are not written', async () => {
  const file = writeJsonl(
    [
      // The shape reads "messages" (it errors); "conversations" is good.
      {
        id: 'r8',
        conversations: [
          { from: 'human', value: 'Q8' },
          { from: 'gpt', value: 'A8' },
        ],
        messages: [u('x'), { role: 'bogus', content: 'y' }],
      },
      // The shape's conversation is good; the other one errors.
      { id: 'q', messages: [u('Hi'), a('Hello.')], conversation: [u('Call it.'), { role: 'assistant', content: null, tool_calls: 'not a list' }] },
    ],
    'bad.jsonl',
  );
  const r = await inspectFile(file);
  assert.deepEqual(turns(r), []);
  assert.deepEqual(
    r.skipped.map((s) => [s.line, s.code]),
    [
      [1, 'unknown_role'],
      [2, 'bad_tool_calls'],
    ],
  );
  assert.match(r.skipped[0].message ?? '', /^"messages": unknown role "bogus" in message 2 /);
  assert.ok(
    r.skipped[0].message?.endsWith(' — the row\'s other conversations ("conversations") are not written either: a row errors whole'),
    r.skipped[0].message,
  );
  assert.match(r.skipped[1].message ?? '', /^"conversation": /);
  assert.ok(r.skipped[1].message?.endsWith(" — the row's other conversations are not written either: a row errors whole"), r.skipped[1].message);
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [2, 0, 0, 0, 2]);
});
