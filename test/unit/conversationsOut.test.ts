/**
 * `prepare --format messages` (records/conversationLines.ts): the exact conversations.jsonl and
 * conversations_sharegpt.jsonl lines of hand-made rows (system, multi-turn, tool calls with object
 * arguments and tool definitions, reasoning as a field and inline, an untrainable turn, a conversation
 * opening with the assistant, a duplicate id), the accounting (every row written, set aside, dropped or
 * errored; the same counts and token counts as a records run), the ShareGPT lines read back the way
 * EAGLE's traineagle3 main.py reads them, and the CLI: --trainer eagle / modelopt write conversations by
 * default and print the next command with the written file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { readReport } from '../../src/core/run/reports/report';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { mergeReports, mergeShardResults } from '../../src/core/run/jobs/mergeReports';
import { conversationLine, sharegptLine } from '../../src/core/records/conversationLines';
import { CODES, isDataChanging } from '../../src/core/codes';
import type { Conversation } from '../../src/core/types';
import { buildModelFolder, isolateTokenizerCache, runCli, tempDir, writeJsonl } from '../helpers';

isolateTokenizerCache();
const ROOT = join(__dirname, '..', '..');

const ROWS: (object | string)[] = [
  {
    id: 'chat-1',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: '2+2?' },
      { role: 'assistant', content: '4' },
    ],
  },
  {
    id: 'tool-1',
    messages: [
      { role: 'user', content: 'Weather in Oslo?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] },
      { role: 'tool', tool_call_id: 'call_0', name: 'get_weather', content: '{"temp": 3}' },
      { role: 'assistant', content: 'It is 3 degrees.' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ],
  },
  {
    id: 'think-1',
    messages: [
      { role: 'user', content: '17*23?' },
      { role: 'assistant', reasoning_content: '17*23 = 391.', content: '391' },
    ],
  },
  {
    id: 'think-2',
    messages: [
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: '<think>\nEasy.\n</think>\n\nParis.' },
    ],
  },
  { id: 'p-1', messages: [{ role: 'user', content: 'Tell me a joke.' }] },
  '{"id": broken',
  {
    id: 'chat-1',
    messages: [
      { role: 'user', content: 'Bye' },
      { role: 'assistant', content: 'Goodbye.' },
    ],
  },
  {
    id: 'w-1',
    messages: [
      { role: 'user', content: 'A' },
      { role: 'assistant', content: 'B', weight: 0 },
      { role: 'user', content: 'C' },
      { role: 'assistant', content: 'D' },
    ],
  },
  {
    id: 'o-1',
    messages: [
      { role: 'assistant', content: 'Welcome!' },
      { role: 'user', content: 'Thanks' },
      { role: 'assistant', content: 'Anytime.' },
    ],
  },
];

/** The lines of a JSONL file. */
function lines(p: string): string[] {
  return readFileSync(p, 'utf8').split('\n').filter(Boolean);
}

/** The expected conversations.jsonl lines of {@link ROWS} written to `file`: exact text. */
function expectedMessages(file: string): string[] {
  const src = (line: number) => `"source":{"file":${JSON.stringify(file)},"line":${line}}`;
  return [
    `{"id":"chat-1",${src(1)},"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello."},{"role":"user","content":"2+2?"},{"role":"assistant","content":"4"}]}`,
    `{"id":"tool-1",${src(2)},"messages":[{"role":"user","content":"Weather in Oslo?"},{"role":"assistant","content":"","tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":"{\\"city\\":\\"Oslo\\"}"}}]},{"role":"tool","content":"{\\"temp\\": 3}","tool_call_id":"call_0","name":"get_weather"},{"role":"assistant","content":"It is 3 degrees."}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`,
    `{"id":"think-1",${src(3)},"messages":[{"role":"user","content":"17*23?"},{"role":"assistant","content":"391","reasoning_content":"17*23 = 391."}]}`,
    `{"id":"think-2",${src(4)},"messages":[{"role":"user","content":"Capital of France?"},{"role":"assistant","content":"Paris.","reasoning_content":"Easy."}]}`,
    `{"id":"chat-1~2",${src(7)},"messages":[{"role":"user","content":"Bye"},{"role":"assistant","content":"Goodbye."}]}`,
    `{"id":"w-1",${src(8)},"messages":[{"role":"user","content":"A"},{"role":"assistant","content":"B","weight":0},{"role":"user","content":"C"},{"role":"assistant","content":"D"}]}`,
    `{"id":"o-1",${src(9)},"messages":[{"role":"assistant","content":"Welcome!","weight":0},{"role":"user","content":"Thanks"},{"role":"assistant","content":"Anytime."}]}`,
  ];
}

