/** The CLI contract: commands, output shapes and exit codes (run from source with tsx). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliNodeArgs, runCli, tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
/** The CLI as a process of its own (the run's bundle, or src/cli.ts under tsx: helpers.ts `cliNodeArgs`): the entry point's exit code and flushed output. */
function cliProcess(...args: string[]) {
  const r = spawnSync(process.execPath, [...cliNodeArgs(), ...args], { encoding: 'utf8', cwd: ROOT });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** The CLI's main in this process (runCli): the commands' contract without a process start per call. */
async function cli(...args: string[]) {
  const r = await runCli(args, { cwd: ROOT });
  return { code: r.status as number | null, stdout: r.stdout, stderr: r.stderr };
}

test('prepare --out writes the four outputs and exits 0; --json prints the report (a process of its own)', () => {
  const out = tempDir();
  const r = cliProcess(
    'prepare',
    'samples/chat-sharegpt-human-gpt.jsonl',
    'samples/prompts-only.jsonl',
    '--out',
    out,
    '--json',
    '--template-kwargs',
    '{"enable_thinking": false}',
  );
  assert.equal(r.code, 0, r.stderr);
  const rep = JSON.parse(r.stdout);
  assert.equal(rep.schema_version, 2);
  assert.equal(rep.ok, true);
  // Thinking off: no empty think block is trained, nothing else changes the data.
  assert.equal(rep.status, 'ok');
  assert.deepEqual(rep.warnings, []);
  assert.deepEqual(rep.template_kwargs, { enable_thinking: false });
  assert.equal(rep.totals.records_written, 6);
  assert.equal(rep.totals.rows_set_aside, 4);
  assert.deepEqual(rep, JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')));
  for (const f of ['data/tokenized_data.jsonl', 'prompts_to_generate.jsonl', 'report.json', 'report.md']) assert.ok(existsSync(join(out, f)), f);
  // Thinking off: the pre-filled empty think block is prompt, not trained.
  const first = JSON.parse(readFileSync(join(out, 'data', 'tokenized_data.jsonl'), 'utf8').split('\n')[0]);
  assert.equal(first.id, 'chat-0#0');
  assert.equal(first.n_response_tokens, 12);
});

test('prepare exits 1 naming the file when an input yields nothing', async () => {
  const file = writeJsonl([{ a: 1 }]);
  const r = await cli('prepare', file, '--out', tempDir());
  assert.equal(r.code, 1);
  assert.ok(r.stdout.includes(file));
  assert.match(r.stdout, /FAILED/);
});

test('usage errors exit 2 naming the option at fault, with the usage line of that command only', async () => {
  const r = await cli('prepare', 'samples/prompts-only.jsonl', '--mask', 'everything');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /option '--mask <policy>' argument 'everything' is invalid\. Allowed choices are assistant, last-assistant, non-system/);
  assert.match(r.stderr, /^Usage: eagle3-prep prepare \[options\] <inputs\.\.\.>$/m);
  assert.ok(!r.stderr.includes('merge-reports'), 'a usage error prints the usage of its own command, not the global help');
  assert.ok(r.stderr.split('\n').length <= 4, r.stderr);
  assert.equal((await cli('frobnicate')).code, 2);
  assert.match(
    (await cli('prepare', 'samples/prompts-only.jsonl', '--template-kwargs', '{oops')).stderr,
    /'--template-kwargs <json>' argument '\{oops' is invalid\. It is not valid JSON/,
  );
  assert.equal((await cli('prepare', 'no/such/file.jsonl')).code, 1);
  const w = await cli('prepare', 'samples/prompts-only.jsonl', '--workers', '0');
  assert.equal(w.code, 2);
  assert.match(w.stderr, /option '--workers <n\|auto>' argument '0' is invalid\. A whole number ≥ 1, or auto, is expected/);
  const s = await cli('prepare', 'samples/prompts-only.jsonl', '--shard', '0/2');
  assert.equal(s.code, 2);
  assert.match(s.stderr, /--shard needs --out/);
  const u = await cli('prepare', 'samples/prompts-only.jsonl', '--frobnicate');
  assert.equal(u.code, 2);
  assert.match(u.stderr, /unknown option '--frobnicate'/);
  const m = await cli('merge-reports', tempDir());
  assert.equal(m.code, 2);
  assert.match(m.stderr, /required option '--out <dir>' not specified/);
  assert.match(m.stderr, /^Usage: eagle3-prep merge-reports /m);
  const i = await cli('inspect', 'a.jsonl', 'b.jsonl');
  assert.equal(i.code, 2);
  assert.match(i.stderr, /too many arguments for 'inspect'/);
});

test('every command has its own --help explaining each option with its default; --version', async () => {
  const help = async (cmd: string) => {
    const r = await cli(cmd, '--help');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Usage: eagle3-prep ${cmd} `, 'm'));
    return r.stdout.replace(/\s+/g, ' ');
  };
  const p = await help('prepare');
  for (const [flag, dflt] of [
    ['--tokenizer <dir>', 'the embedded Qwen3 tokenizer'],
    ['--mask <policy>', 'assistant'],
    ['--max-length <tokens>', 'no limit'],
    ['--workers <n|auto>', 'auto; 1 when the inputs add up to less than 4 MB'],
    ['--template-kwargs <json>', '{}'],
  ])
    assert.match(p, new RegExp(`${flag.replace(/[[\]{}.*+?()^$|\\]/g, '\\$&')} .*?default: ${dflt.replace(/[[\]{}.*+?()^$|\\]/g, '\\$&')}`), flag);
  for (const flag of ['--truncate', '--allow-empty', '--json', '--quiet', '--out <dir>', '--shard <i/n>', '--mapping <file>'])
    assert.ok(p.includes(flag), flag);
  assert.ok(!p.includes('--server'), 'prepare --help does not list generate options');
  assert.match(await help('generate'), /--max-tokens <n> .*default: 8192/);
  assert.match(await help('inspect'), /--limit <rows>/);
  assert.match(await help('check-template'), /--template-kwargs <json>/);
  assert.match(await help('merge-reports'), /--data/);
  const v = await cli('--version');
  assert.equal(v.code, 0);
  assert.equal(v.stdout.trim(), JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  const none = await cli();
  assert.equal(none.code, 2);
  assert.match(none.stderr, /Commands:[\s\S]*prepare[\s\S]*generate/);
});

test('merge-reports exits 1 naming a folder that holds no shard report', async () => {
  const dir = tempDir();
  const r = await cli('merge-reports', dir, '--out', tempDir());
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(join(dir, 'report.json')), r.stderr);
});

test('inspect --json prints the contract shape', async () => {
  const r = await cli('inspect', 'samples/swe-agent-trajectory-field.jsonl', '--json');
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(o).sort(), ['evidence', 'file', 'format', 'records', 'rows_read', 'schema_version', 'skipped', 'unread_fields']);
  assert.equal(o.schema_version, 1);
  assert.equal(o.format, 'role-text-trajectory');
  assert.equal(o.records.length, 2);
  assert.deepEqual(o.records[0].source, { line: 1 });
  assert.equal(o.records[0].id, 'sorting__0');
  assert.equal(o.records[0].needs_generation, false);
  assert.deepEqual(
    o.records[0].messages.slice(0, 3).map((m: any) => m.role),
    ['system', 'user', 'assistant'],
  );
  assert.match(o.records[0].messages[2].content, /^DISCUSSION\nStep 0/);
});

test('inspect fails clearly on a file with no conversational record', async () => {
  const file = writeJsonl(['name,age', 'bob,3'], 'table.jsonl');
  const r = await cli('inspect', file, '--json');
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(file), r.stderr);
});
