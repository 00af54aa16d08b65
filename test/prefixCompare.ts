/**
 * The equality check of prefix renders served from one traced render (src/core/templates/jinja/prefixTrace.ts,
 * through templates/prefixRenderer.ts) against each prefix rendered on its own, shared by the prefix-trace tests.
 */
import assert from 'node:assert/strict';
import { PrefixRenderer } from '../src/core/templates/prefixRenderer';
import type { ChatTemplate } from '../src/core/templates/template';
import type { Message } from '../src/core/types';

/**
 * Renders every `(n, gen)` (n in `ns`, default 0 … all; both flags) through a PrefixRenderer and on its own
 * (`ChatTemplate.render` of `messages.slice(0, n)`); asserts the same text, or the same error and nothing served.
 * @returns how many the trace served, and how many render without raising
 */
export function compareAll(
  ct: ChatTemplate,
  messages: Message[],
  tools: unknown[] | undefined,
  where: string,
  ns?: number[],
): { proven: number; renderable: number } {
  const pr = new PrefixRenderer(ct, messages, tools);
  let proven = 0;
  let renderable = 0;
  for (const n of ns ?? Array.from({ length: messages.length + 1 }, (_, k) => k)) {
    for (const gen of [false, true]) {
      let want: string | Error;
      try {
        want = ct.render(messages.slice(0, n), tools, { addGenerationPrompt: gen });
        renderable++;
      } catch (e) {
        want = e as Error;
      }
      const before = pr.stats.proven;
      let got: string | Error;
      try {
        got = pr.render(n, gen);
      } catch (e) {
        got = e as Error;
      }
      const served = pr.stats.proven > before;
      if (served) proven++;
      if (want instanceof Error) {
        assert.ok(!served, `${where} n=${n} gen=${gen}: served a render whose own render raises ${want.message}`);
        assert.ok(got instanceof Error && got.message === want.message, `${where} n=${n} gen=${gen}: expected the error ${want.message}`);
      } else assert.equal(got, want, `${where} n=${n} gen=${gen}${served ? ' (served from the trace)' : ''}`);
    }
  }
  return { proven, renderable };
}
