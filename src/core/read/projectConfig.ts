/**
 * `eagle3prep.jsonc`: a small per-project configuration file that teaches the
 * readers a dataset's own spellings without changing the dataset.
 *
 * ```jsonc
 * {
 *   // source role spelling (case-insensitive) → one of system, user, assistant, tool
 *   "roleAliases": { "narrator": "assistant", "customer": "user" },
 *   // top-level row field → the field name a known shape uses (messages, conversations, prompt, …)
 *   "fieldMappings": { "dialogue_turns": "messages" },
 *   // how some shapes are read (both optional; defaults shown)
 *   "reading": {
 *     "oasstPaths": "all",          // OpenAssistant flat exports: one record per root-to-leaf path, or "best-ranked"
 *     "conversationLists": "each",  // a row holding a list of conversations (found by search): one record each, or "longest"
 *     "answers": "best"             // several answers to one prompt: "best" (the preferred / best-scored; default when
 *                                   // the row has a preference or scores), "all" (one record each; default otherwise), "first"
 *   }
 * }
 * ```
 *
 * The file is JSON with comments and trailing commas (parsed with `jsonc-parser`).
 * It applies to every dataset in its folder and below; the nearest one up the
 * folder tree wins (see {@link findProjectConfig}). It is applied to each parsed
 * row before normalization ({@link applyProjectConfig}), so the shape table of
 * `formats/normalize.ts` and the alias table of `formats/roles.ts` stay the
 * single place that knows shapes: a mapped row looks exactly like a row that
 * used the known spelling.
 *
 * Pure Node (no `vscode`).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, parse as parsePath, resolve } from 'node:path';
import { parse, type ParseError } from 'jsonc-parser';
import { jsonBreakDescription } from '../formats/content';
import { ANSWER_MODES, type AnswerMode, type NormalizeOptions } from '../formats/base';
import type { Role } from '../types';
import { isStackOverflow, jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../jsonDepth';

/** File name of the project configuration. */
export const PROJECT_CONFIG_NAME = 'eagle3prep.jsonc';

/** The roles an alias may map to (the normalized roles of `types.ts`). */
export const ALIAS_TARGET_ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

/** A parsed, validated `eagle3prep.jsonc`. */
export interface ProjectConfig {
  /** Absolute path of the file it was read from ('' when built in code). */
  file: string;
  /** Lower-case, trimmed source spelling → role. */
  roleAliases: Record<string, Role>;
  /** Source top-level field → field name a known shape reads. */
  fieldMappings: Record<string, string>;
  /** How some shapes are read ("reading"); absent keys take their defaults. */
  reading: ReadingSettings;
}

/** `eagle3prep.jsonc` "reading": choices the readers cannot make from the data. */
export interface ReadingSettings {
  /** OpenAssistant flat exports: every root-to-leaf path is a record (`all`, default) or only each tree's best-ranked path. */
  oasstPaths?: 'all' | 'best-ranked';
  /** A row holding a list of conversations (found by searching it): one record each (`each`, default) or the longest only. */
  conversationLists?: 'each' | 'longest';
  /** Several answers to one prompt (`formats/shapes-answers.ts`): the preferred one, each its own record, or the first. */
  answers?: AnswerMode;
}

/**
 * The normalizer's options for a file's reading choices (`formats/base.ts` {@link NormalizeOptions}); `{}` for none.
 * `given`: choices made for the run (`--answers` of `prepare` / `inspect`), which win over the file's.
 */
export function readingOptions(reading: ReadingSettings | undefined, given: Pick<NormalizeOptions, 'answers'> = {}): NormalizeOptions {
  const out: NormalizeOptions = {};
  if (reading?.conversationLists) out.conversationLists = reading.conversationLists;
  const answers = given.answers ?? reading?.answers;
  if (answers) out.answers = answers;
  return out;
}

const READING_CHOICES: Record<keyof ReadingSettings, readonly string[]> = {
  oasstPaths: ['all', 'best-ranked'],
  conversationLists: ['each', 'longest'],
  answers: ANSWER_MODES,
};

