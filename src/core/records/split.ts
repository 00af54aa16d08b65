/**
 * `--long split`: a conversation whose records are longer than `--max-length` is cut into
 * pieces, each a real render of a reduced message list — the leading system turns and the first
 * user turn (the head), then as much recent history as fits, ending with a target turn — so that
 * every target of the over-long records is trained exactly once across the pieces.
 *
 * What "the history as the server would send it" means here: a client that trims a long
 * conversation keeps the head and the most recent turns and sends that list to the server, which
 * renders it with the chat template. A piece is exactly that render (never a splice of rendered
 * text); a window never starts at a tool result (its call would be missing), so tool calls and
 * their results stay together. Targets inside a piece that another record trains are context
 * there (flagged not trainable), as in the exact rules' context turns.
 *
 * A target that does not fit even with no history (head + the turn itself longer than the limit)
 * is not written: it is reported with the note `target_too_long` (use a larger `--max-length`, or
 * `--long truncate`, which keeps the first tokens of a record).
 */
import type { Conversation, Message } from '../types';

/** One tokenized record of a piece, as the caller built it. */
export interface PieceRecord {
  ids: number[];
  mask: number[];
  /** Indices (into the original conversation's messages) of the targets trained in this record. */
  targets: number[];
  /** Whether messages of the conversation were left out of this record's history (`context_window_cut`). */
  cut: boolean;
}

/**
 * Builds and tokenizes one reduced conversation: `conv.messages` is the piece's message list
 * (targets to leave untrained flagged `trainable: false`); returns its records with `targets` as
 * indices into that list. Throws when the template raises on the list.
 */
export type BuildPiece = (conv: Conversation) => { ids: number[]; mask: number[]; targets: number[] }[];

/** What {@link splitConversation} produced. */
export interface SplitResult {
  records: PieceRecord[];
  /** Targets that could not be placed in any piece of at most `maxLength` tokens. */
  tooLong: number[];
  /**
   * For each of `tooLong`, in order: the tokens of the shortest piece measured for it (its head and the target with the
   * least history tried), or null when none was measured (the template raised on every piece).
   */
  tooLongTokens: (number | null)[];
}

/** Index just past the head: the leading system turns and the first user turn right after them. */
export function headEnd(messages: readonly Message[]): number {
  let h = 0;
  while (h < messages.length && messages[h].role === 'system') h++;
  if (h < messages.length && messages[h].role === 'user') h++;
  return h;
}

/** Characters of a message's own fields (content, reasoning, tool calls), for the length estimate. */
function fieldChars(m: Message): number {
  let n = (m.content ?? '').length + (m.reasoning_content ?? '').length;
  for (const tc of m.tool_calls ?? [])
    n += tc.function.name.length + (typeof tc.function.arguments === 'string' ? tc.function.arguments : JSON.stringify(tc.function.arguments)).length;
  return n;
}

/**
 * Places `targets` (ascending message indices of assistant turns of `conv`) into pieces of at most
 * `maxLength` tokens, greedily from the first: a piece trains the untrained targets `t…e` and
 * holds the head plus the messages `a…e`; it takes as many targets as fit (largest `e`) and then as
 * much history as fits (smallest `a`). Lengths are estimated from characters, scaled by the
 * conversation's own characters per token (`renderedChars / renderedTokens`), and every piece is
 * built and measured before it is taken.
 *
 * @param renderedChars characters of the conversation rendered once, `T`
 * @param renderedTokens tokens of `T`
 * @returns the pieces' records (targets as indices of `conv.messages`), and the targets left out
 */
export function splitConversation(
  conv: Conversation,
  targets: readonly number[],
  maxLength: number,
  build: BuildPiece,
  renderedChars: number,
  renderedTokens: number,
): SplitResult {
  const msgs = conv.messages;
  const h = headEnd(msgs);
  const charsPerToken = renderedTokens > 0 ? Math.max(1, renderedChars / renderedTokens) : 4;
  // Template text per message (headers, end tokens): what T holds beyond the fields, spread evenly.
  const fields = msgs.map(fieldChars);
  const markup = Math.max(0, (renderedChars - fields.reduce((a, b) => a + b, 0)) / Math.max(1, msgs.length));
  const est = msgs.map((_, i) => (fields[i] + markup) / charsPerToken);
  const headEst = est.slice(0, h).reduce((a, b) => a + b, 0);
  const windowEst = (a: number, e: number) => {
    let s = headEst;
    for (let i = a; i <= e; i++) s += est[i];
    return s;
  };
  const validStart = (a: number) => a >= h && msgs[a].role !== 'tool';

  const out: SplitResult = { records: [], tooLong: [], tooLongTokens: [] };
  const todo = [...targets].filter((t) => t >= h).sort((x, y) => x - y);
  for (const t of targets)
    if (t < h) {
      out.tooLong.push(t); // cannot happen for assistant turns after the head; kept honest
      out.tooLongTokens.push(null);
    }
  /** Tokens of the longest record of the last piece measured too long. */
  const measured: { tooLong: number | null } = { tooLong: null };
  const attempt = (a: number, want: number[]): PieceRecord[] | null => {
    const e = want[want.length - 1];
    const keep = new Set(want);
    const indices = [...Array(h).keys(), ...Array.from({ length: e - a + 1 }, (_, k) => a + k)];
    const messages = indices.map((i) => (msgs[i].role === 'assistant' && !keep.has(i) ? { ...msgs[i], trainable: false } : msgs[i]));
    let built;
    try {
      built = build({ ...conv, messages });
    } catch {
      return null;
    }
    if (built.some((r) => r.ids.length > maxLength)) {
      measured.tooLong = Math.max(...built.map((r) => r.ids.length));
      return null;
    }
    const trained = new Set(built.flatMap((r) => r.targets.map((k) => indices[k])));
    if (!want.every((w) => trained.has(w))) return null;
    return built.map((r) => ({ ids: r.ids, mask: r.mask, targets: r.targets.map((k) => indices[k]), cut: a > h }));
  };

  while (todo.length) {
    const t = todo[0];
    measured.tooLong = null;
    // Most targets first (the estimate with no history before t), then the most history.
    let n = 1;
    while (n < todo.length && windowEst(t, todo[n]) <= maxLength) n++;
    let placed: PieceRecord[] | null = null;
    let used = 0;
    for (; n >= 1 && !placed; n--) {
      const want = todo.slice(0, n);
      const e = want[n - 1];
      let a = t;
      while (a > h && windowEst(a - 1, e) <= maxLength) a--;
      while (a < t && !validStart(a)) a++;
      // Measure; step towards less history while too long, then towards more while it fits.
      let got = attempt(a, want);
      let tries = 0;
      while (!got && a < t && tries++ < 16) {
        a++;
        while (a < t && !validStart(a)) a++;
        got = attempt(a, want);
      }
      if (!got) continue;
      for (let b = a - 1; b >= h && tries++ < 24; b--) {
        if (!validStart(b)) continue;
        const more = attempt(b, want);
        if (!more) break;
        got = more;
      }
      placed = got;
      used = n;
    }
    if (!placed) {
      // The last piece tried for t alone is the one with the least history (the loop steps towards t).
      out.tooLong.push(t);
      out.tooLongTokens.push(measured.tooLong);
      todo.shift();
      continue;
    }
    out.records.push(...placed);
    todo.splice(0, used);
  }
  return out;
}
