// A file read whole (OpenAssistant flat export, agent CLI event log) is planned once per file state for the Problems
// scan, the hover and the mask view (run/editor/fileRows.ts `filePlanOf`). The plan depends on the eagle3prep.jsonc
// that covers the file too ("reading": {"oasstPaths"}, role aliases, field mappings): editing that file (which
// re-runs the Problems scan) must re-plan, or Problems keep saying what prepare no longer does.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { filePlanOf } from '../../src/core/run/editor/fileRows';
import { scanRowProblems } from '../../src/core/run/editor/rowProblems';
import { tempDir, writeJsonl } from '../helpers';

const msg = (id: string, parent: string | null, role: string, text: string, rank: number | null = null) => ({
  message_id: id,
  parent_id: parent,
  message_tree_id: 't1',
  role,
  text,
  lang: 'en',
  deleted: false,
  review_result: true,
  rank,
});

test('Problems re-plan a file read whole when its eagle3prep.jsonc changes, the dataset itself unchanged', async () => {
  const dir = tempDir();
  const file = writeJsonl(
    [msg('p1', null, 'prompter', 'Question?'), msg('a1', 'p1', 'assistant', 'Best answer.', 0), msg('a2', 'p1', 'assistant', 'Other answer.', 1)],
    'oasst.jsonl',
    dir,
  );
  const codes = async () => (await scanRowProblems(file, { yieldEveryMs: 0 })).problems.map((p) => `${p.line} ${p.code}`);
  // Every root-to-leaf path (the default): both answers are records.
  assert.deepEqual(await codes(), []);
  assert.equal((await filePlanOf(file))?.get('3')?.kind, 'row');
  // Only the best-ranked path: prepare drops line 3 oasst_not_best_path, and so must Problems.
  const config = join(dir, 'eagle3prep.jsonc');
  writeFileSync(config, '{ "reading": { "oasstPaths": "best-ranked" } }\n');
  assert.deepEqual(await codes(), ['3 oasst_not_best_path']);
  // The config removed: back to every path.
  rmSync(config);
  assert.deepEqual(await codes(), []);
});
