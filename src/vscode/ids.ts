/**
 * Every identifier the extension shares with package.json and with VS Code: command ids, the view,
 * the webview panel type, the output channel, the secret key, the Datasets view's context values.
 * One list, imported by each feature; test/unit/vscode-manifest.test.ts checks it against
 * package.json `contributes` (commands, menus, views), so neither side can drift.
 *
 * Pure: no `vscode` import (unit-tested in plain node).
 */

/** Configuration section of every setting (`eagle3prep.*`). */
export const CONFIG_SECTION = 'eagle3prep';

/** Command ids, as package.json `contributes.commands` declares them. */
export const COMMANDS = {
  /** "Prepare for EAGLE-3" on files or folders (explorer, editor, Datasets view). */
  prepare: 'eagle3prep.prepare',
  /** The tokenizer quick pick. */
  selectTokenizer: 'eagle3prep.selectTokenizer',
  /** "Generate answers with the target model…". */
  generate: 'eagle3prep.generate',
  /** Stores the generation servers' API key in SecretStorage. */
  setGenerateApiKey: 'eagle3prep.setGenerateApiKey',
  /** Prepare every missing / stale dataset of the workspace. */
  prepareAll: 'eagle3prep.prepareAll',
  /** Check the chat template against the mask rules. */
  checkTemplate: 'eagle3prep.checkTemplate',
  /** Scan a dataset's rows into the Problems panel. */
  checkRows: 'eagle3prep.checkRows',
  /** Datasets view: discover the files again. */
  datasetsRefresh: 'eagle3prep.datasets.refresh',
  /** Datasets view: open a dataset's first row in the mask view. */
  datasetsOpenMaskView: 'eagle3prep.datasets.openMaskView',
  /** Datasets view: open a dataset's report.md. */
  datasetsOpenReport: 'eagle3prep.datasets.openReport',
  /** Datasets view: reveal a dataset's output folder. */
  datasetsRevealOutput: 'eagle3prep.datasets.revealOutput',
  /** Datasets view state as data (tests and scripts; hidden from the palette). */
  datasetsState: 'eagle3prep.datasets.state',
  /** Quick fix: add a role alias or field mapping to eagle3prep.jsonc. */
  addToProjectConfig: 'eagle3prep.addToProjectConfig',
  /** The mask view: `(uri, 1-based line)`. */
  openMaskView: 'eagle3prep.openMaskView',
  /** The mask view at the cursor's line (large files: the status bar item, the palette). */
  openMaskViewAtLine: 'eagle3prep.openMaskViewAtLine',
  /** The mask view: reveal a token `(record, token index)` (hidden; the hover's links). */
  maskViewRevealToken: 'eagle3prep.maskView.revealToken',
  /** The mask view: show a record `(index)` (hidden). */
  maskViewShowRecord: 'eagle3prep.maskView.showRecord',
  /** The dashboard of one dataset `(uri)`. */
  openDashboard: 'eagle3prep.openDashboard',
  /** The dashboard of every dataset of the workspace. */
  openWorkspaceDashboard: 'eagle3prep.openWorkspaceDashboard',
  /** Prepare the first rows of a dataset (a sample run). */
  prepareSample: 'eagle3prep.prepareSample',
  /** Datasets view: read a dataset's state again `(uri)` (hidden; after a run). */
  datasetsInvalidate: 'eagle3prep.datasets.invalidate',
  /** Refill Problems from the last run's problems.jsonl for `(uris[])` (hidden; after a run). */
  problemsFromReport: 'eagle3prep.problemsFromReport',
  /** The extension's notification history. */
  notifications: 'eagle3prep.notifications',
} as const;

/** One of the extension's command ids. */
export type CommandId = (typeof COMMANDS)[keyof typeof COMMANDS];

/** Id of the activity bar container (package.json `contributes.viewsContainers.activitybar`). */
export const VIEW_CONTAINER = 'eagle3prep';

/** Id of the Datasets view (package.json `contributes.views`). */
export const DATASETS_VIEW = 'eagle3prep.datasets';

/** viewType of the mask view's webview panel. */
export const MASK_VIEW_TYPE = 'eagle3prep.maskView';

/** viewType of the dashboard's webview panel. */
export const DASHBOARD_VIEW_TYPE = 'eagle3prep.dashboard';

/** viewType of the "Check chat template" webview panel. */
export const TEMPLATE_CHECK_VIEW_TYPE = 'eagle3prep.templateCheck';

/** Id of the status bar item offering the mask view in a file too large for the hover. */
export const LARGE_FILE_STATUS_ITEM = 'eagle3prep.largeFile';

/** Id of the status bar item naming the active tokenizer. */
export const TOKENIZER_STATUS_ITEM = 'eagle3prep.tokenizer';

/** Name of the output channel every run logs to. */
export const OUTPUT_CHANNEL_NAME = 'EAGLE-3 Prep';

/** SecretStorage key of the generation servers' API key. */
export const API_KEY_SECRET = 'eagle3prep.generate.apiKey';

/** Name of the diagnostic collection of the Problems panel. */
export const DIAGNOSTICS_COLLECTION = 'eagle3-prep';

/** The output state of a dataset as its tree item's context value spells it. */
/** `failed`: no output, and the last run of the file in this session failed (runFailures.ts). */
export type DatasetItemState = 'none' | 'failed' | 'prepared' | 'stale' | 'error' | 'pending';

/**
 * Context value of a dataset's tree item, which package.json menus match with `viewItem =~ …`:
 * `eagle3prep.dataset.<state>`, plus `.lines` when the file is plain JSON Lines (the mask view reads
 * those line by line).
 */
export function datasetContextValue(state: DatasetItemState, plainJsonLines: boolean): string {
  return `eagle3prep.dataset.${state}${plainJsonLines ? '.lines' : ''}`;
}

/** Context values of the Datasets view's child rows (package.json menus match the output files'). */
export const DETAIL_CONTEXT = {
  /** Any detail row (stale reason, error, …). */
  detail: 'eagle3prep.detail',
  /** A drop or error reason count. */
  reason: 'eagle3prep.detail.reason',
  /** An output file. */
  outputFile: 'eagle3prep.outputFile',
  /** The prompts_to_generate.jsonl output file (it carries the Generate action). */
  promptsFile: 'eagle3prep.outputFile.prompts',
} as const;

/** Context value of a folder row of the Datasets view (it carries "Prepare for EAGLE-3": a folder run). */
export const FOLDER_CONTEXT = 'eagle3prep.folder';

/**
 * Context key set to true once the Datasets view has looked for the workspace's dataset files: until then its
 * welcome says it is looking (package.json `viewsWelcome`), never that no dataset was found.
 */
export const DATASETS_DISCOVERED_CONTEXT = 'eagle3prep.datasetsDiscovered';
