/**
 * `check-template --json` read back as the VS Code command reads it: the snake_case document the
 * CLI prints becomes the same TemplateCheck the core returns, and renders the same findings.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { checkTemplate, formatTemplateCheck } from '../../src/core/templates/checkTemplate';
import { parseCheckTemplateJson } from '../../src/core/templates/checkTemplateJson';
import { lenmlModelDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');

test('check-template --json read back: the TemplateCheck of the core, with the same readable findings', () => {
  const dir = lenmlModelDir('qwen3');
  const kwargs = { enable_thinking: false };
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'src', 'cli.ts'), 'check-template', '--tokenizer', dir, '--template-kwargs', JSON.stringify(kwargs), '--json'],
    {
      encoding: 'utf8',
      cwd: ROOT,
    },
  );
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
