/**
 * Prefix renders from one traced render (src/core/templates/jinja/prefixTrace.ts, served by
 * templates/prefixRenderer.ts) equal the renders of each prefix on their own, wherever the trace claims them:
 * - every fixture template (test/fixtures/templates, templates-extra) × every probe conversation × every prefix
 *   length (0 … all) × both `add_generation_prompt` values, with the number proven per template pinned (a change
 *   in coverage shows here, in either direction);
 * - small templates built to break a wrong tail: state changed in the loop and read after it (namespaces,
 *   cyclers, joiners, `loop.changed`, macros), `loop.last`/`length`/`nextitem`, `else` on an empty list, `break`,
 *   the loop inside `if`s, sliced lists, a pre-scan over all messages (DeepSeek-V3), the generation flag read
 *   early, in the loop and only as `is defined`, one-pass iterators consumed across iterations, an escaped loop
 *   context, errors and the render budget;
 * - agent runs of 10, 40, 80 and 160 messages with real templates.
 * The reference is `ChatTemplate.render` of `messages.slice(0, n)`: the path every prefix took before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeRow } from '../../src/core/formats/normalize';
import { PREFIX_TRACE_TESTING } from '../../src/core/templates/jinja/prefixTrace';
import { QUIET_LOOPS_TESTING } from '../../src/core/templates/jinja/statements';
import { PrefixRenderer } from '../../src/core/templates/prefixRenderer';
import { ChatTemplate, pickTemplate, type ChatTemplateOptions } from '../../src/core/templates/template';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import type { Message } from '../../src/core/types';
import { lenmlModelDir } from '../helpers';
import { compareAll } from '../prefixCompare';

const FIX = join(__dirname, '..', 'fixtures');

// Prefix renders served from one traced render, of the renders that do not raise, over the 9 probes × (len + 1) × 2.
// k = 0 (no message) is cut before the loop wherever the template reads messages[0] or tests the list: then
// proven = renderable − 18. Qwen3 and its kind (messages|length, a reversed pre-pass), Gemma-4 (range over the
// length) and Llama-3.2/4 (`messages|length` in the header) are served by header replay (before it: 18, 18 and 54 of
// 70). Left partly to real renders: Mistral (a header that builds a list of the user turns: an object, not a plain
// value, differs between prefixes), Kimi-K2-Thinking (a header value read as a whole in the loop).
const EXPECTED: Record<string, [proven: number, renderable: number]> = {
  'Apertus-8B-Instruct': [70, 88],
  'ByteDance-Seed-OSS': [70, 70],
  'CohereForAI-c4ai-command-r7b-12-2024-tool_use': [70, 88],
  'GLM-4.6': [88, 88],
  'HuggingFaceTB-SmolLM3-3B': [70, 70],
  'Kimi-K2-Instruct': [72, 72],
  'LFM2-8B-A1B': [70, 70],
  'MiniMax-M2': [70, 88],
  'NVIDIA-Nemotron-Nano-v2': [66, 66],
  'Qwen-QwQ-32B': [70, 70],
  'Qwen-Qwen2.5-7B-Instruct': [70, 70],
  'Qwen-Qwen3-0.6B': [70, 70],
  'Qwen3-Coder': [70, 70],
  'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B': [88, 88],
  'deepseek-ai-DeepSeek-V3.1': [88, 88],
  'google-gemma-2-2b-it': [36, 36],
  'google-gemma-4-31B-it': [70, 70],
  'ibm-granite-granite-3.3-2B-Instruct': [70, 70],
  'llama-cpp-rwkv-world': [88, 88],
  'meetkai-functionary-medium-v3.2': [88, 88],
  'meta-llama-Llama-3.2-3B-Instruct': [70, 70],
  'microsoft-Phi-3.5-mini-instruct': [88, 88],
  'mistralai-Mistral-Nemo-Instruct-2407': [30, 54],
  'openai-gpt-oss-120b': [70, 70],
  'unsloth-mistral-Devstral-Small-2507': [70, 70],
  'Apriel-1.6-15b-Thinker-fixed': [70, 88],
  'DeepSeek-V3.2-llamacpp': [88, 88],
  'GigaChat3-10B-A1.8B': [70, 88],
  'Kimi-K3': [88, 88],
  'LFM2.5-8B-A1B': [70, 70],
  'StepFun3.7-Flash': [70, 70],
  'glm-4.5-llamacpp': [88, 88],
  'meta-llama-Llama-4-transformers': [70, 70],
  'microsoft-Phi-4-mini-instruct-llamacpp': [22, 22],
  'mistralai-Mistral-Small-3.1-24B-Instruct-2503': [46, 70],
  'moonshotai-Kimi-K2-Thinking': [24, 88],
  'nvidia-Llama-3_3-Nemotron-Super-49B-v1_5': [70, 70],
  'unsloth-Apriel-1.5': [70, 70],
  'unsloth-MiniMax-M2': [70, 88],
  'vllm-tool_chat_template_deepseekr1': [88, 88],
  'vllm-tool_chat_template_gemma3_pythonic': [70, 70],
  'vllm-tool_chat_template_granite': [88, 88],
  'vllm-tool_chat_template_hermes': [88, 88],
  'vllm-tool_chat_template_hunyuan_a13b': [88, 88],
  'vllm-tool_chat_template_internlm2_tool': [70, 70],
  'vllm-tool_chat_template_llama3.1_json': [70, 70],
  'vllm-tool_chat_template_minicpm3': [70, 70],
  'vllm-tool_chat_template_olmo3': [70, 70],
  'vllm-tool_chat_template_phi4_mini': [66, 88],
};

for (const set of ['templates', 'templates-extra']) {
  const dir = join(FIX, set);
  for (const name of readdirSync(dir)
    .filter((d) => statSync(join(dir, d)).isDirectory())
    .sort()) {
    const ref = JSON.parse(readFileSync(join(dir, name, 'renders.json'), 'utf8'));
    if (ref.compile_error !== undefined) continue;
    test(`${name}: every prefix served from one traced render equals its own render (all probes, both generation flags)`, () => {
      const source = readFileSync(join(dir, name, 'chat_template.jinja'), 'utf8');
      const now = ref.clock ? () => new Date(ref.clock) : undefined;
      const ct = new ChatTemplate({ name: 'default', source }, ref.variables, {}, { now });
      let proven = 0;
      let renderable = 0;
      for (const p of ref.probes) {
        const r = compareAll(ct, p.messages, p.tools ?? undefined, `${name} ${p.id}`);
        proven += r.proven;
        renderable += r.renderable;
      }
      console.log(`${name}: ${proven}/${renderable} prefix renders from one traced render`);
      assert.deepEqual([proven, renderable], EXPECTED[name], `${name}: [proven, renderable]`);
    });
  }
}

test('every fixture template has its expected counts', () => {
  const names = ['templates', 'templates-extra'].flatMap((s) =>
    readdirSync(join(FIX, s)).filter(
      (d) => statSync(join(FIX, s, d)).isDirectory() && !JSON.parse(readFileSync(join(FIX, s, d, 'renders.json'), 'utf8')).compile_error,
    ),
  );
  assert.deepEqual(names.sort(), Object.keys(EXPECTED).sort());
});

// ---------------------------------------------------------------------------------------------------------------
// Templates built to break a wrong tail

const chat = (...turns: [string, string][]): Message[] => turns.map(([role, content]) => ({ role, content }) as Message);
const CONV = chat(
  ['system', 'S'],
  ['user', 'u1'],
  ['assistant', 'a1'],
  ['user', 'u2'],
  ['assistant', 'a2'],
  ['tool', 't1'],
  ['tool', 't2'],
  ['assistant', 'a3'],
);

function templateOf(source: string, options: ChatTemplateOptions = {}): ChatTemplate {
  return new ChatTemplate({ name: 'default', source }, { bos_token: '<s>', eos_token: '</s>' }, {}, options);
}

/** compareAll over CONV (and a few more conversations), returning the served count over all of them. */
function check(source: string, convs: Message[][] = [CONV], options: ChatTemplateOptions = {}): number {
  const ct = templateOf(source, options);
  return convs.reduce((sum, c, i) => sum + compareAll(ct, c, undefined, `conversation ${i}`).proven, 0);
}

