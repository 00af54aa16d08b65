// The V8 code cache of the Node bundles (src/boot/codeCache.ts; docs/scale.md "The bundles' code cache"): a first
// load makes an entry, a second one is compiled from it (V8 accepts it: cachedDataRejected false), a damaged, foreign,
// stale or rejected entry is a miss with the same result, and the built CLI writes the same bytes with and without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { CODE_CACHE_TRACE_ENV, codeCacheEntry, decodeEntry, encodeEntry, NO_CODE_CACHE_ENV } from '../../src/boot/codeCache';
import { lenmlModelDir, tempDir } from '../helpers';

const ROOT = join(__dirname, '..', '..');

/** A small CommonJS bundle in `dir` (with a shebang, a relative require, and functions compiled lazily). */
function writeBundle(dir: string, name = 'b-bundle.js', tail = ''): string {
  writeFileSync(join(dir, 'dep.js'), 'module.exports = { twice: (x) => 2 * x };\n');
  const path = join(dir, name);
  writeFileSync(
    path,
    [
      '#!/usr/bin/env node',
      '"use strict";',
      "const dep = require('./dep.js');",
      'function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }',
      'function lazyOnly() { return [1, 2, 3].map((x) => x * x).join(","); }',
      'module.exports = { fib10: fib(10), twice: dep.twice(21), file: __filename, dir: __dirname, main: require.main === module, lazyOnly, self: module };',
      tail,
    ].join('\n'),
  );
  return path;
}

/**
 * The loader as it runs in dist/: in a fresh process (V8's in-memory compilation cache would answer a second compile
 * of the same source in this one, whatever the entry), built here from src/boot/codeCache.ts. It loads `bundle` as
 * its own body (it is the main module) and prints what it did and what the bundle exported. Its second argument:
 * `flush` (write the entry after), `auto` (the loader's own writes: at exit, and in a worker thread, which it then keeps
 * alive until terminated, by the periodic check), else none.
 */
let harnessPath: string | undefined;
async function harness(): Promise<string> {
  if (harnessPath) return harnessPath;
  const esbuild = await import('esbuild');
  const dir = tempDir('eagle3-codecache-harness-');
  writeFileSync(
    join(dir, 'harness.ts'),
    [
      `import { runBundle } from ${JSON.stringify(join(ROOT, 'src', 'boot', 'codeCache'))};`,
      'const [bundle, flush] = process.argv.slice(2);',
      "const load = runBundle(bundle, module, flush === 'auto' ? {} : { autoFlush: false });",
      "if (flush === 'auto' && !require('node:worker_threads').isMainThread) setInterval(() => {}, 50);",
      'const e = module.exports as Record<string, unknown>;',
      'const out = { how: load.how, reason: load.reason ?? null, entry: load.entry, fib10: e.fib10, twice: e.twice, file: e.file, dir: e.dir,',
      "  main: e.main, self: e.self === module, lazy: (e.lazyOnly as () => string)(), flushed: flush === 'flush' ? load.flush() : null };",
      'process.stdout.write(JSON.stringify(out));',
    ].join('\n'),
  );
  harnessPath = join(dir, 'harness.js');
  await esbuild.build({ entryPoints: [join(dir, 'harness.ts')], outfile: harnessPath, bundle: true, platform: 'node', format: 'cjs', logLevel: 'error' });
  return harnessPath;
}

interface Loaded {
  how: string;
  reason: string | null;
  entry: string | null;
  flushed: boolean | null;
}

