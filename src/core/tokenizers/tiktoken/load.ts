/**
 * Loading a tiktoken tokenizer from a model folder in Kimi's layout
 * (`tiktoken.model` + `tokenizer_config.json`) as a {@link TargetTokenizer}:
 * the entry of `tiktoken/` (`tokenizer.ts` calls {@link loadTiktokenTokenizer}).
 *
 * Tokenizers shipped as a tiktoken rank file (`tiktoken.model`), as Moonshot AI
 * publishes Kimi-K2 / K2.5: `tiktoken.model` + `tokenizer_config.json`
 * (`tokenizer_class` `TikTokenTokenizer`, `added_tokens_decoder`) and the
 * model's own `tokenization_kimi.py`.
 *
 * The encoder reproduces, in this order:
 * 0. transformers' split of the text on the added (special) tokens, each matched
 *    as its id (tokenization_kimi.py's tiktoken call would match them too:
 *    `allowed_special="all"`);
 * 1. `tokenization_kimi.py` `TikTokenTokenizer.encode` on the text between them: it is cut into
 *    chunks of at most 400,000 code points, and each chunk wherever a run of
 *    consecutive whitespace (Python `str.isspace`) or non-whitespace characters
 *    exceeds 25,000 code points (`kimi.ts` `kimiSubstrings`);
 * 2. tiktoken `Encoding.encode` on each piece: the text is split by the
 *    pre-tokenizer pattern `pat_str` ({@link KIMI_PAT_STR}, translated to a JS
 *    RegExp by `pattern.ts` `translatePattern`) and each pre-token is encoded by
 *    byte-level BPE over the ranks: a pre-token that is itself a rank is one
 *    token, otherwise the adjacent pair whose concatenation has the lowest rank is
 *    merged, leftmost first, until no adjacent pair is a rank (`bpe.ts` `bpeMerge`).
 *
 * Special ids follow tokenization_kimi.py: the 256 ids `n_base … n_base+255`
 * after the `n_base` ranks are named by `added_tokens_decoder` (by id) and the
 * unnamed ones are `<|reserved_token_{id}|>`; nothing is renumbered.
 *
 * The parsed rank table is cached as a binary file keyed by the sha256 of
 * `tiktoken.model` (`rankCache.ts` `tiktokenCacheDir`).
 *
 * The tiktoken tokenizer, by concern: pattern.ts (pre-tokenizer pattern → RegExp), kimi.ts (Kimi's
 * pattern, constants and pre-splitting), rankTable.ts (the rank file), bpe.ts (the merge), encoder.ts,
 * rankCache.ts (parsed tables cached on disk), load.ts (the model folder).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { byteLevelDecoder, readChatTemplates, readJson, specialTokenVarsOf, stopTokensOf, tokenizerFilesHashOf } from '../modelFolder';
import { TokenizerLoadError, type EncodedText, type TargetTokenizer } from '../types';
import { TiktokenEncoder } from './encoder';
import { KIMI_NUM_RESERVED_SPECIAL, KIMI_PAT_STR } from './kimi';
import { loadRankTable } from './rankCache';

/** Options of {@link loadTiktokenTokenizer}. */
export interface TiktokenLoadOptions {
  /** Pre-tokenizer pattern; default {@link KIMI_PAT_STR}. */
  patStr?: string;
  /** Use the rank-table cache (default true). */
  useCache?: boolean;
}

/**
 * Loads a tiktoken tokenizer in Kimi's model-folder layout: `tiktoken.model`
 * (ranks), `tokenizer_config.json` (`added_tokens_decoder` `{id: {content,
 * special}}`, `bos_token`/`eos_token`/`pad_token`/`unk_token`, `chat_template`)
 * and optionally `chat_template.jinja` / `chat_template.json`.
 *
 * Special tokens follow tokenization_kimi.py: ids `n_base … n_base+255` (n_base =
 * number of ranks) take their name from `added_tokens_decoder` by id, unnamed ones
 * are `<|reserved_token_{id}|>`; added tokens outside that range keep their id
 * too (transformers matches them before the tokenizer runs). All of them are
 * matched in the text (`allowed_special="all"`), before Kimi's chunking of long
 * runs (see {@link TiktokenEncoder.encode}). `bos_token`/`eos_token` default
 * to `[BOS]`/`[EOS]` as in tokenization_kimi.py when the config omits them.
 *
 * @param dir the model folder.
 * @returns a {@link TargetTokenizer}; `encode` gives ids and UTF-16 token starts
 *   (exact by construction), `specialTokens` = contents of added tokens marked
 *   `special`, `hash` = sha256 (16 hex) over the tokenizer files' names and bytes.
 * @throws TokenizerLoadError naming the folder or file (and line, for the rank file);
 *   also when `tokenizer_class` is set to something other than `TikTokenTokenizer`,
 *   or when a `tokenization_kimi.py` in the folder defines a different `pat_str`.
 */
