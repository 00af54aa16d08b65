/**
 * The one place the extension reads and writes its settings. Every feature asks here for typed,
 * validated values (defaults, allowed values and validation live in settings.ts, which a unit test
 * checks against package.json); nothing else calls `workspace.getConfiguration`.
 */
import * as vscode from 'vscode';
import { serversFromSettings } from '../core/generate/trust';
import { CONFIG_SECTION } from './ids';
import { expandPath } from './paths';
import {
  datasetDiscoveryFrom,
  diagnosticsSettingsFrom,
  generateSettingsFrom,
  hoverCapFrom,
  modelFoldersFrom,
  prepareSettingsFrom,
  RESOURCE_SCOPED_SETTINGS,
  RESTRICTED_RECORD_SETTINGS,
  restrictedModeNote,
  SETTING_DEFAULTS,
  type DatasetDiscoverySettings,
  type DiagnosticsSettingValues,
  type ExplicitSettings,
  type GenerateSettingValues,
  type OpenReportMode,
  type SettingGroup,
  type SettingKey,
  type SettingsSource,
  type SettingWarning,
} from './settings';
import type { OutputFormat } from '../core/records/rowResult';
import type { RunSettingValues } from '../core/run/runSettings';
import type { TrainerId } from '../core/trainers/trainers';

/**
 * The two configuration objects a read needs: `resource` for the resource-scoped settings (read for
 * `scope`; with no scope, for `null` = "any resource": the workspace's value), `window` for the
 * others (read without a resource). VS Code logs a warning for each `get` of a window-scoped
 * setting with a resource and of a resource-scoped one without a resource or `null` (its extension
 * host's configuration access check); 10,443 of them in 50 minutes of use before this (issue 24),
 * and the host suite checks the log stays free of them.
 */
function configurationsOf(scope?: vscode.Uri): { resource: vscode.WorkspaceConfiguration; window: vscode.WorkspaceConfiguration } {
  return { resource: vscode.workspace.getConfiguration(CONFIG_SECTION, scope ?? null), window: vscode.workspace.getConfiguration(CONFIG_SECTION) };
}

/** The configuration object `key` is read from (settings.ts RESOURCE_SCOPED_SETTINGS, pinned against package.json by a unit test). */
function configFor(key: SettingKey, c: ReturnType<typeof configurationsOf>): vscode.WorkspaceConfiguration {
  return RESOURCE_SCOPED_SETTINGS.includes(key) ? c.resource : c.window;
}

/** The raw settings of `scope` (a resource, for folder-specific values), each falling back to its default. */
function settingsOf(scope?: vscode.Uri): SettingsSource {
  const c = configurationsOf(scope);
  return (key) => configFor(key, c).get<unknown>(key, SETTING_DEFAULTS[key]);
}

/** The values the settings files of `scope` give (folder, else workspace, else user); undefined where only the default applies. */
function explicitOf(scope?: vscode.Uri): ExplicitSettings {
  const c = configurationsOf(scope);
  return (key) => {
    const i = configFor(key, c).inspect<unknown>(key);
    return i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
  };
}

/**
 * Expands `~`, `${userHome}` and `${workspaceFolder}` in a configured path and resolves a relative
 * path against `workspaceFolder` (default: the first workspace folder; the home folder when none is
 * open). Returns undefined for an empty / whitespace-only value.
 */
export function expandConfiguredPath(value: string | undefined, workspaceFolder?: vscode.WorkspaceFolder): string | undefined {
  const wf = workspaceFolder ?? vscode.workspace.workspaceFolders?.[0];
  return expandPath(value, { workspaceFolder: wf?.uri.fsPath });
}

/** The workspace folder of `scope`, when there is one. */
function folderOf(scope?: vscode.Uri): vscode.WorkspaceFolder | undefined {
  return scope ? vscode.workspace.getWorkspaceFolder(scope) : undefined;
}

/**
 * The tokenizer folder `prepare` should use, from `eagle3prep.tokenizerPath` (expanded with
 * `expandConfiguredPath`); undefined = the embedded default (Qwen3).
 * @param scope resource the settings are read for (a dataset Uri, for folder-specific settings).
 */
export function resolveTokenizerDir(scope?: vscode.Uri): string | undefined {
  return expandConfiguredPath(prepareSettingsFrom(settingsOf(scope)).tokenizerPath, folderOf(scope));
}

/**
 * The extension's settings that shape a run, read for one dataset resource: the run settings (`mask`,
 * `maxLength` (undefined = no limit), `long`, …, core/run/runSettings.ts) and these.
 */
