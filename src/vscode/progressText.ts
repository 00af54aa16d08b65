/**
 * The progress notification's message during a run: the file, rows read — with a percentage when
 * the file's row count is known (the Datasets view counted it, and the file has not changed since)
 * — and records written.
 *
 * Pure: no `vscode` import (unit-tested in plain node).
 */
import type { PrepareProgress } from '../core/run/contract';

const fmt = (n: number) => n.toLocaleString('en-US');

/**
 * `chat.jsonl (2/3): 1,200 of 5,000 rows read (24 %), 2,300 records written`; without a known row
 * count (`rowsInFile` undefined): `chat.jsonl: 1,200 rows read, …`. The percentage is of rows, never
 * more than 100 % (a row count that went out of date is not believed past the end), floored (100 % only at the last row).
 */
export function progressMessage(p: PrepareProgress, rowsInFile: number | undefined): string {
  const base = p.file.split(/[\\/]/).pop() ?? p.file;
  const file = `${base}${p.fileCount > 1 ? ` (${p.fileIndex + 1}/${p.fileCount})` : ''}`;
  const records = `${fmt(p.recordsWritten)} record${p.recordsWritten === 1 ? '' : 's'} written`;
  if (rowsInFile !== undefined && rowsInFile > 0 && p.rowsRead <= rowsInFile) {
    const pct = Math.floor((100 * p.rowsRead) / rowsInFile);
    return `${file}: ${fmt(p.rowsRead)} of ${fmt(rowsInFile)} rows read (${pct} %), ${records}`;
  }
  return `${file}: ${fmt(p.rowsRead)} row${p.rowsRead === 1 ? '' : 's'} read, ${records}`;
}
