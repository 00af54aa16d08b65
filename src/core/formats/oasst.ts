/**
 * OpenAssistant flat exports (`2023-04-12_oasst_ready.messages.jsonl` and the
 * Hugging Face `OpenAssistant/oasst1` / `oasst2` splits: one message per row
 * with `message_id`, `parent_id` (null for a tree's root prompt),
 * `message_tree_id`, `role` (`prompter` | `assistant`), `text`, `rank` (0 =
 * best among siblings, null for prompts), `deleted`, `review_result`, …;
 * github.com/LAION-AI/Open-Assistant, oasst-data) rebuilt into conversations by
 * a file-level pass: the rows are grouped by tree across the whole file, then
 * each root-to-leaf path becomes one conversation (default, `"oasstPaths":
 * "all"`), or only the best-ranked path of each tree (`"best-ranked"`: at every
 * node the reply with the lowest `rank`).
 *
 * Accounting stays per input row: the conversation of a path is carried by its
 * leaf's row (a synthetic row `{"$oasst", "messages", "id"}` the
 * {@link oasstPathHandler} reads); every other message row of the path is
 * `part` of the leaves' conversations and takes their fate when the file ends
 * (written when one of them was written, else set aside, else dropped
 * `oasst_path_not_written`); rows that cannot be in a conversation are dropped
 * with a reason (`oasst_excluded`: deleted or failing review, and what is
 * below; `oasst_orphan`: the parent is not in the file; `oasst_not_best_path`).
 *
 * Paths that share earlier replies train a shared assistant turn once: in the
 * first path that holds it (children are visited best rank first, so that is
 * the best-ranked context); in later paths it is context (noted
 * `oasst_shared_turns_trained_once`). A path that ends with an unanswered
 * prompt becomes a prompt to generate (and, when it has assistant turns not
 * trained elsewhere, also a conversation up to its last answer).
 *
 * Memory: the pass keeps every message of the file until the file ends — its
 * text, ids, role and rank (the rest of each row is dropped once its unread
 * field names are noted) — about the size of the texts plus ~0.3 KB per
 * message; 135,000 messages with 95 MB of text: 132 MB of heap, 190 MB with
 * the paths built (docs/formats.md "Input shapes", OpenAssistant flat exports).
 */
import type { Code } from '../codes';
import type { DropReason, Message, RowOutcome } from '../types';
import { convertTurns } from './common';
import { drop, errored, isObject, isTurnError, type Row, type ShapeHandler } from './base';
import { finish, splitOutcome } from './rowEnd';
import { unreadKeys } from './fields';
import { isOasstMessage } from './shapes-chat';

/** Which paths of a tree become conversations (`eagle3prep.jsonc` "oasstPaths"). */
export type OasstPaths = 'all' | 'best-ranked';

/** The fields of an OpenAssistant message row the pass reads. */
const READ_FIELDS = ['message_id', 'parent_id', 'message_tree_id', 'text', 'role', 'rank', 'deleted', 'review_result'];

interface Msg {
  index: number;
  id: string;
  parent: string | null;
  tree: string;
  role: string;
  text: string;
  rank: number | null;
  excluded: boolean;
  unread: string[];
}

/** What one message row becomes. `root`: the index of its tree's root row (the whole tree goes to one shard). */
export type OasstPlan =
  { kind: 'path'; root: number; value: Row } | { kind: 'part'; root: number; leaves: number[] } | { kind: 'dropped'; root: number; value: Row };

/** Collects the message rows of one file, then plans what each becomes. */
export class OasstFilePass {
  private readonly msgs: Msg[] = [];
  private readonly byIndex = new Map<number, Msg>();
  /** A message inside paths whose every path was dropped or errored is dropped with this reason. */
  readonly partReason: DropReason = 'oasst_path_not_written';
  /** The note of a message inside paths. */
  readonly partNote: Code = 'oasst_tree_rebuilt';

  /**
   * @param paths which paths of a tree become conversations (`eagle3prep.jsonc` "oasstPaths").
   * @param roleAliases `eagle3prep.jsonc` "roleAliases" (lower-case, trimmed spelling → role): a message row's `role`
   *   is one turn's role, outside any turn list, so the pass applies them (read/projectConfig.ts reads them for turn lists).
   */
  constructor(
    private readonly paths: OasstPaths = 'all',
    private readonly roleAliases: Readonly<Record<string, string>> = {},
  ) {}

