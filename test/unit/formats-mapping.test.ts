/** Field-mapping files (issue 3 item 4): workspace eagle3prep.jsonc, --mapping, suggested mapping for unknown shapes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { globMatch } from '../../src/core/formats/mapping';
import { loadMappingFile } from '../../src/core/read/mappingFile';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir } from '../helpers';

const DIR = join(__dirname, '..', 'fixtures', 'formats-mapping');

const expected = [
  { role: 'system', content: 'You are a support agent.' },
  { role: 'user', content: 'My order is late.' },
  { role: 'assistant', content: 'Sorry! Let me check.', reasoning_content: 'Look up the order.', trainable: false },
  { role: 'user', content: 'Thanks.' },
  { role: 'assistant', content: 'It ships today.' },
];

test('workspace eagle3prep.jsonc beside the file: turns, role/content keys, role aliases, system, reasoning, train flag, id', async () => {
  const r = await inspectFile(join(DIR, 'support.jsonl'));
  assert.equal(r.format, 'mapped');
  assert.ok(r.evidence[0].includes('eagle3prep.jsonc#1'), r.evidence[0]);
  assert.equal(r.records[0].id, 'T-1');
  assert.deepEqual(r.records[0].messages, expected);
  // A role the mapping does not name is still an error, never guessed.
  assert.equal(r.skipped.length, 1);
  assert.equal(r.skipped[0].code, 'unknown_role');
  assert.match(r.skipped[0].message, /unknown role "robot" in message 2/);
  const res = await prepare({ inputs: [join(DIR, 'support.jsonl')], outDir: tempDir() });
  const f = res.files[0];
  assert.deepEqual([f.rowsRead, f.rowsWritten, f.rowsErrored], [2, 1, 1]);
  assert.equal(f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored, f.rowsRead);
});

test('--mapping FILE applies to a file elsewhere; without it the file is unrecognized and a mapping is suggested', async () => {
  const dir = tempDir();
  const data = join(dir, 'support-2.jsonl');
  copyFileSync(join(DIR, 'support.jsonl'), data);
  await assert.rejects(inspectFile(data), (e: Error) => {
    // One paragraph (issue 12): the file, what was found — the candidate conversation and its unknown speaker —, and what would read it.
    assert.ok(e.message.includes(data));
    assert.ok(!e.message.includes('\n'), e.message);
    assert.match(e.message, /"dialogue\[\]\.speaker\/utterance" \(4 turns\) \(speakers not known: "customer"\)/);
    assert.match(e.message, /suggested from the first row \(fill in what is marked\): \{"mappings"/);
    const json = JSON.parse(e.message.slice(e.message.indexOf('{"mappings"')));
    // Known spellings ("agent") need no entry; the unknown one is left to fill in, never guessed.
    assert.deepEqual(json.mappings[0], {
      files: 'support-2.jsonl',
      turns: 'dialogue',
      role: 'speaker',
      content: 'utterance',
      roles: { customer: 'user|assistant|tool|system (fill in)' },
    });
    return true;
  });
  const r = await inspectFile(data, { mapping: join(DIR, 'eagle3prep.jsonc') });
  assert.deepEqual(r.records[0].messages, expected);
  const res = await prepare({ inputs: [data], outDir: tempDir(), mapping: join(DIR, 'eagle3prep.jsonc') });
  assert.equal(res.files[0].rowsWritten, 1);
});

test('mapping files: JSONC comments and trailing commas; errors name file and line; globs', () => {
  assert.equal(loadMappingFile(join(DIR, 'eagle3prep.jsonc')).mappings[0].turns, 'dialogue');
  const bad = join(tempDir(), 'm.jsonc');
  writeFileSync(bad, '{\n  "mappings": [\n    {"files": "*.jsonl" "turns": "x"}\n  ]\n}\n');
  assert.throws(
    () => loadMappingFile(bad),
    (e: Error) => e.message === `mapping file ${bad}, line 3: not valid JSONC (a "," was expected at line 3, column 25)`,
  );
  writeFileSync(bad, '{"mappings": [{"files": "*.jsonl", "turns": "t", "roles": {"bot": "robot"}}]}');
  assert.throws(() => loadMappingFile(bad), /entry 1: role "bot" maps to "robot"/);
  assert.equal(globMatch('data/*.jsonl', 'data/a.jsonl'), true);
  assert.equal(globMatch('data/*.jsonl', 'data/sub/a.jsonl'), false);
  assert.equal(globMatch('**/a.jsonl', 'x/y/a.jsonl'), true);
  assert.equal(globMatch('a?.json', 'ab.json'), true);
});

test('every note code normalization writes has a meaning for report.md (core/codes.ts)', async () => {
  const { CODES } = await import('../../src/core/codes');
  const { readFileSync, readdirSync } = await import('node:fs');
  const dir = join(__dirname, '..', '..', 'src', 'core', 'formats');
  const codes = new Set<string>();
  for (const f of readdirSync(dir)) {
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/note\(\s*'([a-z_]+)'|'(instruction_context_joined|row_json_string)'/g))
      codes.add(m[1] ?? m[2]);
  }
  assert.ok(codes.size > 30, String(codes.size));
  for (const c of codes) assert.ok(CODES[c]?.meaning, `no text for ${c}`);
});
