/**
 * The renderer's Jinja semantics against Python jinja2, one test per gap of `src/core/templates/jinja/compiledTemplate.ts`
 * (its table names them). Each case is a small template; its expected text, or the Python exception it raises,
 * was produced by real jinja2 3.1.6 configured as transformers configures it
 * (`ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`, `tojson` with `ensure_ascii=False`,
 * `raise_exception`, `strftime_now`) by `scripts/jinja-reference.py cases test/fixtures/jinja/cases.json`, and is
 * committed in that file.
 *
 * - An expected text must be rendered exactly.
 * - An expected error must be raised, as the same Python exception type (`TemplateRenderError.pythonType`), with
 *   the same message for `raise_exception` (`TemplateError`); an error Python raises while compiling must be raised
 *   by the compiler. Python's `RecursionError` is the renderer's call-depth budget, and the sandbox's
 *   `OverflowError` for a range over 100,000 items is the renderer's range budget (the same limit by default).
 * - `refuse`: Python's output cannot be reproduced (it prints a memory address or a random value) or is not
 *   implemented (`wordwrap`, integers beyond 2^53); the renderer must raise one of the listed types, never guess.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TemplateBudgetError, TemplateRenderError } from '../../src/core/templates/errors';
import { CompiledTemplate } from '../../src/core/templates/jinja';

interface Case {
  gap: string;
  name: string;
  template: string;
  vars?: Record<string, unknown>;
  now?: string;
  refuse?: string[];
  expected: { text?: string; error?: string; phase?: 'compile' };
}
const doc: { defaults: Record<string, unknown>; cases: Case[] } = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'jinja', 'cases.json'), 'utf8'));

/** Outcome of one case through the renderer: its text or its error. */
function run(c: Case): { text?: string; error?: TemplateRenderError; phase?: 'compile' } {
  let t: CompiledTemplate;
  try {
    t = new CompiledTemplate(c.template);
  } catch (e) {
    if (!(e instanceof TemplateRenderError)) throw e;
    return { error: e, phase: 'compile' };
  }
  try {
    const now = c.now ? () => new Date(c.now!) : undefined;
    return { text: t.render({ ...structuredClone(doc.defaults), ...(c.vars ?? {}) }, { now }) };
  } catch (e) {
    if (!(e instanceof TemplateRenderError)) throw e;
    return { error: e };
  }
}

/** Why a case disagrees with Python, or null when it agrees. */
function disagreement(c: Case): string | null {
  const got = run(c);
  const shown = got.error ? `${got.error.pythonType}: ${got.error.message}` : JSON.stringify(got.text);
  if (c.refuse)
    return got.error && c.refuse.includes(got.error.pythonType ?? '') ? null : `expected the renderer to refuse (${c.refuse.join('/')}), got ${shown}`;
  const exp = c.expected;
  if (exp.text !== undefined) return got.text === exp.text ? null : `expected ${JSON.stringify(exp.text)}, got ${shown}`;
  const [pyType] = exp.error!.split(':', 1);
  if (!got.error) return `expected ${exp.error} (${exp.phase ?? 'render'}), got text ${shown}`;
  if ((exp.phase === 'compile') !== (got.phase === 'compile'))
    return `expected ${exp.error} at ${exp.phase ?? 'render'} time, got it at ${got.phase ?? 'render'} time: ${shown}`;
  if (pyType === 'RecursionError')
    return got.error instanceof TemplateBudgetError && got.error.limit === 'callDepth' ? null : `expected the call-depth budget, got ${shown}`;
  if (exp.error!.startsWith('OverflowError: Range too big'))
    return got.error instanceof TemplateBudgetError && got.error.limit === 'range' ? null : `expected the range budget, got ${shown}`;
  if (got.error.pythonType !== pyType) return `expected ${exp.error}, got ${shown}`;
  if (pyType === 'TemplateError' && `TemplateError: ${got.error.message}` !== exp.error) return `expected ${exp.error}, got ${shown}`;
  return null;
}

const gaps = [...new Set(doc.cases.map((c) => c.gap))];

test('the gap cases are there, each with a Python reference', () => {
  assert.ok(doc.cases.length >= 250, `${doc.cases.length} cases`);
  assert.ok(gaps.length >= 20);
  for (const c of doc.cases) assert.ok(c.expected && (c.expected.text !== undefined || c.expected.error !== undefined), c.name);
});

for (const gap of gaps) {
  test(gap, () => {
    const failures = doc.cases
      .filter((c) => c.gap === gap)
      .map((c) => {
        const why = disagreement(c);
        return why && `${c.name}: ${c.template}\n    ${why}`;
      })
      .filter(Boolean);
    assert.deepEqual(failures, []);
  });
}
