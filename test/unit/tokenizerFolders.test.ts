// The tokenizer choice without VS Code (src/vscode/tokenizerFolders.ts), in plain node over real model folders (the
// Qwen3 tokenizer package, the Kimi tiktoken stand-in) laid out as a Hugging Face cache and as `eagle3prep.modelFolders`.
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  candidateItem,
  checkTokenizerFolder,
  findCachedTokenizers,
  findConfiguredTokenizers,
  huggingFaceCacheDirs,
  pickSections,
  tokenizerDisplayName,
  tokenizerStatus,
  workspaceTokenizers,
} from '../../src/vscode/tokenizerFolders';
import { kimiModelFolder, lenmlModelDir, tempDir } from '../helpers';

const QWEN = lenmlModelDir('qwen3');

/** A Hugging Face hub cache holding `models--<org>--<name>/snapshots/<rev>` → symlinks to a real model folder's files. */
function hubWith(models: { repo: string; revs: string[]; from: string; files: string[] }[]): string {
  const hub = tempDir('eagle3-hub-');
  for (const m of models)
    for (const rev of m.revs) {
      const snap = join(hub, `models--${m.repo.replace('/', '--')}`, 'snapshots', rev);
      mkdirSync(snap, { recursive: true });
      for (const f of m.files) symlinkSync(join(m.from, f), join(snap, f));
    }
  return hub;
}

test('a model folder: tokenizer.json or tiktoken.model, plus tokenizer_config.json; otherwise why not', () => {
  assert.deepEqual(checkTokenizerFolder(QWEN), { ok: true, files: ['tokenizer.json', 'tokenizer_config.json'] });
  const kimi = kimiModelFolder('{{ messages }}');
  assert.deepEqual(checkTokenizerFolder(kimi), { ok: true, files: ['tiktoken.model', 'tokenizer_config.json', 'chat_template.jinja'] });
  const half = tempDir();
  symlinkSync(join(QWEN, 'tokenizer.json'), join(half, 'tokenizer.json'));
  assert.deepEqual(checkTokenizerFolder(half), { ok: false, files: ['tokenizer.json'], problem: `${half} has no tokenizer_config.json` });
  const empty = tempDir();
  writeFileSync(join(empty, 'tokenizer_config.json'), '{}');
  assert.deepEqual(checkTokenizerFolder(empty), {
    ok: false,
    files: ['tokenizer_config.json'],
    problem: `${empty} has neither tokenizer.json nor tiktoken.model`,
  });
  assert.equal(checkTokenizerFolder(join(empty, 'missing')).ok, false);
});

test('display names: org/name for a cache snapshot, the folder name otherwise, Qwen3 for the embedded default', () => {
  assert.equal(tokenizerDisplayName('/h/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/0123abc'), 'Qwen/Qwen3-8B');
  assert.equal(tokenizerDisplayName('/models/llama-3.1-8b/'), 'llama-3.1-8b');
  assert.equal(tokenizerDisplayName(undefined), 'Qwen3');
});

test('the Hugging Face cache: every usable snapshot, a revision suffix when a model has several; the cache folders from the environment', () => {
  const hub = hubWith([
    { repo: 'Qwen/Qwen3-8B', revs: ['aaaaaaa111', 'bbbbbbb222'], from: QWEN, files: ['tokenizer.json', 'tokenizer_config.json'] },
    { repo: 'org/broken', revs: ['ccc'], from: QWEN, files: ['tokenizer.json'] },
    { repo: 'moonshot/Kimi', revs: ['ddd'], from: kimiModelFolder('{{ messages }}'), files: ['tiktoken.model', 'tokenizer_config.json'] },
  ]);
  const found = findCachedTokenizers([hub]).map((c) => [c.name, c.origin, c.files.join(',')]);
  assert.deepEqual(found.slice().sort(), [
    ['Qwen/Qwen3-8B@aaaaaaa', 'huggingface-cache', 'tokenizer.json,tokenizer_config.json'],
    ['Qwen/Qwen3-8B@bbbbbbb', 'huggingface-cache', 'tokenizer.json,tokenizer_config.json'],
    ['moonshot/Kimi', 'huggingface-cache', 'tiktoken.model,tokenizer_config.json'],
  ]);
  const home = tempDir();
  mkdirSync(join(home, 'hub'));
  assert.deepEqual(huggingFaceCacheDirs({ HF_HOME: home, HF_HUB_CACHE: hub, XDG_CACHE_HOME: join(home, 'none') }), [hub, join(home, 'hub')]);
});

