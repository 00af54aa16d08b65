/**
 * Hand-checked records of docs/loss-mask-rules.md (v1.4) on today's model families, built
 * from real model folders (a real vocabulary plus the family's control tokens,
 * `buildModelFolder` in test/helpers.ts): GLM-4.6 (turns end at the next role
 * marker), QwQ and DeepSeek-R1-Distill (case 2b: a generation prompt that
 * pre-fills `<think>\n`), Kimi-K2-Thinking (reasoning the template drops from its
 * own turn), Qwen3-Coder (tool-call arguments as objects) and Llama-3.1 (inline
 * `<think>` kept as written).
 *
 * Each record is written out as segments `[text, trained]`, worked out from the
 * spec and the template's text; prompts are also checked against the Python
 * (transformers) reference renders of test/fixtures/templates where the probe
 * conversation is one of theirs. Ids are checked against the Rust `tokenizers`
 * oracle reading the same `tokenizer.json` (Kimi: the tiktoken loader, whose ids
 * tiktoken.test.ts checks against Python tiktoken), and the mask is exactly 1 on
 * the tokens whose first character lies in a trained segment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRecords, maskFromSpans } from '../../src/core/records/mask';
import type { ConversationRecords, TextRecord } from '../../src/core/records/maskTypes';
import { SpecialTokenFinder } from '../../src/core/records/specialTokens';
import { ChatTemplate } from '../../src/core/templates/template';
import type { TargetTokenizer } from '../../src/core/tokenizers/types';
import type { Message, ReasoningPolicy } from '../../src/core/types';
import { buildModelFolder, fixtureModelFolder, kimiModelFolder, oracleEncode, sharedTokenizer, TEMPLATE_FIXTURES } from '../helpers';

const FIX = join(__dirname, '..', 'fixtures');

interface Family {
  tok: TargetTokenizer;
  /** tokenizer.json for the Rust oracle; undefined for a tiktoken folder. */
  oracle?: string;
  build(messages: Message[], opts?: { tools?: unknown[]; kwargs?: Record<string, unknown>; reasoning?: ReasoningPolicy }): ConversationRecords;
}

const families = new Map<string, Family>();

/** The family of a model folder, loaded once per folder in this file (its tokenizer and templates are only read). */
function family(dir: string): Family {
  let f = families.get(dir);
  if (!f) families.set(dir, (f = loadFamily(dir)));
  return f;
}

function loadFamily(dir: string): Family {
  const tok = sharedTokenizer(dir);
  const templates = new Map<string, ChatTemplate>();
  return {
    tok,
    oracle: tok.dir.includes('eagle3-kimi-') ? undefined : join(dir, 'tokenizer.json'),
    build(messages, opts = {}) {
      const key = JSON.stringify(opts.kwargs ?? {});
      let ct = templates.get(key);
      if (!ct) templates.set(key, (ct = new ChatTemplate(tok.templates[0], tok.specialTokenVars, opts.kwargs ?? {})));
      return buildRecords(
        { id: 't', source: { file: 'f', line: 1 }, messages, tools: opts.tools },
        ct,
        new SpecialTokenFinder(tok.specialTokens),
        'assistant',
        {
          stopTokens: tok.stopTokens,
          reasoning: opts.reasoning,
        },
      );
    },
  };
}

let llama31: string | undefined;
/** Llama-3.1's vocabulary with the TRL Llama-3.1 template (test/fixtures/llama3_1), built once in this file. */
const llamaFolder = () => (llama31 ??= buildModelFolder({ base: 'llama3_1', template: readFileSync(join(FIX, 'llama3_1', 'chat_template.jinja'), 'utf8') }));

type Seg = [text: string, trained: 0 | 1];

/** The record's text is the segments' concatenation; ids equal the oracle's; the mask is 1 exactly on tokens starting in a trained segment. */
async function assertRecord(f: Family, rec: TextRecord, segs: Seg[]): Promise<void> {
  assert.equal(rec.text, segs.map((s) => s[0]).join(''));
  const enc = f.tok.encode(rec.text);
  if (f.oracle) {
    const o = await oracleEncode(f.oracle, rec.text);
    assert.deepEqual(enc.ids, o.ids, 'ids differ from the Rust tokenizers oracle');
    assert.deepEqual(enc.starts, o.starts);
  }
  const trained: [number, number][] = [];
  let at = 0;
  for (const [t, on] of segs) {
    if (on) trained.push([at, at + t.length]);
    at += t.length;
  }
  const want = enc.starts.map((s) => (trained.some(([a, b]) => s >= a && s < b) ? 1 : 0));
  assert.deepEqual(maskFromSpans(enc.starts, rec.spans), want);
  assert.ok(want.includes(1));
}

