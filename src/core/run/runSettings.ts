/**
 * The settings of a `prepare` run that decide its records, in one table: each setting's label,
 * choices, default and minimum. The CLI, the extension's settings, the report (what a run
 * recorded, with the defaults of older reports) and every staleness check (the Datasets view,
 * the dashboard, the hover and the mask view) resolve and compare settings here, so a setting
 * added to {@link RUN_SETTINGS} is compared everywhere.
 *
 * A trainer (`--trainer`, `eagle3prep.trainer`) is not a row: it decides only the defaults of
 * `maxLength` and `long` (core/trainers/trainers.ts `withTrainerDefaults`, applied before these
 * settings are resolved), and those are compared; the records do not depend on it otherwise.
 *
 * Pure and without side effects; imports types and choice lists only.
 */
import { GROUPINGS, type Grouping } from '../records/mask';
import { MASK_POLICIES, REASONING_POLICIES, type MaskPolicy, type ReasoningPolicy } from '../types';
import { type PrepareOptions, type PrepareResult } from './contract';
import { LONG_POLICIES, type LongPolicy } from '../records/rowResult';
import { canonical } from '../formats/appliedConfig';

/** The record-deciding settings of a run, resolved (no field left to a default). */
export interface RunSettings {
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
  /** A record with fewer trainable tokens is not written (at least 1). */
  minTrainableTokens: number;
  /** Extra variables for the chat template (compared by value). */
  templateKwargs: Record<string, unknown>;
}

/** How one setting is described, defaulted and compared. */
interface SettingSpec<K extends keyof RunSettings> {
  /** Its name in messages ("settings changed: mask policy …"). */
  label: string;
  /** The CLI flag that sets it. */
  flag: string;
  default: RunSettings[K];
  /** The allowed values, the default first; absent for free values. */
  choices?: readonly RunSettings[K][];
  /** The smallest allowed number. */
  minimum?: number;
  /** Whether a difference matters given the rest of the run's settings (default: always). */
  applies?: (s: RunSettings) => boolean;
}

/** Every record-deciding setting: one row each. */
export const RUN_SETTINGS: { readonly [K in keyof RunSettings]: SettingSpec<K> } = {
  mask: { label: 'mask policy', flag: '--mask', default: MASK_POLICIES[0], choices: MASK_POLICIES },
  reasoning: { label: 'reasoning', flag: '--reasoning', default: REASONING_POLICIES[0], choices: REASONING_POLICIES },
  maxLength: { label: 'max length', flag: '--max-length', default: null, minimum: 1 },
  long: { label: 'long records', flag: '--long', default: LONG_POLICIES[0], choices: LONG_POLICIES, applies: (s) => s.maxLength !== null },
  grouping: { label: 'grouping', flag: '--grouping', default: GROUPINGS[0], choices: GROUPINGS },
  minTrainableTokens: { label: 'min trainable tokens', flag: '--min-trainable-tokens', default: 1, minimum: 1 },
  templateKwargs: { label: 'template kwargs', flag: '--template-kwargs', default: {} },
};

/** The names of {@link RunSettings}, in table order. */
export const RUN_SETTING_KEYS = Object.keys(RUN_SETTINGS) as (keyof RunSettings)[];

/** The settings a run uses when none is given. */
export const DEFAULT_RUN_SETTINGS: Readonly<RunSettings> = Object.freeze(
  Object.fromEntries(RUN_SETTING_KEYS.map((k) => [k, RUN_SETTINGS[k].default])) as unknown as RunSettings,
);

/**
 * The settings `prepare` runs with for these options: each absent one at its default; `truncate`
 * (the legacy flag) means `long: truncate`; a `maxLength` of 0 means no limit.
 */
export function resolveRunSettings(
  o: Partial<Pick<PrepareOptions, 'mask' | 'reasoning' | 'maxLength' | 'truncate' | 'long' | 'grouping' | 'minTrainableTokens' | 'templateKwargs'>>,
): RunSettings {
  const d = DEFAULT_RUN_SETTINGS;
  return {
    mask: o.mask ?? d.mask,
    reasoning: o.reasoning ?? d.reasoning,
    maxLength: o.maxLength ? o.maxLength : null,
    long: o.long ?? (o.truncate ? 'truncate' : d.long),
    grouping: o.grouping ?? d.grouping,
    minTrainableTokens: Math.max(1, o.minTrainableTokens ?? d.minTrainableTokens),
    templateKwargs: o.templateKwargs ?? d.templateKwargs,
  };
}

/**
 * The settings a run recorded in its report.json. Reports of older versions lack some fields:
 * they ran with what were then (and still are) the defaults — no `reasoning` is keep, no
 * `grouping` exact, no `long` drop (truncate when their `truncate` was set), no
 * `minTrainableTokens` 1.
 */
export function runSettingsOfReport(
  r: Pick<PrepareResult, 'mask' | 'maxLength'> &
    Partial<Pick<PrepareResult, 'reasoning' | 'truncate' | 'long' | 'grouping' | 'minTrainableTokens' | 'templateKwargs'>>,
): RunSettings {
  return resolveRunSettings({ ...r, maxLength: r.maxLength ?? undefined });
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
function shown(v: unknown): string {
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
    const spec = RUN_SETTINGS[key] as SettingSpec<typeof key>;
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
