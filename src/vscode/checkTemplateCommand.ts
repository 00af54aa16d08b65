/**
 * "Check chat template" (`eagle3prep.checkTemplate`): runs `check-template` for the active
 * tokenizer and template kwargs in the template service worker (`serviceClient.ts`, so loading
 * the tokenizer never blocks the extension host and a hostile template is stopped at its budget),
 * then shows a webview: the probe decisions — prefix stability and where it breaks, the end-of-turn
 * token trained and what follows it, a default system prompt, the generation prompt and its
 * scaffold, warnings, and any further decisions the check reports — and each probe's records with
 * their trainable text coloured like the mask view. The rules checked are docs/loss-mask-rules.md;
 * the check itself is `src/core/records/checkTemplate.ts`.
 */
import * as vscode from 'vscode';
import type { TemplateCheck } from '../core/records/checkTemplateTypes';
import { recordSegments } from '../core/records/checkTemplateFormat';
import { affectsSettings, readPrepareSettings } from './config';
import { COMMANDS, CONFIG_SECTION, TEMPLATE_CHECK_VIEW_TYPE } from './ids';
import { notify } from './notify';
import { ServiceBudgetError, serviceClient } from './serviceClient';
import { isTemplateCheckWebviewMessage, type TemplateCheckHostMessage, type TemplateCheckModel } from '../shared/templateCheckProtocol';
import { tokenizerDisplayName } from './tokenizerFolders';
import { webviewHtml, webviewOptions } from './webviewHtml';

/** Time budget of one check in the worker, ms. */
export const CHECK_TEMPLATE_BUDGET_MS = 60_000;

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

/** The page's model of a check: the findings and each probe's records cut into coloured segments. */
export function templateCheckModel(check: TemplateCheck, scope: string): TemplateCheckModel {
  const { records, ...rest } = check;
  return {
    check: rest,
    scope,
    probes: records.map((p) => ({
      probe: p.probe,
      title: p.title,
      template: p.template,
      error: p.error,
      prefixStable: p.prefixStable,
      records: p.records.map((r) => ({ targets: r.targets, segments: recordSegments(r.text, r.spans, check.specialTokensSeen) })),
    })),
  };
}

/** What the command resolves with: the check, and what the page drew (undefined when it did not answer within 15 s). */
export type CheckTemplateResult = TemplateCheck & { drawn?: { probes: number; trainedSegments: number; decisions: string[] } };

let panel: vscode.WebviewPanel | undefined;
/** The scope of the last check (a dataset's folder settings), for the re-check after a settings change. */
let lastScope: vscode.Uri | undefined;
let ready: Promise<void> | undefined;
/** Checks started; a check whose number is no longer the last one was superseded (a newer tokenizer or kwargs) and is not drawn. */
let checksStarted = 0;
let drawnWaiter: ((d: CheckTemplateResult['drawn']) => void) | undefined;

function ensurePanel(context: vscode.ExtensionContext, output: vscode.OutputChannel): vscode.WebviewPanel {
  if (panel) {
    panel.reveal(undefined, true);
    return panel;
  }
  const p = vscode.window.createWebviewPanel(
    TEMPLATE_CHECK_VIEW_TYPE,
    'Chat template check',
    { viewColumn: vscode.ViewColumn.Active },
    webviewOptions(context.extensionUri),
  );
  p.webview.html = webviewHtml(p.webview, context.extensionUri, 'templateCheck', 'EAGLE-3 chat template check');
  let markReady: () => void = () => {};
  ready = new Promise((r) => (markReady = r));
  const sub = p.webview.onDidReceiveMessage((m: unknown) => {
    if (!isTemplateCheckWebviewMessage(m)) return;
    if (m.type === 'ready') markReady();
    else if (m.type === 'drawn') {
      drawnWaiter?.({ probes: m.probes, trainedSegments: m.trainedSegments, decisions: m.decisions });
      drawnWaiter = undefined;
    } else if (m.action === 'recheck') void checkTemplateCommand(context, output, lastScope);
    else if (m.action === 'selectTokenizer')
      // The page's own button: once a tokenizer is picked, the page is checked again for it (also when
      // the setting event comes late or not at all, e.g. the same value written again).
      void vscode.commands.executeCommand<string | undefined>(COMMANDS.selectTokenizer).then((dir) => {
        if (dir !== undefined) recheckSoon();
      });
    else void vscode.commands.executeCommand('workbench.action.openSettings', `${CONFIG_SECTION}.templateKwargs`);
  });
  // A tokenizer switch (its own button, the status bar, settings.json) or new kwargs: the open page is
  // checked again, once for a burst of changes; a check still running is superseded (not drawn).
  let timer: NodeJS.Timeout | undefined;
  const recheckSoon = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void checkTemplateCommand(context, output, lastScope), 300);
  };
  const follow = vscode.workspace.onDidChangeConfiguration((e) => {
    if (affectsSettings(e, 'tokenizerPath', 'templateKwargs')) recheckSoon();
  });
  p.onDidDispose(() => {
    if (timer) clearTimeout(timer);
    follow.dispose();
    sub.dispose();
    panel = undefined;
    drawnWaiter?.(undefined);
    drawnWaiter = undefined;
  });
  panel = p;
  return p;
}