/** The Python (transformers) render of a fixture probe: `R(messages[:n], add_generation_prompt)`. */
function pyRender(template: string, probe: string, n: number, gen: boolean): string {
  const r = JSON.parse(readFileSync(join(TEMPLATE_FIXTURES, template, 'renders.json'), 'utf8'));
  const p = r.probes.find((x: { id: string }) => x.id === probe);
  const x = p.renders.find((y: { n_messages: number; add_generation_prompt: boolean }) => y.n_messages === n && y.add_generation_prompt === gen);
  assert.ok(x && typeof x.text === 'string', `${template} ${probe} ${n} ${gen}`);
  return x.text;
}
function pyMessages(template: string, probe: string): { messages: Message[]; tools?: unknown[] } {
  const r = JSON.parse(readFileSync(join(TEMPLATE_FIXTURES, template, 'renders.json'), 'utf8'));
  const p = r.probes.find((x: { id: string }) => x.id === probe);
  return { messages: p.messages, tools: p.tools ?? undefined };
}

const WEATHER_CALL = (args: string | Record<string, unknown>) => [
  { id: 'functions.get_weather:0', type: 'function' as const, function: { name: 'get_weather', arguments: args } },
];

// ---------------------------------------------------------------------------------------- GLM-4.6

test('GLM-4.6: a tool call and its result — each turn ends at the next role marker, a stop token of generation_config.json (<|observation|>, <|user|>), trained', async () => {
  const glm = family(fixtureModelFolder('GLM-4.6'));
  assert.deepEqual(glm.tok.stopTokens, ['<|endoftext|>', '<|user|>', '<|observation|>']);
  assert.equal(glm.tok.stopTokensSource, 'generation_config');
  // The fixture's p3 conversation, arguments in the OpenAI wire form (a JSON string): the template gets an object.
  const { messages, tools } = pyMessages('GLM-4.6', 'p3_tool_call');
  messages[1] = { ...messages[1], tool_calls: WEATHER_CALL('{"city": "Paris"}') };
  const r = glm.build(messages, { tools });
  assert.deepEqual([...r.notes].sort(), ['stop_token_from_next_turn']);
  assert.equal(r.records.length, 1);
  const P1 = pyRender('GLM-4.6', 'p3_tool_call', 1, true);
  const call = '\n<think></think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>';
  const result = '\n<tool_response>\n{"temp_c": 18, "sky": "clear"}\n</tool_response><|assistant|>';
  await assertRecord(glm, r.records[0], [
    [P1, 0],
    // The model stops the call by writing the next role marker; the tool turn's render starts with it.
    [call + '<|observation|>', 1],
    [result, 0],
    // The last turn: its stop token is the one a following user turn starts with.
    ['\n<think></think>\nIt is 18 C and clear in Paris.<|user|>', 1],
  ]);
  // The prompt of the answer is the server's: the Python render with the generation prompt.
  assert.equal(P1 + call + '<|observation|>' + result, pyRender('GLM-4.6', 'p3_tool_call', 3, true));
});

test('GLM-4.6: reasoning rendered after the last user turn is trained with its stop token; an earlier answer shows its empty think block in later prompts (a new record)', async () => {
  const glm = family(fixtureModelFolder('GLM-4.6'));
  const { messages } = pyMessages('GLM-4.6', 'p4_reasoning');
  const r = glm.build(messages);
  assert.deepEqual([...r.notes].sort(), ['stop_token_from_next_turn']);
  assert.equal(r.records.length, 2);
  await assertRecord(glm, r.records[0], [
    [pyRender('GLM-4.6', 'p4_reasoning', 1, true), 0],
    ['\n<think>17 has no divisors other than 1 and 17.</think>\nYes, 17 is prime.<|user|>', 1],
  ]);
  await assertRecord(glm, r.records[1], [
    [pyRender('GLM-4.6', 'p4_reasoning', 3, true), 0],
    ['\n<think>21 = 3 * 7.</think>\nNo, 21 = 3 * 7.<|user|>', 1],
  ]);
  assert.ok(r.records[1].text.includes('<|assistant|>\n<think></think>\nYes, 17 is prime.<|user|>'));
});