  /** The run's log line once the plan is made. */
  describe(): string {
    return `OpenAssistant trees rebuilt over ${this.msgs.length} message rows ("oasstPaths": "${this.paths}")`;
  }

  /**
   * Keeps row `index` (its position in the file's rows) when it is an
   * OpenAssistant message row; only its text, ids, role and rank are kept.
   * @returns whether the row was kept (other rows are processed as usual by the caller)
   */
  add(index: number, value: unknown): boolean {
    if (!isObject(value) || !isOasstMessage(value)) return false;
    const v = value;
    const m: Msg = {
      index,
      id: String(v.message_id),
      parent: v.parent_id === null || v.parent_id === undefined ? null : String(v.parent_id),
      tree: v.message_tree_id === undefined || v.message_tree_id === null ? '' : String(v.message_tree_id),
      role: this.aliased(v.role),
      text: v.text as string,
      rank: typeof v.rank === 'number' ? v.rank : null,
      excluded: v.deleted === true || v.review_result === false,
      unread: unreadKeys(v, READ_FIELDS),
    };
    this.msgs.push(m);
    this.byIndex.set(index, m);
    return true;
  }

  /** A message row's role, through "roleAliases" (spelling matched lower-case and trimmed, as for turn lists). */
  private aliased(role: unknown): string {
    const key = typeof role === 'string' ? role.trim().toLowerCase() : undefined;
    return key !== undefined && Object.hasOwn(this.roleAliases, key) ? this.roleAliases[key] : (role as string);
  }

  /** Messages kept so far. */
  get size(): number {
    return this.msgs.length;
  }

  /** The plan of every kept row, by row index. */
  plan(paths: OasstPaths = this.paths): Map<number, OasstPlan> {
    const out = new Map<number, OasstPlan>();
    const tree = messageTree(this.msgs, out);
    const reached = new Set<Msg>();
    for (const root of tree.roots) planTree(root, tree, paths, out, reached);
    planOrphans(this.msgs, tree.byId, out);
    return out;
  }
}

/** The file's messages linked into trees: each id's first row, the replies of each message (best rank first, then file order), the roots. */
interface MessageTree {
  byId: Map<string, Msg>;
  children: Map<string, Msg[]>;
  roots: Msg[];
}

/** The messages as trees; a message id seen again is dropped (`oasst_duplicate`, the first row kept). */
function messageTree(msgs: readonly Msg[], out: Map<number, OasstPlan>): MessageTree {
  const byId = new Map<string, Msg>();
  for (const m of msgs) if (!byId.has(m.id)) byId.set(m.id, m);
  const children = new Map<string, Msg[]>();
  const roots: Msg[] = [];
  for (const m of msgs) {
    if (byId.get(m.id) !== m) {
      out.set(m.index, dropPlan(m.index, 'oasst_duplicate', `message ${m.id} appears again (line of its first row kept): this copy is not used`));
      continue;
    }
    if (m.parent === null) roots.push(m);
    else if (byId.has(m.parent)) children.set(m.parent, [...(children.get(m.parent) ?? []), m]);
  }
  const rankOf = (m: Msg) => (m.rank === null ? Infinity : m.rank);
  for (const list of children.values()) list.sort((a, b) => rankOf(a) - rankOf(b) || a.index - b.index);
  return { byId, children, roots };
}

/**
 * One tree's plan: its excluded subtrees dropped (`oasst_excluded`), then each path (every root-to-leaf path, or with
 * `best-ranked` the path through each message's best-ranked reply) a conversation carried by its leaf row, and with
 * `best-ranked` the messages off that path dropped (`oasst_not_best_path`).
 */
function planTree(root: Msg, tree: MessageTree, paths: OasstPaths, out: Map<number, OasstPlan>, reached: Set<Msg>): void {
  dropExcluded(root, tree.children, out, reached);
  if (root.excluded) return;
  planPaths(root, treePaths(root, tree.children, paths), paths === 'best-ranked', out, reached);
  if (paths !== 'best-ranked') return;
  for (const m of walk(root, tree.children)) {
    if (!reached.has(m)) {
      reached.add(m);
      out.set(m.index, dropPlan(root.index, 'oasst_not_best_path', `message ${m.id} is off the best-ranked path of its tree ("oasstPaths": "best-ranked")`));
    }
  }
}