/** The expected conversations_sharegpt.jsonl lines of {@link ROWS}: the two conversations EAGLE can read, the first without its system turn. */
function expectedSharegpt(file: string): string[] {
  const src = (line: number) => `"source":{"file":${JSON.stringify(file)},"line":${line}}`;
  return [
    `{"id":"chat-1",${src(1)},"conversations":[{"from":"human","value":"Hi"},{"from":"gpt","value":"Hello."},{"from":"human","value":"2+2?"},{"from":"gpt","value":"4"}]}`,
    `{"id":"chat-1~2",${src(7)},"conversations":[{"from":"human","value":"Bye"},{"from":"gpt","value":"Goodbye."}]}`,
  ];
}

/**
 * A faithful reading of EAGLE's `build_dataset_rank` (eagle/traineagle3/main.py): `from` mapped through
 * {human: user, gpt: assistant} (any other value is a KeyError there), a first turn that is not human
 * skipped, then the roles must alternate user, assistant (an assertion there). Throws where main.py would.
 */
function eagleReads(line: string): { role: string; content: string }[] {
  const row = JSON.parse(line) as { id: unknown; conversations: { from: string; value: string }[] };
  assert.equal(typeof row.id, 'string');
  const roles: Record<string, string> = { human: 'user', gpt: 'assistant' };
  let source = row.conversations;
  const first = roles[source[0].from];
  if (first === undefined) throw new Error(`KeyError: ${source[0].from}`);
  if (first !== 'user') source = source.slice(1);
  return source.map((s, j) => {
    const role = roles[s.from];
    if (role === undefined) throw new Error(`KeyError: ${s.from}`);
    assert.equal(role, ['user', 'assistant'][j % 2]);
    return { role, content: s.value };
  });
}

test('conversationLine / sharegptLine: exact lines of a hand-made conversation; --reasoning drop leaves the reasoning out', () => {
  const c: Conversation = {
    id: 'c',
    source: { file: '/d/x.jsonl', line: 3, element: 1 },
    messages: [
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: 'A', reasoning_content: 'R' },
      { role: 'user', content: 'Q2' },
      { role: 'assistant', content: 'A2' },
      { role: 'assistant', content: '' },
    ],
  };
  assert.deepEqual(conversationLine(c), {
    line: '{"id":"c","source":{"file":"/d/x.jsonl","line":3,"element":1},"messages":[{"role":"user","content":"Q"},{"role":"assistant","content":"A","reasoning_content":"R"},{"role":"user","content":"Q2"},{"role":"assistant","content":"A2"}]}\n',
    notes: [],
  });
  assert.deepEqual(sharegptLine(c), { refused: 'eagle_reasoning' });
  assert.deepEqual(sharegptLine(c, 'drop'), {
    line: '{"id":"c","source":{"file":"/d/x.jsonl","line":3,"element":1},"conversations":[{"from":"human","value":"Q"},{"from":"gpt","value":"A"},{"from":"human","value":"Q2"},{"from":"gpt","value":"A2"}]}\n',
    notes: [],
  });
  // A system turn after the start cannot be left out: the conversation is refused.
  const late: Conversation = { ...c, messages: [c.messages[0], c.messages[3], { role: 'system', content: 'S' }, c.messages[2], c.messages[3]] };
  assert.deepEqual(sharegptLine(late), { refused: 'eagle_turn_order' });
  // Every new code has its text and is data-changing.
  for (const code of [
    'conversation_over_trainer_length',
    'conversation_turn_not_trainable',
    'eagle_system_prompt',
    'eagle_tool_turns',
    'eagle_reasoning',
    'eagle_turn_order',
    'eagle_turn_not_trainable',
  ] as const) {
    assert.ok(CODES[code].meaning && CODES[code].remedy, code);
    assert.ok(isDataChanging(code), code);
  }
});

