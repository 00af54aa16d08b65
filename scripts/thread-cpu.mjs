// CPU seconds of each thread of a command (issue 26, docs/scale.md "1 → 2 workers"): runs the command, reads
// /proc/<pid>/task/*/stat every 20 ms until it exits (Linux only), and prints one JSON line: wall s, CPU s of the
// whole process (every thread, as last read), and by thread — `main` (the process's own thread: with
// `prepare --workers N` it reads, writes and processes batches), `v8` (the four threads started first after it: V8's
// platform workers — concurrent and parallel garbage collection, concurrent compilation) and `others` (pool workers,
// libuv's threads), with each thread over 0.05 s in `threads` (tid − pid : CPU s).
// Several commands interleaved, medians of the repeats: `--repeat N`, each command after `--`:
//   node scripts/thread-cpu.mjs --repeat 3 -- 'node dist/cli.js prepare in.jsonl --workers 1 --out /tmp/o1' -- 'node dist/cli.js prepare in.jsonl --workers 2 --out /tmp/o2'
// Environment variables of a command go through env(1): -- 'env EAGLE3_POOL_YOUNG_MB=32 node dist/cli.js …'.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const args = process.argv.slice(2);
let repeat = 1;
if (args[0] === '--repeat') {
  repeat = Number(args[1]);
  args.splice(0, 2);
}
const commands = [];
for (const a of args)
  if (a === '--') commands.push(null);
  else if (commands.length) commands[commands.length - 1] = a;
if (!commands.length || commands.some((c) => !c)) {
  console.error("usage: node scripts/thread-cpu.mjs [--repeat N] -- 'command' [-- 'command' …]");
  process.exit(2);
}
const TICK = 100; // clock ticks per second (getconf CLK_TCK)

/** Runs `command` (through sh) and samples its threads; resolves with the figures. */
function measure(command) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('sh', ['-c', `exec ${command}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const threads = new Map();
    const sample = () => {
      let tids;
      try {
        tids = readdirSync(`/proc/${child.pid}/task`);
      } catch {
        return;
      }
      for (const tid of tids) {
        try {
          const s = readFileSync(`/proc/${child.pid}/task/${tid}/stat`, 'utf8');
          const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
          threads.set(Number(tid), (Number(f[11]) + Number(f[12])) / TICK);
        } catch {
          /* the thread ended between the listing and the read */
        }
      }
    };
    const timer = setInterval(sample, 20);
    child.on('exit', (code) => {
      clearInterval(timer);
      if (code !== 0) return reject(new Error(`${command}: exit ${code}\n${stderr.slice(-2000)}`));
      const wall = (performance.now() - t0) / 1000;
      const pid = child.pid;
      const v8 = [...threads.keys()]
        .filter((t) => t !== pid)
        .sort((a, b) => a - b)
        .slice(0, 4);
      const r = { wall, cpu: 0, main: threads.get(pid) ?? 0, v8: 0, others: 0, load: loadavg()[0], threads: {} };
      for (const [tid, cpu] of threads) {
        r.cpu += cpu;
        if (v8.includes(tid)) r.v8 += cpu;
        else if (tid !== pid) r.others += cpu;
        if (cpu >= 0.05) r.threads[tid === pid ? 'main' : tid - pid] = cpu;
      }
      resolve(r);
    });
  });
}

const runs = commands.map(() => []);
for (let k = 0; k < repeat; k++)
  for (let i = 0; i < commands.length; i++) {
    const r = await measure(commands[i]);
    runs[i].push(r);
    console.error(`[${k + 1}/${repeat}] ${commands[i]}\n  ${JSON.stringify(r, (key, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v))}`);
  }
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
for (let i = 0; i < commands.length; i++) {
  const m = (k) => Math.round(median(runs[i].map((r) => r[k])) * 100) / 100;
  const loads = runs[i].map((r) => r.load);
  console.log(
    JSON.stringify({
      command: commands[i],
      runs: runs[i].length,
      wall: m('wall'),
      cpu: m('cpu'),
      main: m('main'),
      v8: m('v8'),
      others: m('others'),
      load: [Math.min(...loads), Math.max(...loads)].map((x) => Math.round(x * 10) / 10),
    }),
  );
}
