/**
 * "Check chat template" (`eagle3prep.checkTemplate`): runs `eagle3-prep check-template --json` for
 * the active tokenizer and template kwargs in a child process (`dist/cli.js`, so loading the
 * tokenizer never blocks the extension host), then shows the findings — prefix stability, the
 * end-of-turn token trained and what follows it, a default system prompt, the generation prompt's
 * scaffold, warnings, and the probe renders with their trainable spans — in a read-only text
 * document, with a notification summarizing them. The rules checked are docs/loss-mask-rules.md;
 * the check itself is `src/core/templates/checkTemplate.ts`.
 */
import { fork } from 'node:child_process';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { formatTemplateCheck, type TemplateCheck } from '../core/templates/checkTemplate';
import { parseCheckTemplateJson } from '../core/templates/checkTemplateJson';
import { readPrepareSettings } from './config';
import { COMMANDS } from './ids';
import { tokenizerDisplayName } from './tokenizerSelection';

/**
 * Runs `dist/cli.js check-template --json` and resolves with its {@link TemplateCheck} (the snake_case
 * document read back by `parseCheckTemplateJson`).
 * @param cliPath path of the bundled CLI.
 * @throws Error with the CLI's stderr when it exits non-zero or prints no JSON; vscode.CancellationError when cancelled (the child is killed).
 */
export function runCheckTemplate(
  cliPath: string,
  tokenizerDir: string | undefined,
  templateKwargs: Record<string, unknown>,
  token?: vscode.CancellationToken,
): Promise<TemplateCheck> {
  const args = ['check-template', '--json', '--template-kwargs', JSON.stringify(templateKwargs)];
  if (tokenizerDir) args.push('--tokenizer', tokenizerDir);
  return new Promise((resolve, reject) => {
    const child = fork(cliPath, args, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const sub = token?.onCancellationRequested(() => child.kill());
    child.on('error', (e) => {
      sub?.dispose();
      reject(new Error(`could not run ${cliPath}: ${e.message}`));
    });
    child.on('close', (code) => {
      sub?.dispose();
      if (token?.isCancellationRequested) return reject(new vscode.CancellationError());
      if (code !== 0) return reject(new Error(err.trim() || `check-template exited with code ${code}`));
      try {
        resolve(parseCheckTemplateJson(out));
      } catch (e) {
        reject(new Error(`check-template printed no JSON: ${(e as Error).message}; ${err.trim()}`));
      }
    });
  });
}

/** One-line summary of a check, e.g. `prefix-stable, trains <|im_end|>, no default system prompt, 0 warnings`. */
export function summarizeCheck(c: TemplateCheck): string {
  return [
    c.prefixStable ? 'prefix-stable' : 'rewrites history (records split)',
    c.endOfTurnTrained.length ? `trains ${c.endOfTurnTrained.join(', ')}` : 'no end-of-turn token trained',
    c.defaultSystemPrompt ? 'injects a default system prompt' : 'no default system prompt',
    c.generationPromptScaffold ? `generation prompt pre-fills ${JSON.stringify(c.generationPromptScaffold)}` : undefined,
    `${c.warnings.length} warning${c.warnings.length === 1 ? '' : 's'}`,
  ]
    .filter(Boolean)
    .join(', ');
}

/**
 * The command: checks the tokenizer and template kwargs of the settings (for `arg`'s folder when a
 * dataset Uri is given), shows the findings in a text document and a notification, logs them.
 * @returns the TemplateCheck, or undefined when it failed or was cancelled (the error is shown).
 */
export async function checkTemplateCommand(context: vscode.ExtensionContext, output: vscode.OutputChannel, arg?: unknown): Promise<TemplateCheck | undefined> {
  const scope = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  const settings = readPrepareSettings(scope);
  const name = tokenizerDisplayName(settings.tokenizerDir);
  const cli = path.join(context.extensionPath, 'dist', 'cli.js');
  let check: TemplateCheck;
  try {
    check = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `EAGLE-3 Prep: checking the chat template of ${name}…`, cancellable: true },
      (_p, token) => runCheckTemplate(cli, settings.tokenizerDir, settings.templateKwargs, token),
    );
  } catch (e) {
    if (e instanceof vscode.CancellationError) return undefined;
    const msg = (e as Error).message;
    output.appendLine(`Check chat template (${name}) failed: ${msg}`);
    void vscode.window.showErrorMessage(`Check chat template (${name}): ${msg.split('\n')[0]}`);
    return undefined;
  }
  const text = formatTemplateCheck(check, { color: false });
  output.appendLine('');
  output.appendLine(`[${new Date().toISOString()}] Check chat template: ${summarizeCheck(check)}`);
  const doc = await vscode.workspace.openTextDocument({ content: text, language: 'plaintext' });
  await vscode.window.showTextDocument(doc, { preview: true });
  const msg = `Chat template of ${check.tokenizer.name}: ${summarizeCheck(check)}.`;
  void (check.warnings.length || !check.prefixStable ? vscode.window.showWarningMessage(msg) : vscode.window.showInformationMessage(msg));
  return check;
}

/** Registers `eagle3prep.checkTemplate`. */
export function registerCheckTemplateCommand(context: vscode.ExtensionContext, output: vscode.OutputChannel): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.checkTemplate, (arg?: unknown) => checkTemplateCommand(context, output, arg));
}
