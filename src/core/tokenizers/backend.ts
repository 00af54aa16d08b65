/**
 * Choosing the tokenizer implementation of a run (docs/scale.md "Tokenizer backends"): `auto` takes the faster one
 * as measured — the JavaScript tokenizer (tokenizer.ts) where its word cache fits the tokenizer (byte-level BPE:
 * Qwen3, DeepSeek-V3, Llama-3, gpt-oss; as fast as the binding per CPU second on real text, 2× on the repeated text
 * of a history-rewriting template's records), the Rust binding (rustTokenizer.ts) for the others (SentencePiece-style
 * BPE such as Gemma-3: 4× faster) where it loads; `--tokenizer-backend` or `EAGLE3_TOKENIZER_BACKEND` forces one. Ids
 * are the same either way (the oracle tests and scripts/compare-tokenizers.ts compare them), so the choice changes
 * speed, not records.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadTokenizer, tokenizerFolderOf } from './tokenizer';
import { loadRustTokenizer, readTokenizerBytes, readTokenizerJson, rustBinding, type RustBindingLoad } from './rustTokenizer';
import { wordCacheFits } from './wordCache';
import { hasPreparedBpe } from './preparedBpe';
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
 * `auto`: the JavaScript tokenizer when its word cache fits the `tokenizer.json` ({@link wordCacheFits}), else the
 * Rust binding, else (it does not load, or cannot read this `tokenizer.json`) the JavaScript tokenizer with the
 * reason in `fallback`. A tiktoken folder is always JavaScript (no fallback: there is no Rust one).
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
  const tjPath = join(tokenizerFolderOf(dir).folder, 'tokenizer.json');
  if (!existsSync(tjPath)) return { tok: loadTokenizer(dir) }; // tiktoken (or the JavaScript loader's error)
  // Read once: the cache key, the parse and the files hash take these bytes.
  const bytes = readTokenizerBytes(tjPath);
  // Only a tokenizer.json the word cache fits has a prepared form in the tokenizer cache (preparedBpe.ts): no parse.
  if (want === 'auto' && hasPreparedBpe(tjPath, bytes)) return { tok: loadTokenizer(dir, { bytes }) };
  const parsed = readTokenizerJson(tjPath, bytes);
  if (want === 'auto' && wordCacheFits(parsed.json)) return { tok: loadTokenizer(dir, parsed) };
  const b = binding();
  if ('error' in b) {
    if (want === 'rust') throw new TokenizerLoadError(`--tokenizer-backend rust: the Rust tokenizers binding does not load: ${b.error}`);
    return { tok: loadTokenizer(dir, parsed), fallback: `the Rust tokenizers binding does not load (${b.error})` };
  }
  try {
    return { tok: loadRustTokenizer(b.binding, dir, parsed)! };
  } catch (e) {
    if (want === 'rust') throw e;
    return { tok: loadTokenizer(dir, parsed), fallback: (e as Error).message };
  }
}
