/**
 * The extension's settings as data: every `eagle3prep.*` key with its type and default, the allowed
 * values of the enumerations, the minimums, and the validation that turns a raw value (whatever a
 * settings.json holds) into a typed one. `config.ts` reads VS Code's configuration through this;
 * test/unit/vscode-manifest.test.ts checks it against package.json `contributes.configuration`.
 *
 * Pure: no `vscode` import (unit-tested in plain node).
 */
import { REASONING_MODES, type ReasoningMode } from '../core/generate/client';
import { LONG_POLICIES, OUTPUT_FORMATS, type LongPolicy, type OutputFormat } from '../core/records/rowResult';
import {
  DEFAULT_RUN_SETTINGS,
  nullable,
  rangeText,
  RUN_SETTING_KEYS,
  RUN_SETTINGS,
  runSettingSpec,
  shown,
  wholeNumberText,
  type RunSettingName,
  type RunSettings,
  type RunSettingValues,
} from '../core/run/runSettings';
import { TRAINER_IDS, TRAINERS, withTrainerDefaults, type TrainerId } from '../core/trainers/trainers';
import { CONFIG_SECTION } from './ids';

/** The values of `eagle3prep.trainer`: `none` (the default), then the trainers (CLI `--trainer`). */
export const TRAINER_SETTING_CHOICES = ['none', ...TRAINER_IDS] as const;

/** One of {@link TRAINER_SETTING_CHOICES}. */
export type TrainerSetting = (typeof TRAINER_SETTING_CHOICES)[number];

/** Where report.md is shown after a run (`eagle3prep.openReport`); the default first. */
export const OPEN_REPORT_MODES = ['preview', 'editor', 'none'] as const;

/** One of {@link OPEN_REPORT_MODES}. */
export type OpenReportMode = (typeof OPEN_REPORT_MODES)[number];

/** The VS Code settings of the run settings (core/run/runSettings.ts `RUN_SETTINGS` `setting`), typed as the run settings. */
type RunSettingTypes = { [K in keyof RunSettings as RunSettingName<K>]: RunSettings[K] };

/** The type of each setting, by key without the `eagle3prep.` section: the run settings' (`maskPolicy`, …) and these. */
export interface SettingTypes extends RunSettingTypes {
  tokenizerPath: string;
  truncate: boolean;
  outputDirectory: string;
  openReport: OpenReportMode;
  outputFormat: OutputFormat;
  trainer: TrainerSetting;
  modelFolders: string[];
  'generate.servers': string[];
  'generate.model': string;
  'generate.concurrency': number | null;
  'generate.maxTokens': number | null;
  'generate.timeoutSeconds': number | null;
  'generate.reasoning': ReasoningMode;
  'generate.preflightSeconds': number;
  'datasets.include': string[];
  'datasets.exclude': string[];
  'datasets.maxFiles': number;
  'diagnostics.enabled': boolean;
  'diagnostics.maxProblems': number;
  'hover.maxTokenizedCharacters': number;
}

/** A setting's key without the `eagle3prep.` section, e.g. `maskPolicy`, `datasets.include`. */
export type SettingKey = keyof SettingTypes;

/** The VS Code setting of run setting `key` (core/run/runSettings.ts `RUN_SETTINGS` `setting`). */
export function runSettingKey<K extends keyof RunSettings>(key: K): RunSettingName<K> {
  return RUN_SETTINGS[key].setting;
}

/**
 * Settings that decide a run setting besides its own: the trainer's default length and `--long split`,
 * and the legacy `eagle3prep.truncate`.
 */
const ALSO_DECIDED_BY: Partial<Record<keyof RunSettings, readonly SettingKey[]>> = { maxLength: ['trainer'], long: ['truncate', 'trainer'] };

/**
 * The settings each record-deciding run setting (core/run/runSettings.ts) is read from: a change of
 * any of them can make an output stale, so the Datasets view, the dashboard and Problems re-compare
 * on it (the hover and the mask view read the settings on each use).
 */
