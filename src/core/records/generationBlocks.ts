/**
 * docs/loss-mask-rules.md "Generation blocks": a template's `{% generation %}` blocks are a claim about what is
 * trained, never the span; the first place where they disagree with the derived spans is said.
 */
import { ChatTemplate } from '../templates/template';
import type { Message } from '../types';
import type { Located } from './completion';
import { startsWithAt } from './specialTokens';

/** A string as JSON, for messages. */
const q = (s: string) => JSON.stringify(s);

/** Characters of a difference quoted in a message. */
const DIFF_CHARS = 60;

/** Text quoted in a message, cut to {@link DIFF_CHARS} characters. */
const cut = (s: string) => (s.length > DIFF_CHARS ? `${s.slice(0, DIFF_CHARS)}…` : s);

/**
 * docs/loss-mask-rules.md "Generation blocks": compares target `i`'s trained text as the rules derive it (`trained`,
 * the start of its completion `C`) with the template's `{% generation %}` blocks of that turn: the blocks of
 * `F_i = R(m[:i+1])` after those of `R(m[:i])`. Positions are compared in `F_i`, where the completion starts at
 * `located.from`; when reasoning was restored (`C` is not `F_i`'s text) the two texts are compared.
 * Two renders with the blocks' positions; called until the first difference of a conversation.
 * @returns the first difference as one sentence, or null when the blocks hold exactly the trained text
 * @throws TemplateRenderError as {@link ChatTemplate.render} (the renders are the rules' own, so they do not raise here)
 */
export function generationBlocksDiff(
  i: number,
  trained: string,
  C: string,
  located: Located,
  messages: readonly Message[],
  tools: unknown[] | undefined,
  template: ChatTemplate,
): string | null {
  const F = template.renderWithGenerationSpans(messages.slice(0, i + 1), tools, { addGenerationPrompt: false });
  const before = template.renderWithGenerationSpans(messages.slice(0, i), tools, { addGenerationPrompt: false }).spans;
  // The conversation's own text holds a marker character: the blocks cannot be located, so there is no claim to check.
  if (F.spans === null || before === null) return null;
  const blocks = F.spans.slice(before.length);
  const blockText = blocks.map(([a, b]) => F.text.slice(a, b)).join('');
  if (blockText === trained) return null;
  const turn = `assistant turn ${i}`;
  // The turn's own text in F_i: up to the text the template writes after every conversation, when it does (located.F ends before it).
  const own = F.text.slice(located.from, located.F !== undefined ? located.F.length : F.text.length);
  if (!startsWithAt(C, own))
    return `${turn}: the rules train ${q(cut(trained))} (its reasoning put back where the model writes it); its generation blocks hold ${q(cut(blockText))}`;
  const start = located.from;
  const inF = Math.min(trained.length, F.text.length - start);
  const end = start + inF;
  const lo = Math.min(start, blocks.length ? blocks[0][0] : start);
  const hi = Math.max(end, blocks.length ? blocks[blocks.length - 1][1] : end);
  const inBlock = (p: number) => blocks.some(([a, b]) => p >= a && p < b);
  const inRule = (p: number) => p >= start && p < end;
  for (let p = lo; p < hi; p++) {
    const b = inBlock(p);
    if (b === inRule(p)) continue;
    let e = p;
    while (e < hi && inBlock(e) === b && inRule(e) !== b) e++;
    const text = F.text.slice(p, e);
    if (!b) return `${turn}: the rules train ${q(cut(text))}, which its generation blocks leave out`;
    const where =
      p < start
        ? "part of the prompt the server sends (the turn's header or what the generation prompt pre-fills)"
        : "text the template writes after the turn's end-of-turn token";
    return `${turn}: its generation blocks train ${q(cut(text))}, ${where}, which the rules leave untrained`;
  }
  if (trained.length > inF)
    return `${turn}: the rules also train ${q(trained.slice(inF))}, the stop token the next turn's role marker ends it with; its generation blocks end before it`;
  return null;
}