test('prepare --format messages --trainer eagle: exact lines, every row accounted, the same counts as a records run', async () => {
  const dir = tempDir();
  const file = writeJsonl(ROWS, 'rows.jsonl', dir);
  const out = join(dir, 'messages');
  const r = await prepare({ inputs: [file], outDir: out, format: 'messages', trainer: 'eagle', maxLength: 2048, long: 'split', workers: 1 });
  assert.equal(r.ok, true, r.failures.join('; '));
  assert.deepEqual(lines(join(out, 'conversations.jsonl')), expectedMessages(file));
  assert.deepEqual(lines(join(out, 'conversations_sharegpt.jsonl')), expectedSharegpt(file));
  // EAGLE's reader takes every ShareGPT line.
  assert.deepEqual(lines(join(out, 'conversations_sharegpt.jsonl')).map(eagleReads)[1], [
    { role: 'user', content: 'Bye' },
    { role: 'assistant', content: 'Goodbye.' },
  ]);
  // Model-Optimizer's LanguageDataCollator: a sample's "messages" (role/content dicts) with an assistant turn, else skipped.
  for (const l of lines(join(out, 'conversations.jsonl'))) {
    const m = (JSON.parse(l) as { messages: { role: string; content: unknown }[] }).messages;
    assert.ok(m.every((t) => typeof t.role === 'string' && typeof t.content === 'string'));
    assert.ok(m.some((t) => t.role === 'assistant'));
  }
  for (const d of [out, join(out, 'data')])
    assert.ok(!existsSync(join(d, 'tokenized_data.jsonl')) && !existsSync(join(d, 'tokenized_data.parquet')), 'no records written');
  assert.deepEqual(
    r.outputs.written?.map((p) => p.slice(out.length + 1)),
    ['conversations.jsonl', 'conversations_sharegpt.jsonl', 'prompts_to_generate.jsonl', 'problems.jsonl', 'token_counts.json', 'report.json', 'report.md'],
  );
  const f = r.files[0];
  // Every row: 7 written, 1 set aside (p-1), 1 errored (the broken line).
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside, f.rowsDropped, f.rowsErrored], [9, 7, 1, 0, 1]);
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
  assert.equal(f.conversationsWritten, 7);
  assert.equal(f.sharegptWritten, 2);
  const notes = Object.fromEntries(Object.entries(f.notes).filter(([k]) => k.startsWith('eagle_') || k.startsWith('conversation_')));
  assert.deepEqual(notes, {
    eagle_system_prompt: 1,
    eagle_tool_turns: 1,
    eagle_reasoning: 2,
    // o-1's opening assistant turn: no record trains it (no prompt leads to it), so it is weight 0 like w-1's.
    eagle_turn_not_trainable: 2,
    conversation_turn_not_trainable: 2,
  });
  // Written to ShareGPT + left out of it = written conversations (eagle_system_prompt lines are written).
  assert.equal(f.sharegptWritten! + f.notes.eagle_tool_turns! + f.notes.eagle_reasoning! + f.notes.eagle_turn_not_trainable!, 7);
  assert.equal(r.status, 'degraded');
  assert.ok(r.warnings!.some((w) => w.code === 'eagle_reasoning' && w.count === 2));
  // The same rows through a records run: the same fates, records, tokens and token counts.
  const rec = await prepare({ inputs: [file], outDir: join(dir, 'records'), format: 'jsonl', trainer: 'eagle', maxLength: 2048, long: 'split', workers: 1 });
  const g = rec.files[0];
  for (const k of ['rowsRead', 'rowsWritten', 'rowsSetAside', 'rowsDropped', 'rowsErrored', 'recordsWritten', 'trainableTokens', 'totalTokens'] as const)
    assert.equal(f[k], g[k], k);
  assert.equal(g.conversationsWritten, undefined);
  assert.equal(lines(rec.outputs.tokenizedData).length, f.recordsWritten);
  const counts = (d: string) => {
    const { tokenizer: _t, ...rest } = JSON.parse(readFileSync(join(d, 'token_counts.json'), 'utf8')) as Record<string, unknown>;
    return rest;
  };
  assert.deepEqual(counts(out), counts(join(dir, 'records')));
  // report.json round trip; report.md names the files and whose masking applies.
  const back = readReport(join(out, 'report.json')).report;
  assert.equal(back.outputs.format, 'messages');
  assert.equal(back.outputs.conversations, join(out, 'conversations.jsonl'));
  assert.equal(back.totals.conversationsWritten, 7);
  assert.equal(back.totals.sharegptWritten, 2);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /^- Conversations: 7 conversations in conversations\.jsonl \(OpenAI messages, normalized; one per written conversation\)$/m);
  assert.match(
    md,
    /^ {2}2 of them in conversations_sharegpt\.jsonl \(ShareGPT human\/gpt, as EAGLE's main\.py reads them\); 5 left out, which EAGLE cannot read as they are: eagle_tool_turns ×1, eagle_reasoning ×2, eagle_turn_not_trainable ×2; 1 written without their system turn \(eagle_system_prompt: EAGLE puts its own first\)$/m,
  );
  assert.match(md, /The trainer renders, tokenizes and masks these conversations itself: its own masking applies/);
  assert.match(
    md,
    /^- Outputs: `conversations\.jsonl` and `conversations_sharegpt\.jsonl` \(`--format messages`: no records; the 9 records counted are what the rules would train\), `prompts_to_generate\.jsonl` \(1 prompts\)/m,
  );
  assert.doesNotMatch(md, /## Trainer lengths/);
});

