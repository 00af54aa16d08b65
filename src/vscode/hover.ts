/**
 * Hover on a `.jsonl` line: what `prepare` makes of that row — its shape, its
 * turns (role, characters, tokens), total and trainable tokens, how many
 * records it becomes, the tokenizer that counted, and warnings. Hovering a
 * turn's text marks that turn.
 *
 * The row is rendered and tokenized in the render service worker
 * (`serviceClient.ts`), never on the extension host's thread, within a time
 * budget ({@link HOVER_BUDGET_MS}). Counts say where they come from: exact from
 * the current prepared output (`exactCounts.ts`), computed from the line, or
 * an estimate past `eagle3prep.hover.maxTokenizedCharacters`.
 *
 * VS Code does not sync files over 50 MB to extensions, so no hover is asked
 * for there; `largeFiles.ts` offers the mask view on a line instead.
 *
 * What the hover says is hoverModel.ts (Markdown text, tested in plain node); this file asks the
 * service worker and hands VS Code the hover.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RecordView } from '../core/records/recordViewTypes';
import { readHoverCap, readPrepareSettings } from './config';
import { exactRecordsFor } from './exactCounts';
import { hoverErrorMarkdown, hoverKey, hoverMarkdown, hoverViewOptions, turnAt } from './hoverModel';
import { COMMANDS } from './ids';
import { ServiceBudgetError, serviceClient } from './serviceClient';

/** Time budget of one hover's render in the worker, ms (a slower template is stopped and the hover says so). */
export const HOVER_BUDGET_MS = 5000;

/** The last answer, reused while the same line of the same document version is hovered with the same settings. */
let last: { key: string; view: Promise<RecordView> } | undefined;

/**
 * Computes the row view for a line of `doc` with the current settings (mask policy, template kwargs,
 * max length, tokenizer, work cap) in the render service worker. Resolves with undefined for a blank line.
 * @throws ServiceError with the core's errors (TokenizerLoadError, NoChatTemplateError), ServiceBudgetError
 */
export function viewForLine(doc: vscode.TextDocument, line: number): Promise<RecordView | undefined> {
  const text = doc.lineAt(line).text;
  if (text.trim() === '') return Promise.resolve(undefined);
  const settings = readPrepareSettings(doc.uri);
  const maxTokenizedChars = readHoverCap(doc.uri);
  const key = hoverKey(doc.uri.toString(), doc.version, line, settings, maxTokenizedChars);
  if (last?.key === key) return last.view;
  const view = serviceClient().call(
    // The mask view counts a row with the same request (rowCounts.ts), so both give the same numbers.
    {
      op: 'view',
      row: { text, file: doc.uri.fsPath, line: line + 1 },
      tokenizerDir: settings.tokenizerDir,
      options: hoverViewOptions(settings, maxTokenizedChars),
    },
    HOVER_BUDGET_MS,
  );
  const entry = { key, view };
  last = entry;
  view.catch(() => {
    if (last === entry) last = undefined;
  });
  return view;
}

/** A MarkdownString with theme icons whose only trusted command is the mask view's. */
function markdown(text: string): vscode.MarkdownString {
  const out = new vscode.MarkdownString(text, true);
  out.isTrusted = { enabledCommands: [COMMANDS.openMaskView] };
  return out;
}

/** The hover provider for JSONL documents (the text: hoverModel.ts). */
export class RecordHoverProvider implements vscode.HoverProvider {
  async provideHover(doc: vscode.TextDocument, position: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    let view: RecordView | undefined;
    try {
      view = await viewForLine(doc, position.line);
    } catch (e) {
      if (token.isCancellationRequested) return undefined;
      const m = new vscode.MarkdownString(hoverErrorMarkdown(e instanceof Error ? e.message : String(e), e instanceof ServiceBudgetError));
      m.supportThemeIcons = true;
      return new vscode.Hover(m, doc.lineAt(position.line).range);
    }
    if (!view || token.isCancellationRequested) return undefined;
    const exact =
      view.status === 'conversation'
        ? await exactRecordsFor(doc.uri, position.line + 1, readPrepareSettings(doc.uri), { dirty: doc.isDirty, wait: true, budgetMs: 1500 })
        : undefined;
    if (token.isCancellationRequested) return undefined;
    const turn = turnAt(view, position.character);
    const range = turn?.range ? new vscode.Range(position.line, turn.range[0], position.line, turn.range[1]) : doc.lineAt(position.line).range;
    return new vscode.Hover(markdown(hoverMarkdown(view, doc.uri.toString(), turn?.index, exact)), range);
  }
}

/** Document selector of the hover: JSONL by language id or by file name (`.jsonl`, `.ndjson`). */
export const JSONL_SELECTOR: vscode.DocumentSelector = [{ language: 'jsonl' }, { pattern: '**/*.{jsonl,ndjson}' }];

/** Registers the hover provider. */
export function registerRecordHover(): vscode.Disposable {
  return vscode.languages.registerHoverProvider(JSONL_SELECTOR, new RecordHoverProvider());
}

/** Basename of a Uri's path, for titles. */
export function baseName(uri: vscode.Uri): string {
  return path.posix.basename(uri.path);
}
