/**
 * The shapes a loaded target-model tokenizer exposes to the rest of the
 * pipeline (templates, records, run), whatever its file format
 * (`tokenizer.json` via tokenizer.ts, `tiktoken.model` via tiktoken/).
 */
/** A chat template source with its name (`default` when the config holds a single string). */
export interface NamedTemplate {
  name: string;
  source: string;
}

/** Special-token strings a chat template may reference (`bos_token`, `eos_token`, …). */
export type SpecialTokenVars = Record<string, string>;

/** Token ids of one text and, for each token, the UTF-16 index in the text where it starts. */
export interface EncodedText {
  ids: number[];
  /** `starts[k]` = JS string index of the first character of token `k` (same length as `ids`). */
  starts: number[];
  /** false when the token surfaces could not be aligned to the text exactly (e.g. a normalizer changed it); starts are then best effort. */
  exactOffsets: boolean;
  /**
   * true when the ids may differ from the model's (Rust) tokenizer's: the text holds a character whose Unicode
   * properties the runtime's tables give otherwise than Rust's, and a pre-tokenizer pattern uses a property this
   * project cannot pin to Rust's tables (tokenizers/rustUnicode.ts); absent otherwise. Noted `unicode_tables_unverified`.
   */
  unicodeUnverified?: true;
}

/** A loaded target-model tokenizer with its chat templates. */
export interface TargetTokenizer {
  /** Absolute folder path (or the embedded default's folder). */
  dir: string;
  /** Display name: the folder name, or `Qwen3 (embedded default)`. */
  name: string;
  /** sha256 over the tokenizer files' names and bytes, hex, first 16 chars. */
  hash: string;
  embeddedDefault: boolean;
  /** Chat templates found (tokenizer_config `chat_template` string or list, `chat_template.jinja`). */
  templates: NamedTemplate[];
  /** Variables for the chat template: bos_token, eos_token, pad_token, unk_token (strings; absent ones omitted). */
  specialTokenVars: SpecialTokenVars;
  /** Contents of the added tokens marked `special: true` (end-of-turn tokens and the like), docs/loss-mask-rules.md "Trainable span". */
  specialTokens: string[];
  /**
   * The tokens the model stops generating at (docs/loss-mask-rules.md "A turn that ends at the next role marker"):
   * `generation_config.json` `eos_token_id` (a number or a list) mapped to token strings, else `[eos_token]`.
   */
  stopTokens: string[];
  /** Where {@link stopTokens} came from: the folder's `generation_config.json`, the tokenizer's `eos_token`, or neither. */
  stopTokensSource: 'generation_config' | 'eos_token' | 'none';
  /** Encodes text as a serving stack does: special tokens in the text matched as special tokens, no BOS/EOS added by a post-processor. */
  encode(text: string): EncodedText;
  /**
   * Encodes several texts at once, as {@link encode} does each (same ids, starts and `exactOffsets`), asynchronously:
   * present when the tokenizer has a faster asynchronous implementation (the Rust binding, rustTokenizer.ts), which
   * `prepare`'s row processor then uses for a batch of rows (records/rowProcessor.ts `processRows`).
   */
  encodeBatch?(texts: string[]): Promise<EncodedText[]>;
  /** The implementation that encodes (`rust`: the `tokenizers` binding; `js`: `@huggingface/tokenizers` or the tiktoken tokenizer); absent = `js`. */
  backend?: TokenizerBackend;
  /** Decodes ids to text, special tokens kept. */
  decode(ids: number[]): string;
  /** The token string of an id (vocabulary form, e.g. `Ġthe`), for display. */
  idToToken(id: number): string | undefined;
  /**
   * The tokenizer's length (`len(tokenizer)`: the highest id of `tokenizer.json`'s `model.vocab` and `added_tokens`, + 1),
   * taken from the file as it was loaded; null when unknown, absent when this loader does not say (`token_counts.json`
   * then reads it from the folder).
   */
  size?: number | null;
}

/** A tokenizer implementation (docs/scale.md "Tokenizer backends"). */
export type TokenizerBackend = 'rust' | 'js';

/**
 * Which tokenizer implementation a run asks for: `auto` = the Rust binding where it loads, else the JavaScript one
 * (said once in the run's log and report); `rust` = the Rust binding or an error; `js` = the JavaScript one.
 */
export type TokenizerBackendChoice = 'auto' | TokenizerBackend;

/** The choices of {@link TokenizerBackendChoice}, the default first. */
export const TOKENIZER_BACKEND_CHOICES: readonly TokenizerBackendChoice[] = ['auto', 'rust', 'js'];

/** Error raised when a folder cannot be used as a tokenizer; the message names the folder and what is missing. */
export class TokenizerLoadError extends Error {}
