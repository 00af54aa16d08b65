// Generates benchmark datasets in the seed shapes of samples/ (all text made up,
// deterministic for a given seed):
//   chat       ShareGPT `conversations` with system/human/gpt spellings, 2–3 exchanges
//   reasoning  ShareGPT user/assistant with a top-level `system` and inline
//              <|begin_of_thought|> … <|begin_of_solution|> reasoning
//   agent      OpenAI `messages`, system content null + top-level `system_prompt`,
//              84-message agent runs with <function=…> calls as text and tool results as user turns
//
// Usage: node scripts/bench-data.mjs --shape chat|reasoning|agent|mixed --rows N --out FILE [--seed S]
//        node scripts/bench-data.mjs --shape agent --messages 80 --rows 60 --out FILE   (agent runs of 80 messages)
//        node scripts/bench-data.mjs --shape mixed --bytes 2G --out FILE      (size-bounded, for memory runs)
// As a module: generateRows(shape, count, seed) yields row objects; writeDataset(...) writes JSONL.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

/** mulberry32: a small seeded PRNG, returns floats in [0, 1). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COMMON =
  'the a of to and in is that it for on with as be this by are from at or an was not but can use when if then we each one all your more will which their its has into how set so than only also may new other some these after first any our such time way data value file test line code run step call list item case first last check out need make look next fix error return open read write change input output result name type key path'.split(
    ' ',
  );
const SYL = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tas',
  'vo',
  'zu',
  'ber',
  'dal',
  'fen',
  'gor',
  'hil',
  'jun',
  'kep',
  'lur',
  'mon',
  'nis',
  'pra',
  'qui',
  'sol',
  'tor',
  'ul',
  'vex',
  'wen',
  'yar',
  'zel',
  'ion',
  'ate',
  'ing',
  'ed',
  'er',
  'ly',
];

/** A deterministic text source: Zipf-ish common words, a few thousand made-up words, numbers, identifiers. */
function textSource(rand) {
  const lexicon = [];
  for (let i = 0; i < 6000; i++) {
    let w = '';
    const n = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < n; k++) w += SYL[Math.floor(rand() * SYL.length)];
    lexicon.push(w);
  }
  const pick = (arr) => arr[Math.floor(rand() * arr.length)];
  const word = () => {
    const r = rand();
    if (r < 0.55) return COMMON[Math.floor(Math.pow(rand(), 2) * COMMON.length)];
    if (r < 0.93) return lexicon[Math.floor(Math.pow(rand(), 1.5) * lexicon.length)];
    if (r < 0.97) return String(Math.floor(rand() * 10000));
    return `${pick(lexicon)}_${pick(lexicon)}`;
  };
  const sentence = (min = 6, max = 18) => {
    const n = min + Math.floor(rand() * (max - min));
    const ws = [];
    for (let i = 0; i < n; i++) ws.push(word());
    const s = ws.join(' ');
    return s[0].toUpperCase() + s.slice(1) + pick(['.', '.', '.', '?', '!', ':']);
  };
  const paragraph = (min = 2, max = 5) => {
    const n = min + Math.floor(rand() * (max - min));
    const out = [];
    for (let i = 0; i < n; i++) out.push(sentence());
    return out.join(' ');
  };
  const ident = () => `${pick(lexicon)}${rand() < 0.5 ? '_' + pick(lexicon) : ''}`;
  const codeLine = () => {
    const r = rand();
    const ind = '    '.repeat(Math.floor(rand() * 3));
    if (r < 0.25) return `${ind}def ${ident()}(self, ${ident()}, ${ident()}=${Math.floor(rand() * 100)}):`;
    if (r < 0.5) return `${ind}${ident()} = ${ident()}.${ident()}(${ident()}, ${JSON.stringify(word())})`;
    if (r < 0.65) return `${ind}return ${ident()} ${pick(['+', '-', '*', '/', 'if', 'and'])} ${ident()}`;
    if (r < 0.8) return `${ind}# ${sentence(3, 9)}`;
    return `${ind}if ${ident()} ${pick(['==', '!=', '<', '>='])} ${Math.floor(rand() * 1000)}:`;
  };
  return { rand, pick, word, sentence, paragraph, ident, codeLine };
}

function chatRow(t, i) {
  const conv = [{ from: 'system', value: t.pick(['You are a friendly assistant.', 'You are a helpful, concise assistant.', t.sentence(8, 20)]) }];
  const turns = 2 + Math.floor(t.rand() * 2);
  for (let k = 0; k < turns; k++) {
    conv.push({ from: 'human', value: t.rand() < 0.5 ? t.sentence() : t.paragraph(1, 3) });
    conv.push({ from: 'gpt', value: t.paragraph(1, 5) });
  }
  return { id: `chat-${i}`, conversations: conv };
}

function reasoningRow(t, i) {
  const thought = [];
  const steps = 3 + Math.floor(t.rand() * 6);
  for (let k = 0; k < steps; k++) thought.push(t.paragraph(1, 3));
  return {
    system: 'Your role as an assistant is to think step by step before answering.',
    conversations: [
      { from: 'user', value: `${t.sentence()} (#${i})` },
      {
        from: 'assistant',
        value: `<|begin_of_thought|>\n${thought.join('\n\n')}\n<|end_of_thought|>\n\n<|begin_of_solution|>\n${t.paragraph(1, 4)}\n<|end_of_solution|>`,
      },
    ],
  };
}

