/**
 * Field-mapping files: for shapes the detector cannot know, a JSONC file says
 * where a file's turns and fields are (in the spirit of axolotl's
 * `message_property_mappings` and LLaMA-Factory's `dataset_info.json` columns/tags).
 *
 * ```jsonc
 * {
 *   "mappings": [{
 *     "files": "support/*.jsonl",          // glob, relative to the mapping file's folder (or a file name)
 *     "turns": "dialogue",                  // field (dotted path) holding the list of turns
 *     "role": "speaker", "content": "utterance",
 *     "roles": {"customer": "user", "agent": "assistant"},
 *     "system": "sys_prompt", "tools": "functions",
 *     "reasoning": "thoughts", "tool_calls": "calls", "train": "use_for_training",
 *     "id": "ticket_id"
 *   }]
 * }
 * ```
 *
 * A mapped row is rewritten to `{"$mapping", "messages", "system"?, "tools"?,
 * "id"?, "$unread"?}` (`$unread`: the source fields the entry does not name,
 * reported as unread fields unless they are known metadata) and read by the `mapped` shape handler (same turn rules as every
 * shape: roles through `roles` then the built-in aliases, unknown roles errored).
 * The file is read and checked by `read/mappingFile.ts` (the one JSONC parser of `read/projectConfig.ts`).
 */
import * as path from 'node:path';
import { findProjectConfig, PROJECT_CONFIG_NAME } from '../read/projectConfig';
import { loadMappingFile, type FieldMapping } from '../read/mappingFile';
import { findConversations } from './discovery';
import { isMetadataField } from './fields';
import { mapRole } from './roles';
import { parseJsonLimited } from '../jsonDepth';

/** The workspace mapping file name, looked for beside the input and in its parent folders (the project config's file, `projectConfig.ts`). */
export const WORKSPACE_MAPPING_FILE = PROJECT_CONFIG_NAME;

/**
 * The mapping entry for a dataset file: from `explicit` (a mapping file given
 * with `--mapping`) when set, else from the nearest `eagle3prep.jsonc` in the
 * file's folder or a parent folder. The first entry whose glob matches the
 * file's path relative to the mapping file's folder (or its base name) wins.
 * @returns undefined when no mapping applies
 * @throws Error for a mapping file that does not parse or check
 */
export function mappingFor(file: string, explicit?: string): { entry: FieldMapping; source: string } | undefined {
  const abs = path.resolve(file);
  const candidates: string[] = [];
  if (explicit) candidates.push(path.resolve(explicit));
  else {
    const nearest = findProjectConfig(abs);
    if (nearest) candidates.push(nearest);
  }
  for (const c of candidates) {
    const mf = loadMappingFile(c);
    const rel = path.relative(path.dirname(mf.path), abs).split(path.sep).join('/');
    const i = mf.mappings.findIndex((m) => (Array.isArray(m.files) ? m.files : [m.files]).some((g) => globMatch(g, rel) || globMatch(g, path.basename(abs))));
    if (i >= 0) return { entry: mf.mappings[i], source: `${mf.path}#${i + 1}` };
  }
  return undefined;
}

