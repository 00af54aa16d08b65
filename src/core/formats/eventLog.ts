/**
 * Agent CLI event logs: JSON Lines session transcripts with one event per line,
 * in the shape Claude Code and similar agent CLIs write — `{type: "user" |
 * "assistant" | "system" | …, uuid, parentUuid (null at a root), sessionId,
 * timestamp, message: {role, content}}` where `content` is a string or a list
 * of blocks (`text`, `thinking`, `tool_use {id, name, input}`, `tool_result
 * {tool_use_id, content}`), plus `{type: "summary", summary, leafUuid}` lines.
 * The file is read by a file-level pass, like OpenAssistant flat exports
 * (`oasst.ts`, run by `run/oasstRun.ts`):
 *
 * - Events are linked by `parentUuid` across the whole file (sessions are
 *   the chains themselves: a resumed session whose first event points into an
 *   earlier one continues that conversation).
 * - A conversation is the chain from a root to a leaf (an event no other event
 *   names as its parent). With branches (an edited or retried message), each
 *   leaf's chain is one conversation; the turns a chain shares with an earlier
 *   one are context there, so every assistant turn is trained once (noted
 *   `event_log_shared_turns_trained_once`).
 * - Consecutive assistant events with the same `message.id` (the CLI writes a
 *   reply block by block) are one assistant turn: its `text` blocks joined
 *   with a blank line, `thinking` blocks → `reasoning_content`, `tool_use`
 *   blocks → `tool_calls` (`arguments` = the JSON of `input`).
 * - `tool_result` blocks (inside `user` events) become `tool` turns with the
 *   matching `tool_call_id`; the `user` text of the same event follows them.
 * - Events of other types (`system`, …) in a chain are links, not turns.
 *
 * Accounting stays per line: the leaf's line carries the conversation; every
 * other line of the chain is `part` of it and takes its fate (written, set
 * aside, or dropped `event_chain_not_written`); `summary` lines are dropped
 * `summary_event`; a typed line with neither `uuid` nor `message` (the CLI's
 * bookkeeping, e.g. file snapshots) `non_conversation_event`; an event whose parent is not in the file (or below one that
 * is) `orphan_event`; a repeated `uuid` `duplicate_event`.
 *
 * Memory: the pass keeps every event's message until the file ends (the rest
 * of each line is dropped once its unread field names are noted).
 */
import type { Code } from '../codes';
import type { DropReason, RowOutcome } from '../types';
import { convertTurns } from './common';
import { drop, errored, isObject, isTurnError, type Row, type ShapeHandler } from './base';
import { finish, splitOutcome } from './rowEnd';
import { unreadKeys } from './fields';
import { topAncestor, type OasstPlan } from './oasst';

/** Fields of an event line the pass reads or knows as metadata of the envelope. */
const READ_FIELDS = [
  'type',
  'uuid',
  'parentUuid',
  'sessionId',
  'timestamp',
  'message',
  'isSidechain',
  'userType',
  'cwd',
  'version',
  'gitBranch',
  'requestId',
  'toolUseResult',
  'isMeta',
  'level',
  'subtype',
  'content',
  'summary',
  'leafUuid',
];

/** A `summary` line: `{type: "summary", summary, leafUuid}`. */
export function isSummaryEvent(row: Row): boolean {
  return row.type === 'summary' && typeof row.summary === 'string' && !('message' in row);
}

/**
 * One event of an agent CLI log: a `type` string, a `uuid` string, a
 * `parentUuid` key (null or a string), and a `message` object with a `role`
 * string and a string or list `content` (events without a message, e.g.
 * `system` notices, still link the chain when they have the envelope).
 */
export function isEventLine(row: Row): boolean {
  if (typeof row.type !== 'string' || typeof row.uuid !== 'string' || !('parentUuid' in row)) return false;
  if (row.parentUuid !== null && typeof row.parentUuid !== 'string') return false;
  if (!('message' in row)) return row.type !== 'user' && row.type !== 'assistant';
  const m = row.message;
  return isObject(m) && typeof m.role === 'string' && (typeof m.content === 'string' || Array.isArray(m.content));
}

