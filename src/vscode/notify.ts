/**
 * The extension's notifications (toasts), through one function so that what a person is told —
 * severity, text and actions — can be checked by the host tests (`eagle3prep.notifications`, a
 * hidden command returning the last ones shown).
 */
import * as vscode from 'vscode';
import { COMMANDS } from './ids';

/** One notification as shown. */
export interface ShownNotification {
  severity: 'info' | 'warning' | 'error';
  message: string;
  actions: string[];
  timeMs: number;
}

const shown: ShownNotification[] = [];

/** Shows a notification and records it (the last 50 are kept). Resolves with the action picked. */
export function notify(severity: ShownNotification['severity'], message: string, ...actions: string[]): Thenable<string | undefined> {
  shown.push({ severity, message, actions, timeMs: Date.now() });
  if (shown.length > 50) shown.shift();
  const show =
    severity === 'error' ? vscode.window.showErrorMessage : severity === 'warning' ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  return show(message, ...actions);
}

/** Registers the hidden `eagle3prep.notifications` (tests): the notifications shown since `sinceMs`. */
export function registerNotifications(): vscode.Disposable {
  return vscode.commands.registerCommand(COMMANDS.notifications, (sinceMs?: number) => shown.filter((n) => n.timeMs >= (sinceMs ?? 0)));
}