// ------------------------------------------------------------------- QwQ, DeepSeek-R1-Distill (case 2b)

const PRIME: Message[] = [
  { role: 'user', content: 'Is 17 prime?' },
  { role: 'assistant', reasoning_content: '17 has no divisors other than 1 and 17.', content: 'Yes, 17 is prime.' },
];
const NO_REASONING: Message[] = [PRIME[0], { role: 'assistant', content: 'Yes, 17 is prime.' }];
const INLINE: Message[] = [PRIME[0], { role: 'assistant', content: '<think>\n17 has no divisors other than 1 and 17.\n</think>\n\nYes, 17 is prime.' }];
const THINKING_ON = { enable_thinking: true };

test('QwQ, thinking on: the generation prompt pre-fills "<think>\\n"; the reasoning is trained after it, closed as "\\n</think>\\n\\n" (case 2b, reasoning_restored)', async () => {
  const qwq = family(fixtureModelFolder('Qwen-QwQ-32B'));
  const prompt = '<|im_start|>user\nIs 17 prime?<|im_end|>\n<|im_start|>assistant\n<think>\n';
  const turn = '17 has no divisors other than 1 and 17.\n</think>\n\nYes, 17 is prime.<|im_end|>';
  for (const [what, messages, notes] of [
    ['reasoning_content', PRIME, ['prefill_not_rendered', 'reasoning_restored']],
    // Inline reasoning is kept as written (QwQ does not render reasoning_content); QwQ writes a final answer's
    // content as is, so its prompt is a prefix of the render (case 1) and the text is trained as the model wrote it.
    ['inline <think>', INLINE, ['inline_think_kept']],
  ] as const) {
    const r = qwq.build([...messages], { kwargs: THINKING_ON });
    assert.deepEqual([...r.notes].sort(), [...notes].sort(), what);
    assert.equal(r.records.length, 1);
    await assertRecord(qwq, r.records[0], [
      [prompt, 0],
      [turn, 1],
      ['\n', 0],
    ]);
  }
});

test('QwQ, thinking on, a tool call with reasoning: the prompt is left at a token edge ("<think>" and "<tool_call>" share "<t"), the reasoning restored before the call', async () => {
  const qwq = family(fixtureModelFolder('Qwen-QwQ-32B'));
  const { messages, tools } = pyMessages('Qwen-QwQ-32B', 'p3_tool_call');
  const r = qwq.build([messages[0], { ...messages[1], reasoning_content: 'Call the weather tool.', tool_calls: WEATHER_CALL('{"city": "Paris"}') }], {
    tools,
    kwargs: THINKING_ON,
  });
  assert.deepEqual([...r.notes].sort(), ['prefill_not_rendered', 'reasoning_restored']);
  await assertRecord(qwq, r.records[0], [
    [pyRender('Qwen-QwQ-32B', 'p3_tool_call', 1, false) + '<|im_start|>assistant\n<think>\n', 0],
    ['Call the weather tool.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>', 1],
    ['\n', 0],
  ]);
});

test('QwQ, thinking on, an answer without reasoning: trained right after the opener, noted reasoning_missing_after_prefill', async () => {
  const qwq = family(fixtureModelFolder('Qwen-QwQ-32B'));
  const r = qwq.build(NO_REASONING, { kwargs: THINKING_ON });
  assert.deepEqual([...r.notes].sort(), ['prefill_not_rendered', 'reasoning_missing_after_prefill']);
  await assertRecord(qwq, r.records[0], [
    ['<|im_start|>user\nIs 17 prime?<|im_end|>\n<|im_start|>assistant\n<think>\n', 0],
    ['Yes, 17 is prime.<|im_end|>', 1],
    ['\n', 0],
  ]);
});

