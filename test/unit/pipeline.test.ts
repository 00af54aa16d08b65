/** The `prepare` job end to end on the seed samples and on damaged input. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { defaultOutDir, expandInputs } from '../../src/core/run/inputs/inputs';
import { type PrepareResult } from '../../src/core/run/contract';
import type { TokenizedRecord } from '../../src/core/types';
import { readReport } from '../../src/core/run/reports/report';
import { lenmlModelDir, tempDir, writeJsonl } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');
const sample = (n: string) => join(SAMPLES, n);

function readJsonl<T = any>(p: string): T[] {
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Maximal runs of 1 in a mask. */
function spanCount(mask: number[]): number {
  return mask.filter((m, k) => m === 1 && (k === 0 || mask[k - 1] === 0)).length;
}

function assertRecordInvariants(r: TokenizedRecord) {
  assert.equal(r.seq_len, r.input_ids.length);
  assert.equal(r.seq_len, r.loss_mask.length);
  assert.equal(
    r.n_response_tokens,
    r.loss_mask.reduce((a, b) => a + b, 0),
  );
  assert.equal(r.n_prompt_tokens, r.seq_len - r.n_response_tokens);
  assert.ok(r.n_response_tokens > 0);
  assert.ok(r.loss_mask.every((m) => m === 0 || m === 1));
  assert.deepEqual(Object.keys(r), ['id', 'source', 'input_ids', 'loss_mask', 'seq_len', 'n_prompt_tokens', 'n_response_tokens']);
}

function assertAddsUp(res: PrepareResult) {
  for (const f of res.files) assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead, f.file);
}

test('DeepSeek-V3 (prefix-stable): the 84-message trajectory is one record with 41 trainable spans; every sample file yields', async () => {
  const out = tempDir();
  const res = await prepare({ inputs: expandInputs([SAMPLES]), outDir: out, tokenizerDir: lenmlModelDir('deepseek_v3') });
  assert.equal(res.ok, true, res.failures.join('\n'));
  assertAddsUp(res);
  assert.equal(res.files.length, 5);
  const recs = readJsonl<TokenizedRecord>(res.outputs.tokenizedData);
  recs.forEach(assertRecordInvariants);
  const traj = recs.filter((r) => r.source.file.endsWith('agentic-trajectories.jsonl'));
  assert.deepEqual(
    traj.map((r) => r.id),
    ['widgets__widgets-101', 'widgets__widgets-102', 'widgets__widgets-103'],
  );
  assert.deepEqual(
    traj.map((r) => spanCount(r.loss_mask)),
    [41, 12, 5],
  );
  assert.deepEqual(
    traj.map((r) => r.source.line),
    [1, 2, 3],
  );
  const byFile = Object.fromEntries(res.files.map((f) => [f.file.split('/').pop(), f]));
  assert.equal(byFile['chat-sharegpt-human-gpt.jsonl'].recordsWritten, 3);
  assert.equal(byFile['swe-agent-trajectory-field.jsonl'].recordsWritten, 2);
  assert.equal(byFile['reasoning-sharegpt.jsonl'].recordsWritten, 3);
  assert.equal(byFile['prompts-only.jsonl'].rowsSetAside, 4);
  assert.equal(byFile['prompts-only.jsonl'].recordsWritten, 0);
  const prompts = readJsonl(res.outputs.promptsToGenerate);
  assert.equal(prompts.length, 4);
  assert.deepEqual(prompts[0].messages, [{ role: 'user', content: 'Write a haiku about compilers.' }]);
  assert.deepEqual(prompts[3].messages, [{ role: 'user', content: 'Summarize the plot of a heist movie you invent.' }]);
  // report.json on disk is the result.
  const raw = JSON.parse(readFileSync(res.outputs.reportJson, 'utf8'));
  assert.equal(raw.schema_version, 2);
  assert.equal(raw.totals.rows_read, 15);
  const onDisk = readReport(res.outputs.reportJson).report;
  assert.equal(onDisk.totals.rowsRead, 15);
  assert.equal(onDisk.tokenizer.hash, res.tokenizer.hash);
  // DeepSeek-V3's template does not write the reasoning of the reasoning sample: a data-changing warning, so not OK.
  assert.equal(res.status, 'warnings');
  assert.equal(onDisk.status, 'warnings');
  assert.equal(byFile['reasoning-sharegpt.jsonl'].status, 'warnings');
  assert.equal(byFile['prompts-only.jsonl'].status, 'ok');
  assert.deepEqual(
    res.warnings?.find((w) => w.code === 'reasoning_not_rendered'),
    {
      code: 'reasoning_not_rendered',
      count: 3,
      source: 'rows',
      meaning: 'reasoning_content the template does not render (check template kwargs)',
      remedy:
        'the template does not write this reasoning: check template kwargs (enable_thinking, preserve_thinking) or pass --reasoning drop to train without it',
      files: [byFile['reasoning-sharegpt.jsonl'].file],
    },
  );
  assert.match(readFileSync(res.outputs.reportMd, 'utf8'), /\*\*Status: WARNINGS\*\*[\s\S]*`reasoning_not_rendered` × 3/);
});

