/**
 * docs/loss-mask-rules.md (v1.5): `{% generation %}` blocks render as no-op block tags (jinja2's whitespace
 * control) and are a claim checked against the spans the rules derive (`generation_blocks_disagree`), never the
 * rule; a stop token inside a trained span; templates that always write their generation prompt.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRecords, maskFromSpans } from '../../src/core/records/mask';
import type { ConversationRecords, TextRecord } from '../../src/core/records/maskTypes';
import { SpecialTokenFinder } from '../../src/core/records/specialTokens';
import { ChatTemplate } from '../../src/core/templates/template';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import type { TargetTokenizer } from '../../src/core/tokenizers/types';
import type { Message } from '../../src/core/types';
import { checkTemplate } from '../../src/core/records/checkTemplate';
import { buildModelFolder, fixtureModelFolder, sharedTokenizer, TEMPLATE_FIXTURES, TEMPLATE_FIXTURES_MORE } from '../helpers';

const FIX = join(__dirname, '..', 'fixtures');

/** A real fixture template (test/fixtures/templates), optionally edited (generation tags put in), on its model folder. */
const tokenizers = new Map<string, TargetTokenizer>();
const fixtureDir = (name: string) => (existsSync(join(TEMPLATE_FIXTURES, name)) ? join(TEMPLATE_FIXTURES, name) : join(TEMPLATE_FIXTURES_MORE, name));

/** A fixture probe as the Python reference has it: the messages the template is given, its tools, and `R(messages[:n], gen)`. */
function reference(name: string, probe: string) {
  const ref = JSON.parse(readFileSync(join(fixtureDir(name), 'renders.json'), 'utf8'));
  const p = ref.probes.find((x: { id: string }) => x.id === probe);
  return {
    messages: p.messages as Message[],
    tools: (p.tools ?? undefined) as unknown[] | undefined,
    render(n: number, gen: boolean): string {
      const r = p.renders.find((x: { n_messages: number; add_generation_prompt: boolean }) => x.n_messages === n && x.add_generation_prompt === gen);
      assert.equal(typeof r?.text, 'string', `${name} ${probe} ${n} ${gen}`);
      return r.text;
    },
  };
}
function fixture(name: string, edit: (source: string) => string = (s) => s, kwargs: Record<string, unknown> = {}) {
  let tok = tokenizers.get(name);
  if (!tok) tokenizers.set(name, (tok = sharedTokenizer(fixtureModelFolder(name))));
  const ct = new ChatTemplate(
    { name: 'default', source: edit(readFileSync(join(fixtureDir(name), 'chat_template.jinja'), 'utf8')) },
    tok.specialTokenVars,
    kwargs,
  );
  return {
    tok,
    ct,
    build: (messages: Message[], tools?: unknown[]): ConversationRecords =>
      buildRecords({ id: 't', source: { file: 'f', line: 1 }, messages, tools }, ct, new SpecialTokenFinder(tok.specialTokens), 'assistant', {
        stopTokens: tok.stopTokens,
      }),
  };
}

/** `source` with `from` replaced by `to`; fails when `from` is not in it exactly once (the edit must hit the real template). */
function edit(from: string, to: string): (source: string) => string {
  return (source) => {
    assert.equal(source.split(from).length, 2, `the template holds ${JSON.stringify(from)} once`);
    return source.replace(from, to);
  };
}

/** The texts of the tokens with loss_mask 1 (a token is trained when its first character lies in a span). */
function trainedTokens(tok: TargetTokenizer, rec: TextRecord): string[] {
  const enc = tok.encode(rec.text);
  const mask = maskFromSpans(enc.starts, rec.spans);
  const out: string[] = [];
  enc.starts.forEach((s, k) => {
    if (mask[k]) out.push(rec.text.slice(s, k + 1 < enc.starts.length ? enc.starts[k + 1] : rec.text.length));
  });
  return out;
}

