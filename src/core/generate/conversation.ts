/**
 * Regenerating one conversation with the target model (issue 6 "Multi-turn"):
 * every assistant turn is generated again, in order, from the history built so
 * far — the dataset's user/system/tool turns and the REGENERATED assistant
 * turns, never the original answers. A conversation that does not end with an
 * assistant turn (a prompt, a trailing tool result) gets one more turn at the end;
 * a multi-turn prompt (`Conversation.answerAfter`) gets one after each listed
 * turn too, before the next turn is asked.
 *
 * Tool calls: after an original assistant turn with tool calls, the dataset's
 * tool results are kept only when the regenerated turn makes the same calls
 * (same count, names, and arguments equal as JSON values, in order); their
 * `tool_call_id`s are remapped to the regenerated calls' ids. Otherwise the
 * conversation stops at the regenerated turn (outcome `tool_call_diverged`): its
 * results are not in the dataset, so nothing after it can be kept.
 */
import type { Conversation, Message, ToolCall } from '../types';
import type { ChatTurnResult, ReasoningMode } from './client';

/** How a conversation ended. `ok` and `tool_call_diverged` are written; the others go to the journal only. */
export type ConversationOutcome = 'ok' | 'tool_call_diverged' | 'length' | 'reasoning_without_answer';

/** Per generated turn, stored under `generation.turns` in the output row. */
export interface GeneratedTurn {
  /** Index of the generated assistant message in the output row's `messages`. */
  message_index: number;
  finish_reason: string;
  /** Generated token ids as the server returned them (see client.ts), absent when it returned none. */
  token_ids?: number[];
  prompt_tokens: number;
  completion_tokens: number;
}

export interface RegeneratedConversation {
  outcome: ConversationOutcome;
  messages: Message[];
  turns: GeneratedTurn[];
  /** For `tool_call_diverged` / `length` / `reasoning_without_answer`: which turn, and what differed. */
  detail?: string;
}