export interface PrepareSettings extends RunSettingValues {
  tokenizerDir?: string;
  truncate: boolean;
  /** Folder in which `<input-name>.eagle3/` is created instead of beside the input; undefined = beside it. */
  outputDirectory?: string;
  openReport: OpenReportMode;
  /** The record files (`eagle3prep.outputFormat`, `PrepareOptions.format`). */
  format: OutputFormat;
  /** `eagle3prep.trainer` (CLI `--trainer`); undefined = none. `maxLength` and `long` already carry its defaults. */
  trainer?: TrainerId;
}

/**
 * Reads the `eagle3prep.*` settings for `scope` (a dataset Uri). Invalid values fall back to the
 * defaults (mask `assistant`, no max length, no template kwargs) and are reported through `warn`.
 */
export function readPrepareSettings(scope?: vscode.Uri, warn: SettingWarning = () => {}): PrepareSettings {
  const s = prepareSettingsFrom(settingsOf(scope), warn, explicitOf(scope));
  const wf = folderOf(scope);
  const { tokenizerPath, outputDirectory: _o, ...rest } = s;
  return {
    ...rest,
    tokenizerDir: expandConfiguredPath(tokenizerPath, wf),
    outputDirectory: expandConfiguredPath(s.outputDirectory, wf),
  };
}

/**
 * The generation settings for a dataset resource, and its servers per the trust rule: in an
 * untrusted workspace only the user's own `eagle3prep.generate.servers` count (`ignored` lists what
 * the workspace named).
 */
export function readGenerateSettings(scope: vscode.Uri): { settings: GenerateSettingValues; servers: string[]; ignored: string[] } {
  // generate.servers is window-scoped (the trust rule): read without the resource.
  const c = vscode.workspace.getConfiguration(CONFIG_SECTION);
  const { servers, ignoredWorkspaceServers } = serversFromSettings(c.inspect('generate.servers') ?? {}, vscode.workspace.isTrusted);
  return { settings: generateSettingsFrom(settingsOf(scope)), servers, ignored: ignoredWorkspaceServers };
}

/** Which files the Datasets view and "Prepare all" consider (`eagle3prep.datasets.*`, window-wide). */
export function readDatasetDiscovery(): DatasetDiscoverySettings {
  return datasetDiscoveryFrom(settingsOf());
}

/** The Problems panel settings for a dataset (`eagle3prep.diagnostics.*`). */
export function readDiagnosticsSettings(scope: vscode.Uri): DiagnosticsSettingValues {
  return diagnosticsSettingsFrom(settingsOf(scope));
}

/** The hover's work cap for a dataset (`eagle3prep.hover.maxTokenizedCharacters`). */
export function readHoverCap(scope: vscode.Uri): number {
  return hoverCapFrom(settingsOf(scope));
}

/** The entries of `eagle3prep.modelFolders`, as written (not expanded). */
export function readModelFolders(): string[] {
  return modelFoldersFrom(settingsOf());
}

/**
 * Writes `eagle3prep.tokenizerPath` (`''` = embedded default) where it takes effect: the workspace
 * folder or workspace settings when they already set it, else the user settings.
 */
export async function writeTokenizerPath(dir: string): Promise<void> {
  const config = vscode.workspace.getConfiguration(CONFIG_SECTION);
  const inspected = config.inspect<string>('tokenizerPath');
  const target =
    inspected?.workspaceFolderValue !== undefined
      ? vscode.ConfigurationTarget.WorkspaceFolder
      : inspected?.workspaceValue !== undefined
        ? vscode.ConfigurationTarget.Workspace
        : vscode.ConfigurationTarget.Global;
  await config.update('tokenizerPath' satisfies SettingKey, dir, target);
}

/** The settings among `keys` that a configuration change touches for `scope` (a resource, for folder-specific values). */
export function changedSettings(e: vscode.ConfigurationChangeEvent, keys: readonly SettingKey[], scope?: vscode.Uri): SettingKey[] {
  return keys.filter((k) => e.affectsConfiguration(`${CONFIG_SECTION}.${k}`, scope));
}

/** Whether a configuration change touches one of `keys` (a setting, or a group such as `datasets`). */
export function affectsSettings(e: vscode.ConfigurationChangeEvent, ...keys: (SettingKey | SettingGroup)[]): boolean {
  return keys.some((k) => e.affectsConfiguration(`${CONFIG_SECTION}.${k}`));
}

/**
 * What Restricted Mode ignores of the workspace's record-deciding settings (settings.ts `restrictedModeNote`), for
 * `scope`'s folder; undefined in a trusted workspace or when the workspace sets none of them.
 */
export function readRestrictedModeNote(scope?: vscode.Uri): string | undefined {
  if (vscode.workspace.isTrusted) return undefined;
  const c = configurationsOf(scope);
  return restrictedModeNote(Object.fromEntries(RESTRICTED_RECORD_SETTINGS.map((k) => [k, configFor(k, c).inspect(k)])), false);
}