export const RUN_SETTING_SOURCES: { readonly [K in keyof RunSettings]: readonly SettingKey[] } = Object.fromEntries(
  RUN_SETTING_KEYS.map((k) => [k, [runSettingKey(k), ...(ALSO_DECIDED_BY[k] ?? [])]]),
) as { [K in keyof RunSettings]: SettingKey[] };

/** Each run setting's table entry by its VS Code setting name, e.g. `{ maskPolicy: MASK_POLICIES }` for `choices`. */
function byRunSettingKey<T>(value: (key: keyof RunSettings) => T | undefined): Partial<Record<SettingKey, T>> {
  const out: Partial<Record<SettingKey, T>> = {};
  for (const k of RUN_SETTING_KEYS) {
    const v = value(k);
    if (v !== undefined) out[runSettingKey(k)] = v;
  }
  return out;
}

/** Every setting a change of which can make a prepared output stale: the tokenizer, the output folder and {@link RUN_SETTING_SOURCES}. */
export const STALENESS_SETTING_KEYS: readonly SettingKey[] = [
  ...new Set<SettingKey>(['tokenizerPath', 'outputDirectory', ...Object.values(RUN_SETTING_SOURCES).flat()]),
];

/**
 * The settings package.json declares `"scope": "resource"` (a workspace folder may set its own); every
 * other one is window-scoped, and is read without a resource (VS Code logs a warning for each read
 * of a window-scoped setting with one, and applies no folder value to it anyway).
 */
export const RESOURCE_SCOPED_SETTINGS: readonly SettingKey[] = ['tokenizerPath', 'outputDirectory'];

/** The groups of dotted keys (`eagle3prep.datasets.*`, …), for configuration-change checks. */
export type SettingGroup = 'generate' | 'datasets' | 'diagnostics' | 'hover';

/** Every setting's default: the value used when the user set nothing, equal to package.json's `default`. */
export const SETTING_DEFAULTS: Readonly<SettingTypes> = {
  ...(byRunSettingKey((k) => DEFAULT_RUN_SETTINGS[k]) as RunSettingTypes),
  tokenizerPath: '',
  truncate: false,
  outputDirectory: '',
  openReport: OPEN_REPORT_MODES[0],
  outputFormat: OUTPUT_FORMATS[0],
  trainer: TRAINER_SETTING_CHOICES[0],
  modelFolders: [],
  'generate.servers': [],
  'generate.model': '',
  'generate.concurrency': null,
  'generate.maxTokens': null,
  'generate.timeoutSeconds': null,
  'generate.reasoning': REASONING_MODES[0],
  'generate.preflightSeconds': 3,
  'datasets.include': ['**/*.{jsonl,ndjson,json,traj,parquet}', '**/*.{jsonl,ndjson,json,traj}.{gz,zst}'],
  'datasets.exclude': [
    '**/node_modules/**',
    '**/.git/**',
    '**/.vscode/**',
    '**/*.eagle3/**',
    '**/{package,package-lock,tsconfig,jsconfig,tokenizer,tokenizer_config,special_tokens_map,generation_config,added_tokens,launch,settings}.json',
  ],
  'datasets.maxFiles': 5000,
  'diagnostics.enabled': true,
  'diagnostics.maxProblems': 1000,
  'hover.maxTokenizedCharacters': 8192,
};

/** The allowed values of the enumerated settings (package.json `enum`), in the order offered. */
export const SETTING_CHOICES: Partial<Record<SettingKey, readonly string[]>> = {
  ...byRunSettingKey((k) => runSettingSpec(k).choices as readonly string[] | undefined),
  openReport: OPEN_REPORT_MODES,
  outputFormat: OUTPUT_FORMATS,
  trainer: TRAINER_SETTING_CHOICES,
  'generate.reasoning': REASONING_MODES,
};

