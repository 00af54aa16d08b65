/** `generate`: request/answer shapes, retries, multi-turn regeneration, resume, against the local fake server. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { backoffDelay, buildChatBody, parseChatResponse, extractTokenIds } from '../../src/core/generate/client';
import { HttpStatusError, isTransient, TransportError, serverErrorMessage } from '../../src/core/generate/http';
import { regenerateConversation, sameToolCalls } from '../../src/core/generate/conversation';
import { generate } from '../../src/core/generate/run';
import { defaultGenerateOut, normalizeServerUrl, type GenerateOptions } from '../../src/core/generate/options';
import { ServerPool } from '../../src/core/generate/scheduler';
import { EOT_ID, fakeTokenIds, startFakeServer, type Fault } from '../support/fakeOpenAIServer';
import { cliNodeArgs, tempDir, writeJsonl } from '../helpers';

const readOut = (p: string) =>
  readFileSync(p, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const prompts = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    id: `p${i}`,
    source: { file: '/data/orig.jsonl', line: i + 1 },
    messages: [{ role: 'user', content: `question ${i}` }],
  }));
const fast: Partial<GenerateOptions> = { backoffBaseMs: 5, backoffCapMs: 50, timeoutMs: 2000, fsyncIntervalMs: 0 };

test('buildChatBody: disable → chat_template_kwargs enable_thinking false; token ids requested; reasoning sent back only with keep', () => {
  const msgs = [
    { role: 'user' as const, content: 'hi' },
    {
      role: 'assistant' as const,
      content: 'a',
      reasoning_content: 'r',
      tool_calls: [{ type: 'function' as const, function: { name: 'f', arguments: { x: 1 } } }],
    },
  ];
  const d = buildChatBody(msgs, undefined, { model: 'm', maxTokens: 10, reasoning: 'disable' });
  assert.deepEqual(d.chat_template_kwargs, { enable_thinking: false });
  assert.equal(d.return_token_ids, true);
  assert.equal(d.max_tokens, 10);
  assert.deepEqual((d.messages as any)[1], {
    role: 'assistant',
    content: 'a',
    tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
  });
  const k = buildChatBody(msgs, [{ type: 'function' }], { model: 'm', maxTokens: 10, reasoning: 'keep', extraBody: { top_p: 0.5 } });
  assert.equal((k.messages as any)[1].reasoning_content, 'r');
  assert.equal(k.chat_template_kwargs, undefined);
  assert.deepEqual(k.tools, [{ type: 'function' }]);
  assert.equal(k.top_p, 0.5);
});

test('parseChatResponse: vLLM token_ids, vLLM token_id: logprobs, SGLang meta_info; reasoning / reasoning_content; tool calls', () => {
  const v = parseChatResponse({
    choices: [{ message: { content: 'x', reasoning: 'why' }, finish_reason: 'stop', token_ids: [5, 6] }],
    usage: { prompt_tokens: 3, completion_tokens: 2 },
  });
  assert.deepEqual(v, {
    message: { role: 'assistant', content: 'x', reasoning_content: 'why' },
    finishReason: 'stop',
    tokenIds: [5, 6],
    promptTokens: 3,
    completionTokens: 2,
  });
  assert.deepEqual(extractTokenIds({ logprobs: { content: [{ token: 'token_id:12' }, { token: 'token_id:7' }] } }), [12, 7]);
  assert.deepEqual(
    extractTokenIds({
      meta_info: {
        output_token_logprobs: [
          [-0.1, 40, null],
          [-0.2, 41, null],
        ],
      },
    }),
    [40, 41],
  );
  assert.equal(extractTokenIds({ logprobs: { content: [{ token: 'Hello' }] } }), undefined);
  const t = parseChatResponse({
    choices: [{ message: { content: null, tool_calls: [{ id: 'c1', function: { name: 'ls', arguments: '{}' } }] }, finish_reason: 'tool_calls' }],
  });
  assert.deepEqual(t.message, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }] });
  assert.throws(() => parseChatResponse({ object: 'error' }), /no choices\[0\]\.message/);
});

test('transient vs permanent: 408 409 425 429 5xx and transport errors retry; other 4xx do not', () => {
  for (const s of [408, 409, 425, 429, 500, 502, 503, 504]) assert.equal(isTransient(new HttpStatusError(s, '', undefined, 'u')), true, String(s));
  for (const s of [400, 401, 403, 404, 413, 422]) assert.equal(isTransient(new HttpStatusError(s, '', undefined, 'u')), false, String(s));
  assert.equal(isTransient(new TransportError('ECONNREFUSED', 'x')), true);
  assert.equal(isTransient(new Error('x')), false);
  assert.equal(serverErrorMessage('{"error":{"message":"too long"}}'), 'too long');
  assert.equal(serverErrorMessage('{"detail":"Not Found"}'), 'Not Found');
});

test('backoffDelay: full jitter under min(cap, base·2^n); Retry-After raises it, capped', () => {
  const p = { retries: 5, baseMs: 100, capMs: 1000, random: () => 0.5 };
  assert.equal(backoffDelay(0, p), 50);
  assert.equal(backoffDelay(3, p), 400);
  assert.equal(backoffDelay(10, p), 500);
  assert.equal(backoffDelay(0, p, 700), 700);
  assert.equal(backoffDelay(0, p, 5000), 1000);
  assert.equal(backoffDelay(2, { ...p, random: () => 0 }), 0);
});

test('ServerPool: never more than the limit in flight; the least loaded server first; a backed-off server is skipped', async () => {
  const pool = new ServerPool([
    { url: 'a', limit: 2 },
    { url: 'b', limit: 1 },
  ]);
  const s1 = await pool.acquire();
  const s2 = await pool.acquire();
  const s3 = await pool.acquire();
  // Lowest load first: a (0/2), then b (0/1 < 1/2), then a.
  assert.deepEqual([s1.url, s2.url, s3.url], ['a', 'b', 'a']);
  let got: string | null = null;
  const waiting = pool.acquire().then((s) => (got = s.url));
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(got, null);
  pool.backOff(s2, 60_000);
  pool.release(s2); // b is free but backing off
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(got, null);
  pool.release(s1);
  await waiting;
  assert.equal(got, 'a');
  pool.close();
});

test('URLs and default output names', () => {
  assert.equal(normalizeServerUrl('http://127.0.0.1:30000/v1/'), 'http://127.0.0.1:30000');
  assert.throws(() => normalizeServerUrl('localhost:8000'), /must be http/);
  assert.equal(defaultGenerateOut('/x/y.eagle3/prompts_to_generate.jsonl'), '/x/y.eagle3/generated.jsonl');
  assert.equal(defaultGenerateOut('/x/chat.jsonl'), '/x/chat.generated.jsonl');
  assert.equal(defaultGenerateOut('/x/chat.json.gz'), '/x/chat.generated.jsonl');
});

test('multi-turn: each assistant turn regenerated from the regenerated history, never the original answers', async () => {
  const seen: any[][] = [];
  const conv = {
    id: 'c',
    source: { file: 'f', line: 1 },
    messages: [
      { role: 'system' as const, content: 'sys' },
      { role: 'user' as const, content: 'u1' },
      { role: 'assistant' as const, content: 'ORIGINAL 1' },
      { role: 'user' as const, content: 'u2', trainable: false },
      { role: 'assistant' as const, content: 'ORIGINAL 2' },
    ],
  };
  let k = 0;
  const r = await regenerateConversation(
    conv,
    async (h) => {
      seen.push(h);
      k++;
      return {
        message: { role: 'assistant', content: `new ${k}`, reasoning_content: `think ${k}` },
        finishReason: 'stop',
        tokenIds: [k],
        promptTokens: 1,
        completionTokens: 1,
      };
    },
    'drop',
  );
  assert.equal(r.outcome, 'ok');
  assert.deepEqual(r.messages, [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'u1' },
    { role: 'assistant', content: 'new 1' },
    { role: 'user', content: 'u2' },
    { role: 'assistant', content: 'new 2' },
  ]);
  assert.deepEqual(
    seen[1].map((m) => m.content),
    ['sys', 'u1', 'new 1', 'u2'],
  );
  assert.deepEqual(
    r.turns.map((t) => [t.message_index, t.token_ids]),
    [
      [2, [1]],
      [4, [2]],
    ],
  );
});

test('tool calls: results kept (ids remapped) when the regenerated call matches; stop at a diverging call', async () => {
  const conv = {
    id: 't',
    source: { file: 'f', line: 1 },
    tools: [{ type: 'function', function: { name: 'ls' } }],
    messages: [
      { role: 'user' as const, content: 'list' },
      {
        role: 'assistant' as const,
        content: null,
        tool_calls: [{ id: 'orig1', type: 'function' as const, function: { name: 'ls', arguments: '{"path": "/", "all": true}' } }],
      },
      { role: 'tool' as const, content: 'a b c', tool_call_id: 'orig1' },
      { role: 'assistant' as const, content: 'done' },
    ],
  };
  const answers = [
    {
      role: 'assistant' as const,
      content: null,
      tool_calls: [{ id: 'new1', type: 'function' as const, function: { name: 'ls', arguments: '{"all":true,"path":"/"}' } }],
    },
    { role: 'assistant' as const, content: 'the files are a b c' },
  ];
  let i = 0;
  const ok = await regenerateConversation(conv, async () => ({ message: answers[i++], finishReason: 'stop', promptTokens: 0, completionTokens: 0 }), 'keep');
  assert.equal(ok.outcome, 'ok');
  assert.deepEqual(ok.messages[2], { role: 'tool', content: 'a b c', tool_call_id: 'new1' });
  assert.equal(ok.messages[3].content, 'the files are a b c');
  const diverged = await regenerateConversation(
    conv,
    async () => ({
      message: { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'ls', arguments: '{"path":"/tmp"}' } }] },
      finishReason: 'tool_calls',
      promptTokens: 0,
      completionTokens: 0,
    }),
    'keep',
  );
  assert.equal(diverged.outcome, 'tool_call_diverged');
  assert.equal(diverged.messages.length, 2);
  assert.match(diverged.detail!, /dataset called \[ls\], the model called \[ls\] with other arguments/);
  assert.equal(sameToolCalls(undefined, []), true);
});

test('generate: rows written as messages with id, source and token ids; model and concurrency from the server; key sent, never written', async () => {
  const srv = await startFakeServer({ maxRunning: 3, latencyMs: 5, apiKey: 'sk-secret-123' });
  try {
    const dir = tempDir();
    const input = writeJsonl(prompts(10), 'prompts_to_generate.jsonl', dir);
    const logs: string[] = [];
    const r = await generate({ input, servers: [srv.url], apiKey: 'sk-secret-123', ...fast }, { log: (l) => logs.push(l) });
    assert.equal(r.ok, true, r.failures.join('; '));
    assert.equal(r.model, 'fake/target-model');
    assert.deepEqual(
      r.servers.map((s) => s.limit),
      [3],
    );
    assert.ok(srv.maxInFlight <= 3 && srv.maxInFlight >= 2, `max in flight ${srv.maxInFlight}`);
    assert.equal(r.out, join(dir, 'generated.jsonl'));
    const rows = readOut(r.out).sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)));
    assert.equal(rows.length, 10);
    assert.deepEqual(rows[3].source, { file: '/data/orig.jsonl', line: 4 });
    assert.deepEqual(rows[3].messages, [
      { role: 'user', content: 'question 3' },
      { role: 'assistant', content: 'answer to: question 3' },
    ]);
    assert.deepEqual(rows[3].generation.turns[0].token_ids, fakeTokenIds('answer to: question 3'));
    assert.equal(rows[3].generation.turns[0].token_ids.at(-1), EOT_ID);
    assert.equal(r.withTokenIds, 10);
    assert.ok(srv.authHeaders.every((h) => h === 'Bearer sk-secret-123'));
    const everything = readFileSync(r.out, 'utf8') + logs.join('\n') + JSON.stringify(r);
    assert.ok(!everything.includes('sk-secret'), 'the API key leaked into output, logs or report');
  } finally {
    await srv.close();
  }
});

test('generate: 429 and 500 bursts, dropped connections and a hung request are retried; every row once', async () => {
  const fault = (n: number): Fault => {
    if (n < 4) return { status: 429, retryAfter: 0 };
    if (n >= 6 && n < 9) return { status: 500 };
    if (n === 10 || n === 11) return { drop: true };
    if (n === 13) return { hang: true };
    if (n === 14) return { status: 503, message: 'overloaded' };
    return undefined;
  };
  const srv = await startFakeServer({ fault, latencyMs: 2 });
  try {
    const input = writeJsonl(prompts(20));
    const r = await generate({ input, servers: [srv.url], concurrency: 4, ...fast, timeoutMs: 300 }, {});
    assert.equal(r.ok, true, r.failures.join('; '));
    assert.equal(r.generated, 20);
    assert.equal(r.retries, 4 + 3 + 2 + 1 + 1);
    assert.equal(r.requests, 20 + r.retries);
    const ids = readOut(r.out)
      .map((x) => x.id)
      .sort();
    assert.deepEqual(
      ids,
      prompts(20)
        .map((p) => p.id)
        .sort(),
    );
  } finally {
    await srv.close();
  }
});

test('generate: a 400 fails that row fast with the server message (no retry); 404 model ends the run', async () => {
  const srv = await startFakeServer({
    fault: (_n, body) =>
      body.messages[0].content === 'question 2' ? { status: 400, message: "This model's maximum context length is 32768 tokens" } : undefined,
  });
  try {
    const input = writeJsonl(prompts(5));
    const r = await generate({ input, servers: [srv.url], concurrency: 2, ...fast }, {});
    assert.equal(r.ok, false);
    assert.equal(r.generated, 4);
    assert.equal(r.retries, 0);
    assert.equal(r.failed.http_400.count, 1);
    assert.match(r.failed.http_400.examples[0], /line 3 \(id p2\): HTTP 400 .*maximum context length is 32768 tokens/);
    // Rerun: the failed row is sent again, the others are not.
    const before = srv.requests.length;
    const again = await generate({ input, servers: [srv.url], concurrency: 2, ...fast }, {});
    assert.equal(again.alreadyDone, 4);
    assert.equal(srv.requests.length - before, 1);
    await assert.rejects(
      generate({ input, servers: [srv.url], model: 'other', out: join(tempDir(), 'o.jsonl'), ...fast }, {}),
      /HTTP 404 .*The model `other` does not exist/,
    );
  } finally {
    await srv.close();
  }
});

test('generate: length and reasoning-without-answer are counted outcomes, journaled, not written, not re-sent', async () => {
  const srv = await startFakeServer({ reasoning: true });
  try {
    const rows = [
      { id: 'a', messages: [{ role: 'user', content: 'fine' }] },
      { id: 'b', messages: [{ role: 'user', content: 'LONG please' }] },
      { id: 'c', messages: [{ role: 'user', content: 'THINK_ONLY' }] },
    ];
    const input = writeJsonl(rows);
    const r = await generate({ input, servers: [srv.url], concurrency: 1, maxTokens: 64, ...fast }, {});
    assert.deepEqual([r.generated, r.truncated, r.reasoningWithoutAnswer, r.failedTotal], [1, 1, 1, 0]);
    assert.equal(r.ok, true);
    const out = readOut(r.out);
    assert.equal(out.length, 1);
    assert.equal(out[0].messages[1].reasoning_content, 'thinking about: fine');
    assert.deepEqual(
      readOut(r.journal)
        .map((j) => [j.id, j.outcome])
        .sort(),
      [
        ['b', 'length'],
        ['c', 'reasoning_without_answer'],
      ],
    );
    const n = srv.requests.length;
    const again = await generate({ input, servers: [srv.url], ...fast }, {});
    assert.equal(again.alreadyDone, 3);
    assert.equal(srv.requests.length, n);
    // --reasoning disable sends enable_thinking false: the fake server then returns no reasoning.
    const d = await generate({ input: writeJsonl([rows[0]]), servers: [srv.url], reasoning: 'disable', ...fast }, {});
    assert.equal(readOut(d.out)[0].messages[1].reasoning_content, undefined);
    assert.deepEqual(srv.requests.at(-1).chat_template_kwargs, { enable_thinking: false });
  } finally {
    await srv.close();
  }
});

test('generate: a server restart mid-run is ridden out; requests spread over two servers', async () => {
  const a = await startFakeServer({ latencyMs: 10 });
  const b = await startFakeServer({ latencyMs: 10 });
  try {
    const input = writeJsonl(prompts(60));
    const run = generate({ input, servers: [a.url, b.url], concurrency: 4, ...fast, retries: 20, backoffCapMs: 100 }, {});
    await new Promise((r) => setTimeout(r, 40));
    await a.restart(150);
    const r = await run;
    assert.equal(r.ok, true, r.failures.join('; '));
    assert.equal(r.generated, 60);
    assert.ok(a.answered > 0 && b.answered > 0, `a ${a.answered}, b ${b.answered}`);
    // A reply cut off by the restart is answered by the server but lost to the client and re-sent: at least 60.
    assert.ok(a.answered + b.answered >= 60, `answered ${a.answered + b.answered}`);
    assert.deepEqual(
      readOut(r.out)
        .map((x) => x.id)
        .sort(),
      prompts(60)
        .map((p) => p.id)
        .sort(),
    );
  } finally {
    await a.close();
    await b.close();
  }
});

test('resume: ids already in the output are skipped, a torn last line is cut and regenerated; duplicate input ids fail', async () => {
  const srv = await startFakeServer();
  try {
    const dir = tempDir();
    const input = writeJsonl([...prompts(4), prompts(1)[0]], 'in.jsonl', dir);
    const out = join(dir, 'out.jsonl');
    writeFileSync(out, JSON.stringify({ id: 'p1', messages: [] }) + '\n' + '{"id": "p2", "messa');
    const r = await generate({ input, out, servers: [srv.url], ...fast }, {});
    assert.equal(r.alreadyDone, 1);
    assert.equal(r.generated, 3);
    assert.equal(r.failed.duplicate_id.count, 1);
    assert.ok(r.tornBytesCut > 0);
    const ids = readOut(out)
      .map((x) => x.id)
      .sort();
    assert.deepEqual(ids, ['p0', 'p1', 'p2', 'p3']);
    assert.deepEqual(srv.requests.map((q) => q.messages[0].content).sort(), ['question 0', 'question 2', 'question 3']);
    writeFileSync(join(dir, 'bad.jsonl'), 'not json\n');
    await assert.rejects(generate({ input, out: join(dir, 'bad.jsonl'), servers: [srv.url], ...fast }, {}), /bad\.jsonl:1: not JSON/);
    // Nothing was journaled (no row was truncated): the empty journal the run created is not left behind.
    assert.ok(!existsSync(`${out}.journal`));
  } finally {
    await srv.close();
  }
});

test('cancel: aborting stops the run, nothing half-written, the rerun completes', async () => {
  const ac = new AbortController();
  // Cancel when the 11th request arrives: by then at least 8 rows are answered and written (3 in flight).
  const srv = await startFakeServer({ latencyMs: 30, fault: (n) => (n === 10 ? (ac.abort(new Error('cancelled')), undefined) : undefined) });
  try {
    const input = writeJsonl(prompts(30));
    const r = await generate({ input, servers: [srv.url], concurrency: 3, ...fast }, { signal: ac.signal });
    assert.equal(r.cancelled, true);
    assert.equal(r.ok, false);
    assert.ok(r.generated >= 8 && r.generated < 30, `generated ${r.generated}`);
    const r2 = await generate({ input, servers: [srv.url], concurrency: 3, ...fast }, {});
    assert.equal(r2.alreadyDone, r.generated);
    assert.deepEqual(
      readOut(r.out)
        .map((x) => x.id)
        .sort(),
      prompts(30)
        .map((p) => p.id)
        .sort(),
    );
  } finally {
    await srv.close();
  }
});

test('trust: an untrusted workspace never names the server; a trusted one may', async () => {
  const { serversFromSettings } = await import('../../src/core/generate/trust');
  const s = { globalValue: ['http://user:1'], workspaceValue: 'http://evil:2, http://evil:3', workspaceFolderValue: undefined };
  assert.deepEqual(serversFromSettings(s, false), { servers: ['http://user:1'], ignoredWorkspaceServers: ['http://evil:2', 'http://evil:3'] });
  assert.deepEqual(serversFromSettings(s, true), { servers: ['http://evil:2', 'http://evil:3'], ignoredWorkspaceServers: [] });
  assert.deepEqual(serversFromSettings({ workspaceFolderValue: ['http://f:1'] }, false).servers, []);
});

test('CLI generate: usage errors exit 2; the key comes from the environment variable and is never printed', async () => {
  const { spawn } = await import('node:child_process');
  const ROOT = join(__dirname, '..', '..');
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
      const c = spawn(process.execPath, [...cliNodeArgs(), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d) => (stdout += d));
      c.stderr.on('data', (d) => (stderr += d));
      c.on('exit', (code) => res({ code, stdout, stderr }));
    });
  const input = writeJsonl(prompts(3));
  const noServer = await cli(['generate', input]);
  assert.equal(noServer.code, 2);
  assert.match(noServer.stderr, /generate needs --server URL/);
  const badReasoning = await cli(['generate', input, '--server', 'http://127.0.0.1:1', '--reasoning', 'maybe']);
  assert.equal(badReasoning.code, 2);
  assert.match(badReasoning.stderr, /option '--reasoning <mode>' argument 'maybe' is invalid\. Allowed choices are keep, drop, disable/);
  const srv = await startFakeServer({ apiKey: 'sk-from-env-42' });
  try {
    const denied = await cli(['generate', input, '--server', srv.url, '--retries', '0'], { OPENAI_API_KEY: '' });
    assert.equal(denied.code, 1);
    assert.match(denied.stderr, /HTTP 401 .*invalid api key/);
    const r = await cli(['generate', input, '--server', `${srv.url}/v1`, '--api-key-env', 'MY_KEY', '--backoff-ms', '5'], { MY_KEY: 'sk-from-env-42' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^OK .*generated\.jsonl|^OK /m);
    assert.match(r.stdout, /rows 3: generated 3/);
    assert.ok(!(r.stdout + r.stderr).includes('sk-from-env'));
  } finally {
    await srv.close();
  }
});

test('generate end to end: multi-turn and tool-call rows through the server; original answers never sent', async () => {
  const srv = await startFakeServer();
  try {
    const rows = [
      {
        id: 'mt',
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'ORIGINAL-A' },
          { role: 'user', content: 'second' },
          { role: 'assistant', content: 'ORIGINAL-B' },
        ],
      },
      {
        id: 'tool',
        tools: [{ type: 'function', function: { name: 'ls', parameters: { type: 'object' } } }],
        messages: [
          { role: 'user', content: 'CALL ls {"path":"/"}' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'x1', type: 'function', function: { name: 'ls', arguments: { path: '/' } } }] },
          { role: 'tool', tool_call_id: 'x1', content: 'bin etc' },
          { role: 'assistant', content: 'ORIGINAL-C' },
        ],
      },
      {
        id: 'div',
        messages: [
          { role: 'user', content: 'CALL rm {"path":"/"}' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'y1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'y1', content: 'never kept' },
        ],
      },
    ];
    const r = await generate({ input: writeJsonl(rows), servers: [srv.url], concurrency: 1, ...fast }, {});
    assert.equal(r.ok, true, r.failures.join('; '));
    assert.deepEqual([r.generated, r.toolCallDiverged], [3, 1]);
    assert.ok(!JSON.stringify(srv.requests).includes('ORIGINAL'), 'an original answer was sent');
    const out = new Map(readOut(r.out).map((x) => [x.id, x]));
    assert.deepEqual(
      out.get('mt').messages.map((m: any) => m.content),
      ['first', 'answer to: first', 'second', 'turn 1: answer to: second'],
    );
    const tool = out.get('tool');
    const callId = tool.messages[1].tool_calls[0].id;
    assert.match(callId, /^call_\d+$/);
    assert.deepEqual(tool.messages[2], { role: 'tool', tool_call_id: callId, content: 'bin etc' });
    assert.equal(tool.messages[3].content, 'turn 1: answer to: bin etc');
    assert.equal(tool.generation.outcome, 'ok');
    const div = out.get('div');
    assert.equal(div.generation.outcome, 'tool_call_diverged');
    assert.equal(div.messages.length, 2);
    assert.equal(div.messages[1].tool_calls[0].function.name, 'rm');
  } finally {
    await srv.close();
  }
});
