/**
 * Conversations written as one string with speaker markers, split into turns.
 *
 * Marker sets (facts from the datasets' documented layouts):
 * - Anthropic HH-RLHF: `\n\nHuman: …\n\nAssistant: …` (github.com/anthropics/hh-rlhf);
 * - Glaive function calling v2: `USER: …`, `ASSISTANT: …`, `FUNCTION RESPONSE: …`
 *   with `<|endoftext|>` after assistant turns and `<functioncall> {json}` calls
 *   (huggingface.co/datasets/glaiveai/glaive-function-calling-v2);
 * - Guanaco / OpenAssistant exports: `### Human: …### Assistant: …`
 *   (huggingface.co/datasets/timdettmers/openassistant-guanaco);
 * - ChatML: `<|im_start|>role\n…<|im_end|>`.
 */
import type { Message, Role, ToolCall } from '../types';
import type { NormalizeContext } from './base';
import { parseJsonLimited } from '../jsonDepth';

/** One marker family: label (as written, including the colon) → role. */
export interface MarkerSet {
  name: string;
  labels: { label: string; role: Role }[];
}

export const HH_MARKERS: MarkerSet = {
  name: 'Human:/Assistant:',
  labels: [
    { label: 'Human:', role: 'user' },
    { label: 'Assistant:', role: 'assistant' },
  ],
};
export const GLAIVE_MARKERS: MarkerSet = {
  name: 'USER:/ASSISTANT:/FUNCTION RESPONSE:',
  labels: [
    { label: 'SYSTEM:', role: 'system' },
    { label: 'USER:', role: 'user' },
    { label: 'ASSISTANT:', role: 'assistant' },
    { label: 'FUNCTION RESPONSE:', role: 'tool' },
  ],
};
export const GUANACO_MARKERS: MarkerSet = {
  name: '### Human:/### Assistant:',
  labels: [
    { label: '### Human:', role: 'user' },
    { label: '### Assistant:', role: 'assistant' },
  ],
};

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Splits `text` at markers that start a line (or the text). Each turn's text is
 * the text up to the next marker, whitespace trimmed at both ends. Text before
 * the first marker is returned as `preamble` (trimmed).
 * @returns null unless the markers appear with at least one user turn
 */
export function splitByMarkers(text: string, set: MarkerSet): { preamble: string; turns: { role: Role; content: string }[] } | null {
  const alt = set.labels.map((l) => escapeRe(l.label)).join('|');
  // `### Human:` may follow text on the same line in Guanaco dumps; the others start a line.
  const re = set === GUANACO_MARKERS ? new RegExp(`(${alt})`, 'g') : new RegExp(`(?:^|\\n)[ \\t]*(${alt})`, 'g');
  const hits: { at: number; end: number; role: Role }[] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const role = set.labels.find((l) => l.label === m![1])!.role;
    hits.push({ at: m.index, end: m.index + m[0].length, role });
  }
  if (!hits.some((h) => h.role === 'user')) return null;
  const turns = hits.map((h, i) => ({ role: h.role, content: text.slice(h.end, i + 1 < hits.length ? hits[i + 1].at : text.length).trim() }));
  return { preamble: text.slice(0, hits[0].at).trim(), turns };
}

/** ChatML turns `<|im_start|>role\ncontent<|im_end|>`; null when there is no such turn. Roles are returned as written. */
export function splitChatMl(text: string): { role: string; content: string }[] | null {
  const re = /<\|im_start\|>([^\n<]*)\n([\s\S]*?)(?:<\|im_end\|>|(?=<\|im_start\|>)|$)/g;
  const out: { role: string; content: string }[] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0] === '') break;
    out.push({ role: m[1].trim(), content: m[2].replace(/\n$/, '') });
  }
  return out.length ? out : null;
}

/**
 * A Glaive assistant turn → message: `<|endoftext|>` removed; a
 * `<functioncall> {"name": …, "arguments": '…'}` (arguments in single quotes,
 * which is not JSON) becomes a tool call whose `arguments` is the quoted text
 * verbatim. A call that cannot be read stays text (noted).
 */
export function glaiveAssistant(content: string, ctx: NormalizeContext): Message {
  const text = content.replace(/\s*<\|endoftext\|>\s*$/g, '').trim();
  const at = text.indexOf('<functioncall>');
  if (at < 0) return { role: 'assistant', content: text };
  const before = text.slice(0, at).trim();
  const call = text.slice(at + '<functioncall>'.length).trim();
  const tc = readGlaiveCall(call);
  if (!tc) {
    ctx.note('tool_call_text_not_json', 'a <functioncall> that cannot be read is kept verbatim as assistant text');
    return { role: 'assistant', content: text };
  }
  ctx.note('glaive_functioncall_converted', 'Glaive "<functioncall> {…}" converted to a tool call (arguments kept as written)');
  return { role: 'assistant', content: before === '' ? null : before, tool_calls: [tc] };
}

