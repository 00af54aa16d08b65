/**
 * Every shape family of issue 3, read from a small synthetic file in
 * test/fixtures/formats/ through `inspect` (reader → detection → normalization),
 * with the exact normalized messages; then the whole folder through `prepare`
 * (embedded Qwen3 tokenizer) to check the row accounting per file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { inspectFile, type InspectResult } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir } from '../helpers';

const DIR = join(__dirname, '..', 'fixtures', 'formats');
const fx = (n: string) => join(DIR, n);
const msgs = (r: InspectResult, i = 0) => r.records[i].messages;

test('preference rows: prompt + chosen (string, HH transcript, turn list, turn object, whole conversation); rejected never used', async () => {
  const r = await inspectFile(fx('preference.jsonl'));
  assert.equal(r.format, 'preference');
  assert.equal(r.rows_read, 5);
  assert.deepEqual(msgs(r, 0), [
    { role: 'user', content: 'What is 2+2?' },
    { role: 'assistant', content: '4' },
  ]);
  assert.deepEqual(msgs(r, 1), [
    { role: 'user', content: 'Hi there' },
    { role: 'assistant', content: 'Hello! How can I help?' },
    { role: 'user', content: 'Tell a joke' },
    { role: 'assistant', content: 'Why did the chicken cross the road?' },
  ]);
  assert.deepEqual(msgs(r, 2), [
    { role: 'user', content: 'Capital of France?' },
    { role: 'assistant', content: 'Paris.' },
  ]);
  assert.deepEqual(msgs(r, 3), [
    { role: 'user', content: 'Name a color' },
    { role: 'assistant', content: 'Blue' },
  ]);
  assert.deepEqual(msgs(r, 4), [
    { role: 'user', content: 'Say hi' },
    { role: 'assistant', content: 'Hi!' },
  ]);
  assert.ok(r.records.every((x) => !x.needs_generation && x.notes?.includes('rejected_not_used')));
  assert.ok(!JSON.stringify(r.records).match(/Go away|Lyon|Seven|No\./));
});

test('SWE-agent .traj (pretty-printed object): history messages, observations stay user', async () => {
  const r = await inspectFile(fx('swe-agent.traj'));
  assert.equal(r.format, 'swe-agent-traj');
  assert.equal(r.records.length, 1);
  assert.deepEqual(msgs(r), [
    { role: 'system', content: 'SETTING: You are an autonomous programmer.' },
    { role: 'user', content: "We're solving this issue: ls is broken." },
    { role: 'assistant', content: 'DISCUSSION\nList files.\n\n```\nls\n```' },
    { role: 'user', content: 'src\ntests' },
    { role: 'assistant', content: 'DISCUSSION\nDone.\n\n```\nsubmit\n```' },
  ]);
  assert.ok(
    r.evidence[0].startsWith('1/1 rows have SWE-agent trajectory: "history" of {role, content, agent, message_type} (5 messages) + "trajectory" of 2 steps'),
    r.evidence[0],
  );
});

test('role-less trajectory_steps: task → user, thought + action → assistant, observation → user', async () => {
  const r = await inspectFile(fx('trajectory-steps.jsonl'));
  assert.equal(r.format, 'trajectory-steps');
  assert.equal(r.records[0].id, 't1');
  assert.deepEqual(msgs(r), [
    { role: 'user', content: 'Find the largest file.' },
    { role: 'assistant', content: 'I should list files by size.\n\nls -S | head -1' },
    { role: 'user', content: 'big.bin' },
    { role: 'assistant', content: 'The answer is big.bin.\n\nfinish big.bin' },
  ]);
});

test('OpenHands event list (.json array = one conversation): actions → tool calls, observations → tool turns, state changes skipped', async () => {
  const r = await inspectFile(fx('openhands-events.json'));
  assert.equal(r.format, 'openhands-events');
  assert.equal(r.rows_read, 1);
  assert.deepEqual(msgs(r), [
    { role: 'system', content: 'You are OpenHands agent.' },
    { role: 'user', content: 'Count the files.' },
    {
      role: 'assistant',
      content: 'Let me count them.',
      tool_calls: [{ type: 'function', function: { name: 'execute_bash', arguments: { command: 'ls | wc -l' } }, id: 'toolu_01' }],
    },
    { role: 'tool', content: '3', tool_call_id: 'toolu_01' },
    { role: 'assistant', content: 'There are 3 files.' },
  ]);
  assert.deepEqual(r.records[0].tools, [
    { type: 'function', function: { name: 'execute_bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } },
  ]);
});

test('Anthropic content blocks: thinking → reasoning, tool_use → tool calls, tool_result → tool turn, image reported, input_schema → parameters', async () => {
  const r = await inspectFile(fx('anthropic.jsonl'));
  assert.deepEqual(msgs(r), [
    { role: 'system', content: 'You are Claude.' },
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: 'Let me check.',
      reasoning_content: 'I need the tool.',
      tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } }, id: 'toolu_1' }],
    },
    { role: 'tool', content: '18C, sunny', tool_call_id: 'toolu_1' },
    { role: 'assistant', content: 'It is 18C and sunny in Paris.' },
  ]);
  assert.deepEqual(r.records[0].non_text_parts, [{ message: 1, type: 'image' }]);
  assert.deepEqual(r.records[0].tools, [
    { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ]);
});

test('OpenAI tool_calls, legacy function_call + function role, developer → system; malformed arguments kept verbatim', async () => {
  const r = await inspectFile(fx('openai-tools.jsonl'));
  assert.equal(r.format, 'openai-messages');
  assert.deepEqual(msgs(r, 0), [
    { role: 'system', content: 'Use tools.' },
    { role: 'user', content: 'Add 2 and 3' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'add', arguments: '{"a": 2, "b": 3}' }, id: 'call_1' }] },
    { role: 'tool', content: '5', tool_call_id: 'call_1' },
    { role: 'assistant', content: 'The sum is 5.' },
  ]);
  assert.deepEqual(msgs(r, 1), [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'weather', arguments: '{"city": "Oslo"' } }] },
    { role: 'tool', content: 'rain', name: 'weather' },
    { role: 'assistant', content: 'Rain in Oslo.' },
  ]);
  assert.ok(r.records[1].notes!.includes('tool_call_arguments_not_json'));
});

test('Hermes <tool_call> in text → tool calls; a broken one stays verbatim text; tool output keeps its role', async () => {
  const r = await inspectFile(fx('hermes.jsonl'));
  assert.deepEqual(msgs(r, 0), [
    { role: 'system', content: 'You are a function calling AI model.' },
    { role: 'user', content: 'Stock price of ACME?' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_price', arguments: { symbol: 'ACME' } } }] },
    { role: 'tool', content: '<tool_response>\n{"price": 12.5}\n</tool_response>' },
    { role: 'assistant', content: 'ACME trades at 12.5.' },
  ]);
  assert.deepEqual(msgs(r, 1), [
    { role: 'user', content: 'Broken call' },
    { role: 'assistant', content: '<tool_call>\n{"name": "get_price", "arguments": {"symbol": }\n</tool_call>' },
  ]);
  assert.deepEqual(r.records[1].notes, ['tool_call_text_not_json']);
});

test('Glaive single string: USER:/ASSISTANT:/FUNCTION RESPONSE: turns, <functioncall> with single-quoted arguments kept as written', async () => {
  const r = await inspectFile(fx('glaive.jsonl'));
  assert.equal(r.format, 'glaive');
  assert.deepEqual(msgs(r), [
    {
      role: 'system',
      content:
        'You are a helpful assistant with access to the following functions. Use them if required -\n{\n    "name": "get_news",\n    "parameters": {}\n}',
    },
    { role: 'user', content: 'Any tech news?' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'get_news', arguments: '{"category": "tech"}' } }] },
    { role: 'tool', content: '{"headline": "Chips are fast"}' },
    { role: 'assistant', content: 'The headline: Chips are fast.' },
  ]);
});

test('query/tools/answers JSON strings (xLAM): user query, one assistant turn with the calls, tools in OpenAI form', async () => {
  const r = await inspectFile(fx('xlam.jsonl'));
  assert.equal(r.format, 'query-tools-answers');
  assert.equal(r.records[0].id, '7');
  assert.deepEqual(msgs(r), [
    { role: 'user', content: 'Weather in Rome and Oslo?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { type: 'function', function: { name: 'weather', arguments: { city: 'Rome' } } },
        { type: 'function', function: { name: 'weather', arguments: { city: 'Oslo' } } },
      ],
    },
  ]);
  assert.deepEqual(r.records[0].tools, [
    { type: 'function', function: { name: 'weather', description: 'Get weather', parameters: { city: { type: 'str', description: 'City' } } } },
  ]);
});

test('LLaMA-Factory function_call / observation turns, system and tools (JSON string)', async () => {
  const r = await inspectFile(fx('llamafactory-tools.jsonl'));
  assert.deepEqual(msgs(r), [
    { role: 'system', content: 'You can call tools.' },
    { role: 'user', content: 'What is 3 times 4?' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'multiply', arguments: { a: 3, b: 4 } } }] },
    { role: 'tool', content: '{"result": 12}' },
    { role: 'assistant', content: '3 times 4 is 12.' },
  ]);
  assert.equal((r.records[0].tools as any[])[0].function.name, 'multiply');
});

test('reasoning: reasoning_content, thinking; inline <think> and a lone </think> read as reasoning_content (the text around kept for templates that do not render reasoning), with a top-level system', async () => {
  const r = await inspectFile(fx('reasoning.jsonl'));
  assert.equal(r.format, 'mixed');
  assert.deepEqual(
    r.records.map((x) => x.shape),
    ['openai-messages', 'openai-messages', 'openai-messages', 'sharegpt'],
  );
  assert.deepEqual(msgs(r, 0)[1], { role: 'assistant', content: '2', reasoning_content: 'one plus one' });
  assert.deepEqual(msgs(r, 1)[1], { role: 'assistant', content: '4', reasoning_content: 'two plus two' });
  assert.deepEqual(msgs(r, 2)[1], { role: 'assistant', content: '6', reasoning_content: 'three plus three' });
  assert.deepEqual(msgs(r, 3), [
    { role: 'system', content: 'Think first.' },
    { role: 'user', content: '4+4?' },
    { role: 'assistant', content: '8', reasoning_content: 'four plus four' },
  ]);
});

test('chat families: UltraChat, LMSYS conversation, OASST tree (best-ranked path), HH, Guanaco, ChatML strings', async () => {
  assert.deepEqual(msgs(await inspectFile(fx('ultrachat.jsonl'))), [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
    { role: 'user', content: 'How are you?' },
    { role: 'assistant', content: 'Fine.' },
  ]);
  const lm = await inspectFile(fx('lmsys.jsonl'));
  assert.equal(lm.records[0].id, 'c1');
  assert.deepEqual(msgs(lm), [
    { role: 'user', content: 'Hola' },
    { role: 'assistant', content: '¡Hola! ¿Qué tal?' },
  ]);
  const oa = await inspectFile(fx('oasst-tree.jsonl'));
  assert.equal(oa.records[0].id, 'tree1');
  assert.deepEqual(msgs(oa), [
    { role: 'user', content: 'Explain gravity' },
    { role: 'assistant', content: 'Gravity pulls masses together.' },
    { role: 'user', content: 'Thanks!' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('hh.jsonl'))), [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello.' },
    { role: 'user', content: 'Bye' },
    { role: 'assistant', content: 'Goodbye.' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('guanaco.jsonl'))), [
    { role: 'user', content: 'What is AI?' },
    { role: 'assistant', content: 'Artificial intelligence.' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('chatml.jsonl'))), [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello.' },
  ]);
});

test('instruction families: Alpaca (input, history, system), Dolly context, question/answer, query/response, prompt/completion|response', async () => {
  const a = await inspectFile(fx('alpaca.jsonl'));
  assert.deepEqual(msgs(a, 0), [
    { role: 'user', content: 'Translate to French\n\ncat' },
    { role: 'assistant', content: 'chat' },
  ]);
  assert.deepEqual(msgs(a, 1), [
    { role: 'system', content: 'You translate.' },
    { role: 'user', content: 'Translate to French: cat' },
    { role: 'assistant', content: 'chat' },
    { role: 'user', content: 'And dog?' },
    { role: 'assistant', content: 'chien' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('dolly.jsonl'))), [
    { role: 'user', content: 'Who wrote it?\n\nHamlet was written by Shakespeare.' },
    { role: 'assistant', content: 'Shakespeare.' },
  ]);
  const qa = await inspectFile(fx('qa.jsonl'));
  assert.deepEqual(
    qa.records.map((x) => x.messages.map((m) => m.content)),
    [
      ['Sky color?', 'Blue'],
      ['Grass color?', 'Green'],
      ['Snow color?', 'White'],
      ['Coal color?', 'Black'],
      ['Ice color?', 'Clear'],
      ['Ash color?', 'Gray'],
    ],
  );
  // A completion given as turn objects goes through the turn rules (inline <think> read as reasoning_content).
  assert.deepEqual(msgs(qa, 4)[1], { role: 'assistant', content: 'Clear', reasoning_content: 'cold' });
});

test('per-turn training flags, multimodal parts (content parts, LLaVA images field), messages as a JSON string', async () => {
  const f = await inspectFile(fx('flags.jsonl'));
  assert.deepEqual(
    msgs(f).map((m) => [m.content, m.trainable]),
    [
      ['q1', undefined],
      ['a1', false],
      ['q2', undefined],
      ['a2', false],
      ['q3', undefined],
      ['a3', false],
      ['q4', undefined],
      ['a4', undefined],
    ],
  );
  const mm = await inspectFile(fx('multimodal.jsonl'));
  assert.deepEqual(msgs(mm), [
    { role: 'user', content: 'What animal?' },
    { role: 'assistant', content: 'A cat.' },
  ]);
  assert.deepEqual(mm.records[0].non_text_parts, [
    { message: 0, type: 'image_url' },
    { message: 0, type: 'input_audio' },
  ]);
  assert.ok(!JSON.stringify(mm).includes('[object Object]'));
  const llava = await inspectFile(fx('llava-images.jsonl'));
  assert.deepEqual(msgs(llava), [
    { role: 'user', content: '<image>\nWhat is this?' },
    { role: 'assistant', content: 'A cat.' },
  ]);
  assert.deepEqual(llava.records[0].non_text_parts, [{ message: 0, type: 'image' }]);
  const js = await inspectFile(fx('json-string-messages.jsonl'));
  assert.deepEqual(msgs(js), [
    { role: 'user', content: 'ping' },
    { role: 'assistant', content: 'pong' },
  ]);
});

test('numbers / null where text belongs, consecutive same-role turns kept, unknown role errored with a code, every script', async () => {
  const r = await inspectFile(fx('damaged-values.jsonl'));
  assert.deepEqual(msgs(r, 0), [
    { role: 'user', content: '42' },
    { role: 'assistant', content: '' },
    { role: 'assistant', content: 'true' },
  ]);
  assert.deepEqual(
    msgs(r, 1).map((m) => `${m.role}:${m.content}`),
    ['user:a', 'user:b', 'assistant:c', 'assistant:d'],
  );
  assert.equal(r.skipped.length, 1);
  assert.deepEqual({ ...r.skipped[0], message: undefined }, { line: 3, reason: 'errored', code: 'unknown_role', message: undefined });
  assert.match(r.skipped[0].message, /^unknown role "narrator" in message 2/);
  assert.deepEqual(msgs(r, 2), [
    { role: 'user', content: 'Привет, 你好, مرحبا, नमस्ते, שלום, こんにちは, 🙂' },
    { role: 'assistant', content: 'Γειά σου, 안녕하세요, สวัสดี' },
  ]);
  assert.equal(r.rows_read, r.records.length + r.skipped.length);
});

test('Gemini contents: parts, model role, functionCall → tool call, functionResponse → tool turn, systemInstruction', async () => {
  const r = await inspectFile(fx('gemini-contents.jsonl'));
  assert.deepEqual(msgs(r), [
    { role: 'system', content: 'Be helpful.' },
    { role: 'user', content: 'Weather in Rome?' },
    { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'weather', arguments: { city: 'Rome' } } }] },
    { role: 'tool', content: '{"temp":21}', name: 'weather' },
    { role: 'assistant', content: 'It is 21 degrees.' },
  ]);
});

test('ATIF steps: agent steps with reasoning and tool calls, observation results → tool turns', async () => {
  const r = await inspectFile(fx('atif.jsonl'));
  assert.equal(r.format, 'atif-trajectory');
  assert.equal(r.records[0].id, 's-1');
  assert.deepEqual(msgs(r), [
    { role: 'system', content: 'You are an agent.' },
    { role: 'user', content: 'List files.' },
    {
      role: 'assistant',
      content: null,
      reasoning_content: 'Use ls.',
      tool_calls: [{ type: 'function', function: { name: 'bash', arguments: { cmd: 'ls' } }, id: 'c1' }],
    },
    { role: 'tool', content: 'a.txt', tool_call_id: 'c1' },
    { role: 'assistant', content: 'One file: a.txt.' },
  ]);
});

test('prompt as a turn list + completion (TRL prompt-completion, Nemotron input/output), and without completion a prompt', async () => {
  const r = await inspectFile(fx('prompt-completion-turns.jsonl'));
  assert.deepEqual(msgs(r, 0), [
    { role: 'system', content: 'Be terse.' },
    { role: 'user', content: '2*3?' },
    { role: 'assistant', content: '6' },
  ]);
  assert.deepEqual(msgs(r, 1), [
    { role: 'user', content: 'Capital of Peru?' },
    { role: 'assistant', content: 'Lima.', reasoning_content: "Peru's capital." },
  ]);
  assert.deepEqual(msgs(r, 2), [{ role: 'user', content: 'Write a limerick.' }]);
  assert.deepEqual(
    r.records.map((x) => x.needs_generation),
    [false, false, true],
  );
});

test('chat-completions logs: request + response choice, and an OpenAI batch request (prompt only)', async () => {
  const r = await inspectFile(fx('chat-completions-log.jsonl'));
  assert.deepEqual(msgs(r, 0), [
    { role: 'user', content: 'Hi?' },
    { role: 'assistant', content: 'Hello.' },
  ]);
  assert.deepEqual(r.records[0].tools, [{ type: 'function', function: { name: 'noop', parameters: {} } }]);
  assert.deepEqual(msgs(r, 1), [{ role: 'user', content: 'Name a fruit.' }]);
  assert.equal(r.records[1].id, 'req-1');
  assert.equal(r.records[1].needs_generation, true);
});

test('Capybara {input, output} pairs, problem/generated_solution, Cohere chat_history', async () => {
  assert.deepEqual(msgs(await inspectFile(fx('capybara.jsonl'))), [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
    { role: 'user', content: 'Bye' },
    { role: 'assistant', content: 'Goodbye!' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('math-problem-solution.jsonl'))), [
    { role: 'user', content: '1+2?' },
    { role: 'assistant', content: '1+2 = \\boxed{3}' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('cohere-chat-history.jsonl'))), [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello there.' },
  ]);
});

test('containers of rows: double-encoded JSON Lines, records keyed by id, datasets-server rows; Glaive v1 "sample" string', async () => {
  const d = await inspectFile(fx('double-encoded.jsonl'));
  assert.deepEqual(msgs(d), [
    { role: 'user', content: 'u' },
    { role: 'assistant', content: 'a' },
  ]);
  assert.deepEqual(d.records[0].notes, ['row_json_string']);
  const byId = await inspectFile(fx('records-by-id.json'));
  assert.deepEqual(
    byId.records.map((x) => [x.source.line, x.messages.map((m) => m.content)]),
    [
      [2, ['Q1?', 'A1']],
      [6, ['Q2?', 'A2']],
    ],
  );
  const ds = await inspectFile(fx('datasets-server.json'));
  assert.deepEqual(msgs(ds), [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hey' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('glaive-v1-sample.jsonl'))), [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
  ]);
});

test('HH transcript as the prompt of a preference row (TRL-processed HH), Llama-2 [INST] strings, Alpaca template strings', async () => {
  // The prompt's assistant turn is context (docs/loss-mask-rules.md "Targets"): only "chosen" is the answer taught.
  assert.deepEqual(msgs(await inspectFile(fx('hh-prompt-chosen.jsonl'))), [
    { role: 'user', content: 'What is tea?' },
    { role: 'assistant', content: 'A drink.', trainable: false },
    { role: 'user', content: 'Hot or cold?' },
    { role: 'assistant', content: 'Both.' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('llama2-text.jsonl'))), [
    { role: 'system', content: 'Be kind.' },
    { role: 'user', content: 'Hello' },
    { role: 'assistant', content: 'Hi there!' },
    { role: 'user', content: 'Bye' },
    { role: 'assistant', content: 'Goodbye.' },
  ]);
  assert.deepEqual(msgs(await inspectFile(fx('alpaca-text.jsonl'))), [
    { role: 'system', content: 'Below is an instruction that describes a task. Write a response that appropriately completes the request.' },
    { role: 'user', content: 'Translate to German\n\ndog' },
    { role: 'assistant', content: 'Hund' },
  ]);
});

test('prepare over every fixture file (Qwen3): written + set aside + dropped + errored = rows read, per file; flagged turns untrained', async () => {
  const files = readdirSync(DIR).map(fx);
  const res = await prepare({ inputs: files, outDir: tempDir(), allowEmpty: true });
  assert.equal(res.files.length, files.length);
  for (const f of res.files) {
    assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead, f.file);
    const ins = await inspectFile(f.file);
    assert.equal(f.rowsRead, ins.rows_read, f.file);
    assert.equal(f.format, ins.format, f.file);
  }
  const by = Object.fromEntries(res.files.map((f) => [f.file.split('/').pop()!, f]));
  // OpenAssistant flat exports are rebuilt into trees (formats-round2.test.ts): no message_fragment in a file of them.
  assert.equal(by['oasst-flat.jsonl'].dropped.message_fragment, undefined);
  assert.equal(by['damaged-values.jsonl'].rowsErrored, 1);
  assert.equal(by['damaged-values.jsonl'].rowsWritten, 3);
  assert.equal(by['hermes.jsonl'].rowsWritten, 2);
  assert.equal(by['openhands-events.json'].rowsWritten, 1);
  assert.equal(by['preference.jsonl'].rowsWritten, 5);
  // flags.jsonl: only a4 is trained — its tokens are "a4<|im_end|>" (+ the empty think block Qwen3 writes for the last turn).
  const flags = by['flags.jsonl'];
  assert.equal(flags.rowsWritten, 1);
  assert.ok(flags.trainableTokens > 0 && flags.trainableTokens <= 8, String(flags.trainableTokens));
});