/** Thrown for an unreadable or invalid `eagle3prep.jsonc`; the message names the file, line and reason. */
export class ProjectConfigError extends Error {
  override name = 'ProjectConfigError';
}

function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Parses the text of an `eagle3prep.jsonc` (comments and trailing commas allowed).
 *
 * @param file path used in error messages and stored in the result.
 * @returns the config; unknown top-level keys are ignored (forward compatible).
 * @throws ProjectConfigError naming `file`, the 1-based line and the reason for a syntax error,
 *   a non-object root, a `roleAliases` value that is not one of {@link ALIAS_TARGET_ROLES}, or a
 *   `fieldMappings` value that is not a non-empty string.
 */
export function parseProjectConfig(text: string, file = ''): ProjectConfig {
  const errors: ParseError[] = [];
  // jsonc-parser recurses once per nesting level: a text nested deeper than any config is refused first.
  const tooDeep = () => new ProjectConfigError(`${file || PROJECT_CONFIG_NAME}: ${tooDeepMessage('the file', MAX_JSON_DEPTH)}`);
  if (jsonTextDepth(text) > MAX_JSON_DEPTH) throw tooDeep();
  let doc: unknown;
  try {
    doc = parse(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  } catch (e) {
    if (isStackOverflow(e)) throw tooDeep();
    throw e;
  }
  if (errors.length) {
    const e = errors[0];
    throw new ProjectConfigError(
      `${file || PROJECT_CONFIG_NAME}:${lineOf(text, e.offset)}: not valid JSONC (${jsonBreakDescription(text, { lines: true, jsonc: true })})`,
    );
  }
  const cfg: ProjectConfig = { file, roleAliases: {}, fieldMappings: {}, reading: {} };
  if (doc === undefined) return cfg;
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ProjectConfigError(`${file || PROJECT_CONFIG_NAME}: the root must be an object like {"roleAliases": {"bot": "assistant"}}`);
  }
  const where = (key: string) => `${file || PROJECT_CONFIG_NAME}: "${key}"`;
  const ra = (doc as Record<string, unknown>).roleAliases;
  if (ra !== undefined) {
    if (ra === null || typeof ra !== 'object' || Array.isArray(ra))
      throw new ProjectConfigError(`${where('roleAliases')} must be an object of spelling → role`);
    for (const [spelling, role] of Object.entries(ra)) {
      if (typeof role !== 'string' || !ALIAS_TARGET_ROLES.includes(role as Role)) {
        throw new ProjectConfigError(`${where('roleAliases')}: "${spelling}" maps to ${JSON.stringify(role)}; use one of ${ALIAS_TARGET_ROLES.join(', ')}`);
      }
      cfg.roleAliases[spelling.trim().toLowerCase()] = role as Role;
    }
  }
  const fm = (doc as Record<string, unknown>).fieldMappings;
  if (fm !== undefined) {
    if (fm === null || typeof fm !== 'object' || Array.isArray(fm))
      throw new ProjectConfigError(`${where('fieldMappings')} must be an object of source field → known field`);
    for (const [from, to] of Object.entries(fm)) {
      if (typeof to !== 'string' || to.trim() === '')
        throw new ProjectConfigError(`${where('fieldMappings')}: "${from}" must map to a field name, got ${JSON.stringify(to)}`);
      cfg.fieldMappings[from] = to;
    }
  }
  const rd = (doc as Record<string, unknown>).reading;
  if (rd !== undefined) {
    if (rd === null || typeof rd !== 'object' || Array.isArray(rd))
      throw new ProjectConfigError(`${where('reading')} must be an object like {"oasstPaths": "best-ranked"}`);
    for (const [k, v] of Object.entries(rd)) {
      const choices = READING_CHOICES[k as keyof ReadingSettings];
      if (!choices) throw new ProjectConfigError(`${where('reading')}: unknown setting "${k}" (known: ${Object.keys(READING_CHOICES).join(', ')})`);
      if (typeof v !== 'string' || !choices.includes(v))
        throw new ProjectConfigError(`${where('reading')}: "${k}" must be ${choices.map((c) => `"${c}"`).join(' or ')}, got ${JSON.stringify(v)}`);
      (cfg.reading as Record<string, string>)[k] = v;
    }
  }
  return cfg;
}

