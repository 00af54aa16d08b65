/**
 * `prepare`'s side of the OpenAssistant file pass (`formats/oasst.ts`): a file
 * whose first rows are OpenAssistant messages is read whole (message rows kept
 * compact), its trees rebuilt, then every row is processed in file order —
 * a leaf row carries its path's conversation, a dropped message its reason,
 * other rows are processed as usual — and a message inside paths takes their
 * fate once they are settled. A whole tree goes to the shard of its root row,
 * so every row is still processed by exactly one shard.
 */
import type { Code } from '../../codes';
import type { DropReason } from '../../types';
import { EventLogFilePass } from '../../formats/eventLog';
import { OasstFilePass, type OasstPlan } from '../../formats/oasst';
import type { ProjectConfig } from '../../read/projectConfig';
import type { RawRow } from '../../read/readers';
import type { FileReport } from '../contract';
import type { RowResult } from '../../records/rowResult';
import type { ReadTrace } from '../../records/rowTraceTypes';

/**
 * A file-level pass (`OasstFilePass`, `EventLogFilePass`): keeps the rows it reads, then plans every kept row;
 * `partReason` / `partNote` are what a row inside other rows' conversations is dropped / noted with.
 */
export interface FilePass {
  add(index: number, value: unknown, line?: number): boolean;
  readonly size: number;
  plan(): Map<number, OasstPlan>;
  readonly partReason: DropReason;
  readonly partNote: Code;
  /** The log line once the plan is made. */
  describe(): string;
}

/** What the run lends the pass: its row stream, its row sender and the report of the file. */
export interface OasstRunIO {
  pass: FilePass;
  /** Rows already read (for detection), then the rest one by one (undefined at the end), eagle3prep.jsonc applied (formats/rowSource.ts). */
  head: RawRow[];
  next: () => Promise<RawRow | undefined>;
  /** The run-wide index of the next row read (the shard key). */
  nextK: () => number;
  /** Sends a row to be processed (its value is final: eagle3prep.jsonc applied as it was read, or the row the pass wrote). */
  take: (row: RawRow, k: number) => Promise<void>;
  /** Waits until every row sent is processed and applied. */
  drain: () => Promise<void>;
  /** Adds a row's result to the file's report. */
  apply: (res: RowResult) => void;
  /** Leaf rows (line/element key → held index) and the fates the run applied to them. */
  leafRows: Map<string, number>;
  leafFates: ReadonlyMap<number, RowResult['fate']>;
  rowKey: (r: { line: number; element?: number }) => string;
  rep: FileReport;
  shard: { index: number; count: number } | null;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

/** Runs one file through a file-level pass (OpenAssistant flat export, agent CLI event log; see the module comment). */
export async function runOasstFile(io: OasstRunIO): Promise<void> {
  const { pass, shard, rep } = io;
  const held: { row: RawRow; k: number }[] = [];
  const hold = (row: RawRow) => {
    io.signal?.throwIfAborted();
    held.push({ row: row.error === undefined && pass.add(held.length, row.value, row.line) ? { ...row, value: undefined } : row, k: io.nextK() });
  };
  for (const row of io.head) hold(row);
  io.head.length = 0;
  for (let row = await io.next(); row; row = await io.next()) hold(row);
  const plans = pass.plan();
  io.log?.(`  ${pass.describe()}`);
  const parts: { row: RawRow; leaves: number[] }[] = [];
  for (let i = 0; i < held.length; i++) {
    const { row, k } = held[i];
    const plan = plans.get(i);
    if (!plan) await io.take(row, k);
    else if (plan.kind === 'part') {
      if (shard) {
        rep.rowsInFile!++;
        if (held[plan.root].k % shard.count !== shard.index) continue;
      }
      parts.push({ row, leaves: plan.leaves });
    } else {
      if (plan.kind === 'path') io.leafRows.set(io.rowKey(row), i);
      await io.take({ ...row, value: plan.value }, held[plan.root].k);
    }
  }
  await io.drain();
  for (const { row, leaves } of parts) {
    const fate = partRowFate(leaves.map((l) => io.leafFates.get(l)));
    io.apply({
      line: row.line,
      ...(row.element === undefined ? {} : { element: row.element }),
      fate,
      ...(fate === 'dropped' ? { reason: pass.partReason } : {}),
      notes: [pass.partNote],
      records: [],
      trainableTokens: 0,
      totalTokens: 0,
      recordTokens: [],
      recordTrainable: [],
      renderedTokens: 0,
    });
  }
}

/**
 * The fate of a row inside other rows' conversations (an OpenAssistant message inside root-to-leaf paths, an agent
 * CLI event inside parent chains), from the fates of the rows carrying them (`undefined`: not processed): written when
 * one was written, else set aside when one was, else dropped (with the pass's `partReason`).
 */
export function partRowFate(leafFates: readonly (RowResult['fate'] | undefined)[]): RowResult['fate'] {
  return leafFates.includes('written') ? 'written' : leafFates.includes('setAside') ? 'setAside' : 'dropped';
}

/**
 * {@link partRowFate} when reading the rows decides it (records/rowTrace.ts `ReadTrace`): `dropped` when every row
 * carrying the part was read and dropped or errored as it was read (prepare drops the part so); undefined when a
 * carrying row's fate waits on its records (`pending`), was set aside or is not known (not read).
 */
export function partFateAsRead(leafFates: readonly (ReadTrace['fate']['fate'] | undefined)[]): 'dropped' | undefined {
  const known = leafFates.filter((f): f is 'setAside' | 'dropped' | 'errored' => f !== undefined && f !== 'pending');
  return known.length === leafFates.length && partRowFate(known) === 'dropped' ? 'dropped' : undefined;
}

/**
 * The file-level pass a file of the detected `format` is read by: `oasst-messages` (OpenAssistant flat export,
 * trees rebuilt) or `event-log` (agent CLI event log, parent chains joined); undefined for every other format.
 */
export function filePassFor(format: string, project: ProjectConfig | undefined): FilePass | undefined {
  if (format === 'oasst-messages') return new OasstFilePass(project?.reading.oasstPaths ?? 'all', project?.roleAliases);
  if (format === 'event-log') return new EventLogFilePass();
  return undefined;
}
