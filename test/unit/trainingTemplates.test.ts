/**
 * Real training templates (`test/fixtures/templates-training/`: TRL's `*_training.jinja`, each with `{% generation %}`
 * blocks; their renders equal Python jinja2's in templateConformance.test.ts) on their family's tokenizer: the records
 * follow the rules, whatever the blocks claim (docs/loss-mask-rules.md "Generation blocks"). For every record of the
 * probe conversations and a few more, checked from the renders alone:
 * - the text before each trained span is exactly the server's prompt `R(m[:i], gen=True)`, and the span does not start
 *   with the generation prompt's header (no prompt header trained);
 * - a span ends with the end of a special token, the turn's end-of-turn token (else the record is noted
 *   `no_end_of_turn_token`), and holds none of the model's stop tokens before it unless noted `stop_token_inside_turn`
 *   (nothing after a stop token trained: a turn that ends `<|end|>\n</s>` is trained through `<|end|>`);
 * - where the blocks of a turn hold other text than its trained span, the record is noted `generation_blocks_disagree`,
 *   and only then.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRecords } from '../../src/core/records/mask';
import type { ConversationRecords } from '../../src/core/records/maskTypes';
import { SpecialTokenFinder } from '../../src/core/records/specialTokens';
import { ChatTemplate } from '../../src/core/templates/template';
import { TemplateRenderError } from '../../src/core/templates/errors';
import { PROBES } from '../../src/core/templates/probeConversations';
import type { Message } from '../../src/core/types';
import { fixtureModelFolder, sharedTokenizer } from '../helpers';

const SET = join(__dirname, '..', 'fixtures', 'templates-training');
const NAMES = readdirSync(SET, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

/**
 * Serving templates of `test/fixtures/templates-extra/` (not among the 57 shared ones) checked the same way, each with the
 * fixture whose tokenizer files carry its special tokens (the ones without such a fixture, Llama-4, Hunyuan, InternLM2,
 * Kimi-K3, are left out; MiroThinker-v1 does not compile).
 */
const EXTRA = join(__dirname, '..', 'fixtures', 'templates-extra');
const EXTRA_FAMILIES: Record<string, string> = {
  'Apriel-1.6-15b-Thinker-fixed': 'Apriel-1.6-15b-Thinker-fixed',
  'DeepSeek-V3.2-llamacpp': 'deepseek-ai-DeepSeek-V3.2',
  'GigaChat3-10B-A1.8B': 'GigaChat3-10B-A1.8B',
  'LFM2.5-8B-A1B': 'LFM2.5-8B-A1B',
  'StepFun3.7-Flash': 'stepfun-ai-Step-3.5-Flash',
  'glm-4.5-llamacpp': 'GLM-4.6',
  'microsoft-Phi-4-mini-instruct-llamacpp': 'microsoft-Phi-3.5-mini-instruct',
  'mistralai-Mistral-Small-3.1-24B-Instruct-2503': 'Mistral-Small-3.2-24B-Instruct-2506',
  'moonshotai-Kimi-K2-Thinking': 'Kimi-K2-Thinking',
  'nvidia-Llama-3_3-Nemotron-Super-49B-v1_5': 'meta-llama-Llama-3.3-70B-Instruct',
  'unsloth-Apriel-1.5': 'unsloth-Apriel-1.5',
  'unsloth-MiniMax-M2': 'MiniMax-M2',
  'vllm-tool_chat_template_deepseekr1': 'deepseek-ai-DeepSeek-V3.1',
  'vllm-tool_chat_template_gemma3_pythonic': 'google-gemma-2-2b-it',
  'vllm-tool_chat_template_granite': 'ibm-granite-granite-3.3-2B-Instruct',
  'vllm-tool_chat_template_hermes': 'NousResearch-Hermes-3-Llama-3.1-8B-tool_use',
  'vllm-tool_chat_template_llama3.1_json': 'meta-llama-Llama-3.1-8B-Instruct',
  'vllm-tool_chat_template_minicpm3': 'Qwen-Qwen2.5-7B-Instruct',
  'vllm-tool_chat_template_olmo3': 'Qwen-Qwen2.5-7B-Instruct',
  'vllm-tool_chat_template_phi4_mini': 'microsoft-Phi-3.5-mini-instruct',
};

