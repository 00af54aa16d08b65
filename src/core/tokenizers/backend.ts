/**
 * Choosing the tokenizer implementation of a run (docs/scale.md "Tokenizer backends"): the Rust binding
 * (rustTokenizer.ts) where it loads, else the JavaScript tokenizer (tokenizer.ts); `--tokenizer-backend` or
 * `EAGLE3_TOKENIZER_BACKEND` forces one. Ids are the same either way (the oracle tests and
 * scripts/compare-tokenizers.ts compare them), so the choice changes speed, not records.
 */
import { loadTokenizer } from './tokenizer';
import { loadRustTokenizer, rustBinding, type RustBindingLoad } from './rustTokenizer';
import { TOKENIZER_BACKEND_CHOICES, TokenizerLoadError, type TargetTokenizer, type TokenizerBackendChoice } from './types';

/** The environment variable that chooses the backend when no option does (`auto`, `rust`, `js`). */
export const TOKENIZER_BACKEND_ENV = 'EAGLE3_TOKENIZER_BACKEND';

/**
 * The backend asked for: `choice` when given, else {@link TOKENIZER_BACKEND_ENV}, else `auto`.
 * @throws TokenizerLoadError naming the variable when it holds something else
 */
export function tokenizerBackendChoice(choice?: TokenizerBackendChoice, env: NodeJS.ProcessEnv = process.env): TokenizerBackendChoice {
  if (choice) return choice;
  const v = env[TOKENIZER_BACKEND_ENV];
  if (v === undefined || v === '') return 'auto';
  if ((TOKENIZER_BACKEND_CHOICES as readonly string[]).includes(v)) return v as TokenizerBackendChoice;
  throw new TokenizerLoadError(`${TOKENIZER_BACKEND_ENV}=${v}: expected one of ${TOKENIZER_BACKEND_CHOICES.join(', ')}`);
}

/** A loaded tokenizer and, when `auto` fell back to the JavaScript one, why (said once in the run's log and report). */
export interface BackendTokenizer {
  tok: TargetTokenizer;
  fallback?: string;
}

/**
 * Loads the tokenizer of `dir` with the backend `choice` asks for ({@link tokenizerBackendChoice}).
 * `auto`: the Rust binding, else (it does not load, or cannot read this `tokenizer.json`) the JavaScript tokenizer
 * with the reason in `fallback`; a tiktoken folder is always JavaScript (no fallback: there is no Rust one).
 * @param binding the binding's load (default: `require('tokenizers')`, once per thread); for tests
 * @throws TokenizerLoadError for an unusable folder, or with `rust` when the binding does not load or cannot read it
 */
export function loadTokenizerWithBackend(
  dir: string | undefined,
  choice?: TokenizerBackendChoice,
  binding: () => RustBindingLoad = rustBinding,
): BackendTokenizer {
  const want = tokenizerBackendChoice(choice);
  if (want === 'js') return { tok: loadTokenizer(dir) };
  const b = binding();
  if ('error' in b) {
    if (want === 'rust') throw new TokenizerLoadError(`--tokenizer-backend rust: the Rust tokenizers binding does not load: ${b.error}`);
    return { tok: loadTokenizer(dir), fallback: `the Rust tokenizers binding does not load (${b.error})` };
  }
  try {
    return { tok: loadRustTokenizer(b.binding, dir) ?? loadTokenizer(dir) };
  } catch (e) {
    // The folder's own problems (missing, unreadable) are the JavaScript loader's to report, with its wording.
    if (want === 'rust' || !(e instanceof TokenizerLoadError) || !e.message.includes('Rust tokenizers binding')) throw e;
    return { tok: loadTokenizer(dir), fallback: e.message };
  }
}
