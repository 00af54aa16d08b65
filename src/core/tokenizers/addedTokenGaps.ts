/**
 * Added tokens that this project's tokenizers match otherwise than the Rust `tokenizers` library, whose ids are the
 * reference (docs/fidelity.md): with such a token the ids would differ from the model's own tokenizer's without any
 * sign of it, so the folder is refused (TokenizerLoadError) by both backends: the JavaScript one (tokenizers.js 0.2)
 * and the Rust one (whose synchronous calls are the JavaScript tokenizer's and whose NFC is applied by this project).
 */

import { appliesOwnNfc } from './rustText';

/** The parts of a `tokenizer.json` added token read here. */
interface AddedTokenJson {
  content?: unknown;
  single_word?: unknown;
  normalized?: unknown;
}

/**
 * The first added token of a parsed `tokenizer.json` that tokenizers.js 0.2 matches otherwise than the Rust library,
 * and how, or undefined when there is none:
 * - `single_word: true`: Rust matches it only as a whole word (not inside one); tokenizers.js ignores the flag and
 *   matches it anywhere;
 * - `normalized: true` under the `NFC` normalizer when NFC changes its content: Rust matches the normalized content
 *   in the normalized text; this project applies NFC itself (tokenizer.ts, the Rust normalizer's tables), so
 *   both backends are given no normalizer and match the content as written, which NFC text never holds.
 * Measured against the Rust oracle on Qwen3 and Llama-3.1 vocabularies with such tokens added
 * (test/unit/addedTokenGaps.test.ts).
 * @param tokenizerJson the parsed `tokenizer.json`, its normalizer as written
 */
export function jsAddedTokenGap(tokenizerJson: { added_tokens?: unknown; normalizer?: unknown } | null | undefined): string | undefined {
  const added = tokenizerJson?.added_tokens;
  if (!Array.isArray(added)) return undefined;
  const nfc = appliesOwnNfc(tokenizerJson);
  for (const t of added as AddedTokenJson[]) {
    if (!t || typeof t.content !== 'string') continue;
    const name = JSON.stringify(t.content);
    if (t.single_word === true)
      return `added token ${name} has single_word: true (matched only as a whole word by the Rust tokenizers, anywhere by tokenizers.js)`;
    if (t.normalized === true && nfc && t.content.normalize('NFC') !== t.content)
      return `added token ${name} is normalized and NFC changes it (the Rust tokenizers match its NFC form, this project its content as written)`;
  }
  return undefined;
}

/** The load error's message for a {@link jsAddedTokenGap} of the `tokenizer.json` at `path`. */
export function jsAddedTokenGapMessage(path: string, gap: string): string {
  return `${path}: ${gap}: its ids would differ from the model's own tokenizer's, so this tokenizer folder is not used (edit the flag in tokenizer.json only if the model's tokenizer ignores it)`;
}
