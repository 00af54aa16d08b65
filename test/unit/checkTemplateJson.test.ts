/**
 * `check-template --json` read back, as a script reading the CLI would: the snake_case document the
 * CLI prints (`run/reports/jsonCase.ts`, docs/outputs.md) becomes the same TemplateCheck the core returns, and
 * renders the same findings. (The VS Code command calls the core in the service worker instead.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { fromSnakeJson } from '../../src/core/run/reports/jsonCase';
import { checkTemplate } from '../../src/core/records/checkTemplate';
import type { TemplateCheck } from '../../src/core/records/checkTemplateTypes';
import { formatTemplateCheck } from '../../src/core/records/checkTemplateFormat';
import { lenmlModelDir, runCli } from '../helpers';

const ROOT = join(__dirname, '..', '..');

/** The TemplateCheck of a `check-template --json` output; throws when the text is not one. */
function parseCheckTemplateJson(text: string): TemplateCheck {
  const data: unknown = JSON.parse(text);
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('not a JSON object');
  const check = fromSnakeJson<TemplateCheck>(data as Record<string, unknown>);
  if (typeof check.prefixStable !== 'boolean' || !Array.isArray(check.warnings) || !check.tokenizer || !check.templateKwargs)
    throw new Error('not a check-template document (no prefix_stable, warnings, tokenizer or template_kwargs)');
  return check;
}

test('check-template --json read back: the TemplateCheck of the core, with the same readable findings', async () => {
  const dir = lenmlModelDir('qwen3');
  const kwargs = { enable_thinking: false };
  const r = await runCli(['check-template', '--tokenizer', dir, '--template-kwargs', JSON.stringify(kwargs), '--json'], { cwd: ROOT });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /"template_kwargs": \{\s*"enable_thinking": false\s*\}/, 'the document is snake_case, the kwargs kept as given');
  const read = parseCheckTemplateJson(r.stdout);
  const direct = checkTemplate(loadTokenizer(dir), { templateKwargs: kwargs });
  assert.deepEqual(read, JSON.parse(JSON.stringify(direct)));
  assert.deepEqual(read.templateKwargs, { enable_thinking: false });
  assert.equal(read.generationPromptScaffold, '<think>\n\n</think>\n\n');
  assert.equal(formatTemplateCheck(read, { color: false }), formatTemplateCheck(direct, { color: false }));
});

test('check-template --json read back: text that is not a check is an error', () => {
  assert.throws(() => parseCheckTemplateJson('not json'), SyntaxError);
  assert.throws(() => parseCheckTemplateJson('[1]'), /not a JSON object/);
  assert.throws(() => parseCheckTemplateJson('{"schema_version": 1, "ok": true}'), /not a check-template document/);
});