/** The smallest value of the numeric settings (package.json `minimum`); a smaller one is not used. */
export const SETTING_MINIMUMS = {
  ...byRunSettingKey((k) => runSettingSpec(k).minimum),
  'generate.concurrency': 1,
  'generate.maxTokens': 1,
  'generate.timeoutSeconds': 1,
  'generate.preflightSeconds': 1,
  'datasets.maxFiles': 1,
  'diagnostics.maxProblems': 1,
  'hover.maxTokenizedCharacters': 1024,
} as const satisfies Partial<Record<SettingKey, number>>;

/** The largest value of the numeric settings (package.json `maximum`); a larger one is not used. */
export const SETTING_MAXIMUMS: Partial<Record<SettingKey, number>> = byRunSettingKey((k) => runSettingSpec(k).maximum);

/** The raw value of a setting (VS Code's effective value: folder, workspace, user, else the default). */
export type SettingsSource = (key: SettingKey) => unknown;

/** The value a user, workspace or folder setting gives `key`, or undefined when none does (the default applies). */
export type ExplicitSettings = (key: SettingKey) => unknown;

/** Receives a message when a setting's value is invalid and a fallback is used. */
export type SettingWarning = (message: string) => void;

/**
 * `value` when it is one of `choices`, else `fallback` with a warning naming the setting and what it allows
 * (`is not keep or drop` for two choices, `is not one of a, b, c` for more).
 */
export function choiceSetting<T extends string>(key: SettingKey, value: unknown, choices: readonly T[], fallback: T, warn: SettingWarning): T {
  const v = choices.find((c) => c === value);
  if (v !== undefined) return v;
  const allowed = choices.length === 2 ? `${choices[0]} or ${choices[1]}` : `one of ${choices.join(', ')}`;
  warn(`eagle3prep.${key} "${String(value)}" is not ${allowed}; using "${fallback}".`);
  return fallback;
}

/** `value` when it is one of `choices`, else `fallback`. */
export function oneOf<T extends string>(value: unknown, choices: readonly T[], fallback: T): T {
  return choices.find((c) => c === value) ?? fallback;
}

/** The strings of a list setting with blanks left out; undefined when the value is not a list. */
export function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((x): x is string => typeof x === 'string' && x.trim() !== '') : undefined;
}

/** A positive number, else undefined (null, 0, negatives and non-numbers alike). */
export function positiveNumber(value: unknown): number | undefined {
  return typeof value === 'number' && value > 0 ? value : undefined;
}

/** An integer at least `min`, else `fallback`. */
export function integerAtLeast(value: unknown, min: number, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min ? value : fallback;
}

/**
 * A run setting's value from its VS Code setting (`RUN_SETTINGS[key].setting`), validated by its row
 * of the table; an invalid one is its default, with a warning naming the setting, what it allows and
 * what is used. A choice must be one of the choices; an integer a whole number from the minimum (a
 * nullable one, `maxLength`, is undefined for null, 0 or nothing: no limit); a number one within the
 * minimum .. maximum; an object is copied (the run never changes the setting's object).
 */
export function runSettingFrom<K extends keyof RunSettings>(key: K, value: unknown, warn: SettingWarning = () => {}): RunSettingValues[K] {
  const spec = runSettingSpec(key);
  const name = runSettingKey(key);
  const fallback = spec.default;
  const inRange = (v: number) => (spec.minimum === undefined || v >= spec.minimum) && (spec.maximum === undefined || v <= spec.maximum);
  const none = nullable(key);
  if (none && (value === null || value === undefined || value === 0)) return undefined as RunSettingValues[K];
  const using = none ? 'no limit applied' : `using ${shown(fallback)}`;
  switch (spec.kind) {
    case 'choice':
      return choiceSetting(name, value, spec.choices as readonly string[], String(fallback), warn) as RunSettingValues[K];
    case 'integer':
      if (typeof value === 'number' && Number.isInteger(value) && inRange(value)) return value as RunSettingValues[K];
      warn(`${CONFIG_SECTION}.${name} ${JSON.stringify(value)} is not ${wholeNumberText(spec)}; ${using}.`);
      break;
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value) && inRange(value)) return value as RunSettingValues[K];
      warn(`${CONFIG_SECTION}.${name} ${JSON.stringify(value)} is not a number ${rangeText(spec)}; ${using}.`);
      break;
    case 'object':
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ...(value as Record<string, unknown>) } as RunSettingValues[K];
      warn(`${CONFIG_SECTION}.${name} must be an object; ignored.`);
      return { ...(fallback as object) } as RunSettingValues[K];
  }
  return (none ? undefined : fallback) as RunSettingValues[K];
}