test('state changed in the loop and read after it: namespaces, macros, cyclers, joiners, loop.changed', () => {
  const src = `{%- set ns = namespace(count=0, roles=[]) -%}{%- set cyc = cycler('a', 'b', 'c') -%}{%- set j = joiner('|') -%}
{%- macro tag(m) -%}<{{ m.role }}:{{ cyc.next() }}>{%- set ns.count = ns.count + 1 -%}{%- endmacro -%}
{%- for m in messages -%}{{ j() }}{{ tag(m) }}{{ m.content }}{%- if loop.changed(m.role) %}*{% endif -%}{%- set ns.roles = ns.roles + [m.role[0]] -%}
{%- if not loop.last %}>{{ loop.nextitem.role[0] }}{% endif -%}{%- if loop.previtem is defined %}<{{ loop.previtem.role[0] }}{% endif -%}
{%- endfor -%}#{{ ns.count }} {{ ns.roles|join(',') }} {{ cyc.current }}{{ j() }}{%- if add_generation_prompt %}<gen>{% endif -%}`;
  // Every prefix comes from the trace, the empty one too (the loop's first test is after its first checkpoint).
  assert.equal(check(src), 18);
});

test('loop.length and loop.revindex observe the whole list: every prefix resumes at the loop start, still equal', () => {
  const src = `{%- for m in messages -%}{{ m.content }}{{ loop.revindex }}/{{ loop.length }};{%- endfor -%}{{ add_generation_prompt }}`;
  assert.equal(check(src), 18);
});