test('QwQ, thinking off (this template pre-fills "<think>\\n</think>" unless enable_thinking): the answer after the empty block; reasoning data is an error naming both ways out, or dropped with --reasoning drop', async () => {
  const qwq = family(fixtureModelFolder('Qwen-QwQ-32B'));
  const r = qwq.build(NO_REASONING);
  assert.deepEqual(r.notes, ['prefill_not_rendered']);
  const P = pyRender('Qwen-QwQ-32B', 'p1_single', 1, true);
  assert.equal(P, '<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n</think>');
  await assertRecord(qwq, r.records[0], [
    ['<|im_start|>user\nIs 17 prime?<|im_end|>\n<|im_start|>assistant\n<think>\n</think>', 0],
    ['Yes, 17 is prime.<|im_end|>', 1],
    ['\n', 0],
  ]);
  for (const messages of [PRIME, INLINE]) {
    const e = qwq.build([...messages]);
    assert.equal(e.records.length, 0);
    assert.equal(e.rowError?.code, 'reasoning_with_thinking_off');
    assert.match(e.rowError!.message, /thinking is off/);
    assert.match(e.rowError!.message, /--reasoning drop/);
    assert.match(e.rowError!.message, /turn thinking on/);
    const d = qwq.build([...messages], { reasoning: 'drop' });
    assert.deepEqual([...d.notes].sort(), ['prefill_not_rendered', 'reasoning_dropped']);
    assert.equal(d.records[0].text, r.records[0].text);
  }
});

test('DeepSeek-R1-Distill, thinking on: "<think>\\n" pre-filled after <｜Assistant｜>; reasoning (field or inline) trained after it; without reasoning noted', async () => {
  const r1 = family(fixtureModelFolder('deepseek-ai-DeepSeek-R1-Distill-Qwen-32B'));
  assert.deepEqual(r1.tok.stopTokens, ['<｜end▁of▁sentence｜>']);
  const prompt = '<｜begin▁of▁sentence｜><｜User｜>Is 17 prime?<｜Assistant｜><think>\n';
  for (const messages of [PRIME, INLINE]) {
    const r = r1.build([...messages], { kwargs: THINKING_ON });
    assert.ok(r.notes.includes('prefill_not_rendered') && r.notes.includes('reasoning_restored'), JSON.stringify(r.notes));
    // The template writes the text after "</think>" as is ("\n\nYes…" for the inline form): the model's own text is kept, not doubled.
    await assertRecord(r1, r.records[0], [
      [prompt, 0],
      ['17 has no divisors other than 1 and 17.\n</think>\n\nYes, 17 is prime.<｜end▁of▁sentence｜>', 1],
    ]);
  }
  const plain = r1.build(NO_REASONING, { kwargs: THINKING_ON });
  assert.deepEqual([...plain.notes].sort(), ['prefill_not_rendered', 'reasoning_missing_after_prefill']);
  await assertRecord(r1, plain.records[0], [
    [prompt, 0],
    ['Yes, 17 is prime.<｜end▁of▁sentence｜>', 1],
  ]);
  // Thinking off (the template's default here): "<think>\n</think>" is prompt, the answer follows it.
  const off = r1.build(NO_REASONING);
  await assertRecord(r1, off.records[0], [
    ['<｜begin▁of▁sentence｜><｜User｜>Is 17 prime?<｜Assistant｜><think>\n</think>', 0],
    ['Yes, 17 is prime.<｜end▁of▁sentence｜>', 1],
  ]);
  assert.equal(r1.build([...PRIME]).rowError?.code, 'reasoning_with_thinking_off');
});

test('QwQ, thinking on, a multi-turn chat: each answer is its own record (its prompt ends with the pre-filled opener, which history does not show)', async () => {
  const qwq = family(fixtureModelFolder('Qwen-QwQ-32B'));
  const { messages } = pyMessages('Qwen-QwQ-32B', 'p4_reasoning');
  const r = qwq.build(messages, { kwargs: THINKING_ON });
  assert.equal(r.records.length, 2);
  await assertRecord(qwq, r.records[1], [
    [
      '<|im_start|>user\nIs 17 prime?<|im_end|>\n<|im_start|>assistant\nYes, 17 is prime.<|im_end|>\n<|im_start|>user\nIs 21 prime?<|im_end|>\n<|im_start|>assistant\n<think>\n',
      0,
    ],
    ['21 = 3 * 7.\n</think>\n\nNo, 21 = 3 * 7.<|im_end|>', 1],
    ['\n', 0],
  ]);
});

// ------------------------------------------------------------------------------ Kimi-K2-Thinking

