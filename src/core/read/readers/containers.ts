/**
 * How a dataset file's bytes are stored and how to get them: the container
 * (plain, gzip, Zstandard, Parquet) from the magic bytes, the decompressed bytes
 * as a stream of chunks or as one text, and the errors that name the file.
 *
 * Pure Node (no `vscode`).
 */
import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import { Decompress as ZstdDecompress, decompress as zstdDecompress } from 'fzstd';

export const BOM = '\ufeff';

/** Chunk size of the JSONL stream (bytes). */
export const CHUNK = 1 << 20;

/** How the bytes of a file are stored, from its magic bytes (extension as fallback for empty files). */
export type ContainerKind = 'plain' | 'gzip' | 'zstd' | 'parquet';

/** The container of a file: gzip (`1f 8b`), Zstandard (`28 b5 2f fd`), Parquet (`PAR1`), else plain text. */
export async function containerKind(file: string): Promise<ContainerKind> {
  let fh: fs.promises.FileHandle | undefined;
  try {
    fh = await fs.promises.open(file, 'r');
    const b = Buffer.alloc(4);
    const { bytesRead } = await fh.read(b, 0, 4, 0);
    if (bytesRead >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'gzip';
    if (bytesRead === 4 && b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd) return 'zstd';
    if (bytesRead === 4 && b.toString('latin1') === 'PAR1') return 'parquet';
    return 'plain';
  } catch (err) {
    throw wrapIoError(file, err);
  } finally {
    await fh?.close();
  }
}

/**
 * The decompressed bytes of a file as chunks, with the compressed bytes read so
 * far (for progress). gzip: node:zlib (multi-member files included); zstd:
 * fzstd's streaming decompressor.
 */
export async function* byteChunks(file: string, kind: ContainerKind, signal?: AbortSignal): AsyncGenerator<{ chunk: Buffer; rawBytes: number }> {
  const raw = fs.createReadStream(file, { highWaterMark: CHUNK });
  try {
    if (kind === 'gzip') {
      const gunzip = zlib.createGunzip();
      raw.on('error', (e) => gunzip.destroy(e));
      raw.pipe(gunzip);
      for await (const chunk of gunzip as AsyncIterable<Buffer>) {
        throwIfAborted(signal);
        yield { chunk, rawBytes: raw.bytesRead };
      }
    } else if (kind === 'zstd') {
      const out: Buffer[] = [];
      const z = new ZstdDecompress((data) => {
        out.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      });
      for await (const chunk of raw as AsyncIterable<Buffer>) {
        throwIfAborted(signal);
        z.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        while (out.length) yield { chunk: Buffer.from(out.shift()!), rawBytes: raw.bytesRead };
      }
      z.push(new Uint8Array(0), true);
      while (out.length) yield { chunk: Buffer.from(out.shift()!), rawBytes: raw.bytesRead };
    } else {
      for await (const chunk of raw as AsyncIterable<Buffer>) {
        throwIfAborted(signal);
        yield { chunk, rawBytes: raw.bytesRead };
      }
    }
  } catch (err) {
    if (signal?.aborted) throw err;
    const e = err as Error;
    // fzstd's errors carry a numeric `code`; node's I/O errors a string starting with E.
    const code = typeof (e as { code?: unknown }).code === 'string' ? ((e as NodeJS.ErrnoException).code as string) : '';
    if (kind !== 'plain' && !code.startsWith('E')) {
      throw new Error(`cannot read ${file}: the ${kind} data is damaged (${e.message})`, { cause: err });
    }
    if (kind === 'gzip' && code.startsWith('Z_')) {
      throw new Error(`cannot read ${file}: the gzip data is damaged (${e.message})`, { cause: err });
    }
    throw wrapIoError(file, err);
  } finally {
    raw.destroy();
  }
}

export async function readWhole(file: string, kind: ContainerKind = 'plain'): Promise<string> {
  try {
    let buf: Buffer;
    const raw = await fs.promises.readFile(file);
    if (kind === 'gzip') buf = zlib.gunzipSync(raw);
    else if (kind === 'zstd') buf = Buffer.from(zstdDecompress(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength)));
    else buf = raw;
    const text = buf.toString('utf8');
    return text.startsWith(BOM) ? text.slice(1) : text;
  } catch (err) {
    // fzstd's errors carry a numeric `code`, zlib's a `Z_…` string, node's I/O errors an `E…` string.
    const code = (err as { code?: unknown })?.code;
    if (kind !== 'plain' && !(typeof code === 'string' && /^E[A-Z]/.test(code))) {
      throw new Error(`cannot read ${file}: the ${kind} data is damaged (${(err as Error).message})`, { cause: err });
    }
    throw wrapIoError(file, err);
  }
}

export async function statFile(file: string): Promise<number> {
  let st: fs.Stats;
  try {
    st = await fs.promises.stat(file);
  } catch (err) {
    throw wrapIoError(file, err);
  }
  if (st.isDirectory()) throw new Error(`cannot read ${file}: it is a directory, not a dataset file`);
  return st.size;
}

export async function fileSize(file: string): Promise<number> {
  return (await fs.promises.stat(file)).size;
}

export function wrapIoError(file: string, err: unknown): Error {
  if (err instanceof Error && err.name === 'AbortError') return err;
  const code = (err as NodeJS.ErrnoException)?.code;
  const why =
    code === 'ENOENT' ? 'no such file' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : err instanceof Error ? err.message : String(err);
  return new Error(`cannot read ${file}: ${why}`, { cause: err });
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw signal.reason instanceof Error ? signal.reason : new DOMException('reading aborted', 'AbortError');
  }
}
