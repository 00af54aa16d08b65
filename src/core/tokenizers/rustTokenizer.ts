/**
 * The Rust tokenizer backend: the official Hugging Face binding, npm `tokenizers` (napi; the same Rust code as
 * Python's `tokenizers`, this project's test oracle), loaded at run time from `node_modules` (never bundled: its
 * `.node` file is per platform). Its `encode` is asynchronous only, so it serves {@link TargetTokenizer.encodeBatch}
 * (`prepare`'s row processor encodes a batch of rows' records in one call); the synchronous `encode` and `decode`
 * (the hover, `--long split`, generated ids) go to the JavaScript tokenizer of the same folder, loaded the first time
 * one of them is called. Ids are the binding's; each token's UTF-16 start comes from the same {@link OffsetAligner} as
 * the JavaScript backend's (cheaper than fetching the binding's offsets), and from the binding's own offsets
 * (code points, converted by {@link utf16Starts}) for a text the aligner cannot align exactly.
 * docs/scale.md "Tokenizer backends".
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readFileStamped } from '../read/fileStamp';
import { isMainThread } from 'node:worker_threads';
import { loadTokenizer, tokenizerDisplayName, tokenizerFolderOf } from './tokenizer';
import { OffsetAligner } from './offsetAligner';
import { appliesOwnNfc, toWellFormed } from './rustText';
import { readChatTemplates, readJson, specialTokenVarsOf, stopTokensOf, tokenizerFilesHashOf, tokenizerJsonSize } from './modelFolder';
import { TokenizerLoadError, type EncodedText, type TargetTokenizer } from './types';
import { jsAddedTokenGap, jsAddedTokenGapMessage } from './addedTokenGaps';

/** What this module uses of the binding's `Encoding`. */
interface RustEncoding {
  getIds(): number[];
  /** `[start, end)` of each token in the text, in code points. */
  getOffsets(): number[][];
}

/** What this module uses of the binding's `Tokenizer`. */
interface RustTokenizer {
  encodeBatch(texts: string[], options: { addSpecialTokens: boolean }): Promise<RustEncoding[]>;
  idToToken(id: number): string | null;
}

/** The binding's module, as far as this module uses it. */
export interface RustBinding {
  Tokenizer: { fromString(json: string): RustTokenizer };
}

/** The binding, or why it did not load (the first line of the error: a missing package, no binary for the platform). */
export type RustBindingLoad = { binding: RustBinding } | { error: string };

let loaded: RustBindingLoad | undefined;

/**
 * The Rust binding, loaded once per thread (`require('tokenizers')`, external to the bundles: found in the
 * `node_modules` beside them). Never throws: when it does not load, the reason.
 */
export function rustBinding(): RustBindingLoad {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a run-time load that may fail (esbuild keeps it external)
  return (loaded ??= loadRustBinding(() => require('tokenizers')));
}

/**
 * Loads the binding with `load` (a `require`), after {@link limitRustThreads}; checks that it has what this module
 * uses. Never throws.
 */
export function loadRustBinding(load: () => unknown): RustBindingLoad {
  limitRustThreads();
  try {
    const m = load() as Partial<RustBinding> | null;
    if (typeof m?.Tokenizer?.fromString !== 'function') return { error: 'the tokenizers package has no Tokenizer.fromString' };
    return { binding: m as RustBinding };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    return { error: msg.split('\n')[0] };
  }
}

/**
 * Keeps the binding to one thread per encode: sets `TOKENIZERS_PARALLELISM=false` (read by the Rust library at each
 * batch) unless the environment already sets it. `prepare` runs one encode at a time per pool worker, and the pool
 * has a worker per core; the library's own thread pool (rayon, one thread per core) would put more runnable threads
 * than cores on the machine (docs/scale.md "Tokenizer backends"). Only the main thread can change the process's
 * environment (a worker thread's `process.env` is its own copy), so this acts there: the CLI, before its pool starts.
 * `TOKENIZERS_PARALLELISM=true` lets the library use its thread pool.
 */
export function limitRustThreads(): void {
  if (isMainThread && process.env.TOKENIZERS_PARALLELISM === undefined) process.env.TOKENIZERS_PARALLELISM = 'false';
}

/**
 * The UTF-16 index of each token's start, from the Rust binding's offsets (`[start, end)` in code points of `text`).
 * A start past the text's end maps to its length.
 */
export function utf16Starts(text: string, offsets: readonly (readonly number[])[]): number[] {
  // Written in order from empty (not `new Array(n)`, holey for good): packed, as the mask made from it (records/mask.ts).
  const starts: number[] = [];
  if (!/[\uD800-\uDFFF]/.test(text)) {
    // No surrogate pair: one code point per UTF-16 unit.
    for (let k = 0; k < offsets.length; k++) starts[k] = Math.min(offsets[k][0], text.length);
    return starts;
  }
  const unitOf: number[] = [];
  for (let u = 0; u < text.length; u++) {
    unitOf.push(u);
    const c = text.charCodeAt(u);
    if (c >= 0xd800 && c <= 0xdbff && u + 1 < text.length) {
      const d = text.charCodeAt(u + 1);
      if (d >= 0xdc00 && d <= 0xdfff) u++;
    }
  }
  unitOf.push(text.length);
  for (let k = 0; k < offsets.length; k++) starts[k] = unitOf[Math.min(offsets[k][0], unitOf.length - 1)];
  return starts;
}

/** A `tokenizer.json` as read: its bytes, its text and the parsed object. */
export interface ParsedTokenizerJson {
  bytes: Buffer;
  text: string;
  json: { added_tokens?: { id: number; content: string; special: boolean }[]; normalizer?: unknown; [k: string]: unknown };
}