interface Ev {
  index: number;
  line: number;
  uuid: string;
  parent: string | null;
  type: string;
  session: string;
  /** The message (`role`, `content`, `id`), undefined for an event without one. */
  message?: Row;
  unread: string[];
}

interface Summary {
  index: number;
  leaf: string;
}

/** Collects the event lines of one file, then plans what each becomes ({@link OasstPlan}, shared with the OpenAssistant pass). */
export class EventLogFilePass {
  private readonly events: Ev[] = [];
  private readonly summaries: Summary[] = [];
  private readonly others: { index: number; type: string }[] = [];
  /** An event inside chains whose every chain was dropped or errored is dropped with this reason. */
  readonly partReason: DropReason = 'event_chain_not_written';
  /** The note of an event inside chains. */
  readonly partNote: Code = 'event_log_rebuilt';

  /** The run's log line once the plan is made. */
  describe(): string {
    return `agent CLI event log: ${this.events.length} events joined by parentUuid (${this.summaries.length} summary lines)`;
  }

  /**
   * Keeps row `index` (its position in the file's rows, 1-based `line`) when it is an event or a summary line.
   * @returns whether the row was kept (other rows are processed as usual by the caller)
   */
  add(index: number, value: unknown, line = index + 1): boolean {
    if (!isObject(value)) return false;
    if (isSummaryEvent(value)) {
      this.summaries.push({ index, leaf: typeof value.leafUuid === 'string' ? value.leafUuid : '' });
      return true;
    }
    if (!isEventLine(value)) {
      // In a file of events, a typed line outside the chains (the CLI's bookkeeping: file snapshots, queue notices) is not a turn.
      if (typeof value.type !== 'string' || 'uuid' in value || 'message' in value) return false;
      this.others.push({ index, type: value.type });
      return true;
    }
    const msg = isObject(value.message) ? value.message : undefined;
    this.events.push({
      index,
      line,
      uuid: value.uuid as string,
      parent: (value.parentUuid as string | null) ?? null,
      type: value.type as string,
      session: typeof value.sessionId === 'string' ? value.sessionId : '',
      ...(msg ? { message: { role: msg.role, content: msg.content, ...(msg.id === undefined ? {} : { id: msg.id }) } } : {}),
      unread: [
        ...unreadKeys(value, READ_FIELDS),
        ...(msg ? unreadKeys(msg, ['role', 'content', 'id', 'type', 'model', 'stop_reason', 'stop_sequence', 'usage']).map((k) => `message.${k}`) : []),
      ],
    });
    return true;
  }

  /** Lines kept so far (events and summaries). */
  get size(): number {
    return this.events.length + this.summaries.length + this.others.length;
  }

  /** The plan of every kept row, by row index. */
  plan(): Map<number, OasstPlan> {
    const out = new Map<number, OasstPlan>();
    this.planBookkeeping(out);
    const tree = eventTree(this.events, out);
    for (const root of tree.roots) planChains(root, tree.children, out);
    planOrphanEvents(this.events, tree.byId, out);
    return out;
  }

  /** Summary lines (`summary_event`: a title the CLI wrote) and typed lines outside the chains (`non_conversation_event`) dropped. */
  private planBookkeeping(out: Map<number, OasstPlan>): void {
    for (const s of this.summaries) {
      out.set(
        s.index,
        dropPlan(
          s.index,
          'summary_event',
          `a session summary line${s.leaf ? ` (of the conversation ending at event ${s.leaf})` : ''}: a title the CLI wrote, not a turn`,
        ),
      );
    }
    for (const o of this.others) {
      out.set(o.index, dropPlan(o.index, 'non_conversation_event', `a "${o.type}" line without uuid or message: the CLI's own bookkeeping, not a turn`));
    }
  }
}

