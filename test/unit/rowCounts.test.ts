/**
 * Issue 24: the hover and the mask view count a row the same way — one request shape (rowCounts.ts)
 * and one estimator (tokenEstimate.ts) that no cache changes — and the estimator's rate is the text's
 * own (windows over its rest), not its head's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { RecordViewer } from '../../src/core/records/recordViewer';
import type { RecordViewOptions } from '../../src/core/records/recordViewTypes';
import { rowCountOptions, withRowCounts } from '../../src/core/records/rowCounts';
import { encodeHead, estimatedCount } from '../../src/core/records/tokenEstimate';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';

const tok = loadTokenizer(undefined); // embedded Qwen3
const sample = (f: string) =>
  readFileSync(join(import.meta.dirname, '..', '..', 'samples', f), 'utf8')
    .split('\n')
    .filter(Boolean);
const HOVER_CAP = 8192; // the default of eagle3prep.hover.maxTokenizedCharacters
const MASK_VIEW_CAP = 262144; // maskViewModel.ts MASK_VIEW_TOTALS_CAP

test('the hover and the mask view give a row the same counts (an agent row past the hover cap: estimated)', () => {
  const row = { text: sample('agentic-trajectories.jsonl')[0], file: 'a.jsonl', line: 1 };
  const options: RecordViewOptions = { mask: 'assistant' };
  // The hover: its request, in a render worker of its own.
  const hover = new RecordViewer(tok).view(row, rowCountOptions(options, HOVER_CAP));
  // The mask view: record #3 drawn whole, the row's counts asked as the hover asks them (one worker, warm cache).
  const worker = new RecordViewer(tok);
  const drawn = worker.view(row, { ...options, detailRecord: 3, maxTokenizedChars: MASK_VIEW_CAP });
  const mask = withRowCounts(drawn, worker.view(row, rowCountOptions({ ...options, detailRecord: 3 }, HOVER_CAP)));
  assert.equal(hover.totals.estimated, true, 'the row is over the hover cap, so the counts are estimates');
  assert.deepEqual(mask.totals, hover.totals);
  assert.deepEqual(
    mask.records.map((r) => [r.tokens, r.trainableTokens, r.estimated]),
    hover.records.map((r) => [r.tokens, r.trainableTokens, r.estimated]),
  );
  assert.deepEqual(
    mask.turns.map((t) => t.tokens),
    hover.turns.map((t) => t.tokens),
  );
  // The record drawn is still tokenized whole.
  const exact = new RecordViewer(tok).view(row, {});
  assert.equal(mask.detail?.index, 3);
  assert.equal(mask.detail?.tokens.length, exact.records[3].tokens);
  // And the estimate is close: within 5 % of the exact total (41 records, 84,010 tokens; 3.6 % measured).
  const err = Math.abs(hover.totals.tokens - exact.totals.tokens) / exact.totals.tokens;
  assert.ok(err < 0.05, `estimate ${hover.totals.tokens} vs exact ${exact.totals.tokens} (${(100 * err).toFixed(1)} %)`);
});

test('counts do not depend on what the encoding cache holds (a row drawn whole before is counted the same)', () => {
  const row = { text: sample('agentic-trajectories.jsonl')[1], file: 'a.jsonl', line: 2 };
  const fresh = new RecordViewer(tok).view(row, rowCountOptions({}, HOVER_CAP));
  const warm = new RecordViewer(tok);
  const whole = warm.view(row, {}); // every record tokenized whole and cached
  const again = warm.view(row, rowCountOptions({}, HOVER_CAP));
  assert.equal(fresh.totals.estimated, true);
  assert.equal(whole.totals.estimated, false);
  assert.deepEqual(again.totals, fresh.totals);
});

test('the estimator: the rest of a text is counted at its own sampled rate, whitespace or not', () => {
  const encode = (t: string) => tok.encode(t);
  // Prose at the head, then a long run of digits (a real row of a tool-call dataset has 5,000 zeros):
  // the head's rate (~0.2 tokens per character) would count the run ~4x too low.
  const text = 'How can I configure a VPN connection using Go code on a Windows machine? '.repeat(8) + '0'.repeat(6000) + ' and that is all.';
  const exact = encode(text).ids.length;
  const enc = encodeHead(encode, text, 1000);
  assert.equal(enc.cut, 1000);
  const est = estimatedCount(text, enc);
  assert.equal(est.estimated, true);
  assert.ok(Math.abs(est.tokens - exact) / exact < 0.1, `estimate ${est.tokens} vs exact ${exact}`);
  // Whole when it fits; a text over the cap costs its head and 768 characters of windows at most.
  assert.deepEqual(estimatedCount('short text', encodeHead(encode, 'short text', 100)), { tokens: encode('short text').ids.length, estimated: false });
  assert.ok(enc.charsTokenized <= 1000 + 768, `${enc.charsTokenized} characters tokenized`);
});