test('a loop inside if branches, else on an empty list, break, and statements after it in every frame', () => {
  const src = `{%- if messages[0].role == 'system' -%}{%- set sys = messages[0].content -%}{%- set loop_messages = messages[1:] -%}
{%- else -%}{%- set sys = 'none' -%}{%- set loop_messages = messages -%}{%- endif -%}S={{ sys }};
{%- if true -%}A{%- if loop_messages is defined -%}
{%- for m in loop_messages -%}{%- if m.content == 'STOP' -%}{%- break -%}{%- endif -%}{{ loop.index }}:{{ m.content }};{%- else -%}(none){%- endfor -%}B
{%- endif -%}C{%- endif -%}{%- if add_generation_prompt -%}GEN{%- endif -%}D`;
  const stop = chat(['user', 'u1'], ['assistant', 'a1'], ['user', 'STOP'], ['assistant', 'a2'], ['user', 'u3']);
  assert.equal(check(src, [CONV, stop, chat(['system', 'only'])]), 16 + 10 + 2);
});

test('sliced lists: messages[1:], messages[:3], messages[2:4] are views; messages[-1] and messages[::-1] observe the length', () => {
  const views = `{%- for m in messages[1:] -%}{{ m.content }}{%- endfor -%}|{%- for m in messages[:3] -%}{{ m.content }}{%- endfor -%}|{{ messages[2:4]|length }}|{{ add_generation_prompt }}`;
  // messages[2:4]|length observes the length of a view that ends at 4: prefixes of 4 or more are unaffected.
  assert.ok(check(views) >= 8);
  // messages[-1] in the header: every non-empty prefix by header replay (its header output differs, its state does not).
  const last = `{{ messages[-1].content }}{%- for m in messages -%}{{ m.content }}{%- endfor -%}`;
  assert.equal(check(last), 16);
  const reversed = `{%- for m in messages[::-1] -%}{{ m.content }}{%- endfor -%}{{ add_generation_prompt }}`;
  assert.equal(check(reversed), 2); // the full conversation: one trace per flag value (no resumable loop)
});

test('a pre-scan over all messages rejoins the render only where its state is the same (DeepSeek-V3 system prompts)', () => {
  const src = `{%- set ns = namespace(sp='') -%}{%- for m in messages -%}{%- if m.role == 'system' -%}{%- set ns.sp = ns.sp + m.content -%}{%- endif -%}{%- endfor -%}
<{{ ns.sp }}>{%- for m in messages -%}{%- if m.role != 'system' -%}{{ m.role }}:{{ m.content }};{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}A:{%- endif -%}`;
  const late = chat(['user', 'u1'], ['assistant', 'a1'], ['system', 'late'], ['user', 'u2'], ['assistant', 'a2']);
  // CONV: all 18. late: every prefix too (before the late system message, the scan's state differs from the full
  // render's and the prefix resumes in the scan; after it, it rejoins).
  assert.equal(check(src, [CONV, late]), 18 + 12);
  const printing = `{%- for m in messages -%}{%- if m.role == 'system' -%}[{{ m.content }}]{%- endif -%}{%- endfor -%}|{%- for m in messages -%}{{ m.content }}{%- endfor -%}{{ add_generation_prompt }}`;
  assert.equal(check(printing, [late]), 12);
  // An empty list runs the scan's else block, which the full render never runs: the empty prefix must not rejoin.
  const withElse = `{%- for m in messages -%}{%- else -%}EMPTY{%- endfor -%}|{%- for m in messages -%}{{ m.content }}{%- endfor -%}`;
  assert.equal(check(withElse), 18);
});

test('the generation flag: read only as `is defined`, read in the loop, read before the loop (a second trace)', () => {
  const inLoop = `{%- if add_generation_prompt is not defined -%}{%- set add_generation_prompt = false -%}{%- endif -%}
{%- for m in messages -%}{{ m.content }}{%- if loop.last and add_generation_prompt %}<last-gen>{%- endif -%};{%- endfor -%}{%- set g = add_generation_prompt -%}[{{ g }}]
{%- if add_generation_prompt is true %}(true){% endif -%}{%- if add_generation_prompt is boolean %}(bool){% endif -%}`;
  assert.equal(check(inLoop), 18);
  const early = `{%- set g = add_generation_prompt -%}{%- for m in messages -%}{{ m.content }};{%- endfor -%}[{{ g }}]`;
  assert.equal(check(early), 18);
});

