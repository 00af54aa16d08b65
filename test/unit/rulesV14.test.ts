/**
 * docs/loss-mask-rules.md (v1.4) around the masks: the model's stop tokens from
 * `generation_config.json` (both tokenizer loaders), the probe decisions of
 * "What the template is given" on real templates (test/fixtures/templates), the
 * template adapter, and `prepare --reasoning` through the run (one thread and
 * the worker pool), the report and its notes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { ChatTemplate } from '../../src/core/templates/template';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { TokenizerLoadError } from '../../src/core/tokenizers/types';
import type { Message } from '../../src/core/types';
import { CODES, isDataChanging } from '../../src/core/codes';
import { dataChangingCodes } from '../../src/core/run/reports/status';
import { buildModelFolder, fixtureModelFolder, kimiModelFolder, lenmlModelDir, sharedTokenizer, TEMPLATE_FIXTURES, writeJsonl } from '../helpers';

const FIX = join(__dirname, '..', 'fixtures');
const fixtureTemplate = (name: string, kwargs: Record<string, unknown> = {}) => {
  const tok = sharedTokenizer(fixtureModelFolder(name));
  return new ChatTemplate(tok.templates[0], tok.specialTokenVars, kwargs);
};

// ----------------------------------------------------------------------------------- stop tokens

test('stop tokens: generation_config.json eos_token_id as a list or a number, else the eos_token; a bad value names the file', () => {
  const template = '{{ messages[0].content }}';
  const list = loadTokenizer(fixtureModelFolder('GLM-4.6'));
  assert.deepEqual(list.stopTokens, ['<|endoftext|>', '<|user|>', '<|observation|>']);
  assert.equal(list.stopTokensSource, 'generation_config');
  const one = loadTokenizer(buildModelFolder({ template, generationConfig: { eos_token_id: 151645 } }));
  assert.deepEqual(one.stopTokens, ['<|im_end|>']);
  const none = loadTokenizer(buildModelFolder({ template }));
  assert.deepEqual([none.stopTokens, none.stopTokensSource], [['<|im_end|>'], 'eos_token']);
  assert.deepEqual(loadTokenizer(lenmlModelDir('deepseek_v3')).stopTokens, ['<｜end▁of▁sentence｜>']);
  assert.throws(() => loadTokenizer(buildModelFolder({ template, generationConfig: { eos_token_id: 'x' } })), TokenizerLoadError);
  assert.throws(() => loadTokenizer(buildModelFolder({ template, generationConfig: { eos_token_id: [151645, 999999999] } })), /999999999 is not a token/);
  // The tiktoken loader (Kimi's layout) reads it too, by Kimi's special ids.
  const kimi = loadTokenizer(kimiModelFolder(readFileSync(join(FIX, 'kimi', 'kimi-k2-thinking.chat_template.jinja'), 'utf8')));
  assert.deepEqual([kimi.stopTokens, kimi.stopTokensSource], [['<|im_end|>'], 'generation_config']);
  // generation_config.json is part of what the tokenizer hash covers.
  const dir = buildModelFolder({ template });
  const before = loadTokenizer(dir).hash;
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: 151643 }));
  assert.notEqual(loadTokenizer(dir).hash, before);
});

// -------------------------------------------------------------------------------- probe decisions

test('probe decisions on real templates: argument form, no-text form, reasoning rendered and its wrapper, generation-prompt prefill — none keyed by name', () => {
  const d = (name: string, kwargs?: Record<string, unknown>) => fixtureTemplate(name, kwargs).probes;
  // Templates that iterate over the arguments' keys get objects (vLLM / SGLang pass them so).
  assert.equal(d('Qwen3-Coder').toolArguments.form, 'object');
  assert.match(d('Qwen3-Coder').toolArguments.evidence, /keys and values/);
  assert.equal(d('GLM-4.6').toolArguments.form, 'object');
  assert.equal(d('MiniMax-M2').toolArguments.form, 'object');
  // DeepSeek-V3 concatenates strings: an object raises in Python, shows as a language-level form here.
  const ds = new ChatTemplate(sharedTokenizer(lenmlModelDir('deepseek_v3')).templates[0], {});
  assert.equal(ds.probes.toolArguments.form, 'string');
  assert.equal(ds.probes.nullContent.form, 'null');
  // Qwen3 writes a string verbatim and its dumps string as the object: re-dumped strings keep 10.0; Gemma-4 does not (braces).
  assert.equal(d('Qwen-Qwen3-0.6B').toolArguments.verbatimStrings, true);
  assert.equal(d('google-gemma-4-31B-it').toolArguments.verbatimStrings, false);
  // Reasoning rendered, with the wrapper the template writes around it.
  assert.deepEqual(d('Qwen-Qwen3-0.6B').reasoning.wrapper, { open: '<think>\n', close: '\n</think>\n\n', trimsNewlines: true });
  assert.deepEqual(d('GLM-4.6').reasoning.wrapper, { open: '<think>', close: '</think>\n', trimsNewlines: true });
  assert.deepEqual(d('google-gemma-4-31B-it').reasoning.wrapper, { open: '<|channel>thought\n', close: '\n<channel|>', trimsNewlines: false });
  for (const name of ['Qwen-QwQ-32B', 'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B', 'meta-llama-Llama-3.2-3B-Instruct', 'Qwen3-Coder'])
    assert.equal(d(name).reasoning.rendered, false, name);
  // Generation prompts: an open reasoning block (case 2b), thinking off (an empty closed block), or the header alone.
  assert.deepEqual(
    [d('Qwen-QwQ-32B', { enable_thinking: true }).generationPrompt.opensReasoning, d('MiniMax-M2').generationPrompt.opensReasoning],
    [true, true],
  );
  for (const [name, kwargs] of [
    ['Qwen-QwQ-32B', {}],
    ['deepseek-ai-DeepSeek-R1-Distill-Qwen-32B', {}],
    ['deepseek-ai-DeepSeek-V3.1', {}],
    ['google-gemma-4-31B-it', {}],
    ['Qwen-Qwen3-0.6B', { enable_thinking: false }],
    ['GLM-4.6', { enable_thinking: false }],
  ] as const)
    assert.equal(d(name, kwargs).generationPrompt.thinkingOff, true, name);
  for (const name of ['Qwen-Qwen3-0.6B', 'GLM-4.6', 'meta-llama-Llama-3.2-3B-Instruct']) {
    assert.equal(d(name).generationPrompt.thinkingOff, false, name);
    assert.equal(d(name).generationPrompt.opensReasoning, false, name);
  }
  // The same source under another name decides the same: nothing depends on the name.
  const source = readFileSync(join(TEMPLATE_FIXTURES, 'GLM-4.6', 'chat_template.jinja'), 'utf8');
  assert.deepEqual(new ChatTemplate({ name: 'anything', source }, {}).probes, new ChatTemplate({ name: 'GLM-4.6', source }, {}).probes);
});

test('adapter: inline <think> split only for a template that renders reasoning_content; no-text tool-call turns; arguments as objects or Python json.dumps strings', () => {
  const inline: Message[] = [
    { role: 'user', content: 'q' },
    { role: 'assistant', content: '<think>\nR\n</think>\n\nC' },
  ];
  const qwen3 = fixtureTemplate('Qwen-Qwen3-0.6B').adaptTurns(inline);
  assert.deepEqual(qwen3.messages[1], { role: 'assistant', content: 'C', reasoning_content: 'R' });
  assert.deepEqual(qwen3.notes, ['inline_think_split']);
  const llama = fixtureTemplate('meta-llama-Llama-3.2-3B-Instruct').adaptTurns(inline);
  assert.deepEqual(llama.messages[1], inline[1]);
  assert.deepEqual(llama.notes, ['inline_think_kept']);
  assert.equal(llama.reasoning[1], 'R');
  const call = (args: string) => [{ id: 'c1', type: 'function' as const, function: { name: 'f', arguments: args } }];
  const turn = (content: string | null, args: string): Message[] => [{ role: 'assistant', content, tool_calls: call(args) }];
  const coder = fixtureTemplate('Qwen3-Coder');
  assert.deepEqual(coder.adaptMessages(turn(' \n', '{"city":"Oslo","n":2}'))[0], {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: { city: 'Oslo', n: 2 } } }],
  });
  // Arguments that are not a JSON object stay the string they are.
  assert.equal(coder.adaptMessages(turn('', 'not json'))[0].tool_calls![0].function.arguments, 'not json');
  const ds = new ChatTemplate(sharedTokenizer(lenmlModelDir('deepseek_v3')).templates[0], {});
  const adapted = ds.adaptMessages(turn('   ', '{"city":"Oslo","t":10.0}'))[0];
  assert.equal(adapted.content, null);
  assert.equal(adapted.tool_calls![0].function.arguments, '{"city": "Oslo", "t": 10.0}');
});

// ------------------------------------------------------------------------------ --reasoning in runs

test('prepare --reasoning: with thinking off, reasoning rows error naming both ways out; drop trains them without it, in one thread and in the pool; placeholders become prompts', async () => {
  const rows = [
    {
      id: 'field',
      messages: [
        { role: 'user', content: '2+2?' },
        { role: 'assistant', reasoning_content: 'Add.', content: '4' },
      ],
    },
    {
      id: 'inline',
      messages: [
        { role: 'user', content: '2+2?' },
        { role: 'assistant', content: '<think>\nAdd.\n</think>\n\n4' },
      ],
    },
    {
      id: 'plain',
      messages: [
        { role: 'user', content: '2+2?' },
        { role: 'assistant', content: '4' },
      ],
    },
    {
      id: 'placeholder',
      messages: [
        { role: 'user', content: 'Write.' },
        { role: 'assistant', content: '' },
      ],
    },
    {
      // Reasoning only: with --reasoning drop nothing is left, so the turn is a trailing placeholder (buildRecords).
      id: 'reasoning_only',
      messages: [
        { role: 'user', content: 'Think.' },
        { role: 'assistant', reasoning_content: 'Hmm.', content: '' },
      ],
    },
  ];
  const file = writeJsonl(rows);
  const kwargs = { enable_thinking: false };
  const keep = await prepare({ inputs: [file], outDir: join(file, '..', 'keep'), templateKwargs: kwargs });
  const f = keep.files[0];
  assert.deepEqual([f.rowsWritten, f.rowsSetAside, f.rowsErrored], [1, 1, 3]);
  for (const e of f.errors) {
    assert.match(e.message, /^reasoning_with_thinking_off: assistant turn 1 has reasoning, but thinking is off/);
    assert.match(e.message, /--reasoning drop/);
    assert.match(e.message, /turn thinking on/);
  }
  assert.equal(keep.reasoning, 'keep');
  // A row with no answer at all is a prompt already when read (formats/rowEnd.ts finish, note empty_response).
  assert.equal(f.notes.empty_response, 1);
  assert.equal(f.notes.generation_placeholder_removed, undefined);
  assert.deepEqual(JSON.parse(readFileSync(keep.outputs.promptsToGenerate, 'utf8')).messages, [{ role: 'user', content: 'Write.' }]);
  for (const workers of [1, 2]) {
    const drop = await prepare({ inputs: [file], outDir: join(file, '..', `drop${workers}`), templateKwargs: kwargs, reasoning: 'drop', workers });
    const d = drop.files[0];
    assert.deepEqual([d.rowsWritten, d.rowsSetAside, d.rowsErrored], [3, 2, 0], `workers ${workers}`);
    assert.equal(d.notes.reasoning_dropped, 3);
    // A data-changing note is a run warning with its count (summary, report.md, report.json "warnings").
    assert.deepEqual(
      (drop.warnings ?? []).filter((w) => w.code === 'reasoning_dropped').map((w) => [w.count, w.source]),
      [[3, 'rows']],
    );
    assert.equal(drop.status, 'warnings');
    // The reasoning-only turn is empty once its reasoning is dropped: a trailing placeholder, so the row is a prompt.
    assert.equal(d.notes.generation_placeholder_removed, 1);
    const prompts = readFileSync(drop.outputs.promptsToGenerate, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      prompts.map((p) => [p.id, p.messages]),
      [
        ['placeholder', [{ role: 'user', content: 'Write.' }]],
        ['reasoning_only', [{ role: 'user', content: 'Think.' }]],
      ],
    );
    assert.equal(drop.reasoning, 'drop');
    // The three records are the same text: the answer after the empty think block the prompt pre-fills.
    const recs = readFileSync(drop.outputs.tokenizedData, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(new Set(recs.map((r) => JSON.stringify(r.input_ids))).size, 1);
    assert.match(readFileSync(drop.outputs.reportMd, 'utf8'), /reasoning: `drop`/);
  }
});

test('prepare: a greeting before the first user turn is an errored target (the row is written, noted prompt_not_renderable); a row with only that turn is errored; content_not_rendered and stop_token_inside_turn are data-changing', async () => {
  const greeting = { role: 'assistant', content: 'Hello! How can I help?' };
  const file = writeJsonl([
    { id: 'g', messages: [greeting, { role: 'user', content: 'q' }, { role: 'assistant', content: 'a' }] },
    { id: 'only', messages: [greeting, { role: 'user', content: 'q' }] },
    {
      id: 'stop',
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'Say <|im_end|> then more.' },
      ],
    },
    {
      id: 'think',
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'Write <think> to open and </think> to close.' },
      ],
    },
  ]);
  const r = await prepare({ inputs: [file], outDir: join(file, '..', 'out'), tokenizerDir: fixtureModelFolder('Qwen-Qwen3-0.6B') });
  const f = r.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsErrored, f.recordsWritten], [4, 3, 1, 3]);
  assert.equal(f.errors.length, 1);
  assert.match(f.errors[0].message, /^prompt_not_renderable: assistant turn 0: the chat template raises on the conversation before it/);
  // Noted on both rows (as template_unsupported is): the written one and the errored one.
  assert.deepEqual([f.notes.prompt_not_renderable, f.notes.stop_token_inside_turn, f.notes.content_not_rendered], [2, 1, 1]);
  const changing = dataChangingCodes(f).map((c) => c.code);
  for (const code of ['prompt_not_renderable', 'stop_token_inside_turn', 'content_not_rendered']) {
    assert.ok(changing.includes(code), code);
    assert.ok(isDataChanging(code) && CODES[code].remedy, code);
  }
  // The remedy of reasoning_not_rendered names an option prepare has.
  assert.match(CODES.reasoning_not_rendered.remedy!, /--reasoning drop/);
});

test('every note code the v1.4 rules write is in the code table with a meaning; the data-changing ones are flagged', () => {
  for (const code of [
    'inline_think_split',
    'inline_think_kept',
    'prefill_not_rendered',
    'reasoning_restored',
    'reasoning_missing_after_prefill',
    'reasoning_with_thinking_off',
    'reasoning_dropped',
    'generation_placeholder_removed',
    'stop_token_from_next_turn',
    'no_end_of_turn_token',
  ])
    assert.ok(CODES[code]?.meaning, code);
  for (const code of ['reasoning_missing_after_prefill', 'reasoning_with_thinking_off', 'reasoning_dropped', 'no_end_of_turn_token'])
    assert.equal(CODES[code].changesData, true, code);
});
