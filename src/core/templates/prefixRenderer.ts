/**
 * `R(n, gen)` over one conversation — the prefix renders the loss-mask rules are defined over (docs/loss-mask-rules.md
 * "One target": `P_i = R(m[:i], gen=True)`, `H_i = R(m[:i], gen=False)`, `F_i = R(m[:i+1], gen=False)`) — in
 * about the time of one render instead of one render per prefix: the conversation is rendered once, traced
 * (jinja/prefixTrace.ts), and every prefix render that trace proves equal to the real one is served from it; any
 * other is rendered for real, as before. Each distinct `(n, gen)` is computed once.
 */
import type { Message } from '../types';
import type { ChatTemplate, TracedPrefixes } from './template';

/** How the prefix renders of one conversation were obtained. */
export interface PrefixRenderStats {
  /** Distinct `(n, gen)` renders served from the traced render (proven equal). */
  proven: number;
  /** Distinct `(n, gen)` renders rendered for real (not proven). */
  fallback: number;
}

/** `R(n, gen)` for one conversation; see the module comment. */
export class PrefixRenderer {
  readonly stats: PrefixRenderStats = { proven: 0, fallback: 0 };
  private readonly cache = new Map<number, string>();
  /** The traced renders, by `add_generation_prompt` (false first; true only for a template that reads it before its loop). */
  private readonly traced: [TracedPrefixes | null, TracedPrefixes | null] = [null, null];

  /**
   * @param messages the conversation, adapted to the template (ChatTemplate.adaptMessages)
   * @param tools the record's tool definitions, or undefined
   * @param linear false renders every prefix for real (the reference path); default: the template's option
   */
  constructor(
    private readonly template: ChatTemplate,
    private readonly messages: readonly Message[],
    private readonly tools: unknown[] | undefined,
    private readonly linear = template.linearPrefixes,
  ) {}

  /**
   * `R(messages[:n], gen)`: exactly `template.render(messages.slice(0, n), tools, { addGenerationPrompt: gen })`.
   * The first call renders the whole conversation once (traced).
   * @throws TemplateRenderError as ChatTemplate.render does, for a prefix that is rendered for real and raises
   */
  render(n: number, gen: boolean): string {
    const key = 2 * n + (gen ? 1 : 0);
    let s = this.cache.get(key);
    if (s !== undefined) return s;
    if (this.linear) s = this.fromTrace(n, gen);
    if (s !== undefined) this.stats.proven++;
    else {
      this.stats.fallback++;
      s = this.template.render(this.messages.slice(0, n), this.tools, { addGenerationPrompt: gen });
    }
    this.cache.set(key, s);
    return s;
  }

  private fromTrace(n: number, gen: boolean): string | undefined {
    const first = (this.traced[0] ??= this.template.tracePrefixes(this.messages, this.tools, false));
    const s = first.render(n, gen);
    if (s !== undefined || !gen || !first.flagReadEarly) return s;
    return (this.traced[1] ??= this.template.tracePrefixes(this.messages, this.tools, true)).render(n, gen);
  }
}