/** The file's events joined by `parentUuid`: each uuid's first event, the children of each event in file order, the roots. */
interface EventTree {
  byId: Map<string, Ev>;
  children: Map<string, Ev[]>;
  roots: Ev[];
}

/** The events as trees; an event uuid seen again is dropped (`duplicate_event`, the first kept). */
function eventTree(events: readonly Ev[], out: Map<number, OasstPlan>): EventTree {
  const byId = new Map<string, Ev>();
  for (const e of events) {
    const first = byId.get(e.uuid);
    if (first) out.set(e.index, dropPlan(e.index, 'duplicate_event', `event ${e.uuid} appears again (first on line ${first.line}): this copy is not used`));
    else byId.set(e.uuid, e);
  }
  const children = new Map<string, Ev[]>();
  const roots: Ev[] = [];
  for (const e of events) {
    if (byId.get(e.uuid) !== e) continue;
    if (e.parent === null) roots.push(e);
    else if (byId.has(e.parent)) children.set(e.parent, [...(children.get(e.parent) ?? []), e]);
  }
  return { byId, children, roots };
}

/**
 * One root's chains, each a conversation (`$eventlog`) planned on its leaf event: an iterative depth-first walk,
 * children in file order, each leaf's chain one conversation (turns by {@link buildTurns}, a turn trained in an earlier
 * chain is context). Every other event of a chain is a `part` naming the leaves that carry it.
 */
function planChains(root: Ev, children: Map<string, Ev[]>, out: Map<number, OasstPlan>): void {
  const chains: Ev[][] = [];
  const stack: Ev[][] = [[root]];
  while (stack.length) {
    const p = stack.pop()!;
    const kids = children.get(p[p.length - 1].uuid) ?? [];
    if (!kids.length) chains.push(p);
    for (let i = kids.length - 1; i >= 0; i--) stack.push([...p, kids[i]]);
  }
  const trained = new Set<Ev>();
  const leavesOf = new Map<Ev, number[]>();
  for (const chain of chains) {
    const leaf = chain[chain.length - 1];
    const built = buildTurns(chain, trained);
    for (const e of chain.slice(0, -1)) leavesOf.set(e, [...(leavesOf.get(e) ?? []), leaf.index]);
    const unread = [...new Set(chain.flatMap((e) => e.unread))];
    out.set(leaf.index, {
      kind: 'path',
      root: root.index,
      value: {
        $eventlog: {
          session: leaf.session,
          chains: chains.length,
          events: chain.length,
          lines: [chain[0].line, leaf.line],
          context: built.context,
          ...(built.error ? { error: built.error } : {}),
        },
        id: leaf.uuid,
        messages: built.messages,
        ...(unread.length ? { $unread: unread } : {}),
      },
    });
  }
  for (const [e, leaves] of leavesOf) if (!out.has(e.index)) out.set(e.index, { kind: 'part', root: root.index, leaves: leaves.sort((a, b) => a - b) });
}

/** Events under no root of the file dropped (`orphan_event`), naming the ancestor whose parent is missing or the loop. */
function planOrphanEvents(events: readonly Ev[], byId: Map<string, Ev>, out: Map<number, OasstPlan>): void {
  for (const e of events) {
    if (out.has(e.index)) continue;
    const { top, loops } = topAncestor(e, byId);
    const why =
      top === e
        ? `its parent ${e.parent ?? '(none)'} is not in the file`
        : top.parent === null || loops
          ? 'its parent chain loops'
          : `its ancestor ${top.uuid} (line ${top.line}) has a parent (${top.parent}) that is not in the file`;
    out.set(e.index, dropPlan(e.index, 'orphan_event', `event ${e.uuid}: ${why}, so its conversation cannot be rebuilt`));
  }
}