test('prepare --format messages: a conversation longer than --max-length is noted; a later records run removes the conversations', async () => {
  const dir = tempDir();
  const long = 'word '.repeat(300);
  const file = writeJsonl(
    [
      {
        id: 'long',
        messages: [
          { role: 'user', content: long },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: long },
          { role: 'assistant', content: 'ok again' },
        ],
      },
    ],
    'long.jsonl',
    dir,
  );
  const out = join(dir, 'out');
  const r = await prepare({ inputs: [file], outDir: out, format: 'messages', maxLength: 400, long: 'split', workers: 1 });
  assert.equal(r.ok, true, r.failures.join('; '));
  // The conversation (about 600 tokens) is longer: noted, written whole; --max-length does not split, cut or drop records then.
  assert.equal(r.files[0].notes.conversation_over_trainer_length, 1);
  assert.equal(r.files[0].recordsWritten, 2);
  assert.ok(r.files[0].totalTokens > 600);
  assert.deepEqual(
    Object.keys(r.files[0].notes).filter((n) => ['context_window_cut', 'target_too_long', 'record_truncated', 'too_long'].includes(n)),
    [],
  );
  // The same run writing records splits them (--long split) instead.
  const rec = await prepare({ inputs: [file], outDir: join(dir, 'records'), format: 'jsonl', maxLength: 400, long: 'split', workers: 1 });
  assert.ok((rec.files[0].notes.context_window_cut ?? 0) > 0);
  assert.equal(rec.files[0].notes.conversation_over_trainer_length, undefined);
  assert.equal(lines(join(out, 'conversations.jsonl')).length, 1);
  assert.equal(r.outputs.conversationsSharegpt, undefined, 'no ShareGPT file without --trainer eagle');
  // The Datasets view: prepared, its output file the conversations (no records to miss).
  const state = readOutputState(file, { outDir: out });
  assert.equal(state.state, 'prepared', state.staleBecause.join('; '));
  assert.equal(state.outputs![0].name, 'conversations.jsonl');
  const again = await prepare({ inputs: [file], outDir: out, format: 'jsonl', workers: 1 });
  assert.deepEqual(again.outputs.removed, [join(out, 'conversations.jsonl')]);
  assert.ok(!existsSync(join(out, 'conversations.jsonl')));
  assert.equal(again.files[0].notes.conversation_over_trainer_length, undefined);
  // A conversations.jsonl that no run of this folder wrote (a user's own dataset) is never removed.
  writeFileSync(join(out, 'conversations.jsonl'), '{"mine": true}\n');
  const third = await prepare({ inputs: [file], outDir: out, format: 'jsonl', workers: 1 });
  assert.equal(third.outputs.removed, undefined);
  assert.equal(readFileSync(join(out, 'conversations.jsonl'), 'utf8'), '{"mine": true}\n');
  // Back to --format messages: the records go and data/ with them; report.json names no records file, read back where a run would put it.
  const fourth = await prepare({ inputs: [file], outDir: out, format: 'messages', workers: 1 });
  assert.equal(fourth.ok, true, fourth.failures.join('; '));
  assert.deepEqual(fourth.outputs.removed, [join(out, 'data', 'tokenized_data.jsonl')]);
  assert.equal(existsSync(join(out, 'data')), false);
  const raw = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { outputs: Record<string, unknown> };
  assert.equal(raw.outputs.tokenized_data, undefined);
  assert.equal(raw.outputs.conversations, join(out, 'conversations.jsonl'));
  assert.equal(readReport(join(out, 'report.json')).report.outputs.tokenizedData, join(out, 'data', 'tokenized_data.jsonl'));
});

