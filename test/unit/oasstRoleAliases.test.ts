// eagle3prep.jsonc "roleAliases" applies to every turn's role (docs/formats.md "Project configuration"), and the
// unknown_role error tells the user to add the spelling there. An OpenAssistant flat export holds one turn per row
// (its `role` is a top-level field, not inside a turn list), so the alias must reach the turns its trees are rebuilt
// into: else the row the message says how to fix stays errored whatever the config says.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { scanRowProblems } from '../../src/core/run/editor/rowProblems';
import { inspectFile } from '../../src/core/run/inputs/inspect';
import { tempDir, writeJsonl } from '../helpers';

const msg = (id: string, parent: string | null, role: string, text: string) => ({
  message_id: id,
  parent_id: parent,
  message_tree_id: 't1',
  role,
  text,
  lang: 'en',
  deleted: false,
  review_result: true,
  rank: parent === null ? null : 0,
});

test('roleAliases of eagle3prep.jsonc reach the roles of an OpenAssistant flat export', async () => {
  const dir = tempDir();
  const file = writeJsonl([msg('p1', null, 'prompter', 'Question?'), msg('a1', 'p1', 'Wizard', 'The answer.')], 'oasst.jsonl', dir);
  // Without an alias: the leaf's path errors unknown_role, naming the spelling and the remedy.
  const before = await scanRowProblems(file, { yieldEveryMs: 0 });
  assert.deepEqual(
    before.problems.map((p) => [p.line, p.code, p.role]),
    [
      [1, 'oasst_path_not_written', undefined],
      [2, 'unknown_role', 'Wizard'],
    ],
  );
  assert.match(before.problems[1].message, /add it to "roleAliases" in eagle3prep.jsonc/);
  // With it (spelling matched case-insensitively, as for turn lists): the path is read, the answer an assistant turn.
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{ "roleAliases": { "wizard": "assistant" } }\n');
  assert.deepEqual((await scanRowProblems(file, { yieldEveryMs: 0 })).problems, []);
  const ins = await inspectFile(file);
  assert.deepEqual(ins.skipped, []);
  assert.deepEqual(
    ins.records.map((r) => [r.source.line, r.messages.map((m) => `${m.role}: ${m.content}`)]),
    [[2, ['user: Question?', 'assistant: The answer.']]],
  );
  assert.deepEqual(ins.part_of, [{ line: 1, in_records_of: [2] }]);
});
