/**
 * Prefix renders from one traced render (src/core/templates/jinja/prefixTrace.ts) on the shared conformance
 * fixtures (`fixtures/templates` of the shared folder beside the checkout: 57 real chat templates with Python jinja2
 * reference renders; skipped when it is not there, `EAGLE3_SHARED_TEMPLATES` names another folder): for every
 * template, every probe conversation and one long conversation joined from them (system prompt, several turns, tool
 * calls and results, reasoning, inline thinking, a trailing tool result: about 30 messages), every prefix length and
 * both `add_generation_prompt` values, each render served from the trace equals the prefix rendered on its own —
 * with header replay and without it (the path before it) — and the number served per template is pinned for both.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ChatTemplate } from '../../src/core/templates/template';
import type { Message } from '../../src/core/types';
import { compareAll } from '../prefixCompare';

const DIR = process.env.EAGLE3_SHARED_TEMPLATES || join(__dirname, '..', '..', '..', 'shared', 'fixtures', 'templates');

interface Probe {
  id: string;
  tools: unknown[] | null;
  messages: Message[];
}

/** One long conversation from the probes (each as this template is given it): p2, then p3, p4, p6, p7, p8, p5 without their system messages. */
function longConversation(probes: Probe[]): { messages: Message[]; tools: unknown[] | undefined } {
  const by = (prefix: string) => probes.find((p) => p.id.startsWith(prefix));
  const parts = ['p2_', 'p3_', 'p4_', 'p6_', 'p7_', 'p8_', 'p5_'].map(by).filter((p): p is Probe => p !== undefined);
  const messages = parts.flatMap((p, i) => (i === 0 ? p.messages : p.messages.filter((m) => m.role !== 'system')));
  return { messages, tools: parts.find((p) => p.tools && p.tools.length)?.tools ?? undefined };
}

// [served with header replay, served without it, renderable], over the probes and the long conversation.
const EXPECTED: Record<string, [number, number, number]> = {
  'Apertus-8B-Instruct': [130, 130, 150],
  'Apriel-1.6-15b-Thinker-fixed': [130, 20, 150],
  'Bielik-11B-v3.0-Instruct': [130, 130, 130],
  'ByteDance-Seed-OSS': [130, 130, 130],
  'CohereForAI-c4ai-command-r-plus-tool_use': [82, 82, 82],
  'CohereForAI-c4ai-command-r7b-12-2024-tool_use': [130, 130, 150],
  'GLM-4.6': [150, 150, 150],
  'GLM-4.7-Flash': [150, 150, 150],
  'GigaChat3-10B-A1.8B': [130, 130, 150],
  'GigaChat3.1-10B-A1.8B': [130, 130, 150],
  'HuggingFaceTB-SmolLM3-3B': [130, 130, 130],
  'Kimi-K2-Instruct': [90, 90, 90],
  'Kimi-K2-Thinking': [48, 12, 90],
  'LFM2-8B-A1B': [130, 130, 130],
  'LFM2.5-8B-A1B': [130, 130, 130],
  'LFM2.5-Instruct': [130, 130, 130],
  'MiMo-VL': [130, 130, 130],
  'MiniMax-M2': [130, 130, 150],
  'Mistral-Small-3.2-24B-Instruct-2506': [30, 12, 90],
  'NVIDIA-Nemotron-3-Nano-30B-A3B-BF16': [130, 130, 130],
  'NVIDIA-Nemotron-Nano-v2': [124, 124, 124],
  'NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use': [90, 90, 90],
  'NousResearch-Hermes-3-Llama-3.1-8B-tool_use': [90, 90, 90],
  'Qwen-QwQ-32B': [130, 130, 130],
  'Qwen-Qwen2.5-7B-Instruct': [130, 130, 130],
  'Qwen-Qwen3-0.6B': [130, 20, 130],
  'Qwen3-Coder': [130, 130, 130],
  'Qwen3.5-4B': [124, 20, 124],
  'Reka-Edge': [20, 20, 150],
  'StepFun3.5-Flash': [130, 20, 130],
  'deepseek-ai-DeepSeek-R1-Distill-Llama-8B': [150, 150, 150],
  'deepseek-ai-DeepSeek-R1-Distill-Qwen-32B': [150, 150, 150],
  'deepseek-ai-DeepSeek-V3.1': [150, 150, 150],
  'deepseek-ai-DeepSeek-V3.2': [150, 150, 150],
  'fireworks-ai-llama-3-firefunction-v2': [0, 0, 0],
  'google-gemma-2-2b-it': [36, 36, 36],
  'google-gemma-4-31B-it': [130, 20, 130],
  'google-gemma-4-31B-it-interleaved': [130, 130, 130],
  'ibm-granite-granite-3.3-2B-Instruct': [130, 130, 130],
  'ibm-granite-granite-4.0': [130, 130, 130],
  'ibm-granite-granite-4.1': [130, 130, 130],
  'llama-cpp-deepseek-r1': [60, 60, 60],
  'llama-cpp-rwkv-world': [150, 150, 150],
  'meetkai-functionary-medium-v3.1': [150, 150, 150],
  'meetkai-functionary-medium-v3.2': [150, 150, 150],
  'meta-llama-Llama-3.1-8B-Instruct': [128, 56, 128],
  'meta-llama-Llama-3.2-3B-Instruct': [128, 56, 128],
  'meta-llama-Llama-3.3-70B-Instruct': [128, 56, 128],
  'microsoft-Phi-3.5-mini-instruct': [150, 150, 150],
  'mistralai-Ministral-3-14B-Reasoning-2512': [128, 128, 128],
  'mistralai-Mistral-Nemo-Instruct-2407': [30, 12, 70],
  'moonshotai-Kimi-K2': [150, 150, 150],
  'openai-gpt-oss-120b': [130, 130, 130],
  'stepfun-ai-Step-3.5-Flash': [130, 20, 130],
  'unsloth-Apriel-1.5': [130, 20, 130],
  'unsloth-mistral-Devstral-Small-2507': [130, 130, 130],
  'upstage-Solar-Open-100B': [150, 150, 150],
};