/**
 * `eagle3prep.longRecords` (CLI `--long`): when no setting gives it, the legacy `eagle3prep.truncate`
 * decides (`truncate` when on, else `drop`); an invalid value keeps that with a warning.
 */
export function longRecordsSetting(explicit: unknown, truncate: boolean, warn: SettingWarning = () => {}): LongPolicy {
  const fallback: LongPolicy = truncate ? 'truncate' : 'drop';
  return explicit === undefined ? fallback : choiceSetting('longRecords', explicit, LONG_POLICIES, fallback, warn);
}

/** `eagle3prep.outputFormat` (CLI `--format`): one of jsonl, parquet, both, messages, else `jsonl` with a warning. */
export function outputFormatSetting(value: unknown, warn: SettingWarning = () => {}): OutputFormat {
  return choiceSetting('outputFormat', value, OUTPUT_FORMATS, SETTING_DEFAULTS.outputFormat, warn);
}

/** `eagle3prep.trainer` (CLI `--trainer`): a trainer, undefined for `none`; anything else is none with a warning. */
export function trainerSetting(value: unknown, warn: SettingWarning = () => {}): TrainerId | undefined {
  const v = choiceSetting('trainer', value, TRAINER_SETTING_CHOICES, SETTING_DEFAULTS.trainer, warn);
  return v === 'none' ? undefined : v;
}

/**
 * The record format for a trainer: a trainer that reads JSONL records (SpecForge, speculators) gets
 * `both` instead of `parquet` and `jsonl` instead of `messages`, with a warning (the CLI refuses
 * those formats with it); one that reads conversations (EAGLE, Model-Optimizer) gets `messages`
 * when `eagle3prep.outputFormat` is not set (`explicitFormat` undefined), as `--trainer` does.
 */
function trainerFormat(trainer: TrainerId | undefined, format: OutputFormat, explicitFormat: unknown, warn: SettingWarning): OutputFormat {
  if (!trainer) return format;
  if (!TRAINERS[trainer].readsRecords) return explicitFormat === undefined ? 'messages' : format;
  if (format === 'parquet') {
    warn(
      `eagle3prep.trainer ${trainer}: ${TRAINERS[trainer].name} reads tokenized_data.jsonl, which eagle3prep.outputFormat "parquet" does not write; using "both".`,
    );
    return 'both';
  }
  if (format === 'messages') {
    warn(
      `eagle3prep.trainer ${trainer}: ${TRAINERS[trainer].name} reads tokenized_data.jsonl, not conversations (eagle3prep.outputFormat "messages"); using "jsonl".`,
    );
    return 'jsonl';
  }
  return format;
}

/**
 * The settings that shape a prepare run (and the hover, mask view and row checks), validated; paths not yet expanded.
 * The run settings (`mask`, `maxLength` (undefined = no limit), `long`, …) by their names in core/run/runSettings.ts:
 * `long` is `truncate` when the legacy `eagle3prep.truncate` is set and `eagle3prep.longRecords` is not.
 */
export interface PrepareSettingValues extends RunSettingValues {
  /** `eagle3prep.tokenizerPath` as written (`''` = the embedded default). */
  tokenizerPath: string;
  truncate: boolean;
  /** `eagle3prep.outputDirectory` as written (`''` = beside the input). */
  outputDirectory: string;
  openReport: OpenReportMode;
  /** The record files (`eagle3prep.outputFormat`, `PrepareOptions.format`). */
  format: OutputFormat;
  /**
   * `eagle3prep.trainer` (CLI `--trainer`); undefined = none. When set, `maxLength` (unless set) is
   * its default length and `long` (unless `longRecords` or the legacy `truncate` is set) is `split`.
   */
  trainer?: TrainerId;
}

