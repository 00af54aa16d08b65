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
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RecordView } from '../core/records/recordViewTypes';
import { OUTPUT_FILES } from '../core/run/outputFiles';
import { readHoverCap, readPrepareSettings } from './config';
import { rowCountOptions } from '../core/records/rowCounts';
import { exactRecordsFor, type ExactRecords, type NoExactReason } from './exactCounts';
import { COMMANDS } from './ids';
import { ServiceBudgetError, serviceClient } from './serviceClient';

/** Time budget of one hover's render in the worker, ms (a slower template is stopped and the hover says so). */
export const HOVER_BUDGET_MS = 5000;

function fmt(n: number, estimated = false): string {
  return `${estimated ? '≈' : ''}${n.toLocaleString('en-US')}`;
}

/** Escapes text for a Markdown table cell / inline text. */
function md(s: string): string {
  return s.replace(/[\\`*_[\]|<>]/g, '\\$&');
}

/**
 * The hover's Markdown for one row's view. `hoverTurn` (index into `view.turns`) is the turn under
 * the mouse, marked ▶ and summarized first. The "Open mask view" link runs the command with
 * (file Uri, line).
 */
export function hoverMarkdown(view: RecordView, uri: vscode.Uri, hoverTurn?: number, exact?: ExactRecords | { none: NoExactReason }): vscode.MarkdownString {
  const out = new vscode.MarkdownString(undefined, true);
  out.isTrusted = { enabledCommands: [COMMANDS.openMaskView] };
  out.supportThemeIcons = true;
  const t = view.totals;
  const shape = view.shape ? `\`${view.shape.format}\` — ${md(view.shape.description)}` : 'no known shape';
  out.appendMarkdown(`**EAGLE-3 · line ${view.line}** · ${shape}\n\n`);
  if (hoverTurn !== undefined && view.turns[hoverTurn]) {
    const tv = view.turns[hoverTurn];
    out.appendMarkdown(
      `$(arrow-right) **turn ${hoverTurn + 1} · ${tv.role}** — ${fmt(tv.chars)} characters, ${fmt(tv.tokens, tv.estimated)} tokens, ${tv.target ? '**trained**' : 'not trained'}\n\n`,
    );
  }
  const ex = exact && 'records' in exact ? exact : undefined;
  if (view.status === 'conversation' && ex) {
    out.appendMarkdown(
      `**${fmt(ex.tokens)} tokens**, **${fmt(ex.trainableTokens)} trainable**, ` +
        `${ex.records.length === 1 ? '1 record' : `${ex.records.length} records`} · mask \`${view.mask}\` · exact, from \`${OUTPUT_FILES.tokenizedData}\`\n\n`,
    );
  } else if (view.status === 'conversation') {
    const why = exact && 'none' in exact ? ` (${exact.none})` : '';
    out.appendMarkdown(
      `**${fmt(t.tokens, t.estimated)} tokens**, **${fmt(t.trainableTokens, t.estimated)} trainable**, ` +
        `${t.records === 1 ? '1 record' : `${t.records} records`} · mask \`${view.mask}\` · ${t.estimated ? 'estimate' : 'computed from this line'}${why}\n\n`,
    );
  } else if (view.status === 'prompt') {
    out.appendMarkdown(`**prompt only** — set aside for the target model to answer (${OUTPUT_FILES.promptsToGenerate})\n\n`);
  } else {
    out.appendMarkdown(`**${view.status}**${view.reason ? ` (\`${view.reason}\`)` : ''}: ${md(view.message ?? '')}\n\n`);
  }
  const args = encodeURIComponent(JSON.stringify([uri.toString(), view.line]));
  out.appendMarkdown(
    `Tokenizer: ${md(view.tokenizer.name)} (\`${shortPath(view.tokenizer.dir).replace(/`/g, "'")}\`)${view.template ? ` · template \`${view.template}\`` : ''}` +
      `${Object.keys(view.templateKwargs).length ? ` · kwargs \`${JSON.stringify(view.templateKwargs)}\`` : ''}` +
      ` · [$(eye) Open mask view](command:${COMMANDS.openMaskView}?${args} "Show the tokens and the loss mask of this row")\n\n`,
  );
  for (const w of view.warnings) out.appendMarkdown(`$(warning) ${md(w.message)}\n\n`);
  if (view.turns.length) {
    out.appendMarkdown('| | turn | role | chars | tokens | |\n|:-:|--:|:--|--:|--:|:--|\n');
    const n = view.turns.length;
    const rows = n > 24 ? [...view.turns.slice(0, 20), undefined, ...view.turns.slice(-4)] : view.turns;
    for (const tv of rows) {
      if (!tv) {
        out.appendMarkdown(`| | … | ${n - 24} more | | | |\n`);
        continue;
      }
      const mark = tv.index === hoverTurn ? '$(arrow-right)' : '';
      out.appendMarkdown(`| ${mark} | ${tv.index + 1} | ${tv.role} | ${fmt(tv.chars)} | ${fmt(tv.tokens, tv.estimated)} | ${tv.target ? 'trained' : ''} |\n`);
    }
    out.appendMarkdown('\n');
  }
  if (ex && ex.records.length > 1) {
    out.appendMarkdown(
      `Records: ${ex.records
        .slice(0, 8)
        .map((r, i) => `\`#${i}\` ${fmt(r.tokens)} (${fmt(r.trainableTokens)} trainable)`)
        .join(' · ')}${ex.records.length > 8 ? ` · … ${ex.records.length - 8} more` : ''}\n\n`,
    );
  } else if (!ex && view.records.length > 1) {
    out.appendMarkdown(
      `Records: ${view.records
        .slice(0, 8)
        .map((r) => `\`#${r.index}\` ${fmt(r.tokens, r.estimated)} (${fmt(r.trainableTokens, r.estimated)} trainable)`)
        .join(' · ')}${view.records.length > 8 ? ` · … ${view.records.length - 8} more` : ''}\n\n`,
    );
  }
  const notes = view.notes.filter((n) => !view.warnings.some((w) => w.code === n));
  if (notes.length) out.appendMarkdown(`Notes: ${notes.map((n) => `\`${n}\``).join(', ')}\n\n`);
  return out;
}

/** A path shortened to its last three parts for display. */
function shortPath(p: string): string {
  const parts = p.split(/[\\/]/).filter(Boolean);
  return parts.length > 3 ? `…/${parts.slice(-3).join('/')}` : p;
}

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
  const key = JSON.stringify([
    doc.uri.toString(),
    doc.version,
    line,
    settings.tokenizerDir,
    settings.mask,
    settings.grouping,
    settings.templateKwargs,
    settings.reasoning,
    settings.maxLength,
    settings.long,
    settings.minTrainableTokens,
    maxTokenizedChars,
  ]);
  if (last?.key === key) return last.view;
  const view = serviceClient().call(
    {
      op: 'view',
      row: { text, file: doc.uri.fsPath, line: line + 1 },
      tokenizerDir: settings.tokenizerDir,
      // The mask view counts a row with the same request (rowCounts.ts), so both give the same numbers.
      options: rowCountOptions(
        {
          mask: settings.mask,
          grouping: settings.grouping,
          templateKwargs: settings.templateKwargs,
          reasoning: settings.reasoning,
          maxLength: settings.maxLength,
          long: settings.long,
          minTrainableTokens: settings.minTrainableTokens,
        },
        maxTokenizedChars,
      ),
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

/** The hover provider for JSONL documents. */
export class RecordHoverProvider implements vscode.HoverProvider {
  async provideHover(doc: vscode.TextDocument, position: vscode.Position, token: vscode.CancellationToken): Promise<vscode.Hover | undefined> {
    let view: RecordView | undefined;
    try {
      view = await viewForLine(doc, position.line);
    } catch (e) {
      if (token.isCancellationRequested) return undefined;
      const m = new vscode.MarkdownString();
      const msg = e instanceof ServiceBudgetError ? `${e.message}; open the mask view (a longer budget) to see it` : e instanceof Error ? e.message : String(e);
      m.appendMarkdown(`**EAGLE-3** · $(error) ${md(msg)}`);
      m.supportThemeIcons = true;
      return new vscode.Hover(m, doc.lineAt(position.line).range);
    }
    if (!view || token.isCancellationRequested) return undefined;
    const exact =
      view.status === 'conversation'
        ? await exactRecordsFor(doc.uri, position.line + 1, readPrepareSettings(doc.uri), { dirty: doc.isDirty, wait: true, budgetMs: 1500 })
        : undefined;
    if (token.isCancellationRequested) return undefined;
    const offset = position.character;
    const turn = view.turns.find((t) => t.range && offset >= t.range[0] && offset < t.range[1]);
    const range = turn?.range ? new vscode.Range(position.line, turn.range[0], position.line, turn.range[1]) : doc.lineAt(position.line).range;
    return new vscode.Hover(hoverMarkdown(view, doc.uri, turn?.index, exact), range);
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
