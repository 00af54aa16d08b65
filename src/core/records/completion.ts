/**
 * Where a target's completion lies in the renders of its prefixes: the cases of docs/loss-mask-rules.md "One target"
 * (1, 2, 2b with its reasoning restoration, 3) and "Text after the last turn".
 */
import { ChatTemplate, type AdaptedTurns } from '../templates/template';
import { DEFAULT_REASONING_CLOSE, endsWithReasoningOpener } from '../templates/probes';
import type { Message } from '../types';
import { commonPrefixLength, endsWithFast, SpecialTokenFinder, startsWithAt, tokenBoundary } from './specialTokens';
import { reasoningShown, restoreInline, trimNewlines } from './turns';

/** A string as JSON, for messages. */
const q = (s: string) => JSON.stringify(s);

/**
 * The texts of a turn as the template is given them (its reasoning and its content, trimmed, the non-empty ones):
 * what {@link ownTextStart} looks for.
 */
export function turnTexts(m: Message): string[] {
  const out: string[] = [];
  const r = m.reasoning_content ? m.reasoning_content.trim() : '';
  if (r) out.push(r);
  const c = typeof m.content === 'string' ? m.content.trim() : '';
  if (c) out.push(c);
  return out;
}

/**
 * Where the template leaves the prompt never lies inside the turn's own text (docs/loss-mask-rules.md case 2b, and
 * "Record grouping"): the common prefix of the prompt `P` and the render `F` can run on into the turn's text by
 * coincidence (Apriel's pre-fill `Here are my reasoning steps:\n` and an answer `Hello!` share `He`). When none of
 * `texts` (the turn's texts, {@link turnTexts}) starts at `at` in `F`, returns the last position in `[from, at)` where
 * one of them starts and runs past `at`; else `at`. (A text that starts at `at` ends the search: a text that repeats
 * the end of the header, `assistant\n…`, is not taken for a coincidence, so no header text becomes trainable.)
 */
export function ownTextStart(F: string, from: number, at: number, texts: readonly string[]): number {
  if (texts.some((t) => startsWithAt(F, t, at))) return at;
  for (let k = at - 1; k >= from; k--) if (texts.some((t) => k + t.length > at && startsWithAt(F, t, k))) return k;
  return at;
}

/**
 * A located completion: `C_i`, and where the template writes turn `i` from in `F_i` (`F_i.slice(from)` is `C_i` unless
 * reasoning was restored); `F` when the turn is not at the end of `F_i` (a template that writes text after every
 * conversation): `F_i` without that text.
 */
export interface Located {
  C: string;
  from: number;
  F?: string;
}

/**
 * docs/loss-mask-rules.md "Text after the last turn": some templates write the same text
 * after the last message whether or not a generation prompt is asked for (Command-R7B's tool-use template writes its
 * generation prompt always; Command-R+'s writes a system instruction after the conversation). That tail is the text
 * both renders `H = R(m[:i])` and `F = R(m[:i+1])` end with, after what their last messages share (text, then the stop
 * token that ends them, if any), when it is more than whitespace, `F` is `H` with turn `i` written in front of it (`H`
 * before the tail is a prefix of `F`), and the template writes it after the conversation only: `R(m[:i])` followed by a
 * probe user turn (`nextUser`) ends with it but does not have it between the history and that turn (a turn's own ending,
 * such as `<end_of_turn>\n`, is there). Turn `i` as the template writes it is then `F` between the history and
 * the tail, `T`; its header is the longest start of `T` (cut back to a token edge) that the server's prompt `P` writes after
 * the history (the tail and the generation prompt: from wherever in them it matches best, the latest on ties); the
 * completion is the rest of `T`. Needs the model's stop tokens.
 * @returns null when the template writes no such tail (the usual cases apply)
 */