const names = existsSync(DIR)
  ? readdirSync(DIR)
      .filter((d) => statSync(join(DIR, d)).isDirectory())
      .sort()
  : [];

for (const name of names) {
  test(`${name}: prefix renders served from one traced render equal their own renders (probes and a long conversation, both flags)`, () => {
    const ref = JSON.parse(readFileSync(join(DIR, name, 'renders.json'), 'utf8'));
    const source = readFileSync(join(DIR, name, 'chat_template.jinja'), 'utf8');
    const counts = [0, 0, 0];
    for (const [i, headerReplay] of [true, false].entries()) {
      const ct = new ChatTemplate({ name: 'default', source }, ref.variables, {}, { headerReplay, now: () => new Date('2026-12-07T12:00:00Z') });
      const convs = [
        ...ref.probes.map((p: Probe) => ({ id: p.id, messages: p.messages, tools: p.tools ?? undefined })),
        { id: 'long', ...longConversation(ref.probes) },
      ];
      for (const c of convs) {
        const r = compareAll(ct, c.messages, c.tools, `${name} ${c.id}${headerReplay ? '' : ' (no header replay)'}`);
        counts[i] += r.proven;
        if (i === 0) counts[2] += r.renderable;
      }
    }
    console.log(`${name}: ${counts[0]} (without header replay ${counts[1]}) of ${counts[2]} prefix renders from one traced render`);
    if (EXPECTED[name]) assert.deepEqual(counts, EXPECTED[name], `${name}: [with header replay, without, renderable]`);
    assert.ok(counts[0] >= counts[1], `${name}: header replay serves fewer`);
  });
}

test('shared fixtures: every template has its pinned counts', { skip: names.length === 0 && 'no shared fixtures beside the checkout' }, () => {
  assert.deepEqual(Object.keys(EXPECTED).sort(), names);
});
