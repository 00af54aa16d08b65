/**
 * `npm run bench:parquet [-- --records N --tokens L --only a,b]`: writes N
 * records of about L tokens (default 100,000 × 2,000) as the pipeline writes
 * them (record lines in, one file out) with each candidate, each in a fresh
 * process, and prints one JSON line per candidate: CPU seconds (user + system)
 * and wall seconds, records/s, million tokens/s and output MB/s per CPU second,
 * file size, size relative to the JSONL, peak RSS (VmHWM).
 *
 * Records: see {@link records} (2,000 distinct records generated first and cycled,
 * so generating is not what is measured), a loss mask of a prompt of 30–60 % then
 * the response. Candidates:
 * - `jsonl`: `AtomicOutput` + `JSON.stringify` (today's tokenized_data.jsonl);
 * - `hyparquet-snappy` (the shipped writer: `ParquetRecordsOutput`), `-none`, `-gzip`, `-1m` (1M-token row groups);
 * - `wasm-snappy`: parquet-wasm (arrow-rs compiled to WebAssembly) fed Arrow record batches built with
 *   apache-arrow, one per row group of the same bound, streamed with `transformParquetStream`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { mkdtempSync } from 'node:fs';

const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const CANDIDATES = ['jsonl', 'hyparquet-snappy', 'hyparquet-none', 'hyparquet-gzip', 'hyparquet-1m', 'wasm-snappy'];

if (args[0] === '--child') {
  void child(args[1], Number(args[2]), Number(args[3]), args[4]);
} else {
  const n = Number(opt('records', '100000'));
  const len = Number(opt('tokens', '2000'));
  const only = opt('only', CANDIDATES.join(',')).split(',');
  const dir = mkdtempSync(join(tmpdir(), 'bench-parquet-'));
  let jsonlSize = 0;
  console.log(JSON.stringify({ records: n, tokensPerRecord: len, load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') }));
  for (const c of only) {
    const out = join(dir, `out.${c}`);
    const r = spawnSync(process.execPath, ['--import', 'tsx', __filename, '--child', c, String(n), String(len), out], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = r.stdout.trim().split('\n').pop() ?? '{}';
    const res = JSON.parse(line);
    if (c === 'jsonl') jsonlSize = res.bytes;
    res.vsJsonl = jsonlSize ? +(res.bytes / jsonlSize).toFixed(3) : null;
    console.log(JSON.stringify(res));
    try {
      statSync(out);
    } catch {
      /* the candidate failed */
    }
  }
}

/**
 * Deterministic records: token ids drawn from a Zipf distribution (s = 1.1) over a
 * 151,646-id vocabulary (Qwen3's size), the rank order shuffled so frequent ids are
 * spread over the range — the marginal statistics of text, without the repeats of
 * real conversations (so sizes here are on the large side).
 */
function* records(n: number, len: number) {
  const V = 151_646;
  let seed = 12345;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const cdf = new Float64Array(V);
  let total = 0;
  for (let k = 0; k < V; k++) cdf[k] = total += 1 / Math.pow(k + 1, 1.1);
  const idOfRank = Int32Array.from({ length: V }, (_, k) => k);
  for (let k = V - 1; k > 0; k--) {
    const j = Math.floor(rnd() * (k + 1));
    [idOfRank[k], idOfRank[j]] = [idOfRank[j], idOfRank[k]];
  }
  const draw = () => {
    const u = rnd() * total;
    let lo = 0;
    let hi = V - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return idOfRank[lo];
  };
  for (let i = 0; i < n; i++) {
    const l = Math.max(16, Math.round(len * (0.5 + rnd())));
    const ids = Array.from({ length: l }, draw);
    const p = Math.floor(l * (0.3 + 0.3 * rnd()));
    const mask = ids.map((_, k) => (k < p ? 0 : 1));
    yield (
      JSON.stringify({
        id: `data.jsonl:${i + 1}`,
        source: { file: '/data/train/data.jsonl', line: i + 1 },
        input_ids: ids,
        loss_mask: mask,
        seq_len: l,
        n_prompt_tokens: p,
        n_response_tokens: l - p,
      }) + '\n'
    );
  }
}

