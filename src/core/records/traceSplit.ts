/** `--long split` on the one row path (records/rowTrace.ts): the pieces of a conversation whose records are longer than the max length (records/split.ts). */
import type { ChatTemplate } from '../templates/template';
import type { Conversation } from '../types';
import type { RecordDrop } from './fate';
import type { GeneratedTurnIds } from './generatedIds';
import { buildRecords } from './mask';
import type { TextRecord } from './maskTypes';
import { longPolicyOf, NOT_DECIDED, type ConversationTrace, type TraceContext, type TracedRecord, type TraceSettings } from './rowTraceTypes';
import { splitConversation } from './split';
import { sum, type Counter } from './traceCounter';

/**
 * `--long split` (records/split.ts) when a record is over `maxLength` (not with mask `non-system`, nor `--format
 * messages`): records that fit stay; the targets of the others are placed in pieces of at most `maxLength` tokens,
 * each noted `context_window_cut` when messages were left out; targets that fit nowhere are noted `target_too_long`
 * (and the row is `too_long` when nothing fits). Past the work cap the records over the length are marked `splitUp`.
 * @returns every record, ordered by its first target
 */
export function splitIfLong(
  t: ConversationTrace,
  template: ChatTemplate,
  records: TracedRecord[],
  generated: GeneratedTurnIds[] | undefined,
  settings: TraceSettings,
  ctx: TraceContext,
  counter: Counter,
  drops: RecordDrop[],
  tooLong: (why: string) => void,
): TracedRecord[] {
  const max = splitLength(settings, records);
  if (max === undefined) return records;
  const mask = settings.mask ?? 'assistant';
  const conv = t.conversation;
  const pieceCounter = counter.forPieces();
  // Each built piece record by its loss mask (an array made for it alone; its ids may be a cached encoding's, shared by equal texts).
  const pieceOf = new Map<number[], { text: TextRecord; starts: number[]; piece: NonNullable<TracedRecord['piece']> }>();
  const build = (piece: Conversation) => {
    if (pieceCounter.overCap) return [];
    const b = buildRecords(piece, template, ctx.builder.specials, mask, {
      grouping: settings.grouping ?? 'exact',
      reasoning: settings.reasoning,
      stopTokens: ctx.tok.stopTokens,
    });
    const indices = pieceIndices(conv, piece);
    return b.records.map((rec) => {
      const r = pieceCounter.record(rec, generated && remapGenerated(generated, conv, piece), []);
      pieceOf.set(r.mask, { text: rec, starts: r.starts, piece: { conversation: piece, messages: b.messages, indices } });
      return { ids: r.ids, mask: r.mask, targets: r.targets };
    });
  };
  const over = records.filter((r) => r.tokens > max);
  const cut = splitConversation(
    conv,
    over.flatMap((r) => r.targets),
    max,
    build,
    (t.build as { built: { rendered: string | null } }).built.rendered?.length ?? 0,
    t.renderedTokens,
  );
  if (pieceCounter.overCap) {
    for (const r of over) r.splitUp = true;
    return records;
  }
  for (let k = 0; k < cut.tooLong.length; k++) t.notes.push('target_too_long');
  for (const p of cut.records) if (p.cut) t.notes.push('context_window_cut');
  const placed = cut.records.map((p): TracedRecord => {
    const { text, starts, piece } = pieceOf.get(p.mask)!;
    return {
      text,
      piece,
      ids: p.ids,
      starts,
      mask: p.mask,
      tokens: p.ids.length,
      trainable: sum(p.mask),
      estimated: false,
      targets: p.targets,
      fate: NOT_DECIDED,
    };
  });
  if (placed.length === 0 && records.every((r) => r.tokens > max)) {
    drops.push('too_long');
    tooLong(splitTooLongMessage(cut.tooLong, cut.tooLongTokens, max));
  }
  return [...records.filter((r) => r.tokens <= max), ...placed].sort((a, b) => a.targets[0] - b.targets[0]);
}

/** The max length when `--long split` applies to a conversation's records (one is longer; not with mask `non-system` nor `--format messages`). */
export function splitLength(settings: TraceSettings, records: readonly TracedRecord[]): number | undefined {
  const max = settings.format === 'messages' ? undefined : settings.maxLength;
  if (max === undefined || longPolicyOf(settings) !== 'split' || (settings.mask ?? 'assistant') === 'non-system') return undefined;
  return records.some((p) => p.tokens > max) ? max : undefined;
}

/** The index in `conv` of each message of a piece of it: the head as it is, then a window ending at a target kept as it is. */
function pieceIndices(conv: Conversation, piece: Conversation): number[] {
  const n = piece.messages.length;
  const e = conv.messages.indexOf(piece.messages[n - 1]);
  let h = 0;
  while (h < n && piece.messages[h] === conv.messages[h] && h < e - (n - 1 - h)) h++;
  return piece.messages.map((_, k) => (k < h ? k : e - (n - 1 - k)));
}

/** A generated row's turn ids, renumbered for a piece whose messages are objects of the original conversation (the others are copies of them, flagged untrainable). */
function remapGenerated(generated: GeneratedTurnIds[], conv: Conversation, piece: Conversation): GeneratedTurnIds[] {
  const out: GeneratedTurnIds[] = [];
  for (const g of generated) {
    const k = piece.messages.indexOf(conv.messages[g.message_index]);
    if (k >= 0) out.push({ ...g, message_index: k });
  }
  return out;
}

/**
 * The problems.jsonl message of a row `--long split` could not place anywhere: the first assistant turn that does not
 * fit `max` even with no history before it (message index), its tokens so and how many over, and how many such turns.
 */
function splitTooLongMessage(turns: readonly number[], tokens: readonly (number | null)[], max: number): string {
  if (turns.length === 0) return `no record fits --max-length ${max}`;
  const n = tokens[0];
  const first = `assistant turn ${turns[0]} does not fit --max-length ${max} even with no history before it${n === null ? '' : ` (${n} tokens, ${n - max} over)`}`;
  return turns.length > 1 ? `${first}; nor do its ${turns.length - 1} other assistant turn(s)` : first;
}
