// What the Datasets view says about a dataset (src/vscode/datasetsModel.ts) and how it queues scans
// (src/vscode/scanQueue.ts), in plain node over real scans of a real file before and after a real run.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { test } from 'node:test';
import { scanDataset } from '../../src/core/run/editor/datasetScan';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { resolveRunSettings } from '../../src/core/run/runSettings';
import { datasetFolderTree } from '../../src/vscode/datasetFolders';
import {
  datasetDetails,
  datasetItemModel,
  datasetStateSummary,
  describe,
  detailSummary,
  folderDescription,
  nodeIcon,
  nodeState,
  outputsAffectedBy,
  readWithConfig,
  sizeText,
  statusText,
  type DatasetEntry,
} from '../../src/vscode/datasetsModel';
import { clearFailures, noteRunOutcome } from '../../src/vscode/runFailures';
import { ScanQueue } from '../../src/vscode/scanQueue';
import { tempDir, writeJsonl } from '../helpers';

/** One good row, one cut JSON line, one prompt-only row, one empty conversation. */
function mixedFile(): string {
  return writeJsonl([
    {
      messages: [
        { role: 'user', content: 'Hi?' },
        { role: 'assistant', content: 'Hello.' },
      ],
    },
    '{"messages": [',
    { conversations: [{ from: 'human', value: 'Only a question' }] },
    { messages: [] },
  ]);
}

const entry = async (file: string, settings = resolveRunSettings({})): Promise<DatasetEntry> => ({
  file,
  pending: false,
  scan: await scanDataset(file, { settings }),
});

test('a dataset not prepared yet: its format and rows, "not prepared", an empty circle, no children', async () => {
  const f = mixedFile();
  assert.deepEqual(
    [nodeState({ file: f, pending: true }), describe({ file: f, pending: true }), nodeIcon({ file: f, pending: true }).id],
    ['pending', 'scanning…', 'loading~spin'],
  );
  assert.deepEqual([nodeState({ file: f, pending: false }), describe({ file: f, pending: false })], ['none', 'not scanned']);
  const n = await entry(f);
  assert.equal(nodeState(n), 'none');
  assert.equal(describe(n), 'mixed · 4 rows · not prepared');
  assert.deepEqual(nodeIcon(n), { id: 'circle-large-outline' });
  assert.deepEqual(datasetDetails(n), []);
  const item = datasetItemModel(n, 'sub/data.jsonl', 'Qwen3');
  assert.equal(item.contextValue, 'eagle3prep.dataset.none.lines');
  assert.equal(item.expandable, false);
  assert.equal(item.opensOnClick, true);
  // The tooltip: Markdown as written, the evidence as text (escaped when drawn: it quotes the data).
  assert.deepEqual(item.tooltip.slice(0, 4), [
    { markdown: '**data.jsonl** — `sub/data.jsonl`\n\n' },
    { markdown: '181 B, jsonl' },
    { markdown: ', **4 rows** (counted by streaming)\n\nFormat **mixed**\n' },
    { text: '\n- 1/3 rows have "messages": list of {role, content}' },
  ]);
  assert.deepEqual(item.tooltip.slice(-2), [
    { markdown: `Not prepared (no report in \`${f.replace(/\.jsonl$/, '.eagle3')}\`).` },
    { markdown: '\n\nActive tokenizer: Qwen3' },
  ]);
});

