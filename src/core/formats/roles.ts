/**
 * Role alias table: the spellings datasets use for a turn's speaker, mapped to
 * the four OpenAI chat-completions roles of {@link Role}.
 *
 * Sources of the spellings: OpenAI chat format (`system`, `user`, `assistant`,
 * `tool`, legacy `function`, and `developer` for o-series models), ShareGPT
 * (`human`, `gpt`, `system`, plus `chatgpt`/`bing`/`bard` in scraped dumps),
 * OpenAssistant (`prompter`), Gemini (`model`, `function_response`), Llama 3
 * (`ipython`), SWE-agent / agent trajectories (`ai`, `agent`, `observation`),
 * function-calling sets (`function_response`, `tool_response`; function-calling
 * ShareGPT sets spell them with a hyphen: `function-response`), Cohere chat
 * history (`USER`, `CHATBOT`, `SYSTEM`).
 */
import type { Role } from '../types';

/** Lower-case source spelling → normalized role. Extend here to accept a new spelling. */
export const ROLE_ALIASES: Readonly<Record<string, Role>> = Object.freeze({
  user: 'user',
  human: 'user',
  prompter: 'user',

  assistant: 'assistant',
  gpt: 'assistant',
  chatgpt: 'assistant',
  bing: 'assistant',
  bard: 'assistant',
  model: 'assistant',
  ai: 'assistant',
  bot: 'assistant',
  chatbot: 'assistant',
  gemini: 'assistant',
  agent: 'assistant',

  tool: 'tool',
  function: 'tool',
  observation: 'tool',
  function_response: 'tool',
  tool_response: 'tool',
  ipython: 'tool',

  system: 'system',
  developer: 'system',
});

/**
 * Map a source role spelling to a normalized role.
 *
 * Case-insensitive, surrounding whitespace ignored (`" GPT "` → `assistant`);
 * hyphens read as underscores (`function-response` → `tool`).
 * Returns `undefined` for a spelling not in {@link ROLE_ALIASES} (and for a
 * non-string); the caller must turn that into an error, never guess.
 */
export function mapRole(spelling: unknown): Role | undefined {
  if (typeof spelling !== 'string') return undefined;
  const key = roleSpellingKey(spelling);
  return Object.prototype.hasOwnProperty.call(ROLE_ALIASES, key) ? ROLE_ALIASES[key] : undefined;
}

/** Spelling → its key, for the few spellings a dataset uses (bounded: a file of made-up roles does not grow it). */
const spellingKeys = new Map<string, string>();

/**
 * A role spelling as {@link ROLE_ALIASES} keys it: trimmed, lower case, `-` as `_` (`" Tool-Call"` → `tool_call`).
 * Remembered per spelling (every turn of every row looks its role up: no new strings per turn).
 */
export function roleSpellingKey(spelling: string): string {
  let key = spellingKeys.get(spelling);
  if (key === undefined) {
    key = spelling.trim().toLowerCase().replace(/-/g, '_');
    if (spellingKeys.size < 1024) spellingKeys.set(spelling, key);
  }
  return key;
}

/** The known spellings, comma-separated, for error messages (`user, human, prompter, …`). */
export function knownRoleSpellings(): string {
  return Object.keys(ROLE_ALIASES).join(', ');
}
