/**
 * The extension's settings as data: every `eagle3prep.*` key with its type and default, the allowed
 * values of the enumerations, the minimums, and the validation that turns a raw value (whatever a
 * settings.json holds) into a typed one. `config.ts` reads VS Code's configuration through this;
 * test/unit/vscode-manifest.test.ts checks it against package.json `contributes.configuration`.
 *
 * Pure: no `vscode` import (unit-tested in plain node).
 */
import { REASONING_MODES, type ReasoningMode } from '../core/generate/client';
import { GROUPINGS, type Grouping } from '../core/records/mask';
import { LONG_POLICIES, OUTPUT_FORMATS, type LongPolicy, type OutputFormat } from '../core/records/rowResult';
import { DEFAULT_RUN_SETTINGS, type RunSettings } from '../core/run/runSettings';
import { MASK_POLICIES, REASONING_POLICIES, type MaskPolicy, type ReasoningPolicy } from '../core/types';
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

/** The type of each setting, by key without the `eagle3prep.` section. */
export interface SettingTypes {
  tokenizerPath: string;
  maskPolicy: MaskPolicy;
  maxLength: number | null;
  truncate: boolean;
  longRecords: LongPolicy;
  grouping: Grouping;
  minTrainableTokens: number;
  templateKwargs: Record<string, unknown>;
  reasoning: ReasoningPolicy;
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

/**
 * The settings each record-deciding run setting (core/run/runSettings.ts) is read from: a change of
 * any of them can make an output stale, so the Datasets view, the dashboard and Problems re-compare
 * on it (the hover and the mask view read the settings on each use). Typed by the run settings: a
 * setting added there needs its entry here.
 */
export const RUN_SETTING_SOURCES: { readonly [K in keyof RunSettings]: readonly SettingKey[] } = {
  mask: ['maskPolicy'],
  reasoning: ['reasoning'],
  maxLength: ['maxLength', 'trainer'],
  long: ['longRecords', 'truncate', 'trainer'],
  grouping: ['grouping'],
  minTrainableTokens: ['minTrainableTokens'],
  templateKwargs: ['templateKwargs'],
};

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
  tokenizerPath: '',
  maskPolicy: DEFAULT_RUN_SETTINGS.mask,
  maxLength: DEFAULT_RUN_SETTINGS.maxLength,
  truncate: false,
  longRecords: DEFAULT_RUN_SETTINGS.long,
  grouping: DEFAULT_RUN_SETTINGS.grouping,
  minTrainableTokens: DEFAULT_RUN_SETTINGS.minTrainableTokens,
  templateKwargs: DEFAULT_RUN_SETTINGS.templateKwargs,
  reasoning: DEFAULT_RUN_SETTINGS.reasoning,
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
export const SETTING_CHOICES = {
  maskPolicy: MASK_POLICIES,
  longRecords: LONG_POLICIES,
  grouping: GROUPINGS,
  openReport: OPEN_REPORT_MODES,
  outputFormat: OUTPUT_FORMATS,
  trainer: TRAINER_SETTING_CHOICES,
  reasoning: REASONING_POLICIES,
  'generate.reasoning': REASONING_MODES,
} as const satisfies Partial<Record<SettingKey, readonly string[]>>;

/** The smallest value of the numeric settings (package.json `minimum`); a smaller one is not used. */
export const SETTING_MINIMUMS = {
  maxLength: 1,
  minTrainableTokens: 1,
  'generate.concurrency': 1,
  'generate.maxTokens': 1,
  'generate.timeoutSeconds': 1,
  'generate.preflightSeconds': 1,
  'datasets.maxFiles': 1,
  'diagnostics.maxProblems': 1,
  'hover.maxTokenizedCharacters': 1024,
} as const satisfies Partial<Record<SettingKey, number>>;

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

/** `eagle3prep.maskPolicy`: a known policy, else the default with a warning. */
export function maskPolicySetting(value: unknown, warn: SettingWarning = () => {}): MaskPolicy {
  return choiceSetting('maskPolicy', value, MASK_POLICIES, SETTING_DEFAULTS.maskPolicy, warn);
}

/** `eagle3prep.maxLength`: a positive integer; null, 0 or nothing = no limit (undefined); anything else is no limit with a warning. */
export function maxLengthSetting(value: unknown, warn: SettingWarning = () => {}): number | undefined {
  if (value === null || value === undefined || value === 0) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= SETTING_MINIMUMS.maxLength) return value;
  warn(`eagle3prep.maxLength ${JSON.stringify(value)} is not a positive integer; no limit applied.`);
  return undefined;
}

