/**
 * The last shape of the table: a row no known shape matches, whose
 * conversation was found by searching its structure (`discovery.ts`). The
 * evidence names the path and keys read (`"traj[].speaker/utterance"`), the row
 * gets the note `conversation_found`. When several places hold a conversation,
 * each is read, one record each (`withOtherConversations`, noted
 * `several_conversations_found`; the same rule for rows of a known shape holding
 * other conversations beside the one the shape reads, `normalize.ts`); a field
 * mapping in `eagle3prep.jsonc` that names one place reads that one only
 * (mapped rows never reach this handler).
 */
import type { Conversation, Message, RowOutcome } from '../types';
import { convertTurns } from './common';
import { errored, isTurnError, type NormalizeContext, type Row, type ShapeHandler } from './base';
import { finish, splitOutcome } from './rowEnd';
import { describeCandidate, findConversations, SPEAKER_PREFIX_RE, topKey, type ConversationCandidate } from './discovery';
import { FieldTracker } from './fields';
import { mapRole } from './roles';
import { GUANACO_MARKERS, HH_MARKERS, splitByMarkers, splitChatMl } from './transcript';
import { parseJsonLimited } from '../jsonDepth';

function best(row: Row): ConversationCandidate | undefined {
  return findConversations(row).find((c) => c.usable);
}

export const foundConversationHandler: ShapeHandler = {
  name: 'found-conversation',
  matches: (row) => best(row) !== undefined,
  describe: (row) => `a conversation at ${describeCandidate(best(row)!)} (no known shape; found by searching the row)`,
  roles: (row) => best(row)!.roles,
  normalize(row, ctx) {
    const all = findConversations(row).filter((c) => c.usable);
    const c = all[0];
    for (const p of c.pairPaths ?? [c.path]) ctx.fields.use(row, topKey(p));
    ctx.note('conversation_found', `no known shape: the conversation was read from ${describeCandidate(c)}`);
    const first = candidateOutcome(row, c, ctx);
    return all.length > 1 ? withOtherConversations(row, first, all.slice(1), ctx) : first;
  },
};

/**
 * The outcome of one conversation candidate of a row (`discovery.ts`): a turn list, a list of turn lists (one
 * record each, or one multi-turn prompt when they hold user turns only), strings with evidence of who speaks,
 * or a transcript string. Does not mark the candidate's field read (the caller does).
 */
export function candidateOutcome(row: Row, c: ConversationCandidate, ctx: NormalizeContext): RowOutcome {
  if (c.kind === 'transcript') return transcriptOutcome(row, c, ctx);
  if (c.kind === 'strings') return stringsOutcome(row, c, ctx);
  const opts = { label: `${c.path.replace(/\[\d+\]/g, '[]')}${c.kind === 'turn-lists' ? '[]' : ''}[]`, roleKey: c.roleKey, textKey: c.textKey };
  if (c.kind === 'turns') {
    const messages = convertTurns(c.lists[0], ctx, opts);
    if (isTurnError(messages)) return errored(ctx, messages.code, `"${c.path}": ${messages.message}`);
    return finish(row, messages, ctx);
  }
  // Lists of user turns only: the successive turns of one multi-turn prompt (unless the reading asks for each list).
  if (ctx.options.conversationLists === undefined && userTurnsOnly(c)) return turnListsPrompt(row, c, ctx, opts);
  // A list of conversation lists: one record each, or the longest ("conversationLists": "longest").
  let lists = c.lists;
  if (ctx.options.conversationLists === 'longest') {
    lists = [lists.reduce((a, b) => (b.length > a.length ? b : a))];
    ctx.note('longest_conversation_kept', `"${c.path}" holds ${c.lists.length} conversations: the longest is read ("conversationLists": "longest")`);
  }
  const parts: RowOutcome[] = [];
  for (const [k, list] of lists.entries()) {
    const messages = convertTurns(list, ctx, opts);
    if (isTurnError(messages)) return errored(ctx, messages.code, `"${c.path}" conversation ${k + 1}: ${messages.message}`);
    parts.push(finish(row, messages, ctx));
  }
  return splitOutcome(parts, ctx);
}

