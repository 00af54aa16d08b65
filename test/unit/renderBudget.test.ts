/**
 * The render budget (src/core/templates/renderBudget.ts): a broken or hostile chat template costs one errored
 * row, never the process. Each hostile template is stopped by its own limit, quickly and with bounded memory;
 * real templates with long conversations render inside the defaults; `prepare` errors the row with reason
 * `template_budget_exceeded` and goes on; `check-template` reports the overrun as a finding.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkTemplate } from '../../src/core/records/checkTemplate';
import { mergeShardResults } from '../../src/core/run/jobs/mergeReports';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { type PrepareResult } from '../../src/core/run/contract';
import { ChatTemplate } from '../../src/core/templates/template';
import { TemplateBudgetError, TemplateRenderError, type BudgetLimit } from '../../src/core/templates/errors';
import { CompiledTemplate } from '../../src/core/templates/jinja';
import { DEFAULT_RENDER_BUDGET, type RenderBudget } from '../../src/core/templates/renderBudget';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import type { Message } from '../../src/core/types';
import { cliNodeArgs, lenmlModelDir, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');

/** Renders `source` and returns the budget error it must raise, with the time it took. */
function overrun(source: string, budget: Partial<RenderBudget> = {}): { e: TemplateBudgetError; ms: number } {
  const t = new CompiledTemplate(source);
  const t0 = performance.now();
  try {
    t.render({ messages: [] }, { budget });
  } catch (e) {
    const ms = performance.now() - t0;
    assert.ok(e instanceof TemplateBudgetError, `expected a budget error, got ${(e as Error).message}`);
    assert.ok(e instanceof TemplateRenderError);
    assert.equal(e.code, 'template_budget_exceeded');
    return { e, ms };
  }
  assert.fail('the render did not run past its budget');
}

function expectLimit(source: string, limit: BudgetLimit, message: RegExp, budget: Partial<RenderBudget> = {}, maxMs = 2000): void {
  const { e, ms } = overrun(source, budget);
  assert.equal(e.limit, limit, e.message);
  assert.match(e.message, message);
  assert.ok(ms < maxMs, `${limit}: took ${ms.toFixed(0)} ms`);
}

test('a huge range is refused before it is built (the limit is jinja2 sandbox MAX_RANGE by default)', () => {
  expectLimit('{% for i in range(100000000) %}{% endfor %}', 'range', /^chat template exceeded the render budget: range size 100,000,000 > 100,000$/, {}, 1500);
  expectLimit('{{ range(10)|length }}', 'range', /range size 10 > 5/, { maxRange: 5 });
  assert.equal(new CompiledTemplate('{{ range(100000)|length }}').render({}), '100000');
});

test('loop iterations are counted across nested loops', () => {
  expectLimit('{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}', 'loopIterations', /loop iterations > 100,000$/, {
    maxLoopIterations: 100_000,
  });
  // exactly at the limit passes
  assert.equal(
    new CompiledTemplate('{% for i in range(10) %}{% for j in range(9) %}{% endfor %}{% endfor %}ok').render({}, { budget: { maxLoopIterations: 100 } }),
    'ok',
  );
});

test('runaway macro recursion stops at the call depth; a macro that forks stops at the iteration count', () => {
  expectLimit('{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}', 'callDepth', /macro call depth > 200$/);
  expectLimit('{% macro m(n) %}{% if n < 40 %}{{ m(n + 1) }}{{ m(n + 1) }}{% endif %}{% endmacro %}{{ m(0) }}', 'loopIterations', /loop iterations > 50,000/, {
    maxLoopIterations: 50_000,
  });
  // recursion as deep as real templates need (schemas nested a few levels) is fine
  assert.equal(new CompiledTemplate('{% macro m(n) %}{% if n > 0 %}{{ m(n - 1) }}{% endif %}.{% endmacro %}{{ m(150) }}').render({}).length, 151);
});

test('a gigantic string or list is refused before it is allocated', () => {
  expectLimit("{{ 'x' * 10**9 }}", 'outputLength', /output length 1,000,000,000 > 50,000,000$/, {}, 200);
  expectLimit('{{ [1] * 10**9 }}', 'outputLength', /output length 1,000,000,000/, {}, 200);
  expectLimit(
    "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    'outputLength',
    /output length 67,108,864 > 50,000,000/,
    {},
    1000,
  );
  expectLimit("{% for i in range(200) %}{{ 'abcde' }}{% endfor %}", 'outputLength', /output length \d+ > 500/, { maxOutputLength: 500 });
});

test('wall time: a render that runs too long is stopped', () => {
  const { e, ms } = overrun('{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}', { maxMillis: 300 });
  assert.equal(e.limit, 'wallTime');
  assert.match(e.message, /render time > 300 ms/);
  assert.ok(ms < 2000, `${ms} ms`);
});

