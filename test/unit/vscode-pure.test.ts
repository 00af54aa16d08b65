/**
 * The editor's pure logic, in plain node (no VS Code): the mask view's message guards, brace
 * expansion of the Datasets view's globs, configured-path expansion, output-folder naming, settings
 * validation, and the Datasets view's context values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { datasetContextValue } from '../../src/vscode/ids';
import { expandBraces, joinGlobs } from '../../src/vscode/globs';
import { isHostMessage, isWebviewMessage, MASK_POLICIES } from '../../src/shared/maskViewProtocol';
import { expandPath, outDirFor } from '../../src/vscode/paths';
import {
  datasetDiscoveryFrom,
  diagnosticsSettingsFrom,
  generateSettingsFrom,
  hoverCapFrom,
  modelFoldersFrom,
  prepareSettingsFrom,
  runSettingFrom,
  SETTING_DEFAULTS,
  type SettingKey,
  type SettingsSource,
} from '../../src/vscode/settings';

test('isWebviewMessage accepts the protocol messages and rejects everything else', () => {
  const valid: unknown[] = [
    { type: 'ready' },
    { type: 'reveal' },
    { type: 'goToLine', line: 1 },
    { type: 'step', direction: -1 },
    { type: 'step', direction: 1 },
    { type: 'record', index: 0 },
    { type: 'setMask', mask: 'last-assistant' },
    { type: 'setThinking', thinking: 'off' },
    { type: 'rendered', line: 3, record: 0, tokens: 120 },
  ];
  for (const m of valid) assert.equal(isWebviewMessage(m), true, JSON.stringify(m));
  for (const mask of MASK_POLICIES) assert.equal(isWebviewMessage({ type: 'setMask', mask }), true);
  const invalid: unknown[] = [
    null,
    undefined,
    'ready',
    42,
    [],
    {},
    { type: 'render' }, // a host message, not the webview's
    { type: 'goToLine', line: 0 },
    { type: 'goToLine', line: 2.5 },
    { type: 'goToLine', line: '3' },
    { type: 'step', direction: 2 },
    { type: 'step' },
    { type: 'record', index: -1 },
    { type: 'setMask', mask: 'everything' },
    { type: 'setMask' },
    { type: 'setThinking', thinking: 'maybe' },
    { type: 'rendered', line: 1, record: 0 },
    { type: 'rendered', line: 1, record: 0, tokens: NaN },
    { type: 'runScript', code: 'alert(1)' },
  ];
  for (const m of invalid) assert.equal(isWebviewMessage(m), false, JSON.stringify(m) ?? String(m));
});

test('isHostMessage accepts render, busy and error only', () => {
  for (const type of ['render', 'busy', 'error']) assert.equal(isHostMessage({ type }), true);
  for (const m of [null, {}, { type: 'ready' }, { type: 'setMask' }, 'render']) assert.equal(isHostMessage(m), false);
});

test('expandBraces: one group, several groups, none', () => {
  assert.deepEqual(expandBraces('**/*.{jsonl,ndjson}'), ['**/*.jsonl', '**/*.ndjson']);
  assert.deepEqual(expandBraces('**/*.{jsonl,json}.{gz,zst}'), ['**/*.jsonl.gz', '**/*.jsonl.zst', '**/*.json.gz', '**/*.json.zst']);
  assert.deepEqual(expandBraces('**/node_modules/**'), ['**/node_modules/**']);
  assert.deepEqual(expandBraces('a/{x}/b'), ['a/x/b']);
  assert.deepEqual(expandBraces('{,.}cfg'), ['cfg', '.cfg']);
});

