/** The CLI contract: commands, output shapes and exit codes (run from source with tsx). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, writeJsonl } from '../helpers';

const ROOT = join(__dirname, '..', '..');
function cli(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli.ts'), ...args], { encoding: 'utf8', cwd: ROOT });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('prepare --out writes the four outputs and exits 0; --json prints the report', () => {
  const out = tempDir();
  const r = cli(
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
  assert.equal(rep.ok, true);
  assert.deepEqual(rep.templateKwargs, { enable_thinking: false });
  assert.equal(rep.totals.recordsWritten, 6);
  assert.equal(rep.totals.rowsSetAside, 4);
  for (const f of ['tokenized_data.jsonl', 'prompts_to_generate.jsonl', 'report.json', 'report.md']) assert.ok(existsSync(join(out, f)), f);
  // Thinking off: the pre-filled empty think block is prompt, not trained.
  const first = JSON.parse(readFileSync(join(out, 'tokenized_data.jsonl'), 'utf8').split('\n')[0]);
  assert.equal(first.id, 'chat-0#0');
  assert.equal(first.n_response_tokens, 12);
});

test('prepare exits 1 naming the file when an input yields nothing', () => {
  const file = writeJsonl([{ a: 1 }]);
  const r = cli('prepare', file, '--out', tempDir());
  assert.equal(r.code, 1);
  assert.ok(r.stdout.includes(file));
  assert.match(r.stdout, /FAILED/);
});

test('usage errors exit 2 with the reason', () => {
  const r = cli('prepare', 'samples/prompts-only.jsonl', '--mask', 'everything');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--mask must be assistant, last-assistant or non-system/);
  assert.equal(cli('frobnicate').code, 2);
  assert.match(cli('prepare', 'samples/prompts-only.jsonl', '--template-kwargs', '{oops').stderr, /--template-kwargs is not valid JSON/);
  assert.equal(cli('prepare', 'no/such/file.jsonl').code, 1);
  const w = cli('prepare', 'samples/prompts-only.jsonl', '--workers', '0');
  assert.equal(w.code, 2);
  assert.match(w.stderr, /--workers must be a positive integer \(got "0"\)/);
  const s = cli('prepare', 'samples/prompts-only.jsonl', '--shard', '0/2');
  assert.equal(s.code, 2);
  assert.match(s.stderr, /--shard needs --out/);
  assert.match(cli('merge-reports', tempDir()).stderr, /merge-reports needs --out DIR/);
});

test('merge-reports exits 1 naming a folder that holds no shard report', () => {
  const dir = tempDir();
  const r = cli('merge-reports', dir, '--out', tempDir());
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(join(dir, 'report.json')), r.stderr);
});

test('inspect --json prints the contract shape', () => {
  const r = cli('inspect', 'samples/swe-agent-trajectory-field.jsonl', '--json');
  assert.equal(r.code, 0, r.stderr);
  const o = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(o).sort(), ['evidence', 'file', 'format', 'records', 'rows_read', 'skipped', 'unread_fields']);
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

test('inspect fails clearly on a file with no conversational record', () => {
  const file = writeJsonl(['name,age', 'bob,3'], 'table.jsonl');
  const r = cli('inspect', file, '--json');
  assert.equal(r.code, 1);
  assert.ok(r.stderr.includes(file), r.stderr);
});
