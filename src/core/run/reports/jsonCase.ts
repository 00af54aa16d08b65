/**
 * The one naming boundary of the JSON the project writes: in memory the
 * TypeScript shapes are camelCase; every JSON document written to disk
 * (`report.json`) or printed by the CLI (`--json`) is snake_case with a
 * `schema_version`. Keys that hold data rather than field names (template
 * kwargs, drop reason and note codes) are copied as they are.
 */

/** `rowsRead` → `rows_read`, `mtimeMs` → `mtime_ms`. */
export function snakeKey(k: string): string {
  return k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `rows_read` → `rowsRead`. */
export function camelKey(k: string): string {
  return k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Fields whose value is a map keyed by data (codes, user variables) or user data: never renamed inside. */
const OPAQUE = new Set([
  'templateKwargs',
  'template_kwargs',
  'dropped',
  'notes',
  'errorReasons',
  'error_reasons',
  'unreadFields', // keyed by source field paths
  'unread_fields',
  'failed',
  'extraBody',
  'extra_body',
  'tools',
  'messages',
  'roleAliases', // input.project_config: role-alias spellings, source field names, a mappings entry
  'role_aliases',
  'fieldMappings',
  'field_mappings',
  'fieldRoles', // field paths → roles
  'field_roles',
  'mapping',
]);

function convert(v: unknown, key: (k: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => convert(x, key));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x === undefined) continue;
    out[key(k)] = OPAQUE.has(k) ? x : convert(x, key);
  }
  return out;
}

/** A camelCase value as snake_case JSON data, with `schema_version` first. */
export function toSnakeJson(value: object, schemaVersion: number): Record<string, unknown> {
  return { schema_version: schemaVersion, ...(convert(value, snakeKey) as Record<string, unknown>) };
}

/** snake_case JSON data back to the camelCase shape (`schema_version` left out). */
export function fromSnakeJson<T>(value: Record<string, unknown>): T {
  const { schema_version: _v, ...rest } = value;
  return convert(rest, camelKey) as T;
}
