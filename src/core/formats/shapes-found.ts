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
import { describeCandidate, findConversations, topKey, type ConversationCandidate } from './discovery';
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
    ctx.fields.use(row, topKey(c.path));
    ctx.note('conversation_found', `no known shape: the conversation was read from ${describeCandidate(c)}`);
    if (all.length > 1) {
      ctx.note(
        'several_conversations_found',
        `several places look like a conversation (${all.map(describeCandidate).join(', ')}): the most complete one was read; a field mapping in eagle3prep.jsonc ("turns": "<path>") names another`,
      );
      for (const o of all.slice(1)) ctx.fields.report([o.path]);
    }
    if (c.kind === 'transcript') return transcriptOutcome(row, c, ctx);
    if (c.kind === 'strings') {
      ctx.note('alternating_strings', `"${c.path}" strings read as alternating user / assistant turns, user first`);
      const messages: Message[] = (c.lists[0] as unknown[]).map((t, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: String(t) }));
      return finish(row, messages, ctx);
    }
    const opts = { label: `${c.path.replace(/\[\d+\]/g, '[]')}${c.kind === 'turn-lists' ? '[]' : ''}[]`, roleKey: c.roleKey, textKey: c.textKey };
    if (c.kind === 'turns') {
      const messages = convertTurns(c.lists[0], ctx, opts);
      if (isTurnError(messages)) return errored(ctx, messages.code, `"${c.path}": ${messages.message}`);
      return finish(row, messages, ctx);
    }
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
