/**
 * Chat templates render exactly as Python `transformers` 5.17.0
 * `apply_chat_template(tokenize=False)` does (test/fixtures/renders), for every
 * conversation, every prefix, with and without the generation prompt.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate, pythonJsonDumps, pythonJsonRedump } from '../../src/core/templates/template';
import { pythonFloatRepr } from '../../src/core/templates/jinja';
import { PyFloat } from '../../src/core/templates/jinja/values';
import { lenmlModelDir, sharedTokenizer } from '../helpers';

const FIX = join(__dirname, '..', 'fixtures');
const R = require('../fixtures/renders/renders.json');

interface Model {
  source: string;
  vars: Record<string, string>;
  /** The reference omits a leading BOS that the template writes when the tokenizer adds BOS itself (`add_bos_token: true`); ids are the same. */
  strippedBos?: string;
}
const models: Record<string, Model> = {};
for (const m of ['qwen3', 'deepseek_v3', 'gemma3', 'llama3_1'] as const) {
  const dir = lenmlModelDir(m);
  const t = sharedTokenizer(dir);
  const cfg = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  models[m] = { source: t.templates[0].source, vars: t.specialTokenVars, strippedBos: cfg.add_bos_token ? t.specialTokenVars.bos_token : undefined };
}
// The npm llama3_1 package ships a short 3.0-style template; the fixture is the real 3.1 one with tools.
models.llama3_1.source = readFileSync(join(FIX, 'llama3_1', 'chat_template.jinja'), 'utf8');
models.kimi_k2_instruct = { source: readFileSync(join(FIX, 'kimi', 'kimi-k2-instruct.chat_template.jinja'), 'utf8'), vars: {} };
models.kimi_k2_thinking = { source: readFileSync(join(FIX, 'kimi', 'kimi-k2-thinking.chat_template.jinja'), 'utf8'), vars: {} };

for (const model of Object.keys(models)) {
  test(`${model}: renders equal transformers' for every conversation and prefix`, () => {
    const m = models[model];
    const entries = R.renders.filter((r: any) => r.model === model);
    assert.ok(entries.length >= 6);
    let compared = 0;
    for (const r of entries) {
      const conv = R.conversations.find((c: any) => c.id === r.conv);
      const ct = new ChatTemplate({ name: 'default', source: m.source }, m.vars, r.kwargs);
      const render = (n: number, gen: boolean) => {
        const out = ct.render(conv.messages.slice(0, n), conv.tools, { addGenerationPrompt: gen });
        return m.strippedBos && out.startsWith(m.strippedBos) ? out.slice(m.strippedBos.length) : out;
      };
      const where = `${model} ${r.conv} ${JSON.stringify(r.kwargs)}`;
      if (r.error) {
        assert.throws(
          () => render(conv.messages.length, false),
          (e: Error) => r.error.includes(e.message),
          where,
        );
        compared++;
        continue;
      }
      assert.equal(render(conv.messages.length, false), r.full, where);
      compared++;
      for (const p of r.prefixes.filter((x: any) => x.n > 0)) {
        assert.equal(render(p.n, true), p.gen, `${where} prefix ${p.n} gen`);
        assert.equal(render(p.n, false), p.nogen, `${where} prefix ${p.n}`);
        compared += 2;
      }
    }
    assert.ok(compared > 20, `only ${compared} renders compared`);
  });
}

test('tool-call arguments: objects for templates that serialize them (Qwen3), JSON strings for templates that concatenate (DeepSeek-V3)', () => {
  const qwen = sharedTokenizer(lenmlModelDir('qwen3'));
  const ds = sharedTokenizer(lenmlModelDir('deepseek_v3'));
  const q = new ChatTemplate(qwen.templates[0], qwen.specialTokenVars);
  const d = new ChatTemplate(ds.templates[0], ds.specialTokenVars);
  assert.equal(q.objectToolArguments, true);
  assert.equal(d.objectToolArguments, false);
  const msg = [{ role: 'assistant' as const, content: null, tool_calls: [{ type: 'function' as const, function: { name: 'f', arguments: { a: [1, 'x'] } } }] }];
  assert.deepEqual(d.adaptMessages(msg)[0].tool_calls![0].function.arguments, '{"a": [1, "x"]}');
  assert.deepEqual(q.adaptMessages(msg)[0].tool_calls![0].function.arguments, { a: [1, 'x'] });
  assert.equal(q.adaptMessages(msg)[0].content, '');
  assert.equal(d.adaptMessages(msg)[0].content, null);
  assert.equal(pythonJsonDumps({ k: 'v', n: [1, { b: null }] }), '{"k": "v", "n": [1, {"b": null}]}');
});

