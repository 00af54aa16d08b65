/**
 * What an `eagle3prep.jsonc` says about one dataset file, and whether a change of it can change
 * that file's records: the one rule the Datasets view, the dashboard, the hover and Problems use
 * to decide that an output is stale because of the project config.
 *
 * A run records, per file, the config that applied to it ({@link appliedConfigOf}, stored in
 * report.json `files[].input.project_config`). A later check compares it with what applies now
 * ({@link configChangeFor}):
 * - the `reading` choices, the `fieldRoles` and the matching `mappings` entry (formats/mapping.ts)
 *   change how the file's rows are read: any difference makes the output stale;
 * - a role alias or a field mapping changes a row only when the row holds that spelling or that
 *   field: a difference makes the output stale only when the file's text holds the spelling
 *   (case-insensitive, as aliases match) or the field name as a JSON key. A quick fix that adds
 *   `"narrator": "assistant"` to a workspace-wide config therefore stales the file with narrators
 *   and no other.
 *
 * The text search is conservative (a spelling that occurs in a message's content counts too): it
 * may call an output stale that is not, never the other way round.
 *
 * Pure Node (no `vscode`).
 */
import * as fs from 'node:fs';
import { mappingFor } from './mapping';
import type { FieldMapping } from '../read/mappingFile';
import { findProjectConfig, loadProjectConfigFor, type ReadingSettings } from '../read/projectConfig';
import { fileStamp } from '../read/fileStamp';

/** The parts of an `eagle3prep.jsonc` that apply to one file (all empty when none applies). */
export interface AppliedConfig {
  /** The config file ('' when none). */
  file: string;
  /** Lower-case spelling → role. */
  roleAliases: Record<string, string>;
  /** Source top-level field → known field. */
  fieldMappings: Record<string, string>;
  /** Field path → role ("fieldRoles"); absent in reports written before it existed. */
  fieldRoles?: Record<string, string>;
  reading: ReadingSettings;
  /** The `mappings` entry whose glob matches the file, if any. */
  mapping?: FieldMapping;
}

/**
 * The config that applies to `datasetFile` now: the nearest `eagle3prep.jsonc`'s aliases, field
 * mappings and reading choices, and its `mappings` entry for the file (`explicitMapping`: a
 * `--mapping` file instead). Never throws: an unreadable or invalid config yields
 * `{ file, error }` (a run would fail on it; the file's output is then stale).
 */
export function appliedConfigOf(datasetFile: string, explicitMapping?: string): AppliedConfig | { file: string; error: string } {
  const file = findProjectConfig(datasetFile) ?? '';
  try {
    const cfg = loadProjectConfigFor(datasetFile);
    const m = mappingFor(datasetFile, explicitMapping);
    return {
      file,
      roleAliases: { ...(cfg?.roleAliases ?? {}) },
      fieldMappings: { ...(cfg?.fieldMappings ?? {}) },
      ...(cfg && Object.keys(cfg.fieldRoles).length ? { fieldRoles: { ...cfg.fieldRoles } } : {}),
      reading: { ...(cfg?.reading ?? {}) },
      ...(m ? { mapping: m.entry } : {}),
    };
  } catch (e) {
    return { file, error: (e as Error).message };
  }
}

/**
 * JSON with object keys sorted at every level, so two values compare equal as text when they are equal
 * as data (`{"a":1,"b":2}` and `{"b":2,"a":1}` give one text); `undefined` gives `null`.
 */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** The keys of two maps whose values differ (added, removed or changed). */
function changedKeys(a: Record<string, string>, b: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]).sort();
}

/** What changed between the config a run used for a file and the one that applies now. */
export interface ConfigChange {
  /** Changes that apply to the file whatever its rows hold (reading choices, mapping entry, a config that cannot be read). */
  always: string[];
  /** Role-alias spellings added, removed or re-mapped (lower case). */
  aliases: string[];
  /** Field-mapping source fields added, removed or re-mapped. */
  fields: string[];
}

/**
 * The difference between the config recorded by a run (`run`) and the one that applies now
 * (`now`); all lists empty when they say the same for this file.
 */
