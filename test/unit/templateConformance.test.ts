/**
 * Real chat templates render exactly as Python `transformers` renders them, through the project's own render
 * path (`ChatTemplate`, the same engine and configuration `prepare` uses): every prefix of the probe
 * conversations, with and without the generation prompt, and the same exception where Python raises.
 *
 * References: `test/fixtures/templates/` and `test/fixtures/templates-more/` (25 + 32: all 57 templates of the shared
 * set, rendered by transformers 5.17 `render_jinja_template`, see its README; rendered on 2026-12-01, the date the
 * templates that print today's date show) and `test/fixtures/templates-extra/` (more templates, rendered by local jinja2 3.1.6 configured
 * as transformers configures it, `scripts/jinja-reference.py`), and `test/fixtures/templates-training/` (TRL's training templates, with
 * `{% generation %}` blocks, rendered the same way). Each template's `renders.json` holds the
 * messages exactly as the template is given them (docs/loss-mask-rules.md "What the template is given"), the tools, and the
 * special-token variables.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate } from '../../src/core/templates/template';
import { TemplateBudgetError, TemplateRenderError } from '../../src/core/templates/errors';
import type { Message } from '../../src/core/types';

const FIX = join(__dirname, '..', 'fixtures');

interface Render {
  n_messages: number;
  add_generation_prompt: boolean;
  text?: string;
  error?: string;
}
interface Reference {
  variables: Record<string, string>;
  /** The fixed local time strftime_now read (naive ISO), when the renders were made with one. */
  clock?: string;
  /** Python's error when the template does not compile (then there are no probes). */
  compile_error?: string;
  probes: { id: string; tools: unknown[] | null; messages: Message[]; renders: Render[] }[];
}

/** The Python exception text of a render error, as the references write it (`Type: message`). */
function errorText(e: TemplateRenderError): string {
  return e.pythonType === 'TemplateError' ? `TemplateError: ${e.message}` : e.message;
}

function templatesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => statSync(join(dir, d)).isDirectory())
    .sort();
}

const SETS = [join(FIX, 'templates'), join(FIX, 'templates-more'), join(FIX, 'templates-extra'), join(FIX, 'templates-training')];

/** The day the shared set's references were rendered (they carry no `clock`; templates that print today's date show it). */
const SHARED_RENDER_DAY = '2026-12-01T12:00:00';

test('the conformance sets are there: all 57 shared templates (25 + 32) and the extra ones', () => {
  assert.equal(templatesIn(SETS[0]).length, 25);
  assert.equal(templatesIn(SETS[1]).length, 32);
  assert.equal(new Set([...templatesIn(SETS[0]), ...templatesIn(SETS[1])]).size, 57);
  assert.ok(templatesIn(SETS[2]).length >= 20, `extra templates: ${templatesIn(SETS[2]).length}`);
  assert.equal(templatesIn(SETS[3]).length, 18);
});

for (const set of SETS) {
  const index: { templates: { template: string; renders: number; render_errors: number; compile_error?: boolean }[] } = JSON.parse(
    readFileSync(join(set, 'index.json'), 'utf8'),
  );
  for (const name of templatesIn(set)) {
    test(`${name}: every probe prefix renders exactly as transformers (with and without the generation prompt)`, () => {
      const source = readFileSync(join(set, name, 'chat_template.jinja'), 'utf8');
      const ref: Reference = JSON.parse(readFileSync(join(set, name, 'renders.json'), 'utf8'));
      if (ref.compile_error !== undefined) {
        // Python cannot compile it (transformers cannot use it): neither may we.
        assert.throws(() => new ChatTemplate({ name: 'default', source }, ref.variables), TemplateRenderError, ref.compile_error);
        assert.equal(index.templates.find((t) => t.template === name)?.compile_error, true);
        return;
      }
      const now = () => new Date(ref.clock ?? SHARED_RENDER_DAY);
      const ct = new ChatTemplate({ name: 'default', source }, ref.variables, {}, { now });
      let compared = 0;
      for (const p of ref.probes) {
        for (const r of p.renders) {
          const where = `${name} ${p.id} messages[:${r.n_messages}] add_generation_prompt=${r.add_generation_prompt}`;
          const render = () => ct.render(p.messages.slice(0, r.n_messages), p.tools ?? undefined, { addGenerationPrompt: r.add_generation_prompt });
          if (r.error !== undefined) {
            assert.throws(
              render,
              (e: unknown) => e instanceof TemplateRenderError && !(e instanceof TemplateBudgetError) && errorText(e) === r.error,
              `${where}: expected ${r.error}`,
            );
          } else {
            assert.equal(render(), r.text, where);
          }
          compared++;
        }
      }
      const entry = index.templates.find((t) => t.template === name);
      assert.ok(entry, `${name} is listed in index.json`);
      assert.equal(compared, entry.renders + entry.render_errors);
    });
  }
}
