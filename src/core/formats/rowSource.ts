/**
 * The one row source: a dataset file's rows with its `eagle3prep.jsonc` applied, once and in one
 * order, for every job that reads rows (`prepare`, `inspect`, the Problems scan, the planned rows of a
 * file read whole, the hover and the mask view):
 * 1. the file's `mappings` entry (formats/mapping.ts), or a `--mapping` file's;
 * 2. the field renames, field roles and role aliases of the nearest config (read/projectConfig.ts);
 * 3. the reading choices (`reading`: conversation lists, answers, OpenAssistant paths) as the
 *    {@link NormalizeOptions} the normalizer takes, a run's `--answers` before the config's.
 *
 * Pure Node (no `vscode`).
 */
import { parseLineBytes, readRows, type RawRow } from '../read/readers';
import { loadProjectConfigFor, type FieldRoleName, type ProjectConfig, type ReadingSettings } from '../read/projectConfig';
import { ASSIGNED_ROLES_KEY, type AssignedRoles } from './fieldRoles';
import type { NormalizeOptions } from './base';
import type { AnswerMode } from '../types';
import { applyMapping, mappingFor } from './mapping';
import type { FieldMapping } from '../read/mappingFile';

/** What `eagle3prep.jsonc` (and a `--mapping` file) says about one dataset file. */
export interface RowConfig {
  /** The nearest `eagle3prep.jsonc` with something in it, if any. */
  readonly project: ProjectConfig | undefined;
  /** The field-mapping entry that matches the file, and where it is (`file#n`). */
  readonly mapping: { entry: FieldMapping; source: string } | undefined;
  /** The reading choices, as normalization takes them. */
  readonly reading: NormalizeOptions;
  /**
   * A key that changes when any of the above does ('' when nothing applies and no `answers` was given): the
   * record view's cache key part for the config.
   */
  readonly key: string;
  /** One parsed row with the mapping entry alone applied (step 1; the row as it is when no entry matches). */
  map(value: unknown): unknown;
  /**
   * One parsed row with the config applied: the mapping entry (unless `mapped`: already applied), then the
   * project config. Values that are not objects are returned as they are.
   */
  apply(value: unknown, mapped?: boolean): unknown;
}

/** Options of {@link rowConfigFor}. */
export interface RowConfigOptions {
  /** A field-mapping file to use instead of the `mappings` of the nearest `eagle3prep.jsonc`; `false`: none. */
  mapping?: string | false;
  /** The run's `--answers`, before the config's `reading.answers`. */
  answers?: AnswerMode;
  /** The project config, when the caller has it already (otherwise the nearest one is loaded). */
  project?: ProjectConfig;
}

/**
 * The config that applies to the rows of `file`.
 * @throws ProjectConfigError for an unreadable or invalid `eagle3prep.jsonc`; Error naming a mapping file that does not parse
 */
export function rowConfigFor(file: string, opts: RowConfigOptions = {}): RowConfig {
  const project = opts.project ?? loadProjectConfigFor(file);
  const mapping = opts.mapping === false ? undefined : mappingFor(file, opts.mapping);
  const reading = readingOptions(project?.reading, { answers: opts.answers });
  const key =
    mapping || project
      ? JSON.stringify([mapping?.entry ?? null, project?.roleAliases ?? null, project?.fieldMappings ?? null, project?.fieldRoles ?? null, reading])
      : opts.answers
        ? JSON.stringify(reading)
        : '';
  const data: RowConfigData = { project, mapping };
  return {
    project,
    mapping,
    reading,
    key,
    map: (value: unknown): unknown => mapRow(value, data),
    apply: (value: unknown, mapped = false): unknown => (mapped ? applyProjectConfig(value, project) : applyRowConfig(value, data)),
  };
}

/** `value` with `data`'s mapping entry applied (as it is without one). */
function mapRow(value: unknown, data: RowConfigData | undefined): unknown {
  const mapping = data?.mapping;
  return mapping ? applyMapping(value, mapping.entry, mapping.source) : value;
}

/**
 * What {@link RowConfig.apply} does to a row not mapped yet, from its {@link RowConfigData}: the mapping entry, then the
 * project config. One function for the reading thread and the pool workers that parse rows sent unparsed ({@link parsedRow}).
 */
function applyRowConfig(value: unknown, data: RowConfigData | undefined): unknown {
  return applyProjectConfig(mapRow(value, data), data?.project);
}

/**
 * What {@link RowConfig.apply} applies to a row, as plain data (it crosses to a pool worker with the rows it sent
 * unparsed, `RawRow.raw`): the mapping entry and the project config. Undefined when nothing applies.
 */
export interface RowConfigData {
  project?: ProjectConfig;
  mapping?: { entry: FieldMapping; source: string };
}