test('a one-pass iterator consumed across loop iterations: checkpoints before its last use are not used', () => {
  const src = `{%- set it = range(1000)|map('string') -%}{%- for m in messages -%}{{ m.content }}{%- if loop.index0 == 2 -%}({{ it|first }}){%- endif -%};{%- endfor -%}{{ add_generation_prompt }}`;
  // Prefixes of 3 messages or more resume after the iterator's use; shorter ones are rendered on their own.
  assert.equal(check(src), 12); // k = 3 … 8, both flags
});

test('a loop context that escapes into a namespace: no checkpoint after it, every prefix still equal', () => {
  const src = `{%- set ns = namespace(l=none) -%}{%- for m in messages -%}{%- set ns.l = loop -%}{{ m.content }};{%- endfor -%}{{ ns.l.index }}{{ add_generation_prompt }}`;
  assert.equal(check(src), 18); // all from the loop's first checkpoint
});

test('errors: a full render that raises still serves the prefixes cut before the error; the budget holds in tails', () => {
  const raising = `{%- for m in messages -%}{%- if m.role == 'tool' and loop.last -%}{{ raise_exception('trailing tool') }}{%- endif -%}{{ m.content }};{%- endfor -%}{{ add_generation_prompt }}`;
  const trailing = chat(['user', 'u1'], ['assistant', 'a1'], ['tool', 't1']);
  assert.equal(check(raising, [trailing]), 6); // k = 0 … 2, both flags; k = 3 raises
  const heavy = `{%- for m in messages -%}{%- for i in range(300) -%}{%- endfor -%}{{ m.content }};{%- endfor -%}{{ add_generation_prompt }}`;
  const five = chat(['user', '1'], ['assistant', '2'], ['user', '3'], ['assistant', '4'], ['user', '5']);
  // 301 iterations per message against a budget of 1,000: prefixes of 3 messages fit, longer ones raise (compared as errors).
  assert.equal(check(heavy, [five], { budget: { maxLoopIterations: 1000 } }), 8);
});

// ---------------------------------------------------------------------------------------------------------------
// Header replay: a header that depends on the number of messages (prefixTrace.ts, module comment 6)

const QWEN_LIKE = `{%- set ns = namespace(multi=true, last=messages|length - 1) -%}
{%- for m in messages[::-1] -%}{%- set i = (messages|length - 1) - loop.index0 -%}
{%- if ns.multi and m.role == 'user' -%}{%- set ns.multi = false -%}{%- set ns.last = i -%}{%- endif -%}{%- endfor -%}
{%- for m in messages -%}{%- if m.role == 'assistant' and loop.index0 > ns.last -%}[think]{%- endif -%}{{ m.role }}:{{ m.content }};{%- endfor -%}
{%- if add_generation_prompt -%}A:{%- endif -%}`;

test('header replay: a last-query index computed in the header and compared in the loop (Qwen3) serves every prefix', () => {
  // k = 0 too: its header reads messages|length - 1 = -1, compared the same way.
  assert.equal(check(QWEN_LIKE), 18);
  // Without header replay only the full conversation (both flags) is served.
  assert.equal(check(QWEN_LIKE, [CONV], { headerReplay: false }), 2);
});

test('header replay forced past the reads of its overridden state: the equality check fails', () => {
  PREFIX_TRACE_TESTING.ignoreStateReads = true;
  try {
    assert.throws(
      () => check(QWEN_LIKE),
      (e: Error) => e.name === 'AssertionError' && /served from the trace/.test(e.message),
    );
    const ref = JSON.parse(readFileSync(join(FIX, 'templates', 'Qwen-Qwen3-0.6B', 'renders.json'), 'utf8'));
    const ct = new ChatTemplate(
      { name: 'default', source: readFileSync(join(FIX, 'templates', 'Qwen-Qwen3-0.6B', 'chat_template.jinja'), 'utf8') },
      ref.variables,
      {},
    );
    const p = ref.probes.find((x: { id: string }) => x.id === 'p7_reasoning_final_multiturn');
    assert.throws(() => compareAll(ct, p.messages, p.tools ?? undefined, 'Qwen3 p7 (forced)'), /served from the trace/);
  } finally {
    PREFIX_TRACE_TESTING.ignoreStateReads = false;
  }
  assert.equal(check(QWEN_LIKE), 18);
});

