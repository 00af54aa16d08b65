// Every cache keyed by a file stamps it with read/fileStamp.ts `fileStamp` (change and modification times, size,
// inode), not its modification time and size alone: a file rewritten in place with other content of the same size and
// its modification time set back (rsync --inplace, a restore, `touch -r`) is read again by each cache, instead of the
// hover, Problems or the Datasets view showing what the old content said.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { textHolds } from '../../src/core/formats/appliedConfig';
import { fileStamp, fileStampOf } from '../../src/core/read/fileStamp';
import { loadProjectConfigFor } from '../../src/core/read/projectConfig';
import { scanDataset } from '../../src/core/run/editor/datasetScan';
import { filePlanOf } from '../../src/core/run/editor/fileRows';
import { locateOutDir } from '../../src/core/run/editor/runLocation';
import { handleServiceRequest } from '../../src/core/run/editor/service';
import { defaultOutDir } from '../../src/core/run/inputs/inputs';
import { OUTPUT_FILES } from '../../src/core/run/outputFiles';
import { LineIndex } from '../../src/vscode/lineIndex';
import { clearFailures, failureOf, noteRunOutcome } from '../../src/vscode/runFailures';
import { cachedTokenizer } from '../../src/core/tokenizers/loadedTokenizers';
import { TOKENIZER_FILES, tokenizerFilesStamp } from '../../src/core/tokenizers/modelFolder';
import { TokenizerLoadError } from '../../src/core/tokenizers/types';
import { tempDir, writeJsonl } from '../helpers';

/** Whole seconds: the modification time is set back exactly. */
const WHEN = new Date('2026-01-02T03:04:05Z');

/** Writes `text` to `file` and sets its modification time to {@link WHEN}. */
function put(file: string, text: string): void {
  writeFileSync(file, text);
  utimesSync(file, WHEN, WHEN);
}

/**
 * Rewrites `file` in place with `text` (the same byte length, other content) and sets its modification time back:
 * its size, modification time and inode are what they were, only its change time moved.
 */
function rewriteInPlace(file: string, text: string): void {
  const before = statSync(file);
  assert.equal(Buffer.byteLength(text), before.size, 'the same size');
  assert.notEqual(readFileSync(file, 'utf8'), text, 'other content');
  writeFileSync(file, text);
  utimesSync(file, WHEN, WHEN);
  const after = statSync(file);
  assert.deepEqual([after.size, after.mtimeMs, after.ino], [before.size, before.mtimeMs, before.ino], 'size, modification time and inode unchanged');
  assert.notEqual(fileStamp(after), fileStamp(before), 'the change time moved');
}

const chat = (q: string, a: string) => ({
  messages: [
    { role: 'user', content: q },
    { role: 'assistant', content: a },
  ],
});

test('fileStamp: change time, modification time, size and inode; fileStampOf a missing file is undefined', () => {
  assert.equal(fileStamp({ ctimeMs: 1.5, mtimeMs: 2, size: 3, ino: 4 }), '1.5:2:3:4');
  const dir = tempDir();
  assert.equal(fileStampOf(join(dir, 'none')), undefined);
  put(join(dir, 'f'), 'x');
  assert.equal(fileStampOf(join(dir, 'f')), fileStamp(statSync(join(dir, 'f'))));
});

test('eagle3prep.jsonc is read again (loadProjectConfigFor)', () => {
  const dir = tempDir();
  const data = join(dir, 'data.jsonl');
  put(data, JSON.stringify(chat('q', 'a')) + '\n');
  const cfg = join(dir, 'eagle3prep.jsonc');
  put(cfg, '{ "roleAliases": { "bot": "assistant" } }\n');
  assert.deepEqual(loadProjectConfigFor(data)?.roleAliases, { bot: 'assistant' });
  rewriteInPlace(cfg, '{ "roleAliases": { "bob": "assistant" } }\n');
  assert.deepEqual(loadProjectConfigFor(data)?.roleAliases, { bob: 'assistant' });
});

test('the applied config’s text hits are searched again (textHolds)', () => {
  const data = join(tempDir(), 'data.jsonl');
  put(data, JSON.stringify({ messages: [{ role: 'bot', content: 'x' }] }) + '\n');
  assert.deepEqual(textHolds(data, ['bot', 'bob'], []).aliases, ['bot']);
  rewriteInPlace(data, JSON.stringify({ messages: [{ role: 'bob', content: 'x' }] }) + '\n');
  assert.deepEqual(textHolds(data, ['bot', 'bob'], []).aliases, ['bob']);
});

test('a file read whole is planned again (filePlanOf)', async () => {
  const ev = (uuid: string, parentUuid: string | null, type: string, text: string) =>
    JSON.stringify({ type, uuid, parentUuid, sessionId: 's', message: { role: type, content: [{ type: 'text', text }] } });
  const file = join(tempDir(), 'events.jsonl');
  const rows = (answer: string) => [ev('u1', null, 'user', 'Say hi.'), ev('a1', 'u1', 'assistant', answer)].join('\n') + '\n';
  put(file, rows('Hi.'));
  const texts = async () => JSON.stringify([...((await filePlanOf(file)) ?? new Map()).values()]);
  const before = await texts();
  assert.match(before, /Hi\./);
  rewriteInPlace(file, rows('Ho.'));
  const after = await texts();
  assert.match(after, /Ho\./);
  assert.doesNotMatch(after, /Hi\./);
});