async function child(c: string, n: number, len: number, out: string): Promise<void> {
  const lines = [...records(Math.min(n, 2000), len)]; // generated once, cycled (generation is not what is measured)
  const line = (i: number) => lines[i % lines.length];
  let tokens = 0;
  for (const l of lines) tokens += JSON.parse(l).seq_len;
  tokens = Math.round((tokens / lines.length) * n);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  if (c === 'jsonl') {
    const { AtomicOutput } = await import('../src/core/run/outputs/output');
    const o = new AtomicOutput(out);
    for (let i = 0; i < n; i++) await o.write(line(i));
    await o.commit();
  } else if (c.startsWith('hyparquet')) {
    const { ParquetRecordsOutput } = await import('../src/core/run/outputs/parquetOutput');
    const codec = c.endsWith('none') ? 'UNCOMPRESSED' : c.endsWith('gzip') ? 'GZIP' : 'SNAPPY';
    const o = new ParquetRecordsOutput(out, { codec, ...(c.endsWith('1m') ? { rowGroupTokens: 1_000_000 } : {}) });
    for (let i = 0; i < n; i++) await o.write(line(i));
    await o.commit();
  } else if (c === 'wasm-snappy') {
    await wasm(n, line, out);
  }
  const wall = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  // Rates per CPU second (user + system of this process): on a shared machine the wall time mostly measures the others.
  const s = (used.user + used.system) / 1e6;
  const bytes = statSync(out).size;
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  console.log(
    JSON.stringify({
      candidate: c,
      cpuSeconds: +s.toFixed(1),
      wallSeconds: +wall.toFixed(1),
      recordsPerS: Math.round(n / s),
      mTokensPerS: +(tokens / 1e6 / s).toFixed(2),
      outMBPerS: +(bytes / 1e6 / s).toFixed(1),
      bytes,
      sizeMB: +(bytes / 1e6).toFixed(1),
      peakRssMB: hwm ? Math.round(Number(hwm[1]) / 1024) : null,
    }),
  );
}

/** parquet-wasm: one Arrow record batch per row group (same token bound), streamed through transformParquetStream. */
async function wasm(n: number, line: (i: number) => string, out: string): Promise<void> {
  const arrow = await import('apache-arrow');
  const pq = await import('parquet-wasm');
  const { createWriteStream } = await import('node:fs');
  const ws = createWriteStream(out);
  const props = new pq.WriterPropertiesBuilder().setCompression(pq.Compression.SNAPPY).build();
  const queue: unknown[] = [];
  let wake: (() => void) | undefined;
  const rs = new ReadableStream(
    {
      async pull(ctrl) {
        while (!queue.length) await new Promise<void>((r) => (wake = () => r()));
        const b = queue.shift();
        if (b === null) ctrl.close();
        else ctrl.enqueue(b);
      },
    },
    { highWaterMark: 0 },
  );
  const outP = pq.transformParquetStream(rs, props);
  const done = (async () => {
    const s = await outP;
    for await (const chunk of s as unknown as AsyncIterable<Uint8Array>) if (!ws.write(chunk)) await new Promise<void>((r) => ws.once('drain', () => r()));
  })();
  const feed = async (b: unknown) => {
    queue.push(b);
    wake?.();
    while (queue.length > 2) await new Promise((r) => setImmediate(r));
  };
  const listVec = (rows: any[], key: string, int8: boolean) => {
    let total = 0;
    for (const r of rows) total += r[key].length;
    const vals = int8 ? new Int8Array(total) : new Int32Array(total);
    const offs = new Int32Array(rows.length + 1);
    let o = 0;
    rows.forEach((r, i) => {
      vals.set(r[key], o);
      o += r[key].length;
      offs[i + 1] = o;
    });
    const type = int8 ? new arrow.Int8() : new arrow.Int32();
    const child = arrow.makeData({ type, length: total, data: vals } as any);
    return arrow.makeVector(
      arrow.makeData({ type: new arrow.List(new arrow.Field('element', type, false)), length: rows.length, valueOffsets: offs, child } as any),
    );
  };
  let buf: any[] = [];
  let tokens = 0;
  const flush = async () => {
    const t = new arrow.Table({
      id: arrow.vectorFromArray(
        buf.map((r) => r.id),
        new arrow.Utf8(),
      ),
      source_file: arrow.vectorFromArray(
        buf.map((r) => r.source.file),
        new arrow.Utf8(),
      ),
      source_line: arrow.makeVector(BigInt64Array.from(buf, (r) => BigInt(r.source.line))),
      input_ids: listVec(buf, 'input_ids', false),
      loss_mask: listVec(buf, 'loss_mask', true),
      seq_len: arrow.makeVector(Int32Array.from(buf, (r) => r.seq_len)),
      n_prompt_tokens: arrow.makeVector(Int32Array.from(buf, (r) => r.n_prompt_tokens)),
      n_response_tokens: arrow.makeVector(Int32Array.from(buf, (r) => r.n_response_tokens)),
    });
    buf = [];
    tokens = 0;
    for (const b of pq.Table.fromIPCStream(arrow.tableToIPC(t, 'stream')).recordBatches()) await feed(b);
  };
  for (let i = 0; i < n; i++) {
    const r = JSON.parse(line(i));
    buf.push(r);
    tokens += r.seq_len;
    if (tokens >= 262_144) await flush();
  }
  if (buf.length) await flush();
  await feed(null);
  await done;
  await new Promise<void>((r) => ws.end(() => r()));
}
