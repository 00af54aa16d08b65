/** The record view's reading of a line, as `prepare` reads the row: its JSON, the row shown of a line holding several, the `eagle3prep.jsonc` that covers the file. */
import { rowConfigFor } from '../formats/rowSource';
import type { NormalizeOptions } from '../formats/base';
import { ASSIGNED_ROLES_KEY, type AssignedRoles } from '../formats/fieldRoles';
import { rowsOfLineValue } from '../read/readers';
import { describeError } from '../errors';
import { jsonTextDepth, MAX_JSON_DEPTH, tooDeepMessage } from '../jsonDepth';
import type { RecordView, RecordViewOptions, RowInput } from './recordViewTypes';

/** The line read as `prepare` reads it: the row's value, its element in the line, its reading options and where its fields came from. */
export interface ReadLine {
  value: unknown;
  element?: number;
  reading: NormalizeOptions;
  /** Normalized field → the source field it was read from (field mappings, `fieldRoles`), for turn positions. */
  fieldSource: Record<string, string>;
}

/** The line's JSON value, or undefined (the view says why) when it is not JSON or nested deeper than the readers read. */
export function parseLine(text: string, line: number, view: RecordView): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    view.message = `line ${line} is not valid JSON: ${(e as Error).message}`;
    view.warnings.push({ code: 'invalid_json', message: view.message });
    return undefined;
  }
  // As readers.ts refuses it: later steps (jsonc-parser's tree, templates) recurse once per level.
  if (text.length > MAX_JSON_DEPTH && jsonTextDepth(text) > MAX_JSON_DEPTH) {
    view.message = `line ${line}: ${tooDeepMessage()}`;
    view.warnings.push({ code: 'invalid_json', message: view.message });
    return undefined;
  }
  return { value };
}

/**
 * The row of the line as prepare reads it: the row shown of a line holding several (a list of row objects), with the
 * `eagle3prep.jsonc` that covers the file applied by the one row source (formats/rowSource.ts: its field-mapping
 * entry, then field renames, field roles and role aliases), unless `planned` (a row of a file read whole has it
 * applied already, run/fileRows.ts). Undefined (the view says why) when the config is invalid.
 */
export function readLine(value: unknown, input: RowInput, options: RecordViewOptions, view: RecordView, planned: boolean): ReadLine | undefined {
  // A line that is a list: its turns (one conversation), or several rows, as the readers read it.
  const lineRows = planned ? undefined : rowsOfLineValue(value);
  let element: number | undefined;
  if (lineRows) {
    const k = Math.min(Math.max(0, options.element ?? 0), lineRows.length - 1);
    value = lineRows[k].value;
    element = lineRows[k].element;
    if (lineRows.length > 1)
      view.warnings.push({
        code: 'line_holds_rows',
        message: `line ${input.line} holds ${lineRows.length} rows (a list of objects): the view shows the ${k === 0 ? 'first' : `row ${k + 1}`}; prepare reads each as its own row`,
      });
  }
  try {
    const config = rowConfigFor(input.file, { answers: options.answers });
    const { mapping, project } = config;
    const raw = planned ? value : config.map(value);
    const applied = planned ? value : config.apply(raw, true);
    const fieldSource: Record<string, string> = {};
    // A field mapping renames only when the row does not already have the target (projectConfig.ts).
    const had = (k: string) => !planned && raw !== null && typeof raw === 'object' && k in raw;
    for (const [from, to] of Object.entries(project?.fieldMappings ?? {})) if (!had(to)) fieldSource[to] = from;
    if (mapping && !mapping.entry.turns.includes('.')) fieldSource.messages = mapping.entry.turns;
    if (mapping?.entry.system && !mapping.entry.system.includes('.')) fieldSource.system = mapping.entry.system;
    // Fields eagle3prep.jsonc "fieldRoles" moved to where their role is read (`response` ← `worked_solution`).
    const roled = (applied as Record<string, unknown> | null)?.[ASSIGNED_ROLES_KEY] as AssignedRoles | undefined;
    for (const [to, from] of Object.entries(roled?.renamed ?? {})) if (!from.includes('.')) fieldSource[to] = from;
    return { value: applied, ...(element === undefined ? {} : { element }), reading: config.reading, fieldSource };
  } catch (e) {
    view.message = describeError(e);
    view.warnings.push({ code: 'errored', message: view.message });
    view.verdict = { fate: 'errored', code: 'errored' };
    return undefined;
  }
}
