/**
 * A writer of PyTorch `.pt` files (the format of `torch.save`) for the few values the EAGLE-3
 * trainers read back: 1-D int64 and bool tensors, dicts of them keyed by strings, and dicts of
 * int → int. The files load with `torch.load(path, weights_only=True)` (torch ≥ 1.13) and with a
 * plain `torch.load(path)`.
 *
 * The format, as torch's own reader (`torch/serialization.py` `_load`, `caffe2/serialize/
 * inline_container.cc` `PyTorchStreamReader`) expects it:
 * - a ZIP archive, every member stored uncompressed under one top folder (`<name>/`);
 * - `<name>/data.pkl`: a pickle (protocol 2) of the value. A tensor is the call
 *   `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())`
 *   whose `storage` is a persistent id `('storage', torch.LongStorage | torch.BoolStorage, key,
 *   'cpu', numel)`;
 * - `<name>/data/<key>`: the storage's raw little-endian bytes (int64: 8 bytes an element; bool:
 *   one byte 0/1), placed at a 64-byte aligned file offset as torch writes them (the alignment
 *   padding goes in the local header's extra field);
 * - `<name>/byteorder` (`little`) and `<name>/version` (`3`).
 * The weights-only unpickler allows exactly the globals used here (`_rebuild_tensor_v2`,
 * `collections.OrderedDict`, the storage classes) and the opcodes of protocol 2 written below.
 */

/** A value {@link torchSaveBytes} can write. */
export type PtValue =
  | { kind: 'int64'; values: readonly number[] }
  | { kind: 'bool'; values: readonly boolean[] }
  | { kind: 'dict'; entries: readonly (readonly [string, PtValue])[] }
  | { kind: 'intDict'; entries: readonly (readonly [number, number])[] };

/** A 1-D int64 tensor (`torch.long`). */
export const int64Tensor = (values: readonly number[]): PtValue => ({ kind: 'int64', values });
/** A 1-D bool tensor (`torch.bool`). */
export const boolTensor = (values: readonly boolean[]): PtValue => ({ kind: 'bool', values });

// Pickle opcodes (Lib/pickletools.py), protocol 2.
const OP = {
  PROTO: 0x80,
  STOP: 0x2e,
  MARK: 0x28,
  EMPTY_DICT: 0x7d,
  SETITEMS: 0x75,
  EMPTY_TUPLE: 0x29,
  TUPLE: 0x74,
  TUPLE1: 0x85,
  GLOBAL: 0x63,
  REDUCE: 0x52,
  BINPERSID: 0x51,
  BINUNICODE: 0x58,
  BININT1: 0x4b,
  BININT2: 0x4d,
  BININT: 0x4a,
  LONG1: 0x8a,
  NEWFALSE: 0x89,
} as const;

/** Items per SETITEMS, as CPython's pickler batches them. */
const BATCH = 1000;

class PickleWriter {
  private parts: Buffer[] = [];
  readonly storages: Buffer[] = [];

