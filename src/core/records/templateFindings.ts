/** Helpers of `check-template`'s findings: prefix-break offsets and excerpts (docs/loss-mask-rules.md "One conversation, how many records"), frequency order, and the default-system-prompt detection. */
import { commonPrefixLength } from './specialTokens';
import type { Message } from '../types';

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
