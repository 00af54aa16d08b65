/**
 * Shards on real schedulers, from the scripts docs/scale.md shows (extracted from the page, so the
 * page and this test cannot drift):
 *
 * - Slurm: a single-node cluster of this machine (munged, slurmctld, slurmd from Debian's
 *   `slurm-wlm`, started here in a temp folder with a generated slurm.conf: no cgroups, the node's
 *   real CPUs and memory as `slurmd -C` reports them) runs the documented job array script
 *   (`prepare --shard $SLURM_ARRAY_TASK_ID/N`) and the documented merge job (`sbatch
 *   --dependency=afterok`, `merge-reports --data`); the merged outputs equal one unsharded run byte
 *   for byte. Skipped, with the reason, when slurm-wlm is not installed or the test is not root
 *   (slurmd runs the jobs as their user). Every daemon is stopped and the folder removed whatever the
 *   outcome.
 * - Kubernetes: the documented Indexed Job manifest is valid YAML with what a Job needs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { randomBytes } from 'node:crypto';
import { cliNodeArgs, lenmlModelDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');
const SCALE_MD = readFileSync(join(ROOT, 'docs', 'scale.md'), 'utf8');
/** The CLI as the tests run it (the run's bundle, else from source under tsx; by absolute path: a job runs in its own folder). */
const CLI_CMD =
  cliNodeArgs().length === 1
    ? `${process.execPath} ${cliNodeArgs()[0]}`
    : `${process.execPath} --import ${join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')} ${join(ROOT, 'src', 'cli.ts')}`;
/** How docs/scale.md runs the CLI on a cluster. */
const DOC_CLI = 'node /opt/eagle3-prep/dist/cli.js';
/** Shards the test runs (the page's 16 on this machine would only take longer). */
const N = 3;

/** The fenced code blocks of a Markdown page with their info string. */
function codeBlocks(md: string): { lang: string; body: string }[] {
  return [...md.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1] as string, body: m[2] as string }));
}

/** The one block of `lang` that contains `marker`; fails when there is none or several. */
function docBlock(lang: string, marker: string): string {
  const found = codeBlocks(SCALE_MD).filter((b) => b.lang === lang && b.body.includes(marker));
  assert.equal(found.length, 1, `docs/scale.md: one \`\`\`${lang} block containing ${JSON.stringify(marker)} (found ${found.length})`);
  return (found[0] as { body: string }).body;
}

/** `s` with `from` replaced by `to` everywhere; fails when `from` is not in it (the page changed). */
function replaceAll(s: string, from: string | RegExp, to: string, what: string): string {
  const re = typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'g') : from;
  assert.match(s, re, `docs/scale.md's script no longer has ${what}`);
  return s.replace(re, to);
}

