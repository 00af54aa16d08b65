/**
 * Reading a Hugging Face model folder's tokenizer-side files, shared by both
 * tokenizer loaders (tokenizer.ts, tiktoken/): `tokenizer_config.json`
 * special-token variables, the chat templates in `transformers`' precedence,
 * and the files hash / stamp a run records and caches by.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileStampOf } from '../read/fileStamp';
import { TokenizerLoadError, type NamedTemplate, type SpecialTokenVars } from './types';

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
 * @param given the bytes of files the caller has read already (by name): hashed as the file's, not read again
 * @returns the sha256 hex digest's first 16 characters
 */
export function hashModelFiles(
  folder: string,
  files: readonly string[],
  hasher = createHash('sha256'),
  given: Readonly<Record<string, Uint8Array>> = {},
): string {
  for (const f of files) {
    const p = join(folder, f);
    const bytes = given[f] ?? (existsSync(p) ? readFileSync(p) : undefined);
    if (bytes) hasher.update(f).update('\0').update(bytes).update('\0');
  }
  return hasher.digest('hex').slice(0, 16);
}

/**
 * The files besides the vocabulary that shape what a tokenizer folder renders and trains: its config, chat
 * templates and `generation_config.json` (the model's stop tokens, docs/loss-mask-rules.md "A turn that ends at the
 * next role marker"). A missing file adds nothing to the hash, so folders without one keep their hash.
 */
const TEMPLATE_FILES = ['tokenizer_config.json', 'chat_template.jinja', 'chat_template.json', 'generation_config.json'] as const;

/**
 * The tokenizer files hash a run records (`report.json` `tokenizer.hash`) for a model folder:
 * `tokenizer.json` and the template files by their bytes ({@link hashModelFiles}), or, for a
 * tiktoken folder (Kimi, tiktoken/), `tiktoken.model` by its sha256 and then the template files.
 * @param folder an absolute model folder
 * @param tiktokenSha256 hex sha256 of `tiktoken.model` for a tiktoken folder; omitted: a tokenizer.json folder
 * @param tokenizerJson the bytes of the folder's `tokenizer.json` when the loader has read them (hashed, not read again)
 * @returns 16 hex characters
 */
export function tokenizerFilesHashOf(folder: string, tiktokenSha256?: string, tokenizerJson?: Uint8Array): string {
  if (tiktokenSha256 === undefined)
    return hashModelFiles(folder, ['tokenizer.json', ...TEMPLATE_FILES], undefined, tokenizerJson ? { 'tokenizer.json': tokenizerJson } : {});
  return hashModelFiles(folder, TEMPLATE_FILES, createHash('sha256').update('tiktoken.model').update('\0').update(tiktokenSha256).update('\0'));
}

/** The files a model folder's tokenizer and chat templates are loaded from (`loadTokenizer`, `loadTiktokenTokenizer`). */
export const TOKENIZER_FILES = [
  'tokenizer.json',
  'tiktoken.model',
  'tokenizer_config.json',
  'chat_template.jinja',
  'chat_template.json',
  'generation_config.json',
] as const;

/**
 * A cheap stamp of a model folder's tokenizer files ({@link TOKENIZER_FILES}): each one's `fileStamp` (read/fileStamp.ts:
 * (change and modification times, size, inode), `-` for a missing one, joined by `|`. Equal stamps mean the files
 * are unchanged for caching (no bytes are read).
 * @param folder an absolute model folder
 */
export function tokenizerFilesStamp(folder: string): string {
  return TOKENIZER_FILES.map((f) => {
    return fileStampOf(join(folder, f)) ?? '-';
  }).join('|');
}

/** Parses a JSON file. @throws TokenizerLoadError naming the file and the parser's reason. */
export function readJson(path: string): any {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new TokenizerLoadError(`${path}: cannot read JSON: ${(e as Error).message}`);
  }
}

/** Parses the bytes read from the JSON file at `path` (UTF-8, as {@link readJson} reads it). @throws TokenizerLoadError naming the file and the parser's reason. */
export function parseJsonBytes(path: string, bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new TokenizerLoadError(`${path}: cannot read JSON: ${(e as Error).message}`);
  }
}

/**
 * The ids of the tokens the model stops generating at, from the model folder's `generation_config.json`
 * `eos_token_id` (a number or a list of numbers, as `transformers`' `GenerationConfig` stores it; GLM-4.x lists
 * `<|user|>` and `<|observation|>` there beside `<|endoftext|>`).
 * @returns the ids in file order, or undefined when the file or the field is absent
 * @throws TokenizerLoadError when the file is not JSON or `eos_token_id` is neither an integer nor a list of integers
 */
export function readGenerationStopIds(dir: string): number[] | undefined {
  const path = join(dir, 'generation_config.json');
  if (!existsSync(path)) return undefined;
  const raw = readJson(path)?.eos_token_id;
  if (raw === undefined || raw === null) return undefined;
  const ids = Array.isArray(raw) ? raw : [raw];
  if (!ids.every((x) => Number.isInteger(x) && x >= 0))
    throw new TokenizerLoadError(`${path}: eos_token_id must be a token id or a list of token ids (got ${JSON.stringify(raw)})`);
  return ids as number[];
}

/**
 * The model's stop tokens as token strings (docs/loss-mask-rules.md "A turn that ends at the next role marker"):
 * the tokens of `generation_config.json` `eos_token_id` when the folder has it, else the tokenizer's `eos_token`.
 * @param idToToken the loaded vocabulary's id → token string (added tokens by their content)
 * @returns the tokens (unknown ids left out) and where they came from
 * @throws TokenizerLoadError as {@link readGenerationStopIds}, and when an id is not in the vocabulary
 */
export function stopTokensOf(
  dir: string,
  vars: SpecialTokenVars,
  idToToken: (id: number) => string | undefined,
): { tokens: string[]; source: 'generation_config' | 'eos_token' | 'none' } {
  const ids = readGenerationStopIds(dir);
  if (ids && ids.length > 0) {
    const tokens: string[] = [];
    for (const id of ids) {
      const t = idToToken(id);
      if (t === undefined) throw new TokenizerLoadError(`${join(dir, 'generation_config.json')}: eos_token_id ${id} is not a token of this tokenizer`);
      if (!tokens.includes(t)) tokens.push(t);
    }
    return { tokens, source: 'generation_config' };
  }
  return vars.eos_token ? { tokens: [vars.eos_token], source: 'eos_token' } : { tokens: [], source: 'none' };
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
    return raw.filter((t) => t && typeof t.template === 'string').map((t) => ({ name: String(t.name ?? 'default'), source: t.template as string }));
  }
  return [];
}

/**

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
 * The tokenizer's length from a parsed `tokenizer.json` (`len(tokenizer)` in `transformers`): the highest id of
 * `model.vocab` (an object of token → id, or a Unigram list whose index is the id) and `added_tokens`, + 1;
 * null when it names no id.
 */
export function tokenizerJsonSize(tj: any): number | null {
  const vocab = tj?.model?.vocab;
  let top = Array.isArray(vocab) ? vocab.length - 1 : -1;
  if (vocab && !Array.isArray(vocab) && typeof vocab === 'object') for (const id of Object.values(vocab)) if (typeof id === 'number' && id > top) top = id;
  for (const t of tj?.added_tokens ?? []) if (Number.isInteger(t?.id) && t.id > top) top = t.id;
  return top >= 0 ? top + 1 : null;
}
