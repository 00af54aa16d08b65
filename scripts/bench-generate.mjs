// Benchmark of `generate` against the local fake OpenAI-compatible server at a fixed latency:
// requests per second side by side with the limit the server allows (its maxRunning / latency),
// the most requests the server saw in flight, and the client's own CPU time per request (its
// ceiling: 1000 / ms-per-request requests per second per core). The fake server runs in a child
// process, as a real server would run elsewhere. "client CPU busy" = client CPU time / wall time:
// well under 100 % means the client is waiting on the server, not the other way round.
// Run: npm run bench:generate [-- --requests N --latency MS]
import { fork } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '2000' }, latency: { type: 'string', default: '200' }, serve: { type: 'string' } },
});

if (values.serve) {
  // Child: the fake server; answers {url} once listening, then {maxInFlight} on request.
  const { startFakeServer } = await import('../test/support/fakeOpenAIServer.ts');
  const srv = await startFakeServer(JSON.parse(values.serve));
  process.send({ url: srv.url });
  process.on('message', async () => {
    process.send({ maxInFlight: srv.maxInFlight, answered: srv.answered });
    await srv.close();
    process.exit(0);
  });
} else {
  const { generate } = await import('../src/core/generate/run.ts');
  const N = Number(values.requests);
  const latencyMs = Number(values.latency);
  const cases = [
    { maxRunning: 16, concurrency: 16 },
    { maxRunning: 64, concurrency: 64 },
    { maxRunning: 256, concurrency: 256 },
    { maxRunning: 64, concurrency: 16 }, // client-limited on purpose
    { maxRunning: 64, concurrency: 128 }, // more in flight than the server runs: it queues
  ];
  const dir = mkdtempSync(join(tmpdir(), 'bench-generate-'));
  const input = join(dir, 'prompts.jsonl');
  writeFileSync(
    input,
    Array.from({ length: N }, (_, i) => JSON.stringify({ id: `b${i}`, messages: [{ role: 'user', content: `benchmark prompt number ${i}` }] })).join('\n') +
      '\n',
  );
  console.log(
    `generate bench: ${N} requests per case, fake server latency ${latencyMs} ms in a child process (Node ${process.version}, ${cpus().length} cores)`,
  );
  console.log(
    '| server runs at once | client in flight (--concurrency) | server saw in flight | limit req/s = min(server, client)/latency | client req/s | of limit | client CPU ms/request | client CPU busy | client ceiling req/s/core |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const c of cases) {
    const child = fork(fileURLToPath(import.meta.url), ['--serve', JSON.stringify({ latencyMs, maxRunning: c.maxRunning })], { execArgv: ['--import', 'tsx'] });
    const next = () => new Promise((res) => child.once('message', res));
    const { url } = await next();
    const out = join(dir, `out-${c.maxRunning}-${c.concurrency}.jsonl`);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await generate({ input, out, servers: [url], concurrency: c.concurrency });
    const s = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    child.send('stats');
    const stats = await next();
    if (!r.ok || r.generated !== N) throw new Error(`run failed: ${r.failures.join('; ')}`);
    const limit = (Math.min(c.maxRunning, c.concurrency) * 1000) / latencyMs;
    const rps = N / s;
    const cpuMs = (cpu.user + cpu.system) / 1000 / N;
    console.log(
      `| ${c.maxRunning} | ${c.concurrency} | ${stats.maxInFlight} | ${limit.toFixed(0)} | ${rps.toFixed(0)} | ${(rps / limit).toFixed(2)} | ${cpuMs.toFixed(3)} | ${((100 * (cpu.user + cpu.system)) / 1000 / (s * 1000)).toFixed(0)}% | ${(1000 / cpuMs).toFixed(0)} |`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}