/** The turns of one chain (source-shaped messages the handler converts), the indexes of context turns, or the first block that cannot be read. */
function buildTurns(chain: Ev[], trained: Set<Ev>): { messages: Row[]; context: number[]; error?: { line: number; message: string } } {
  const messages: Row[] = [];
  const context: number[] = [];
  let i = 0;
  while (i < chain.length) {
    const e = chain[i];
    const m = e.message;
    if (!m || (e.type !== 'user' && e.type !== 'assistant')) {
      i++;
      continue;
    }
    if (e.type === 'assistant') {
      // The CLI writes one reply as several events (one block each) with the same message id: one turn.
      const group = [e];
      while (
        m.id !== undefined &&
        i + group.length < chain.length &&
        chain[i + group.length].type === 'assistant' &&
        chain[i + group.length].message?.id === m.id
      )
        group.push(chain[i + group.length]);
      i += group.length;
      const texts: string[] = [];
      const thinking: string[] = [];
      const calls: Row[] = [];
      for (const g of group) {
        for (const b of blocksOf(g.message!.content)) {
          if (b.type === 'text' && typeof b.text === 'string') texts.push(b.text);
          else if (b.type === 'thinking' && typeof b.thinking === 'string') thinking.push(b.thinking);
          else if (b.type === 'tool_use' && typeof b.name === 'string')
            calls.push({
              ...(typeof b.id === 'string' ? { id: b.id } : {}),
              type: 'function',
              function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
            });
          else
            return {
              messages,
              context,
              error: { line: g.line, message: `line ${g.line}: assistant event ${g.uuid} holds a ${blockName(b)} block that is not read` },
            };
        }
      }
      if (group.some((g) => trained.has(g))) context.push(messages.length);
      for (const g of group) trained.add(g);
      messages.push({
        role: 'assistant',
        content: texts.length ? texts.join('\n\n') : calls.length ? null : '',
        ...(thinking.length ? { reasoning_content: thinking.join('\n\n') } : {}),
        ...(calls.length ? { tool_calls: calls } : {}),
      });
      continue;
    }
    i++;
    const texts: string[] = [];
    for (const b of blocksOf(m.content)) {
      if (b.type === 'text' && typeof b.text === 'string') texts.push(b.text);
      else if (b.type === 'tool_result') {
        const r = toolResultText(b.content);
        if (r === undefined)
          return { messages, context, error: { line: e.line, message: `line ${e.line}: a tool_result of event ${e.uuid} holds content that is not text` } };
        messages.push({ role: 'tool', ...(typeof b.tool_use_id === 'string' ? { tool_call_id: b.tool_use_id } : {}), content: r });
      } else
        return { messages, context, error: { line: e.line, message: `line ${e.line}: user event ${e.uuid} holds a ${blockName(b)} block that is not read` } };
    }
    if (texts.length || typeof m.content === 'string') messages.push({ role: 'user', content: texts.join('\n\n') });
  }
  return { messages, context };
}

function blocksOf(content: unknown): Row[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.map((b) => (isObject(b) ? b : { type: typeof b === 'string' ? 'text' : '?', text: b })) : [];
}

function blockName(b: Row): string {
  return typeof b.type === 'string' ? `"${b.type}"` : 'untyped';
}

/** A tool_result's content as text: a string, or a list of text blocks joined with a blank line; undefined when it holds something else. */
function toolResultText(c: unknown): string | undefined {
  if (c === undefined || c === null) return '';
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return undefined;
  const parts: string[] = [];
  for (const b of c) {
    if (isObject(b) && b.type === 'text' && typeof b.text === 'string') parts.push(b.text);
    else return undefined;
  }
  return parts.join('\n\n');
}

function dropPlan(root: number, reason: DropReason, message: string): OasstPlan {
  return { kind: 'dropped', root, value: { $eventlogDrop: { reason, message } } };
}

const DESCRIPTION = 'one agent CLI event per line {type, uuid, parentUuid, message} (event log), joined into conversations by parent chain';