test('Kimi-K2-Thinking, three answers with reasoning: one record per answer, each with its reasoning restored into the empty <think></think> the template writes (reasoning_restored)', async () => {
  const kimi = family(kimiModelFolder(readFileSync(join(FIX, 'kimi', 'kimi-k2-thinking.chat_template.jinja'), 'utf8')));
  assert.deepEqual(kimi.tok.stopTokens, ['<|im_end|>']);
  const msgs: Message[] = [
    { role: 'user', content: 'Is 17 prime?' },
    { role: 'assistant', reasoning_content: 'No divisor up to 4.', content: 'Yes.' },
    { role: 'user', content: 'Is 21 prime?' },
    { role: 'assistant', reasoning_content: '21 = 3 * 7.', content: 'No.' },
    { role: 'user', content: 'And 23?' },
    { role: 'assistant', reasoning_content: 'No divisor up to 4 again.', content: 'Yes, prime.' },
  ];
  const r = kimi.build(msgs);
  assert.deepEqual(r.notes, ['reasoning_restored']);
  assert.equal(r.records.length, 3);
  const SYS = '<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>';
  const U = (t: string) => `<|im_user|>user<|im_middle|>${t}<|im_end|>`;
  const A = '<|im_assistant|>assistant<|im_middle|>';
  await assertRecord(kimi, r.records[0], [
    [SYS + U('Is 17 prime?') + A, 0],
    ['<think>No divisor up to 4.</think>Yes.<|im_end|>', 1],
  ]);
  // History answers are rendered with an empty think block: the later prompts differ from the earlier records.
  await assertRecord(kimi, r.records[1], [
    [SYS + U('Is 17 prime?') + A + '<think></think>Yes.<|im_end|>' + U('Is 21 prime?') + A, 0],
    ['<think>21 = 3 * 7.</think>No.<|im_end|>', 1],
  ]);
  await assertRecord(kimi, r.records[2], [
    [SYS + U('Is 17 prime?') + A + '<think></think>Yes.<|im_end|>' + U('Is 21 prime?') + A + '<think></think>No.<|im_end|>' + U('And 23?') + A, 0],
    ['<think>No divisor up to 4 again.</think>Yes, prime.<|im_end|>', 1],
  ]);
});

// ---------------------------------------------------------------------------------- Qwen3-Coder

test('Qwen3-Coder: a tool row gets its arguments as an object (the template iterates over them); the call and the answer trained through <|im_end|>', async () => {
  const coder = family(fixtureModelFolder('Qwen3-Coder'));
  const { messages, tools } = pyMessages('Qwen3-Coder', 'p3_tool_call');
  messages[1] = { ...messages[1], tool_calls: WEATHER_CALL('{"city": "Paris"}') };
  const r = coder.build(messages, { tools });
  assert.deepEqual(r.notes, []);
  assert.equal(r.records.length, 1);
  const P1 = pyRender('Qwen3-Coder', 'p3_tool_call', 1, true);
  await assertRecord(coder, r.records[0], [
    [P1, 0],
    ['<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call><|im_end|>', 1],
    ['\n<|im_start|>user\n<tool_response>\n{"temp_c": 18, "sky": "clear"}\n</tool_response>\n<|im_end|>\n<|im_start|>assistant\n', 0],
    ['It is 18 C and clear in Paris.<|im_end|>', 1],
    ['\n', 0],
  ]);
  assert.equal(r.records[0].text, pyRender('Qwen3-Coder', 'p3_tool_call', 4, false));
});

// ------------------------------------------------------------------------------------- Llama-3.1

test('Llama-3.1: inline <think> in the content is kept exactly as written (the template renders no reasoning_content) and trained', async () => {
  const llama = family(llamaFolder());
  assert.equal(llama.oracle, join(llama.tok.dir, 'tokenizer.json'));
  const r = llama.build([
    { role: 'user', content: 'What is 3+4?' },
    { role: 'assistant', content: '<think>\nAdd 3 and 4.\n</think>\n\n3+4 equals 7.' },
  ]);
  assert.deepEqual(r.notes, ['inline_think_kept']);
  await assertRecord(llama, r.records[0], [
    [
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\nWhat is 3+4?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
      0,
    ],
    ['<think>\nAdd 3 and 4.\n</think>\n\n3+4 equals 7.<|eot_id|>', 1],
  ]);
});

// ---------------------------------------------------------------- what the template drops or cuts short

