/**
 * The settings of a `prepare` run that decide its records, in one table: each setting's label,
 * CLI flag and help, VS Code setting, kind, default, choices, minimum and maximum. The CLI's
 * options (src/cli/prepare.ts), the extension's reading of its settings (src/vscode/settings.ts),
 * what the row processors get (`settingsOf`), the run's check of its options, the report (what a
 * run recorded, with the defaults of older reports) and every staleness check (the Datasets view,
 * the dashboard, the hover and the mask view) come from here, so a setting added to
 * {@link RUN_SETTINGS} is offered, read, passed on, reported and compared everywhere;
 * test/unit/vscode-manifest.test.ts holds package.json to it.
 *
 * A trainer (`--trainer`, `eagle3prep.trainer`) is not a row: it decides only the defaults of
 * `maxLength` and `long` (core/trainers/trainers.ts `withTrainerDefaults`, applied before these
 * settings are resolved), and those are compared; the records do not depend on it otherwise.
 *
 * Pure and without side effects; imports types and choice lists only.
 */
import { GROUPINGS, type Grouping } from '../records/maskTypes';
import { MASK_POLICIES, REASONING_POLICIES, type MaskPolicy, type ReasoningPolicy } from '../types';
import type { RecordRules } from '../records/fate';
import { type PrepareOptions, type PrepareResult } from './contract';
import { LONG_POLICIES, type LongPolicy } from '../records/rowResult';
import { canonical } from '../formats/appliedConfig';

/**
 * The record-deciding settings of a run, resolved (no field left to a default). The record rules
 * (records/fate.ts `RecordRules`) are declared where they act and resolved here with the others.
 */
export interface RunSettings extends Required<RecordRules> {
  /** docs/loss-mask-rules.md "Targets". */
  mask: MaskPolicy;
  /** keep or drop the data's reasoning before rendering. */
  reasoning: ReasoningPolicy;
  /** Longest record in tokens; null = no limit. */
  maxLength: number | null;
  /** Records longer than `maxLength` (only compared when there is a limit). */
  long: LongPolicy;
  /** docs/loss-mask-rules.md "Record grouping". */
  grouping: Grouping;
  /** Extra variables for the chat template (compared by value). */
  templateKwargs: Record<string, unknown>;
}

/**
 * The kind of a setting's value, as package.json `contributes.configuration` types it: one of its
 * `choices` (a string enum); a whole number (`integer`, a nullable one when the default is null: no
 * limit, which 0 also means); a `number` within `minimum` .. `maximum`; a JSON `object`.
 */
export type SettingKind = 'choice' | 'integer' | 'number' | 'object';

/** How one setting is described, defaulted, parsed and compared. */
export interface SettingSpec<K extends keyof RunSettings> {
  /** Its name in messages ("settings changed: mask policy …"). */
  label: string;
  /** The CLI option that sets it, as commander declares it: `--mask <policy>`. */
  flag: string;
  /** Its VS Code setting, without the `eagle3prep.` section (package.json `contributes.configuration`). */
  setting: string;
  kind: SettingKind;
  default: RunSettings[K];
  /** The allowed values, the default first; absent for free values. */
  choices?: readonly RunSettings[K][];
  /** The smallest allowed number. */
  minimum?: number;
  /** The largest allowed number. */
  maximum?: number;
  /** Whether a difference matters given the rest of the run's settings (default: always). */
  applies?: (s: RunSettings) => boolean;
  /** What the setting does, for `prepare --help` (a sentence or two). */
  help: string;
  /** The `prepare --help` section it is listed in. */
  section: 'model' | 'records';
  /** The default as `--help` says it, when not its value (`no limit`). */
  defaultText?: string;
}