/** A path that names the losing side of a comparison (`rejected`, `negative_messages`, `worse`): never read as a conversation to train. */
const LOSING_SIDE_RE = /(^|[^a-z])(rejected|reject|dispreferred|negative|worse|worst|loser|losing|bad)([^a-z]|$)/i;

/** Where a candidate is, without counts (row-independent, for the evidence and messages): `"conversations"`, `"questions" + "answers"`. */
export function placeOf(c: ConversationCandidate): string {
  return (c.pairPaths ?? [c.path]).map((p) => `"${p.replace(/\[\d+\]/g, '[]')}"`).join(' + ');
}

/**
 * The conversations of an outcome as lists of turn keys (role, text, reasoning, tool calls' names and arguments;
 * whitespace collapsed), for telling a copy from another conversation. Roles are the canonical ones
 * (`convertTurns` mapped every spelling: `gpt` and `assistant` are one).
 */
function outcomeTurns(o: RowOutcome): string[][] {
  const parts = o.kind === 'split' ? o.parts : o.kind === 'conversation' || o.kind === 'prompt' ? [o] : [];
  const n = (t: string | null | undefined) => (t ?? '').replace(/\s+/g, ' ').trim();
  return parts.map((p) =>
    p.conversation.messages.map((m) =>
      JSON.stringify([
        m.role,
        n(m.content),
        n(m.reasoning_content),
        (m.tool_calls ?? []).map((c) => [c.function?.name, typeof c.function?.arguments === 'string' ? n(c.function.arguments) : c.function?.arguments]),
      ]),
    ),
  );
}

/**
 * Whether conversation `c` is a copy of conversation `r` already read: its turns equal `r`'s first turns, one by
 * one (the same conversation in another spelling, or a prefix of it: the same turns, fewer of them). System turns
 * are compared only when `c` has one (a row's system field may be added to the conversation its shape read).
 * Texts that merely appear inside `r`'s (a shorter question, a shorter answer) are another conversation.
 */
function isTurnPrefix(c: string[], r: string[]): boolean {
  const sys = (k: string) => k.startsWith('["system"');
  const rr = c.some(sys) ? r : r.filter((k) => !sys(k));
  return c.length > 0 && c.length <= rr.length && c.every((k, i) => k === rr[i]);
}

/** A context whose notes, facts, read fields and non-text parts go nowhere: a dry run of a candidate. */
function scratch(ctx: NormalizeContext): NormalizeContext {
  return { ...ctx, fields: new FieldTracker(), nonText: [], partTools: undefined, note: () => undefined, fact: () => undefined };
}

/** Appended to the error of a row holding several conversations: the others (their places when known) are not written either. */
export function noneWritten(others?: string): string {
  return ` — the row's other conversations${others ? ` (${others})` : ''} are not written either: a row errors whole`;
}

/**
 * Several conversations in one row (issue 20): `first` is the outcome of the conversation the row's shape read;
 * `others` are the other places of the row that hold a conversation (`discovery.ts` candidates, usable ones:
 * known speakers, a user or assistant turn). Each other conversation becomes records of its own, in the row's
 * field order after the first, all with ids `<row id>/<k>` (k from 1, in that order) and the row's source; the
 * row is then one `split` outcome, accounted as one row (written when any of its records is). A candidate each of
 * whose conversations has the turns of one already read, turn by turn (the same conversation in another
 * spelling, or a prefix of it: the same turns, fewer of them; {@link isTurnPrefix}) is read as a copy, not a
 * second conversation (texts merely contained in ones read are not a copy); one on the losing side of a comparison (`rejected…`) is never
 * read here (it stays unread and reported). A candidate that errors makes the row errored (its message names the
 * candidate's place and says no conversation of the row is written: {@link noneWritten}); one left with no
 * user or assistant turn is left out (`split_part_dropped`). Noted `several_conversations_found` with the
 * places read. A `mappings` entry in eagle3prep.jsonc reads one place only (mapped rows never get here).
 */