export function loadTiktokenTokenizer(dir: string, options: TiktokenLoadOptions = {}): TargetTokenizer {
  const folder = resolve(dir);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new TokenizerLoadError(`tokenizer folder not found: ${folder}`);
  const modelPath = join(folder, 'tiktoken.model');
  if (!existsSync(modelPath)) throw new TokenizerLoadError(`${folder}: no tiktoken.model`);
  const tcPath = join(folder, 'tokenizer_config.json');
  const config: any = existsSync(tcPath) ? readJson(tcPath) : {};
  if (config.tokenizer_class !== undefined && config.tokenizer_class !== 'TikTokenTokenizer') {
    throw new TokenizerLoadError(
      `${tcPath}: tokenizer_class ${JSON.stringify(config.tokenizer_class)} with tiktoken.model; only Kimi's TikTokenTokenizer layout is supported`,
    );
  }
  const patStr = options.patStr ?? KIMI_PAT_STR;
  // The model's own tokenization_kimi.py, when shipped, must hold the same pattern (each alternative verbatim).
  const pyPath = join(folder, 'tokenization_kimi.py');
  if (options.patStr === undefined && existsSync(pyPath)) {
    const py = readFileSync(pyPath, 'utf8');
    const missing = KIMI_PAT_STR.split('|').filter((alt) => !py.includes(alt));
    if (py.includes('pat_str') && missing.length)
      throw new TokenizerLoadError(`${pyPath}: its pat_str differs from Kimi's known pattern (not found: ${missing.map((m) => JSON.stringify(m)).join(', ')})`);
  }
  const { ranks, sha256 } = loadRankTable(modelPath, options.useCache ?? true);
  const nBase = ranks.size;

  const decoder: Record<string, { content?: unknown; special?: unknown }> = config.added_tokens_decoder ?? {};
  if (typeof decoder !== 'object' || Array.isArray(decoder)) throw new TokenizerLoadError(`${tcPath}: added_tokens_decoder is not an object`);
  const specials = new Map<string, number>();
  const specialTokens: string[] = [];
  const named = new Map<number, string>();
  for (const [key, v] of Object.entries(decoder)) {
    const id = Number(key);
    if (!Number.isInteger(id) || id < 0 || typeof v?.content !== 'string')
      throw new TokenizerLoadError(`${tcPath}: added_tokens_decoder entry ${JSON.stringify(key)} needs an integer id and a string content`);
    named.set(id, v.content);
    if (v.special === true) specialTokens.push(v.content);
  }
  for (let id = nBase; id < nBase + KIMI_NUM_RESERVED_SPECIAL; id++) specials.set(named.get(id) ?? `<|reserved_token_${id}|>`, id);
  for (const [id, content] of named) {
    if (id >= nBase && id < nBase + KIMI_NUM_RESERVED_SPECIAL) continue;
    if (specials.has(content)) continue;
    specials.set(content, id);
  }
  const enc = new TiktokenEncoder(ranks, specials, patStr);

  const specialTokenVars = specialTokenVarsOf(config, { bos_token: '[BOS]', eos_token: '[EOS]' });
  // tiktoken.model enters the hash by its sha256 (already computed for the cache key), not its bytes again.
  const hash = tokenizerFilesHashOf(folder, sha256);

  const byteToChar = new Map<number, string>();
  for (const [ch, b] of byteLevelDecoder()) byteToChar.set(b, ch);
  const stops = stopTokensOf(
    folder,
    specialTokenVars,
    (id) => enc.specialName(id) ?? (Number.isInteger(id) && id >= 0 && id < nBase ? enc.decode([id]) : undefined),
  );

  return {
    dir: folder,
    name: basename(folder),
    hash,
    embeddedDefault: false,
    templates: readChatTemplates(folder, config),
    specialTokenVars,
    specialTokens,
    stopTokens: stops.tokens,
    stopTokensSource: stops.source,
    encode: (text: string): EncodedText => ({ ...enc.encode(text), exactOffsets: true }),
    decode: (ids: number[]) => enc.decode(ids),
    idToToken: (id: number) => {
      const sp = enc.specialName(id);
      if (sp !== undefined) return sp;
      if (!Number.isInteger(id) || id < 0 || id >= nBase) return undefined;
      let s = '';
      for (const b of ranks.tokenBytes(id)) s += byteToChar.get(b)!;
      return s;
    },
  };
}