/**
 * The rows the event-log pass writes ({@link EventLogFilePass.plan}): a chain's conversation (`$eventlog`), or a line
 * dropped with its reason (`$eventlogDrop`). Never met in a dataset.
 */
export const eventLogHandler: ShapeHandler = {
  name: 'event-log',
  matches: (row) => isObject(row.$eventlog) || isObject(row.$eventlogDrop),
  describe: () => DESCRIPTION,
  roles: (row) => (Array.isArray(row.messages) ? (row.messages as Row[]).map((m) => String(m.role)) : []),
  normalize(row, ctx) {
    ctx.fields.useAll(row);
    if (isObject(row.$eventlogDrop)) return drop(ctx.source, row.$eventlogDrop.reason as DropReason, String(row.$eventlogDrop.message));
    const info = row.$eventlog as Row;
    if (Array.isArray(row.$unread)) ctx.fields.report(row.$unread.filter((x): x is string => typeof x === 'string'));
    const lines = Array.isArray(info.lines) ? info.lines : [];
    ctx.note(
      'event_log_rebuilt',
      `agent CLI event log: the ${String(info.events)} events of lines ${String(lines[0])}–${String(lines[1])} joined by parentUuid into one conversation (the leaf line carries it, the other lines are part of it)`,
    );
    if (isObject(info.error)) return errored(ctx, 'bad_turn', String(info.error.message));
    const messages = convertTurns(row.messages as unknown[], ctx, { label: 'event.' });
    if (isTurnError(messages)) return errored(ctx, messages.code, messages.message);
    const context = Array.isArray(info.context) ? info.context.filter((i): i is number => typeof i === 'number') : [];
    for (const i of context) if (messages[i]) messages[i].trainable = false;
    if (context.length) {
      ctx.note(
        'event_log_shared_turns_trained_once',
        'assistant turns shared with an earlier branch of the same log are context here (each reply is trained once)',
      );
    }
    if (messages[messages.length - 1]?.role === 'assistant') return finish(row, messages, ctx);
    // The chain ends without an answer (the session stopped after a prompt or a tool result): a prompt to generate,
    // and the chain up to its last answer when that answer is trained nowhere else (as OpenAssistant paths, oasst.ts).
    const lastAnswer = messages.map((m) => m.role === 'assistant').lastIndexOf(true);
    const prompt = finish(
      row,
      messages.map((m) => ({ ...m })),
      ctx,
    );
    const asPrompt: RowOutcome = prompt.kind === 'conversation' ? { kind: 'prompt', conversation: prompt.conversation } : prompt;
    if (lastAnswer < 0 || !messages.slice(0, lastAnswer + 1).some((m) => m.role === 'assistant' && m.trainable !== false)) return asPrompt;
    return splitOutcome([finish(row, messages.slice(0, lastAnswer + 1), ctx), asPrompt], ctx);
  },
};

/**
 * One event or summary line read on its own (the hover, the mask view, a row of a file whose first lines are not an
 * event log): dropped `message_fragment`, explained; a file of such lines is read by {@link EventLogFilePass}.
 */
export const eventLineHandler: ShapeHandler = {
  name: 'event-log',
  matches: (row) => isEventLine(row) || isSummaryEvent(row),
  describe: () => DESCRIPTION,
  roles: (row) => (isObject(row.message) && typeof row.message.role === 'string' ? [row.message.role] : []),
  normalize(row, ctx) {
    ctx.fields.useAll(row);
    const what = isSummaryEvent(row) ? 'a summary line' : `one ${String(row.type)} event (uuid ${String(row.uuid)}, parent ${String(row.parentUuid)})`;
    return drop(
      ctx.source,
      'message_fragment',
      `the line is ${what} of an agent CLI event log; its conversation is rebuilt from the parent chain when the file is read as a whole and its lines are events (format "event-log"); this line was read on its own`,
    );
  },
};
