/**
 * Field-mapping files (`--mapping`, and the `mappings` of `eagle3prep.jsonc`): read, parsed with the one JSONC parser
 * of the configuration files ({@link parseJsoncText}) and checked. What a mapping entry does to a row is
 * `formats/mapping.ts`'s.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Role } from '../types';
import { ALIAS_TARGET_ROLES, parseJsoncText } from './projectConfig';

/** One mapping entry. All keys but `files` and `turns` are optional. */
export interface FieldMapping {
  files: string | string[];
  turns: string;
  role?: string;
  content?: string;
  roles?: Record<string, string>;
  system?: string;
  tools?: string;
  reasoning?: string;
  tool_calls?: string;
  train?: string;
  id?: string;
}

/** A loaded mapping file. */
export interface MappingFile {
  path: string;
  mappings: FieldMapping[];
}

/**
 * Load and check a mapping file.
 * @throws Error naming the file and the line of a syntax error, or the entry and key that is wrong
 */
export function loadMappingFile(file: string): MappingFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read mapping file ${file}: ${(e as Error).message}`, { cause: e });
  }
  const doc = parseJsoncText(text, (line, reason) => new Error(`mapping file ${file}${line === undefined ? '' : `, line ${line}`}: ${reason}`));
  // The same file may carry only the project config's `roleAliases` / `fieldMappings` (projectConfig.ts): no entries then.
  const list =
    doc === undefined ? [] : Array.isArray(doc) ? doc : doc && typeof doc === 'object' ? ((doc as { mappings?: unknown }).mappings ?? []) : undefined;
  if (!Array.isArray(list)) throw new Error(`mapping file ${file}: expected {"mappings": [ … ]} (a list of entries with "files" and "turns")`);
  list.forEach((m, i) => {
    const where = `mapping file ${file}, entry ${i + 1}`;
    if (!m || typeof m !== 'object') throw new Error(`${where}: not an object`);
    const e = m as Record<string, unknown>;
    if (!(typeof e.files === 'string' || (Array.isArray(e.files) && e.files.every((f) => typeof f === 'string'))))
      throw new Error(`${where}: "files" must be a glob or a list of globs`);
    if (typeof e.turns !== 'string' || e.turns === '') throw new Error(`${where}: "turns" must name the field holding the turns`);
    for (const k of ['role', 'content', 'system', 'tools', 'reasoning', 'tool_calls', 'train', 'id']) {
      if (e[k] !== undefined && typeof e[k] !== 'string') throw new Error(`${where}: "${k}" must be a field name`);
    }
    if (e.roles !== undefined) {
      if (!e.roles || typeof e.roles !== 'object' || Array.isArray(e.roles))
        throw new Error(`${where}: "roles" must map source roles to system/user/assistant/tool`);
      for (const [k, v] of Object.entries(e.roles)) {
        if (!ALIAS_TARGET_ROLES.includes(v as Role)) throw new Error(`${where}: role "${k}" maps to "${String(v)}"; use system, user, assistant or tool`);
      }
    }
  });
  return { path: path.resolve(file), mappings: list as FieldMapping[] };
}