/** Where a checked template lives: the training set, else templates-extra. */
const templateFile = (name: string) => join(existsSync(join(SET, name)) ? SET : EXTRA, name, 'chat_template.jinja');

/** The fixture (test/fixtures/templates*) whose tokenizer files a checked template is used with. */
function familyOf(name: string): string {
  return existsSync(join(SET, name)) ? JSON.parse(readFileSync(join(SET, name, 'family.json'), 'utf8')).model_folder_from : EXTRA_FAMILIES[name];
}

/**
 * The tokenizer of a checked template's model folder, its family's tokenizer files: its special tokens, their template
 * variables and its stop tokens, which come from those files alone (the template is read from templateFile), so the
 * family's fixture folder gives the same and is loaded once.
 */
const tokenizerOf = (name: string) => sharedTokenizer(fixtureModelFolder(familyOf(name)));

const call = (id: string, name: string, args: string) => ({ id, type: 'function' as const, function: { name, arguments: args } });
const TOOLS = PROBES.find((p) => p.name === 'tool_call')!.tools;

/** The probe conversations, and shapes they lack: two calls in one turn, a turn quoting its end-of-turn token, text beside a call. */
const CONVERSATIONS: { name: string; messages: Message[]; tools?: unknown[] }[] = [
  ...PROBES.map((p) => ({ name: p.name, messages: p.messages, tools: p.tools })),
  {
    name: 'two_calls_with_text',
    tools: TOOLS,
    messages: [
      { role: 'system', content: 'Use tools.' },
      { role: 'user', content: 'Oslo and Rome?' },
      {
        role: 'assistant',
        content: 'Checking both.',
        tool_calls: [call('c1', 'get_weather', '{"city": "Oslo"}'), call('c2', 'get_weather', '{"city": "Rome"}')],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"temp_c": 4}' },
      { role: 'tool', tool_call_id: 'c2', content: '{"temp_c": 19}' },
      { role: 'assistant', content: 'Oslo 4 °C, Rome 19 °C.' },
    ],
  },
  {
    name: 'three_answers',
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Name a color.' },
      { role: 'assistant', content: 'Blue.' },
      { role: 'user', content: 'Another?' },
      { role: 'assistant', content: 'Green.' },
    ],
  },
];

/** The text of the `{% generation %}` blocks of turn `i`: those of `R(m[:i+1])` after those of `R(m[:i])`. */
function blockText(ct: ChatTemplate, messages: Message[], i: number, tools: unknown[] | undefined): string | null {
  if (!ct.hasGenerationBlocks) return null;
  const F = ct.renderWithGenerationSpans(messages.slice(0, i + 1), tools, { addGenerationPrompt: false });
  const before = ct.renderWithGenerationSpans(messages.slice(0, i), tools, { addGenerationPrompt: false }).spans;
  if (F.spans === null || before === null) return null;
  return F.spans
    .slice(before.length)
    .map(([a, b]) => F.text.slice(a, b))
    .join('');
}

/** One line per conversation of what the records are: checked, then printed for the report. */
interface Finding {
  conversation: string;
  records: number;
  notes: string[];
  blocks?: string;
  errors: string[];
}