/** Excluded subtrees (a message deleted or failing review) dropped with everything below them (`oasst_excluded`). */
function dropExcluded(root: Msg, children: Map<string, Msg[]>, out: Map<number, OasstPlan>, reached: Set<Msg>): void {
  const dropBelow = (m: Msg, why: string) => {
    reached.add(m);
    out.set(m.index, dropPlan(root.index, 'oasst_excluded', why));
    for (const c of children.get(m.id) ?? []) dropBelow(c, `message ${m.id} above it is ${m.excluded ? 'deleted or failed review' : 'excluded'}`);
  };
  for (const m of walk(root, children)) if (m.excluded && !reached.has(m)) dropBelow(m, `message ${m.id} is marked deleted or failed review`);
}

/** The tree's paths over messages that are not excluded: every root-to-leaf path in depth-first order, or the best-ranked one. */
function treePaths(root: Msg, children: Map<string, Msg[]>, paths: OasstPaths): Msg[][] {
  const kids = (m: Msg) => (children.get(m.id) ?? []).filter((c) => !c.excluded);
  const pathsOf: Msg[][] = [];
  if (paths === 'best-ranked') {
    const p = [root];
    for (let k = kids(root); k.length; k = kids(p[p.length - 1])) p.push(k[0]);
    pathsOf.push(p);
  } else {
    const dfs = (m: Msg, prefix: Msg[]) => {
      const p = [...prefix, m];
      const k = kids(m);
      if (!k.length) pathsOf.push(p);
      for (const c of k) dfs(c, p);
    };
    dfs(root, []);
  }
  return pathsOf;
}

/**
 * Each path a conversation row (`$oasst`) planned on its leaf: an assistant reply already trained in an earlier path
 * of the tree is context there (trained once). Every other message of a path is a `part` naming the leaves that carry it.
 */
function planPaths(root: Msg, pathsOf: readonly Msg[][], best: boolean, out: Map<number, OasstPlan>, reached: Set<Msg>): void {
  const trained = new Set<Msg>();
  const leavesOf = new Map<Msg, number[]>();
  for (const p of pathsOf) {
    const leaf = p[p.length - 1];
    const messages = p.map((m) => {
      reached.add(m);
      return { role: m.role, content: m.text };
    });
    const context = p.flatMap((m, i) => (m.role === 'assistant' && trained.has(m) ? [i] : []));
    for (const m of p) if (m.role === 'assistant') trained.add(m);
    for (const m of p.slice(0, -1)) leavesOf.set(m, [...(leavesOf.get(m) ?? []), leaf.index]);
    const unread = [...new Set(p.flatMap((m) => m.unread))];
    out.set(leaf.index, {
      kind: 'path',
      root: root.index,
      value: {
        $oasst: { tree: root.tree || root.id, paths: pathsOf.length, context, best },
        id: leaf.id,
        messages,
        ...(unread.length ? { $unread: unread } : {}),
      },
    });
  }
  for (const [m, leaves] of leavesOf) if (!out.has(m.index)) out.set(m.index, { kind: 'part', root: root.index, leaves: leaves.sort((a, b) => a - b) });
}

/** Messages under no root of the file dropped (`oasst_orphan`), naming the ancestor whose parent is missing. */
function planOrphans(msgs: readonly Msg[], byId: Map<string, Msg>, out: Map<number, OasstPlan>): void {
  for (const m of msgs) {
    if (out.has(m.index)) continue;
    const { top } = topAncestor(m, byId);
    const why =
      top === m
        ? `its parent ${m.parent ?? '(none)'} is not in the file`
        : `its ancestor ${top.id} has a parent (${top.parent ?? 'none'}) that is not in the file`;
    out.set(m.index, dropPlan(m.index, 'oasst_orphan', `message ${m.id}: ${why}, so its conversation cannot be rebuilt`));
  }
}