const spanTexts = (rec: TextRecord) => rec.spans.map(([a, b]) => rec.text.slice(a, b));

// ------------------------------------------------------------------------------ generation tags render as no-ops

interface JinjaCase {
  gap: string;
  name: string;
  template: string;
  expected: { text?: string };
}
const jinjaCases: { defaults: { msgs: Message[] }; cases: JinjaCase[] } = JSON.parse(readFileSync(join(FIX, 'jinja', 'cases.json'), 'utf8'));

test('generation tags through the chat-template path render as jinja2 renders them (trim_blocks, lstrip_blocks, {%-)', () => {
  const cases = jinjaCases.cases.filter((c) => c.gap === 'generation tags are block tags that render nothing');
  assert.ok(cases.length >= 7);
  for (const c of cases) {
    // The cases read the conversation as `msgs` (cases.json defaults); a chat template reads it as `messages`.
    const ct = new ChatTemplate({ name: 'default', source: c.template.replace(/\bmsgs\b/g, 'messages') }, {});
    assert.equal(ct.render(jinjaCases.defaults.msgs, undefined, { addGenerationPrompt: false }), c.expected.text, c.name);
  }
  // The blocks' positions survive: the ChatML case's block holds the assistant text, its end-of-turn token and the newline after it.
  const chatml = new ChatTemplate({ name: 'default', source: cases[3].template.replace(/\bmsgs\b/g, 'messages') }, {});
  const { text, spans } = chatml.renderWithGenerationSpans(jinjaCases.defaults.msgs, undefined, { addGenerationPrompt: false });
  assert.deepEqual(
    spans?.map(([a, b]) => text.slice(a, b)),
    ['b<|im_end|>\n'],
  );
});

// ------------------------------------------------------------------- generation blocks are a claim, never the rule

const CHAT: Message[] = [
  { role: 'user', content: 'Capital of France?' },
  { role: 'assistant', content: 'Paris.' },
  { role: 'user', content: 'And of Italy?' },
  { role: 'assistant', content: 'Rome.' },
];
/** Qwen2.5-7B-Instruct's line for a plain turn; the training forms below write an assistant turn with generation tags instead. */
const QWEN25_TURN = "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}";
const qwen25Training = (assistant: string) => edit(QWEN25_TURN, `{%- if message.role == 'assistant' %}${assistant}{%- else %}${QWEN25_TURN}{%- endif %}`);
const QWEN25_SYSTEM = '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n';

test('generation blocks: three training forms of the real Qwen2.5 template train exactly what the inference template trains, each noted with its first difference', () => {
  const plain = fixture('Qwen-Qwen2.5-7B-Instruct').build(CHAT);
  assert.deepEqual(plain.notes, []);
  assert.equal(plain.records.length, 1);
  const text =
    QWEN25_SYSTEM +
    '<|im_start|>user\nCapital of France?<|im_end|>\n<|im_start|>assistant\nParis.<|im_end|>\n<|im_start|>user\nAnd of Italy?<|im_end|>\n<|im_start|>assistant\nRome.<|im_end|>\n';
  assert.equal(plain.records[0].text, text);
  assert.deepEqual(spanTexts(plain.records[0]), ['Paris.<|im_end|>', 'Rome.<|im_end|>']);
  const forms: [kind: string, assistant: string, difference: string | undefined][] = [
    [
      // Model-Optimizer's kind: the end-of-turn token outside the block (the model would never learn to stop).
      'end-of-turn token left out',
      "{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message.content }}{% endgeneration %}{{- '<|im_end|>\\n' }}",
      'assistant turn 1: the rules train "<|im_end|>", which its generation blocks leave out',
    ],
    [
      // TRL's Qwen3 kind: the newline after <|im_end|> inside the block (the model never writes it).
      'newline after the end-of-turn token',
      "{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message.content + '<|im_end|>\\n' }}{% endgeneration %}",
      `assistant turn 1: its generation blocks train "\\n", text the template writes after the turn's end-of-turn token, which the rules leave untrained`,
    ],
    [
      // A vendor's kind: the turn's header inside the block (the server writes it, the model does not).
      'header inside the block',
      "{% generation %}{{- '<|im_start|>assistant\\n' + message.content + '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}",
      `assistant turn 1: its generation blocks train "<|im_start|>assistant\\n", part of the prompt the server sends (the turn's header or what the generation prompt pre-fills), which the rules leave untrained`,
    ],
    ['blocks that agree', "{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message.content + '<|im_end|>' }}{% endgeneration %}{{- '\\n' }}", undefined],
  ];
  for (const [kind, assistant, difference] of forms) {
    const f = fixture('Qwen-Qwen2.5-7B-Instruct', qwen25Training(assistant));
    assert.equal(f.ct.hasGenerationBlocks, true, kind);
    const r = f.build(CHAT);
    assert.deepEqual(r.records, plain.records, `${kind}: the records are the inference template's`);
    assert.deepEqual(r.notes, difference ? ['generation_blocks_disagree'] : [], kind);
    assert.equal(r.generationBlocks, difference, kind);
    assert.deepEqual(trainedTokens(f.tok, r.records[0]), ['Paris', '.', '<|im_end|>', 'R', 'ome', '.', '<|im_end|>'], kind);
  }
});