/** Checks every record of one conversation; returns what was found and the broken invariants (empty when none). */
function check(name: string, ct: ChatTemplate, specials: SpecialTokenFinder, stops: string[], conv: (typeof CONVERSATIONS)[number]) {
  let r: ConversationRecords;
  try {
    r = buildRecords({ id: conv.name, source: { file: 'f', line: 1 }, messages: conv.messages, tools: conv.tools }, ct, specials, 'assistant', {
      stopTokens: stops,
    });
  } catch (e) {
    // The template raises on the conversation (Gemma and Cohere on a tool turn): the row is errored with its message.
    if (!(e instanceof TemplateRenderError)) throw e;
    return { finding: { conversation: conv.name, records: 0, notes: [], errors: [`template error: ${e.message}`] }, broken: [] };
  }
  const broken: string[] = [];
  const notes = new Set<string>(r.notes);
  const adapted = r.messages;
  const R = (n: number, gen: boolean) => ct.render(adapted.slice(0, n), conv.tools, { addGenerationPrompt: gen });
  let blocksDisagree = false;
  for (const rec of r.records) {
    rec.targets.forEach((i, k) => {
      const [a, b] = rec.spans[k];
      const trained = rec.text.slice(a, b);
      const where = `${name} ${conv.name} turn ${i}`;
      const P = R(i, true);
      if (rec.text.slice(0, a) !== P) broken.push(`${where}: the text before the span is not the server prompt`);
      const H = R(i, false);
      const G = P.startsWith(H) ? P.slice(H.length) : '';
      const header = G.trim();
      if (header && trained.trimStart().startsWith(header)) broken.push(`${where}: the span starts with the prompt header ${JSON.stringify(header)}`);
      const last = specials.tokenEndingAt(rec.text, b);
      // The turn's end-of-turn token: the last special token the template writes (a stop token where the closing run has one).
      if (last === null && !notes.has('no_end_of_turn_token'))
        broken.push(`${where}: the span ends with ${JSON.stringify(rec.text.slice(Math.max(a, b - 20), b))}, not a special token, and no note`);
      for (const s of stops)
        if (trained.slice(0, trained.length - (last === s ? s.length : 0)).includes(s) && !notes.has('stop_token_inside_turn'))
          broken.push(`${where}: stop token ${s} inside the span without a note`);
      const blocks = blockText(ct, adapted, i, conv.tools);
      if (blocks !== null && blocks !== trained) blocksDisagree = true;
    });
  }
  if (blocksDisagree !== notes.has('generation_blocks_disagree'))
    broken.push(
      `${name} ${conv.name}: blocks ${blocksDisagree ? 'disagree' : 'agree'} but the note is ${notes.has('generation_blocks_disagree') ? 'there' : 'missing'}`,
    );
  const finding: Finding = {
    conversation: conv.name,
    records: r.records.length,
    notes: [...notes].sort(),
    blocks: r.generationBlocks,
    errors: [...r.targetErrors.map((e) => e.reason), ...(r.rowError ? [r.rowError.code] : [])],
  };
  return { finding, broken };
}

test('training templates: the set is there (15 of TRL, 3 of Model-Optimizer, each with generation blocks)', () => {
  assert.equal(NAMES.length, 18);
  for (const n of NAMES) assert.match(readFileSync(join(SET, n, 'chat_template.jinja'), 'utf8'), /\{%-?\s*generation\s*-?%\}/, n);
});

test('hand-checked: a turn whose closing run holds a stop token before its last special token (Apriel-1.5 "<|end|>\\n</s>", stop <|end|>) is trained through the stop token', () => {
  const tok = tokenizerOf('unsloth-Apriel-1.5');
  assert.deepEqual(tok.stopTokens, ['<|end|>']);
  const ct = new ChatTemplate({ name: 'default', source: readFileSync(templateFile('unsloth-Apriel-1.5'), 'utf8') }, tok.specialTokenVars);
  const r = buildRecords(
    { id: 'a', source: { file: 'f', line: 1 }, messages: PROBES.find((p) => p.name === 'multi_turn')!.messages },
    ct,
    new SpecialTokenFinder(tok.specialTokens),
    'assistant',
    { stopTokens: tok.stopTokens },
  );
  assert.equal(r.records.length, 1);
  const rec = r.records[0];
  assert.ok(
    rec.text.endsWith(
      '<|user|>\nCapital of France?\n<|end|>\n<|assistant|>\nParis.\n<|end|>\n</s><|user|>\nAnd of Spain?\n<|end|>\n<|assistant|>\nMadrid.\n<|end|>\n</s>',
    ),
    rec.text,
  );
  // Before: "Paris.\n<|end|>\n</s>" — the model stops at <|end|> and never writes "\n</s>".
  assert.deepEqual(
    rec.spans.map(([a, b]) => rec.text.slice(a, b)),
    ['Paris.\n<|end|>', 'Madrid.\n<|end|>'],
  );
  assert.deepEqual(r.notes, []);
});

