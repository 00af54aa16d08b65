/**
 * docs/loss-mask-rules.md (v1.5): `{% generation %}` blocks render as no-op block tags (jinja2's whitespace
 * control) and are a claim checked against the spans the rules derive (`generation_blocks_disagree`), never the
 * rule; a stop token inside a trained span; templates that always write their generation prompt.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate } from '../../src/core/templates/template';
import type { Message } from '../../src/core/types';

const FIX = join(__dirname, '..', 'fixtures');

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
    spans.map(([a, b]) => text.slice(a, b)),
    ['b<|im_end|>\n'],
  );
});
