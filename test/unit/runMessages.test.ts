/**
 * Small truths of a run's messages (issue 25 item 8): a too_long row says by how much (problems.jsonl), and the
 * advice never suggests the --long policy the run already uses.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { codeRemedyFor } from '../../src/core/codes';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { formatSummary } from '../../src/cli/summary';
import { tempDir, writeJsonl } from '../helpers';

const KW = { enable_thinking: false };
const long = (i: number) => ({
  messages: [
    { role: 'user', content: `Tell me a long story number ${i}.` },
    { role: 'assistant', content: Array.from({ length: 60 }, (_, k) => `sentence ${k} of story ${i}.`).join(' ') },
  ],
});
const short = {
  messages: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
  ],
};
const lines = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

test('a too_long row says in problems.jsonl by how much; with --long split the advice does not suggest --long split', async () => {
  const dir = tempDir();
  const input = writeJsonl([short, long(1)], 'd.jsonl', dir);
  const free = await prepare({ inputs: [input], outDir: join(dir, 'free'), workers: 1, templateKwargs: KW });
  const seqLen: number = lines(join(dir, 'free', 'data', 'tokenized_data.jsonl'))[1].seq_len;
  const max = seqLen - 7;
  assert.ok(free.ok);

  // --long drop (default): the record's length and the excess.
  const drop = await prepare({ inputs: [input], outDir: join(dir, 'drop'), workers: 1, templateKwargs: KW, maxLength: max });
  assert.ok(drop.ok, drop.failures.join('\n'));
  assert.deepEqual(lines(join(dir, 'drop', 'problems.jsonl')), [
    { file: input, line: 2, fate: 'dropped', code: 'too_long', message: `its record has ${seqLen} tokens, 7 over --max-length ${max}` },
  ]);
  const dropAdvice = drop.warnings?.find((w) => w.code === 'too_long')?.remedy ?? '';
  assert.match(dropAdvice, /^--long split keeps every assistant turn/);

  // --long split: the turn that fits nowhere, its tokens with no history and the excess; the advice is to raise --max-length.
  const split = await prepare({ inputs: [input], outDir: join(dir, 'split'), workers: 1, templateKwargs: KW, maxLength: max, long: 'split' });
  assert.ok(split.ok, split.failures.join('\n'));
  assert.deepEqual(lines(join(dir, 'split', 'problems.jsonl')), [
    {
      file: input,
      line: 2,
      fate: 'dropped',
      code: 'too_long',
      message: `assistant turn 1 does not fit --max-length ${max} even with no history before it (${seqLen} tokens, 7 over)`,
    },
  ]);
  const splitAdvice = split.warnings?.find((w) => w.code === 'too_long')?.remedy ?? '';
  assert.match(splitAdvice, /^raise --max-length: with --long split a row is too_long when/);
  assert.doesNotMatch(splitAdvice, /--long split keeps/);
  const md = readFileSync(join(dir, 'split', 'report.md'), 'utf8');
  assert.match(md, /`too_long` × 1: .*\*\*What to do:\*\* raise --max-length: with --long split/);
  assert.doesNotMatch(md, /--long split keeps every assistant turn/);
});

test('codeRemedyFor: the table remedy unless it suggests what the run already does', () => {
  assert.equal(codeRemedyFor('record_dropped_too_long', { long: 'drop' }), 'raise --max-length, or use --truncate');
  assert.equal(codeRemedyFor('record_dropped_too_long', { long: 'truncate' }), 'raise --max-length');
  assert.equal(codeRemedyFor('target_too_long', { long: 'split' }), 'raise --max-length, or use --long truncate to keep the first tokens');
  assert.equal(codeRemedyFor('duplicate', {}), '');
});

test('a preference row whose chosen answer is empty after context turns: inspect and prepare both count it as a prompt to generate', async () => {
  const dir = tempDir();
  const prompt = [
    { role: 'user', content: 'Q1' },
    { role: 'assistant', content: 'A1' },
    { role: 'user', content: 'Q2' },
  ];
  const input = writeJsonl(
    [
      { prompt, chosen: '', rejected: 'bad' },
      { prompt, chosen: 'good', rejected: 'bad' },
      { chosen: [...prompt, { role: 'assistant', content: '' }], rejected: [...prompt, { role: 'assistant', content: 'no' }] },
      { prompt: 'Q', chosen: '', rejected: 'bad' },
    ],
    'pref.jsonl',
    dir,
  );
  const ins = await inspectFile(input);
  assert.deepEqual(
    ins.records.map((r) => [r.source.line, r.needs_generation]),
    [
      [1, true],
      [2, false],
      [3, true],
      [4, true],
    ],
  );
  // The prompt as prepare sets it aside: the trailing empty turn removed, the context answer kept as history.
  assert.deepEqual(
    ins.records[0].messages.map((m) => [m.role, m.content]),
    [
      ['user', 'Q1'],
      ['assistant', 'A1'],
      ['user', 'Q2'],
    ],
  );
  const res = await prepare({ inputs: [input], outDir: join(dir, 'out'), workers: 1, templateKwargs: KW });
  assert.equal(res.files[0].rowsSetAside, 3);
  assert.deepEqual(
    lines(join(dir, 'out', 'prompts_to_generate.jsonl')).map((p) => p.source.line),
    [1, 3, 4],
  );
});

test('--format parquet after a JSONL run removes the old tokenized_data.jsonl and says so (summary, report.md, report.json); report.md names the hash and counts files as the terminal does', async () => {
  const dir = tempDir();
  const input = writeJsonl([short], 'd.jsonl', dir);
  const empty = writeJsonl([{ foo: 1 }], 'e.jsonl', dir);
  const out = join(dir, 'out');
  assert.ok((await prepare({ inputs: [input], outDir: out, workers: 1, templateKwargs: KW })).ok);
  assert.ok(existsSync(join(out, 'data', 'tokenized_data.jsonl')));
  const pq = await prepare({ inputs: [input, empty], outDir: out, workers: 1, templateKwargs: KW, format: 'parquet', skipFailedFiles: true });
  assert.ok(pq.ok, pq.failures.join('\n'));
  assert.equal(existsSync(join(out, 'data', 'tokenized_data.jsonl')), false);
  assert.deepEqual(pq.outputs.removed, [join(out, 'data', 'tokenized_data.jsonl')]);
  const summary = formatSummary([pq], { cwd: dir, skipFailedFiles: true });
  assert.match(
    summary,
    /^Removed: out\/data\/tokenized_data\.jsonl — a previous run's records in a format this run does not write \(--format parquet\), so they are not taken for this run's$/m,
  );
  assert.match(summary, /^ +total \(1 file\) /m);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /^- Removed: `data\/tokenized_data\.jsonl` — a previous run's records in a format this run does not write \(`--format parquet`\)/m);
  assert.match(md, new RegExp(`\\(files hash \`${pq.tokenizer.hash}\`: the first 16 hex digits of a SHA-256 over its tokenizer and template files\\)`));
  assert.equal(pq.tokenizer.hash.length, 16);
  assert.doesNotMatch(md, /sha256 [0-9a-f]{16}/);
  // Totals: the kept file, as the terminal's "total (1 file)"; the skipped one beside it.
  assert.match(md, /^\| 1 \(\+1 skipped\) \| 1 \| 1 \|/m);
  assert.deepEqual(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).outputs.removed, [join(out, 'data', 'tokenized_data.jsonl')]);
});