function slurmSkip(): string | false {
  const missing = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scontrol'].filter(
    (c) => spawnSync('sh', ['-c', `command -v ${c}`], { encoding: 'utf8', env: { ...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin` } }).status !== 0,
  );
  if (missing.length > 0) return `slurm-wlm is not installed (no ${missing.join(', ')}; apt-get install slurm-wlm munge)`;
  if (process.getuid?.() !== 0) return 'the Slurm test needs root (slurmd runs the jobs as their user, SlurmdUser=root)';
  return false;
}

/** A TCP port nothing listens on right now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (a && typeof a === 'object' ? res(a.port) : rej(new Error('no port'))));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A private single-node Slurm cluster in `dir`: its daemons, its environment for the client commands, and its stop. */
class Cluster {
  readonly env: NodeJS.ProcessEnv;
  private readonly daemons: { name: string; proc: ChildProcess }[] = [];
  private readonly onExit = () => {
    for (const d of this.daemons) if (d.proc.exitCode === null && d.proc.signalCode === null) d.proc.kill('SIGKILL');
  };

  constructor(readonly dir: string) {
    this.env = { ...process.env, SLURM_CONF: join(dir, 'slurm.conf'), PATH: `${process.env.PATH}:/usr/sbin:/sbin` };
    // A test process that ends without reaching its cleanup (an uncaught error) still takes the daemons with it.
    process.on('exit', this.onExit);
  }

  /** Runs a client command of this cluster; its stdout. */
  client(cmd: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(cmd, args, { env: this.env, encoding: 'utf8', cwd: this.dir, timeout: 20_000 });
    return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  }

  async start(): Promise<void> {
    const d = this.dir;
    for (const sub of ['munge', 'state', 'spool', 'log']) mkdirSync(join(d, sub));
    // munged wants its socket's folders executable by all, and its key private.
    chmodSync(d, 0o755);
    chmodSync(join(d, 'munge'), 0o755);
    writeFileSync(join(d, 'munge.key'), randomBytes(1024), { mode: 0o400 });
    const sock = join(d, 'munge', 'munge.sock');
    this.spawnDaemon('munged', [
      '-F',
      `--key-file=${join(d, 'munge.key')}`,
      `--socket=${sock}`,
      `--pid-file=${join(d, 'munge', 'munged.pid')}`,
      `--log-file=${join(d, 'log', 'munged.log')}`,
      `--seed-file=${join(d, 'munge', 'munged.seed')}`,
    ]);
    await this.until('munged socket', () => existsSync(sock), 10_000);

    // The node as slurmd sees it: `NodeName=<host> CPUs=2 Boards=1 ... RealMemory=24105` (first line).
    const probe = this.client('slurmd', ['-C']);
    const nodeLine = probe.stdout.split('\n').find((l) => l.startsWith('NodeName='));
    assert.ok(nodeLine, `slurmd -C printed no NodeName line: ${probe.stdout}${probe.stderr}`);
    const node = (/^NodeName=(\S+)/.exec(nodeLine) as RegExpExecArray)[1] as string;
    const [ctldPort, slurmdPort] = [await freePort(), await freePort()];
    const conf = [
      'ClusterName=eagle3test',
      `SlurmctldHost=${node}(127.0.0.1)`,
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${slurmdPort}`,
      'SlurmUser=root',
      'SlurmdUser=root',
      'AuthType=auth/munge',
      'CredType=cred/munge',
      `AuthInfo=socket=${sock}`,
      `StateSaveLocation=${join(d, 'state')}`,
      `SlurmdSpoolDir=${join(d, 'spool')}`,
      `SlurmctldPidFile=${join(d, 'slurmctld.pid')}`,
      `SlurmdPidFile=${join(d, 'slurmd.pid')}`,
      `SlurmctldLogFile=${join(d, 'log', 'slurmctld.log')}`,
      `SlurmdLogFile=${join(d, 'log', 'slurmd.log')}`,
      // No cgroups: processes tracked by /proc, no task binding, no accounting daemon.
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      'JobCompType=jobcomp/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core_Memory',
      'SchedulerType=sched/builtin',
      // A merge whose shards failed is cancelled, not left pending for ever.
      'DependencyParameters=kill_invalid_depend',
      'MpiDefault=none',
      'ReturnToService=2',
      'InactiveLimit=0',
      'KillWait=5',
      'MinJobAge=600',
      `${nodeLine.trim()} NodeAddr=127.0.0.1 State=UNKNOWN`,
      `PartitionName=test Nodes=${node} Default=YES MaxTime=INFINITE State=UP`,
      '',
    ].join('\n');
    writeFileSync(join(d, 'slurm.conf'), conf);
    this.spawnDaemon('slurmctld', ['-D', '-i', '-f', join(d, 'slurm.conf')]);
    this.spawnDaemon('slurmd', ['-D', '-N', node, '-f', join(d, 'slurm.conf')]);
    await this.until(
      'the node idle in sinfo',
      () => {
        const s = this.client('sinfo', ['-h', '-o', '%T']);
        return s.status === 0 && s.stdout.trim() === 'idle';
      },
      30_000,
    );
  }

  private spawnDaemon(name: string, args: string[]): void {
    const out = openSync(join(this.dir, 'log', `${name}.out`), 'a');
    const proc = spawn(name, args, { env: this.env, stdio: ['ignore', out, out] });
    closeSync(out);
    proc.on('error', () => {}); // reported by until() and the logs
    this.daemons.push({ name, proc });
  }

  /** Waits until `ok()` (polled every 250 ms); fails after `ms` with the daemons' logs. */
  async until(what: string, ok: () => boolean, ms: number): Promise<void> {
    const t0 = Date.now();
    while (!ok()) {
      const dead = this.daemons.find((x) => x.proc.exitCode !== null || x.proc.signalCode !== null);
      if (dead) assert.fail(`${dead.name} exited (${dead.proc.exitCode ?? dead.proc.signalCode}) while waiting for ${what}\n${this.logs()}`);
      if (Date.now() - t0 > ms) assert.fail(`timed out after ${ms / 1000} s waiting for ${what}\n${this.logs()}`);
      await sleep(250);
    }
  }

  /** The last lines of every daemon log and job output (for failure messages). */
  logs(): string {
    const files = [join(this.dir, 'log'), this.dir].flatMap((dir) =>
      existsSync(dir)
        ? readdirSync(dir)
            .filter((f) => f.endsWith('.out') || f.endsWith('.log'))
            .map((f) => join(dir, f))
        : [],
    );
    return files.map((f) => `--- ${relative(this.dir, f)}\n${readFileSync(f, 'utf8').split('\n').slice(-15).join('\n')}`).join('\n');
  }

  /** Cancels every job, then stops the daemons (SIGTERM, SIGKILL after 5 s). Never throws. */
  async stop(): Promise<void> {
    try {
      if (this.daemons.some((x) => x.name === 'slurmctld' && x.proc.exitCode === null)) {
        this.client('scancel', ['--full', '--user=root']);
        const t0 = Date.now();
        while (Date.now() - t0 < 10_000 && this.client('squeue', ['-h', '-o', '%i']).stdout.trim() !== '') await sleep(250);
      }
    } catch {
      // the daemons are stopped below either way
    }
    // slurmd first (it holds the jobs' steps), the controller, then munge, which both use.
    for (const name of ['slurmd', 'slurmctld', 'munged']) {
      for (const { proc } of this.daemons.filter((x) => x.name === name)) {
        if (proc.exitCode !== null || proc.signalCode !== null) continue;
        const exited = new Promise<void>((r) => proc.once('exit', () => r()));
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(t);
      }
    }
    process.off('exit', this.onExit);
  }
}

/** Files below `dir` (relative paths) with their bytes, reports left out (they carry times, folders and shard fields). */
function outputFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || ['report.json', 'report.md', 'problems.jsonl'].includes(e.name)) continue;
    files.set(relative(dir, join(e.parentPath ?? e.path, e.name)), readFileSync(join(e.parentPath ?? e.path, e.name)));
  }
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** Inputs: the seed samples plus a file with damaged rows, so rows are written, set aside, dropped and errored. */
function writeInputs(dir: string): void {
  mkdirSync(dir);
  for (const f of readdirSync(join(ROOT, 'samples')).filter((f) => f.endsWith('.jsonl'))) writeFileSync(join(dir, f), readFileSync(join(ROOT, 'samples', f)));
  const rows: string[] = [];
  for (let i = 0; i < 17; i++) {
    if (i % 6 === 3) rows.push('{"messages": [');
    else if (i % 6 === 5) rows.push(JSON.stringify({ prompt: `question ${i}` }));
    else
      rows.push(
        JSON.stringify({
          messages: [
            { role: 'user', content: `hello ${i}` },
            { role: 'assistant', content: `answer number ${i}` },
          ],
        }),
      );
  }
  writeFileSync(join(dir, 'damaged.jsonl'), rows.join('\n') + '\n');
}