/**
 * `long` with mask `non-system`: split does not apply (non-system records are never split, core/run/runSettings.ts
 * `longSplitConflict`), so it is `drop`, which is what the run does; said through `warn` when `longRecords` asked for split
 * (a trainer's default split changes silently: nothing was asked).
 */
function nonSystemLong(long: LongPolicy, mask: unknown, asked: boolean, warn: SettingWarning): LongPolicy {
  if (long !== 'split' || mask !== 'non-system') return long;
  if (asked)
    warn(
      'eagle3prep.longRecords "split" does not apply with eagle3prep.maskPolicy "non-system": non-system records are never split, so a too-long one ' +
        'is dropped (too_long); using "drop". Set longRecords to drop or truncate, or maskPolicy to assistant or last-assistant to split.',
    );
  return 'drop';
}

/** The run settings read apart from the others: `maxLength` and `long` (the trainer's defaults, the legacy `truncate`). */
const READ_APART = ['maxLength', 'long'] as const satisfies readonly (keyof RunSettings)[];

/**
 * Reads and validates the prepare settings; invalid values fall back to the defaults and are reported
 * through `warn`. `explicit` tells whether a setting was given at all (only `longRecords` asks: unset,
 * it follows the legacy `truncate`); by default nothing is.
 */
export function prepareSettingsFrom(get: SettingsSource, warn: SettingWarning = () => {}, explicit: ExplicitSettings = () => undefined): PrepareSettingValues {
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  const truncate = get('truncate') === true;
  const trainer = trainerSetting(get('trainer'), warn);
  const explicitLong = explicit('longRecords');
  const lengths = withTrainerDefaults({
    trainer,
    maxLength: runSettingFrom('maxLength', get('maxLength'), warn),
    long: explicitLong === undefined && !truncate ? undefined : longRecordsSetting(explicitLong, truncate, warn),
    truncate,
  });
  const run = Object.fromEntries(
    RUN_SETTING_KEYS.filter((k) => !(READ_APART as readonly (keyof RunSettings)[]).includes(k)).map((k) => [k, runSettingFrom(k, get(runSettingKey(k)), warn)]),
  );
  return {
    tokenizerPath: text(get('tokenizerPath')),
    ...(run as Omit<RunSettingValues, (typeof READ_APART)[number]>),
    maxLength: lengths.maxLength,
    truncate,
    long: nonSystemLong(lengths.long ?? longRecordsSetting(explicitLong, truncate, warn), run.mask, explicitLong !== undefined, warn),
    outputDirectory: text(get('outputDirectory')),
    openReport: oneOf(get('openReport'), OPEN_REPORT_MODES, SETTING_DEFAULTS.openReport),
    format: trainerFormat(trainer, outputFormatSetting(get('outputFormat'), warn), explicit('outputFormat'), warn),
    ...(trainer ? { trainer } : {}),
  };
}

/** The generation settings (`eagle3prep.generate.*` but the servers, which follow the trust rule). */
export interface GenerateSettingValues {
  /** undefined = the first model the server lists. */
  model?: string;
  concurrency?: number;
  maxTokens?: number;
  timeoutMs?: number;
  reasoning: ReasoningMode;
  /** `eagle3prep.generate.preflightSeconds`: how long the preflight waits for each server, s. */
  preflightSeconds: number;
}

/** Reads the generation settings; a value that is not a positive number means "not set". */
export function generateSettingsFrom(get: SettingsSource): GenerateSettingValues {
  const model = get('generate.model');
  const timeout = positiveNumber(get('generate.timeoutSeconds'));
  return {
    model: typeof model === 'string' && model ? model : undefined,
    concurrency: positiveNumber(get('generate.concurrency')),
    maxTokens: positiveNumber(get('generate.maxTokens')),
    timeoutMs: timeout ? timeout * 1000 : undefined,
    reasoning: oneOf(get('generate.reasoning'), REASONING_MODES, SETTING_DEFAULTS['generate.reasoning']),
    preflightSeconds: positiveNumber(get('generate.preflightSeconds')) ?? SETTING_DEFAULTS['generate.preflightSeconds'],
  };
}

