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
 *   // field path → its role: prompt, answer, reasoning, system, label, metadata
 *   "fieldRoles": { "worked_solution": "answer", "gt": "label", "cot": "reasoning", "messages[].critique": "metadata" },
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
 * row before normalization (`formats/rowSource.ts` `applyProjectConfig`; this module only parses and checks it), so the shape table of
 * `formats/normalize.ts` and the alias table of `formats/roles.ts` stay the
 * single place that knows shapes: a mapped row looks exactly like a row that
 * used the known spelling.
 *
 * Pure Node (no `vscode`).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, parse as parsePath, relative, resolve, sep } from 'node:path';
import { parse, type ParseError } from 'jsonc-parser';
import { ANSWER_MODES, type AnswerMode, type Role } from '../types';
import { isStackOverflow, jsonBreakDescription, jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../jsonDepth';
import { fileStamp } from './fileStamp';

/** File name of the project configuration. */
export const PROJECT_CONFIG_NAME = 'eagle3prep.jsonc';

/** The roles an alias may map to (the normalized roles of `types.ts`). */
export const ALIAS_TARGET_ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool'];

/**
 * The roles `"fieldRoles"` can give a field: the user turn's text (`prompt`), the trained assistant turn's text
 * (`answer`), its `reasoning`, the `system` prompt, a `label` (a ground truth kept for grading: never trained) or
 * `metadata` (never read, never reported).
 */
export const FIELD_ROLES = ['prompt', 'answer', 'reasoning', 'system', 'label', 'metadata'] as const;
/** One of {@link FIELD_ROLES}. */
export type FieldRoleName = (typeof FIELD_ROLES)[number];
/** The roles a path into list elements (`messages[].cot`) can take: a turn's own role says whose text it is. */
const LIST_PATH_ROLES: readonly FieldRoleName[] = ['reasoning', 'label', 'metadata'];
/** A field path: keys joined by `.`, a key followed by `[]` for each element of its list; the last key names a field. */
const FIELD_PATH_RE = /^([^.[\]]+(\[\])?\.)*[^.[\]]+$/;

/** A parsed, validated `eagle3prep.jsonc`. */
export interface ProjectConfig {
  /** Absolute path of the file it was read from ('' when built in code). */
  file: string;
  /** Lower-case, trimmed source spelling → role. */
  roleAliases: Record<string, Role>;
  /** Source top-level field → field name a known shape reads. */
  fieldMappings: Record<string, string>;
  /** Field path (`worked_solution`, `output.text`, `messages[].cot`) → the role it is read in ({@link FIELD_ROLES}). */
  fieldRoles: Record<string, FieldRoleName>;
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

const READING_CHOICES: Record<keyof ReadingSettings, readonly string[]> = {
  oasstPaths: ['all', 'best-ranked'],
  conversationLists: ['each', 'longest'],
  answers: ANSWER_MODES,
};

/** Thrown for an unreadable or invalid `eagle3prep.jsonc`; the message names the file, line and reason. */
export class ProjectConfigError extends Error {
  override name = 'ProjectConfigError';
}

/**
 * The value of a configuration file's text: JSON with comments and trailing commas (`jsonc-parser`), `undefined` for
 * a text with no value. The one parser of `eagle3prep.jsonc` and of `--mapping` files ({@link parseProjectConfig},
 * `read/mappingFile.ts`). A text nested deeper than {@link MAX_JSON_DEPTH} is refused before it is parsed
 * (`jsonc-parser` recurses once per nesting level).
 *
 * @param fail makes the error thrown: `line` (1-based) for a syntax error, undefined for a text nested too deep;
 *   `reason` says what is wrong (`not valid JSONC (…)`, or the depth limit).
 * @throws what `fail` makes
 */
export function parseJsoncText(text: string, fail: (line: number | undefined, reason: string) => Error): unknown {
  const tooDeep = () => fail(undefined, tooDeepMessage('the file', MAX_JSON_DEPTH));
  if (jsonTextDepth(text) > MAX_JSON_DEPTH) throw tooDeep();
  const errors: ParseError[] = [];
  let doc: unknown;
  try {
    doc = parse(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  } catch (e) {
    if (isStackOverflow(e)) throw tooDeep();
    throw e;
  }
  if (errors.length) throw fail(lineOf(text, errors[0].offset), `not valid JSONC (${jsonBreakDescription(text, { lines: true, jsonc: true })})`);
  return doc;
}

/** The 1-based line of a character offset in `text`. */
function lineOf(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * Parses the text of an `eagle3prep.jsonc` (comments and trailing commas allowed; {@link parseJsoncText}).
 *
 * @param file path used in error messages and stored in the result.
 * @returns the config; unknown top-level keys are ignored (forward compatible; `mappings` is `read/mappingFile.ts`'s).
 * @throws ProjectConfigError naming `file`, the 1-based line and the reason for a syntax error,
 *   a non-object root, a `roleAliases` value that is not one of {@link ALIAS_TARGET_ROLES}, or a
 *   `fieldMappings` value that is not a non-empty string.
 */
export function parseProjectConfig(text: string, file = ''): ProjectConfig {
  const doc = parseJsoncText(
    text,
    (line, reason) => new ProjectConfigError(`${file || PROJECT_CONFIG_NAME}${line === undefined ? '' : `:${line}`}: ${reason}`),
  );
  const cfg: ProjectConfig = { file, roleAliases: {}, fieldMappings: {}, fieldRoles: {}, reading: {} };
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
  const fr = (doc as Record<string, unknown>).fieldRoles;
  if (fr !== undefined) {
    if (fr === null || typeof fr !== 'object' || Array.isArray(fr))
      throw new ProjectConfigError(`${where('fieldRoles')} must be an object of field path → role, like {"worked_solution": "answer"}`);
    for (const [path, role] of Object.entries(fr)) {
      if (typeof role !== 'string' || !FIELD_ROLES.includes(role as FieldRoleName))
        throw new ProjectConfigError(`${where('fieldRoles')}: "${path}" is given ${JSON.stringify(role)}; use one of ${FIELD_ROLES.join(', ')}`);
      if (!FIELD_PATH_RE.test(path))
        throw new ProjectConfigError(
          `${where('fieldRoles')}: "${path}" is not a field path (keys joined by ".", "[]" after a key for each element of its list, a field last: "output.text", "messages[].cot")`,
        );
      if (path.includes('[]') && !LIST_PATH_ROLES.includes(role as FieldRoleName))
        throw new ProjectConfigError(
          `${where('fieldRoles')}: "${path}" is a field of list elements (turns): it can be ${LIST_PATH_ROLES.join(', ')} (a turn's own role says whether its text is the prompt or the answer)`,
        );
      cfg.fieldRoles[path] = role as FieldRoleName;
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

/**
 * Whether a change of the `eagle3prep.jsonc` at `configFile` (created, edited or deleted) can change
 * how `datasetFile` is read: the config covers its own folder and below, and the nearest one wins
 * ({@link findProjectConfig}), so it applies when the dataset is in that folder or below it and no
 * folder between them (the dataset's own included, the config's excluded) holds another
 * `eagle3prep.jsonc`. Reads only the existence of those files (works for a deleted `configFile`).
 * Whether the change then makes the dataset's output stale is `read/appliedConfig.ts`'s question.
 */
export function configAppliesTo(configFile: string, datasetFile: string): boolean {
  const configDir = dirname(resolve(configFile));
  let dir = dirname(resolve(datasetFile));
  const rel = relative(configDir, dir);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return false;
  while (dir !== configDir) {
    if (existsSync(join(dir, PROJECT_CONFIG_NAME))) return false;
    const up = dirname(dir);
    if (up === dir) return false;
    dir = up;
  }
  return true;
}

const cache = new Map<string, { stamp: string; cfg: ProjectConfig }>();

/**
 * Reads the `eagle3prep.jsonc` that applies to `datasetFile` (see {@link findProjectConfig}),
 * cached by path and file stamp (read/fileStamp.ts: change and modification times, size, inode).
 * @returns undefined when no such file exists, or when it maps nothing and sets no "reading" choice.
 * @throws ProjectConfigError when the file is unreadable or invalid (see {@link parseProjectConfig}).
 */
export function loadProjectConfigFor(datasetFile: string): ProjectConfig | undefined {
  const file = findProjectConfig(datasetFile);
  if (!file) return undefined;
  let cfg: ProjectConfig;
  try {
    const stamp = fileStamp(statSync(file));
    const hit = cache.get(file);
    if (hit && hit.stamp === stamp) cfg = hit.cfg;
    else {
      cfg = parseProjectConfig(readFileSync(file, 'utf8'), file);
      cache.set(file, { stamp, cfg });
    }
  } catch (e) {
    if (e instanceof ProjectConfigError) throw e;
    throw new ProjectConfigError(`cannot read ${file}: ${(e as Error).message}`);
  }
  return Object.keys(cfg.roleAliases).length || Object.keys(cfg.fieldMappings).length || Object.keys(cfg.fieldRoles).length || Object.keys(cfg.reading).length
    ? cfg
    : undefined;
}
