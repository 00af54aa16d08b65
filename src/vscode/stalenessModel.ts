/**
 * The one comparison the editor makes to say whether a dataset's output is current: the Datasets
 * view, Problems, the dashboard, the hover and mask view's exact counts and the batch pick all read
 * a file's output state with the file's own settings (its workspace folder may set another
 * tokenizer or output folder): the output folder `outDirFor` names, the tokenizer files' hash, and
 * every record-deciding setting of `core/run/runSettings.ts`. What makes an output stale is decided
 * by `core/run/datasetScan.ts` `readOutputState`.
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/stalenessModel.test.ts).
 */
import { readOutputState, tokenizerFilesHash, type OutputState, type OutputStateOptions } from '../core/run/editor/datasetScan';
import { resolveRunSettings } from '../core/run/runSettings';
import type { PrepareSettings } from './config';
import { outDirFor } from './paths';

/**
 * The options of `readOutputState` / `scanDataset` for `file` with its settings (config.ts
 * `readPrepareSettings(file)`). A tokenizer folder whose files cannot be read is not compared.
 */
export function outputStateOptions(file: string, settings: PrepareSettings): Required<Pick<OutputStateOptions, 'outDir' | 'settings'>> & OutputStateOptions {
  let tokenizerHash: string | undefined;
  try {
    tokenizerHash = tokenizerFilesHash(settings.tokenizerDir);
  } catch {
    tokenizerHash = undefined;
  }
  return { outDir: outDirFor([file], settings.outputDirectory), tokenizerHash, settings: resolveRunSettings(settings) };
}

/** The output state of `file` as the editor shows it (see the module comment). Never throws. */
export function editorOutputState(file: string, settings: PrepareSettings): OutputState {
  return readOutputState(file, outputStateOptions(file, settings));
}
