import assert from 'node:assert/strict';
import { test } from 'node:test';
import { datasetFolderTree, folderFiles, folderSummary, type DatasetFolder } from '../../src/vscode/datasetFolders';

/** The tree as nested labels: folders as `label/` with their contents, files by name. */
function shape(t: { folders: DatasetFolder<string>[]; files: string[] }): unknown[] {
  return [...t.folders.map((f) => ({ [`${f.label}/`]: shape(f), dir: f.dir })), ...t.files.map((f) => f.split('/').pop())];
}

test('datasets grouped by folder: folders first, by name; a folder holding only one folder is one row', () => {
  const files = [
    '/ws/top.jsonl',
    '/ws/agent/b.jsonl',
    '/ws/agent/a.jsonl',
    '/ws/data/raw/2024/x.jsonl',
    '/ws/data/raw/2024/y.parquet',
    '/ws/chat/sub/z.jsonl',
    '/ws/chat/c.json',
  ];
  const t = datasetFolderTree(files, (f) => f, [{ name: 'ws', dir: '/ws' }]);
  assert.deepEqual(shape(t), [
    { 'agent/': ['a.jsonl', 'b.jsonl'], dir: '/ws/agent' },
    { 'chat/': [{ 'sub/': ['z.jsonl'], dir: '/ws/chat/sub' }, 'c.json'], dir: '/ws/chat' },
    { 'data/raw/2024/': ['x.jsonl', 'y.parquet'], dir: '/ws/data/raw/2024' },
    'top.jsonl',
  ]);
  assert.deepEqual(folderFiles(t.folders[1]).sort(), ['/ws/chat/c.json', '/ws/chat/sub/z.jsonl']);
  // numbers sort as numbers
  assert.deepEqual(
    datasetFolderTree(['/ws/run10/a.jsonl', '/ws/run9/a.jsonl', '/ws/run9/b.jsonl'], (f) => f, [{ name: 'ws', dir: '/ws' }]).folders.map((f) => f.label),
    ['run9', 'run10'],
  );
});

test('several workspace folders are the top level, named, never compacted; a file outside them gets its own folder', () => {
  const t = datasetFolderTree(['/a/only/deep/x.jsonl', '/b/y.jsonl', '/elsewhere/z.jsonl'], (f) => f, [
    { name: 'first', dir: '/a' },
    { name: 'second', dir: '/b' },
  ]);
  assert.deepEqual(
    t.folders.map((f) => [f.label, f.dir, f.files.length, f.folders.map((g) => g.label)]),
    [
      ['/elsewhere', '/elsewhere', 1, []],
      ['first', '/a', 0, ['only/deep']],
      ['second', '/b', 1, []],
    ],
  );
});

test('a folder summarizes its files: prepared (with their statuses), stale, failed, not prepared', () => {
  assert.equal(
    folderSummary([
      { state: 'prepared', status: 'ok' },
      { state: 'prepared', status: 'degraded' },
      { state: 'prepared', status: 'warnings' },
      { state: 'stale', status: 'ok' },
      { state: 'failed' },
      { state: 'none' },
    ]),
    '6 datasets · 3 prepared (1 with warnings, 1 degraded) · 1 stale · 1 failed · 1 not prepared',
  );
  assert.equal(folderSummary([{ state: 'none' }, { state: 'none' }]), '2 datasets · not prepared');
  assert.equal(folderSummary([{ state: 'prepared', status: 'ok' }]), '1 dataset · 1 prepared');
  assert.equal(folderSummary([{ state: 'pending' }, { state: 'error' }]), '2 datasets · 1 unreadable · 1 being read');
});