function agentRow(t, i, pairs = 41) {
  const messages = [
    { role: 'system', content: null },
    { role: 'user', content: `Fix the failing test in repo ${t.ident()}-${i}: ${t.sentence()}` },
  ];
  // 84 messages by default: system, user, then 41 assistant/tool-result pairs.
  for (let k = 0; k < pairs; k++) {
    const tool = t.pick(['execute_bash', 'str_replace_editor', 'str_replace_editor']);
    const params =
      tool === 'execute_bash'
        ? `<parameter=command>${t.pick(['grep -n', 'python -m pytest -q', 'sed -n 1,80p', 'ls -la'])} ${t.ident()}/${t.ident()}.py</parameter>`
        : `<parameter=command>${t.pick(['view', 'str_replace'])}</parameter>\n<parameter=path>/workspace/src/${t.ident()}/${t.ident()}.py</parameter>`;
    messages.push({ role: 'assistant', content: `${t.sentence()}\n\n<function=${tool}>\n${params}\n</function>` });
    const lines = [];
    const n = 2 + Math.floor(Math.pow(t.rand(), 2) * 30);
    for (let l = 1; l <= n; l++) lines.push(`${String(l).padStart(6)}\t${t.codeLine()}`);
    messages.push({ role: 'user', content: `EXECUTION RESULT of [${tool}]:\n${lines.join('\n')}` });
  }
  return {
    instance_id: `${t.ident()}__${t.ident()}-${i}`,
    system_prompt: 'You are a careful software engineering agent. Use the tools to inspect and edit the repository.',
    messages,
    resolved: t.rand() < 0.5,
  };
}

const MAKERS = { chat: chatRow, reasoning: reasoningRow, agent: agentRow };

/**
 * Rows of one shape (or `mixed`: 85 % chat, 14 % reasoning, 1 % agent, interleaved), deterministic per seed.
 * @param {'chat'|'reasoning'|'agent'|'mixed'} shape
 * @param {number} count rows (Infinity for an endless stream)
 */
export function* generateRows(shape, count, seed = 7) {
  const t = textSource(prng(seed));
  for (let i = 0; i < count; i++) {
    let s = shape;
    if (shape === 'mixed') {
      const r = i % 100;
      s = r === 0 ? 'agent' : r < 15 ? 'reasoning' : 'chat';
    }
    const make = MAKERS[s];
    if (!make) throw new Error(`unknown shape ${shape} (chat, reasoning, agent, mixed)`);
    yield make(t, i);
  }
}

/** Writes `count` rows (or until `maxBytes`) of a shape as JSONL; resolves to { rows, bytes }. */
export async function writeDataset(file, shape, { rows = Infinity, maxBytes = Infinity, seed = 7 } = {}) {
  const out = createWriteStream(file);
  let bytes = 0;
  let n = 0;
  for (const row of generateRows(shape, rows, seed)) {
    if (bytes >= maxBytes) break;
    const line = JSON.stringify(row) + '\n';
    bytes += Buffer.byteLength(line);
    n++;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return { rows: n, bytes };
}

/**
 * Agent runs of `messages` messages each (system, user, then assistant / tool-result pairs), as many
 * as make `totalMessages` messages in all: datasets of the same size (about the same tokens) whose
 * conversations differ in length only (per-token cost as a conversation grows). Resolves to { rows, bytes }.
 */
export async function writeAgentRuns(file, messages, totalMessages, seed = 7) {
  const t = textSource(prng(seed));
  const out = createWriteStream(file);
  let bytes = 0;
  const runs = Math.max(1, Math.round(totalMessages / messages));
  for (let i = 0; i < runs; i++) {
    const line = JSON.stringify(agentRow(t, i, Math.max(1, Math.round((messages - 2) / 2)))) + '\n';
    bytes += Buffer.byteLength(line);
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return { rows: runs, bytes };
}

/** "2G", "500M", "64k", or a number of bytes. */
export function parseBytes(v) {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg]?)i?b?$/i.exec(String(v).trim());
  if (!m) throw new Error(`not a size: ${v}`);
  return Math.round(Number(m[1]) * { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2].toLowerCase()]);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      shape: { type: 'string', default: 'mixed' },
      rows: { type: 'string' },
      bytes: { type: 'string' },
      out: { type: 'string' },
      seed: { type: 'string', default: '7' },
      messages: { type: 'string' },
    },
  });
  if (!values.out || (!values.rows && !values.bytes)) {
    console.error('usage: node scripts/bench-data.mjs --shape chat|reasoning|agent|mixed (--rows N | --bytes 2G) --out FILE [--seed S]');
    process.exit(2);
  }
  if (values.messages) {
    if (values.shape !== 'agent' || !values.rows) {
      console.error('--messages N goes with --shape agent --rows RUNS');
      process.exit(2);
    }
    const r = await writeAgentRuns(values.out, Number(values.messages), Number(values.messages) * Number(values.rows), Number(values.seed));
    console.log(`${values.out}: ${r.rows} agent runs of ${values.messages} messages, ${(r.bytes / 1e6).toFixed(1)} MB`);
    process.exit(0);
  }
  const r = await writeDataset(values.out, values.shape, {
    rows: values.rows ? Number(values.rows) : Infinity,
    maxBytes: values.bytes ? parseBytes(values.bytes) : Infinity,
    seed: Number(values.seed),
  });
  console.log(`${values.out}: ${r.rows} rows, ${(r.bytes / 1e6).toFixed(1)} MB`);
}
