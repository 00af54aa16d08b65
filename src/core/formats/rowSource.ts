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
import { readRows, type RawRow } from '../read/readers';
import { loadProjectConfigFor, readingOptions, applyProjectConfig, type ProjectConfig } from '../read/projectConfig';
import type { AnswerMode, NormalizeOptions } from './base';
import { applyMapping, mappingFor, type FieldMapping } from './mapping';

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
  const map = (value: unknown): unknown => (mapping ? applyMapping(value, mapping.entry, mapping.source) : value);
  return {
    project,
    mapping,
    reading,
    key,
    map,
    apply: (value: unknown, mapped = false): unknown => applyProjectConfig(mapped ? value : map(value), project),
  };
}

/**
 * The rows of `file` as the readers give them (read/readers), each parsed row with `config` applied
 * ({@link RowConfig.apply}); rows that did not parse are passed on as they are.
 * @throws what `readRows` throws; what the config's application throws on a row
 */
export async function* configuredRows(file: string, config: RowConfig, opts: { signal?: AbortSignal } = {}): AsyncGenerator<RawRow> {
  for await (const row of readRows(file, { signal: opts.signal, mapping: false })) {
    yield row.error === undefined ? { ...row, value: config.apply(row.value) } : row;
  }
}
