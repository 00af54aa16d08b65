// The mask view's decisions (src/vscode/maskViewModel.ts), in plain node over the views the service computes for the
// bundled samples: the render's two requests (the row counted as the hover counts it), the exact-counts rule, the token
// window of a long record, where a token came from in the JSON line, stepping over blank lines, the command's arguments.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { handleServiceRequest } from '../../src/core/run/editor/service';
import { hoverViewOptions } from '../../src/vscode/hoverModel';
import { MAX_TOKENS_SHOWN } from '../../src/shared/maskViewProtocol';
import {
  documentLineCount,
  exactMismatch,
  initialState,
  lineArg,
  MASK_VIEW_TOTALS_CAP,
  maskViewTitle,
  nextRowLine,
  overBudgetMessage,
  postedView,
  renderRequests,
  settingsChangedNote,
  sourceRange,
  targetKind,
  type MaskViewSettings,
} from '../../src/vscode/maskViewModel';
import { tempDir } from '../helpers';

const HOVER_CAP = 8192;
const sample = (name: string) => join(import.meta.dirname, '..', '..', 'samples', name);
const lineOf = (f: string, line: number) => readFileSync(f, 'utf8').split('\n')[line - 1];

test('a render asks for the record drawn whole and for the row counted exactly as the hover counts it', () => {
  const settings: MaskViewSettings = {
    mask: 'assistant',
    grouping: 'exact',
    templateKwargs: { enable_thinking: true },
    maxLength: 4096,
    long: 'split',
    minTrainableTokens: 1,
  };
  const state = { ...initialState('file:///d/data.jsonl', 'data.jsonl', 3, settings.mask), record: 2 };
  assert.equal(maskViewTitle(state), 'Mask: data.jsonl:3');
  const r = renderRequests(state, settings, HOVER_CAP);
  assert.deepEqual(r.drawn, {
    mask: 'assistant',
    grouping: 'exact',
    templateKwargs: { enable_thinking: true },
    maxLength: 4096,
    long: 'split',
    minTrainableTokens: 1,
    detailRecord: 2,
    maxTokenizedChars: MASK_VIEW_TOTALS_CAP,
  });
  // With the settings' choices the counts request is the hover's, field for field (rowCounts.ts).
  assert.deepEqual(r.counts, hoverViewOptions(settings, HOVER_CAP));
  assert.equal(exactMismatch(state, settings), undefined);
  // The view's own choices: enable_thinking off overrides the kwargs (without touching the settings' object), and the
  // output's exact counts no longer apply.
  const off = renderRequests({ ...state, thinking: 'off', mask: 'non-system' }, settings, HOVER_CAP);
  assert.deepEqual(
    [off.drawn.mask, off.drawn.templateKwargs, off.counts.templateKwargs],
    ['non-system', { enable_thinking: false }, { enable_thinking: false }],
  );
  assert.deepEqual(settings.templateKwargs, { enable_thinking: true });
  assert.equal(exactMismatch({ mask: 'last-assistant', thinking: 'settings' }, settings), "the view's policy or enable_thinking differ from the settings");
  assert.equal(exactMismatch({ mask: 'assistant', thinking: 'on' }, settings), "the view's policy or enable_thinking differ from the settings");
  assert.equal(settingsChangedNote(['maskPolicy', 'tokenizerPath']), 'settings changed (eagle3prep.maskPolicy, eagle3prep.tokenizerPath): re-rendered');
  assert.match(overBudgetMessage('the render took over 30000 ms'), /^the render took over 30000 ms\. Try again; for a row this heavy, prepare the file/);
});

