/** The row view behind the hover and the mask view (src/core/records/recordView.ts), and the line index (src/vscode/lineIndex.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { RecordViewer, recordViewerFor } from '../../src/core/records/recordViewer';
import type { RecordView } from '../../src/core/records/recordViewTypes';
import type { TokenizedRecord } from '../../src/core/types';
import { LineIndex } from '../../src/vscode/lineIndex';
import { allRecordViews, lenmlModelDir, oracleEncode, sharedTokenizer, tempDir, writeJsonl } from '../helpers';

const SAMPLES = join(__dirname, '..', '..', 'samples');
const lines = (f: string): string[] =>
  readFileSync(join(SAMPLES, f), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
const viewer = recordViewerFor(undefined); // embedded Qwen3
const QWEN_IM_START = 151644;
const QWEN_IM_END = 151645;

function readJsonl<T>(p: string): T[] {
  return readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

test('chat sample line 1: shape, turns with their characters, tokens and exact JSON ranges', () => {
  const text = lines('chat-sharegpt-human-gpt.jsonl')[0];
  const v = viewer.view({ text, file: join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl'), line: 1 });
  assert.equal(v.status, 'conversation');
  assert.deepEqual(v.shape, { format: 'sharegpt', description: '"conversations": list of {from, value}' });
  assert.equal(v.id, 'chat-0');
  assert.deepEqual(
    v.turns.map((t) => t.role),
    ['system', 'user', 'assistant', 'user', 'assistant'],
  );
  assert.deepEqual(
    v.turns.map((t) => t.chars),
    [29, 37, 44, 10, 42],
  );
  assert.deepEqual(
    v.turns.map((t) => t.target),
    [false, false, true, false, true],
  );
  const row = JSON.parse(text);
  v.turns.forEach((t, i) => {
    assert.ok(t.range, `turn ${i} has a range`);
    // The range is exactly the source turn object.
    assert.deepEqual(JSON.parse(text.slice(t.range[0], t.range[1])), row.conversations[i]);
    // Tokens of the turn's text alone, as the tokenizer counts them.
    assert.equal(t.tokens, viewer.tokenizer.encode(row.conversations[i].value).ids.length);
    assert.equal(t.estimated, false);
  });
  assert.equal(v.turns[0].tokens, 6); // "You are a friendly assistant."
  assert.deepEqual(v.warnings, []);
  assert.equal(v.tokenizer.name, 'Qwen3 (embedded default)');
});

test('records, ids and loss masks are exactly what prepare writes (all sample files, all records)', async () => {
  for (const f of ['chat-sharegpt-human-gpt.jsonl', 'agentic-trajectories.jsonl', 'reasoning-sharegpt.jsonl', 'swe-agent-trajectory-field.jsonl']) {
    const file = join(SAMPLES, f);
    const out = tempDir();
    const res = await prepare({ inputs: [file], outDir: out });
    assert.ok(res.ok, res.failures.join('; '));
    const written = readJsonl<TokenizedRecord>(res.outputs.tokenizedData);
    const fromViews: { id: string; ids: number[]; mask: number[]; line: number }[] = [];
    lines(f).forEach((text, i) => {
      const views = allRecordViews(viewer, text, file, i + 1);
      for (const v of views) {
        const d = v.detail!;
        const rec = v.records[d.index];
        assert.equal(rec.tokens, d.tokens.length, `${f}:${i + 1} record ${d.index}: count == detail length`);
        assert.equal(rec.trainableTokens, d.tokens.filter((t) => t.trainable).length);
        fromViews.push({ id: rec.id, ids: d.tokens.map((t) => t.id), mask: d.tokens.map((t) => (t.trainable ? 1 : 0)), line: i + 1 });
      }
      assert.equal(views[0].totals.records, views.length);
    });
    assert.deepEqual(
      fromViews.map((r) => [r.id, r.line, r.ids, r.mask]),
      written.map((r) => [r.id, r.source.line, r.input_ids, r.loss_mask]),
      `${f}: the views' records differ from tokenized_data.jsonl`,
    );
  }
});

test('detail tokens: surfaces tile the rendered text, special tokens flagged, turns labelled, ids match the Rust oracle', async () => {
  const text = lines('chat-sharegpt-human-gpt.jsonl')[0];
  const v = viewer.view({ text, file: 'chat.jsonl', line: 1 }, { detailRecord: 1 });
  const d = v.detail!;
  assert.equal(d.index, 1);
  const rendered = d.tokens.map((t) => t.text).join('');
  assert.equal(rendered.length, v.records[1].chars);
  const oracle = await oracleEncode(join(lenmlModelDir('qwen3'), 'tokenizer.json'), rendered);
  assert.deepEqual(
    d.tokens.map((t) => t.id),
    oracle.ids,
  );
  assert.deepEqual(
    d.tokens.map((t) => t.start),
    oracle.starts,
  );
  for (const t of d.tokens) {
    if (t.id === QWEN_IM_START || t.id === QWEN_IM_END) assert.equal(t.special, true, `${t.text} is special`);
    else assert.equal(t.special, false, `${JSON.stringify(t.text)} is not special`);
  }
  // Record #1 holds all five turns; the first token opens the system turn, the last trainable one is <|im_end|> of turn 5.
  assert.deepEqual(
    d.turnRanges.map((r) => [r.turn, r.role]),
    [
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
      [3, 'user'],
      [4, 'assistant'],
    ],
  );
  assert.equal(d.tokens[0].turn, 0);
  const trainable = d.tokens.filter((t) => t.trainable);
  assert.ok(
    trainable.every((t) => t.turn === 4),
    'only the last assistant turn is trained in record #1 (Qwen3 rewrites history)',
  );
  assert.equal(trainable[trainable.length - 1].id, QWEN_IM_END);
  // Qwen3 renders the final assistant turn with an empty think block: it is part of the completion.
  assert.equal(trainable.map((t) => t.text).join(''), '<think>\n\n</think>\n\nBright, indirect light suits most of them.<|im_end|>');
  // The trailing "\n" after <|im_end|> is not trained (docs/loss-mask-rules.md "Trainable span").
  assert.equal(d.tokens[d.tokens.length - 1].text, '\n');
  assert.equal(d.tokens[d.tokens.length - 1].trainable, false);
  // The generation prompt of turn 5 ("<|im_start|>assistant\n") belongs to turn 5 and is not trained.
  const gp = d.tokens
    .filter((t) => t.turn === 4 && !t.trainable)
    .map((t) => t.text)
    .join('');
  assert.ok(gp.startsWith('<|im_start|>assistant\n'), JSON.stringify(gp));
  assert.deepEqual(d.spans.length, 1);
});

test('policies and template kwargs: last-assistant, non-system, enable_thinking false', () => {
  const text = lines('chat-sharegpt-human-gpt.jsonl')[0];
  const a = viewer.view({ text, file: 'c.jsonl', line: 1 });
  const last = viewer.view({ text, file: 'c.jsonl', line: 1 }, { mask: 'last-assistant', detailRecord: 0 });
  assert.equal(last.records.length, 1);
  assert.deepEqual(last.records[0].targets, [4]);
  assert.deepEqual(
    last.turns.map((t) => t.target),
    [false, false, false, false, true],
  );
  assert.equal(last.records[0].trainableTokens, a.records[1].trainableTokens);
  const ns = viewer.view({ text, file: 'c.jsonl', line: 1 }, { mask: 'non-system', detailRecord: 0 });
  assert.equal(ns.records.length, 1);
  assert.deepEqual(
    ns.turns.map((t) => t.target),
    [false, true, true, true, true],
  );
  assert.ok(
    ns.detail!.tokens.filter((t) => t.turn === 0).every((t) => !t.trainable),
    'system turn not trained under non-system',
  );
  assert.ok(
    ns.detail!.tokens.filter((t) => t.turn === 1).some((t) => t.trainable),
    'user turn trained under non-system',
  );
  const off = viewer.view({ text, file: 'c.jsonl', line: 1 }, { templateKwargs: { enable_thinking: false }, detailRecord: 0 });
  const on = viewer.view({ text, file: 'c.jsonl', line: 1 }, { detailRecord: 0 });
  const render = (v: RecordView) => v.detail!.tokens.map((t) => t.text).join('');
  const trained = (v: RecordView) =>
    v
      .detail!.tokens.filter((t) => t.trainable)
      .map((t) => t.text)
      .join('');
  assert.ok(render(off).includes('<|im_start|>assistant\n<think>\n\n</think>\n\n'), 'thinking off: the generation prompt pre-fills an empty think block');
  // Thinking off: the pre-filled empty think block is prompt, never trained; by default the template writes it in the completion.
  assert.equal(trained(off), 'Water only when the top inch of soil is dry.<|im_end|>');
  assert.equal(trained(on), '<think>\n\n</think>\n\nWater only when the top inch of soil is dry.<|im_end|>');
  assert.ok(off.records[0].trainableTokens < on.records[0].trainableTokens);
  assert.deepEqual(off.templateKwargs, { enable_thinking: false });
});

test('warnings: unknown role (with its turn), empty assistant turn, too long, invalid JSON, prompt-only, unrecognized', () => {
  const unknown = viewer.view({
    text: JSON.stringify({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'narrator', content: 'x' },
        { role: 'assistant', content: 'ok' },
      ],
    }),
    file: 'd.jsonl',
    line: 3,
  });
  assert.equal(unknown.status, 'errored');
  assert.equal(unknown.warnings[0].code, 'unknown_role');
  assert.equal(unknown.warnings[0].turn, 1);
  assert.match(unknown.warnings[0].message, /unknown role "narrator" in message 2/);

  const empty = viewer.view({
    text: JSON.stringify({
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: 'c' },
      ],
    }),
    file: 'd.jsonl',
    line: 1,
  });
  assert.deepEqual(
    empty.warnings.map((w) => [w.code, w.turn]),
    [['empty_assistant_turn', 1]],
  );
  assert.deepEqual(
    empty.turns.map((t) => t.target),
    [false, false, false, true],
  );

  const long = viewer.view({ text: lines('chat-sharegpt-human-gpt.jsonl')[0], file: 'c.jsonl', line: 1 }, { maxLength: 50 });
  assert.deepEqual(
    long.warnings.map((w) => w.code),
    ['too_long'],
  ); // record #1 has 68 tokens, #0 46
  assert.match(long.warnings[0].message, /record 2 has 68 tokens, over the max length 50/);

  const bad = viewer.view({ text: '{"messages": [', file: 'd.jsonl', line: 7 });
  assert.equal(bad.status, 'errored');
  assert.equal(bad.warnings[0].code, 'invalid_json');
  assert.match(bad.message!, /^line 7 is not valid JSON/);

  const prompt = viewer.view({ text: lines('prompts-only.jsonl')[0], file: 'p.jsonl', line: 1 });
  assert.equal(prompt.status, 'prompt');
  assert.deepEqual(
    prompt.turns.map((t) => [t.role, t.chars]),
    [['user', 'Write a haiku about compilers.'.length]],
  );
  assert.deepEqual(prompt.records, []);

  const tokenized = viewer.view({ text: '{"input_ids": [1, 2], "labels": [1, 2]}', file: 't.jsonl', line: 1 });
  assert.equal(tokenized.status, 'dropped');
  assert.equal(tokenized.reason, 'unrecognized_shape');
});

test('system prompt from a top-level field: message 0 points at that field; the list turns follow', () => {
  const text = lines('reasoning-sharegpt.jsonl')[0];
  const v = viewer.view({ text, file: 'r.jsonl', line: 1 });
  assert.deepEqual(
    v.turns.map((t) => t.role),
    ['system', 'user', 'assistant'],
  );
  const [s, e] = v.turns[0].range!;
  assert.ok(text.slice(s, e).startsWith('"system": "Your role'), text.slice(s, e));
  assert.deepEqual(JSON.parse(text.slice(...v.turns[1].range!)), JSON.parse(text).conversations[0]);
});

test('work cap: a 1 MB line answers with estimates close to the exact counts; a small cap on a sample is flagged', () => {
  const para = 'The quick brown fox jumps over the lazy dog; def f(x): return x * 2  # 中文 ok\n';
  const big = para.repeat(Math.ceil(500_000 / para.length)).slice(0, 500_000); // 2 turns: a 1 MB line
  const text = JSON.stringify({
    id: 'big',
    messages: [
      { role: 'user', content: big },
      { role: 'assistant', content: big },
    ],
  });
  assert.ok(text.length > 1_000_000);
  const t0 = performance.now();
  const capped = viewer.view({ text, file: 'big.jsonl', line: 1 }, { maxTokenizedChars: 16384 });
  const ms = performance.now() - t0;
  assert.equal(capped.totals.estimated, true);
  assert.equal(capped.records.length, 1);
  assert.ok(capped.warnings.some((w) => w.code === 'estimated'));
  // Exact: the content tokenizes periodically, so the per-turn count is known from a direct encode.
  assert.ok(ms < 2000, `capped view of a 1 MB line took ${ms.toFixed(0)} ms`);
  // Against exact counts on a 200 KB line of the same text (exact counting of 1 MB takes seconds).
  const mid = big.slice(0, 100_000);
  const midText = JSON.stringify({
    id: 'mid',
    messages: [
      { role: 'user', content: mid },
      { role: 'assistant', content: mid },
    ],
  });
  const midCapped = viewer.view({ text: midText, file: 'big.jsonl', line: 1 }, { maxTokenizedChars: 16384 });
  assert.equal(midCapped.totals.estimated, true);
  const exactTurn = viewer.tokenizer.encode(mid).ids.length;
  for (const t of midCapped.turns) assert.ok(Math.abs(t.tokens - exactTurn) / exactTurn < 0.02, `turn estimate ${t.tokens} vs exact ${exactTurn}`);
  const exactTotal = viewer.view({ text: midText, file: 'big.jsonl', line: 1 }).totals;
  const capped2 = midCapped;
  assert.equal(exactTotal.estimated, false);
  assert.ok(Math.abs(capped2.totals.tokens - exactTotal.tokens) / exactTotal.tokens < 0.02, `total ${capped2.totals.tokens} vs ${exactTotal.tokens}`);
  assert.ok(
    Math.abs(capped2.totals.trainableTokens - exactTotal.trainableTokens) / exactTotal.trainableTokens < 0.02,
    `trainable ${capped2.totals.trainableTokens} vs ${exactTotal.trainableTokens}`,
  );
  // The 1 MB line's estimates scale with it (5x the text of the 200 KB line).
  assert.ok(Math.abs(capped.totals.tokens / exactTotal.tokens - 5) < 0.2, `1 MB total ${capped.totals.tokens} vs 5 x ${exactTotal.tokens}`);

  const agentic = lines('agentic-trajectories.jsonl')[0];
  const exact = viewer.view({ text: agentic, file: 'a.jsonl', line: 1 });
  const est = viewer.view({ text: agentic, file: 'a.jsonl', line: 1 }, { maxTokenizedChars: 4096 });
  assert.equal(exact.totals.estimated, false);
  assert.equal(est.totals.estimated, true);
  assert.equal(est.records.length, exact.records.length, 'the record count never depends on the cap');
  assert.ok(Math.abs(est.totals.tokens - exact.totals.tokens) / exact.totals.tokens < 0.1, `${est.totals.tokens} vs ${exact.totals.tokens}`);
});

test('cancellation: checkCancelled throwing abandons the work', () => {
  let calls = 0;
  class Stop extends Error {}
  assert.throws(
    () =>
      viewer.view(
        { text: lines('agentic-trajectories.jsonl')[0], file: 'a.jsonl', line: 1 },
        {
          checkCancelled: () => {
            if (++calls === 3) throw new Stop();
          },
        },
      ),
    Stop,
  );
  assert.equal(calls, 3);
});

test('LineIndex: reads any line through sparse checkpoints (CRLF, BOM, no final newline, blank lines)', async () => {
  const dir = tempDir();
  const rows = Array.from({ length: 25 }, (_, i) => (i % 7 === 3 && i < 24 ? '' : JSON.stringify({ i, s: 'é'.repeat(i) })));
  const file = join(dir, 'x.jsonl');
  writeFileSync(file, '\uFEFF' + rows.join('\r\n')); // no final newline
  const idx = await LineIndex.build(file, { every: 4 });
  assert.equal(idx.lineCount, 25);
  for (let n = 1; n <= 25; n++) assert.equal(await idx.readLine(n), rows[n - 1], `line ${n}`);
  await assert.rejects(idx.readLine(26), RangeError);
  assert.equal(idx.isStale(), false);
  const p2 = writeJsonl([{ a: 1 }, { b: 2 }]);
  const idx2 = await LineIndex.build(p2, { every: 1 });
  assert.equal(idx2.lineCount, 2);
  assert.equal(await idx2.readLine(2), '{"b":2}');
});

test('turn boundaries in a record: each turn from its header, also where the template rewrites history (Qwen3) or headers are special tokens (DeepSeek-V3)', () => {
  const text = lines('chat-sharegpt-human-gpt.jsonl')[1];
  const turnTexts = (v: RecordView): string[] => {
    const d = v.detail!;
    const rendered = d.tokens.map((t) => t.text).join('');
    // Every token lies in the turn range its label names.
    for (const t of d.tokens) {
      const r = d.turnRanges.find((x) => x.turn === t.turn)!;
      assert.ok(t.start >= r.start && t.start < r.end);
    }
    return d.turnRanges.map((r) => rendered.slice(r.start, r.end));
  };
  // Qwen3, last-assistant: turn 3 is history (no think block) although messages[:3] alone would render one.
  assert.deepEqual(turnTexts(viewer.view({ text, file: 'c.jsonl', line: 2 }, { mask: 'last-assistant', detailRecord: 0 })), [
    '<|im_start|>system\nYou are a friendly assistant.<|im_end|>\n',
    '<|im_start|>user\nGive me a tip about houseplants (#1).<|im_end|>\n',
    '<|im_start|>assistant\nWater only when the top inch of soil is dry.<|im_end|>\n',
    '<|im_start|>user\nAnd light?<|im_end|>\n',
    '<|im_start|>assistant\n<think>\n\n</think>\n\nBright, indirect light suits most of them.<|im_end|>\n',
  ]);
  const ds = new RecordViewer(sharedTokenizer(lenmlModelDir('deepseek_v3')));
  assert.deepEqual(turnTexts(ds.view({ text, file: 'c.jsonl', line: 2 }, { detailRecord: 0 })), [
    '<｜begin▁of▁sentence｜>You are a friendly assistant.',
    '<｜User｜>Give me a tip about houseplants (#1).',
    '<｜Assistant｜>Water only when the top inch of soil is dry.<｜end▁of▁sentence｜>',
    '<｜User｜>And light?',
    '<｜Assistant｜>Bright, indirect light suits most of them.<｜end▁of▁sentence｜>',
  ]);
});

test('eagle3prep.jsonc: the view applies the mapping entry and the role aliases as inspect does', () => {
  const dir = tempDir('e3p-view-config-');
  writeFileSync(
    join(dir, 'eagle3prep.jsonc'),
    '{ "roleAliases": { "narrator": "assistant" }, "fieldMappings": { "chat": "messages" }, "mappings": [{ "files": "support.jsonl", "turns": "dialogue", "role": "speaker", "content": "utterance", "roles": { "customer": "user" } }] }',
  );
  const text = JSON.stringify({
    dialogue: [
      { speaker: 'customer', utterance: 'Hi?' },
      { speaker: 'narrator', utterance: 'Hello.' },
    ],
  });
  const v = viewer.view({ text, file: join(dir, 'support.jsonl'), line: 1 });
  assert.equal(v.status, 'conversation');
  assert.equal(v.shape?.format, 'mapped');
  assert.deepEqual(
    v.turns.map((t) => [t.role, t.target]),
    [
      ['user', false],
      ['assistant', true],
    ],
  );
  // Turn ranges point at the source turn objects under the original field names.
  const src = JSON.parse(text);
  assert.deepEqual(
    v.turns.map((t) => JSON.parse(text.slice(t.range![0], t.range![1]))),
    src.dialogue,
  );
  const chatText = JSON.stringify({
    chat: [
      { role: 'user', content: 'Q' },
      { role: 'Narrator', content: 'A' },
    ],
  });
  const c = viewer.view({ text: chatText, file: join(dir, 'other.jsonl'), line: 1 });
  assert.equal(c.shape?.format, 'openai-messages');
  assert.deepEqual(
    c.turns.map((t) => t.role),
    ['user', 'assistant'],
  );
  assert.deepEqual(
    c.turns.map((t) => JSON.parse(chatText.slice(t.range![0], t.range![1]))),
    JSON.parse(chatText).chat,
  );
  // Without the config the same line is not readable.
  const w = viewer.view({ text, file: join(tempDir('e3p-view-noconfig-'), 'support.jsonl'), line: 1 });
  assert.equal(w.status, 'dropped');
  // An invalid config is reported, not thrown.
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "roleAliases": { "narrator": "robot" } }');
  const x = viewer.view({ text, file: join(dir, 'support.jsonl'), line: 1 });
  assert.equal(x.status, 'errored');
  assert.match(x.message ?? '', /eagle3prep\.jsonc.*narrator/);
});

test('v1.4 rules flow into the view: GLM-4.6 stop tokens trained (note), thinking off + reasoning is an error naming both ways out, a placeholder makes a prompt, data-changing notes are warnings', async () => {
  const { fixtureModelFolder } = await import('../helpers');
  const glm = new RecordViewer(sharedTokenizer(fixtureModelFolder('GLM-4.6')));
  const file = join(tempDir(), 'rows.jsonl');
  const row = (messages: object[]) => JSON.stringify({ messages });
  const chat = glm.view(
    {
      text: row([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
      ]),
      file,
      line: 1,
    },
    { detailRecord: 0 },
  );
  assert.equal(chat.status, 'conversation');
  assert.ok(chat.notes.includes('stop_token_from_next_turn'), JSON.stringify(chat.notes));
  const trained = chat.detail!.tokens.filter((t) => t.trainable).map((t) => t.text);
  assert.equal(trained.at(-1), '<|user|>');
  const reasoning = row([
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!', reasoning_content: 'Greet back.' },
  ]);
  const off = glm.view({ text: reasoning, file, line: 2 }, { templateKwargs: { enable_thinking: false } });
  assert.equal(off.status, 'errored');
  assert.match(off.message!, /^reasoning_with_thinking_off: .*--reasoning drop.*turn thinking on/);
  assert.deepEqual(
    off.warnings.map((w) => w.code),
    ['reasoning_with_thinking_off'],
  );
  const dropped = glm.view({ text: reasoning, file, line: 2 }, { templateKwargs: { enable_thinking: false }, reasoning: 'drop' });
  assert.equal(dropped.status, 'conversation');
  assert.ok(dropped.warnings.some((w) => w.code === 'reasoning_dropped' && /--reasoning drop/.test(w.message)));
  const placeholder = glm.view({
    text: row([
      { role: 'user', content: 'Write.' },
      { role: 'assistant', content: '' },
    ]),
    file,
    line: 3,
  });
  assert.equal(placeholder.status, 'prompt');
  assert.ok(placeholder.warnings.some((w) => w.code === 'set_aside'));
});
