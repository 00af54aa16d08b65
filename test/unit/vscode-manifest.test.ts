/**
 * package.json `contributes` against the code's own lists, in plain node (no VS Code): the settings
 * (keys, defaults, enums, minimums) against src/vscode/settings.ts, the commands, menus and views
 * against src/vscode/ids.ts, and the sources against the rule that settings and command ids have one
 * home each.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATASET_FILE_RE } from '../../src/core/read/readers';
import { DATASET_EXTENSIONS } from '../../src/core/run/inputs/inputs';
import {
  COMMANDS,
  CONFIG_SECTION,
  datasetContextValue,
  DATASETS_DISCOVERED_CONTEXT,
  DATASETS_VIEW,
  DETAIL_CONTEXT,
  FOLDER_CONTEXT,
  VIEW_CONTAINER,
  type DatasetItemState,
} from '../../src/vscode/ids';
import { RESOURCE_SCOPED_SETTINGS, SETTING_CHOICES, SETTING_DEFAULTS, SETTING_MINIMUMS, type SettingKey } from '../../src/vscode/settings';
import { expandBraces } from '../../src/vscode/globs';
import { RUN_SETTING_KEYS, runSettingSpec, type SettingKind } from '../../src/core/run/runSettings';

const ROOT = join(__dirname, '..', '..');
const manifest = readFileSync(join(ROOT, 'package.json'), 'utf8');
const pkg = JSON.parse(manifest);
const contributes = pkg.contributes;

interface PropertySchema {
  type?: string | string[];
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}
const properties: Record<string, PropertySchema> = contributes.configuration.properties;
const settingKey = (full: string): string => {
  assert.ok(full.startsWith(`${CONFIG_SECTION}.`), `${full} is outside the ${CONFIG_SECTION} section`);
  return full.slice(CONFIG_SECTION.length + 1);
};

test('settings: package.json declares exactly the keys of settings.ts, with the same defaults', () => {
  const declared = Object.keys(properties).map(settingKey).sort();
  assert.deepEqual(declared, Object.keys(SETTING_DEFAULTS).sort());
  for (const [full, schema] of Object.entries(properties)) {
    const key = settingKey(full) as SettingKey;
    assert.deepEqual(SETTING_DEFAULTS[key], schema.default, `default of ${full}`);
  }
});

test('settings: the enums are the code lists, in the same order, and the minimums agree', () => {
  const withEnum = Object.entries(properties).filter(([, s]) => s.enum);
  assert.deepEqual(withEnum.map(([k]) => settingKey(k)).sort(), Object.keys(SETTING_CHOICES).sort());
  for (const [full, schema] of withEnum) {
    assert.deepEqual(schema.enum, [...(SETTING_CHOICES[settingKey(full) as SettingKey] ?? [])], `enum of ${full}`);
    assert.equal(schema.default, schema.enum![0], `${full}: the default comes first in its enum`);
  }
  const withMinimum = Object.entries(properties).filter(([, s]) => s.minimum !== undefined);
  assert.deepEqual(
    Object.fromEntries(withMinimum.map(([k, s]) => [settingKey(k), s.minimum])),
    { ...SETTING_MINIMUMS },
    'package.json minimum values = SETTING_MINIMUMS',
  );
});

test('run settings: package.json declares each row of RUN_SETTINGS exactly once, with its type, default, enum, minimum and maximum', () => {
  const types: Record<SettingKind, string> = { choice: 'string', integer: 'integer', number: 'number', object: 'object' };
  for (const key of RUN_SETTING_KEYS) {
    const spec = runSettingSpec(key);
    const full = `${CONFIG_SECTION}.${spec.setting}`;
    // JSON.parse keeps the last of two equal keys silently: count them in the text.
    assert.equal(manifest.split(`"${full}":`).length - 1, 1, `${full} (run setting ${key}) is declared once in package.json`);
    const schema = properties[full];
    assert.deepEqual(schema.type, spec.default === null ? [types[spec.kind], 'null'] : types[spec.kind], `type of ${full}`);
    assert.deepEqual(schema.default, spec.default, `default of ${full}`);
    assert.deepEqual(schema.enum, spec.choices ? [...spec.choices] : undefined, `enum of ${full}`);
    assert.equal(schema.minimum, spec.minimum, `minimum of ${full}`);
    assert.equal(schema.maximum, spec.maximum, `maximum of ${full}`);
  }
  assert.deepEqual(new Set(RUN_SETTING_KEYS.map((k) => runSettingSpec(k).setting)).size, RUN_SETTING_KEYS.length, 'one setting per row');
});

test('settings: the restricted configurations of untrusted workspaces are settings that exist', () => {
  const restricted: string[] = pkg.capabilities.untrustedWorkspaces.restrictedConfigurations;
  assert.ok(restricted.length >= 5);
  for (const full of restricted) assert.ok(settingKey(full) in SETTING_DEFAULTS, `${full} is not a setting`);
});

test('settings: the default include globs cover every dataset name the readers accept, the excludes cover output folders', () => {
  // A small matcher for the two wildcards the defaults use (`**/` and `*`), after brace expansion.
  const toRegExp = (glob: string) =>
    new RegExp(
      '^' +
        glob
          .replace(/[.+^$()|[\]\\]/g, '\\$&')
          .replace(/\*\*\//g, '\u0000')
          .replace(/\/\*\*$/, '\u0001')
          .replace(/\*/g, '[^/]*')
          .replace(/\u0000/g, '(?:.*/)?')
          .replace(/\u0001/g, '(?:/.*)?') +
        '$',
    );
  const include = SETTING_DEFAULTS['datasets.include'].flatMap(expandBraces).map(toRegExp);
  const exclude = SETTING_DEFAULTS['datasets.exclude'].flatMap(expandBraces).map(toRegExp);
  // Parquet compresses its own pages: the defaults offer it uncompressed only.
  const names = DATASET_EXTENSIONS.flatMap((ext) => (ext === '.parquet' ? [''] : ['', '.gz', '.zst']).map((c) => `data/sub/train${ext}${c}`));
  assert.equal(names.length, 13);
  for (const n of names) {
    assert.ok(DATASET_FILE_RE.test(n), `${n}: the readers accept it`);
    assert.ok(
      include.some((r) => r.test(n)),
      `${n} is not matched by the default eagle3prep.datasets.include`,
    );
  }
  assert.ok(!include.some((r) => r.test('data/x.parquet.gz')));
  assert.ok(!include.some((r) => r.test('data/notes.txt')));
  // Output folders, dependencies and configuration JSON are left out.
  for (const n of ['a/chat.eagle3/report.json', 'package.json', 'm/tokenizer_config.json', 'node_modules/p/x.jsonl']) {
    assert.ok(
      exclude.some((r) => r.test(n)),
      `${n} is not excluded`,
    );
  }
  assert.ok(!exclude.some((r) => r.test('data/chat.jsonl')));
});

/** Every context value a Datasets view item can have. */
const STATES: DatasetItemState[] = ['none', 'prepared', 'stale', 'error', 'pending'];
const CONTEXT_VALUES = [
  ...STATES.flatMap((s) => [datasetContextValue(s, true), datasetContextValue(s, false)]),
  ...Object.values(DETAIL_CONTEXT),
  FOLDER_CONTEXT,
];

test('commands: package.json declares exactly the ids of ids.ts', () => {
  const declared: string[] = contributes.commands.map((c: { command: string }) => c.command);
  assert.equal(new Set(declared).size, declared.length, 'a command is declared twice');
  assert.deepEqual([...declared].sort(), Object.values(COMMANDS).sort());
});

test('menus: each entry names a known command, the Datasets view, and item context values the view produces', () => {
  const known = new Set<string>(Object.values(COMMANDS));
  let itemEntries = 0;
  for (const [menu, entries] of Object.entries(contributes.menus as Record<string, { command: string; when?: string }[]>)) {
    for (const e of entries) {
      assert.ok(known.has(e.command), `${menu}: ${e.command} is not a command of ids.ts`);
      const when = e.when ?? '';
      for (const m of when.matchAll(/\bview == ([\w.]+)/g)) assert.equal(m[1], DATASETS_VIEW, `${menu}: ${when}`);
      const re = /viewItem =~ \/(.+?)\/(?=\s|$)/.exec(when);
      const eq = /viewItem == ([\w.]+)/.exec(when);
      if (re || eq) {
        itemEntries++;
        const matches = CONTEXT_VALUES.filter((v) => (re ? new RegExp(re[1]).test(v) : v === eq![1]));
        assert.ok(matches.length > 0, `${menu}: "${when}" matches no context value of the Datasets view`);
      }
    }
  }
  assert.ok(itemEntries >= 9, `only ${itemEntries} item menu entries found`);
});

test('menus: the mask view is offered on plain JSON Lines items only; report and output on prepared or stale ones; Generate on the prompts file', () => {
  const item = contributes.menus['view/item/context'] as { command: string; when: string }[];
  const matching = (command: string) =>
    CONTEXT_VALUES.filter((v) =>
      item
        .filter((e) => e.command === command)
        .some((e) => {
          const re = /viewItem =~ \/(.+?)\/(?=\s|$)/.exec(e.when);
          const eq = /viewItem == ([\w.]+)/.exec(e.when);
          return re ? new RegExp(re[1]).test(v) : v === eq?.[1];
        }),
    );
  assert.deepEqual(
    matching(COMMANDS.datasetsOpenMaskView),
    STATES.map((s) => datasetContextValue(s, true)),
  );
  assert.deepEqual(matching(COMMANDS.datasetsOpenReport), [
    datasetContextValue('prepared', true),
    datasetContextValue('prepared', false),
    datasetContextValue('stale', true),
    datasetContextValue('stale', false),
  ]);
  assert.deepEqual(matching(COMMANDS.generate), [DETAIL_CONTEXT.promptsFile]);
  assert.equal(matching(COMMANDS.prepare).length, STATES.length * 2 + 1);
  assert.ok(matching(COMMANDS.prepare).includes(FOLDER_CONTEXT), 'a folder row is prepared as one folder run');
});

test('menus: the explorer and editor entries accept every dataset extension', () => {
  for (const [menu, entries] of Object.entries(contributes.menus as Record<string, { command: string; when?: string }[]>)) {
    for (const e of entries) {
      const m = /resourceExtname =~ \/(.+?)\/(i?)/.exec(e.when ?? '');
      if (!m || e.command === COMMANDS.openMaskView) continue;
      const re = new RegExp(m[1], m[2]);
      for (const ext of [...DATASET_EXTENSIONS, '.gz', '.zst']) assert.ok(re.test(ext), `${menu} ${e.command}: ${ext} is not offered`);
    }
  }
});

test('views: the container and the Datasets view carry the ids of ids.ts', () => {
  assert.deepEqual(
    contributes.viewsContainers.activitybar.map((c: { id: string }) => c.id),
    [VIEW_CONTAINER],
  );
  assert.deepEqual(
    contributes.views[VIEW_CONTAINER].map((v: { id: string }) => v.id),
    [DATASETS_VIEW],
  );
});

/** The TypeScript sources of src/vscode/ and src/extension.ts, comments removed. */
function vscodeSources(): [string, string][] {
  const dir = join(ROOT, 'src', 'vscode');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(dir, f));
  files.push(join(ROOT, 'src', 'extension.ts'));
  return files.map((f) => [
    f,
    readFileSync(f, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, ''),
  ]);
}

test('sources: settings are read only in config.ts; command ids are spelled only in ids.ts', () => {
  const sources = vscodeSources();
  assert.ok(sources.length >= 15);
  for (const [file, text] of sources) {
    if (!file.endsWith('config.ts')) assert.doesNotMatch(text, /getConfiguration\(/, `${file} reads settings itself: go through config.ts`);
    if (!file.endsWith('ids.ts')) {
      for (const id of Object.values(COMMANDS)) assert.ok(!text.includes(`'${id}'`), `${file} spells the command id ${id}: import it from ids.ts`);
    }
    for (const m of text.matchAll(/registerCommand\(\s*([^,\s]+)/g)) assert.match(m[1], /^COMMANDS\./, `${file}: registerCommand(${m[1]}, …)`);
  }
});

test('manifest: the resource-scoped settings are exactly the ones the code reads with a resource (no window-scope warnings)', () => {
  const sections = Array.isArray(contributes.configuration) ? contributes.configuration : [contributes.configuration];
  const resource = sections
    .flatMap((s: { properties: Record<string, { scope?: string }> }) => Object.entries(s.properties))
    .filter(([, v]: [string, { scope?: string }]) => v.scope === 'resource' || v.scope === 'language-overridable' || v.scope === 'machine-overridable')
    .map(([k]: [string, unknown]) => k.slice(CONFIG_SECTION.length + 1))
    .sort();
  assert.deepEqual(resource, [...RESOURCE_SCOPED_SETTINGS].sort());
});

test('Datasets view welcome: "looking for dataset files" until discovery is done, "no dataset file found" only after (no false empty state)', () => {
  const welcome: { view: string; contents: string; when?: string }[] = contributes.viewsWelcome.filter((w: { view: string }) => w.view === DATASETS_VIEW);
  assert.deepEqual(
    welcome.map((w) => [w.when, w.contents.split(/[\s(]/).slice(0, 3).join(' ')]),
    [
      [`!${DATASETS_DISCOVERED_CONTEXT}`, 'Looking for dataset'],
      [DATASETS_DISCOVERED_CONTEXT, 'No dataset file'],
    ],
  );
  // The provider sets the key once its discovery is done.
  const tree = readFileSync(join(ROOT, 'src', 'vscode', 'datasetsTree.ts'), 'utf8');
  assert.match(tree, /this\.discovered = true;[\s\S]{0,300}setContext', DATASETS_DISCOVERED_CONTEXT, true\)/);
});

test('walkthrough "Prepare a sample": the sample is copied only where the user says (asked first), and the step says so', () => {
  const steps = pkg.contributes.walkthroughs.flatMap((w: { steps: { title: string; description: string }[] }) => w.steps);
  const step = steps.find((s: { description: string }) => s.description.includes(`command:${COMMANDS.prepareSample}`));
  assert.match(step.description, /into a folder you choose \(asked first/);
  const src = readFileSync(join(ROOT, 'src', 'vscode', 'prepareCommand.ts'), 'utf8');
  const handler = src.slice(src.indexOf('COMMANDS.prepareSample, async'));
  // The copy happens after a modal question (or into the folder a caller passed), never before it.
  assert.ok(handler.indexOf('{ modal: true }') > 0 && handler.indexOf('{ modal: true }') < handler.indexOf('copyFileSync'));
});
