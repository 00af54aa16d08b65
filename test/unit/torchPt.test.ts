/**
 * The `.pt` writer (src/core/trainers/torchPt.ts): the ZIP layout torch's reader expects (member
 * names, 64-byte aligned data, CRC-32), the pickle's opcodes, and — when a Python with torch is
 * there — `torch.load(weights_only=True)` of the written files, with their values, dtypes and shapes.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { boolTensor, crc32, int64Tensor, storedZip, torchPickle, torchSaveBytes } from '../../src/core/trainers/torchPt';
import { tempDir } from '../helpers';
import { runTorch, torchSkip } from '../torch';

const dir = tempDir('eagle3-pt-');
after(() => rmSync(dir, { recursive: true, force: true }));

/** The members of a stored ZIP, read from its central directory: name, data offset, data. */
function readZip(b: Buffer): { name: string; offset: number; data: Buffer; crc: number }[] {
  const eocd = b.length - 22;
  assert.equal(b.readUInt32LE(eocd), 0x06054b50);
  const n = b.readUInt16LE(eocd + 10);
  let p = b.readUInt32LE(eocd + 16);
  const out = [];
  for (let k = 0; k < n; k++) {
    assert.equal(b.readUInt32LE(p), 0x02014b50);
    const crc = b.readUInt32LE(p + 16);
    const size = b.readUInt32LE(p + 24);
    const nameLen = b.readUInt16LE(p + 28);
    const local = b.readUInt32LE(p + 42);
    const name = b.toString('utf8', p + 46, p + 46 + nameLen);
    assert.equal(b.readUInt32LE(local), 0x04034b50);
    assert.equal(b.readUInt16LE(local + 8), 0, 'stored, not compressed');
    const offset = local + 30 + b.readUInt16LE(local + 26) + b.readUInt16LE(local + 28);
    out.push({ name, offset, data: b.subarray(offset, offset + size), crc });
    p += 46 + nameLen;
  }
  return out;
}

test('crc32 is the ZIP checksum', () => {
  assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  const b = Buffer.from(Array.from({ length: 1000 }, (_, k) => (k * 31) & 0xff));
  assert.equal(crc32(b), zlibCrc32(b));
});