test('the defaults are documented and generous', () => {
  assert.deepEqual(
    { ...DEFAULT_RENDER_BUDGET },
    { maxRange: 100_000, maxLoopIterations: 5_000_000, maxOutputLength: 50_000_000, maxCallDepth: 200, maxMillis: 30_000 },
  );
});

/** A 1000-message agent run: a user request, 499 tool calls each with its result, a final answer. */
function agentRun(): Message[] {
  const m: Message[] = [{ role: 'user', content: 'Check the weather in many cities.' }];
  for (let i = 0; i < 499; i++) {
    m.push({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: `functions.get_weather:${i}`, type: 'function', function: { name: 'get_weather', arguments: { city: `City${i}` } } }],
    });
    m.push({ role: 'tool', tool_call_id: `functions.get_weather:${i}`, name: 'get_weather', content: `{"temp_c": ${i % 30}}` });
  }
  m.push({ role: 'assistant', content: 'Done.' });
  return m;
}

test('real templates render a 1000-message agent conversation inside the default budget', () => {
  const tools = [
    {
      type: 'function',
      function: { name: 'get_weather', description: 'Get the weather.', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    },
  ];
  const conv = agentRun();
  assert.equal(conv.length, 1000);
  // the heaviest ones measured (quadratic tool handling), and the embedded default
  for (const name of ['CohereForAI-c4ai-command-r7b-12-2024-tool_use', 'google-gemma-4-31B-it', 'openai-gpt-oss-120b', 'Qwen-Qwen3-0.6B']) {
    const dir = join(ROOT, 'test', 'fixtures', 'templates', name);
    const vars = JSON.parse(readFileSync(join(dir, 'renders.json'), 'utf8')).variables;
    const ct = new ChatTemplate({ name: 'default', source: readFileSync(join(dir, 'chat_template.jinja'), 'utf8') }, vars);
    const text = ct.render(conv, tools, { addGenerationPrompt: false });
    assert.ok(text.includes('City498'), name);
  }
});

test('the budget is set per ChatTemplate (constructor option)', () => {
  const named = { name: 'default', source: '{% for m in messages %}{% for i in range(50) %}.{% endfor %}{% endfor %}' };
  const msgs: Message[] = [{ role: 'user', content: 'a' }];
  assert.equal(new ChatTemplate(named, {}).render(msgs, undefined, { addGenerationPrompt: false }).length, 50);
  assert.throws(
    () => new ChatTemplate(named, {}, {}, { budget: { maxLoopIterations: 20 } }).render(msgs, undefined, { addGenerationPrompt: false }),
    TemplateBudgetError,
  );
});

/** A model folder with Qwen3's tokenizer and the given chat template. */
function modelWithTemplate(template: string): string {
  const dir = tempDir();
  copyFileSync(join(lenmlModelDir('qwen3'), 'tokenizer.json'), join(dir, 'tokenizer.json'));
  copyFileSync(join(lenmlModelDir('qwen3'), 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
  writeFileSync(join(dir, 'chat_template.jinja'), template);
  return dir;
}

const CHATML =
  '{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}';

test('prepare: a row whose render runs past the budget is errored with template_budget_exceeded; the run goes on', async () => {
  // Hostile only for conversations longer than two messages.
  const dir = modelWithTemplate('{%- if messages|length > 2 %}{% for i in range(100000000) %}{% endfor %}{% endif -%}\n' + CHATML);
  const turn = (q: string, a: string) => [
    { role: 'user', content: q },
    { role: 'assistant', content: a },
  ];
  const file = writeJsonl([{ messages: turn('q1', 'a1') }, { messages: [...turn('q2', 'a2'), ...turn('q3', 'a3')] }, { messages: turn('q4', 'a4') }]);
  const t0 = Date.now();
  const res = await prepare({ inputs: [file], outDir: tempDir(), tokenizerDir: dir, workers: 1 });
  assert.ok(Date.now() - t0 < 20_000);
  const f = res.files[0];
  assert.equal(res.ok, true);
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsErrored, f.rowsDropped, f.rowsSetAside], [3, 2, 1, 0, 0]);
  assert.deepEqual(f.errorReasons, { template_budget_exceeded: { count: 1, lines: [2] } });
  assert.deepEqual(res.totals.errorReasons, { template_budget_exceeded: 1 });
  assert.match(f.errors[0].message, /^chat template error: chat template exceeded the render budget: range size 100,000,000 > 100,000$/);
  assert.equal(f.errors[0].line, 2);
  const md = readFileSync(res.outputs.reportMd, 'utf8');
  assert.match(md, /- `template_budget_exceeded` × 1 \(lines 2\): the chat template ran past its render budget/);
  assert.ok(
    res.templateCheck!.warnings.some((w) => w.code === 'template_budget_exceeded'),
    'the run-wide template check reports it too',
  );
  assert.equal(readFileSync(res.outputs.tokenizedData, 'utf8').trim().split('\n').length, 2);
});

test('merge-reports adds up the errored rows per reason of the shards', () => {
  const shard = (index: number, lines: number[]): PrepareResult =>
    ({
      ok: true,
      failures: [],
      outDir: `/s${index}`,
      outputs: { tokenizedData: '', promptsToGenerate: '', reportJson: '', reportMd: '' },
      tokenizer: { dir: '/t', name: 't', hash: 'h', embeddedDefault: false },
      templateKwargs: {},
      mask: 'assistant',
      maxLength: null,
      truncate: false,
      templateCheck: null,
      files: [
        {
          file: '/in.jsonl',
          format: 'x',
          evidence: [],
          rowsRead: 5,
          rowsWritten: 5 - lines.length,
          recordsWritten: 5 - lines.length,
          rowsSetAside: 0,
          rowsDropped: 0,
          rowsErrored: lines.length,
          dropped: {},
          errors: lines.map((line) => ({ line, message: 'chat template error: …' })),
          errorReasons: { template_budget_exceeded: { count: lines.length, lines } },
          notes: {},
          trainableTokens: 1,
          totalTokens: 2,
          rowsInFile: 10,
        },
      ],
      totals: {} as PrepareResult['totals'],
      elapsedMs: 1,
      shard: { index, count: 2 },
    }) as PrepareResult;
  const m = mergeShardResults([shard(0, [3, 9]), shard(1, [2])], tempDir());
  assert.deepEqual(m.files[0].errorReasons, { template_budget_exceeded: { count: 3, lines: [2, 3, 9] } });
  assert.deepEqual(m.totals.errorReasons, { template_budget_exceeded: 3 });
  assert.equal(m.totals.rowsErrored, 3);
});

test('check-template: a budget overrun is a finding, not a crash', () => {
  const tok = loadTokenizer(modelWithTemplate('{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{% if messages|length > 1 %}{{ m(0) }}{% endif %}' + CHATML));
  const check = checkTemplate(tok);
  // per probe (a probe conversation) and template-wide (a render for a finding), never as a plain template_error
  const overruns = check.warnings.filter((w) => w.code === 'template_budget_exceeded');
  assert.ok(overruns.some((w) => w.probe !== null) && overruns.some((w) => w.probe === null), JSON.stringify(check.warnings));
  assert.ok(overruns.every((w) => /macro call depth > 200/.test(w.message)));
  assert.ok(!check.warnings.some((w) => w.code === 'template_error' || w.code === 'probe_render_failed'));
  assert.ok(check.records.some((r) => r.error && /render budget/.test(r.error)));
});

test('a 10^10-iteration nested loop is stopped by the default iteration limit within seconds', () => {
  const { e, ms } = overrun('{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}');
  assert.equal(e.limit, 'loopIterations');
  assert.match(e.message, /loop iterations > 5,000,000$/);
  assert.ok(ms < 20_000, `${ms} ms`);
});

test('the process survives hostile templates under the default budget, in 512 MB, within seconds', () => {
  // The case that once ran 49 s and aborted at 5.6 GB, end to end through the CLI, plus the other hostile shapes.
  const hostile = [
    '{% for i in range(100000000) %}{% endfor %}' + CHATML,
    '{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}' + CHATML,
    "{{ 'x' * 10**9 }}" + CHATML,
  ];
  const file = writeJsonl([
    {
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ],
    },
  ]);
  for (const template of hostile) {
    const out = tempDir();
    const t0 = Date.now();
    const r = spawnSync(
      process.execPath,
      ['--max-old-space-size=512', ...cliNodeArgs(), 'prepare', file, '--tokenizer', modelWithTemplate(template), '--out', out, '--json', '--workers', '1'],
      { encoding: 'utf8', cwd: ROOT, timeout: 120_000 },
    );
    const ms = Date.now() - t0;
    assert.equal(r.signal, null, `${template.slice(0, 40)}: killed by ${r.signal}; ${r.stderr}`);
    assert.equal(r.status, 1, r.stderr); // every row errored: the run fails, cleanly, and prints its report
    const report = JSON.parse(r.stdout);
    assert.equal(report.files[0].rows_errored, 1); // --json prints the report.json document (snake_case)
    assert.deepEqual(report.totals.error_reasons, { template_budget_exceeded: 1 });
    assert.ok(ms < 30_000, `${template.slice(0, 40)}: ${ms} ms`);
  }
});