const SEARCH_TOOLS = [
  { type: 'function', function: { name: 'search', description: 'Search.', parameters: { type: 'object', properties: { q: { type: 'string' } } } } },
];
const SEARCH_ROW: Message[] = [
  { role: 'user', content: 'find x' },
  { role: 'assistant', content: "I'll search for x first.", tool_calls: [{ id: 'c1', type: 'function', function: { name: 'search', arguments: { q: 'x' } } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'x found' },
  { role: 'assistant', content: 'Found x.' },
];
const trainedTexts = (r: ConversationRecords) => r.records.map((rec) => rec.spans.map(([a, b]) => rec.text.slice(a, b)));

test('content_not_rendered: Llama-3.1 drops the text beside a tool call; Qwen3 splits an answer at a literal </think>; text a template writes (trimmed, beside calls) is not flagged', () => {
  const llama = family(llamaFolder());
  const l = llama.build(SEARCH_ROW, { tools: SEARCH_TOOLS });
  assert.deepEqual(l.notes, ['content_not_rendered']);
  assert.deepEqual(trainedTexts(l), [['{"name": "search", "parameters": {"q": "x"}}<|eot_id|>', 'Found x.<|eot_id|>']]);
  const qwen3 = family(fixtureModelFolder('Qwen-Qwen3-0.6B'));
  const q = qwen3.build([
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'Write <think> to open and </think> to close. That is all.' },
  ]);
  assert.deepEqual(q.notes, ['content_not_rendered']);
  assert.deepEqual(trainedTexts(q), [['<think>\n to open and \n</think>\n\n to close. That is all.<|im_end|>']]);
  // Qwen3 writes the text beside its calls; surrounding whitespace is compared trimmed.
  const calls = qwen3.build(SEARCH_ROW, { tools: SEARCH_TOOLS });
  assert.deepEqual(calls.notes, []);
  assert.equal(
    trainedTexts(calls)[0][0],
    '<think>\n\n</think>\n\nI\'ll search for x first.\n<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call><|im_end|>',
  );
  assert.deepEqual(
    qwen3.build([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: '\n\n  Paris.  \n\n' },
    ]).notes,
    [],
  );
});

test('stop_token_inside_turn: a trained turn spelling <|im_end|> or <|endoftext|> (Qwen3 stop tokens) before its end is noted; other special tokens are not, and an "<|endoftext|>" the template writes after the last turn is not trained', async () => {
  const qwen3 = family(fixtureModelFolder('Qwen-Qwen3-0.6B'));
  const off = { kwargs: { enable_thinking: false } };
  const text = 'The token <|im_end|> ends a turn; <|endoftext|> ends the document.';
  const r = qwen3.build(
    [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: text },
    ],
    off,
  );
  assert.deepEqual(r.notes, ['stop_token_inside_turn']);
  // Matched as special tokens (as the server's tokenizer does): ids 151645 and 151643 inside the trained span.
  await assertRecord(qwen3, r.records[0], [
    ['<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n', 0],
    [`${text}<|im_end|>`, 1],
    ['\n', 0],
  ]);
  const ids = qwen3.tok.encode(r.records[0].text).ids;
  assert.deepEqual([ids.filter((x) => x === 151645).length, ids.filter((x) => x === 151643).length], [3, 1]);
  assert.deepEqual(
    qwen3.build(
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'Write <|endoftext|> at the end.' },
      ],
      off,
    ).notes,
    ['stop_token_inside_turn'],
  );
  assert.deepEqual(
    qwen3.build(
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'A <|vision_start|> and <tool_call> tag.' },
      ],
      off,
    ).notes,
    [],
  );
  const phi = family(fixtureModelFolder('microsoft-Phi-3.5-mini-instruct'));
  const p = phi.build([
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'Paris.' },
  ]);
  // This template writes eos_token after every conversation rendered without a generation prompt: text after the
  // last turn, never written by the model (it stops at <|end|>), so never trained (docs "Text after the last turn").
  assert.deepEqual([p.notes, trainedTexts(p)], [['text_after_last_turn'], [['Paris.<|end|>']]]);
});