/**
 * The bytes of a `tokenizer.json`, read once per load (the cache key, the parse and the files hash take them).
 * @throws TokenizerLoadError naming the file when it cannot be read
 */
export function readTokenizerBytes(path: string): Buffer {
  try {
    return readFileStamped(path); // with the stamp they were read at, for the tokenizer cache's key (preparedBpe.ts)
  } catch (e) {
    throw new TokenizerLoadError(`${path}: cannot read: ${(e as Error).message}`);
  }
}

/**
 * Reads (unless `bytes` are given: what was read of it) and parses a `tokenizer.json`.
 * @throws TokenizerLoadError naming the file when it cannot be read or is not JSON
 */
export function readTokenizerJson(path: string, bytes: Buffer = readTokenizerBytes(path)): ParsedTokenizerJson {
  const text = bytes.toString('utf8');
  try {
    return { bytes, text, json: JSON.parse(text) };
  } catch (e) {
    throw new TokenizerLoadError(`${path}: cannot read JSON: ${(e as Error).message}`);
  }
}

/**
 * Loads the tokenizer of a model folder with the Rust binding: the same facts as {@link loadTokenizer} (templates,
 * special tokens, stop tokens, hash, size), ids from the binding. Returns null for a folder without `tokenizer.json`
 * (a tiktoken folder: tiktoken/, JavaScript only).
 * @param dir the model folder; undefined = the embedded default
 * @param parsed its `tokenizer.json`, when the caller has read it already
 * @throws TokenizerLoadError naming the folder when its files are missing or unreadable, or the binding rejects them
 */
export function loadRustTokenizer(binding: RustBinding, dir?: string, parsed?: ParsedTokenizerJson): TargetTokenizer | null {
  const { folder, embeddedDefault } = tokenizerFolderOf(dir);
  const tjPath = join(folder, 'tokenizer.json');
  if (!parsed && !existsSync(tjPath)) return null;
  const { bytes, text, json: tokenizerJson } = parsed ?? readTokenizerJson(tjPath);
  // A lone NFC normalizer is applied here (as tokenizer.ts does, same tables: normalizeLikeRust), only to texts it
  // changes: the binding's normalizer tracks the alignment of every byte of every text, 2× the cost of encoding
  // Qwen3's records (docs/scale.md "Tokenizer backends"). The same ids: the normalized text is what the model sees.
  const ownNfc = appliesOwnNfc(tokenizerJson);
  // Its synchronous calls are the JavaScript tokenizer's, and its NFC is applied here too: refused alike.
  const gap = jsAddedTokenGap(tokenizerJson);
  if (gap) throw new TokenizerLoadError(jsAddedTokenGapMessage(tjPath, gap));
  let rust: RustTokenizer;
  try {
    rust = binding.Tokenizer.fromString(ownNfc ? JSON.stringify({ ...tokenizerJson, normalizer: null }) : text);
  } catch (e) {
    throw new TokenizerLoadError(`${tjPath}: the Rust tokenizers binding cannot load it: ${(e as Error).message}`);
  }
  const tcPath = join(folder, 'tokenizer_config.json');
  const config = existsSync(tcPath) ? readJson(tcPath) : {};
  const specialTokenVars = specialTokenVarsOf(config);
  const added = tokenizerJson.added_tokens ?? [];
  const idToToken = (id: number): string | undefined => rust.idToToken(id) ?? undefined;
  const aligner = new OffsetAligner({ id_to_token: idToToken }, tokenizerJson);
  const size = tokenizerJsonSize(tokenizerJson);
  const stops = stopTokensOf(folder, specialTokenVars, (id) => added.find((t) => t.id === id)?.content ?? idToToken(id));
  /** The JavaScript tokenizer of the same folder, for the synchronous calls (loaded on the first). */
  let js: TargetTokenizer | undefined;
  // Built when first needed from the bytes the Rust tokenizer was built from (kept for it), not the file as it is then:
  // a tokenizer.json replaced since would give the synchronous calls another tokenizer's ids under this one's hash.
  const sync = () => (js ??= loadTokenizer(dir, { bytes }));
  return {
    dir: folder,
    name: tokenizerDisplayName(folder, embeddedDefault),
    hash: tokenizerFilesHashOf(folder, undefined, bytes),
    embeddedDefault,
    templates: readChatTemplates(folder, config),
    specialTokenVars,
    specialTokens: added.filter((t) => t.special).map((t) => t.content),
    stopTokens: stops.tokens,
    stopTokensSource: stops.source,
    backend: 'rust',
    encode: (t) => sync().encode(t),
    encodeBatch: async (texts) => {
      // Lone surrogates become U+FFFD as the binding would make them (same length: offsets unchanged), as encode does.
      const wellFormed = texts.map(toWellFormed);
      const inputs = ownNfc ? wellFormed.map((t) => aligner.normalized(t)) : wellFormed;
      const encs = await rust.encodeBatch(inputs, { addSpecialTokens: false });
      return encs.map((e, k): EncodedText => {
        const ids = e.getIds();
        const aligned = aligner.starts(wellFormed[k], ids);
        // The binding's offsets are into the text it was given: used where that is the text (not normalized here).
        if (aligned.exactOffsets || inputs[k] !== wellFormed[k]) return { ids, ...aligned };
        return { ids, starts: utf16Starts(wellFormed[k], e.getOffsets()), exactOffsets: true };
      });
    },
    decode: (ids) => sync().decode(ids),
    idToToken,
    size,
  };
}
