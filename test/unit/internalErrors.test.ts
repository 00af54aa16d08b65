/**
 * No raw JavaScript error as a whole message (issue 25 item 7): a runtime error (a bug meeting data it did not expect)
 * is named as an internal error with where in the code and what was being done (file, line), at the row, the file,
 * inspect and the CLI's last line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describeError, errorLocation, isInternalError } from '../../src/core/errors';
import { unexpectedRowError } from '../../src/core/records/rowProcessor';
import { oneLine } from '../../src/cli/command';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir, writeJsonl } from '../helpers';

/** A real TypeError, thrown by reading a property of undefined (as a bug would). */
function typeError(): TypeError {
  try {
    const rows: { length: number }[] = [];
    return rows[3].length as never;
  } catch (e) {
    return e as TypeError;
  }
}

test('describeError: a TypeError is an internal error with its place in the code; other errors keep their message', () => {
  const e = typeError();
  assert.equal(e.message, "Cannot read properties of undefined (reading 'length')");
  assert.equal(isInternalError(e), true);
  assert.equal(isInternalError(new Error('cannot read x.jsonl: no such file')), false);
  assert.match(errorLocation(e), /^internalErrors\.test\.ts:\d+$/);
  assert.match(
    describeError(e, 'data.jsonl: processing stopped after line 7'),
    /^data\.jsonl: processing stopped after line 7: internal error \(TypeError at internalErrors\.test\.ts:\d+: Cannot read properties of undefined \(reading 'length'\)\); please report it with the input$/,
  );
  assert.equal(describeError(new Error('cannot read x.jsonl: no such file')), 'cannot read x.jsonl: no such file');
  assert.equal(describeError('plain'), 'plain');
  // The CLI's last line and a row's error.
  assert.match(oneLine(e), /^internal error \(TypeError at internalErrors\.test\.ts:\d+: Cannot read properties of undefined/);
  assert.match(
    unexpectedRowError(e),
    /^internal error processing the row \(TypeError at internalErrors\.test\.ts:\d+\): Cannot read properties of undefined \(reading 'length'\)$/,
  );
});

test('a JavaScript error while a file is processed fails that file with its name, the line it stopped after and what, not the bare message; --skip-failed-files writes the others', async () => {
  const dir = tempDir();
  const rows = Array.from({ length: 3 }, (_, i) => ({
    messages: [
      { role: 'user', content: `q${i}` },
      { role: 'assistant', content: `a${i}` },
    ],
  }));
  const bad = writeJsonl(rows, 'bad.jsonl', dir);
  const good = writeJsonl(rows, 'good.jsonl', dir);
  // The progress hook runs inside the file's processing: a bug there stands for any bug on the file's data.
  const hooks = {
    onProgress: (p: { file: string }) => {
      if (p.file === bad) typeError().message.toString.call(undefined);
    },
  };
  const r = await prepare(
    { inputs: [bad, good], outDir: join(dir, 'out'), workers: 1, skipFailedFiles: true, templateKwargs: { enable_thinking: false } },
    hooks,
  );
  assert.equal(r.ok, true, r.failures.join('\n'));
  assert.equal(r.files[0].skipped, true);
  assert.match(
    r.files[0].failure!,
    new RegExp(
      `^${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: processing stopped after line 3: internal error \\(TypeError at [^:]+:\\d+: .+\\); please report it with the input$`,
    ),
  );
  assert.equal(r.files[1].rowsWritten, 3);
});
