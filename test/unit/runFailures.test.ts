// The editor's memory of failed runs (src/vscode/runFailures.ts): a failed file is 'failed' in the
// Datasets view until it changes or a run of it succeeds.
import assert from 'node:assert/strict';
import { utimesSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { clearFailures, failureOf, noteRunOutcome, reasonWithoutPath, shortReason } from '../../src/vscode/runFailures';
import { tempDir, writeJsonl } from '../helpers';

test('a failed run marks its failed file with the reason (no path in front); the good file of the run is not marked', async () => {
  clearFailures();
  const dir = tempDir('e3p-fail-');
  const weird = writeJsonl([{ foo: 1 }, { foo: 2 }], 'weird.jsonl', dir);
  const good = writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'Hi?' },
          { role: 'assistant', content: 'Hello.' },
        ],
      },
    ],
    'good.jsonl',
    dir,
  );
  const result = await prepare({ inputs: [weird, good], outDir: tempDir('e3p-fail-out-') });
  assert.equal(result.ok, false);
  assert.deepEqual(noteRunOutcome([weird, good], { result }).sort(), [weird].sort());
  const f = failureOf(weird);
  assert.ok(f);
  assert.match(f.reason, /^no record written and no prompt set aside \(2 rows read: 2 unrecognized_shape; found before any file was processed\)/);
  assert.equal(shortReason(f.reason), 'no record written and no prompt set aside (2 rows read: 2 unrecognized_shape; found before any file was processed)');
  assert.equal(failureOf(good), undefined);

  // The file edited: the failure is forgotten (its next scan says what it is now).
  writeFileSync(weird, '{"foo": 3}\n');
  utimesSync(weird, new Date(), new Date(Date.now() + 5000));
  assert.equal(failureOf(weird), undefined);
});

test('a run that threw marks every input; a successful run clears', async () => {
  clearFailures();
  const file = writeJsonl(
    [
      {
        messages: [
          { role: 'user', content: 'Hi?' },
          { role: 'assistant', content: 'Hello.' },
        ],
      },
    ],
    'a.jsonl',
  );
  noteRunOutcome([file], { error: `${file}: cannot read the tokenizer folder /x` });
  assert.equal(failureOf(file)?.reason, 'cannot read the tokenizer folder /x');
  const result = await prepare({ inputs: [file], outDir: tempDir('e3p-fail-out-') });
  assert.ok(result.ok);
  assert.deepEqual(noteRunOutcome([file], { result }), [file]);
  assert.equal(failureOf(file), undefined);
});

test('reasonWithoutPath and shortReason', () => {
  assert.equal(reasonWithoutPath('/a/b.jsonl: bad rows', '/a/b.jsonl'), 'bad rows');
  assert.equal(reasonWithoutPath('other: bad rows', '/a/b.jsonl'), 'other: bad rows');
  assert.equal(shortReason('first part. second part'), 'first part');
  assert.equal(shortReason('x'.repeat(130)), `${'x'.repeat(119)}…`);
});
