/**
 * Apache Parquet (`.parquet`, magic `PAR1`), read with hyparquet row group by
 * row group; `line` is the 1-based row number.
 *
 * Pure Node (no `vscode`).
 */
import * as zlib from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import { throwIfAborted } from './containers';
import type { RawRow } from './rawRow';

/** hyparquet, the file as its async buffer, and the Parquet footer (row groups, `num_rows`). @throws Error naming the file. */
async function parquetMetadata(file: string) {
  let hp: typeof import('hyparquet');
  try {
    hp = await import('hyparquet');
  } catch (err) {
    throw new Error(`cannot read ${file}: Parquet support (hyparquet) is unavailable: ${(err as Error).message}`, { cause: err });
  }
  try {
    const asyncBuffer = await hp.asyncBufferFromFile(file);
    return { hp, asyncBuffer, meta: await hp.parquetMetadataAsync(asyncBuffer) };
  } catch (err) {
    throw new Error(`cannot read ${file}: not a readable Parquet file (${(err as Error).message})`, { cause: err });
  }
}

/**
 * Rows of a Parquet file, read with hyparquet row group by row group
 * (snappy built in; gzip and brotli via node:zlib, zstd via fzstd). `line` is
 * the 1-based row number; int64 values become numbers (strings beyond 2^53),
 * byte arrays of text columns are decoded as UTF-8 by hyparquet.
 */
export async function* parquetRows(file: string, size: number, signal?: AbortSignal): AsyncGenerator<RawRow> {
  const { hp, asyncBuffer, meta } = await parquetMetadata(file);
  const compressors = {
    GZIP: (input: Uint8Array) => new Uint8Array(zlib.gunzipSync(input)),
    BROTLI: (input: Uint8Array) => new Uint8Array(zlib.brotliDecompressSync(input)),
    ZSTD: (input: Uint8Array) => zstdDecompress(input),
  };
  const total = Number(meta.num_rows);
  let rowStart = 0;
  for (const group of meta.row_groups) {
    const n = Number(group.num_rows);
    throwIfAborted(signal);
    const rows = await hp.parquetReadObjects({ file: asyncBuffer, metadata: meta, rowStart, rowEnd: rowStart + n, compressors });
    for (let i = 0; i < rows.length; i++) {
      throwIfAborted(signal);
      yield { line: rowStart + i + 1, value: plainJson(rows[i]), bytes: Math.round((size * (rowStart + i + 1)) / Math.max(1, total)) };
    }
    rowStart += n;
  }
}

/** The rows of a Parquet file: `num_rows` of its footer (nothing decoded). @throws Error naming the file. */
export async function parquetRowCount(file: string): Promise<number> {
  return Number((await parquetMetadata(file)).meta.num_rows);
}

/** Parquet values as JSON values: bigint → number (string when unsafe), Date → ISO string, bytes → base64. */
function plainJson(v: unknown): unknown {
  if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(plainJson);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = plainJson(x);
    return out;
  }
  return v;
}