export function withOtherConversations(row: Row, first: RowOutcome, others: ConversationCandidate[], ctx: NormalizeContext): RowOutcome {
  if (first.kind !== 'conversation' && first.kind !== 'prompt' && first.kind !== 'split') return first;
  const order = Object.keys(row);
  const sorted = others
    .filter((c) => !LOSING_SIDE_RE.test(c.path))
    .map((c, i) => ({ c, i }))
    .sort((a, b) => order.indexOf(topKey(a.c.path)) - order.indexOf(topKey(b.c.path)) || a.i - b.i)
    .map((x) => x.c);
  const read = outcomeTurns(first);
  const extra: { c: ConversationCandidate; o: RowOutcome }[] = [];
  for (const c of sorted) {
    const paths = c.pairPaths ?? [c.path];
    const dry = candidateOutcome(row, c, scratch(ctx));
    const convs = outcomeTurns(dry);
    if (dry.kind !== 'errored' && convs.length > 0 && convs.every((t) => read.some((r) => isTurnPrefix(t, r)))) {
      for (const p of paths) ctx.fields.use(row, topKey(p));
      ctx.fact(`${placeOf(c)} repeats turns already read: a copy, not another conversation`);
      continue;
    }
    for (const p of paths) ctx.fields.use(row, topKey(p));
    const o = candidateOutcome(row, c, ctx);
    // The row's conversations are written or errored together: the message says which one failed and that.
    if (o.kind === 'errored') return { ...o, message: `${o.message.startsWith('"') ? '' : `${placeOf(c)}: `}${o.message}${noneWritten()}` };
    extra.push({ c, o });
    read.push(...outcomeTurns(o));
  }
  if (extra.length === 0) return first;
  const leaves: { kind: 'conversation' | 'prompt'; conversation: Conversation }[] = [];
  const add = (o: RowOutcome) => {
    // Parts of a split carry `/<k>` already: renumbered below from the row's id.
    if (o.kind === 'split')
      for (const p of o.parts) leaves.push({ kind: p.kind, conversation: { ...p.conversation, id: p.conversation.id.replace(/\/\d+$/, '') } });
    else if (o.kind === 'conversation' || o.kind === 'prompt') leaves.push({ kind: o.kind, conversation: o.conversation });
  };
  add(first);
  for (const { o } of extra) add(o);
  if (extra.some(({ o }) => o.kind === 'dropped'))
    ctx.note('split_part_dropped', 'a row holding several conversations: some of them have no user or assistant turn and were left out');
  ctx.note(
    'several_conversations_found',
    `the row holds several conversations (${extra.map(({ c }) => placeOf(c)).join(', ')} besides the one read first): one record each`,
  );
  if (leaves.length === 1) return first;
  leaves.forEach((p, k) => (p.conversation.id = `${p.conversation.id}/${k + 1}`));
  return { kind: 'split', source: ctx.source, parts: leaves };
}

/**
 * A list of strings read with evidence of who speaks (`discovery.ts`): speaker markers opening every string
 * (removed from the text, noted `speaker_markers_split`), or a questions list beside an answers list (one user
 * turn then one assistant turn per position, noted `question_answer_lists`).
 */