/** Loads `bundle` through the loader in a fresh process, with the code cache in `cache`; `flush`: write the entry after. */
async function load(bundle: string, cache: string, flush: boolean | 'auto' = false, extraEnv: Record<string, string> = {}): Promise<Loaded> {
  const r = spawnSync(process.execPath, [await harness(), bundle, flush === 'auto' ? 'auto' : flush ? 'flush' : ''], {
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '', EAGLE3_TOKENIZER_CACHE: cache, ...extraEnv },
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as Loaded & Record<string, unknown>;
  // What the bundle did is the same however it was compiled.
  assert.deepEqual(
    { fib10: out.fib10, twice: out.twice, file: out.file, dir: out.dir, main: out.main, self: out.self, lazy: out.lazy },
    { fib10: out.fib10 === 89 ? 89 : 55, twice: 42, file: bundle, dir: join(bundle, '..'), main: true, self: true, lazy: '1,4,9' },
  );
  return out;
}

test('a first load makes an entry, the second is compiled from it (V8 accepts it), and the bundle runs the same', async () => {
  const dir = tempDir('eagle3-codecache-');
  const cache = tempDir('eagle3-codecache-dir-');
  const bundle = writeBundle(dir);
  const first = await load(bundle, cache);
  assert.deepEqual([first.how, first.reason, first.flushed], ['miss', 'missing', null]);
  assert.match(first.entry!, /code-b-bundle\.js-[0-9a-f]{32}\.v8$/);
  assert.equal(existsSync(first.entry!), false, 'nothing written without a flush');
  assert.equal((await load(bundle, cache, true)).flushed, true);
  assert.ok(existsSync(first.entry!));
  const second = await load(bundle, cache, true);
  assert.deepEqual([second.how, second.reason, second.entry], ['cache', null, first.entry], 'cachedDataRejected false');
  assert.equal(second.flushed, false, 'an accepted entry of as much work is kept');
});

test("the loader's own writes: at a process's exit, and from a worker thread that is terminated (no exit)", async () => {
  const dir = tempDir('eagle3-codecache-');
  const bundle = writeBundle(dir);
  const cache = tempDir('eagle3-codecache-dir-');
  const r = await load(bundle, cache, 'auto');
  assert.deepEqual([r.how, r.flushed], ['miss', null]);
  assert.ok(existsSync(r.entry!), 'written at exit');
  assert.equal((await load(bundle, cache)).how, 'cache');

  const cache2 = tempDir('eagle3-codecache-dir-');
  const w = new Worker(await harness(), {
    argv: [bundle, 'auto'],
    env: { ...process.env, EAGLE3_TOKENIZER_CACHE: cache2 },
    stdout: true,
    execArgv: [], // not this process's tsx (which turns source maps on: the plain load)
  });
  let failed: unknown;
  w.on('error', (e) => (failed = e));
  const entries = () => readdirSync(cache2).filter((f) => f.endsWith('.v8'));
  try {
    // The check runs every second; a loaded machine may take longer to schedule the thread.
    for (let waited = 0; entries().length === 0 && !failed && waited < 60_000; waited += 100) await new Promise((res) => setTimeout(res, 100));
  } finally {
    await w.terminate();
  }
  assert.equal(failed, undefined);
  assert.equal(entries().length, 1, 'written by the worker thread before it was terminated');
  // Read by another thread of this process: V8's flags are the process's (a test runner's --max-old-space-size, for one,
  // is part of the cache's flag check), so a process started with other flags would rightly reject the entry.
  const reader = new Worker(await harness(), { argv: [bundle, ''], env: { ...process.env, EAGLE3_TOKENIZER_CACHE: cache2 }, stdout: true, execArgv: [] });
  let text = '';
  reader.stdout.on('data', (d: Buffer) => (text += d.toString()));
  await new Promise((res, rej) => (reader.on('exit', res), reader.on('error', rej)));
  const again = JSON.parse(text) as Loaded;
  assert.deepEqual([again.how, again.reason], ['cache', null], "another thread accepts the worker thread's entry");
});

test('a damaged, foreign, stale or rejected entry is a miss with the same result, and is rewritten', async () => {
  const dir = tempDir('eagle3-codecache-');
  const cache = tempDir('eagle3-codecache-dir-');
  const bundle = writeBundle(dir);
  const entry = (await load(bundle, cache, true)).entry!;
  const good = readFileSync(entry);
  const key = good.subarray(0, good.indexOf(10)).toString('latin1').split(' ')[2];
  const body = (decodeEntry(good, key) as { body: Buffer }).body;
  const flipped = Buffer.from(good);
  flipped[flipped.length - 10] ^= 0xff;
  const cases: [string, Buffer, string][] = [
    ['a flipped byte in the body', flipped, 'damaged (checksum)'],
    ['a truncated entry', good.subarray(0, good.length - 100), 'damaged (checksum)'],
    ['an empty file', Buffer.alloc(0), 'no header'],
    ['another format', Buffer.from(good.toString('latin1').replace('eagle3-code-cache 1 ', 'eagle3-code-cache 0 '), 'latin1'), 'another format'],
    ["another bundle's or runtime's entry", encodeEntry('0'.repeat(64), body, 5), 'another bundle or runtime'],
    ['garbage V8 refuses (header, key and checksum right)', encodeEntry(key, Buffer.from('not a code cache, not at all '.repeat(40)), 5), 'rejected by V8'],
  ];
  for (const [what, bytes, reason] of cases) {
    writeFileSync(entry, bytes);
    const r = await load(bundle, cache, true);
    assert.deepEqual([r.how, r.reason, r.flushed], ['miss', reason, true], what);
    assert.equal((await load(bundle, cache)).how, 'cache', `${what}: the rewritten entry is accepted`);
  }
  // A changed bundle of the same length (V8's own check compares lengths only) misses, and its entry takes the slot.
  const text = readFileSync(bundle, 'utf8');
  writeFileSync(bundle, text.replace('fib(10)', 'fib(11)'));
  assert.equal(readFileSync(bundle).length, Buffer.byteLength(text));
  const stale = await load(bundle, cache, true);
  assert.deepEqual([stale.how, stale.reason, stale.entry, stale.flushed], ['miss', 'another bundle or runtime', entry, true]);
  assert.equal((await load(bundle, cache)).how, 'cache');
  assert.equal(codeCacheEntry(bundle, readFileSync(bundle), cache).file.startsWith(join(cache, 'code-b-bundle.js-')), true);
});

test('off: EAGLE3_NO_CODE_CACHE=1 or the tokenizer cache off loads the bundle as require does, and writes nothing', async () => {
  const dir = tempDir('eagle3-codecache-');
  const cache = tempDir('eagle3-codecache-dir-');
  const bundle = writeBundle(dir);
  const envs: Record<string, string>[] = [{ [NO_CODE_CACHE_ENV]: '1' }, { EAGLE3_TOKENIZER_CACHE: 'off' }];
  for (const env of envs) {
    const r = await load(bundle, cache, true, env);
    assert.deepEqual([r.how, r.entry, r.flushed], ['plain', null, false]);
  }
  assert.deepEqual(readdirSync(cache), []);
});

test("the bundle's own errors propagate as a require's would; a cache folder that cannot be made is skipped", async () => {
  const dir = tempDir('eagle3-codecache-');
  const cache = tempDir('eagle3-codecache-dir-');
  const bad = writeBundle(dir, 'bad-bundle.js', 'throw new Error("the bundle threw");');
  const r = spawnSync(process.execPath, [await harness(), bad], { encoding: 'utf8', env: { ...process.env, EAGLE3_TOKENIZER_CACHE: cache } });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /the bundle threw/);
  const blocked = join(cache, 'file');
  writeFileSync(blocked, '');
  const skipped = await load(writeBundle(dir), join(blocked, 'sub'), true);
  assert.deepEqual([skipped.how, skipped.flushed], ['miss', false]);
});