test('generation blocks: text holding the private-use characters the block markers use is rendered and trained as written, the claim not checked', () => {
  // U+E000 / U+E001 are ordinary characters of the data (private-use glyph fonts, some tokenizers' byte maps).
  const odd: Message[] = [
    { role: 'user', content: 'Draw \uE000 and \uE001.' },
    { role: 'assistant', content: 'Here: \uE001\uE000.' },
  ];
  const plain = fixture('Qwen-Qwen2.5-7B-Instruct').build(odd);
  const f = fixture(
    'Qwen-Qwen2.5-7B-Instruct',
    qwen25Training("{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message.content }}{% endgeneration %}{{- '<|im_end|>\\n' }}"),
  );
  const r = f.build(odd);
  assert.ok(r.records[0].text.includes('<|im_start|>user\nDraw \uE000 and \uE001.<|im_end|>'));
  assert.deepEqual(r.records, plain.records);
  assert.deepEqual(spanTexts(r.records[0]), ['Here: \uE001\uE000.<|im_end|>']);
  // Where the blocks cannot be told from the text there is no claim to check (and no false difference).
  assert.deepEqual(r.notes, []);
  assert.equal(f.ct.renderWithGenerationSpans(odd, undefined, { addGenerationPrompt: false }).spans, null);
  assert.deepEqual(f.ct.renderWithGenerationSpans(CHAT, undefined, { addGenerationPrompt: false }).spans?.length, 2);
});