/**
 * The nearest `eagle3prep.jsonc` for a dataset: in the dataset's folder, else the closest
 * ancestor folder that has one (up to the file system root).
 * @returns its absolute path, or undefined when there is none.
 */
export function findProjectConfig(datasetFile: string): string | undefined {
  let dir = dirname(resolve(datasetFile));
  const root = parsePath(dir).root;
  for (;;) {
    const p = join(dir, PROJECT_CONFIG_NAME);
    if (existsSync(p)) return p;
    if (dir === root) return undefined;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

const cache = new Map<string, { mtimeMs: number; size: number; cfg: ProjectConfig }>();

/**
 * Reads the `eagle3prep.jsonc` that applies to `datasetFile` (see {@link findProjectConfig}),
 * cached by path, modification time and size.
 * @returns undefined when no such file exists, or when it maps nothing and sets no "reading" choice.
 * @throws ProjectConfigError when the file is unreadable or invalid (see {@link parseProjectConfig}).
 */
export function loadProjectConfigFor(datasetFile: string): ProjectConfig | undefined {
  const file = findProjectConfig(datasetFile);
  if (!file) return undefined;
  let cfg: ProjectConfig;
  try {
    const st = statSync(file);
    const hit = cache.get(file);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) cfg = hit.cfg;
    else {
      cfg = parseProjectConfig(readFileSync(file, 'utf8'), file);
      cache.set(file, { mtimeMs: st.mtimeMs, size: st.size, cfg });
    }
  } catch (e) {
    if (e instanceof ProjectConfigError) throw e;
    throw new ProjectConfigError(`cannot read ${file}: ${(e as Error).message}`);
  }
  return Object.keys(cfg.roleAliases).length || Object.keys(cfg.fieldMappings).length || Object.keys(cfg.reading).length ? cfg : undefined;
}

/** Keys naming a turn's speaker (the same as `formats/normalize.ts` reads). */
const ROLE_KEYS = ['role', 'from'];

/**
 * Applies a project config to one parsed row, before normalization:
 * 1. `fieldMappings`: a top-level field `from` is renamed to `to` (when the row has `from` and
 *    not already `to`);
 * 2. `roleAliases`: in every top-level array of turn objects, a `role` / `from` string whose
 *    lower-case, trimmed spelling is an alias is replaced by the alias's role.
 * The input row is not modified; a changed row is a shallow copy (changed turns copied too).
 * Non-object rows and rows the config does not touch are returned as given.
 */
export function applyProjectConfig(row: unknown, cfg: ProjectConfig | undefined): unknown {
  if (!cfg || row === null || typeof row !== 'object' || Array.isArray(row)) return row;
  let out = row as Record<string, unknown>;
  const copy = () => {
    if (out === row) out = { ...out };
  };
  for (const [from, to] of Object.entries(cfg.fieldMappings)) {
    if (from in out && !(to in out)) {
      copy();
      out[to] = out[from];
      delete out[from];
    }
  }
  if (Object.keys(cfg.roleAliases).length) {
    for (const [key, value] of Object.entries(out)) {
      if (!Array.isArray(value)) continue;
      let list: unknown[] | undefined;
      value.forEach((turn, i) => {
        if (turn === null || typeof turn !== 'object' || Array.isArray(turn)) return;
        const t = turn as Record<string, unknown>;
        const rk = ROLE_KEYS.find((k) => k in t);
        if (!rk || typeof t[rk] !== 'string') return;
        const role = cfg.roleAliases[(t[rk] as string).trim().toLowerCase()];
        if (!role || role === t[rk]) return;
        list ??= [...value];
        list[i] = { ...t, [rk]: role };
      });
      if (list) {
        copy();
        out[key] = list;
      }
    }
  }
  return out;
}