/** The folder of a built CLI (loaders and bundles): the unit run's bundle, else one built here. */
async function builtCli(): Promise<string> {
  const run = process.env.EAGLE3_TEST_CLI;
  if (run && existsSync(join(run, '..', 'cli-bundle.js'))) return join(run, '..');
  const { nodeEntries } = await import('../../scripts/bundle-options.mjs');
  const esbuild = await import('esbuild');
  const out = tempDir('eagle3-codecache-cli-');
  await Promise.all(nodeEntries(ROOT, out).map((b) => esbuild.build(b as Parameters<typeof esbuild.build>[0])));
  return out;
}

test('the built CLI writes the same bytes with the cache off, on a miss and from an accepted entry (with a worker pool)', async () => {
  const cli = await builtCli();
  const input = join(ROOT, 'samples', 'chat-sharegpt-human-gpt.jsonl');
  const cache = tempDir('eagle3-codecache-run-');
  const run = (name: string, env: Record<string, string>, more: string[] = []) => {
    const out = join(tempDir('eagle3-codecache-out-'), name);
    const args = [join(cli, 'cli.js'), 'prepare', input, '--out', out, '--quiet', '--tokenizer', lenmlModelDir('qwen3'), ...more];
    const r = spawnSync(process.execPath, args, {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', EAGLE3_TOKENIZER_CACHE: cache, [CODE_CACHE_TRACE_ENV]: '1', ...env },
    });
    assert.equal(r.status, 0, r.stderr);
    return { out, trace: r.stderr.split('\n').filter((l) => l.startsWith('code cache: ')) };
  };
  const files = (out: string) => {
    const read = (f: string) => readFileSync(join(out, f), 'utf8').split(out).join('<out>');
    const report = JSON.parse(read('report.json')) as Record<string, unknown>;
    delete report.elapsed_ms;
    delete report.throughput;
    return {
      data: read(join('data', 'tokenized_data.jsonl')),
      problems: read('problems.jsonl'),
      prompts: read('prompts_to_generate.jsonl'),
      counts: read('token_counts.json'),
      report,
    };
  };
  const off = run('off', { [NO_CODE_CACHE_ENV]: '1' });
  assert.equal(off.trace.length, 1, off.trace.join('\n'));
  assert.match(off.trace[0], /^code cache: cli-bundle\.js plain \(off\), read in /);
  assert.deepEqual(
    readdirSync(cache).filter((f) => f.startsWith('code-')),
    [],
  );
  const miss = run('miss', {});
  assert.match(miss.trace[0], /^code cache: cli-bundle\.js miss \(missing\), compiled in /);
  assert.match(miss.trace.at(-1)!, /^code cache: cli-bundle\.js wrote \d+ bytes$/, 'the entry is written at exit');
  const hit = run('hit', {}, ['--workers', '2']);
  assert.match(hit.trace[0], /^code cache: cli-bundle\.js cache, compiled in /, 'V8 accepted the entry');
  assert.ok(
    hit.trace.some((l) => /^code cache: worker-bundle\.js (miss|cache).*\(worker thread\)$/.test(l)),
    hit.trace.join('\n'),
  );
  const want = files(off.out);
  assert.ok(want.data.length > 1000);
  assert.deepStrictEqual(files(miss.out), want);
  assert.deepStrictEqual(files(hit.out), want);
});

