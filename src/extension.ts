/**
 * VS Code entry point: wiring only, one registration per line. The features live in
 * src/vscode/* (one file each), the pipeline in src/core/* (run in dist/worker.js).
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { TOKENIZER_CACHE_ENV } from './core/tokenizers/cacheDir';
import { registerBatchCommand } from './vscode/batchCommand';
import { registerCheckTemplateCommand } from './vscode/checkTemplateCommand';
import { registerDashboard } from './vscode/dashboard';
import { registerDatasetsTree } from './vscode/datasetsView';
import { registerDiagnostics } from './vscode/diagnostics';
import { OUTPUT_CHANNEL_NAME } from './vscode/ids';
import { registerPrepareCommand } from './vscode/prepareCommand';
import { registerTokenizerSelection } from './vscode/tokenizerSelection';
import { registerGenerateCommand } from './vscode/generateCommand';
import { registerRecordHover } from './vscode/hover';
import { registerLargeFiles } from './vscode/largeFiles';
import { registerMaskView } from './vscode/maskView';
import { registerNotifications } from './vscode/notify';
import { initServiceClient } from './vscode/serviceClient';

/** What `activate` returns (`vscode.extensions.getExtension(…).exports`): where the extension host logs for this extension (the host suite reads the log beside it). */
export interface Eagle3PrepExports {
  /** `context.logUri`: `<logs>/<session>/exthost<n>/<extension id>`; the extension host's own log (`exthost.log`, `remoteexthost.log` on a server) is in its parent folder. */
  logUri: vscode.Uri;
}

/** Called by VS Code on the first activation event; registers every feature once (their disposables go to `context.subscriptions`). */
export function activate(context: vscode.ExtensionContext): Eagle3PrepExports {
  // The tokenizer cache (core/tokenizers/cacheDir.ts) in the extension's global storage, for every thread started from here.
  process.env[TOKENIZER_CACHE_ENV] ||= join(context.globalStorageUri.fsPath, 'tokenizer-cache');
  const output = vscode.window.createOutputChannel(OUTPUT_CHANNEL_NAME);
  context.subscriptions.push(output, initServiceClient(context.extensionUri), registerNotifications());
  context.subscriptions.push(registerPrepareCommand(context, output));
  context.subscriptions.push(...registerTokenizerSelection());
  context.subscriptions.push(...registerDatasetsTree());
  context.subscriptions.push(...registerDiagnostics());
  context.subscriptions.push(registerBatchCommand(context, output));
  context.subscriptions.push(registerCheckTemplateCommand(context, output));
  context.subscriptions.push(registerGenerateCommand(context, output));
  context.subscriptions.push(registerRecordHover(), registerMaskView(context), registerDashboard(context), ...registerLargeFiles());
  return { logUri: context.logUri };
}

/** Nothing to release beyond `context.subscriptions` (running workers end with their runs). */
export function deactivate(): void {}