test('Qwen3 default (rewrites history): each of the 41 assistant turns of the trajectory is trainable in exactly one record', async () => {
  const out = tempDir();
  const res = await prepare({ inputs: [sample('agentic-trajectories.jsonl')], outDir: out });
  assert.equal(res.ok, true);
  assert.equal(res.tokenizer.embeddedDefault, true);
  const recs = readJsonl<TokenizedRecord>(res.outputs.tokenizedData).filter((r) => r.source.line === 1);
  assert.equal(recs.length, 41);
  assert.deepEqual(
    recs.map((r) => spanCount(r.loss_mask)),
    new Array(41).fill(1),
  );
  assert.equal(new Set(recs.map((r) => r.id)).size, 41);
  assert.equal(recs[0].id, 'widgets__widgets-101#0');
  // Every record ends with the end-of-turn token <|im_end|> trained, and nothing after it.
  for (const r of recs) {
    const last = r.loss_mask.lastIndexOf(1);
    assert.equal(r.input_ids[last], 151645);
    assert.ok(last >= r.seq_len - 2, 'at most the newline after <|im_end|> follows');
  }
});

test('invalid lines, unknown roles and empty rows are accounted for with line numbers; the rest is written', async () => {
  const file = writeJsonl([
    {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    },
    '{"messages": [',
    {
      conversations: [
        { from: 'narrator', value: 'once' },
        { from: 'gpt', value: 'upon' },
      ],
    },
    { messages: [] },
    { foo: 1 },
    { messages: [{ role: 'user', content: 'only a question' }] },
  ]);
  const res = await prepare({ inputs: [file], outDir: tempDir(), tokenizerDir: lenmlModelDir('deepseek_v3') });
  const f = res.files[0];
  assert.equal(f.rowsRead, 6);
  assert.equal(f.rowsWritten, 1);
  assert.equal(f.rowsSetAside, 1);
  assert.equal(f.rowsErrored, 2);
  assert.equal(f.rowsDropped, 2);
  assert.deepEqual(
    f.errors.map((e) => e.line),
    [2, 3],
  );
  assert.match(f.errors[0].message, /invalid JSON/);
  assert.match(f.errors[1].message, /narrator/);
  assert.deepEqual(f.dropped.empty_conversation, { count: 1, lines: [4] });
  assert.deepEqual(f.dropped.unrecognized_shape, { count: 1, lines: [5] });
  assert.equal(res.ok, true);
});

test('a file that yields no record and no prompt fails the run (unless allowEmpty), naming the file', async () => {
  const file = writeJsonl([{ foo: 1 }, { bar: 2 }]);
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  assert.equal(res.ok, false);
  assert.equal(res.failures.length, 1);
  assert.ok(res.failures[0].includes(file));
  assert.match(res.failures[0], /no record written and no prompt/);
  const allowed = await prepare({ inputs: [file], outDir: tempDir(), allowEmpty: true });
  assert.equal(allowed.ok, true);
});

test('max length: too_long drops by default; truncate keeps the first N tokens when a trainable token survives', async () => {
  const long = 'word '.repeat(200);
  const file = writeJsonl([
    {
      messages: [
        { role: 'user', content: 'short' },
        { role: 'assistant', content: 'ok' },
      ],
    },
    {
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: long },
      ],
    },
    {
      messages: [
        { role: 'user', content: long },
        { role: 'assistant', content: 'late' },
      ],
    },
  ]);
  const ds = lenmlModelDir('deepseek_v3');
  const dropped = await prepare({ inputs: [file], outDir: tempDir(), tokenizerDir: ds, maxLength: 64 });
  assert.equal(dropped.files[0].rowsWritten, 1);
  assert.deepEqual(dropped.files[0].dropped.too_long, { count: 2, lines: [2, 3] });
  const trunc = await prepare({ inputs: [file], outDir: tempDir(), tokenizerDir: ds, maxLength: 64, truncate: true });
  assert.equal(trunc.files[0].rowsWritten, 2);
  assert.deepEqual(trunc.files[0].dropped.no_trainable_tokens, { count: 1, lines: [3] });
  const recs = readJsonl<TokenizedRecord>(trunc.outputs.tokenizedData);
  assert.deepEqual(
    recs.map((r) => r.seq_len <= 64),
    [true, true],
  );
  assert.equal(recs[1].seq_len, 64);
  recs.forEach(assertRecordInvariants);
});

test('a template that raises (Gemma-3 on a tool turn) errors the row with the template message', async () => {
  const file = writeJsonl([
    {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
    },
    {
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'tool', content: 'c' },
        { role: 'assistant', content: 'd' },
      ],
    },
  ]);
  const res = await prepare({ inputs: [file], outDir: tempDir(), tokenizerDir: lenmlModelDir('gemma3') });
  assert.equal(res.files[0].rowsWritten, 1);
  assert.equal(res.files[0].rowsErrored, 1);
  assert.match(res.files[0].errors[0].message, /Conversation roles must alternate/);
});