test('prompt_not_renderable: an assistant greeting before any user turn (the template raises on R([], gen)) is an errored target; the next turn is trained with the greeting as history', async () => {
  const greeting: Message[] = [
    { role: 'assistant', content: 'Hello! How can I help?' },
    { role: 'user', content: 'q' },
    { role: 'assistant', content: 'a' },
  ];
  const qwen3 = family(fixtureModelFolder('Qwen-Qwen3-0.6B'));
  const r = qwen3.build(greeting);
  assert.deepEqual(r.notes, []);
  assert.deepEqual(
    r.targetErrors.map((e) => [e.index, e.reason]),
    [[0, 'prompt_not_renderable']],
  );
  assert.match(
    r.targetErrors[0].message,
    /^assistant turn 0: the chat template raises on the conversation before it with a generation prompt \(UndefinedError: list object has no element 0\)/,
  );
  assert.deepEqual([r.records.length, r.records[0].targets], [1, [2]]);
  await assertRecord(qwen3, r.records[0], [
    ['<|im_start|>assistant\nHello! How can I help?<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n', 0],
    ['<think>\n\n</think>\n\na<|im_end|>', 1],
    ['\n', 0],
  ]);
  const llama = family(llamaFolder());
  const l = llama.build(greeting);
  assert.deepEqual([l.targetErrors.map((e) => e.reason), trainedTexts(l)], [['prompt_not_renderable'], [['a<|eot_id|>']]]);
});

test('tool rows with object arguments on Qwen3-Coder, GLM-4.6 and MiniMax-M2 render (no template error) and train the call', () => {
  for (const [name, call] of [
    ['Qwen3-Coder', '<function=search>\n<parameter=q>\nx\n</parameter>\n</function>'],
    ['GLM-4.6', '<tool_call>search\n<arg_key>q</arg_key>\n<arg_value>x</arg_value>\n</tool_call>'],
    ['MiniMax-M2', '<invoke name="search">\n<parameter name="q">x</parameter>\n</invoke>'],
  ] as const) {
    const f = family(fixtureModelFolder(name));
    const r = f.build(SEARCH_ROW, { tools: SEARCH_TOOLS });
    assert.deepEqual(r.targetErrors, [], name);
    const trained = trainedTexts(r).flat();
    assert.equal(trained.length, 2, name);
    assert.ok(trained[0].includes(call), `${name}: ${JSON.stringify(trained[0])}`);
    assert.ok(trained[0].includes("I'll search for x first."), name);
  }
});

// ---------------------------------------------------------------- inline reasoning read by normalization

test('inline <think> read as reasoning_content by normalization gives the same records as the text as written: kept (Llama-3.1), pre-filled (QwQ), split (Qwen3), dropped', () => {
  const { normalizeRow } = require('../../src/core/formats/normalize');
  const written = '<think>\n\nAdd 3 and 4.\n</think>\n\n3+4 equals 7.';
  const raw: Message[] = [
    { role: 'user', content: 'What is 3+4?' },
    { role: 'assistant', content: written },
  ];
  const out = normalizeRow({ messages: raw }, { file: 'f', line: 1 }, 'f');
  const read: Message[] = out.conversation.messages;
  assert.deepEqual(read[1], {
    role: 'assistant',
    content: '3+4 equals 7.',
    reasoning_content: 'Add 3 and 4.',
    reasoning_inline: { open: '<think>\n\n', close: '\n</think>\n\n' },
  });
  const llama = family(llamaFolder());
  const qwq = family(fixtureModelFolder('Qwen-QwQ-32B'));
  const qwen3 = family(fixtureModelFolder('Qwen-Qwen3-0.6B'));
  const cases: [string, Family, Parameters<Family['build']>[1], string[]][] = [
    ['Llama-3.1', llama, {}, ['inline_think_kept']],
    ['QwQ', qwq, { kwargs: THINKING_ON }, ['inline_think_kept']],
    ['Qwen3', qwen3, {}, ['inline_think_split']],
    ['Qwen3, --reasoning drop', qwen3, { reasoning: 'drop' }, ['reasoning_dropped']],
  ];
  for (const [what, f, opts, notes] of cases) {
    const a = f.build(
      raw.map((m) => ({ ...m })),
      opts,
    );
    const b = f.build(
      read.map((m) => ({ ...m })),
      opts,
    );
    assert.deepEqual(b.notes, notes, what);
    assert.deepEqual(
      b.records.map((r) => [r.text, r.spans]),
      a.records.map((r) => [r.text, r.spans]),
      what,
    );
  }
  // Llama-3.1 trains the text exactly as written.
  const r = llama.build(read.map((m) => ({ ...m })));
  assert.ok(r.records[0].text.includes(`${written}<|eot_id|>`));
});