function argsValue(a: string | Record<string, unknown>): unknown {
  if (typeof a !== 'string') return a;
  try {
    return JSON.parse(a);
  } catch {
    return a;
  }
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** True when two tool-call lists make the same calls: same count, and per position the same name and arguments (compared as JSON values). */
export function sameToolCalls(a: ToolCall[] | undefined, b: ToolCall[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return (
    x.length === y.length &&
    x.every((c, i) => c.function.name === y[i].function.name && jsonEqual(argsValue(c.function.arguments), argsValue(y[i].function.arguments)))
  );
}

/** The text-less, reasoning-only answer: reasoning given, no content, no tool call. */
function reasoningOnly(m: Message): boolean {
  return !!m.reasoning_content && (m.content ?? '').trim() === '' && !m.tool_calls?.length;
}

/** One chat turn: history → answer (retries and server choice are its business; it throws on a permanent failure). */
type AskTurn = (history: Message[], tools: unknown[] | undefined) => Promise<ChatTurnResult>;

/**
 * The state of one conversation's regeneration: the history built so far (the dataset's other turns and the
 * regenerated assistant turns), the generated turns, and the tool-call ids to remap in the tool results that follow
 * a matched call turn.
 */
class Regeneration {
  readonly out: Message[] = [];
  readonly turns: GeneratedTurn[] = [];
  private readonly idMap = new Map<string, string>();

  constructor(
    private readonly conv: Conversation,
    private readonly ask: AskTurn,
    private readonly reasoning: ReasoningMode,
  ) {}

  /**
   * Generates the next assistant turn from the history, in place of `original` (undefined for a turn the dataset does
   * not answer: after a prompt, a trailing tool result, an `answerAfter` turn).
   * @returns the conversation's end when this turn ends it (`length`, `reasoning_without_answer`,
   *   `tool_call_diverged`), else null
   */
  async generate(original: Message | undefined): Promise<RegeneratedConversation | null> {
    const r = await this.ask([...this.out], this.conv.tools);
    const msg: Message = { ...r.message };
    if (this.reasoning !== 'keep') delete msg.reasoning_content;
    const turn: GeneratedTurn = {
      message_index: this.out.length,
      finish_reason: r.finishReason,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
    };
    if (r.tokenIds) turn.token_ids = r.tokenIds;
    const n = this.turns.length + 1;
    if (r.finishReason === 'length')
      return { outcome: 'length', messages: this.out, turns: [...this.turns, turn], detail: `turn ${n} hit max_tokens (${r.completionTokens} tokens)` };
    if (reasoningOnly(r.message))
      return { outcome: 'reasoning_without_answer', messages: this.out, turns: [...this.turns, turn], detail: `turn ${n} has reasoning but no answer` };
    this.out.push(msg);
    this.turns.push(turn);
    return this.matchToolCalls(original, msg, n);
  }

  /**
   * After generated turn `n`: the dataset's tool results can follow it only when it makes the original turn's calls
   * (their ids are then remapped to the generated calls'); otherwise the conversation stops here.
   */
  private matchToolCalls(original: Message | undefined, msg: Message, n: number): RegeneratedConversation | null {
    const origCalls = original?.tool_calls;
    if (original && (origCalls?.length || msg.tool_calls?.length)) {
      if (!sameToolCalls(origCalls, msg.tool_calls)) {
        const want = (origCalls ?? []).map((c) => c.function.name).join(', ') || 'none';
        const got = (msg.tool_calls ?? []).map((c) => c.function.name).join(', ') || 'none';
        return {
          outcome: 'tool_call_diverged',
          messages: this.out,
          turns: this.turns,
          detail: `turn ${n}: dataset called [${want}], the model called [${got}]${want === got ? ' with other arguments' : ''}`,
        };
      }
      this.idMap.clear();
      origCalls!.forEach((c, i) => {
        const to = msg.tool_calls![i].id;
        if (c.id && to) this.idMap.set(c.id, to);
      });
    } else if (!original && msg.tool_calls?.length) {
      // A final turn that calls a tool: the dataset has no result for it.
      return {
        outcome: 'tool_call_diverged',
        messages: this.out,
        turns: this.turns,
        detail: `turn ${n}: the model called [${msg.tool_calls.map((c) => c.function.name).join(', ')}] where the dataset has no answer (no tool results to follow)`,
      };
    }
    return null;
  }

  /** Adds a dataset turn that is not the assistant's to the history: a tool result with its call id remapped; any other turn ends the remapping. */
  keep(m: Message): void {
    if (m.role === 'tool') {
      const t: Message = stripForHistory(m);
      if (t.tool_call_id && this.idMap.has(t.tool_call_id)) t.tool_call_id = this.idMap.get(t.tool_call_id);
      this.out.push(t);
    } else {
      this.idMap.clear();
      this.out.push(stripForHistory(m));
    }
  }
}

/**
 * Regenerates every assistant turn of `conv` with `ask` (one chat turn: history → answer;
 * retries and server choice are its business; it throws on a permanent failure).
 * `reasoning: drop|disable` removes `reasoning_content` from the kept messages.
 * @returns the regenerated messages and turns, and the outcome; a turn that hit
 *   `max_tokens` (`finish_reason: length`) or answered with reasoning only ends the conversation with that outcome.
 */
export async function regenerateConversation(conv: Conversation, ask: AskTurn, reasoning: ReasoningMode): Promise<RegeneratedConversation> {
  const src = conv.messages;
  const g = new Regeneration(conv, ask, reasoning);
  // A multi-turn prompt: the target model answers after each of these turns before the next is asked.
  const answerAfter = new Set(conv.answerAfter ?? []);
  for (const [i, m] of src.entries()) {
    if (m.role === 'assistant') {
      const stop = await g.generate(m);
      if (stop) return stop;
      continue;
    }
    g.keep(m);
    if (answerAfter.has(i) && i < src.length - 1 && src[i + 1].role !== 'assistant') {
      const stop = await g.generate(undefined);
      if (stop) return stop;
    }
  }
  if (g.out.length === 0 || g.out[g.out.length - 1].role !== 'assistant') {
    const stop = await g.generate(undefined);
    if (stop) return stop;
  }
  return { outcome: 'ok', messages: g.out, turns: g.turns };
}

/** History as sent back: the message without local-only fields (`trainable`). */
function stripForHistory(m: Message): Message {
  const { trainable: _t, ...rest } = m;
  return rest;
}