test('joinGlobs: one brace group over the expanded patterns (VS Code globs do not nest braces)', () => {
  assert.equal(joinGlobs(['**/.git/**', '**/*.{a,b}']), '{**/.git/**,**/*.a,**/*.b}');
  assert.equal(joinGlobs([]), null);
  const joined = joinGlobs(SETTING_DEFAULTS['datasets.exclude'])!;
  assert.equal((joined.match(/\{/g) ?? []).length, 1, 'exactly one brace group');
  assert.ok(joined.includes('**/tokenizer_config.json') && joined.includes('**/*.eagle3/**'));
});

test('expandPath: ~, ${userHome}, ${workspaceFolder}, relative paths, blanks', () => {
  const ctx = { home: '/home/ann', workspaceFolder: '/work/proj' };
  assert.equal(expandPath('~/models/qwen', ctx), resolve('/home/ann/models/qwen'));
  assert.equal(expandPath('~', ctx), resolve('/home/ann'));
  assert.equal(expandPath('${userHome}/m', ctx), resolve('/home/ann/m'));
  assert.equal(expandPath('${workspaceFolder}/tok', ctx), resolve('/work/proj/tok'));
  assert.equal(expandPath('tok/../tok2', ctx), resolve('/work/proj/tok2'), 'relative: against the workspace folder');
  assert.equal(expandPath('tok', { home: '/home/ann' }), resolve('/home/ann/tok'), 'relative, no workspace: against the home folder');
  assert.equal(expandPath('  /abs/path  ', ctx), resolve('/abs/path'), 'trimmed');
  assert.equal(expandPath('~bob/x', ctx), resolve('/work/proj/~bob/x'), '~user is not expanded');
  assert.equal(expandPath('', ctx), undefined);
  assert.equal(expandPath('   ', ctx), undefined);
  assert.equal(expandPath(undefined, ctx), undefined);
});

test('outDirFor: <input-name>.eagle3 beside the first input, or inside the output directory', () => {
  assert.equal(outDirFor(['/d/chat.jsonl']), resolve('/d/chat.eagle3'));
  assert.equal(outDirFor(['/d/chat.jsonl.zst', '/e/other.jsonl']), resolve('/d/chat.eagle3'));
  assert.equal(outDirFor(['/d/run.traj']), resolve('/d/run.eagle3'));
  assert.equal(outDirFor(['/d/train.parquet']), resolve('/d/train.eagle3'));
  assert.equal(outDirFor(['/d/Data.JSON.GZ']), resolve('/d/Data.eagle3'));
  assert.equal(outDirFor(['/d/chat.jsonl'], '/out'), join('/out', 'chat.eagle3'));
  assert.equal(outDirFor(['/d/chat.jsonl'], ''), resolve('/d/chat.eagle3'), 'empty = beside the input');
});

/** A settings source holding `values`, the defaults elsewhere (as VS Code resolves unset keys). */
function source(values: Partial<Record<SettingKey, unknown>>): SettingsSource {
  return (key) => (key in values ? values[key] : SETTING_DEFAULTS[key]);
}

test('settings validation: mask policy, max length, template kwargs, with the warnings', () => {
  const warnings: string[] = [];
  const warn = (m: string) => warnings.push(m);
  assert.equal(runSettingFrom('mask', 'non-system', warn), 'non-system');
  assert.equal(runSettingFrom('mask', 'all', warn), 'assistant');
  assert.equal(runSettingFrom('mask', undefined, warn), 'assistant');
  assert.equal(runSettingFrom('maxLength', 4096, warn), 4096);
  for (const none of [null, undefined, 0]) assert.equal(runSettingFrom('maxLength', none, warn), undefined);
  assert.equal(warnings.length, 2, 'no warning for an unset max length');
  for (const bad of [-5, 2.5, '4096']) assert.equal(runSettingFrom('maxLength', bad, warn), undefined);
  assert.deepEqual(runSettingFrom('templateKwargs', { enable_thinking: false }, warn), { enable_thinking: false });
  for (const bad of [[], 'x', null]) assert.deepEqual(runSettingFrom('templateKwargs', bad, warn), {});
  assert.deepEqual(warnings, [
    'eagle3prep.maskPolicy "all" is not one of assistant, last-assistant, non-system; using "assistant".',
    'eagle3prep.maskPolicy "undefined" is not one of assistant, last-assistant, non-system; using "assistant".',
    'eagle3prep.maxLength -5 is not a positive integer; no limit applied.',
    'eagle3prep.maxLength 2.5 is not a positive integer; no limit applied.',
    'eagle3prep.maxLength "4096" is not a positive integer; no limit applied.',
    'eagle3prep.templateKwargs must be an object; ignored.',
    'eagle3prep.templateKwargs must be an object; ignored.',
    'eagle3prep.templateKwargs must be an object; ignored.',
  ]);
  const kwargs = { a: 1 };
  assert.notEqual(runSettingFrom('templateKwargs', kwargs), kwargs, 'a copy: the run never changes the setting object');
});

test('prepareSettingsFrom: defaults, valid values, and invalid ones falling back', () => {
  assert.deepEqual(prepareSettingsFrom(source({})), {
    tokenizerPath: '',
    mask: 'assistant',
    maxLength: undefined,
    truncate: false,
    long: 'drop',
    grouping: 'exact',
    minTrainableTokens: 1,
    minTrainableShare: 0,
    templateKwargs: {},
    reasoning: 'keep',
    outputDirectory: '',
    openReport: 'preview',
    format: 'jsonl',
  });
  assert.deepEqual(
    prepareSettingsFrom(
      source({
        tokenizerPath: '~/m',
        maskPolicy: 'last-assistant',
        maxLength: 2048,
        truncate: true,
        grouping: 'merged',
        minTrainableTokens: 8,
        templateKwargs: { enable_thinking: false },
        reasoning: 'drop',
        outputDirectory: '/out',
        openReport: 'none',
        outputFormat: 'both',
      }),
    ),
    {
      tokenizerPath: '~/m',
      mask: 'last-assistant',
      maxLength: 2048,
      truncate: true,
      long: 'truncate',
      grouping: 'merged',
      minTrainableTokens: 8,
      minTrainableShare: 0,
      templateKwargs: { enable_thinking: false },
      reasoning: 'drop',
      outputDirectory: '/out',
      openReport: 'none',
      format: 'both',
    },
  );
  const warnings: string[] = [];
  const s = prepareSettingsFrom(
    source({ tokenizerPath: 7, truncate: 'yes', openReport: 'popup', maskPolicy: 'x', reasoning: 'sometimes', outputFormat: 'csv' }),
    (m) => warnings.push(m),
  );
  assert.equal(s.tokenizerPath, '');
  assert.equal(s.truncate, false, 'only true turns truncation on');
  assert.equal(s.openReport, 'preview');
  assert.equal(s.mask, 'assistant');
  assert.equal(s.format, 'jsonl');
  assert.equal(s.reasoning, 'keep');
  assert.deepEqual(warnings, [
    'eagle3prep.maskPolicy "x" is not one of assistant, last-assistant, non-system; using "assistant".',
    'eagle3prep.reasoning "sometimes" is not keep or drop; using "keep".',
    'eagle3prep.outputFormat "csv" is not one of jsonl, parquet, both, messages; using "jsonl".',
  ]);
});

test('long records: an explicit eagle3prep.longRecords wins, else the legacy truncate decides; grouping and minimum validated', () => {
  const warnings: string[] = [];
  const warn = (m: string) => warnings.push(m);
  const explicit = (v: unknown) => (key: SettingKey) => (key === 'longRecords' ? v : undefined);
  assert.equal(prepareSettingsFrom(source({ truncate: true }), warn).long, 'truncate', 'unset: truncate → truncate');
  assert.equal(prepareSettingsFrom(source({ truncate: true }), warn, explicit('split')).long, 'split', 'set: it wins');
  assert.equal(prepareSettingsFrom(source({}), warn, explicit('drop')).long, 'drop');
  assert.equal(prepareSettingsFrom(source({ truncate: true }), warn, explicit('cut')).long, 'truncate', 'invalid: the legacy value');
  assert.equal(prepareSettingsFrom(source({ grouping: 'both' }), warn).grouping, 'exact');
  assert.equal(prepareSettingsFrom(source({ minTrainableTokens: 0 }), warn).minTrainableTokens, 1);
  assert.equal(prepareSettingsFrom(source({ minTrainableTokens: 2.5 }), warn).minTrainableTokens, 1);
  assert.equal(prepareSettingsFrom(source({ minTrainableShare: 0.05 }), warn).minTrainableShare, 0.05);
  assert.equal(prepareSettingsFrom(source({ minTrainableShare: 1.5 }), warn).minTrainableShare, 0);
  assert.deepEqual(warnings, [
    'eagle3prep.longRecords "cut" is not one of drop, truncate, split; using "truncate".',
    'eagle3prep.grouping "both" is not exact or merged; using "exact".',
    'eagle3prep.minTrainableTokens 0 is not a positive integer; using 1.',
    'eagle3prep.minTrainableTokens 2.5 is not a positive integer; using 1.',
    'eagle3prep.minTrainableShare 1.5 is not a number from 0 to 1; using 0.',
  ]);
});

test('generateSettingsFrom: positive numbers only, seconds to ms, reasoning mode', () => {
  assert.deepEqual(generateSettingsFrom(source({})), {
    model: undefined,
    concurrency: undefined,
    maxTokens: undefined,
    timeoutMs: undefined,
    reasoning: 'keep',
    preflightSeconds: 3,
  });
  assert.deepEqual(
    generateSettingsFrom(
      source({
        'generate.model': 'Qwen/Qwen3-8B',
        'generate.concurrency': 32,
        'generate.maxTokens': 4096,
        'generate.timeoutSeconds': 90,
        'generate.reasoning': 'drop',
        'generate.preflightSeconds': 10,
      }),
    ),
    { model: 'Qwen/Qwen3-8B', concurrency: 32, maxTokens: 4096, timeoutMs: 90_000, reasoning: 'drop', preflightSeconds: 10 },
  );
  const bad = generateSettingsFrom(
    source({
      'generate.concurrency': 0,
      'generate.maxTokens': -1,
      'generate.timeoutSeconds': '60',
      'generate.reasoning': 'hide',
      'generate.preflightSeconds': 0,
    }),
  );
  assert.deepEqual(bad, { model: undefined, concurrency: undefined, maxTokens: undefined, timeoutMs: undefined, reasoning: 'keep', preflightSeconds: 3 });
});

test('discovery, diagnostics, hover and model-folder settings fall back on invalid values', () => {
  const d = datasetDiscoveryFrom(source({ 'datasets.include': ['**/*.jsonl', '', '  ', 5], 'datasets.exclude': 'node_modules', 'datasets.maxFiles': 0 }));
  assert.deepEqual(d.include, ['**/*.jsonl']);
  assert.deepEqual(d.exclude, SETTING_DEFAULTS['datasets.exclude']);
  assert.equal(d.maxFiles, 5000);
  assert.equal(datasetDiscoveryFrom(source({ 'datasets.maxFiles': 12 })).maxFiles, 12);
  assert.deepEqual(diagnosticsSettingsFrom(source({})), { enabled: true, maxProblems: 1000 });
  assert.deepEqual(diagnosticsSettingsFrom(source({ 'diagnostics.enabled': false, 'diagnostics.maxProblems': 3 })), { enabled: false, maxProblems: 3 });
  assert.deepEqual(diagnosticsSettingsFrom(source({ 'diagnostics.enabled': 'no', 'diagnostics.maxProblems': 1.5 })), { enabled: true, maxProblems: 1000 });
  assert.equal(hoverCapFrom(source({})), 8192);
  assert.equal(hoverCapFrom(source({ 'hover.maxTokenizedCharacters': 20000 })), 20000);
  assert.equal(hoverCapFrom(source({ 'hover.maxTokenizedCharacters': -1 })), 8192);
  assert.deepEqual(modelFoldersFrom(source({ modelFolders: ['~/models', 3, ''] })), ['~/models']);
  assert.deepEqual(modelFoldersFrom(source({ modelFolders: '~/models' })), []);
});

test('datasetContextValue: the state, and .lines for plain JSON Lines', () => {
  assert.equal(datasetContextValue('prepared', true), 'eagle3prep.dataset.prepared.lines');
  assert.equal(datasetContextValue('stale', false), 'eagle3prep.dataset.stale');
  assert.equal(datasetContextValue('pending', false), 'eagle3prep.dataset.pending');
});

test('Restricted Mode: the workspace tokenizer path (and output folder, kwargs) it ignores is said, never silently dropped', async () => {
  const { restrictedModeNote, RESTRICTED_RECORD_SETTINGS } = await import('../../src/vscode/settings');
  const tok = { tokenizerPath: { workspaceValue: '/models/Kimi-K2.5' } };
  assert.equal(restrictedModeNote(tok, true), undefined, 'trusted: nothing is ignored');
  assert.equal(restrictedModeNote({ tokenizerPath: { workspaceValue: undefined } }, false), undefined, 'untrusted, the workspace sets nothing');
  assert.equal(
    restrictedModeNote(tok, false),
    "Restricted Mode: this workspace's eagle3prep.tokenizerPath is ignored (your user settings or the defaults apply: the tokenizer is not the workspace's); trust the workspace to use it.",
  );
  assert.equal(
    restrictedModeNote({ outputDirectory: { workspaceFolderValue: 'out' }, templateKwargs: { workspaceValue: { enable_thinking: false } } }, false),
    "Restricted Mode: this workspace's eagle3prep.outputDirectory, eagle3prep.templateKwargs are ignored (your user settings or the defaults apply); trust the workspace to use them.",
  );
  // Every one of them is a restricted configuration of the manifest (VS Code ignores only those).
  const pkg = JSON.parse(require('node:fs').readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  for (const k of RESTRICTED_RECORD_SETTINGS) assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(`eagle3prep.${k}`), k);
});