test('templates-extra: every one is checked or has a reason not to be', () => {
  const all = readdirSync(EXTRA, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const without = [
    'Kimi-K3',
    'MiroThinker-v1',
    'meta-llama-Llama-4-transformers',
    'vllm-tool_chat_template_hunyuan_a13b',
    'vllm-tool_chat_template_internlm2_tool',
  ];
  assert.deepEqual(all.filter((n) => !(n in EXTRA_FAMILIES)).sort(), without.sort());
});

for (const name of [...NAMES, ...Object.keys(EXTRA_FAMILIES)]) {
  test(`${existsSync(join(SET, name)) ? 'training' : 'serving'} template ${name}: no prompt header or text after the end-of-turn token trained, every disagreeing block noted`, () => {
    const tok = tokenizerOf(name);
    const ct = new ChatTemplate({ name: 'default', source: readFileSync(templateFile(name), 'utf8') }, tok.specialTokenVars);
    const specials = new SpecialTokenFinder(tok.specialTokens);
    const broken: string[] = [];
    for (const conv of CONVERSATIONS) {
      const c = check(name, ct, specials, tok.stopTokens, conv);
      broken.push(...c.broken);
      const f = c.finding;
      console.log(
        `# ${name} ${f.conversation}: ${f.records} record(s), notes ${f.notes.join(',') || '-'}${f.errors.length ? `, errors ${f.errors.join(',')}` : ''}${f.blocks ? `\n#   blocks: ${f.blocks}` : ''}`,
      );
    }
    assert.deepEqual(broken, []);
  });
}

/** One probe conversation through a training template: its records' trained texts, its notes and the first block difference. */
function probeRecords(name: string, probe: string) {
  const tok = tokenizerOf(name);
  const ct = new ChatTemplate({ name: 'default', source: readFileSync(templateFile(name), 'utf8') }, tok.specialTokenVars);
  const conv = CONVERSATIONS.find((c) => c.name === probe)!;
  const r = buildRecords(
    { id: probe, source: { file: 'f', line: 1 }, messages: conv.messages, tools: conv.tools },
    ct,
    new SpecialTokenFinder(tok.specialTokens),
    'assistant',
    {
      stopTokens: tok.stopTokens,
    },
  );
  return { r, trained: r.records.flatMap((rec) => rec.spans.map(([a, b]) => rec.text.slice(a, b))) };
}

test("hand-checked: TRL's Qwen3 training template puts the \\n after <|im_end|> in its blocks; the rules end the span at <|im_end|>", () => {
  const { r, trained } = probeRecords('trl-qwen3_training', 'single_turn');
  assert.equal(
    r.records[0].text,
    '<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nParis.<|im_end|>\n',
  );
  assert.deepEqual(trained, ['<think>\n\n</think>\n\nParis.<|im_end|>']);
  assert.deepEqual(r.notes, ['generation_blocks_disagree']);
  assert.equal(
    r.generationBlocks,
    'assistant turn 1: its generation blocks train "\\n", text the template writes after the turn\'s end-of-turn token, which the rules leave untrained',
  );
});

test("hand-checked: TRL's Qwen3.5 thinking training template puts the server's pre-filled <think>\\n in its blocks; the rules keep it prompt", () => {
  const { r, trained } = probeRecords('trl-qwen3_5_think_training', 'reasoning');
  assert.equal(r.records.length, 1);
  assert.ok(r.records[0].text.includes('<|im_start|>assistant\n<think>\nAdd two and two.\n</think>\n\n4<|im_end|>\n'), r.records[0].text);
  assert.deepEqual(trained, ['Add two and two.\n</think>\n\n4<|im_end|>', 'Four times three is twelve.\n</think>\n\n12<|im_end|>']);
  assert.deepEqual(r.notes, ['generation_blocks_disagree']);
  assert.equal(
    r.generationBlocks,
    'assistant turn 1: its generation blocks train "<think>\\n", part of the prompt the server sends (the turn\'s header or what the generation prompt pre-fills), which the rules leave untrained',
  );
});

test("hand-checked: TRL's gpt-oss training template puts the <|start|>assistant header in its blocks; the rules train a tool call from its recipient through <|call|>", () => {
  const { r, trained } = probeRecords('trl-gptoss_training', 'tool_call');
  assert.equal(r.records.length, 1);
  assert.deepEqual(trained, [
    ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>',
    '<|channel|>final<|message|>It is 4 °C in Oslo.<|return|>',
  ]);
  assert.ok(
    r.records[0].text.endsWith(
      '<|start|>user<|message|>Weather in Oslo?<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>' +
        '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"{\\"temp_c\\": 4}"<|end|><|start|>assistant<|channel|>final<|message|>It is 4 °C in Oslo.<|return|>',
    ),
    r.records[0].text,
  );
  assert.deepEqual(r.notes, ['generation_blocks_disagree']);
  assert.equal(
    r.generationBlocks,
    'assistant turn 1: its generation blocks train "<|start|>assistant", part of the prompt the server sends (the turn\'s header or what the generation prompt pre-fills), which the rules leave untrained',
  );
});

test("hand-checked: TRL's Phi-3.5 training template puts the \\n<|endoftext|> it writes after every conversation in its blocks; the difference names it so", () => {
  const { r, trained } = probeRecords('trl-phi3_5_training', 'single_turn');
  assert.deepEqual(trained, ['Paris.<|end|>']);
  assert.ok(r.records[0].text.endsWith('<|user|>\nWhat is the capital of France?<|end|>\n<|assistant|>\nParis.<|end|>'), r.records[0].text);
  assert.deepEqual([...r.notes].sort(), ['generation_blocks_disagree', 'text_after_last_turn']);
  // Before: "the rules train "Paris.<|end|>" (its reasoning put back where the model writes it)" — no reasoning was restored.
  assert.equal(
    r.generationBlocks,
    'assistant turn 1: its generation blocks train "\\n<|endoftext|>", text the template writes after the turn\'s end-of-turn token, which the rules leave untrained',
  );
});

test("hand-checked: Model-Optimizer's Qwen3 training template leaves <|im_end|> out of its blocks; the rules train it", () => {
  const { r, trained } = probeRecords('modelopt-qwen3_chat_template_train', 'single_turn');
  assert.equal(
    r.records[0].text,
    '<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nParis.<|im_end|>\n',
  );
  assert.deepEqual(trained, ['<think>\n\n</think>\n\nParis.<|im_end|>']);
  assert.deepEqual(r.notes, ['generation_blocks_disagree']);
  assert.equal(r.generationBlocks, 'assistant turn 1: the rules train "<|im_end|>", which its generation blocks leave out');
});

test("hand-checked: Model-Optimizer's gpt-oss training template leaves the tool call out of its blocks; the rules train it through <|call|>", () => {
  const { r, trained } = probeRecords('modelopt-gpt-oss-20b_chat_template_train', 'tool_call');
  assert.equal(r.records.length, 1);
  assert.deepEqual(trained, [
    ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>',
    '<|channel|>final<|message|>It is 4 °C in Oslo.<|return|>',
  ]);
  assert.deepEqual(r.targetErrors, []);
  assert.deepEqual(r.notes, ['generation_blocks_disagree']);
  assert.equal(
    r.generationBlocks,
    'assistant turn 1: the rules train " to=functions.get_weather<|channel|>commentary json<|message…", which its generation blocks leave out',
  );
});