test('header replay: header values printed, written and read whole in the loop; header output that differs', () => {
  // Printed in the loop: a plain read; prefixes whose count differs resume before its first use (here the first message).
  const printed = `{%- set n = messages|length -%}<{{ n }}>{%- for m in messages -%}{{ m.content }}/{{ n }};{%- endfor -%}{{ add_generation_prompt }}`;
  assert.equal(check(printed), 18);
  // Written in the loop before it is read: both renders write the same value from there on.
  const healed = `{%- set ns = namespace(c=messages|length) -%}{%- for m in messages -%}{%- set ns.c = loop.index -%}{{ m.content }}{{ ns.c }};{%- endfor -%}{{ ns.c }}`;
  assert.equal(check(healed), 18);
  // A namespace printed whole in the loop: every attribute read at once.
  const whole = `{%- set ns = namespace(c=messages|length, x=1) -%}{%- for m in messages -%}{%- if loop.index0 == 4 -%}{{ ns }}{%- endif -%}{{ m.content }};{%- endfor -%}`;
  assert.equal(check(whole), 18);
  // Compared with a container: not relaxed (a second comparison could read the list further).
  const container = `{%- set ns = namespace(r=messages[messages|length - 1].role) -%}{%- for m in messages -%}{%- if ns.r in ['user', 'tool'] -%}?{%- endif -%}{%- if m.role == ns.r -%}*{%- endif -%}{{ m.content }};{%- endfor -%}`;
  assert.equal(check(container), 16); // k = 0 raises (messages[-1] is undefined)
  // A macro defined in the header, called in the loop, reading a header value.
  const macro = `{%- set ns = namespace(last=messages|length - 1) -%}{%- macro tag(i) -%}{%- if i == ns.last -%}LAST{%- else -%}-{%- endif -%}{%- endmacro -%}
{%- for m in messages -%}{{ tag(loop.index0) }}{{ m.content }};{%- endfor -%}`;
  assert.equal(check(macro), 18);
  // The flag read in the header and kept: an override like any other value.
  const flag = `{%- set g = add_generation_prompt and messages|length > 2 -%}{%- for m in messages -%}{{ m.content }}{%- if loop.last and g -%}+{%- endif -%};{%- endfor -%}`;
  assert.equal(check(flag), 18);
});

test('header replay: states that differ by more than plain values, or by which object is which, are not served', () => {
  // A list built in the header from the messages: an object that differs between prefixes.
  const list = `{%- set users = messages|selectattr('role', 'eq', 'user')|list -%}{%- for m in messages -%}{{ m.content }}{{ users|length }};{%- endfor -%}`;
  // Served where the list holds the same messages as the full render's (k ≥ 4: both user turns) and nowhere else.
  assert.equal(check(list), 10);
  // Two variables that are one list in the full render and two equal lists in short prefixes: \`is sameas\` differs.
  const alias = `{%- set a = [1] -%}{%- if messages|length > 5 -%}{%- set b = a -%}{%- else -%}{%- set b = [1] -%}{%- endif -%}
{%- for m in messages -%}{{ m.content }}{{ a is sameas b }};{%- endfor -%}`;
  assert.equal(check(alias), 6); // k = 6, 7, 8 (the full render's branch), both flags; k ≤ 5 are rendered on their own
  // A variable the full render sets and a short prefix does not: no tail can unset it.
  const unset = `{%- if messages|length > 3 -%}{%- set x = 1 -%}{%- endif -%}{%- for m in messages -%}{{ m.content }}{{ x is defined }};{%- endfor -%}`;
  assert.equal(check(unset), 10); // k = 4 … 8, both flags
});

/**
 * A header replay stops at the render's first resumable loop by a signal every block of the top-level chain obeys
 * (`Control.Stop`, statements.ts), not by an exception. Built to catch a stop that does not reach every frame (the
 * replay would go on to the statements after the loop: here sets the loop reads, whose values would become overrides
 * and print `True`) or one left pending for the tails and later replays (their output would stop short), next to
 * `break` in a header loop and in a macro the header calls (Control.Break must stay its own signal).
 */
const STOP_FRAMES = `{%- set ns = namespace(n=messages|length) -%}{%- macro first(xs) -%}{%- for x in xs -%}{{ x }}{%- break -%}{%- endfor -%}{%- endmacro -%}
{%- if true -%}A{{ first([7, 8]) }}{%- for x in [1, 2, 3] -%}{%- if x == 2 -%}{%- break -%}{%- endif -%}{{ x }}{%- endfor -%}
{%- if ns.n > 0 -%}B{%- for m in messages -%}{{ m.content }}{{ after is defined }}{{ outer is defined }}{%- if loop.index0 > ns.n - 3 -%}!{%- endif -%};{%- endfor -%}
{%- set after = 'inner' -%}C{{ after }}{%- endif -%}D{%- set outer = 'outer' -%}{%- endif -%}E{{ outer is defined }}{%- if add_generation_prompt -%}G{%- endif -%}`;