function readGlaiveCall(s: string): ToolCall | null {
  try {
    const v = parseJsonLimited(s) as { name?: unknown; arguments?: unknown };
    if (typeof v.name === 'string') {
      const a = v.arguments;
      return {
        type: 'function',
        function: {
          name: v.name,
          arguments: typeof a === 'string' || (a && typeof a === 'object' && !Array.isArray(a)) ? (a as string | Record<string, unknown>) : {},
        },
      };
    }
  } catch {
    /* Glaive writes arguments in single quotes */
  }
  const m = /^\{\s*"name"\s*:\s*"([^"]+)"\s*,\s*"arguments"\s*:\s*'([\s\S]*)'\s*\}$/.exec(s);
  if (!m) return null;
  return { type: 'function', function: { name: m[1], arguments: m[2] } };
}

/** Alpaca prompt template written out in one string (`### Instruction:` / `### Input:` / `### Response:`), tatsu-lab/stanford_alpaca. */
export const ALPACA_MARKERS: MarkerSet = {
  name: '### Instruction:/### Response:',
  labels: [
    { label: '### Instruction:', role: 'user' },
    { label: '### Input:', role: 'user' },
    { label: '### Response:', role: 'assistant' },
  ],
};

/**
 * Llama-2 chat strings: `<s>[INST] <<SYS>>\nsystem\n<</SYS>>\n\nuser [/INST] answer </s><s>[INST] …`
 * (the Llama 2 prompt format). Returns null when there is no `[INST]…[/INST]` pair.
 */
export function splitLlama2(text: string): { role: Role; content: string }[] | null {
  const re = /\[INST\]([\s\S]*?)\[\/INST\]([\s\S]*?)(?=(?:<s>)?\s*\[INST\]|$)/g;
  const out: { role: Role; content: string }[] = [];
  for (let m = re.exec(text); m; m = re.exec(text)) {
    let user = m[1];
    const sys = /^\s*<<SYS>>\n?([\s\S]*?)\n?<<\/SYS>>/.exec(user);
    if (sys) {
      out.push({ role: 'system', content: sys[1].trim() });
      user = user.slice(sys[0].length);
    }
    out.push({ role: 'user', content: user.trim() });
    const answer = m[2]
      .replace(/<\/s>\s*$/, '')
      .replace(/<\/s>\s*<s>\s*$/, '')
      .trim();
    if (answer !== '') out.push({ role: 'assistant', content: answer });
  }
  return out.length ? out : null;
}

/**
 * A prompt string that is itself an HH transcript ending in an open
 * `Assistant:` (TRL-processed Anthropic HH: `prompt` = "\n\nHuman: …\n\nAssistant:")
 * → its turns, the empty trailing assistant turn removed; null for any other text.
 */
export function hhPromptTurns(text: string): { role: Role; content: string }[] | null {
  if (!/^\s*Human:/.test(text) || !/\n\s*Assistant:/.test(text)) return null;
  const split = splitByMarkers(text, HH_MARKERS);
  if (!split || split.preamble !== '') return null;
  const turns = split.turns;
  if (turns.length && turns[turns.length - 1].role === 'assistant' && turns[turns.length - 1].content === '') turns.pop();
  return turns;
}

/**
 * A prompt string that is a rendered ChatML conversation ending in an open assistant header (a prompt written
 * for a completion API: `<|im_start|>user\n…<|im_end|>\n<|im_start|>assistant\n`) → its turns, the open
 * header removed; the response beside it is what the model wrote after that header. Null for any other text:
 * it must start with `<|im_start|>`, end with the open assistant header, hold a user turn, and every role must
 * be system, user or assistant.
 */
export function chatMlPromptTurns(text: string): { role: Role; content: string }[] | null {
  if (!/^\s*<\|im_start\|>/.test(text) || !/<\|im_start\|>assistant\n?\s*$/.test(text)) return null;
  const turns = splitChatMl(text);
  if (!turns || turns.length < 2) return null;
  const last = turns.pop()!;
  if (last.role !== 'assistant' || last.content.trim() !== '') return null;
  if (!turns.every((t) => t.role === 'system' || t.role === 'user' || t.role === 'assistant')) return null;
  if (!turns.some((t) => t.role === 'user')) return null;
  return turns.map((t) => ({ role: t.role as Role, content: t.content }));
}

/** The response that follows a {@link chatMlPromptTurns} prompt with ChatML's end-of-turn marker (and spaces after it) removed from its end. */
export function withoutChatMlEnd(text: string): string {
  return text.replace(/<\|im_end\|>\s*$/, '');
}