  byte(b: number): void {
    this.parts.push(Buffer.from([b]));
  }

  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    const h = Buffer.alloc(5);
    h[0] = OP.BINUNICODE;
    h.writeUInt32LE(b.length, 1);
    this.parts.push(h, b);
  }

  int(n: number): void {
    if (!Number.isSafeInteger(n)) throw new Error(`not an integer that can be written exactly: ${n}`);
    if (n >= 0 && n < 0x100) this.parts.push(Buffer.from([OP.BININT1, n]));
    else if (n >= 0 && n < 0x10000) {
      const b = Buffer.alloc(3);
      b[0] = OP.BININT2;
      b.writeUInt16LE(n, 1);
      this.parts.push(b);
    } else if (n >= -0x80000000 && n <= 0x7fffffff) {
      const b = Buffer.alloc(5);
      b[0] = OP.BININT;
      b.writeInt32LE(n, 1);
      this.parts.push(b);
    } else {
      // LONG1: length byte, then the two's-complement little-endian bytes (8 are enough for a safe integer).
      const b = Buffer.alloc(10);
      b[0] = OP.LONG1;
      b[1] = 8;
      b.writeBigInt64LE(BigInt(n), 2);
      this.parts.push(b);
    }
  }

  global(module: string, name: string): void {
    this.parts.push(Buffer.from([OP.GLOBAL]), Buffer.from(`${module}\n${name}\n`, 'latin1'));
  }

  tensor(dtype: 'int64' | 'bool', data: Buffer, numel: number): void {
    const key = String(this.storages.length);
    this.storages.push(data);
    this.global('torch._utils', '_rebuild_tensor_v2');
    this.byte(OP.MARK);
    // The persistent id of the storage.
    this.byte(OP.MARK);
    this.str('storage');
    this.global('torch', dtype === 'int64' ? 'LongStorage' : 'BoolStorage');
    this.str(key);
    this.str('cpu');
    this.int(numel);
    this.byte(OP.TUPLE);
    this.byte(OP.BINPERSID);
    this.int(0); // storage offset
    this.int(numel);
    this.byte(OP.TUPLE1); // size
    this.int(1);
    this.byte(OP.TUPLE1); // stride
    this.byte(OP.NEWFALSE); // requires_grad
    this.global('collections', 'OrderedDict'); // backward hooks: OrderedDict()
    this.byte(OP.EMPTY_TUPLE);
    this.byte(OP.REDUCE);
    this.byte(OP.TUPLE);
    this.byte(OP.REDUCE);
  }

  value(v: PtValue): void {
    switch (v.kind) {
      case 'int64': {
        const data = Buffer.alloc(v.values.length * 8);
        v.values.forEach((x, k) => {
          if (!Number.isSafeInteger(x)) throw new Error(`int64 tensor element ${k} is not an integer: ${x}`);
          data.writeBigInt64LE(BigInt(x), k * 8);
        });
        return this.tensor('int64', data, v.values.length);
      }
      case 'bool':
        return this.tensor('bool', Buffer.from(v.values.map((x) => (x ? 1 : 0))), v.values.length);
      case 'dict':
        return this.dict(
          v.entries,
          (k) => this.str(k),
          (x) => this.value(x),
        );
      case 'intDict':
        return this.dict(
          v.entries,
          (k) => this.int(k),
          (x) => this.int(x),
        );
    }
  }

  private dict<K, V>(entries: readonly (readonly [K, V])[], key: (k: K) => void, val: (v: V) => void): void {
    this.byte(OP.EMPTY_DICT);
    for (let i = 0; i < entries.length; i += BATCH) {
      this.byte(OP.MARK);
      for (const [k, v] of entries.slice(i, i + BATCH)) {
        key(k);
        val(v);
      }
      this.byte(OP.SETITEMS);
    }
  }

  bytes(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** The pickle (`data.pkl`) of `v` and the storages it refers to, in key order `0, 1, …`. */
export function torchPickle(v: PtValue): { pickle: Buffer; storages: Buffer[] } {
  const w = new PickleWriter();
  w.byte(OP.PROTO);
  w.byte(2);
  w.value(v);
  w.byte(OP.STOP);
  return { pickle: w.bytes(), storages: w.storages };
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (ISO-HDLC, the ZIP checksum) of `b`. */
export function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = CRC_TABLE[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Data offset alignment of the members, as torch writes them. */
const ALIGN = 64;

/**
 * A ZIP archive of stored (uncompressed) members, each member's data at a multiple of 64 bytes.
 * @param members `[name, bytes]` in archive order (names are written as UTF-8)
 */
export function storedZip(members: readonly [string, Buffer][]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of members) {
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    // Extra field: id 'FB', a length, padding up to the next aligned data offset (at least 4 bytes).
    const pad = (ALIGN - ((offset + 30 + nameBytes.length + 4) % ALIGN)) % ALIGN;
    const extra = Buffer.alloc(4 + pad, 'Z');
    extra.write('FB', 0, 'latin1');
    extra.writeUInt16LE(pad, 2);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0, 6); // flags
    local.writeUInt16LE(0, 8); // method: stored
    local.writeUInt32LE(0, 10); // time, date
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(extra.length, 28);
    parts.push(local, nameBytes, extra, data);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4); // version made by
    cd.writeUInt16LE(20, 6); // version needed
    cd.writeUInt16LE(0, 8);
    cd.writeUInt16LE(0, 10);
    cd.writeUInt32LE(0, 12);
    cd.writeUInt32LE(crc, 16);
    cd.writeUInt32LE(data.length, 20);
    cd.writeUInt32LE(data.length, 24);
    cd.writeUInt16LE(nameBytes.length, 28);
    // extra (30), comment (32), disk (34), internal attributes (36), external attributes (38): 0
    cd.writeUInt32LE(offset, 42);
    central.push(cd, nameBytes);
    offset += 30 + nameBytes.length + extra.length + data.length;
  }
  const cdBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(members.length, 8);
  end.writeUInt16LE(members.length, 10);
  end.writeUInt32LE(cdBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  if (members.length > 0xffff || offset > 0xffffffff) throw new Error('archive too large for a ZIP without ZIP64');
  return Buffer.concat([...parts, cdBytes, end]);
}

/**
 * The bytes of a `.pt` file holding `v`, as `torch.save(v, path)` writes it.
 * @param archiveName the archive's top folder (torch uses the file name without `.pt`); letters, digits, `_`, `-`
 */
export function torchSaveBytes(v: PtValue, archiveName = 'archive'): Buffer {
  if (!/^[A-Za-z0-9_-]+$/.test(archiveName)) throw new Error(`archive name must be letters, digits, _ or -: ${archiveName}`);
  const { pickle, storages } = torchPickle(v);
  const members: [string, Buffer][] = [[`${archiveName}/data.pkl`, pickle]];
  members.push([`${archiveName}/byteorder`, Buffer.from('little', 'latin1')]);
  storages.forEach((s, k) => members.push([`${archiveName}/data/${k}`, s]));
  members.push([`${archiveName}/version`, Buffer.from('3\n', 'latin1')]);
  return storedZip(members);
}
