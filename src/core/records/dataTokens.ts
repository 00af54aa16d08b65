/**
 * docs/loss-mask-rules.md "A stop token inside a trained span" (v1.5): the trainable span ends where the template
 * writes the turn's end, found by position in the render, never by searching the turn's text. A turn whose own text
 * spells a special token (`<|user|>`, `<|im_end|>`) would otherwise end its span at that token on a template that
 * writes no end-of-turn token of its own (GLM-4.x: the next turn's role marker ends a turn).
 *
 * How the template's own special tokens are told from the data's: the turn is rendered once more with every special
 * token of its data replaced by a placeholder of the same length (characters of a private-use block), so every
 * position stays where it was; the render must equal the real one once the placeholders are put back (a template
 * that reads the data at a special token, e.g. splits at `</think>`, renders differently: then this is not used).
 */
import type { ChatTemplate } from '../templates/template';
import type { Message, ToolCall } from '../types';
import { endsWithFast, startsWithAt, type SpecialTokenFinder } from './specialTokens';

/** First code unit of the placeholders: one private-use character per distinct special token, repeated to its length. */
const PLACEHOLDER_BASE = 0xf100;
/** Distinct special tokens one turn can have replaced (one placeholder character each). */
const PLACEHOLDER_COUNT = 0x100;
const PLACEHOLDER_RANGE = /[\uF100-\uF1FF]/;

/** The special tokens of one turn's data replaced by placeholders, and the way back. */
interface NeutralTurn {
  message: Message;
  /** Puts the special tokens back in a text rendered from {@link message}. */
  restore(text: string): string;
}

/**
 * Turn `m` with every special token in its text (content, reasoning, tool-call names and argument strings) replaced
 * by a same-length placeholder; null when its data holds none, or holds placeholder characters itself.
 */
function neutralTurn(m: Message, specials: SpecialTokenFinder): NeutralTurn | null {
  const tokens = new Map<string, string>();
  let clash = false;
  const map = (s: string): string => {
    if (PLACEHOLDER_RANGE.test(s)) clash = true;
    let out = '';
    let at = 0;
    for (let t = specials.firstAt(s, 0); t; t = specials.firstAt(s, t.end)) {
      if (t.end === t.start) break;
      let ph = tokens.get(t.token);
      if (ph === undefined) {
        if (tokens.size >= PLACEHOLDER_COUNT) {
          clash = true;
          return s;
        }
        ph = String.fromCharCode(PLACEHOLDER_BASE + tokens.size).repeat(t.token.length);
        tokens.set(t.token, ph);
      }
      out += s.slice(at, t.start) + ph;
      at = t.end;
    }
    return out + s.slice(at);
  };
  const deep = (v: unknown): unknown => {
    if (typeof v === 'string') return map(v);
    if (Array.isArray(v)) return v.map(deep);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deep(x)]));
    return v;
  };
  const message: Message = { ...m };
  if (typeof m.content === 'string') message.content = map(m.content);
  if (typeof m.reasoning_content === 'string') message.reasoning_content = map(m.reasoning_content);
  if (m.tool_calls)
    message.tool_calls = m.tool_calls.map((tc): ToolCall => ({
      ...tc,
      function: { ...tc.function, name: map(tc.function.name), arguments: deep(tc.function.arguments) as ToolCall['function']['arguments'] },
    }));
  if (clash || tokens.size === 0) return null;
  return {
    message,
    restore: (text) => {
      let out = text;
      for (const [token, ph] of tokens) out = out.split(ph).join(token);
      return out;
    },
  };
}

/** Where the template ends a turn in its completion, told apart from special tokens the turn's own text spells. */
export interface TurnEnd {
  /** End (index into `C`) of the last special token the template itself writes in `C`; -1 when it writes none there. */
  end: number;
  /** Spans (indices into `C`) of the special tokens that come from the turn's data. */
  dataTokens: { start: number; end: number; token: string }[];
}

/**
 * The template's own end of turn `i` in its completion `C` (docs/loss-mask-rules.md "A stop token inside a trained
 * span"), found by position: `F = R(m[:i+1])` against the same render with the turn's special tokens replaced by
 * same-length placeholders. `from` is where `C` starts in `F` (`C` is `F.slice(from)`, or ends with it when reasoning
 * was put back in front; only positions in the part `C` and `F` share at their ends are compared).
 * @param F `R(m[:i+1])`, or its start through turn `i` (without a tail the template writes after every conversation)
 * @returns null when the turn's data spells no special token (the last special token of `C` is the template's),
 *   or when the template does not render the placeholders as the tokens (it reads the data at a special token), or
 *   when the template's end lies outside the compared part: then the caller keeps "the last special token in `C`"
 */
export function templateTurnEnd(
  i: number,
  C: string,
  from: number,
  F: string,
  messages: readonly Message[],
  tools: unknown[] | undefined,
  template: ChatTemplate,
  specials: SpecialTokenFinder,
): TurnEnd | null {
  const neutral = neutralTurn(messages[i], specials);
  if (!neutral) return null;
  let Fn: string;
  try {
    Fn = template.render([...messages.slice(0, i), neutral.message], tools, { addGenerationPrompt: false });
  } catch {
    return null;
  }
  // `F` may stop before the end of the render (a template that writes text after every conversation).
  if (Fn.length < F.length || !startsWithAt(neutral.restore(Fn), F)) return null;
  Fn = Fn.slice(0, F.length);
  // C's positions from `shift` on are F's positions `p - shift + F.length - C.length`... expressed as an offset:
  const tail = F.slice(from);
  if (!endsWithFast(C, tail)) return null;
  const offset = F.length - C.length; // F position = C position + offset, for C positions >= C.length - tail.length
  const zone = C.length - tail.length;
  let end = -1;
  for (let t = specials.firstAt(Fn, from); t; t = specials.firstAt(Fn, t.end)) {
    if (t.end === t.start) break;
    end = t.end - offset;
  }
  const dataTokens: TurnEnd['dataTokens'] = [];
  for (let t = specials.firstAt(F, from); t; t = specials.firstAt(F, t.end)) {
    if (t.end === t.start) break;
    if (!Fn.startsWith(t.token, t.start)) dataTokens.push({ start: t.start - offset, end: t.end - offset, token: t.token });
  }
  if (end >= 0 && end - 1 < zone) return null;
  return { end, dataTokens };
}