test('CLI: --trainer modelopt writes conversations.jsonl by default and points data.data_path at it; --format messages refused for SpecForge', async () => {
  const dir = tempDir();
  const file = writeJsonl(ROWS, 'rows.jsonl', dir);
  const out = join(dir, 'out');
  const cli = (...args: string[]) => runCli(['prepare', ...args], { cwd: ROOT });
  const run = await cli(file, '--out', out, '--trainer', 'modelopt', '--workers', '1');
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(lines(join(out, 'conversations.jsonl')), expectedMessages(file));
  assert.ok(!existsSync(join(out, 'conversations_sharegpt.jsonl')));
  assert.ok(!existsSync(join(out, 'tokenized_data.jsonl')) && !existsSync(join(out, 'data', 'tokenized_data.jsonl')));
  assert.match(run.stdout, /^Conversations: 7 conversations in conversations\.jsonl \(OpenAI messages, normalized; one per written conversation\)$/m);
  assert.match(run.stdout, new RegExp(` data\\.data_path=${join(out, 'conversations.jsonl').replace(/[.]/g, '\\.')} training\\.training_seq_len=2048 `));
  assert.doesNotMatch(run.stdout, /eagle_/);
  // EAGLE: the ShareGPT file, and --trainpath at it.
  const eagle = await cli(file, '--out', join(dir, 'eagle'), '--trainer', 'eagle', '--workers', '1');
  assert.equal(eagle.status, 0, eagle.stderr);
  assert.deepEqual(lines(join(dir, 'eagle', 'conversations_sharegpt.jsonl')), expectedSharegpt(file));
  assert.match(eagle.stdout, new RegExp(`--trainpath ${join(dir, 'eagle', 'conversations_sharegpt.jsonl').replace(/[.]/g, '\\.')} `));
  // A trainer that reads records refuses conversations.
  const refused = await cli(file, '--out', join(dir, 'sf'), '--trainer', 'specforge', '--format', 'messages');
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /SpecForge reads JSONL records, not conversations: use --format jsonl or both with --trainer specforge/);
});

test('merge-reports: shards of --format messages add up their conversation lines; --data refuses them with the way out', async () => {
  const dir = tempDir();
  const file = writeJsonl(ROWS, 'rows.jsonl', dir);
  const shards = [];
  for (let i = 0; i < 2; i++)
    shards.push(
      await prepare({
        inputs: [file],
        outDir: join(dir, `s${i}`),
        format: 'messages',
        trainer: 'eagle',
        maxLength: 2048,
        workers: 1,
        shard: { index: i, count: 2 },
      }),
    );
  assert.equal(shards[0].files[0].conversationsWritten! + shards[1].files[0].conversationsWritten!, 7);
  const merged = mergeShardResults(shards, join(dir, 'merged'));
  assert.equal(merged.files[0].conversationsWritten, 7);
  assert.equal(merged.files[0].sharegptWritten, 2);
  assert.equal(merged.totals.conversationsWritten, 7);
  await assert.rejects(
    mergeReports([join(dir, 's0'), join(dir, 's1')], join(dir, 'merged'), { data: true }),
    /merge-reports --data merges records; shards of --format messages wrote conversations/,
  );
});