/** `*` any characters but `/`, `**` anything, `?` one character; the whole path must match. */
export function globMatch(glob: string, p: string): boolean {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`).test(p);
}

function isEmptyValue(v: unknown): boolean {
  return (
    v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && Object.keys(v).length === 0)
  );
}

function get(row: unknown, dotted: string): unknown {
  let v: unknown = row;
  for (const k of dotted.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/**
 * Rewrite one row with a mapping entry into the canonical mapped shape
 * `{"$mapping": source, "messages": [{role, content, reasoning_content?, tool_calls?, trainable?}], system?, tools?, id?}`.
 * A row whose `turns` field is missing is returned unchanged (other shapes may still read it).
 */
export function applyMapping(value: unknown, m: FieldMapping, source: string): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  let turns = get(value, m.turns);
  if (typeof turns === 'string') {
    try {
      turns = parseJsonLimited(turns);
    } catch {
      /* left as is: the mapped handler reports it */
    }
  }
  if (turns === undefined) return value;
  const roleKey = m.role ?? 'role';
  const contentKey = m.content ?? 'content';
  // Fields the mapping does not name are reported as unread (fields.ts), never dropped in silence.
  const unread: string[] = [];
  const turnLabel = `${m.turns}[].`;
  const turnRead = new Set([roleKey, contentKey, m.reasoning, m.tool_calls, m.train, 'tool_call_id', 'name'].filter((k): k is string => k !== undefined));
  const messages = Array.isArray(turns)
    ? turns.map((t) => {
        if (t === null || typeof t !== 'object' || Array.isArray(t)) return t;
        const turn = t as Record<string, unknown>;
        for (const [k, v] of Object.entries(turn)) {
          if (!turnRead.has(k) && !isMetadataField(k, v) && !isEmptyValue(v) && !unread.includes(turnLabel + k)) unread.push(turnLabel + k);
        }
        const spelled = turn[roleKey];
        const out: Record<string, unknown> = {
          role: typeof spelled === 'string' && m.roles && Object.prototype.hasOwnProperty.call(m.roles, spelled) ? m.roles[spelled] : spelled,
          content: turn[contentKey] ?? null,
        };
        if (m.reasoning && turn[m.reasoning] !== undefined) out.reasoning_content = turn[m.reasoning];
        if (m.tool_calls && turn[m.tool_calls] !== undefined) out.tool_calls = turn[m.tool_calls];
        if (m.train && (turn[m.train] === false || turn[m.train] === 0)) out.trainable = false;
        for (const k of ['tool_call_id', 'name']) if (typeof turn[k] === 'string') out[k] = turn[k];
        return out;
      })
    : turns;
  const rowRead = new Set([m.turns, m.system, m.tools, m.id ?? 'id', 'generation'].filter((k): k is string => k !== undefined).map((k) => k.split('.')[0]));
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!rowRead.has(k) && !isMetadataField(k, v) && !isEmptyValue(v)) unread.push(k);
  }
  const row: Record<string, unknown> = { $mapping: source, messages };
  if (unread.length) row.$unread = unread;
  if (m.system && get(value, m.system) !== undefined) row.system = get(value, m.system);
  if (m.tools && get(value, m.tools) !== undefined) row.tools = get(value, m.tools);
  const id = m.id ? get(value, m.id) : (value as Record<string, unknown>).id;
  if (id !== undefined) row.id = id;
  // What `generate` adds to a row (its token ids, outcome) survives the mapping (generate/generatedIds.ts).
  const g = (value as Record<string, unknown>).generation;
  if (g !== undefined) row.generation = g;
  return row;
}

/**
 * A suggested mapping entry for a row no shape recognizes, from the first list
 * of turn objects found in it (`discovery.ts`): its path (dotted, list indexes
 * as numbers), its speaker and text keys, and a `roles` entry for every
 * speaker spelling that is not a known role (to fill in; known spellings need
 * none). Falls back to the first list of objects with a key holding short
 * repeated strings (the speaker) and the longest text key. The entry is shown
 * only when it reads the row ({@link mappingReadsRow}).
 * @returns undefined when the row has no list of objects, or no entry would read it
 */
export function suggestMappingEntry(row: unknown, fileName: string): FieldMapping | undefined {
  const e = candidateMappingEntry(row, fileName);
  return e && mappingReadsRow(row as Record<string, unknown>, e) ? e : undefined;
}

/**
 * Whether a suggested entry reads the row it was made from, so an error never shows a mapping that would fail
 * (issue 20): its `turns` path holds a list of objects; its speaker key is not itself a role name (rows keyed
 * by role, `{"human": …, "assistant": …}`, hold text under such keys, not speakers) and holds speaker-like
 * values in every turn (strings of at most 40 characters, at most 8 distinct, repeating when there are 3 turns
 * or more); every speaker is a known role, one the entry maps, or one left to fill in; and some turn has text
 * under its content key.
 */
export function mappingReadsRow(row: Record<string, unknown>, e: FieldMapping): boolean {
  let turns = get(row, e.turns);
  if (typeof turns === 'string') {
    try {
      turns = parseJsonLimited(turns);
    } catch {
      return false;
    }
  }
  if (!Array.isArray(turns) || turns.length === 0 || !turns.every((t) => t !== null && typeof t === 'object' && !Array.isArray(t))) return false;
  const list = turns as Record<string, unknown>[];
  const roleKey = e.role ?? 'role';
  const contentKey = e.content ?? 'content';
  if (roleKey === contentKey || mapRole(roleKey) !== undefined || mapRole(contentKey) !== undefined) return false;
  const spellings = list.map((t) => t[roleKey]);
  if (!spellings.every((v): v is string => typeof v === 'string' && v.trim() !== '' && v.length <= 40)) return false;
  const distinct = new Set(spellings);
  if (distinct.size > 8 || (list.length >= 3 && distinct.size === list.length)) return false;
  const known = (r: string) => mapRole(r) !== undefined || (e.roles !== undefined && Object.prototype.hasOwnProperty.call(e.roles, r));
  if (![...distinct].every(known)) return false;
  return list.some((t) => typeof t[contentKey] === 'string' && (t[contentKey] as string).trim() !== '');
}

/** The entry {@link suggestMappingEntry} proposes before it is checked. */
function candidateMappingEntry(row: unknown, fileName: string): FieldMapping | undefined {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) return undefined;
  const c = findConversations(row as Record<string, unknown>).find((x) => x.kind === 'turns' || x.kind === 'turn-lists');
  if (c && c.roleKey && c.textKey) {
    const path = c.kind === 'turn-lists' ? `${c.path.replace(/\[\]$/, '')}[0]` : c.path;
    const entry: FieldMapping = { files: fileName, turns: path.replace(/\[(\d+)\]/g, '.$1'), role: c.roleKey, content: c.textKey };
    if (c.unknownRoles.length) entry.roles = Object.fromEntries(c.unknownRoles.map((r) => [r, 'user|assistant|tool|system (fill in)']));
    return entry;
  }
  const r = row as Record<string, unknown>;
  const turnsKey = Object.keys(r).find(
    (k) => Array.isArray(r[k]) && (r[k] as unknown[]).length > 0 && (r[k] as unknown[]).every((t) => t !== null && typeof t === 'object' && !Array.isArray(t)),
  );
  if (!turnsKey) return undefined;
  const turns = r[turnsKey] as Record<string, unknown>[];
  const keys = [...new Set(turns.flatMap((t) => Object.keys(t)))];
  const strVals = (k: string) => turns.map((t) => t[k]).filter((v): v is string => typeof v === 'string');
  const roleKey = keys
    .filter((k) => strVals(k).length === turns.length)
    .sort((a, b) => new Set(strVals(a)).size - new Set(strVals(b)).size || avgLen(strVals(a)) - avgLen(strVals(b)))[0];
  const contentKey = keys
    .filter((k) => k !== roleKey && strVals(k).length > 0)
    .sort((a, b) => strVals(b).length - strVals(a).length || avgLen(strVals(b)) - avgLen(strVals(a)))[0];
  if (!roleKey || !contentKey) return undefined;
  const unknown = [...new Set(strVals(roleKey))].filter((s) => mapRole(s) === undefined).slice(0, 8);
  const entry: FieldMapping = { files: fileName, turns: turnsKey, role: roleKey, content: contentKey };
  if (unknown.length) entry.roles = Object.fromEntries(unknown.map((s) => [s, 'user|assistant|tool|system (fill in)']));
  return entry;
}

/** {@link suggestMappingEntry} as one line of JSON (`{"mappings": [{…}]}`), for error messages; undefined when there is none. */
export function suggestMappingLine(row: unknown, fileName: string): string | undefined {
  const e = suggestMappingEntry(row, fileName);
  return e ? JSON.stringify({ mappings: [e] }) : undefined;
}

/** {@link suggestMappingEntry} as a commented, indented `eagle3prep.jsonc` text; undefined when there is none. */
export function suggestMapping(row: unknown, fileName: string): string | undefined {
  const e = suggestMappingEntry(row, fileName);
  if (!e) return undefined;
  return `// ${WORKSPACE_MAPPING_FILE} (beside the data, or pass it with prepare --mapping FILE); fill in the roles marked "(fill in)"\n${JSON.stringify({ mappings: [e] }, null, 2)}`;
}

function avgLen(v: string[]): number {
  return v.length ? v.reduce((a, s) => a + s.length, 0) / v.length : 0;
}
