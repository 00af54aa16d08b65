/**
 * What the hover on a dataset line says, as Markdown text (hover.ts wraps it in a
 * `vscode.MarkdownString` with theme icons and the one trusted command): the row's shape, the turn
 * under the mouse, total and trainable tokens with where they come from (exact from the current
 * output, computed from the line, or an estimate past the work cap), the tokenizer and template,
 * warnings, the turns table, the records and the notes. Also the request a hover makes (its options
 * and the key its answer is reused under) and which turn a column falls in.
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/hoverModel.test.ts).
 */
import type { RecordView, RecordViewOptions } from '../core/records/recordViewTypes';
import { rowCountOptions } from '../core/records/rowCounts';
import { OUTPUT_FILES } from '../core/run/outputFiles';
import { RUN_SETTING_KEYS, runSettingOptionsOf, type RunSettingOptions } from '../core/run/runSettings';
import type { ExactRecords, NoExactReason } from './exactCountsModel';
import { COMMANDS } from './ids';

function fmt(n: number, estimated = false): string {
  return `${estimated ? '≈' : ''}${n.toLocaleString('en-US')}`;
}

/** Escapes text for a Markdown table cell / inline text. */
export function mdEscape(s: string): string {
  return s.replace(/[\\`*_[\]|<>]/g, '\\$&');
}

/** A path shortened to its last three parts for display. */
export function shortPath(p: string): string {
  const parts = p.split(/[\\/]/).filter(Boolean);
  return parts.length > 3 ? `…/${parts.slice(-3).join('/')}` : p;
}

/** The counts line: exact from the output, else computed (or estimated) with why there are no exact counts. */
function countsMarkdown(view: RecordView, exact: ExactRecords | { none: NoExactReason } | undefined): string {
  const t = view.totals;
  const ex = exact && 'records' in exact ? exact : undefined;
  if (view.status === 'conversation' && ex)
    return (
      `**${fmt(ex.tokens)} tokens**, **${fmt(ex.trainableTokens)} trainable**, ` +
      `${ex.records.length === 1 ? '1 record' : `${ex.records.length} records`} · mask \`${view.mask}\` · exact, from \`${OUTPUT_FILES.tokenizedData}\`\n\n`
    );
  if (view.status === 'conversation') {
    const why = exact && 'none' in exact ? ` (${exact.none})` : '';
    return (
      `**${fmt(t.tokens, t.estimated)} tokens**, **${fmt(t.trainableTokens, t.estimated)} trainable**, ` +
      `${t.records === 1 ? '1 record' : `${t.records} records`} · mask \`${view.mask}\` · ${t.estimated ? 'estimate' : 'computed from this line'}${why}\n\n`
    );
  }
  if (view.status === 'prompt') return `**prompt only** — set aside for the target model to answer (${OUTPUT_FILES.promptsToGenerate})\n\n`;
  return `**${view.status}**${view.reason ? ` (\`${view.reason}\`)` : ''}: ${mdEscape(view.message ?? '')}\n\n`;
}

/** The turns table: every turn, or the first 20 and the last 4 of a longer row; the hovered turn marked. */
function turnsMarkdown(view: RecordView, hoverTurn: number | undefined): string {
  if (!view.turns.length) return '';
  let out = '| | turn | role | chars | tokens | |\n|:-:|--:|:--|--:|--:|:--|\n';
  const n = view.turns.length;
  const rows = n > 24 ? [...view.turns.slice(0, 20), undefined, ...view.turns.slice(-4)] : view.turns;
  for (const tv of rows) {
    if (!tv) {
      out += `| | … | ${n - 24} more | | | |\n`;
      continue;
    }
    const mark = tv.index === hoverTurn ? '$(arrow-right)' : '';
    out += `| ${mark} | ${tv.index + 1} | ${tv.role} | ${fmt(tv.chars)} | ${fmt(tv.tokens, tv.estimated)} | ${tv.target ? 'trained' : ''} |\n`;
  }
  return `${out}\n`;
}

/** The records line of a row that makes several records (the first 8): exact ones when known. */
function recordsMarkdown(view: RecordView, ex: ExactRecords | undefined): string {
  const list = (items: string[], total: number) => `Records: ${items.join(' · ')}${total > 8 ? ` · … ${total - 8} more` : ''}\n\n`;
  if (ex && ex.records.length > 1)
    return list(
      ex.records.slice(0, 8).map((r, i) => `\`#${i}\` ${fmt(r.tokens)} (${fmt(r.trainableTokens)} trainable)`),
      ex.records.length,
    );
  if (!ex && view.records.length > 1)
    return list(
      view.records.slice(0, 8).map((r) => `\`#${r.index}\` ${fmt(r.tokens, r.estimated)} (${fmt(r.trainableTokens, r.estimated)} trainable)`),
      view.records.length,
    );
  return '';
}