test('prepare --format messages: a turn the records run leaves untrained (tool calls the template does not write, --mask last-assistant) has "weight": 0 and is counted', async () => {
  const dir = tempDir();
  // A template that writes every turn's content and no tool calls: the tool-call turn is tool_calls_not_rendered.
  const model = buildModelFolder({
    base: 'llama3_1',
    template:
      "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m['role'] }}<|end_header_id|>\n\n{{ m['content'] | trim }}<|eot_id|>{% endfor %}" +
      '{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}',
  });
  const call = { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
  const file = writeJsonl(
    [
      {
        id: 't',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'c1', content: '20' },
          { role: 'assistant', content: 'It is 20 degrees.' },
        ],
      },
      {
        id: 'two',
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello.' },
          { role: 'user', content: 'Bye' },
          { role: 'assistant', content: 'Goodbye.' },
        ],
      },
    ],
    'rows.jsonl',
    dir,
  );
  const weights = (out: string) =>
    lines(join(out, 'conversations.jsonl')).map((l) =>
      (JSON.parse(l) as { messages: { role: string; weight?: number }[] }).messages.filter((m) => m.role === 'assistant').map((m) => m.weight ?? 1),
    );
  const r = await prepare({ inputs: [file], outDir: join(dir, 'm'), tokenizerDir: model, format: 'messages', trainer: 'eagle', workers: 1 });
  assert.equal(r.ok, true, r.failures.join('; '));
  assert.deepEqual(weights(join(dir, 'm')), [
    [0, 1],
    [1, 1],
  ]);
  const f = r.files[0];
  assert.equal(f.notes.tool_calls_not_rendered, 1);
  assert.equal(f.notes.conversation_turn_not_trainable, 1);
  assert.equal(f.notes.eagle_tool_turns, 1);
  assert.equal(f.sharegptWritten, 1);
  // --mask last-assistant: the records train the last assistant turn only; the earlier ones are weight 0 (and EAGLE's file leaves them out).
  const last = await prepare({
    inputs: [file],
    outDir: join(dir, 'l'),
    tokenizerDir: model,
    format: 'messages',
    trainer: 'eagle',
    mask: 'last-assistant',
    allowEmpty: true, // EAGLE's file is empty (every conversation has an untrained turn): that fails an eagle run otherwise
    workers: 1,
  });
  assert.equal(last.ok, true, last.failures.join('; '));
  assert.deepEqual(weights(join(dir, 'l')), [
    [0, 1],
    [0, 1],
  ]);
  assert.equal(last.files[0].notes.conversation_turn_not_trainable, 2);
  assert.equal(last.files[0].notes.eagle_turn_not_trainable, 1);
  assert.equal(last.files[0].sharegptWritten, 0);
});

test('--trainer eagle with no conversation EAGLE can read: the run fails with the reason and the way out; with --allow-empty no train command points at the empty file', async () => {
  const dir = tempDir();
  const file = writeJsonl(
    [
      {
        id: 'r',
        messages: [
          { role: 'user', content: '17*23?' },
          { role: 'assistant', reasoning_content: '17*23 = 391.', content: '391' },
        ],
      },
    ],
    'rows.jsonl',
    dir,
  );
  const out = join(dir, 'e');
  const r = await prepare({ inputs: [file], outDir: out, trainer: 'eagle', format: 'messages', workers: 1 });
  assert.equal(r.ok, false);
  assert.deepEqual(r.failures, [
    "--trainer eagle: conversations_sharegpt.jsonl holds no conversation: EAGLE's main.py cannot read any of the 1 written conversation as it is (eagle_reasoning ×1), so --trainer eagle has nothing to train on. --trainer modelopt reads conversations.jsonl (tool turns and reasoning included); --format jsonl writes records for SpecForge or speculators; or --allow-empty to write the files anyway",
  ]);
  assert.equal(existsSync(out), false, 'a failed run writes nothing');
  const run = await runCli(['prepare', file, '--out', out, '--trainer', 'eagle', '--allow-empty', '--workers', '1'], { cwd: ROOT });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(readFileSync(join(out, 'conversations_sharegpt.jsonl'), 'utf8'), '');
  assert.match(run.stdout, /^ {2}NO TRAIN COMMAND: conversations_sharegpt\.jsonl holds no conversation: .*--trainer modelopt reads conversations\.jsonl/m);
  assert.doesNotMatch(run.stdout, /--trainpath/);
});