/** Every record-deciding setting: one row each. */
export const RUN_SETTINGS = {
  mask: {
    label: 'mask policy',
    flag: '--mask <policy>',
    setting: 'maskPolicy',
    kind: 'choice',
    default: MASK_POLICIES[0],
    choices: MASK_POLICIES,
    section: 'records',
    help: 'Which tokens are trained (loss_mask 1): every assistant turn with its end-of-turn token; only the last assistant turn; or every turn but the system prompt (docs/loss-mask-rules.md "Targets").',
  },
  reasoning: {
    label: 'reasoning',
    flag: '--reasoning <policy>',
    setting: 'reasoning',
    kind: 'choice',
    default: REASONING_POLICIES[0],
    choices: REASONING_POLICIES,
    section: 'model',
    help:
      "keep: train the data's reasoning where the model writes it. drop: remove every turn's reasoning (reasoning_content and inline <think> blocks) before rendering, to train a drafter for a model served with thinking off. " +
      'With keep and a template whose generation prompt turns thinking off, a row with reasoning is an error (reasoning_with_thinking_off) naming both ways out.',
  },
  maxLength: {
    label: 'max length',
    flag: '--max-length <tokens>',
    setting: 'maxLength',
    kind: 'integer',
    default: null,
    minimum: 1,
    section: 'records',
    defaultText: 'no limit',
    help: 'Longest record in tokens. A longer record is dropped (reason too_long), cut (--long truncate) or split (--long split).',
  },
  long: {
    label: 'long records',
    flag: '--long <policy>',
    setting: 'longRecords',
    kind: 'choice',
    default: LONG_POLICIES[0],
    choices: LONG_POLICIES,
    applies: (s: RunSettings) => s.maxLength !== null,
    section: 'records',
    help:
      'What to do with a record longer than --max-length: drop it (too_long); truncate it to its first --max-length tokens; or split the conversation into records that each end with an assistant turn, ' +
      'holding the system and first user turns plus as much recent history as fits, every turn trained once (noted context_window_cut; a turn that does not fit alone is not written, target_too_long). Needs --max-length.',
  },
  grouping: {
    label: 'grouping',
    flag: '--grouping <grouping>',
    setting: 'grouping',
    kind: 'choice',
    default: GROUPINGS[0],
    choices: GROUPINGS,
    section: 'records',
    help:
      'exact: every assistant turn in exactly the context the server sends it; a template that rewrites history (Qwen3, Kimi-K2-Thinking) then costs one record per turn. ' +
      'merged: one record per conversation (the conversation rendered once), each turn trained where the template writes it there; about 1.0x the tokens. ' +
      'The report and the summary state the amplification (docs/loss-mask-rules.md "Record grouping").',
  },
  minTrainableTokens: {
    label: 'min trainable tokens',
    flag: '--min-trainable-tokens <n>',
    setting: 'minTrainableTokens',
    kind: 'integer',
    default: 1,
    minimum: 1,
    section: 'records',
    help: 'Drop records with fewer trainable tokens (reason too_few_trainable_tokens).',
  },
  minTrainableShare: {
    label: 'min trainable share',
    flag: '--min-trainable-share <f>',
    setting: 'minTrainableShare',
    kind: 'number',
    default: 0,
    minimum: 0,
    maximum: 1,
    section: 'records',
    defaultText: '0, off',
    help:
      'Drop records whose trainable tokens are a smaller share of their tokens than this (reason low_trainable_share): a fraction (0.05) or a percentage (5%). ' +
      'The trainer runs the target model over every token of a record but learns only from the trained ones, so a long document or tool output with a short answer costs much and teaches little.',
  },
  templateKwargs: {
    label: 'template kwargs',
    flag: '--template-kwargs <json>',
    setting: 'templateKwargs',
    kind: 'object',
    default: {},
    section: 'model',
    help: 'Variables for the chat template, as apply_chat_template(**kwargs) gets them, e.g. \'{"enable_thinking": false}\'.',
  },
} as const satisfies { readonly [K in keyof RunSettings]: SettingSpec<K> };

/** The names of {@link RunSettings}, in table order. */
export const RUN_SETTING_KEYS = Object.keys(RUN_SETTINGS) as (keyof RunSettings)[];

/** The row of `key`, typed as a {@link SettingSpec} (the table's own type is narrower, for the setting names). */
export function runSettingSpec<K extends keyof RunSettings>(key: K): SettingSpec<K> {
  return RUN_SETTINGS[key] as SettingSpec<K>;
}

/** The VS Code setting name of each run setting (`mask` → `maskPolicy`), from the table. */
export type RunSettingName<K extends keyof RunSettings> = (typeof RUN_SETTINGS)[K]['setting'];

/** The settings a run uses when none is given. */
export const DEFAULT_RUN_SETTINGS: Readonly<RunSettings> = Object.freeze(
  Object.fromEntries(RUN_SETTING_KEYS.map((k) => [k, RUN_SETTINGS[k].default])) as unknown as RunSettings,
);

