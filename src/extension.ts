/**
 * VS Code entry point: wiring only. The command logic lives in src/vscode/*,
 * the pipeline in src/core/* (run in dist/worker.js).
 */
import * as vscode from 'vscode';
import { OUTPUT_CHANNEL_NAME, registerPrepareCommand } from './vscode/prepareCommand';
import { registerTokenizerSelection } from './vscode/tokenizerSelection';
import { registerRecordHover } from './vscode/hover';
import { registerMaskView } from './vscode/maskView';

/** Called by VS Code on the first activation event; registers the commands, the output channel and the status bar item. */
export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel(OUTPUT_CHANNEL_NAME);
  context.subscriptions.push(output, registerPrepareCommand(context, output), ...registerTokenizerSelection());
  context.subscriptions.push(registerRecordHover(), registerMaskView(context));
}

/** Nothing to release beyond `context.subscriptions` (running workers end with their runs). */
export function deactivate(): void {}