/** Which files the Datasets view and "Prepare all" consider. */
export interface DatasetDiscoverySettings {
  include: string[];
  exclude: string[];
  maxFiles: number;
}

/** Reads the discovery settings; a value that is not a list of globs gives the default list. */
export function datasetDiscoveryFrom(get: SettingsSource): DatasetDiscoverySettings {
  return {
    include: stringList(get('datasets.include')) ?? [...SETTING_DEFAULTS['datasets.include']],
    exclude: stringList(get('datasets.exclude')) ?? [...SETTING_DEFAULTS['datasets.exclude']],
    maxFiles: integerAtLeast(get('datasets.maxFiles'), SETTING_MINIMUMS['datasets.maxFiles'], SETTING_DEFAULTS['datasets.maxFiles']),
  };
}

/** The Problems panel settings. */
export interface DiagnosticsSettingValues {
  enabled: boolean;
  maxProblems: number;
}

/** Reads the Problems panel settings (on unless set to `false`). */
export function diagnosticsSettingsFrom(get: SettingsSource): DiagnosticsSettingValues {
  return {
    enabled: get('diagnostics.enabled') !== false,
    maxProblems: integerAtLeast(get('diagnostics.maxProblems'), SETTING_MINIMUMS['diagnostics.maxProblems'], SETTING_DEFAULTS['diagnostics.maxProblems']),
  };
}

/** `eagle3prep.hover.maxTokenizedCharacters`: a positive number, else the default. */
export function hoverCapFrom(get: SettingsSource): number {
  return positiveNumber(get('hover.maxTokenizedCharacters')) ?? SETTING_DEFAULTS['hover.maxTokenizedCharacters'];
}

/** `eagle3prep.modelFolders`: the string entries (blanks left out), else none. */
export function modelFoldersFrom(get: SettingsSource): string[] {
  return stringList(get('modelFolders')) ?? [];
}

/** The package.json `restrictedConfigurations` whose workspace values Restricted Mode ignores and that decide records. */
export const RESTRICTED_RECORD_SETTINGS: readonly SettingKey[] = ['tokenizerPath', 'outputDirectory', 'templateKwargs'];

/**
 * What Restricted Mode ignores of this workspace's settings, said where the tokenizer is named (the status bar
 * item, the Datasets view): VS Code drops the workspace and folder values of the restricted settings of an untrusted
 * workspace (package.json `capabilities.untrustedWorkspaces`) without a word, so the embedded tokenizer (or the user's
 * own setting) would be used silently.
 * @param values each restricted setting's workspace / workspace-folder values (`WorkspaceConfiguration.inspect`)
 * @param trusted `vscode.workspace.isTrusted`
 * @returns one sentence, or undefined when nothing is ignored
 */
export function restrictedModeNote(
  values: Partial<Record<SettingKey, { workspaceValue?: unknown; workspaceFolderValue?: unknown } | undefined>>,
  trusted: boolean,
): string | undefined {
  if (trusted) return undefined;
  const ignored = RESTRICTED_RECORD_SETTINGS.filter((k) => {
    const v = values[k];
    return v !== undefined && (v.workspaceValue !== undefined || v.workspaceFolderValue !== undefined);
  });
  if (!ignored.length) return undefined;
  const names = ignored.map((k) => `${CONFIG_SECTION}.${k}`).join(', ');
  return `Restricted Mode: this workspace's ${names} ${ignored.length === 1 ? 'is' : 'are'} ignored (your user settings or the defaults apply${ignored.includes('tokenizerPath') ? ": the tokenizer is not the workspace's" : ''}); trust the workspace to use ${ignored.length === 1 ? 'it' : 'them'}.`;
}
