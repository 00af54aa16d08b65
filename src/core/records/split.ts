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
  const s = pieceSearch(conv, maxLength, build, renderedChars, renderedTokens);
  const out: SplitResult = { records: [], tooLong: [], tooLongTokens: [] };
  const todo = [...targets].filter((t) => t >= s.head).sort((x, y) => x - y);
  for (const t of targets)
    if (t < s.head) {
      out.tooLong.push(t); // cannot happen for assistant turns after the head; kept honest
      out.tooLongTokens.push(null);
    }
  while (todo.length) {
    const t = todo[0];
    s.measured.tooLong = null;
    const placed = placeFirstTargets(todo, s);
    if (!placed) {
      // The last piece tried for t alone is the one with the least history (the loop steps towards t).
      out.tooLong.push(t);
      out.tooLongTokens.push(s.measured.tooLong);
      todo.shift();
      continue;
    }
    out.records.push(...placed.records);
    todo.splice(0, placed.used);
  }
  return out;
}

/** How the pieces of one conversation are searched: its head, the token estimates of windows, and one build-and-measure per piece. */
interface PieceSearch {
  /** Messages `0 … head-1` are the head every piece holds ({@link headEnd}). */
  head: number;
  maxLength: number;
  /** Estimated tokens of the head and messages `a … e`. */
  windowEst(a: number, e: number): number;
  /** Whether a piece may start its history at message `a` (after the head, not a `tool` turn). */
  validStart(a: number): boolean;
  /** The piece of the head and messages `a …` the last of `want` built and measured: its records when every one fits and every target of `want` is trained, else null. */
  attempt(a: number, want: readonly number[]): PieceRecord[] | null;
  /** Tokens of the longest record of the last piece measured too long. */
  measured: { tooLong: number | null };
}

/**
 * The search over one conversation. Estimates use the conversation's own characters per token (`renderedChars /
 * renderedTokens`, 4 when nothing was rendered) and spread the template's text beyond the fields (headers, end tokens)
 * evenly over the messages; in a piece, the assistant turns that are not its targets are history (not trainable).
 */
function pieceSearch(conv: Conversation, maxLength: number, build: BuildPiece, renderedChars: number, renderedTokens: number): PieceSearch {
  const msgs = conv.messages;
  const h = headEnd(msgs);
  const charsPerToken = renderedTokens > 0 ? Math.max(1, renderedChars / renderedTokens) : 4;
  const fields = msgs.map(fieldChars);
  const markup = Math.max(0, (renderedChars - fields.reduce((a, b) => a + b, 0)) / Math.max(1, msgs.length));
  const est = msgs.map((_, i) => (fields[i] + markup) / charsPerToken);
  const headEst = est.slice(0, h).reduce((a, b) => a + b, 0);
  const measured: { tooLong: number | null } = { tooLong: null };
  return {
    head: h,
    maxLength,
    measured,
    windowEst(a, e) {
      let sum = headEst;
      for (let i = a; i <= e; i++) sum += est[i];
      return sum;
    },
    validStart: (a) => a >= h && msgs[a].role !== 'tool',
    attempt(a, want) {
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
    },
  };
}

/**
 * The first targets of `todo` placed in one piece: as many targets as the estimate allows with no history before the
 * first, then one fewer at a time until a piece fits. Null when not even the first target alone fits.
 */
function placeFirstTargets(todo: readonly number[], s: PieceSearch): { records: PieceRecord[]; used: number } | null {
  const t = todo[0];
  let n = 1;
  while (n < todo.length && s.windowEst(t, todo[n]) <= s.maxLength) n++;
  for (; n >= 1; n--) {
    const records = mostHistoryPiece(t, todo.slice(0, n), s);
    if (records) return { records, used: n };
  }
  return null;
}

/**
 * The piece for targets `want` (the first is `t`) with the most history that fits: from the estimate's start, measured,
 * stepping towards less history while too long, then towards more while it fits (at most 24 measures).
 */
function mostHistoryPiece(t: number, want: readonly number[], s: PieceSearch): PieceRecord[] | null {
  const e = want[want.length - 1];
  let a = t;
  while (a > s.head && s.windowEst(a - 1, e) <= s.maxLength) a--;
  while (a < t && !s.validStart(a)) a++;
  let got = s.attempt(a, want);
  let tries = 0;
  while (!got && a < t && tries++ < 16) {
    a++;
    while (a < t && !s.validStart(a)) a++;
    got = s.attempt(a, want);
  }
  if (!got) return null;
  for (let b = a - 1; b >= s.head && tries++ < 24; b--) {
    if (!s.validStart(b)) continue;
    const more = s.attempt(b, want);
    if (!more) break;
    got = more;
  }
  return got;
}
