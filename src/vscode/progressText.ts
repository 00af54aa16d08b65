/**
 * The progress notification's message during a run: the file, rows read — with a percentage when
 * the file's row count is known (the Datasets view counted it, and the file has not changed since),
 * else of the file's bytes read when its size is known — and records written.
 *
 * Pure: no `vscode` import (unit-tested in plain node).
 */
import type { PrepareProgress } from '../core/run/contract';

const fmt = (n: number) => n.toLocaleString('en-US');

/** Bytes as people read them: `812 B`, `3.4 KB`, `53.1 MB`, `1.2 GB` (1 KB = 1,024 bytes). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

/**
 * `chat.jsonl (2/3): 1,200 of 5,000 rows read (24 %), 2,300 records written`; without a known row
 * count (`rowsInFile` undefined) but with the file's size (`p.bytesTotal`, the bytes on disk — of the
 * compressed file for `.gz` / `.zst`, which `p.bytesRead` counts too): `chat.jsonl: 1,200 rows read
 * (37 % of 53.1 MB), …`; with neither: `chat.jsonl: 1,200 rows read, …`. A percentage is never more
 * than 100 % (a row count that went out of date is not believed past the end) and floored (100 %
 * only at the end).
 */
export function progressMessage(p: PrepareProgress, rowsInFile: number | undefined): string {
  const base = p.file.split(/[\\/]/).pop() ?? p.file;
  const file = `${base}${p.fileCount > 1 ? ` (${p.fileIndex + 1}/${p.fileCount})` : ''}`;
  const records = `${fmt(p.recordsWritten)} record${p.recordsWritten === 1 ? '' : 's'} written`;
  if (rowsInFile !== undefined && rowsInFile > 0 && p.rowsRead <= rowsInFile) {
    const pct = Math.floor((100 * p.rowsRead) / rowsInFile);
    return `${file}: ${fmt(p.rowsRead)} of ${fmt(rowsInFile)} rows read (${pct} %), ${records}`;
  }
  const rows = `${fmt(p.rowsRead)} row${p.rowsRead === 1 ? '' : 's'} read`;
  if (p.bytesTotal > 0 && p.bytesRead >= 0 && p.bytesRead <= p.bytesTotal) {
    const pct = Math.floor((100 * p.bytesRead) / p.bytesTotal);
    return `${file}: ${rows} (${pct} % of ${formatBytes(p.bytesTotal)}), ${records}`;
  }
  return `${file}: ${rows}, ${records}`;
}