test('header replay stops at its loop in every frame of the top-level chain, and the stop is not left pending', () => {
  const longer = chat(...Array.from({ length: 12 }, (_, i): [string, string] => [i % 2 ? 'assistant' : 'user', `c${i}`]));
  // Every prefix of one message or more is served by header replay (k = 0 is cut at `ns.n > 0`, before the loop).
  assert.equal(check(STOP_FRAMES, [CONV, longer]), 16 + 24);
  assert.equal(check(STOP_FRAMES, [CONV, longer], { headerReplay: false }), 2 + 2);
});

test('header replay evaluates without recording state reads: the flag read in comparisons, `not` and tests is still seen', () => {
  // A header replay's hooks record no state reads (HeaderHooks.recordsState): its comparisons, truth tests and `not`
  // take the evaluator's plain path. The flag must still be noticed there (its replay then depends on the flag value):
  // a replay shared by both values would print the first value's decisions for the other.
  const compared = `{%- set ns = namespace(n=messages|length, g=(add_generation_prompt == true)) -%}{%- set h = not add_generation_prompt -%}
{%- set d = ns.n > 2 and (add_generation_prompt is true) -%}{%- for m in messages -%}{{ m.content }}{%- if loop.last -%}[{{ ns.g }}{{ h }}{{ d }}]{%- endif -%};{%- endfor -%}`;
  assert.equal(check(compared), 18);
  // Undefined values and strings compared and tested in the header, kept as overrides (a float would not be one: a
  // PyFloat is an object, and one that differs between prefixes is rendered on its own).
  const mixed = `{%- set ns = namespace(a=(messages|length) // 2, b=(missing is defined) or messages|length > 3, c=('x' ~ messages|length) < 'x5') -%}
{%- for m in messages -%}{{ m.content }}{%- if loop.index0 > ns.a -%}+{%- endif -%}{%- if ns.b and not ns.c -%}*{%- endif -%};{%- endfor -%}{{ add_generation_prompt }}`;
  assert.equal(check(mixed), 18);
});

test("header replay within the render budget: the header counts as the prefix's own, the rest as the full render's", () => {
  // 301 iterations per message and a header loop over the messages: prefixes past the budget raise, as on their own.
  const heavy = `{%- set ns = namespace(n=0) -%}{%- for m in messages[::-1] -%}{%- set ns.n = ns.n + 1 -%}{%- endfor -%}
{%- for m in messages -%}{%- for i in range(300) -%}{%- endfor -%}{{ m.content }}{{ ns.n }};{%- endfor -%}{{ add_generation_prompt }}`;
  const five = chat(['user', '1'], ['assistant', '2'], ['user', '3'], ['assistant', '4'], ['user', '5']);
  // k ≤ 3 fit (k header iterations + 301 k ≤ 1,000), both flags; longer ones raise, and so does the full render.
  assert.equal(check(heavy, [five], { budget: { maxLoopIterations: 1000 } }), 8);
});

// ---------------------------------------------------------------------------------------------------------------
// Quiet loops in a header replay (statements.ts `watchedBody`): a header loop ends at its first iteration that reads
// nothing per-iteration, changes nothing outside itself, writes nothing and counts nothing; the rest are counted only.

/** A header loop over the reversed messages (`body`), its state printed in the message loop (every prefix replays it). */
const reversedHeader = (init: string, body: string, after = '{{ ns }}') =>
  `{%- set ns = namespace(${init}) -%}{%- for m in messages[::-1] -%}${body}{%- endfor -%}
{%- for m in messages -%}{{ m.role }}:{{ m.content }};{%- endfor -%}${after}{%- if add_generation_prompt -%}A:{%- endif -%}`;

