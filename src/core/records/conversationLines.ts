/**
 * The lines of `prepare --format messages` (docs/outputs.md "Conversations"): a written conversation,
 * normalized — the format detective's work — for the trainers that render, tokenize and mask
 * conversations themselves.
 *
 * - `conversations.jsonl`: OpenAI chat `messages`, what Model-Optimizer's `LanguageDataCollator`
 *   (`examples/speculative_decoding`, `modelopt/torch/utils/plugins/transformers_dataset.py`) reads
 *   from a `datasets` JSON file and gives to `apply_chat_template` as they are.
 * - `conversations_sharegpt.jsonl`: ShareGPT `conversations` (`from` `human` / `gpt`, `value`), what
 *   EAGLE's `eagle/traineagle3/main.py` `build_dataset_rank` reads: it maps `human` → user and
 *   `gpt` → assistant and knows no other `from` (any other stops it), drops a first turn that is
 *   not `human`, asserts that the turns alternate, and puts its own fixed system prompt first. So
 *   only a conversation of alternating user / assistant text turns is expressible: leading system
 *   turns are left out of the line (EAGLE's own prompt takes their place; noted `eagle_system_prompt`);
 *   any other conversation is left out of that file with a counted note (`eagle_*`, core/codes.ts),
 *   never changed.
 *
 * Pure; no I/O.
 */
import type { Code } from '../codes';
import type { Conversation, Message, ReasoningPolicy, ToolCall } from '../types';
import { prepareTurns } from './turns';