test('a JSON-string arguments is re-serialized as Python tojson writes the parsed object (1.0 stays 1.0) for templates that also write strings verbatim', () => {
  const qwen = sharedTokenizer(lenmlModelDir('qwen3'));
  const q = new ChatTemplate(qwen.templates[0], qwen.specialTokenVars);
  assert.equal(q.verbatimStringArguments, true);
  const kimi = new ChatTemplate({ name: 'default', source: readFileSync(join(FIX, 'kimi', 'kimi-k2-thinking.chat_template.jinja'), 'utf8') }, {});
  assert.equal(kimi.verbatimStringArguments, true);
  const llama = new ChatTemplate({ name: 'default', source: readFileSync(join(FIX, 'llama3_1', 'chat_template.jinja'), 'utf8') }, {});
  assert.equal(llama.objectToolArguments, true);
  assert.equal(llama.verbatimStringArguments, false);
  const ds = sharedTokenizer(lenmlModelDir('deepseek_v3'));
  assert.equal(new ChatTemplate(ds.templates[0], ds.specialTokenVars).verbatimStringArguments, false);

  const args = '{"amount":10.0,"rate":1E-7,"id":12345678901234567890,"tags":["a","é"]}';
  const msgs = [
    { role: 'user' as const, content: 'pay' },
    { role: 'assistant' as const, content: null, tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'pay', arguments: args } }] },
  ];
  // Python: json.dumps(json.loads(args), ensure_ascii=False)
  const py = '{"amount": 10.0, "rate": 1e-07, "id": 12345678901234567890, "tags": ["a", "é"]}';
  assert.ok(q.render(q.adaptMessages(msgs), undefined, { addGenerationPrompt: false }).includes(`{"name": "pay", "arguments": ${py}}`));
  // Object form (Llama-3.1 reads objects only): parsed as Python does — floats stay floats; an integer past 2^53 is the nearest number (the engine has no big integers).
  assert.deepEqual(llama.adaptMessages(msgs)[1].tool_calls![0].function.arguments, {
    amount: new PyFloat(10),
    rate: new PyFloat(1e-7),
    id: Number('12345678901234567890'),
    tags: ['a', 'é'],
  });
  assert.equal(pythonJsonRedump('[1]'), null);
  assert.equal(pythonJsonRedump('{"a":1,"a":2,"b":-0,"c":1e5}'), '{"a": 2, "b": 0, "c": 100000.0}');
  assert.deepEqual([1, 1e16, 1e-5, 0.0001, 1e15, -0].map(pythonFloatRepr), ['1.0', '1e+16', '1e-05', '0.0001', '1000000000000000.0', '-0.0']);
});

test('object tool-call arguments keep Python floats: 10.0 stays 10.0, 1e5 is 100000.0 (tojson and str), as a server that json.loads them renders', () => {
  // Python reference: jinja2 with transformers' tojson (json.dumps) on json.loads('{"x": 10.0, "e": 1e5, "n": 3, "s": "a"}').
  const source =
    '{%- for m in messages %}<{{ m.role }}>{{ m.content or "" }}{%- for tc in m.tool_calls or [] %}[{{ tc.function.name }} {{ tc.function.arguments|tojson }}' +
    '{% for k, v in tc.function.arguments|items %} {{ k }}={{ v }}{% endfor %}]{%- endfor %}</{{ m.role }}>{%- endfor %}{%- if add_generation_prompt %}<assistant>{%- endif %}';
  const ct = new ChatTemplate({ name: 'default', source }, {});
  assert.equal(ct.objectToolArguments, true);
  const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{"x": 10.0, "e": 1e5, "n": 3, "s": "a", "l": [0.5, 2]}' } };
  const msgs = ct.adaptMessages([
    { role: 'user', content: 'q' },
    { role: 'assistant', content: null, tool_calls: [call] },
  ]);
  assert.equal(
    ct.render(msgs, undefined, { addGenerationPrompt: false }),
    '<user>q</user><assistant>[f {"x": 10.0, "e": 100000.0, "n": 3, "s": "a", "l": [0.5, 2]} x=10.0 e=100000.0 n=3 s=a l=[0.5, 2]]</assistant>',
  );
});