export function configChange(run: AppliedConfig, now: AppliedConfig | { file: string; error: string }): ConfigChange {
  if ('error' in now) return { always: [now.error], aliases: [], fields: [] };
  const always: string[] = [];
  if (canonical(run.reading) !== canonical(now.reading)) always.push(`"reading" (run: ${canonical(run.reading)}, now: ${canonical(now.reading)})`);
  if (canonical(run.mapping ?? null) !== canonical(now.mapping ?? null)) always.push('the "mappings" entry for this file');
  // A field's role changes what its rows train wherever the field is: any difference counts (conservative).
  if (canonical(run.fieldRoles ?? {}) !== canonical(now.fieldRoles ?? {}))
    always.push(`"fieldRoles" (run: ${canonical(run.fieldRoles ?? {})}, now: ${canonical(now.fieldRoles ?? {})})`);
  return { always, aliases: changedKeys(run.roleAliases, now.roleAliases), fields: changedKeys(run.fieldMappings, now.fieldMappings) };
}

const textHitCache = new Map<string, { stamp: string; hits: Set<string> }>();

/**
 * Which of `needles` occur in the file's text (aliases case-insensitively, fields as `"name"`),
 * read in 4 MB chunks (a needle across two chunks is found: the chunks overlap). Cached by file and
 * its stamp (read/fileStamp.ts: change and modification times, size, inode). Never throws: an unreadable file holds every needle (conservative).
 */
export function textHolds(file: string, aliases: readonly string[], fields: readonly string[]): { aliases: string[]; fields: string[] } {
  const needles = [...aliases.map((a) => `a:${a}`), ...fields.map((f) => `f:${f}`)];
  if (!needles.length) return { aliases: [], fields: [] };
  let fd: number | undefined;
  try {
    const st = fs.statSync(file);
    const stamp = `${fileStamp(st)}:${needles.join('\u0000')}`;
    const hit = textHitCache.get(file);
    let hits: Set<string>;
    if (hit && hit.stamp === stamp) hits = hit.hits;
    else {
      hits = new Set();
      const lowerAliases = aliases.map((a) => a.toLowerCase());
      const quoted = fields.map((f) => JSON.stringify(f));
      const overlap = Math.max(0, ...lowerAliases.map((a) => Buffer.byteLength(a)), ...quoted.map((q) => Buffer.byteLength(q)));
      fd = fs.openSync(file, 'r');
      const buf = Buffer.alloc(4 * 1024 * 1024);
      let pos = 0;
      let carry = '';
      for (;;) {
        const n = fs.readSync(fd, buf, 0, buf.length, pos);
        if (n <= 0) break;
        pos += n;
        const chunk = carry + buf.toString('utf8', 0, n);
        const lower = chunk.toLowerCase();
        lowerAliases.forEach((a, i) => {
          if (lower.includes(a)) hits.add(`a:${aliases[i]}`);
        });
        quoted.forEach((q, i) => {
          if (chunk.includes(q)) hits.add(`f:${fields[i]}`);
        });
        if (hits.size === needles.length) break;
        carry = chunk.slice(Math.max(0, chunk.length - overlap));
      }
      textHitCache.set(file, { stamp, hits });
    }
    return { aliases: aliases.filter((a) => hits.has(`a:${a}`)), fields: fields.filter((f) => hits.has(`f:${f}`)) };
  } catch {
    return { aliases: [...aliases], fields: [...fields] };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Why the project config makes the output of `datasetFile` stale, or [] when the change (if
 * any) cannot change its records: `run` is what the run recorded, `now` what applies now
 * ({@link appliedConfigOf}). Alias and field changes count only when the file's text holds them
 * ({@link textHolds}).
 */
export function configStaleReasons(datasetFile: string, run: AppliedConfig, now: AppliedConfig | { file: string; error: string }): string[] {
  const c = configChange(run, now);
  const name = now.file || run.file || 'eagle3prep.jsonc';
  const out = c.always.map((w) => `${name} changed since the run: ${w}`);
  const held = textHolds(datasetFile, c.aliases, c.fields);
  if (held.aliases.length) out.push(`${name} changed since the run: role alias ${held.aliases.map((a) => JSON.stringify(a)).join(', ')}, used in this file`);
  if (held.fields.length)
    out.push(`${name} changed since the run: field mapping ${held.fields.map((f) => JSON.stringify(f)).join(', ')}, a field of this file`);
  return out;
}