test("a bundle's exit code, uncaught error and stack trace are as without the loader, on a miss and from an entry", async () => {
  const dir = tempDir('eagle3-codecache-');
  const cache = join(dir, 'cache');
  const tail = [
    "if (process.env.T === 'exit') { process.exitCode = 3; setTimeout(() => process.exit(7), 5); }",
    "if (process.env.T === 'throw') setTimeout(function thrower() { throw new TypeError('boom at the tail'); }, 5);",
  ].join('\n');
  const bundle = writeBundle(dir, 'b-bundle.js', tail);
  const run = async (t: string) =>
    spawnSync(process.execPath, [await harness(), bundle, 'auto'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', EAGLE3_TOKENIZER_CACHE: cache, [CODE_CACHE_TRACE_ENV]: '1', T: t },
    });
  // Node's report of an uncaught error: the file and line, the source line, the error and its first frame.
  const report = (stderr: string) =>
    /(\S*b-bundle\.js:\d+\n.*\n\s*\^\n\nTypeError: boom at the tail\n\s+at Timeout\.thrower \[as _onTimeout\] \(\S+\))/.exec(stderr)?.[1];
  const plain = spawnSync(process.execPath, [bundle], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', T: 'throw' } });
  assert.equal(plain.status, 1);
  assert.ok(report(plain.stderr)?.includes('b-bundle.js:8:'), plain.stderr);
  const first = await run('exit');
  assert.equal(first.status, 7, first.stderr);
  assert.match(first.stderr, /b-bundle\.js miss \(missing\)/);
  assert.match(first.stderr, /wrote \d+ bytes/); // written at the exit of a non-zero code too
  for (let k = 0; k < 2; k++) {
    const r = await run('throw');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /b-bundle\.js cache,/);
    assert.equal(report(r.stderr), report(plain.stderr));
  }
});

test("a minified bundle's first line keeps its columns in stack traces (the wrapper is on a line of its own)", async () => {
  const dir = tempDir('eagle3-codecache-');
  const cache = join(dir, 'cache');
  // All on the first line, as esbuild's minified output starts; the throw is at column 36 of the file.
  const bundle = join(dir, 'm-bundle.js');
  writeFileSync(bundle, '"use strict";function boom(){throw new TypeError("x")}if(process.env.T)boom();module.exports={};\n');
  const frame = (stderr: string) => /at boom \((\S+)\)/.exec(stderr)?.[1];
  const plain = spawnSync(process.execPath, [bundle], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '', T: '1' } });
  assert.equal(frame(plain.stderr), `${bundle}:1:36`);
  for (const how of ['miss', 'cache']) {
    const r = spawnSync(process.execPath, [await harness(), bundle, 'auto'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '', EAGLE3_TOKENIZER_CACHE: cache, [CODE_CACHE_TRACE_ENV]: '1', T: '1' },
    });
    assert.match(r.stderr, new RegExp(`m-bundle\\.js ${how}`));
    assert.equal(frame(r.stderr), `${bundle}:1:36`);
    assert.ok(r.stderr.includes(`${bundle}:1\n"use strict";function boom()`), r.stderr); // Node's report: the file's line 1
  }
});