/**
 * The run settings as options (`PrepareOptions`, `RowSettings`, the extension's settings): each may
 * be absent (its default); no limit is absent rather than null. A setting of the table that
 * `PrepareOptions` does not declare is a type error here.
 */
export type RunSettingOptions = Partial<Pick<PrepareOptions, keyof RunSettings>>;

/** The run settings as the extension reads them: every one present, but no limit (`maxLength`), which is absent (undefined). */
export type RunSettingValues = { [K in keyof RunSettings as null extends RunSettings[K] ? never : K]: RunSettings[K] } & {
  [K in keyof RunSettings as null extends RunSettings[K] ? K : never]?: Exclude<RunSettings[K], null>;
};

/** Whether the setting's default is null (no limit; 0 means it too). */
export function nullable(key: keyof RunSettings): boolean {
  return RUN_SETTINGS[key].default === null;
}

/**
 * The settings `prepare` runs with for these options: each absent one at its default; a number
 * below its minimum at the minimum; `truncate` (the legacy flag) means `long: truncate`; a
 * nullable setting (`maxLength`) of 0 or null means none.
 */
export function resolveRunSettings(o: RunSettingOptions & { truncate?: boolean }): RunSettings {
  const out: Partial<Record<keyof RunSettings, unknown>> = {};
  for (const key of RUN_SETTING_KEYS) {
    const spec = runSettingSpec(key);
    let v: unknown = o[key];
    if (nullable(key) && !v) v = null;
    else if (v === undefined) v = key === 'long' && o.truncate ? 'truncate' : spec.default;
    else if (typeof v === 'number' && spec.minimum !== undefined) v = Math.max(spec.minimum, v);
    out[key] = v;
  }
  return out as RunSettings;
}

/**
 * The settings a run recorded in its report.json. Reports of older versions lack some fields:
 * they ran with what were then (and still are) the defaults — no `reasoning` is keep, no
 * `grouping` exact, no `long` drop (truncate when their `truncate` was set), no
 * `minTrainableTokens` 1; a setting newer than the report's fields (see {@link reportedSettings}) is
 * absent at its default.
 */
export function runSettingsOfReport(r: Pick<PrepareResult, 'mask' | 'maxLength'> & Partial<PrepareResult>): RunSettings {
  return resolveRunSettings({ ...r, maxLength: r.maxLength ?? undefined });
}

/**
 * The run settings of `values` as `prepare` options: each setting that applies given the others
 * (`long` only with a max length), no limit left out. What the extension passes to a run.
 */
export function runOptionsOf(values: RunSettingOptions & { truncate?: boolean }): RunSettingOptions {
  const resolved = resolveRunSettings(values);
  const out: Record<string, unknown> = {};
  for (const key of RUN_SETTING_KEYS) {
    const spec = runSettingSpec(key);
    if (values[key] !== undefined && (!spec.applies || spec.applies(resolved))) out[key] = values[key];
  }
  return out as RunSettingOptions;
}