test("generation blocks: a gpt-oss training form whose blocks skip the tool calls; the rules train the call through <|call|>, and the blocks' gap is the first difference", () => {
  const tools = [
    { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ];
  const messages: Message[] = [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
    { role: 'tool', tool_call_id: 'c1', content: '{"temp_c": 18}' },
    { role: 'assistant', content: 'It is 18 C.' },
  ];
  const finalReturn = '{{- "<|start|>assistant<|channel|>final<|message|>" + message.content + "<|return|>" }}';
  const finalEnd = '{{- "<|start|>assistant<|channel|>final<|message|>" + message.content + "<|end|>" }}';
  const block = (end: string) => `{{- "<|start|>assistant<|channel|>final<|message|>" }}{% generation %}{{- message.content + "${end}" }}{% endgeneration %}`;
  const training = (s: string) => edit(finalEnd, block('<|end|>'))(edit(finalReturn, block('<|return|>'))(s));
  const plain = fixture('openai-gpt-oss-120b').build(messages, tools);
  const f = fixture('openai-gpt-oss-120b', training);
  const r = f.build(messages, tools);
  assert.deepEqual(r.records, plain.records);
  assert.equal(r.records.length, 1);
  assert.deepEqual(spanTexts(r.records[0]), [
    ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>',
    '<|channel|>final<|message|>It is 18 C.<|return|>',
  ]);
  // The prompt of the call ends with the generation prompt "<|start|>assistant"; the answer's with the tool result and "<|start|>assistant".
  assert.ok(r.records[0].text.startsWith('<|start|>system<|message|>'));
  assert.ok(r.records[0].text.includes('<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant to=functions.get_weather'));
  assert.ok(
    r.records[0].text.endsWith(
      '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"{\\"temp_c\\": 18}"<|end|><|start|>assistant<|channel|>final<|message|>It is 18 C.<|return|>',
    ),
  );
  assert.deepEqual(r.notes, ['generation_blocks_disagree']);
  assert.equal(
    r.generationBlocks,
    'assistant turn 1: the rules train " to=functions.get_weather<|channel|>commentary json<|message…", which its generation blocks leave out',
  );
  const trained = trainedTokens(f.tok, r.records[0]);
  // Mask 1 from the call's " to" (the prompt ends "<|start|>assistant") through <|call|>, then from the answer's channel through <|return|>.
  assert.deepEqual(trained, [
    ' to',
    '=',
    'functions',
    '.get',
    '_weather',
    '<|channel|>',
    'comment',
    'ary',
    ' json',
    '<|message|>',
    '{"',
    'city',
    '":',
    ' "',
    'Paris',
    '"}',
    '<|call|>',
    '<|channel|>',
    'final',
    '<|message|>',
    'It',
    ' is',
    ' ',
    '1',
    '8',
    ' C',
    '.',
    '<|return|>',
  ]);
});

test('generation blocks: an R1-Distill training form keeps the server prompt\'s pre-filled "<think>\\n" as prompt and trains the reasoning after it (case 2b), which its blocks never hold', () => {
  // DeepSeek-R1-Distill-Qwen-32B's final-answer line, with the text after "<｜Assistant｜>" in a block.
  const answer = "{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}";
  const f = fixture(
    'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B',
    edit(answer, "{{'<｜Assistant｜>'}}{% generation %}{{content + '<｜end▁of▁sentence｜>'}}{% endgeneration %}"),
    {
      enable_thinking: true,
    },
  );
  const r = f.build([
    { role: 'user', content: 'Is 17 prime?' },
    { role: 'assistant', content: '<think>\n17 has no divisors other than 1 and 17.\n</think>\n\nYes, 17 is prime.' },
  ]);
  assert.equal(r.records.length, 1);
  assert.equal(
    r.records[0].text,
    '<｜begin▁of▁sentence｜><｜User｜>Is 17 prime?<｜Assistant｜><think>\n17 has no divisors other than 1 and 17.\n</think>\n\nYes, 17 is prime.<｜end▁of▁sentence｜>',
  );
  assert.deepEqual(spanTexts(r.records[0]), ['17 has no divisors other than 1 and 17.\n</think>\n\nYes, 17 is prime.<｜end▁of▁sentence｜>']);
  // The template renders no reasoning_content: the inline block is kept as written (and this template drops it itself).
  assert.deepEqual([...r.notes].sort(), ['generation_blocks_disagree', 'inline_think_kept', 'prefill_not_rendered', 'reasoning_restored']);
  assert.equal(
    r.generationBlocks,
    'assistant turn 1: the rules train "17 has no divisors other than 1 and 17.\\n</think>\\n\\nYes, 17 is…" (its reasoning put back where the model writes it); its generation blocks hold "\\n\\nYes, 17 is prime.<｜end▁of▁sentence｜>"',
  );
});

test('check-template on a training template: each probe where its blocks and the rules disagree is a warning with the first difference', () => {
  const dir = join(TEMPLATE_FIXTURES, 'Qwen-Qwen2.5-7B-Instruct');
  const source = qwen25Training("{{- '<|im_start|>assistant\\n' }}{% generation %}{{- message.content }}{% endgeneration %}{{- '<|im_end|>\\n' }}")(
    readFileSync(join(dir, 'chat_template.jinja'), 'utf8'),
  );
  const folder = buildModelFolder({
    template: source,
    tokenizerConfig: JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')),
    generationConfig: JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8')),
  });
  const check = checkTemplate(loadTokenizer(folder));
  const found = check.warnings.filter((w) => w.code === 'generation_blocks_disagree');
  const endLeftOut = (turn: number) =>
    `assistant turn ${turn}: the rules train "<|im_end|>", which its generation blocks leave out (the records follow the rules)`;
  // This template's tool-call branch has no block at all: the call is what the rules train and the blocks never do.
  const callLeftOut =
    'assistant turn 1: the rules train "<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"O…", which its generation blocks leave out (the records follow the rules)';
  assert.deepEqual(
    found.map((w) => [w.probe, w.message]),
    [
      ['single_turn', endLeftOut(1)],
      ['multi_turn', endLeftOut(2)],
      ['tool_call', callLeftOut],
      ['reasoning', endLeftOut(1)],
      ['agent_reasoning', callLeftOut],
      ['trailing_tool_result', callLeftOut],
    ],
  );
  // The trained text is the rules': through <|im_end|>, as the inference template gives.
  assert.deepEqual(check.endOfTurnTrained, ['<|im_end|>']);
});

// ------------------------------------------------------------------------ a stop token inside a trained span

test("GLM-4.6: a turn that quotes <|user|> (a stop token) ends where the template ends it, at the next turn's <|user|>, and is noted stop_token_inside_turn", () => {
  const glm = fixture('GLM-4.6');
  const prompt = '[gMASK]<sop><|user|>\nWhich marker?<|assistant|>';
  const quoted = glm.build([
    { role: 'user', content: 'Which marker?' },
    { role: 'assistant', content: 'Type <|user|> to start a turn.' },
  ]);
  assert.deepEqual([...quoted.notes].sort(), ['stop_token_from_next_turn', 'stop_token_inside_turn']);
  assert.equal(quoted.records[0].text, `${prompt}\n<think></think>\nType <|user|> to start a turn.<|user|>`);
  assert.deepEqual(quoted.records[0].spans, [[prompt.length, quoted.records[0].text.length]]);
  assert.deepEqual(trainedTokens(glm.tok, quoted.records[0]), [
    '\n',
    '<think>',
    '</think>',
    '\n',
    'Type',
    ' ',
    '<|user|>',
    ' to',
    ' start',
    ' a',
    ' turn',
    '.',
    '<|user|>',
  ]);
  // <|assistant|> is no stop token: spelled in the text it is trained through, and the turn still ends at the next <|user|>.
  const other = glm.build([
    { role: 'user', content: 'Which marker?' },
    { role: 'assistant', content: 'Type <|assistant|> for me.' },
  ]);
  assert.deepEqual(other.notes, ['stop_token_from_next_turn']);
  assert.deepEqual(spanTexts(other.records[0]), ['\n<think></think>\nType <|assistant|> for me.<|user|>']);
  // Without the quote nothing is noted, and the span is the same shape.
  const clean = glm.build([
    { role: 'user', content: 'Which marker?' },
    { role: 'assistant', content: 'Type the role marker.' },
  ]);
  assert.deepEqual(clean.notes, ['stop_token_from_next_turn']);
  assert.deepEqual(spanTexts(clean.records[0]), ['\n<think></think>\nType the role marker.<|user|>']);
});

// ------------------------------------------------------------- templates that always write their generation prompt

const R7B = 'CohereForAI-c4ai-command-r7b-12-2024-tool_use';
const RPLUS = 'CohereForAI-c4ai-command-r-plus-tool_use';

test('Command-R7B tool_use writes its generation prompt also without one: the turn is taken from between the history and it, and trained after the server prompt', () => {
  const f = fixture(R7B);
  const single = reference(R7B, 'p1_single');
  // The renders show it: R(m[:1]) with and without the generation prompt are the same text, and R(m[:2]) ends with it too.
  const gp = '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|><|END_THINKING|>';
  assert.equal(single.render(1, false), single.render(1, true));
  assert.ok(single.render(1, false).endsWith(`What is 2+2?<|END_OF_TURN_TOKEN|>${gp}`));
  assert.ok(single.render(2, false).endsWith(`<|START_RESPONSE|>2+2 equals 4.<|END_RESPONSE|><|END_OF_TURN_TOKEN|>${gp}`));
  const r = f.build(single.messages, single.tools);
  assert.deepEqual(r.notes, ['text_after_last_turn']);
  assert.deepEqual(r.targetErrors, []);
  assert.equal(r.records.length, 1);
  const P = single.render(1, true);
  const turn = '<|START_RESPONSE|>2+2 equals 4.<|END_RESPONSE|><|END_OF_TURN_TOKEN|>';
  assert.equal(r.records[0].text, P + turn);
  assert.deepEqual(r.records[0].spans, [[P.length, P.length + turn.length]]);
  assert.deepEqual(trainedTokens(f.tok, r.records[0]), [
    '<|START_RESPONSE|>',
    '2',
    '+',
    '2',
    ' equals',
    ' ',
    '4',
    '.',
    '<|END_RESPONSE|>',
    '<|END_OF_TURN_TOKEN|>',
  ]);

  // A tool call and the answer after its result: one record, each turn ending at its <|END_OF_TURN_TOKEN|> (the
  // generation prompt after it, which the case-1 completion used to train as the turn's end, is prompt).
  const tool = reference(R7B, 'p3_tool_call');
  const t = f.build(tool.messages, tool.tools);
  assert.deepEqual(t.notes, ['text_after_last_turn']);
  assert.equal(t.records.length, 1);
  const call =
    '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>';
  const answer = '<|START_RESPONSE|>It is 18 C and clear in Paris.<|END_RESPONSE|><|END_OF_TURN_TOKEN|>';
  assert.deepEqual(spanTexts(t.records[0]), [call, answer]);
  assert.equal(t.records[0].text, tool.render(3, true) + answer);
  assert.ok(tool.render(3, true).startsWith(tool.render(1, true) + call));
  // A trailing placeholder there is a prompt to generate.
  const ph = reference(R7B, 'p9_trailing_placeholder');
  const p = f.build(ph.messages, ph.tools);
  assert.deepEqual(p.prompt, [ph.messages[0]]);
  assert.deepEqual(p.records, []);
});

test('Command-R+ tool_use writes an instruction turn after every conversation: the answer is trained after the server prompt (instruction, then <|CHATBOT_TOKEN|>); a placeholder row is a prompt', () => {
  const f = fixture(RPLUS);
  const tool = reference(RPLUS, 'p3_tool_call');
  const instruction = "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>Write 'Action:' followed by a json-formatted list of actions";
  // Both renders end with the instruction turn; the answer is written before it.
  for (const n of [3, 4]) assert.ok(tool.render(n, false).includes(instruction));
  assert.ok(tool.render(4, false).includes(`<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>It is 18 C and clear in Paris.<|END_OF_TURN_TOKEN|>${instruction}`));
  const r = f.build(tool.messages, tool.tools);
  assert.deepEqual([...r.notes].sort(), ['no_end_of_turn_token', 'text_after_last_turn']);
  assert.deepEqual(r.targetErrors, []);
  // Each turn is its own record: the server's prompt of the answer has the instruction after the call, not before it.
  assert.equal(r.records.length, 2);
  const action = '\nAction:\n```json\n[\n    {\n        "tool_name": "get_weather",\n        "parameters": "{\\"city\\": \\"Paris\\"}"\n    }\n]```\n';
  // The call: this template writes no end-of-turn token after it, so it is trained to its end (no_end_of_turn_token).
  assert.equal(r.records[0].text, tool.render(1, true) + action);
  assert.deepEqual(spanTexts(r.records[0]), [action]);
  const answer = 'It is 18 C and clear in Paris.<|END_OF_TURN_TOKEN|>';
  assert.equal(r.records[1].text, tool.render(3, true) + answer);
  assert.ok(tool.render(3, true).endsWith(']```<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>'));
  assert.deepEqual(spanTexts(r.records[1]), [answer]);
  assert.deepEqual(trainedTokens(f.tok, r.records[1]), ['It', ' is', ' ', '1', '8', ' C', ' and', ' clear', ' in', ' Paris', '.', '<|END_OF_TURN_TOKEN|>']);
  const ph = reference(RPLUS, 'p9_trailing_placeholder');
  const p = f.build(ph.messages, tool.tools);
  assert.deepEqual(p.prompt, [ph.messages[0]]);
});

test('tool-call arguments: a template that writes objects with tojson(ensure_ascii=True) gets objects (what a server renders), not the re-dumped string', () => {
  // Reka-Edge writes a string verbatim and an object as `tojson(ensure_ascii=True)`: re-dumping would write "λ" where the server writes "\u03bb".
  const reka = fixture('Reka-Edge').ct;
  assert.equal(reka.objectToolArguments, true);
  assert.equal(reka.verbatimStringArguments, false);
  const text = reka.render(
    reka.adaptMessages([
      { role: 'user', content: 'Search.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: '{"q": "λ calculus", "n": 1.0}' } }],
      },
    ]),
    undefined,
    { addGenerationPrompt: false },
  );
  assert.ok(text.includes('{"name": "search", "arguments": {"q": "\\u03bb calculus", "n": 1'), text);
  // Qwen3's `is string` branch writes with tojson (ensure_ascii off): the re-dumped string is what the server writes, and keeps 1.0.
  assert.equal(fixture('Qwen-Qwen3-0.6B').ct.verbatimStringArguments, true);
});

test('case 2b: a pre-fill that shares its first letters with the answer (Apriel-1.6: "Here are my reasoning steps:\\n", "Hello!") leaves the prompt where the answer starts', () => {
  const f = fixture('Apriel-1.6-15b-Thinker-fixed');
  const r = f.build([
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
  ]);
  assert.equal(r.records.length, 1);
  // The server's prompt (its pre-fill untouched), then the whole answer: not "llo!" after the pre-fill's "He".
  assert.ok(r.records[0].text.endsWith('<|begin_user|>\nHi\n<|begin_assistant|>\nHere are my reasoning steps:\nHello!\n<|end|>'), r.records[0].text);
  assert.deepEqual(spanTexts(r.records[0]), ['Hello!\n<|end|>']);
  assert.deepEqual(trainedTokens(f.tok, r.records[0]), ['Hello', '!\n', '<|end|>']);
  assert.deepEqual([...r.notes].sort(), ['prefill_not_rendered', 'stop_token_from_next_turn']);
  // Reasoning written without tags (reasoning, then "[BEGIN FINAL RESPONSE]") is in the completion: not reasoning_not_rendered.
  const t = f.build([
    { role: 'user', content: 'Think.' },
    { role: 'assistant', reasoning_content: 'Hmm, nothing to say.', content: 'Done.' },
  ]);
  assert.deepEqual(spanTexts(t.records[0]), ['Hmm, nothing to say.\n[BEGIN FINAL RESPONSE]\nDone.\n<|end|>']);
  assert.deepEqual([...t.notes].sort(), ['prefill_not_rendered', 'stop_token_from_next_turn']);
});