test('torch.save layout: data.pkl, byteorder, data/<key>, version under one folder, data 64-byte aligned', () => {
  const bytes = torchSaveBytes(
    {
      kind: 'dict',
      entries: [
        ['d2t', int64Tensor([3, -1])],
        ['t2d', boolTensor([true, false, true])],
      ],
    },
    'vocab_mapping',
  );
  const members = readZip(bytes);
  assert.deepEqual(
    members.map((m) => m.name),
    ['vocab_mapping/data.pkl', 'vocab_mapping/byteorder', 'vocab_mapping/data/0', 'vocab_mapping/data/1', 'vocab_mapping/version'],
  );
  for (const m of members) {
    assert.equal(m.offset % 64, 0, `${m.name} at ${m.offset}`);
    assert.equal(m.crc, crc32(m.data), m.name);
  }
  assert.equal(members[1].data.toString(), 'little');
  assert.equal(members[4].data.toString(), '3\n');
  assert.deepEqual([...members[2].data], [3, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
  assert.deepEqual([...members[3].data], [1, 0, 1]);
  assert.throws(() => torchSaveBytes(int64Tensor([1]), 'a/b'), /archive name/);
  assert.throws(() => torchSaveBytes(int64Tensor([1.5])), /not an integer/);
});

test('pickle: a tensor is _rebuild_tensor_v2 of a persistent storage id; ints take the shortest opcode', () => {
  const { pickle, storages } = torchPickle(int64Tensor([7]));
  const s = pickle.toString('latin1');
  assert.equal(s.slice(0, 2), '\x80\x02');
  assert.equal(s.at(-1), '.');
  assert.ok(s.includes('ctorch._utils\n_rebuild_tensor_v2\n(('), s);
  assert.ok(s.includes('X\x07\x00\x00\x00storagectorch\nLongStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ'), s);
  assert.ok(s.includes('K\x00K\x01\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR.'), s);
  assert.deepEqual(storages, [Buffer.from([7, 0, 0, 0, 0, 0, 0, 0])]);
  const d = torchPickle({
    kind: 'intDict',
    entries: [
      [300, 70000],
      [-5, 2 ** 40],
    ],
  }).pickle.toString('latin1');
  assert.equal(d, '\x80\x02}(M\x2c\x01J\x70\x11\x01\x00J\xfb\xff\xff\xff\x8a\x08\x00\x00\x00\x00\x00\x01\x00\x00u.');
  // 2,500 items: SETITEMS in batches of 1,000, as CPython's pickler writes them.
  // (keys 70000 + 2k are BININTs whose bytes never hold 'u(', so 'u(' is only between batches)
  const big = torchPickle({ kind: 'intDict', entries: Array.from({ length: 2500 }, (_, k) => [70000 + 2 * k, 1] as [number, number]) }).pickle.toString(
    'latin1',
  );
  assert.equal(big.split('u(').length - 1, 2);
  assert.ok(big.startsWith('\x80\x02}(') && big.endsWith('u.'));
});

test('storedZip: an empty archive and a member list read back', () => {
  assert.equal(storedZip([]).length, 22);
  const z = readZip(storedZip([['x/a', Buffer.from('hello')]]));
  assert.equal(z[0].data.toString(), 'hello');
});

test('torch.load(weights_only=True) reads the tensors, the dict of tensors and the int → int dict', { skip: torchSkip() }, () => {
  const ids = [0, 1, 5, 151935, 2 ** 33];
  writeFileSync(
    join(dir, 'vocab_mapping.pt'),
    torchSaveBytes(
      {
        kind: 'dict',
        entries: [
          ['d2t', int64Tensor([0, 4, -2])],
          ['t2d', boolTensor([true, false, false, true])],
        ],
      },
      'vocab_mapping',
    ),
  );
  writeFileSync(join(dir, 'd2t.pt'), torchSaveBytes(int64Tensor(ids), 'd2t'));
  writeFileSync(join(dir, 'empty.pt'), torchSaveBytes(int64Tensor([])));
  const freq = Array.from({ length: 1500 }, (_, k) => [k * 101, k + 1] as [number, number]);
  writeFileSync(join(dir, 'token_freq.pt'), torchSaveBytes({ kind: 'intDict', entries: freq }, 'token_freq'));
  const got = runTorch(
    `
import json, sys, torch
d = sys.argv[1]
def t(x): return {"dtype": str(x.dtype), "shape": list(x.shape), "values": x.tolist(), "contiguous": x.is_contiguous()}
m = torch.load(d + "/vocab_mapping.pt", weights_only=True)
f = torch.load(d + "/token_freq.pt", weights_only=True)
print(json.dumps({
  "mapping": {k: t(v) for k, v in m.items()},
  "d2t": t(torch.load(d + "/d2t.pt", weights_only=True)),
  "empty": t(torch.load(d + "/empty.pt", weights_only=True)),
  "freq_types": sorted({type(k).__name__ + ":" + type(v).__name__ for k, v in f.items()}),
  "freq": [[k, v] for k, v in f.items()],
  "plain": torch.load(d + "/d2t.pt").tolist(),
}))
`,
    [dir],
  ) as Record<string, unknown>;
  assert.deepEqual(got.mapping, {
    d2t: { dtype: 'torch.int64', shape: [3], values: [0, 4, -2], contiguous: true },
    t2d: { dtype: 'torch.bool', shape: [4], values: [true, false, false, true], contiguous: true },
  });
  assert.deepEqual(got.d2t, { dtype: 'torch.int64', shape: [5], values: ids, contiguous: true });
  assert.deepEqual(got.empty, { dtype: 'torch.int64', shape: [0], values: [], contiguous: true });
  assert.deepEqual(got.freq_types, ['int:int']);
  assert.deepEqual(got.freq, freq);
  assert.deepEqual(got.plain, ids);
});
