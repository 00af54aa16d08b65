/**
 * The last shape of the table: a row no known shape matches, whose
 * conversation was found by searching its structure (`discovery.ts`). The
 * evidence names the path and keys read (`"traj[].speaker/utterance"`), the row
 * gets the note `conversation_found`, and when several places look like a
 * conversation the most complete one is read with the warning
 * `several_conversations_found` (a field mapping in `eagle3prep.jsonc` that
 * names the right one wins: mapped rows never reach this handler).
 */
import type { Message, RowOutcome } from '../types';
import { convertTurns, errored, finish, isTurnError, splitOutcome, type NormalizeContext, type Row, type ShapeHandler } from './common';
import { describeCandidate, findConversations, SPEAKER_PREFIX_RE, topKey, type ConversationCandidate } from './discovery';
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
    if (all.length > 1) {
      ctx.note(
        'several_conversations_found',
        `several places look like a conversation (${all.map(describeCandidate).join(', ')}): the most complete one was read; a field mapping in eagle3prep.jsonc ("turns": "<path>") names another`,
      );
      for (const o of all.slice(1)) ctx.fields.report([o.path]);
    }
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
  },
};

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