/** Header loops whose first iterations look quiet but are not: each differs from the real render if skipped. */
const NOT_QUIET: [string, string][] = [
  // A decision on the loop counter.
  ['counter', reversedHeader('c=0, n=messages|length', `{%- if loop.index0 > 2 -%}{%- set ns.c = ns.c + 1 -%}{%- endif -%}`)],
  // A decision on the loop variable (the last message of CONV is an assistant turn: the first iteration writes nothing).
  ['item', reversedHeader('t=0, n=messages|length', `{%- if m.role == 'tool' -%}{%- set ns.t = ns.t + 1 -%}{%- endif -%}`)],
  // A counting set, its name read: a per-iteration value.
  ['counted name read', reversedHeader('x=-1, n=messages|length', `{%- set i = loop.index0 -%}{%- if i == 3 -%}{%- set ns.x = i -%}{%- endif -%}`)],
  // A value that raises in a later iteration only (not a counting set: `//`): prefixes of 3 to 6 messages raise at
  // their third iteration; the full conversation does not.
  ['later error', reversedHeader('n=messages|length', `{%- set q = 10 // (loop.index0 - 2 + (messages|length > 6) * 100) -%}`)],
  // A block set reading the item, its name read.
  [
    'block set',
    reversedHeader('r="", n=messages|length', `{%- set x -%}{{ m.role }}{%- endset -%}{%- if x == 'user' -%}{%- set ns.r = ns.r ~ 'u' -%}{%- endif -%}`),
  ],
  // Output in a later iteration only.
  ['later output', reversedHeader('n=messages|length', `{%- if loop.last -%}[first]{%- endif -%}`, '')],
  // State changed from values the same in every iteration: a count, a namespace written with the same value.
  ['count', reversedHeader('n=messages|length, k=0', `{%- set ns.k = ns.k + 1 -%}`)],
  ['same value written', reversedHeader('n=messages|length, k=0', `{%- set ns.k = 0 -%}{%- if m.role == 'tool' -%}{%- set ns.k = 1 -%}{%- endif -%}`)],
  // Per-iteration values reached through `loop`'s methods and neighbours, not the loop variable.
  ['loop.cycle', reversedHeader('n=messages|length, k=0', `{%- if loop.cycle(false, false, true) -%}{%- set ns.k = ns.k + 1 -%}{%- endif -%}`)],
  [
    'previtem',
    reversedHeader('n=messages|length, t=0', `{%- if loop.previtem is defined and loop.previtem.role == 'tool' -%}{%- set ns.t = ns.t + 1 -%}{%- endif -%}`),
  ],
  // Qwen3's test on the turn's text, without its flag: every user turn that is not a wrapped tool response counts.
  [
    'text test',
    reversedHeader(
      'n=messages|length, q=0',
      `{%- if m.role == 'user' and not (m.content.startswith('<tool_response>') and m.content.endswith('</tool_response>')) -%}{%- set ns.q = ns.q + 1 -%}{%- endif -%}`,
    ),
  ],
  // A name set from the item in the iteration, read in a nested scope (a block set) later in it.
  [
    'item through a block set',
    reversedHeader(
      'n=messages|length, r=0',
      `{%- set role = m.role -%}{%- set x -%}{{ role }}{%- endset -%}{%- if x == 'tool' -%}{%- set ns.r = ns.r + 1 -%}{%- endif -%}`,
    ),
  ],
];

test('header replay: a loop ends at its first quiet iteration (Qwen3), never at one that reads or changes per-iteration state', () => {
  QUIET_LOOPS_TESTING.skipped = 0;
  assert.equal(check(QWEN_LIKE), 18);
  // k = 1 … 8, each once (the replay is shared by both flags): the iterations after the last user turn was found.
  assert.ok(QUIET_LOOPS_TESTING.skipped > 0);
  const skippedQwen = QUIET_LOOPS_TESTING.skipped;
  // The same on the real template: every prefix of an agent run served, equal to its own render.
  const qwen = readFileSync(join(FIX, 'templates', 'Qwen-Qwen3-0.6B', 'chat_template.jinja'), 'utf8');
  const run = chat(['system', 'S'], ...Array.from({ length: 30 }, (_, i): [string, string] => [i % 2 ? 'assistant' : 'user', `m${i}`]));
  const served = compareAll(templateOf(qwen), run, undefined, 'Qwen3, 31 messages').proven;
  assert.equal(served, 62);
  assert.ok(QUIET_LOOPS_TESTING.skipped > skippedQwen);
  for (const [name, source] of NOT_QUIET) {
    QUIET_LOOPS_TESTING.skipped = 0;
    const proven = check(source);
    assert.ok(proven > 0, name);
    assert.equal(QUIET_LOOPS_TESTING.skipped, 0, `${name}: no iteration skipped`);
  }
});

test('header replay: quiet loops forced past per-iteration reads and changes: the equality check fails on each', () => {
  QUIET_LOOPS_TESTING.ignoreVarying = true;
  try {
    for (const [name, source] of NOT_QUIET)
      assert.throws(
        () => check(source),
        (e: Error) => e.name === 'AssertionError' && /served from the trace|served a render whose own render raises/.test(e.message),
        name,
      );
  } finally {
    QUIET_LOOPS_TESTING.ignoreVarying = false;
  }
  assert.equal(check(QWEN_LIKE), 18);
});

