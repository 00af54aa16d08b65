// A run that writes nothing leaves no empty output folder behind (the editor showed such a folder
// as if the file had an output); a folder that existed before keeps its files.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir, writeJsonl } from '../helpers';

const unrecognized = () =>
  writeJsonl(
    [
      { foo: 1, bar: 'x' },
      { foo: 2, bar: 'y' },
    ],
    'weird.jsonl',
  );

test('a failed run removes the output folders it created, nested ones included', async () => {
  const root = tempDir('e3p-failed-');
  const outDir = join(root, 'a', 'b', 'weird.eagle3');
  const res = await prepare({ inputs: [unrecognized()], outDir });
  assert.equal(res.ok, false);
  assert.match(res.failures.join('\n'), /no record written and no prompt set aside \(2 rows read: 2 unrecognized_shape/);
  assert.equal(existsSync(join(root, 'a')), false, 'a/b/weird.eagle3 and the folders above it that the run made are gone');
  assert.deepEqual(readdirSync(root), []);
});

test('a failed run keeps a folder that existed, with its files', async () => {
  const outDir = tempDir('e3p-failed-keep-');
  writeFileSync(join(outDir, 'notes.txt'), 'mine');
  const res = await prepare({ inputs: [unrecognized()], outDir });
  assert.equal(res.ok, false);
  assert.deepEqual(readdirSync(outDir), ['notes.txt']);
  // An empty folder made by the user stays too: the run did not create it.
  const empty = join(tempDir('e3p-failed-empty-'), 'out');
  mkdirSync(empty);
  await prepare({ inputs: [unrecognized()], outDir: empty });
  assert.equal(existsSync(empty), true);
});