/**
 * The command: checks the tokenizer and template kwargs of the settings (for `arg`'s folder when a
 * dataset Uri is given), shows the findings and probe renders in the webview and a notification.
 * @returns the TemplateCheck with what the page drew, or undefined when the check failed (the error is shown).
 */
export async function checkTemplateCommand(
  context: vscode.ExtensionContext,
  output: vscode.OutputChannel,
  arg?: unknown,
): Promise<CheckTemplateResult | undefined> {
  const scope = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  lastScope = scope;
  const settings = readPrepareSettings(scope);
  const name = tokenizerDisplayName(settings.tokenizerDir);
  const p = ensurePanel(context, output);
  const number = ++checksStarted;
  await ready;
  // A page closed meanwhile is not written to (its webview is disposed).
  const post = (m: TemplateCheckHostMessage) => {
    if (panel === p) void p.webview.postMessage(m);
  };
  post({ type: 'busy', message: `Checking the chat template of ${name}${settings.tokenizerDir ? ` (${settings.tokenizerDir})` : ' (embedded default)'}…` });
  let check: TemplateCheck;
  try {
    check = await serviceClient().call(
      { op: 'checkTemplate', tokenizerDir: settings.tokenizerDir, templateKwargs: settings.templateKwargs },
      CHECK_TEMPLATE_BUDGET_MS,
    );
  } catch (e) {
    if (number !== checksStarted) return undefined; // superseded: the newer check reports
    const msg =
      e instanceof ServiceBudgetError
        ? `${e.message}. Try again; if it stops again, run \`eagle3-prep check-template${settings.tokenizerDir ? ` --tokenizer ${settings.tokenizerDir}` : ''}\` in a terminal (no time limit) to see which probe takes long`
        : (e as Error).message;
    output.appendLine(`Check chat template (${name}) failed: ${msg}`);
    post({ type: 'error', message: `Check chat template (${name}): ${msg}` });
    void notify('error', `Check chat template (${name}): ${msg.split('\n')[0]}`);
    return undefined;
  }
  output.appendLine('');
  output.appendLine(`[${new Date().toISOString()}] Check chat template of ${check.tokenizer.name}: ${summarizeCheck(check)}`);
  if (number !== checksStarted) {
    // A newer check (another tokenizer or kwargs) started meanwhile: this one's page would be out of date.
    output.appendLine(`  (superseded by a newer check; not shown)`);
    return { ...check, drawn: undefined };
  }
  const kw = Object.keys(settings.templateKwargs).length ? `, template kwargs ${JSON.stringify(settings.templateKwargs)}` : '';
  const drawn = new Promise<CheckTemplateResult['drawn']>((resolve) => {
    const t = setTimeout(() => resolve(undefined), 15_000);
    drawnWaiter = (d) => {
      clearTimeout(t);
      resolve(d);
    };
  });
  post({ type: 'model', model: templateCheckModel(check, `${settings.tokenizerDir ?? 'embedded default'}${kw}`) });
  if (panel === p) p.title = `Chat template: ${check.tokenizer.name}`;
  const msg = `Chat template of ${check.tokenizer.name}: ${summarizeCheck(check)}.`;
  void notify(check.warnings.length || !check.prefixStable ? 'warning' : 'info', msg);
  return { ...check, drawn: await drawn };
}

/** Registers `eagle3prep.checkTemplate`. */
export function registerCheckTemplateCommand(context: vscode.ExtensionContext, output: vscode.OutputChannel): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.checkTemplate, (arg?: unknown) => checkTemplateCommand(context, output, arg));
}