/** One `conversations.jsonl` message: OpenAI chat-completions fields, only those the turn has. */
export interface OpenAiLineMessage {
  role: Message['role'];
  content: string;
  reasoning_content?: string;
  tool_calls?: { id?: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  name?: string;
  /**
   * 0 on an assistant turn the records run does not train: the data marks it not trainable (`Message.trainable`
   * false), or the rules leave it untrained (e.g. `tool_calls_not_rendered`, `--mask last`); Model-Optimizer's
   * collator then leaves the turn out of the loss.
   */
  weight?: 0;
}

/**
 * A tool call's `arguments` as a JSON string, the OpenAI API's own form: a string stays exactly as the
 * data wrote it; an object is written with `JSON.stringify`. (Both trainers load the file with `datasets`,
 * whose Arrow columns would give every object argument every key any call of the file has, set to null.)
 */
function argumentsText(args: ToolCall['function']['arguments']): string {
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/**
 * The messages of a conversation as `conversations.jsonl` writes them: the turns the records were made of
 * (records/turns.ts `prepareTurns`: with `reasoning` `drop` every turn's reasoning removed; trailing empty
 * assistant turns, generation placeholders, removed), `null` content as `""`, reasoning that the data wrote
 * inline (`<think>R</think>C`) as `reasoning_content` R with content C.
 * @param untrained indices (into those turns, records/mask.ts `ConversationRecords.messages`) of the assistant turns the
 *   records run left untrained ({@link untrainedTurns}): written with `"weight": 0`
 */
export function openAiMessages(c: Conversation, reasoning: ReasoningPolicy = 'keep', untrained?: ReadonlySet<number>): OpenAiLineMessage[] {
  return prepareTurns(c.messages, reasoning).messages.map((m, i) => ({
    role: m.role,
    content: m.content ?? '',
    ...(m.reasoning_content !== undefined && m.reasoning_content.trim() !== '' ? { reasoning_content: m.reasoning_content } : {}),
    ...(m.tool_calls?.length
      ? {
          tool_calls: m.tool_calls.map((tc) => ({
            ...(tc.id !== undefined ? { id: tc.id } : {}),
            type: 'function' as const,
            function: { name: tc.function.name, arguments: argumentsText(tc.function.arguments) },
          })),
        }
      : {}),
    ...(m.tool_call_id ? { tool_call_id: m.tool_call_id } : {}),
    ...(m.name ? { name: m.name } : {}),
    ...(m.trainable === false || (m.role === 'assistant' && untrained?.has(i)) ? { weight: 0 as const } : {}),
  }));
}

/**
 * The assistant turns the records run leaves untrained, from what it decided (one source): the indices of
 * `messages` (the turns the records were built from) with role assistant that no written record trains
 * (`trained`: the union of the written records' `targets`).
 */
export function untrainedTurns(messages: readonly { role: string }[], trained: Iterable<number>): Set<number> {
  const t = new Set(trained);
  const out = new Set<number>();
  messages.forEach((m, i) => {
    if (m.role === 'assistant' && !t.has(i)) out.add(i);
  });
  return out;
}

/** The `source` of a line, as a record's: `{file, line}` and `element` when the row is one of several on its line. */
function sourceOf(c: Conversation): Conversation['source'] {
  return c.source.element === undefined
    ? { file: c.source.file, line: c.source.line }
    : { file: c.source.file, line: c.source.line, element: c.source.element };
}

/**
 * The `conversations.jsonl` line of a written conversation (newline included):
 * `{"id", "source", "messages", "tools"?}` — `tools` (OpenAI tool definitions, as the row gave them) when the
 * row had any — and the notes it gets: `conversation_turn_not_trainable` once when an assistant turn is marked
 * not trainable or left untrained by the rules (`untrained`), written with `"weight": 0`.
 */
export function conversationLine(c: Conversation, reasoning: ReasoningPolicy = 'keep', untrained?: ReadonlySet<number>): { line: string; notes: Code[] } {
  const messages = openAiMessages(c, reasoning, untrained);
  const notes: Code[] = messages.some((m) => m.role === 'assistant' && m.weight === 0) ? ['conversation_turn_not_trainable'] : [];
  const line = JSON.stringify({ id: c.id, source: sourceOf(c), messages, ...(c.tools?.length ? { tools: c.tools } : {}) }) + '\n';
  return { line, notes };
}

/**
 * Why EAGLE's reader cannot take a conversation (its messages as {@link openAiMessages} gives them, leading
 * system turns removed) as it is, the first reason in this order: tool calls, tool results or tool definitions
 * (`eagle_tool_turns`); reasoning (`eagle_reasoning`); an assistant turn marked not trainable
 * (`eagle_turn_not_trainable`); turns that do not alternate user / assistant from a user turn, a system turn
 * after the first other turn included (`eagle_turn_order`). Undefined when it can.
 */
export function sharegptRefusal(messages: readonly OpenAiLineMessage[], hasTools: boolean): Code | undefined {
  if (hasTools || messages.some((m) => m.role === 'tool' || (m.tool_calls?.length ?? 0) > 0)) return 'eagle_tool_turns';
  if (messages.some((m) => m.reasoning_content !== undefined)) return 'eagle_reasoning';
  if (messages.some((m) => m.role === 'assistant' && m.weight === 0)) return 'eagle_turn_not_trainable';
  if (messages.some((m, i) => m.role !== (i % 2 === 0 ? 'user' : 'assistant'))) return 'eagle_turn_order';
  return undefined;
}

/**
 * The `conversations_sharegpt.jsonl` line of a written conversation (newline included):
 * `{"id", "source", "conversations": [{"from": "human" | "gpt", "value"}]}` with the note
 * `eagle_system_prompt` when leading system turns were left out of it, or the note saying why EAGLE's
 * reader cannot take it ({@link sharegptRefusal}); the conversation is then not in that file.
 */
export function sharegptLine(
  c: Conversation,
  reasoning: ReasoningPolicy = 'keep',
  untrained?: ReadonlySet<number>,
): { line: string; notes: Code[] } | { refused: Code } {
  const all = openAiMessages(c, reasoning, untrained);
  let k = 0;
  while (k < all.length && all[k].role === 'system') k++;
  const messages = all.slice(k);
  const refused = sharegptRefusal(messages, (c.tools?.length ?? 0) > 0);
  if (refused) return { refused };
  const conversations = messages.map((m) => ({ from: m.role === 'user' ? 'human' : 'gpt', value: m.content }));
  return { line: JSON.stringify({ id: c.id, source: sourceOf(c), conversations }) + '\n', notes: k > 0 ? ['eagle_system_prompt'] : [] };
}