test('header replay: a quiet loop counts its skipped iterations against the render budget', () => {
  // A header loop of 100 (10 - k) iterations, quiet from its first (a counting set whose name is never read), then k
  // message iterations: within a budget of 500 for k ≥ 6 (406 … 208); shorter prefixes raise, as on their own.
  const source = `{%- set ns = namespace(n=messages|length) -%}{%- for i in range((10 - messages|length) * 100) -%}{%- set j = loop.index + 1 -%}{%- endfor -%}
{%- for m in messages -%}{{ m.content }};{%- endfor -%}{{ add_generation_prompt }}`;
  QUIET_LOOPS_TESTING.skipped = 0;
  assert.equal(check(source, [CONV], { budget: { maxLoopIterations: 500 } }), 6); // k = 6, 7, 8, both flags
  assert.ok(QUIET_LOOPS_TESTING.skipped > 0);
  // Nested loops in the header: the inner loop is quiet in each outer iteration; the outer one counts the inner
  // iterations (its own are never skipped).
  QUIET_LOOPS_TESTING.skipped = 0;
  const nested = `{%- set ns = namespace(n=messages|length) -%}{%- for m in messages[::-1] -%}{%- for c in [1, 2, 3] -%}{%- endfor -%}{%- endfor -%}
{%- for m in messages -%}{{ m.content }};{%- endfor -%}{{ ns.n }}`;
  assert.equal(check(nested), 18);
  // Replays of k = 0 … 7 (the full conversation is not replayed), each of their k outer iterations skipping 2 inner
  // ones: 2 (0 + 1 + … + 7).
  assert.equal(QUIET_LOOPS_TESTING.skipped, 56);
});

test('linearPrefixes: false renders every prefix on its own', () => {
  const ct = templateOf(`{%- for m in messages -%}{{ m.content }}{%- endfor -%}`, { linearPrefixes: false });
  const pr = new PrefixRenderer(ct, CONV, undefined);
  for (let n = 0; n <= CONV.length; n++) pr.render(n, n % 2 === 0);
  assert.deepEqual(pr.stats, { proven: 0, fallback: CONV.length + 1 });
});

// ---------------------------------------------------------------------------------------------------------------
// Agent runs

test('agent runs of 10, 40, 80 and 160 messages: real templates, every prefix, both flags', async () => {
  const { generateRows } = await import('../../scripts/bench-data.mjs');
  const rows = [...generateRows('agent', 4, 5)] as { messages: unknown[] }[];
  const pairs = rows.flatMap((r) => r.messages.slice(2));
  const convs = [10, 40, 80, 160].map((n) => {
    const o = normalizeRow({ ...rows[0], messages: [...rows[0].messages.slice(0, 2), ...pairs].slice(0, n) }, { file: 'agent.jsonl', line: 1 }, 'agent.jsonl');
    assert.equal(o.kind, 'conversation');
    return o.kind === 'conversation' ? o.conversation : null!;
  });
  const served: Record<string, number[]> = {};
  for (const name of ['deepseek_v3', 'qwen3', 'llama3_1', 'gemma3'] as const) {
    const tok = loadTokenizer(lenmlModelDir(name));
    const ct = new ChatTemplate(pickTemplate(tok.templates, false)!, tok.specialTokenVars, {});
    served[name] = convs.map((c) => {
      const messages = ct.adaptMessages(c.messages);
      // Every prefix for the shorter runs; every third one (and the last few) for the long ones.
      const ns = Array.from({ length: messages.length + 1 }, (_, k) => k).filter((k) => messages.length <= 40 || k % 3 === 0 || k > messages.length - 4);
      return compareAll(ct, messages, c.tools, `${name} ${messages.length} messages`, ns).proven;
    });
  }
  console.log('served from the trace per run of 10/40/80/160 messages:', JSON.stringify(served));
  const all = (n: number) => 2 * (n <= 40 ? n + 1 : Math.floor(n / 3) + 1 + 3);
  for (const name of ['deepseek_v3', 'llama3_1']) assert.deepEqual(served[name], [10, 40, 80, 160].map(all), name);
  // Gemma-3 reads messages[0] before its loop: all but the empty prefix.
  assert.deepEqual(
    served.gemma3,
    [10, 40, 80, 160].map((n) => all(n) - 2),
    'gemma3',
  );
  // Qwen3 reads messages|length first (its last-query index): every prefix by header replay.
  // (k = 0 raises: its header reads messages[0].role.)
  assert.deepEqual(
    served.qwen3,
    [10, 40, 80, 160].map((n) => all(n) - 2),
    'qwen3',
  );
});