test('cancel leaves no output file behind and earlier outputs untouched', async () => {
  const out = tempDir();
  writeFileSync(join(out, 'tokenized_data.jsonl'), 'previous\n');
  const ac = new AbortController();
  ac.abort(new Error('cancelled by test'));
  await assert.rejects(prepare({ inputs: [sample('chat-sharegpt-human-gpt.jsonl')], outDir: out }, { signal: ac.signal }), /cancelled by test/);
  assert.deepEqual(readdirSync(out), ['tokenized_data.jsonl']);
  assert.equal(readFileSync(join(out, 'tokenized_data.jsonl'), 'utf8'), 'previous\n');
});

test('inputs are never modified; default out dir is <input-name>.eagle3 beside the input', async () => {
  const before = readFileSync(sample('chat-sharegpt-human-gpt.jsonl'), 'utf8');
  const dir = tempDir();
  const copy = join(dir, 'chat.jsonl');
  writeFileSync(copy, before);
  assert.equal(defaultOutDir(copy), join(dir, 'chat.eagle3'));
  const res = await prepare({ inputs: [copy], outDir: defaultOutDir(copy) });
  assert.equal(res.ok, true);
  assert.equal(readFileSync(copy, 'utf8'), before);
  assert.ok(existsSync(join(dir, 'chat.eagle3', 'report.md')));
  assert.deepEqual(expandInputs([dir]), [copy]);
});

test('the chat-template check runs once per run and lands in the report', async () => {
  const res = await prepare({ inputs: [sample('chat-sharegpt-human-gpt.jsonl')], outDir: tempDir(), tokenizerDir: lenmlModelDir('deepseek_v3') });
  assert.ok(res.templateCheck);
  assert.equal(res.templateCheck!.prefixStable, true);
  assert.deepEqual(res.templateCheck!.endOfTurnTrained, ['<｜end▁of▁sentence｜>']);
  assert.match(readFileSync(res.outputs.reportMd, 'utf8'), /Prefix-stable: yes/);
  const q = await prepare({ inputs: [sample('chat-sharegpt-human-gpt.jsonl')], outDir: tempDir(), templateKwargs: { enable_thinking: false } });
  assert.equal(q.templateCheck!.prefixStable, false);
  assert.equal(q.templateCheck!.generationPromptScaffold, '<think>\n\n</think>\n\n');
});

test('a tokenizer folder without a chat template is a fatal error naming the folder', async () => {
  const dir = tempDir();
  const { copyFileSync } = require('node:fs');
  copyFileSync(join(lenmlModelDir('qwen3'), 'tokenizer.json'), join(dir, 'tokenizer.json'));
  writeFileSync(join(dir, 'tokenizer_config.json'), '{"eos_token": "<|im_end|>"}');
  await assert.rejects(
    prepare({ inputs: [sample('chat-sharegpt-human-gpt.jsonl')], outDir: tempDir(), tokenizerDir: dir }),
    (e: Error) => e.message.includes(dir) && /no chat template/.test(e.message),
  );
});

test('a file whose conversations all errored fails even when it also holds prompts', async () => {
  const file = writeJsonl([
    {
      conversations: [
        { from: 'narrator', value: 'x' },
        { from: 'gpt', value: 'y' },
      ],
    },
    { prompt: 'just a prompt' },
  ]);
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  assert.equal(res.files[0].rowsSetAside, 1);
  assert.equal(res.ok, false);
  assert.match(res.failures[0], /no record written; 1 rows errored \(first: line 1: unknown role "narrator"/);
  // The file counts its prompt as set aside (the rows add up), and says that a failed file writes it nowhere.
  assert.ok(res.failures[0].endsWith('; its 1 row set aside to generate is not written either'), res.failures[0]);
  assert.equal(existsSync(res.outputs.promptsToGenerate), false);
});

test('outputs are never inputs: a run refuses to overwrite an input, and folder expansion skips run outputs', async () => {
  const out = tempDir();
  const res = await prepare({ inputs: [sample('prompts-only.jsonl')], outDir: out });
  assert.equal(res.ok, true);
  const before = readFileSync(res.outputs.promptsToGenerate, 'utf8');
  await assert.rejects(prepare({ inputs: [res.outputs.promptsToGenerate], outDir: out }), /is an output of this run/);
  assert.equal(readFileSync(res.outputs.promptsToGenerate, 'utf8'), before);
  assert.deepEqual(expandInputs([out]), []);
});

test('d.json and d.jsonl beside each other share one output folder instead of overwriting each other', () => {
  const { groupByDefaultOutDir } = require('../../src/core/run/inputs/inputs');
  const dir = tempDir();
  const a = join(dir, 'd.json');
  const b = join(dir, 'd.jsonl');
  assert.deepEqual(groupByDefaultOutDir([a, b, a]), [{ inputs: [a, b], outDir: join(dir, 'd.eagle3') }]);
});

test('a conversation split into several records is noted', async () => {
  const res = await prepare({ inputs: [sample('chat-sharegpt-human-gpt.jsonl')], outDir: tempDir() });
  assert.equal(res.files[0].notes.split_into_records, 3);
});
