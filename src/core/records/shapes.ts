/**
 * Row shapes the chat template check's probes stand for (`records/checkTemplate.ts`
 * `ProbeName`): a template finding shown by a probe concerns only rows of that
 * probe's shape, so it counts against a file (its warnings, status and `--strict`)
 * only when the file has rows of that shape (`status.ts`).
 */
import type { ProbeName } from '../templates/probeConversations';
import type { Conversation } from '../types';

/** A shape of a conversation a probe stands for. */
export type RowShape = 'system' | 'multi_turn' | 'tool_calls' | 'reasoning' | 'tool_calls_with_reasoning';

/**
 * The shapes each probe stands for: a finding of the probe concerns a row with
 * any of them; `null`: every row (the plainest conversation).
 */
export const PROBE_SHAPES: Record<ProbeName, readonly RowShape[] | null> = {
  single_turn: null,
  multi_turn: ['system', 'multi_turn'],
  tool_call: ['tool_calls'],
  reasoning: ['reasoning'],
  agent_reasoning: ['tool_calls_with_reasoning'],
  trailing_tool_result: ['tool_calls'],
};

/** The shapes of one conversation (each once). */
export function conversationShapes(c: Pick<Conversation, 'messages' | 'tools'>): RowShape[] {
  const out: RowShape[] = [];
  // One pass over the messages (once per row in prepare).
  let system = false;
  let assistants = 0;
  let tools = (c.tools?.length ?? 0) > 0;
  let reasoning = false;
  for (const m of c.messages) {
    if (m.role === 'system') system = true;
    else if (m.role === 'assistant') assistants++;
    else if (m.role === 'tool') tools = true;
    if ((m.tool_calls?.length ?? 0) > 0) tools = true;
    if (!reasoning && m.reasoning_content && m.reasoning_content.trim() !== '') reasoning = true;
  }
  if (system) out.push('system');
  if (assistants > 1) out.push('multi_turn');
  if (tools) out.push('tool_calls');
  if (reasoning) out.push('reasoning');
  if (tools && reasoning) out.push('tool_calls_with_reasoning');
  return out;
}

/**
 * Whether a finding of `probe` concerns a file whose rows have `shapes` (rows per shape):
 * always for a template-wide finding (`probe` null) or a file whose shapes were not counted
 * (a report of an older version).
 */
export function probeConcerns(probe: ProbeName | null, shapes: Partial<Record<string, number>> | undefined): boolean {
  if (probe === null || shapes === undefined) return true;
  const want = PROBE_SHAPES[probe];
  if (want === null || want === undefined) return true;
  return want.some((s) => (shapes[s] ?? 0) > 0);
}