test('the Datasets view’s scan (scanDataset previous) counts the rows again and carries the new stamp', async () => {
  const file = join(tempDir(), 'chat.jsonl');
  const one = JSON.stringify(chat('q', 'a'));
  put(file, `${one}\n${one}\n`);
  const first = await scanDataset(file);
  assert.equal(first.rows, 2);
  const stamp = fileStampOf(file);
  // One row, padded with spaces to the same size.
  const padded = JSON.stringify(chat('q', 'a'.padEnd(one.length + 2, ' ')));
  rewriteInPlace(file, `${padded}\n`);
  const second = await scanDataset(file, { previous: first });
  assert.equal(second.rows, 1, 'the rows counted again');
  assert.equal(first.stamp, stamp);
  assert.equal(second.stamp, fileStampOf(file));
  assert.notEqual(second.stamp, first.stamp);
});

test('the line index sees the rewrite (LineIndex.isStale)', async () => {
  const file = join(tempDir(), 'lines.jsonl');
  put(file, 'aaaa\nbbbb\n');
  const index = await LineIndex.build(file);
  assert.equal(index.isStale(), false);
  rewriteInPlace(file, 'aaaa\nbbbc\n');
  assert.equal(index.isStale(), true);
});

test('the editor’s failure memory forgets a failure once the input is rewritten (failureOf)', () => {
  const file = join(tempDir(), 'lines.jsonl');
  put(file, 'aaaa\nbbbb\n');
  clearFailures();
  noteRunOutcome([file], { error: `${file}: no record written` });
  assert.equal(failureOf(file)?.reason, 'no record written');
  rewriteInPlace(file, 'aaaa\nbbbc\n');
  assert.equal(failureOf(file), undefined);
  clearFailures();
});

test('report.json’s list of inputs is read again (locateOutDir)', () => {
  const root = tempDir();
  const folder = join(root, 'data');
  mkdirSync(folder);
  const a = writeJsonl([chat('One?', 'One.')], 'a.jsonl', folder);
  const c = writeJsonl([chat('Two?', 'Two.')], 'c.jsonl', folder);
  const run = defaultOutDir(folder);
  mkdirSync(run);
  // A folder run's report.json lists its inputs (`files[].file`; run/reports/report.ts parseReport needs ok, totals, outputs).
  const report = join(run, OUTPUT_FILES.reportJson);
  const reportOf = (input: string) => JSON.stringify({ ok: true, totals: {}, outputs: {}, files: [{ file: input }] }) + '\n';
  put(report, reportOf(a));
  assert.equal(locateOutDir(a), run);
  assert.equal(locateOutDir(c), defaultOutDir(c));
  rewriteInPlace(report, reportOf(c));
  assert.equal(locateOutDir(c), run);
  assert.equal(locateOutDir(a), defaultOutDir(a));
});

test('the output index is built again (the service’s rowRecords)', async () => {
  const a = join(tempDir(), 'a.jsonl');
  const data = join(tempDir(), 'tokenized_data.jsonl');
  const record = (seqLen: number) => JSON.stringify({ id: 'r1', source: { file: a, line: 1 }, seq_len: seqLen, n_response_tokens: 2 }) + '\n';
  put(data, record(15));
  const rows = () => handleServiceRequest({ op: 'rowRecords', tokenizedData: data, input: a, line: 1, wait: true });
  assert.deepEqual(await rows(), [{ id: 'r1', tokens: 15, trainableTokens: 2 }]);
  rewriteInPlace(data, record(16));
  assert.deepEqual(await rows(), [{ id: 'r1', tokens: 16, trainableTokens: 2 }]);
});

test('a path under a file (not a folder) is missing for the stamps, not an error: a tokenizer given as a file is named so', () => {
  const dir = tempDir();
  const file = join(dir, 'tokenizer.json');
  writeFileSync(file, '{}');
  // ENOTDIR, as ENOENT: nothing is at that path (fs.existsSync says false).
  assert.equal(fileStampOf(join(file, 'tokenizer.json')), undefined);
  assert.equal(tokenizerFilesStamp(file), TOKENIZER_FILES.map(() => '-').join('|'));
  // `--tokenizer path/to/tokenizer.json` (the file, not its folder): the loader's own message, not ENOTDIR from a stamp.
  assert.throws(
    () => cachedTokenizer(file),
    (e) => e instanceof TokenizerLoadError && /tokenizer folder not found/.test(e.message),
  );
  clearFailures();
  const input = join(file, 'data.jsonl');
  noteRunOutcome([input], { error: 'boom' });
  assert.equal(failureOf(input), undefined, 'an input under a file: its failure is forgotten, not a throw');
});
