/**
 * Parquet input (issue 3): a tiny Parquet file written here by hand (flat
 * REQUIRED UTF8 columns, one row group, PLAIN, uncompressed — the layout of the
 * Apache Parquet format spec, Thrift compact protocol for the footer), read
 * through `readRows` (hyparquet), `inspect` and `prepare`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir } from '../helpers';

// ---- Thrift compact protocol, just what the Parquet footer needs.
class Compact {
  bytes: number[] = [];
  private last: number[] = [0];
  private varint(n: bigint) {
    while (n >= 0x80n) {
      this.bytes.push(Number((n & 0x7fn) | 0x80n));
      n >>= 7n;
    }
    this.bytes.push(Number(n));
  }
  private zigzag(n: number) {
    const b = BigInt(n);
    this.varint(b >= 0n ? b << 1n : (-b << 1n) - 1n);
  }
  private header(id: number, type: number) {
    const delta = id - this.last[this.last.length - 1];
    this.bytes.push((delta << 4) | type);
    this.last[this.last.length - 1] = id;
  }
  i32(id: number, v: number) {
    this.header(id, 5);
    this.zigzag(v);
  }
  i64(id: number, v: number) {
    this.header(id, 6);
    this.zigzag(v);
  }
  str(id: number, s: string) {
    this.header(id, 8);
    this.rawStr(s);
  }
  rawStr(s: string) {
    const b = Buffer.from(s, 'utf8');
    this.varint(BigInt(b.length));
    this.bytes.push(...b);
  }
  struct(id: number, body: () => void) {
    this.header(id, 12);
    this.begin(body);
  }
  begin(body: () => void) {
    this.last.push(0);
    body();
    this.bytes.push(0);
    this.last.pop();
  }
  list(id: number, elemType: number, items: (() => void)[]) {
    this.header(id, 9);
    this.bytes.push((items.length << 4) | elemType);
    for (const it of items) it();
  }
}

/** Writes a Parquet file of REQUIRED UTF8 string columns. */
function writeParquet(file: string, columns: string[], rows: string[][]) {
  const out: Buffer[] = [Buffer.from('PAR1')];
  let offset = 4;
  const chunks: { offset: number; size: number }[] = [];
  columns.forEach((_, c) => {
    const data = Buffer.concat(
      rows.map((r) => {
        const v = Buffer.from(r[c], 'utf8');
        const len = Buffer.alloc(4);
        len.writeUInt32LE(v.length);
        return Buffer.concat([len, v]);
      }),
    );
    const h = new Compact();
    h.begin(() => {
      h.i32(1, 0); // DATA_PAGE
      h.i32(2, data.length);
      h.i32(3, data.length);
      h.struct(5, () => {
        h.i32(1, rows.length);
        h.i32(2, 0); // PLAIN
        h.i32(3, 3); // RLE
        h.i32(4, 3);
      });
    });
    const page = Buffer.concat([Buffer.from(h.bytes), data]);
    chunks.push({ offset, size: page.length });
    out.push(page);
    offset += page.length;
  });
  const f = new Compact();
  f.begin(() => {
    f.i32(1, 1);
    f.list(2, 12, [
      () =>
        f.begin(() => {
          f.str(4, 'schema');
          f.i32(5, columns.length);
        }),
      ...columns.map(
        (name) => () =>
          f.begin(() => {
            f.i32(1, 6);
            f.i32(3, 0);
            f.str(4, name);
            f.i32(6, 0);
          }),
      ),
    ]);
    f.i64(3, rows.length);
    f.list(4, 12, [
      () =>
        f.begin(() => {
          f.list(
            1,
            12,
            columns.map(
              (name, c) => () =>
                f.begin(() => {
                  f.i64(2, chunks[c].offset);
                  f.struct(3, () => {
                    f.i32(1, 6);
                    f.list(2, 5, [() => f.bytes.push(0)]); // [PLAIN] (zigzag 0)
                    f.list(3, 8, [() => f.rawStr(name)]);
                    f.i32(4, 0); // UNCOMPRESSED
                    f.i64(5, rows.length);
                    f.i64(6, chunks[c].size);
                    f.i64(7, chunks[c].size);
                    f.i64(9, chunks[c].offset);
                  });
                }),
            ),
          );
          f.i64(
            2,
            chunks.reduce((a, x) => a + x.size, 0),
          );
          f.i64(3, rows.length);
        }),
    ]);
  });
  const footer = Buffer.from(f.bytes);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(footer.length);
  out.push(footer, len, Buffer.from('PAR1'));
  writeFileSync(file, Buffer.concat(out));
}

test('Parquet: rows read with hyparquet, line = row number, mixed shapes per row, accounting holds', async () => {
  const file = join(tempDir(), 'train-00000-of-00001.parquet');
  writeParquet(
    file,
    ['prompt', 'response', 'messages'],
    [
      ['Say A', 'A', ''],
      [
        '',
        '',
        JSON.stringify([
          { role: 'user', content: 'Say B' },
          { role: 'assistant', content: 'B' },
        ]),
      ],
      ['Only a prompt', '', ''],
    ],
  );
  const r = await inspectFile(file);
  assert.equal(r.rows_read, 3);
  assert.deepEqual(
    r.records.map((x) => [x.source.line, x.shape, x.needs_generation, x.messages]),
    [
      [
        1,
        'prompt-response',
        false,
        [
          { role: 'user', content: 'Say A' },
          { role: 'assistant', content: 'A' },
        ],
      ],
      [
        2,
        'openai-messages',
        false,
        [
          { role: 'user', content: 'Say B' },
          { role: 'assistant', content: 'B' },
        ],
      ],
      [3, 'prompt-only', true, [{ role: 'user', content: 'Only a prompt' }]],
    ],
  );
  const res = await prepare({ inputs: [file], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsSetAside], [3, 2, 1]);
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
});

test('a file named .parquet that is not Parquet is read by its content', async () => {
  const file = join(tempDir(), 'fake.parquet');
  writeFileSync(file, '{"prompt": "p", "response": "r"}\n');
  const r = await inspectFile(file);
  assert.deepEqual(r.records[0].messages, [
    { role: 'user', content: 'p' },
    { role: 'assistant', content: 'r' },
  ]);
});