/**
 * The hover's Markdown (theme icons on, `command:` links to `eagle3prep.openMaskView` only) for one
 * row's view. `hoverTurn` (index into `view.turns`) is the turn under the mouse, marked and summarized
 * first. `uri` is the dataset's Uri as a string: the "Open mask view" link runs the command with (uri, line).
 */
export function hoverMarkdown(view: RecordView, uri: string, hoverTurn?: number, exact?: ExactRecords | { none: NoExactReason }): string {
  const shape = view.shape ? `\`${view.shape.format}\` — ${mdEscape(view.shape.description)}` : 'no known shape';
  let out = `**EAGLE-3 · line ${view.line}** · ${shape}\n\n`;
  if (hoverTurn !== undefined && view.turns[hoverTurn]) {
    const tv = view.turns[hoverTurn];
    out += `$(arrow-right) **turn ${hoverTurn + 1} · ${tv.role}** — ${fmt(tv.chars)} characters, ${fmt(tv.tokens, tv.estimated)} tokens, ${tv.target ? '**trained**' : 'not trained'}\n\n`;
  }
  out += countsMarkdown(view, exact);
  const args = encodeURIComponent(JSON.stringify([uri, view.line]));
  out +=
    `Tokenizer: ${mdEscape(view.tokenizer.name)} (\`${shortPath(view.tokenizer.dir).replace(/`/g, "'")}\`)${view.template ? ` · template \`${view.template}\`` : ''}` +
    `${Object.keys(view.templateKwargs).length ? ` · kwargs \`${JSON.stringify(view.templateKwargs)}\`` : ''}` +
    ` · [$(eye) Open mask view](command:${COMMANDS.openMaskView}?${args} "Show the tokens and the loss mask of this row")\n\n`;
  for (const w of view.warnings) out += `$(warning) ${mdEscape(w.message)}\n\n`;
  out += turnsMarkdown(view, hoverTurn);
  out += recordsMarkdown(view, exact && 'records' in exact ? exact : undefined);
  const notes = view.notes.filter((n) => !view.warnings.some((w) => w.code === n));
  if (notes.length) out += `Notes: ${notes.map((n) => `\`${n}\``).join(', ')}\n\n`;
  return out;
}

/** The hover's Markdown when the row could not be viewed; `overBudget` when the render ran out of the hover's time. */
export function hoverErrorMarkdown(message: string, overBudget: boolean): string {
  return `**EAGLE-3** · $(error) ${mdEscape(overBudget ? `${message}; open the mask view (a longer budget) to see it` : message)}`;
}

/** The settings a hover's view depends on (config.ts `PrepareSettings`, as far as the hover reads them). */
export type HoverSettings = RunSettingOptions & {
  tokenizerDir?: string;
};

/** The view options of a hover: the settings, counted as the mask view counts a row (rowCounts.ts), within the work cap. */
export function hoverViewOptions(settings: HoverSettings, maxTokenizedChars: number): RecordViewOptions {
  return rowCountOptions(runSettingOptionsOf(settings), maxTokenizedChars);
}

/** The key a hover's answer is reused under: the same line of the same document version with the same settings and cap. */
export function hoverKey(uri: string, version: number, line: number, settings: HoverSettings, maxTokenizedChars: number): string {
  return JSON.stringify([uri, version, line, settings.tokenizerDir, RUN_SETTING_KEYS.map((k) => settings[k]), maxTokenizedChars]);
}

/** The turn whose source range holds 0-based column `offset` of the line, if any. */
export function turnAt(view: RecordView, offset: number): RecordView['turns'][number] | undefined {
  return view.turns.find((t) => t.range && offset >= t.range[0] && offset < t.range[1]);
}