/** `eagle3prep.templateKwargs`: a copy of the object, else `{}` with a warning. */
export function templateKwargsSetting(value: unknown, warn: SettingWarning = () => {}): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ...(value as Record<string, unknown>) };
  warn('eagle3prep.templateKwargs must be an object; ignored.');
  return {};
}

/**
 * `eagle3prep.longRecords` (CLI `--long`): when no setting gives it, the legacy `eagle3prep.truncate`
 * decides (`truncate` when on, else `drop`); an invalid value keeps that with a warning.
 */
export function longRecordsSetting(explicit: unknown, truncate: boolean, warn: SettingWarning = () => {}): LongPolicy {
  const fallback: LongPolicy = truncate ? 'truncate' : 'drop';
  return explicit === undefined ? fallback : choiceSetting('longRecords', explicit, LONG_POLICIES, fallback, warn);
}

/** `eagle3prep.grouping`: `exact` or `merged`, else `exact` with a warning. */
export function groupingSetting(value: unknown, warn: SettingWarning = () => {}): Grouping {
  return choiceSetting('grouping', value, GROUPINGS, SETTING_DEFAULTS.grouping, warn);
}

/** `eagle3prep.reasoning`: `keep` or `drop`, else `keep` with a warning. */
export function reasoningSetting(value: unknown, warn: SettingWarning = () => {}): ReasoningPolicy {
  return choiceSetting('reasoning', value, REASONING_POLICIES, SETTING_DEFAULTS.reasoning, warn);
}

/** `eagle3prep.minTrainableTokens`: a positive integer, else 1 with a warning. */
export function minTrainableTokensSetting(value: unknown, warn: SettingWarning = () => {}): number {
  const v = integerAtLeast(value, SETTING_MINIMUMS.minTrainableTokens, SETTING_DEFAULTS.minTrainableTokens);
  if (v !== value) warn(`eagle3prep.minTrainableTokens ${JSON.stringify(value)} is not a positive integer; using 1.`);
  return v;
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

/** The settings that shape a prepare run (and the hover, mask view and row checks), validated; paths not yet expanded. */
export interface PrepareSettingValues {
  /** `eagle3prep.tokenizerPath` as written (`''` = the embedded default). */
  tokenizerPath: string;
  mask: MaskPolicy;
  /** undefined = no limit. */
  maxLength?: number;
  truncate: boolean;
  /** `eagle3prep.longRecords` (CLI `--long`); `truncate` when the legacy `eagle3prep.truncate` is set and this one is not. */
  long: LongPolicy;
  /** `eagle3prep.grouping` (CLI `--grouping`). */
  grouping: Grouping;
  /** `eagle3prep.minTrainableTokens` (CLI `--min-trainable-tokens`). */
  minTrainableTokens: number;
  templateKwargs: Record<string, unknown>;
  /** `eagle3prep.reasoning` (CLI `--reasoning`): keep (default) or drop the data's reasoning before rendering. */
  reasoning: ReasoningPolicy;
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
    maxLength: maxLengthSetting(get('maxLength'), warn),
    long: explicitLong === undefined && !truncate ? undefined : longRecordsSetting(explicitLong, truncate, warn),
    truncate,
  });
  return {
    tokenizerPath: text(get('tokenizerPath')),
    mask: maskPolicySetting(get('maskPolicy'), warn),
    maxLength: lengths.maxLength,
    truncate,
    long: lengths.long ?? longRecordsSetting(explicitLong, truncate, warn),
    grouping: groupingSetting(get('grouping'), warn),
    minTrainableTokens: minTrainableTokensSetting(get('minTrainableTokens'), warn),
    templateKwargs: templateKwargsSetting(get('templateKwargs'), warn),
    reasoning: reasoningSetting(get('reasoning'), warn),
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