test(
  'Slurm: the documented job array (prepare --shard $SLURM_ARRAY_TASK_ID/N) and merge job equal one unsharded run byte for byte',
  { skip: slurmSkip() },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'eagle3-slurm-'));
    const cluster = new Cluster(dir);
    try {
      // The page's scripts, with this machine's paths and sizes.
      const sbatchDoc = docBlock('bash', '#SBATCH --array=');
      const submitDoc = docBlock('bash', 'sbatch --parsable prep.sbatch');
      const docN = Number((/^N=(\d+)$/m.exec(sbatchDoc) ?? [])[1]);
      assert.match(sbatchDoc, new RegExp(`^#SBATCH --array=0-${docN - 1}$`, 'm'), 'the array covers shards 0…N-1');
      assert.match(sbatchDoc, /--shard "\$\{SLURM_ARRAY_TASK_ID\}\/\$\{N\}"/);
      const tokenizer = lenmlModelDir('qwen3');
      const paths: [string, string][] = [
        [DOC_CLI, CLI_CMD],
        ['/data/raw', join(dir, 'raw')],
        ['/models/Qwen3-8B', tokenizer],
        ['/data/eagle3', join(dir, 'eagle3')],
      ];
      for (const [from] of paths) assert.ok(sbatchDoc.includes(from), `docs/scale.md's job array script no longer has ${from}`);
      for (const from of [DOC_CLI, '/data/eagle3/shard-*']) assert.ok(submitDoc.includes(from), `docs/scale.md's submit commands no longer have ${from}`);
      const local = (s: string) => paths.reduce((acc, [from, to]) => acc.split(from).join(to), s);
      let script = local(sbatchDoc);
      script = replaceAll(script, /^N=\d+$/m, `N=${N}`, 'N=<shards>');
      script = replaceAll(script, /^#SBATCH --array=.*$/m, `#SBATCH --array=0-${N - 1}`, '#SBATCH --array');
      script = replaceAll(script, /^#SBATCH --cpus-per-task=.*$/m, '#SBATCH --cpus-per-task=1', '#SBATCH --cpus-per-task');
      script = replaceAll(script, /^#SBATCH --mem=.*$/m, '#SBATCH --mem=1G', '#SBATCH --mem');
      writeFileSync(join(dir, 'prep.sbatch'), script);
      writeFileSync(join(dir, 'submit.sh'), local(submitDoc));
      writeInputs(join(dir, 'raw'));
      mkdirSync(join(dir, 'eagle3'));

      // The unsharded run, while the cluster starts.
      const single = join(dir, 'single');
      const one = new Promise<{ code: number | null; stderr: string }>((res) => {
        const p = spawn('sh', ['-c', `${CLI_CMD} prepare ${join(dir, 'raw')} --tokenizer ${tokenizer} --workers 1 --out ${single} --quiet`], { cwd: dir });
        let stderr = '';
        p.stderr.on('data', (b) => (stderr += b));
        p.on('close', (code) => res({ code, stderr }));
      });
      await cluster.start();
      const sub = spawnSync('bash', ['submit.sh'], { cwd: dir, env: cluster.env, encoding: 'utf8', timeout: 30_000 });
      assert.equal(sub.status, 0, `${sub.stdout}${sub.stderr}`);
      assert.match(sub.stdout, /^Submitted batch job \d+$/m);
      await cluster.until('every job done', () => cluster.client('squeue', ['-h', '-o', '%i']).stdout.trim() === '', 120_000);
      const jobs = cluster
        .client('scontrol', ['show', 'job', '-o'])
        .stdout.split('\n')
        .filter(Boolean)
        .map(
          (l) => `${/JobName=(\S+)/.exec(l)?.[1]} ${/ArrayTaskId=(\S+)/.exec(l)?.[1] ?? '-'} ${/JobState=(\S+)/.exec(l)?.[1]} ${/ExitCode=(\S+)/.exec(l)?.[1]}`,
        )
        .sort();
      assert.deepEqual(jobs, [...Array.from({ length: N }, (_, i) => `eagle3-prep ${i} COMPLETED 0:0`), 'wrap - COMPLETED 0:0'].sort(), cluster.logs());

      const r = await one;
      assert.equal(r.code, 0, r.stderr);
      const want = outputFiles(single);
      const got = outputFiles(join(dir, 'eagle3', 'all'));
      assert.ok(
        [...want.keys()].some((f) => /tokenized_data\.jsonl$/.test(f)) && [...want.keys()].some((f) => /prompts_to_generate\.jsonl$/.test(f)),
        [...want.keys()].join(', '),
      );
      assert.deepEqual([...got.keys()], [...want.keys()]);
      for (const [f, bytes] of want) assert.ok(bytes.equals(got.get(f) as Buffer), `${f} differs between the merged shards and one run`);
      // Each shard wrote its share, and the merged report accounts for every row of the single run.
      for (let i = 0; i < N; i++) assert.ok(existsSync(join(dir, 'eagle3', `shard-${i}`, 'report.json')), `shard-${i}`);
      const totals = (p: string) => (JSON.parse(readFileSync(p, 'utf8')) as { totals: unknown }).totals;
      assert.deepEqual(totals(join(dir, 'eagle3', 'all', 'report.json')), totals(join(single, 'report.json')));
    } finally {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('Kubernetes: the documented Indexed Job manifest is a valid batch/v1 Job, one pod per shard', () => {
  // js-yaml is in node_modules (a dependency of the lint tools), not a dependency of the project.
  const yaml = createRequire(__filename)('js-yaml') as { load(s: string): unknown };
  const job = yaml.load(docBlock('yaml', 'kind: Job')) as {
    apiVersion: unknown;
    kind: unknown;
    metadata?: { name?: string };
    spec: {
      completionMode: unknown;
      completions: number;
      parallelism: number;
      template: {
        spec: {
          restartPolicy: string;
          containers: { name: unknown; image: unknown; command: unknown[]; args?: unknown[]; volumeMounts?: { name: string }[] }[];
          volumes?: { name: string }[];
        };
      };
    };
  };
  assert.equal(job.apiVersion, 'batch/v1');
  assert.equal(job.kind, 'Job');
  assert.equal(typeof job.metadata?.name, 'string');
  assert.match(job.metadata?.name ?? '', /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a DNS-1123 name');
  const spec = job.spec;
  assert.equal(spec.completionMode, 'Indexed');
  assert.ok(Number.isInteger(spec.completions) && spec.completions > 0, 'completions');
  assert.ok(Number.isInteger(spec.parallelism) && spec.parallelism > 0 && spec.parallelism <= spec.completions, 'parallelism');
  assert.ok(['Never', 'OnFailure'].includes(spec.template.spec.restartPolicy), 'restartPolicy Never or OnFailure (a Job rejects Always)');
  const containers = spec.template.spec.containers;
  assert.ok(Array.isArray(containers) && containers.length === 1);
  const c = containers[0] as (typeof containers)[number];
  assert.equal(typeof c.name, 'string');
  assert.equal(typeof c.image, 'string');
  assert.ok(Array.isArray(c.command) && c.command.every((s: unknown) => typeof s === 'string'));
  const line = [...c.command, ...(c.args ?? [])].join(' ');
  // The shard is the pod's index, out of the Job's completions; each pod writes its own folder.
  assert.ok(line.includes(`--shard "\${JOB_COMPLETION_INDEX}/${spec.completions}"`), line);
  assert.ok(line.includes('--out "/data/eagle3/shard-${JOB_COMPLETION_INDEX}"'), line);
  assert.ok(line.startsWith(`sh -c ${DOC_CLI} prepare `), line);
  // Every mounted volume is declared.
  const volumes = new Set((spec.template.spec.volumes ?? []).map((v) => v.name));
  for (const m of c.volumeMounts ?? []) assert.ok(volumes.has(m.name), `volume ${m.name}`);
});