function stringsOutcome(row: Row, c: ConversationCandidate, ctx: NormalizeContext): RowOutcome {
  const strings = c.lists[0] as string[];
  const roles = c.stringRoles ?? [];
  if (c.evidence === 'pairs') {
    ctx.note('question_answer_lists', `${describeCandidate(c)}: each question a user turn, the answer at the same position the assistant turn after it`);
  } else {
    ctx.note('speaker_markers_split', `"${c.path}" strings each open with a speaker marker: the marker gives the turn's role and is removed from its text`);
  }
  const messages: Message[] = strings.map((t, i) => ({
    role: roles[i],
    content: c.evidence === 'markers' ? t.replace(SPEAKER_PREFIX_RE, '') : t,
  }));
  return finish(row, messages, ctx);
}

/**
 * Whether a list of turn lists holds several lists whose turns are all user turns (a system turn allowed): no
 * answer anywhere, so the lists are the turns of one prompt asked in order (BFCL multi-turn `question[turn][msgs]`,
 * github.com/ShishirPatil/gorilla berkeley-function-call-leaderboard data), not separate conversations.
 */
function userTurnsOnly(c: ConversationCandidate): boolean {
  if (c.kind !== 'turn-lists' || c.lists.length < 2 || c.roleKey === undefined) return false;
  const roles = c.lists.flatMap((l) => (l as Row[]).map((t) => mapRole(t[c.roleKey!])));
  return roles.includes('user') && roles.every((r) => r === 'user' || r === 'system');
}

/**
 * One prompt of user-only turn lists: each list's turns in order, the target model answering after each list
 * (an empty assistant turn between lists, which `finish` keeps as `answerAfter`), noted `turn_lists_one_prompt`.
 */
function turnListsPrompt(row: Row, c: ConversationCandidate, ctx: NormalizeContext, opts: { label: string; roleKey?: string; textKey?: string }): RowOutcome {
  ctx.note(
    'turn_lists_one_prompt',
    `"${c.path}" holds ${c.lists.length} lists of user turns only: one multi-turn prompt whose turns the target model answers in order`,
  );
  const messages: Message[] = [];
  for (const [k, list] of c.lists.entries()) {
    const turns = convertTurns(list, ctx, opts);
    if (isTurnError(turns)) return errored(ctx, turns.code, `"${c.path}" turn ${k + 1}: ${turns.message}`);
    if (k > 0) messages.push({ role: 'assistant', content: '' });
    messages.push(...turns);
  }
  return finish(row, messages, ctx);
}

function transcriptOutcome(row: Row, c: ConversationCandidate, ctx: NormalizeContext): RowOutcome {
  const text = valueAt(row, c.path);
  if (typeof text !== 'string') return errored(ctx, 'internal_error', `"${c.path}" is no longer a string`);
  let turns: { role: string; content: string }[] = [];
  for (const set of [HH_MARKERS, GUANACO_MARKERS]) {
    if (set.name === c.markers) {
      const s = splitByMarkers(text, set)!;
      turns = [...(s.preamble ? [{ role: 'system', content: s.preamble }] : []), ...s.turns];
    }
  }
  if (c.markers === 'ChatML') turns = splitChatMl(text) ?? [];
  ctx.note('transcript_split', `"${c.path}" split into turns at ${c.markers} markers`);
  const messages = convertTurns(turns, ctx, { label: `${c.path}[]` });
  if (isTurnError(messages)) return errored(ctx, messages.code, `"${c.path}": ${messages.message}`);
  return finish(row, messages, ctx);
}

/** The value at a dotted path with `[i]` indexes (`data.log`, `runs[0].text`). */
function valueAt(row: Row, path: string): unknown {
  let v: unknown = row;
  for (const part of path.split('.')) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part)!;
    if (m[1] !== '') v = v !== null && typeof v === 'object' ? (v as Row)[m[1]] : undefined;
    for (const idx of m[2].match(/\d+/g) ?? []) v = Array.isArray(v) ? v[Number(idx)] : undefined;
    if (typeof v === 'string' && /^\s*[[{]/.test(v)) {
      try {
        v = parseJsonLimited(v);
      } catch {
        /* the string itself */
      }
    }
  }
  return v;
}