test('a prepared dataset: the status first with the share of rows kept, the children say why and open the lines', async () => {
  const f = mixedFile();
  const out = f.replace(/\.jsonl$/, '.eagle3');
  assert.ok((await prepare({ inputs: [f], outDir: out })).ok);
  const n = await entry(f);
  assert.equal(nodeState(n), 'prepared');
  assert.equal(statusText(n), 'degraded: 50 % of rows kept (1 errored, 1 dropped)');
  assert.equal(describe(n), 'degraded: 50 % of rows kept (1 errored, 1 dropped) · mixed · 4 rows · 1 record, 1 to generate');
  assert.deepEqual(nodeIcon(n), { id: 'error', color: 'problemsErrorIcon.foreground' });
  const item = datasetItemModel(n, 'data.jsonl', 'Qwen3');
  assert.equal(item.contextValue, 'eagle3prep.dataset.prepared.lines');
  assert.equal(item.expandable, true);
  assert.ok(item.tooltip.some((p) => 'markdown' in p && p.markdown === '$(error) Status **degraded** — 50 % of rows kept (1 errored, 1 dropped)\n\n'));
  const details = datasetDetails(n);
  assert.deepEqual(details.map(detailSummary), [
    '1 record written (1 row, 7 of 18 tokens trainable (39 %))',
    'dropped: empty_conversation × 1 (line 4)',
    'errored × 1 (line 2: invalid JSON: a closing "]" was expected at character 14 of 14: the text ends too early (cut off?))',
    'set aside for generation × 1',
    'dashboard (lengths, trainable share, reasons)',
    'tokenized_data.jsonl (data.eagle3)',
    'prompts_to_generate.jsonl (data.eagle3)',
    'report.md (data.eagle3)',
  ]);
  assert.deepEqual(
    details.map((d) => [d.action, d.contextValue]),
    [
      [{ kind: 'open', file: `${out}/data/tokenized_data.jsonl` }, 'eagle3prep.detail'],
      [{ kind: 'goToLine', line: 4 }, 'eagle3prep.detail.reason'],
      [{ kind: 'goToLine', line: 2 }, 'eagle3prep.detail.reason'],
      [undefined, 'eagle3prep.detail'],
      [{ kind: 'dashboard' }, 'eagle3prep.detail'],
      [{ kind: 'open', file: `${out}/data/tokenized_data.jsonl` }, 'eagle3prep.outputFile'],
      [{ kind: 'open', file: `${out}/prompts_to_generate.jsonl` }, 'eagle3prep.outputFile.prompts'],
      [{ kind: 'preview', file: `${out}/report.md` }, 'eagle3prep.outputFile'],
    ],
  );
  assert.equal(details[1].tooltip, 'the row holds a conversation with no messages');

  // Another mask policy: stale, said in the description, the icon and the first child.
  const stale = await entry(f, resolveRunSettings({ mask: 'non-system' }));
  assert.equal(nodeState(stale), 'stale');
  assert.equal(describe(stale), 'degraded: 50 % of rows kept (1 errored, 1 dropped) · mixed · 4 rows · stale: 1 record, 1 to generate');
  assert.deepEqual(nodeIcon(stale), { id: 'history', color: 'problemsWarningIcon.foreground' });
  assert.equal(datasetDetails(stale)[0].label, 'stale: settings changed: mask policy (run: assistant, now: non-system)');
  assert.deepEqual(datasetItemModel(stale, 'data.jsonl', 'Qwen3').tooltip.at(-2), {
    markdown: '\n\n$(history) Stale: settings changed: mask policy (run: assistant, now: non-system)',
  });

  // The summary `eagle3prep.datasets.state` returns, with the folder row above it.
  const top = datasetFolderTree([n], (e) => e.file, [{ name: 'ws', dir: dirname(dirname(f)) }]);
  assert.equal(top.folders.length, 1);
  const s = datasetStateSummary(n, top.folders);
  assert.deepEqual(s.folder, { label: basename(dirname(f)), description: folderDescription(top.folders[0]) });
  assert.deepEqual([s.state, s.status, s.format, s.rows, s.records, s.description, s.children.length], ['prepared', 'degraded', 'mixed', 4, 1, describe(n), 8]);
  assert.equal(datasetStateSummary({ file: f, pending: true }, []).state, 'pending');
});

test('a dataset whose last run failed (nothing written): "failed" with the reason, until the file changes', async () => {
  const f = mixedFile();
  try {
    noteRunOutcome([f], { error: `${f}: no record written and no prompt set aside (every row dropped). See the log` });
    const n = await entry(f);
    assert.equal(nodeState(n), 'failed');
    assert.equal(describe(n), 'failed: no record written and no prompt set aside (every row dropped) · mixed · 4 rows');
    assert.deepEqual(nodeIcon(n), { id: 'circle-slash', color: 'errorForeground' });
    const tip = datasetItemModel(n, 'data.jsonl', 'Qwen3').tooltip;
    assert.deepEqual(tip.at(-2), { text: 'no record written and no prompt set aside (every row dropped). See the log' });
    assert.equal(datasetItemModel(n, 'data.jsonl', 'Qwen3').contextValue, 'eagle3prep.dataset.failed.lines');
  } finally {
    clearFailures();
  }
});