function trailingTextCase(
  P: string,
  H: string,
  F: string,
  specials: SpecialTokenFinder,
  stops: ReadonlySet<string>,
  nextUser: () => string | null,
): Located | null {
  let s = 0;
  const max = Math.min(H.length, F.length);
  while (s < max && H.charCodeAt(H.length - 1 - s) === F.charCodeAt(F.length - 1 - s)) s++;
  const shared = H.slice(H.length - s);
  // What the last messages share at their ends (text both end with, then a stop token) is theirs; the rest is the tail.
  const first = specials.firstAt(shared, 0);
  if (!first || first.end === first.start) return null;
  const tail = shared.slice(stops.has(first.token) ? first.end : first.start);
  if (tail.trim() === '') return null;
  const p = H.length - tail.length;
  if (commonPrefixLength(H, F) < p || commonPrefixLength(P, H) < p) return null;
  const U = nextUser();
  if (U === null || !endsWithFast(U, tail) || commonPrefixLength(U, H) < p || U.startsWith(tail, p)) return null;
  const body = F.slice(0, F.length - tail.length);
  const T = body.slice(p);
  const served = P.slice(p);
  let header = 0;
  for (let j = 0; j < served.length; j++) {
    if (served.charCodeAt(j) !== T.charCodeAt(0)) continue;
    const k = commonPrefixLength(served.slice(j), T);
    if (k >= header) header = k;
  }
  header = tokenBoundary(T, header, specials);
  return { C: T.slice(header), from: p + header, F: body };
}

/**
 * The completion `C_i` of target `i` by the cases of docs/loss-mask-rules.md "One target" (1, 2, 2b with its reasoning
 * restoration, 3), adding the case's notes; `{error}` when it cannot be located (`template_unsupported`).
 */
export function locateCompletion(
  i: number,
  R: (n: number, gen: boolean) => string,
  adapted: AdaptedTurns,
  template: ChatTemplate,
  tags: { open: string; close: string },
  specials: SpecialTokenFinder,
  stops: ReadonlySet<string>,
  nextUser: () => string | null,
  notes: Set<string>,
): Located | { error: string } {
  const P = R(i, true);
  const F = R(i + 1, false);
  const H = R(i, false);
  // A template that writes text after every conversation (Command-R+'s tool instruction, Command-R7B's generation prompt).
  const tail = trailingTextCase(P, H, F, specials, stops, nextUser);
  if (tail) {
    notes.add('text_after_last_turn');
    return tail;
  }
  // Case 1, the common case.
  if (startsWithAt(F, P)) return { C: F.slice(P.length), from: P.length };
  const G = startsWithAt(P, H) ? P.slice(H.length) : P.slice(commonPrefixLength(P, H));
  const L = commonPrefixLength(H, F);
  const rest = F.slice(H.length);
  // Case 2: the history is intact and the template writes no header for this turn.
  if (L === H.length && (G.length === 0 || !rest.startsWith(G[0]))) {
    notes.add('generation_prompt_mismatch');
    return { C: rest, from: H.length };
  }
  // Case 2b: the generation prompt pre-fills text that the template does not write into a finished turn.
  const M = ownTextStart(F, H.length, tokenBoundary(P, commonPrefixLength(P, F), specials), turnTexts(adapted.messages[i]));
  const prefill = P.slice(M);
  if (L === H.length && M > H.length && F.indexOf(prefill, M) < 0) {
    notes.add('prefill_not_rendered');
    let C = F.slice(M);
    if (endsWithReasoningOpener(prefill, tags)) {
      const reasoning = adapted.reasoning[i];
      const inline = adapted.inline[i];
      if (reasoning === undefined) notes.add('reasoning_missing_after_prefill');
      else if (!reasoningShown(C, reasoning, template, tags)) {
        const fromInline = inline ? restoreInline(C, inline.written, prefill, tags.open) : null;
        const wrapper = template.probes.reasoning.wrapper;
        const close = wrapper ? wrapper.close : DEFAULT_REASONING_CLOSE;
        C = fromInline ?? trimNewlines(reasoning) + close + C;
        notes.add('reasoning_restored');
      }
    }
    return { C, from: M };
  }
  // Case 3: the template rewrote the history; the completion follows the last G at or after L.
  const at = G.length ? F.lastIndexOf(G) : -1;
  if (at < 0 || at < L) {
    return {
      error: `assistant turn ${i}: its completion cannot be located in the render (generation prompt ${q(G)} not found after the unchanged history)`,
    };
  }
  notes.add('template_rewrites_history');
  return { C: F.slice(at + G.length), from: at + G.length };
}