test('eagle3prep.modelFolders: a model folder itself, the model folders one level down, a cache inside; each once', () => {
  const models = tempDir();
  mkdirSync(join(models, 'qwen'));
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) symlinkSync(join(QWEN, f), join(models, 'qwen', f));
  mkdirSync(join(models, 'notes'));
  const hub = hubWith([{ repo: 'Qwen/Qwen3-8B', revs: ['aaaaaaa111'], from: QWEN, files: ['tokenizer.json', 'tokenizer_config.json'] }]);
  const expand = (e: string) => (e === '' ? undefined : e.replace(/^\$\{models\}/, models));
  const configured = findConfiguredTokenizers(['${models}', join(models, 'qwen'), hub, '', join(models, 'gone')], expand);
  assert.deepEqual(
    configured.map((c) => [c.dir, c.name, c.origin]),
    [
      [join(models, 'qwen'), 'qwen', 'settings'],
      [join(hub, 'models--Qwen--Qwen3-8B', 'snapshots', 'aaaaaaa111'), 'Qwen/Qwen3-8B', 'settings'],
    ],
  );
  // The pick: the settings' folders first; the workspace's and the cache's only when not listed already.
  const cached = findCachedTokenizers([hub]);
  const workspace = workspaceTokenizers([join(models, 'qwen'), join(models, 'notes'), QWEN, QWEN]);
  assert.deepEqual(
    workspace.map((c) => c.dir),
    [QWEN, join(models, 'qwen')].sort(),
  );
  const sections = pickSections({ configured, workspace, cached });
  assert.deepEqual(
    sections.map((s) => [s.title, s.candidates.map((c) => c.dir)]),
    [
      ['Settings (eagle3prep.modelFolders)', configured.map((c) => c.dir)],
      ['Workspace', [QWEN]],
    ],
  );
  assert.deepEqual(candidateItem(configured[0], join(models, 'qwen')), {
    label: '$(check) qwen',
    description: 'settings',
    detail: `${join(models, 'qwen')}  —  tokenizer.json, tokenizer_config.json`,
  });
  assert.equal(candidateItem(cached[0], undefined).description, 'Hugging Face cache');
});

test('the status bar: the name, a warning for an unusable folder, a shield under Restricted Mode', () => {
  assert.deepEqual(tokenizerStatus(undefined, undefined), {
    text: '$(symbol-namespace) Qwen3',
    warning: false,
    tooltip: '**EAGLE-3 target tokenizer:** Qwen3\n\nembedded default\n\nClick to change.',
  });
  assert.deepEqual(tokenizerStatus(QWEN, undefined).text, '$(symbol-namespace) models');
  const bad = tempDir();
  const s = tokenizerStatus(bad, undefined);
  assert.equal(s.text, `$(warning) ${tokenizerDisplayName(bad)}`);
  assert.equal(s.warning, true);
  assert.ok(s.tooltip.includes(`\`${bad}\`\n\n⚠ ${bad} has neither tokenizer.json nor tiktoken.model`));
  const r = tokenizerStatus(bad, 'Restricted Mode ignores the workspace setting eagle3prep.tokenizerPath');
  assert.equal(r.text, `$(shield) ${tokenizerDisplayName(bad)}`);
  assert.equal(r.warning, true);
  assert.ok(r.tooltip.endsWith('\n\n⚠ Restricted Mode ignores the workspace setting eagle3prep.tokenizerPath\n\nClick to change.'));
});