test('a short record is posted whole; a record over MAX_TOKENS_SHOWN keeps every trained token and counts the gap', async () => {
  const f = sample('reasoning-sharegpt.jsonl');
  const short = await handleServiceRequest({ op: 'view', row: { text: lineOf(f, 1), file: f, line: 1 }, options: { mask: 'assistant', detailRecord: 0 } });
  const p = postedView(short);
  assert.equal(p.posted, short);
  assert.equal(p.truncatedTokens, 0);
  assert.deepEqual(p.shown, [{ from: 0, to: short.detail!.tokens.length }]);
  // A long record: a question of some 30,000 tokens, a short answer.
  const question = Array.from({ length: 15000 }, (_, i) => `item ${i}`).join(', ');
  const text = JSON.stringify({
    messages: [
      { role: 'user', content: `Sum these: ${question}` },
      { role: 'assistant', content: 'The sum is large.' },
    ],
  });
  const view = await handleServiceRequest({
    op: 'view',
    row: { text, file: 'a.jsonl', line: 1 },
    options: { mask: 'assistant', detailRecord: 0, maxTokenizedChars: 4 * text.length },
  });
  const tokens = view.detail!.tokens;
  assert.ok(tokens.length > MAX_TOKENS_SHOWN, `${tokens.length} tokens`);
  const w = postedView(view);
  const kept = w.posted.detail!.tokens;
  assert.ok(kept.length <= MAX_TOKENS_SHOWN);
  assert.equal(w.truncatedTokens, tokens.length - kept.length);
  assert.equal(kept.filter((t) => t.trainable).length, tokens.filter((t) => t.trainable).length);
  assert.equal(
    w.shown.reduce((a, r) => a + r.to - r.from, 0),
    kept.length,
  );
});

test('a clicked token reveals the JSON value it came from: the field, else the turn', async () => {
  const f = sample('reasoning-sharegpt.jsonl');
  const text = lineOf(f, 1);
  const view = await handleServiceRequest({ op: 'view', row: { text, file: f, line: 1 }, options: { mask: 'assistant', detailRecord: 0 } });
  const content = sourceRange(view, 1, 'content');
  assert.ok(content);
  // Turn 0 is the row's `system` field; turn 1 the first of `conversations`.
  assert.equal(JSON.parse(text.slice(...content)), JSON.parse(text).conversations[0].value);
  // No such field on the turn: the turn's own range.
  assert.deepEqual(sourceRange(view, 1, 'tool_calls'), view.turns[1].range);
  assert.deepEqual(sourceRange(view, 1), view.turns[1].range);
  assert.equal(sourceRange(view, 99), undefined);
  assert.equal(sourceRange(undefined, 0), undefined);
});

test('stepping skips blank lines and stops at the ends; the line count ignores the final newline', async () => {
  const f = join(tempDir(), 'd.jsonl');
  writeFileSync(f, ['{"a":1}', '', '   ', '{"a":2}', '{"a":3}', ''].join('\n'));
  const lines = readFileSync(f, 'utf8').split('\n');
  const read = async (l: number) => {
    if (l > lines.length) throw new RangeError(`line ${l}`);
    return lines[l - 1];
  };
  const count = documentLineCount(lines.length, lines[lines.length - 1]);
  assert.equal(count, 5);
  assert.equal(await nextRowLine(1, 1, count, read), 4);
  assert.equal(await nextRowLine(4, -1, count, read), 1);
  assert.equal(await nextRowLine(5, 1, count, read), undefined);
  assert.equal(await nextRowLine(1, -1, count, read), undefined);
  // Line count unknown (0): a read past the end stops the step.
  assert.equal(await nextRowLine(5, 1, 0, read), undefined);
  assert.equal(documentLineCount(1, ''), 1);
  assert.equal(documentLineCount(3, '{"a":1}'), 3);
});

test("the command's arguments: a Uri string or a path, the given line, else the cursor's, else 1", () => {
  assert.equal(targetKind('file:///home/u/d.jsonl'), 'uri');
  assert.equal(targetKind('vscode-remote://ssh/home/d.jsonl'), 'uri');
  assert.equal(targetKind('/home/u/d.jsonl'), 'path');
  assert.equal(targetKind('C:\\data\\d.jsonl'), 'path');
  assert.equal(targetKind('c:/data/d.jsonl'), 'path');
  assert.equal(lineArg(7, 3), 7);
  assert.equal(lineArg(0, 3), 3);
  assert.equal(lineArg(2.5, undefined), 1);
  assert.equal(lineArg('4', undefined), 1);
});