test('an unreadable dataset and the size words', async () => {
  const n = await entry(mixedFile());
  const broken: DatasetEntry = { ...n, scan: { ...n.scan!, error: 'data.jsonl: permission denied' } };
  assert.deepEqual([nodeState(broken), describe(broken), nodeIcon(broken).id], ['error', 'unreadable', 'error']);
  assert.deepEqual(datasetItemModel(broken, 'data.jsonl', 'Qwen3').tooltip.at(-1), { markdown: '\n\n$(error) data.jsonl: permission denied' });
  assert.deepEqual([sizeText(512), sizeText(1536), sizeText(3 * 1024 ** 2 + 200_000), sizeText(1.25 * 1024 ** 3)], ['512 B', '1.5 KB', '3.2 MB', '1.25 GB']);
  // Over the 50 MB VS Code syncs to extensions, a click does not open the file.
  assert.equal(datasetItemModel({ ...n, scan: { ...n.scan!, size: 50 * 1024 * 1024 + 1 } }, 'data.jsonl', 'Qwen3').opensOnClick, false);
});

test('the scan queue: each item once at a time, at most `concurrency` at once, nothing while inactive, idle when done', async () => {
  type Item = { name: string; pending: boolean };
  const items: Item[] = Array.from({ length: 10 }, (_, i) => ({ name: `f${i}`, pending: false }));
  const gone = new Set(['f3']);
  let running = 0;
  let most = 0;
  const scanned: string[] = [];
  const settled: string[] = [];
  const release: (() => void)[] = [];
  const q = new ScanQueue<Item>(
    async (it) => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((r) => release.push(r));
      scanned.push(it.name);
      running--;
    },
    (it) => !gone.has(it.name),
    (it) => {
      assert.equal(it.pending, false);
      settled.push(it.name);
    },
    3,
  );
  for (const it of items) q.enqueue(it);
  q.enqueue(items[0]); // already queued: not twice
  assert.equal(q.runningCount(), 0); // inactive: nothing starts
  assert.ok(items.every((it) => it.pending));
  q.active = true;
  const idle = q.whenIdle();
  assert.equal(q.runningCount(), 3);
  // Let every scan finish, one at a time, in the order they started.
  while (!q.idle()) {
    await new Promise((r) => setImmediate(r));
    release.shift()?.();
  }
  await idle;
  assert.equal(most, 3);
  assert.deepEqual(scanned, ['f0', 'f1', 'f2', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9']);
  assert.deepEqual(settled, scanned);
  assert.ok(items.every((it) => !it.pending));
  await q.whenIdle(); // idle: resolves at once
});

test("the watchers' targets: a report.json re-reads the datasets writing there, a deleted output its dataset, a config the datasets it applies to", async () => {
  const dir = tempDir();
  const sub = join(dir, 'sub');
  mkdirSync(sub);
  const a = mixedFile();
  const good = {
    messages: [
      { role: 'user', content: 'Hi?' },
      { role: 'assistant', content: 'Hello.' },
    ],
  };
  const files = [writeJsonl([good], 'a.jsonl', dir), writeJsonl([good], 'b.jsonl', sub), a];
  assert.ok((await prepare({ inputs: [files[0]], outDir: join(dir, 'a.eagle3') })).ok);
  const entries = await Promise.all(files.map((f) => entry(f)));
  const names = (xs: DatasetEntry[]) => xs.map((x) => basename(x.file));
  assert.deepEqual(names(outputsAffectedBy(entries, join(dir, 'a.eagle3', 'report.json'), 'report')), ['a.jsonl']);
  // b.jsonl and the other file have no output yet, but the folder they would write to is known: b.eagle3 beside b.
  assert.deepEqual(names(outputsAffectedBy(entries, join(sub, 'b.eagle3', 'report.json'), 'report')), ['b.jsonl']);
  assert.deepEqual(names(outputsAffectedBy(entries, join(dir, 'a.eagle3', 'data', 'tokenized_data.jsonl'), 'deleted')), ['a.jsonl']);
  assert.deepEqual(names(outputsAffectedBy(entries, join(dir, 'elsewhere.jsonl'), 'deleted')), []);
  // An eagle3prep.jsonc in dir applies to a.jsonl and sub/b.jsonl; one in sub only to b.jsonl.
  assert.deepEqual(names(readWithConfig(entries, join(dir, 'eagle3prep.jsonc'))), ['a.jsonl', 'b.jsonl']);
  assert.deepEqual(names(readWithConfig(entries, join(sub, 'eagle3prep.jsonc'))), ['b.jsonl']);
});