function* walk(root: Msg, children: Map<string, Msg[]>): Generator<Msg> {
  const stack = [root];
  while (stack.length) {
    const m = stack.pop()!;
    yield m;
    stack.push(...(children.get(m.id) ?? []));
  }
}

function dropPlan(root: number, reason: DropReason, message: string): OasstPlan {
  return { kind: 'dropped', root, value: { $oasstDrop: { reason, message } } };
}

/**
 * The topmost ancestor of `node` reachable through `byId` (parent id → node): the walk stops at a node without a
 * parent, one whose parent is not in `byId`, or where the chain comes back on itself (`loops`: true). Shared by the
 * OpenAssistant and event-log passes, whose orphans are named by it.
 */
export function topAncestor<T extends { parent: string | null }>(node: T, byId: ReadonlyMap<string, T>): { top: T; loops: boolean } {
  let top = node;
  const seen = new Set<T>();
  while (top.parent !== null && byId.has(top.parent) && !seen.has(top)) {
    seen.add(top);
    top = byId.get(top.parent)!;
  }
  return { top, loops: top.parent !== null && seen.has(top) };
}

/**
 * The rows an OpenAssistant file pass writes (`OasstFilePass.plan`): a path's
 * conversation (`$oasst`), or a message row dropped with its reason
 * (`$oasstDrop`). Never met in a dataset.
 */
export const oasstPathHandler: ShapeHandler = {
  name: 'oasst-messages',
  matches: (row) => isObject(row.$oasst) || isObject(row.$oasstDrop),
  describe: () => 'one message per row {message_id, parent_id, role, text} (OpenAssistant flat export), rebuilt into trees',
  roles: (row) => (Array.isArray(row.messages) ? (row.messages as Row[]).map((m) => String(m.role)) : []),
  normalize(row, ctx) {
    ctx.fields.useAll(row);
    if (isObject(row.$oasstDrop)) return drop(ctx.source, row.$oasstDrop.reason as DropReason, String(row.$oasstDrop.message));
    const info = row.$oasst as Row;
    if (Array.isArray(row.$unread)) ctx.fields.report(row.$unread.filter((x): x is string => typeof x === 'string'));
    ctx.note(
      'oasst_tree_rebuilt',
      info.best
        ? 'OpenAssistant message rows grouped by message_tree_id: the best-ranked path of each tree is one conversation ("oasstPaths": "best-ranked")'
        : 'OpenAssistant message rows grouped by message_tree_id: one conversation per root-to-leaf path (the leaf row carries it, the other rows are part of it)',
    );
    const messages = convertTurns(row.messages as unknown[], ctx, { label: 'message.' });
    if (isTurnError(messages)) return errored(ctx, messages.code, messages.message);
    // Replies trained in an earlier path of the tree are context here (one source turn → one message in these rows).
    const context = Array.isArray(info.context) ? info.context.filter((i): i is number => typeof i === 'number') : [];
    for (const i of context) if (messages[i]) messages[i].trainable = false;
    if (context.length) {
      ctx.note(
        'oasst_shared_turns_trained_once',
        'assistant turns shared with an earlier path of the same tree are context there (each reply is trained once)',
      );
    }
    if (messages[messages.length - 1]?.role !== 'user') return finish(row, messages, ctx);
    // The path ends with a prompt nobody answered: a prompt to generate, and the answers before it when they are trained nowhere else.
    const lastAnswer = messages.map((m) => m.role === 'assistant').lastIndexOf(true);
    const prompt = finishPrompt(row, messages, ctx);
    if (lastAnswer < 0 || !messages.slice(0, lastAnswer + 1).some((m) => m.role === 'assistant' && m.trainable !== false)) return prompt;
    const trainedPart = finish(row, messages.slice(0, lastAnswer + 1), ctx);
    return splitOutcome([trainedPart, prompt], ctx);
  },
};

/** A path ending with an unanswered prompt as a `prompt` outcome (its assistant turns are history; generate answers the last prompt). */
function finishPrompt(row: Row, messages: Message[], ctx: Parameters<ShapeHandler['normalize']>[1]): RowOutcome {
  const o = finish(
    row,
    messages.map((m) => ({ ...m })),
    ctx,
  );
  return o.kind === 'conversation' ? { kind: 'prompt', conversation: o.conversation } : o;
}