/** The run settings `o` gives (those it leaves undefined and every other field left out). */
export function runSettingOptionsOf(o: RunSettingOptions): RunSettingOptions {
  return Object.fromEntries(RUN_SETTING_KEYS.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as RunSettingOptions;
}

/**
 * Why `long` split cannot go with `mask` (undefined when it can): non-system records are never split
 * (records/traceSplit.ts; docs/training-tokens.md), so a too-long one would be dropped while split was asked
 * for. Names both options and the ways out; the CLI refuses it as a usage error, a run as an error.
 */
export function longSplitConflict(o: Pick<RunSettingOptions, 'mask' | 'long'>): string | undefined {
  if (o.long !== 'split' || o.mask !== 'non-system') return undefined;
  return (
    '--long split cannot go with --mask non-system: non-system records are never split, so a record longer than --max-length ' +
    'would be dropped (too_long), not split. Use --long drop (the same, said so) or --long truncate with --mask non-system, ' +
    'or --mask assistant or last-assistant to split'
  );
}

/**
 * Why `o` holds a value a run cannot use (not one of the choices, not a whole number where one is
 * expected, outside the minimum .. maximum; `long` split with `mask` non-system, {@link longSplitConflict}),
 * naming the option; undefined when every value is usable.
 */
export function invalidRunSetting(o: RunSettingOptions): string | undefined {
  for (const key of RUN_SETTING_KEYS) {
    const spec = runSettingSpec(key);
    const v: unknown = o[key];
    if (v === undefined || (nullable(key) && (v === null || v === 0))) continue;
    if (spec.choices && !(spec.choices as readonly unknown[]).includes(v)) return `${key} must be one of ${spec.choices.join(', ')} (got ${String(v)})`;
    if (spec.kind === 'integer' && !Number.isInteger(v)) return `${key} must be ${wholeNumberText(spec)} (got ${String(v)})`;
    if (spec.kind === 'number' && (typeof v !== 'number' || !Number.isFinite(v))) return `${key} must be a number (got ${String(v)})`;
    if (typeof v === 'number' && ((spec.minimum !== undefined && v < spec.minimum) || (spec.maximum !== undefined && v > spec.maximum)))
      return `${key} must be ${spec.kind === 'integer' ? wholeNumberText(spec) : `a number ${rangeText(spec)}`} (got ${v})`;
  }
  return longSplitConflict(o);
}

/** `a positive integer` (minimum 1), else `an integer ≥ n` / `an integer from n to m`. */
export function wholeNumberText(spec: Pick<SettingSpec<keyof RunSettings>, 'minimum' | 'maximum'>): string {
  if (spec.minimum === 1 && spec.maximum === undefined) return 'a positive integer';
  return `an integer ${rangeText(spec)}`;
}

/** `from 0 to 1`, `≥ 0`, `≤ 5`, or `` for no bounds. */
export function rangeText(spec: Pick<SettingSpec<keyof RunSettings>, 'minimum' | 'maximum'>): string {
  if (spec.minimum !== undefined && spec.maximum !== undefined) return `from ${spec.minimum} to ${spec.maximum}`;
  if (spec.minimum !== undefined) return `≥ ${spec.minimum}`;
  return spec.maximum !== undefined ? `≤ ${spec.maximum}` : '';
}

/**
 * The settings report.json has carried since before this table (written always, in their own
 * order, by run/runResult.ts and read back by {@link runSettingsOfReport}).
 */
const REPORT_FIELDS: readonly (keyof RunSettings)[] = ['templateKwargs', 'mask', 'reasoning', 'maxLength', 'long', 'grouping', 'minTrainableTokens'];

/**
 * The settings report.json records beyond its fields of old ({@link REPORT_FIELDS}): each newer
 * setting when it is not at its default (absent = default, so a default run's report stays byte
 * for byte what it was, and older reports read back right). The report, report.md and the shard
 * merge's settings check take them from here.
 */
export function reportedSettings(s: RunSettings): Partial<RunSettings> {
  const out: Partial<Record<keyof RunSettings, unknown>> = {};
  for (const key of RUN_SETTING_KEYS) {
    if (REPORT_FIELDS.includes(key)) continue;
    if (canonical(s[key]) !== canonical(RUN_SETTINGS[key].default)) out[key] = s[key];
  }
  return out as Partial<RunSettings>;
}

/** One setting that differs between a run and now. */
export interface SettingDifference {
  key: keyof RunSettings;
  label: string;
  /** The value of the run and the current one, as shown to the user. */
  run: string;
  now: string;
}

/** A value as shown in a message: `none` for no limit, JSON for kwargs. */
export function shown(v: unknown): string {
  if (v === null) return 'none';
  if (typeof v === 'object') return canonical(v);
  return String(v);
}

/**
 * The settings whose values differ between `run` (what an output was made with) and `now` (what
 * a run would use now), in table order; empty when the output is current. A setting that does
 * not apply to both (`long` without a max length) is not compared.
 */
export function differingSettings(run: RunSettings, now: RunSettings): SettingDifference[] {
  const out: SettingDifference[] = [];
  for (const key of RUN_SETTING_KEYS) {
    const spec = runSettingSpec(key);
    if (spec.applies && !spec.applies(run) && !spec.applies(now)) continue;
    if (canonical(run[key]) === canonical(now[key])) continue;
    out.push({ key, label: spec.label, run: shown(run[key]), now: shown(now[key]) });
  }
  return out;
}

/** One stale reason per difference: `settings changed: mask policy (run: all, now: assistant)`. */
export function describeDifferences(diffs: readonly SettingDifference[]): string[] {
  return diffs.map((d) => `settings changed: ${d.label} (run: ${d.run}, now: ${d.now})`);
}