/** `config`'s {@link RowConfigData}; undefined when neither a mapping entry nor a project config applies. */
export function rowConfigData(config: RowConfig): RowConfigData | undefined {
  if (!config.project && !config.mapping) return undefined;
  return { ...(config.project ? { project: config.project } : {}), ...(config.mapping ? { mapping: config.mapping } : {}) };
}

/**
 * A row read unparsed (`RawRow.raw`) parsed as the reader would have parsed it (read/readers `parseLineBytes`), then
 * with the config applied as {@link configuredRows} applies it ({@link RowConfig.apply}, from its {@link RowConfigData}).
 * Any other row is returned as it is.
 */
export function parsedRow<R extends Pick<RawRow, 'line' | 'element' | 'value' | 'error' | 'raw' | 'truncated'>>(
  row: R,
  config: RowConfigData | undefined,
): Pick<RawRow, 'line' | 'element' | 'value' | 'error'> {
  if (!row.raw) return row;
  const parsed = parseLineBytes(row.raw, row.line, 0, row.truncated);
  if (parsed.error !== undefined) return { line: row.line, error: parsed.error };
  return { line: row.line, value: applyRowConfig(parsed.value, config) };
}

/**
 * The rows of `file` as the readers give them (read/readers), each parsed row with `config` applied
 * ({@link RowConfig.apply}); rows that did not parse are passed on as they are, and so are rows read unparsed
 * (`opts.objectLines`, read/readers `ReadOptions`: {@link parsedRow} parses them and applies the config later).
 * @throws what `readRows` throws; what the config's application throws on a row
 */
export async function* configuredRows(
  file: string,
  config: RowConfig,
  opts: { signal?: AbortSignal; objectLines?: { raw: boolean } } = {},
): AsyncGenerator<RawRow> {
  for await (const row of readRows(file, { signal: opts.signal, objectLines: opts.objectLines })) {
    yield row.error === undefined && row.raw === undefined ? { ...row, value: config.apply(row.value) } : row;
  }
}

/**
 * The rows of `file` with its field-mapping entry alone applied (step 1 of the module comment: the nearest
 * `eagle3prep.jsonc`'s `mappings`, or the `mapping` file's; `false`: none), for readers that apply the rest
 * themselves or not at all (`generate` reading prompts, the Problems scan's suggestions).
 * @throws Error naming a mapping file that does not parse (at the first row); what `readRows` throws
 */
