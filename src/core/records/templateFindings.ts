/** Helpers of `check-template`'s findings: the probe decisions of a template, prefix-break offsets and excerpts (docs/loss-mask-rules.md "One conversation, how many records"), frequency order, and the default-system-prompt detection. */
import { commonPrefixLength } from './specialTokens';
import type { Message } from '../types';
import type { TemplateProbes } from '../templates/probes';

/** Length of the excerpts in {@link PrefixBreak}, in characters. */
export const EXCERPT_CHARS = 40;
/** How far (characters) a {@link PrefixBreak} offset may move back to a line or tag boundary. */
export const EXCERPT_BACKUP = 12;

export const excerpt = (s: string, at: number): string => s.slice(at, at + EXCERPT_CHARS);

/** The first difference of `a` and `b`, moved back to just after a `\n` or `>` when one lies within {@link EXCERPT_BACKUP} characters. */
export function breakOffset(a: string, b: string): number {
  const at = commonPrefixLength(a, b);
  for (let k = at; k > 0 && k >= at - EXCERPT_BACKUP; k--) if (a[k - 1] === '\n' || a[k - 1] === '>') return k;
  return at;
}

/** An empty think block (only whitespace inside), as reasoning templates write it for a turn without reasoning. */
export const EMPTY_THINK = /<think>\s*<\/think>/;

/** Distinct values, most frequent first (ties: first seen first). */
export function byFrequency(values: string[]): string[] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([v]) => v);
}

/**
 * Text injected before the user's turn when there is no system message.
 * The user turn's own contribution is `R([system, user])` minus `R([system])`;
 * what `R([user])` writes before that contribution, minus a leading
 * `bos_token`, is the injected text. A template that folds the system message
 * into the first user turn (Gemma) has no separate contribution; then the
 * injected text is what `R([user])` writes in place of the system text
 * (the middle left after removing the common prefix and suffix of the two renders).
 */
export function detectDefaultSystemPrompt(R: (m: Message[]) => string, bos: string | undefined): string | null {
  const sysText = 'Probe system text.';
  const user: Message = { role: 'user', content: 'Probe question one.' };
  const S = R([{ role: 'system', content: sysText }]);
  const SU = R([{ role: 'system', content: sysText }, user]);
  const U = R([user]);
  const contribution = SU.startsWith(S) ? SU.slice(S.length) : null;
  let injected: string;
  if (contribution !== null && !contribution.includes(sysText) && U.endsWith(contribution)) {
    injected = U.slice(0, U.length - contribution.length);
    if (bos && injected.startsWith(bos)) injected = injected.slice(bos.length);
  } else {
    const p = commonPrefixLength(U, SU);
    let q = 0;
    while (q < U.length - p && q < SU.length - p && U.charCodeAt(U.length - 1 - q) === SU.charCodeAt(SU.length - 1 - q)) q++;
    injected = U.slice(p, U.length - q);
  }
  return injected.length ? injected : null;
}

/** The generation prompt as {@link detectGenerationPrompt} finds it (fields of the template check). */
export interface GenerationPromptFindings {
  /** What `add_generation_prompt` appends to a user turn. */
  generationPrompt: string | null;
  /** What the template writes before an assistant turn's text when the turn is history. */
  assistantHeader: string | null;
  /** The part of the generation prompt after its common prefix with the assistant header, or null. */
  generationPromptScaffold: string | null;
}

/**
 * The generation prompt, the assistant header and the scaffold between them, from renders of probe turns: `R([user],
 * gen)` minus `R([user])`, and an assistant turn followed by another user turn, rendered as history, as the server's
 * prompt shows it. Written into `found` step by step: a render that raises leaves what was found before it.
 * @throws TemplateRenderError when the template raises on a probe render
 */
export function detectGenerationPrompt(R: (m: Message[], gen?: boolean) => string, found: GenerationPromptFindings): void {
  const user: Message = { role: 'user', content: 'Probe question one.' };
  const marker = 'Probe answer one.';
  const H = R([user]);
  const P = R([user], true);
  found.generationPrompt = P.startsWith(H) ? P.slice(H.length) : P.slice(commonPrefixLength(P, H));
  const F = R([user, { role: 'assistant', content: marker }, { role: 'user', content: 'Probe question two.' }]);
  const from = commonPrefixLength(H, F);
  const at = F.indexOf(marker, from);
  found.assistantHeader = at >= 0 ? F.slice(from, at) : null;
  if (found.assistantHeader !== null) {
    const scaffold = found.generationPrompt.slice(commonPrefixLength(found.generationPrompt, found.assistantHeader));
    found.generationPromptScaffold = scaffold.length ? scaffold : null;
  }
}

/**
 * Every template-dependent decision of the rules (spec v1.4), with its evidence, for one chat template
 * (camelCase in memory; snake_case in `check-template --json` and `report.json`, run/jsonCase.ts).
 */
export interface ProbeDecisions {
  /** The template's name (`default`, `tool_use`, …). */
  template: string;
  /** Tool-call arguments: `object` or `string` (Python `json.dumps` form); `verbatimStrings`: a string is re-dumped, not parsed. */
  toolArguments: { form: 'object' | 'string'; verbatimStrings: boolean; evidence: string };
  /** What an assistant turn with tool calls and no text gets: `null` or `""`. */
  nullContent: { form: 'null' | 'empty'; evidence: string };
  /** Whether the template renders `reasoning_content` (inline `<think>` is split only then). */
  reasoningRendered: { rendered: boolean; evidence: string };
  /** The text around reasoning as the template writes it; null when it renders none (or no tag around it). */
  reasoningWrapper: { open: string; close: string; trimsNewlines: boolean } | null;
  /** The generation prompt and what it pre-fills: an open reasoning block (case 2b restores reasoning after it), or an empty closed one (thinking off). */
  generationPrompt: { text: string | null; prefill: string | null; opensReasoning: boolean; thinkingOff: boolean; evidence: string };
}

/** The probe decisions of one compiled template in the snake_case JSON form. */
export function decisionsOf(template: string, p: TemplateProbes): ProbeDecisions {
  return {
    template,
    toolArguments: { form: p.toolArguments.form, verbatimStrings: p.toolArguments.verbatimStrings, evidence: p.toolArguments.evidence },
    nullContent: { form: p.nullContent.form, evidence: p.nullContent.evidence },
    reasoningRendered: { rendered: p.reasoning.rendered, evidence: p.reasoning.evidence },
    reasoningWrapper: p.reasoning.wrapper
      ? { open: p.reasoning.wrapper.open, close: p.reasoning.wrapper.close, trimsNewlines: p.reasoning.wrapper.trimsNewlines }
      : null,
    generationPrompt: {
      text: p.generationPrompt.text,
      prefill: p.generationPrompt.prefill,
      opensReasoning: p.generationPrompt.opensReasoning,
      thinkingOff: p.generationPrompt.thinkingOff,
      evidence: p.generationPrompt.evidence,
    },
  };
}
