/**
 * The Problems panel's scan of a dataset file without a tokenizer: the rows `prepare` drops or errors as it reads them,
 * found by `prepare`'s own row path stopped after reading (records/rowTrace.ts `traceRow` with `until:
 * 'conversations'`), so the codes, messages and roles are the ones `prepare` writes in problems.jsonl.
 *
 * Pure Node (no `vscode`); run in the editor's service worker (run/editor/service.ts).
 */
import * as path from 'node:path';
import { codeMeaning } from '../../codes';
import { rowConfigFor } from '../../formats/rowSource';
import type { ProjectConfig } from '../../read/projectConfig';
import { traceRow } from '../../records/rowTrace';
import type { ReadTrace } from '../../records/rowTraceTypes';
import type { DropReason } from '../../types';
import { partFateAsRead } from '../inputs/oasstRun';
import { rowKey } from '../prepare/batches';
import { scanRows, type ScannedRow } from './datasetScan';
import { filePlanOf } from './fileRows';

/** A row prepare drops or errors as it reads it (what the Problems panel lists). */
export interface RowProblem {
  /** 1-based line of the row. */
  line: number;
  /**
   * Reason code (`codes.ts`), as prepare writes it in problems.jsonl: a drop reason of `types.ts` (`unrecognized_shape`,
   * `empty_conversation`, `no_assistant_turn`, `event_chain_not_written`, …), an error code (`invalid_json`,
   * `unknown_role`, `bad_tool_calls`, …), or `errored` (bad data without a code).
   */
  code: string;
  /** The pipeline's message for the row. */
  message: string;
  /** `error` for rows that error, `warning` for rows that are dropped. */
  severity: 'error' | 'warning';
  /** For `unknown_role`: the source spelling (as written). */
  role?: string;
  /**
   * For `unrecognized_shape`: field mappings that would make the row readable — each top-level key
   * holding a list of objects, to `conversations` when its turns use `from`, else `messages`.
   */
  fieldMappings?: { from: string; to: string }[];
}

/** Result of {@link scanRowProblems}. */
export interface RowProblems {
  problems: RowProblem[];
  rowsRead: number;
  /** True when scanning stopped at `maxProblems` (more rows may be bad). */
  truncated: boolean;
  /** The project config applied, if any (its path). */
  projectConfig?: string;
}

/**
 * Reads every row of a dataset file as `prepare` does, through its row path up to the row's conversations
 * (records/rowTrace.ts `traceRow` with `until: 'conversations'`, after the project config, `eagle3prep.jsonc`), and
 * collects the rows that prepare drops or errors before any tokenizer is involved: the trace's fate, code, message
 * and role. Rows set aside for generation (prompt-only) are not problems. A file read whole (OpenAssistant flat
 * export, agent CLI event log) is read as prepare plans it (run/editor/fileRows.ts): a row inside other rows'
 * conversations is dropped with them when every one of them was dropped or errored as it was read
 * (inputs/oasstRun.ts `partFateAsRead`), else its fate needs a run. Rows dropped later for token reasons
 * (`too_long`, `no_trainable_tokens`, template errors) need a run; see the report. Problems are in row order.
 * @param opts.maxProblems stop after this many problems (default 1000).
 * @param opts.yieldEveryMs yield to the event loop (setImmediate) after this much work, ms (default 20; 0 = never).
 * @throws Error naming the file when it cannot be read; ProjectConfigError for an invalid config; the abort reason.
 */
export async function scanRowProblems(
  file: string,
  opts: { maxProblems?: number; signal?: AbortSignal; config?: ProjectConfig; yieldEveryMs?: number } = {},
): Promise<RowProblems> {
  const max = opts.maxProblems ?? 1000;
  // Rows of one read chunk are parsed back to back; yield to the event loop every few ms so an
  // extension host scanning a 1 GB file stays responsive (0 = never yield).
  const yieldEvery = opts.yieldEveryMs ?? 20;
  let lastYield = performance.now();
  const config = rowConfigFor(file, { project: opts.config });
  const base = path.basename(file);
  const plan = await filePlanOf(file, opts.signal);
  const found: { at: number; problem: RowProblem }[] = [];
  // A file read whole: the rows inside others' conversations, and the fate each row read has (by row key).
  const parts: { at: number; line: number; leaves: string[]; reason: DropReason }[] = [];
  const fates = new Map<string, ReadTrace['fate']['fate']>();
  let rowsRead = 0;
  let stopped = false;
  for await (const row of scanRows(file, { signal: opts.signal })) {
    const at = rowsRead++;
    if (yieldEvery > 0 && performance.now() - lastYield > yieldEvery) {
      await new Promise((r) => setImmediate(r));
      lastYield = performance.now();
    }
    const planned = plan?.get(rowKey(row));
    if (planned?.kind === 'part') {
      parts.push({ at, line: row.line, leaves: planned.leaves.map(rowKey), reason: planned.partReason as DropReason });
      continue;
    }
    // scanRows applied the mapping entry already (read/readers); row.value keeps it for the field-mapping suggestion.
    const value = row.error !== undefined ? undefined : planned ? planned.value : config.apply(row.value, true);
    const trace = traceRow({ ...row, value }, file, base, config.reading, {}, { until: 'conversations' });
    if (plan) fates.set(rowKey(row), trace.fate.fate);
    const problem = rowProblemOf(row, trace);
    if (problem) found.push({ at, problem });
    if (found.length >= max) {
      stopped = true;
      break;
    }
  }
  for (const p of parts)
    if (partFateAsRead(p.leaves.map((k) => fates.get(k))) === 'dropped')
      found.push({ at: p.at, problem: { line: p.line, code: p.reason, message: codeMeaning(p.reason), severity: 'warning' } });
  found.sort((a, b) => a.at - b.at);
  const problems = found.slice(0, max).map((f) => f.problem);
  return { problems, rowsRead, truncated: stopped || found.length > max, projectConfig: config.project?.file };
}

/** The problem of a row its trace (stopped after reading) drops or errors, as prepare writes it in problems.jsonl; undefined for a row read. */
function rowProblemOf(row: ScannedRow, trace: ReadTrace): RowProblem | undefined {
  const f = trace.fate;
  if (f.fate === 'dropped') {
    const p: RowProblem = { line: row.line, code: f.reason, message: f.message ?? codeMeaning(f.reason), severity: 'warning' };
    if (f.reason === 'unrecognized_shape' && row.value && typeof row.value === 'object' && !Array.isArray(row.value))
      p.fieldMappings = fieldMappingsOf(row.value as Record<string, unknown>);
    return p;
  }
  if (f.fate !== 'errored') return undefined;
  // The code prepare writes in problems.jsonl (run/reports/accounting.ts): the trace's, else `errored`.
  const p: RowProblem = { line: row.line, code: f.code ?? 'errored', message: f.message, severity: 'error' };
  if (f.role !== undefined) p.role = f.role;
  return p;
}

/** The field mappings that would make an unrecognized row readable: each top-level list of objects, to `conversations` when its turns use `from`, else `messages`. */
function fieldMappingsOf(value: Record<string, unknown>): { from: string; to: string }[] {
  return Object.entries(value)
    .filter(([, v]) => Array.isArray(v) && v.length > 0 && v.every((t) => t !== null && typeof t === 'object' && !Array.isArray(t)))
    .map(([k, v]) => ({ from: k, to: (v as Record<string, unknown>[]).some((t) => 'from' in t) ? 'conversations' : 'messages' }));
}