export async function* mappedRows(file: string, opts: { signal?: AbortSignal; mapping?: string | false } = {}): AsyncGenerator<RawRow> {
  const mapping = opts.mapping === false ? undefined : mappingFor(file, opts.mapping);
  for await (const row of readRows(file, { signal: opts.signal })) {
    yield mapping && row.error === undefined ? { ...row, value: applyMapping(row.value, mapping.entry, mapping.source) } : row;
  }
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

/**
 * The field each text role is read from once assigned: the name every shape reading such a field looks at first
 * (`formats/shapes-instruct.ts` PROMPT_KEYS / RESPONSE_KEYS / row reasoning, `rowEnd.ts` system keys); inside
 * list elements (turns), `reasoning_content`.
 */
const ROLE_FIELD: Record<'prompt' | 'answer' | 'reasoning' | 'system', string> = {
  prompt: 'prompt',
  answer: 'response',
  reasoning: 'reasoning_content',
  system: 'system_prompt',
};

/** Keys naming a turn's speaker (the same as `formats/normalize.ts` reads). */
const ROLE_KEYS = ['role', 'from'];

/**
 * Applies a project config to one parsed row, before normalization:
 * 1. `fieldMappings`: a top-level field `from` is renamed to `to` (when the row has `from` and
 *    not already `to`);
 * 2. `fieldRoles` ({@link applyFieldRoles}): a field given a text role is read from the field the shapes
 *    read that role from first (`response`, `prompt`, `reasoning_content`, `system_prompt`); a `label` or
 *    `metadata` field is taken out of the row (never read as text);
 * 3. `roleAliases`: in every top-level array of turn objects, a `role` / `from` string whose
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
  if (Object.keys(cfg.fieldRoles ?? {}).length) {
    const roled = applyFieldRoles(out, cfg.fieldRoles);
    if (roled !== out) out = roled;
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
        // Own keys only: a role spelled like an Object property (`constructor`, `__proto__`) is not an alias (it would
        // read an inherited function or object, which no row can hold, and which cannot cross to a pool worker).
        const spelled = (t[rk] as string).trim().toLowerCase();
        const role = Object.hasOwn(cfg.roleAliases, spelled) ? cfg.roleAliases[spelled] : undefined;
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

/** The key a field displaced by an assigned one is kept under (never read; reported as unread by its own name). */
const displacedKey = (name: string) => `$displaced:${name}`;

/**
 * Applies `"fieldRoles"` to one row (a copy when anything changes; the input is not modified), and records what
 * it did under `$fieldRoles` ({@link AssignedRoles}, read by `formats/normalize.ts` and `formats/fieldRoles.ts`):
 * - a path without `[]` given `prompt` / `answer` / `reasoning` / `system` is moved to the top-level field the
 *   shapes read that role from first (`prompt`, `response`, `reasoning_content`, `system_prompt`); a field already
 *   there that no role names is displaced (kept aside, reported as unread under its own name: it is not what the
 *   config says is the answer);
 * - a path given `label` or `metadata` is taken out of the row (a label is named in the evidence with its length);
 * - a path into list elements (`messages[].cot`) given `reasoning` is renamed `reasoning_content` in each element
 *   (one already there is displaced); `label` / `metadata` remove it from each element.
 * Paths the row does not have are left alone and listed (`unmatched`: noted `field_role_unmatched`, so a
 * misspelled path is seen, never silently ignored).
 */
export function applyFieldRoles(row: Record<string, unknown>, roles: Readonly<Record<string, FieldRoleName>>): Record<string, unknown> {
  let out = row;
  const copy = () => {
    if (out === row) out = { ...row };
  };
  const rec: AssignedRoles & { unmatched: string[] } = { renamed: {}, roles: {}, hidden: {}, displaced: [], unmatched: [] };
  const taken: [string, FieldRoleName, unknown][] = [];
  for (const [path, role] of Object.entries(roles)) {
    const segs = path.split('.');
    if (path.includes('[]')) {
      const next = rewriteElements(out, segs, (obj, key) => {
        if (!(key in obj)) return obj;
        const o = { ...obj };
        const v = o[key];
        delete o[key];
        if (role === 'reasoning' && key !== 'reasoning_content') {
          if ('reasoning_content' in o) {
            o[displacedKey('reasoning_content')] = o.reasoning_content;
            const at = `${path.slice(0, path.lastIndexOf('.') + 1)}reasoning_content`;
            if (!rec.displaced.includes(at)) rec.displaced.push(at);
          }
          o.reasoning_content = v;
        } else if (role === 'reasoning') o[key] = v;
        return o;
      });
      if (next !== out) {
        out = next;
        rec.roles[path] = role;
      } else rec.unmatched.push(path);
      continue;
    }
    // Every assigned field is taken out first, then put where its role is read: assignments never overwrite each other.
    const v = valueAtPath(out, segs);
    if (v === undefined) {
      rec.unmatched.push(path);
      continue;
    }
    copy();
    out = removeAtPath(out, segs);
    taken.push([path, role, v]);
    rec.roles[path] = role;
  }
  for (const [path, role, v] of taken) {
    if (role === 'label' || role === 'metadata') {
      rec.hidden[path] = v;
      continue;
    }
    const field = ROLE_FIELD[role];
    if (field in out) {
      // A field the shapes would read in this role that the config did not name: not it (kept aside, reported unread).
      out[displacedKey(field)] = out[field];
      delete out[field];
      rec.displaced.push(field);
    }
    out[field] = v;
    if (field !== path) rec.renamed[field] = path;
  }
  if (out === row && rec.unmatched.length === 0) return row;
  copy();
  out[ASSIGNED_ROLES_KEY] = rec;
  return out;
}

/** The value at a path of object keys, or undefined. */
function valueAtPath(row: Record<string, unknown>, segs: readonly string[]): unknown {
  let v: unknown = row;
  for (const k of segs) v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A copy of `row` without the field at a path of object keys (the objects on the way copied). */
function removeAtPath(row: Record<string, unknown>, segs: readonly string[]): Record<string, unknown> {
  const [k, ...rest] = segs;
  const o = { ...row };
  if (rest.length === 0) delete o[k];
  else if (o[k] !== null && typeof o[k] === 'object' && !Array.isArray(o[k])) o[k] = removeAtPath(o[k] as Record<string, unknown>, rest);
  return o;
}

/**
 * Rewrites, through a path whose keys may end in `[]` (each element of that list), every object holding the
 * last key with `fn(object, lastKey)`; the containers on the way are copied when something changes. A JSON
 * string holding a list on the way is left alone. Returns `value` itself when nothing changed.
 */
function rewriteElements<T>(value: T, segs: readonly string[], fn: (obj: Record<string, unknown>, key: string) => Record<string, unknown>): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const obj = value as Record<string, unknown>;
  const [seg, ...rest] = segs;
  if (rest.length === 0) return fn(obj, seg) as T;
  const each = seg.endsWith('[]');
  const key = each ? seg.slice(0, -2) : seg;
  const inner = obj[key];
  let next: unknown = inner;
  if (each && Array.isArray(inner)) {
    const list = inner.map((x) => rewriteElements(x, rest, fn));
    if (list.some((x, i) => x !== inner[i])) next = list;
  } else if (!each) next = rewriteElements(inner, rest, fn);
  return next === inner ? value : ({ ...obj, [key]: next } as T);
}
