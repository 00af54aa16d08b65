/**
 * The mask view's decisions, as plain data (maskView.ts is the panel's wiring): the state a view
 * starts in and its title, the settings it follows, the two requests of a render (the record drawn,
 * tokenized whole; the row's counts asked as the hover asks them, rowCounts.ts), whether the
 * output's exact counts apply, which tokens of a long record are posted (maskViewWindow.ts), where a
 * clicked token came from in the JSON line, the next non-blank line, and the command's arguments.
 *
 * Pure: no `vscode` import (unit-tested in plain node, test/unit/maskViewModel.test.ts).
 */
import type { RecordView, RecordViewOptions, TurnField } from '../core/records/recordViewTypes';
import { rowCountOptions } from '../core/records/rowCounts';
import { runSettingOptionsOf, type RunSettingOptions } from '../core/run/runSettings';
import type { MaskPolicy } from '../core/types';
import { CONFIG_SECTION } from './ids';
import { MAX_TOKENS_SHOWN, type MaskViewState } from '../shared/maskViewProtocol';
import { pick, rangesToDraw, type TokenRange } from '../shared/maskViewWindow';
import { STALENESS_SETTING_KEYS, type SettingKey } from './settings';

/**
 * Work cap of the mask view's own render (characters tokenized for the records not shown; a line over
 * 4× this has its turns shortened before rendering); the shown record is always tokenized whole. The
 * row's counts the view shows are the hover's (`rowCounts.ts`, with the hover's work cap).
 */
export const MASK_VIEW_TOTALS_CAP = 262144;

/** The settings an open view re-renders on. */
export const MASK_VIEW_SETTING_KEYS: readonly SettingKey[] = STALENESS_SETTING_KEYS;

/** The settings a render reads (config.ts `PrepareSettings`, as far as the view reads them). */
export type MaskViewSettings = RunSettingOptions & Required<Pick<RecordViewOptions, 'mask'>>;

/** The state of a view opened on `uri` (its string) at 1-based `line`, with the settings' mask policy. */
export function initialState(uri: string, fileName: string, line: number, mask: MaskPolicy): MaskViewState {
  return { uri, fileName, line, lineCount: 0, record: 0, mask, maskFromSettings: true, thinking: 'settings', source: 'disk' };
}

/** The panel's title: `Mask: data.jsonl:3`. */
export function maskViewTitle(state: Pick<MaskViewState, 'fileName' | 'line'>): string {
  return `Mask: ${state.fileName}:${state.line}`;
}

/** Why the view re-rendered on its own after a settings change (`changed`: the setting keys). */
export function settingsChangedNote(changed: readonly string[]): string {
  return `settings changed (${changed.map((k) => `${CONFIG_SECTION}.${k}`).join(', ')}): re-rendered`;
}

/** The view options of a render: the settings with the view's own mask policy and `enable_thinking` choice. */
export function maskViewOptions(state: Pick<MaskViewState, 'mask' | 'thinking'>, settings: MaskViewSettings): RecordViewOptions {
  const kwargs = { ...settings.templateKwargs };
  if (state.thinking !== 'settings') kwargs.enable_thinking = state.thinking === 'on';
  return { ...runSettingOptionsOf(settings), mask: state.mask, templateKwargs: kwargs };
}

/**
 * The two requests of a render: the record drawn (`state.record`, tokenized whole within
 * {@link MASK_VIEW_TOTALS_CAP}) and the row's counts asked as the hover asks them (`hoverCap`), so
 * the hover and this view give the same numbers for the same row.
 */
export function renderRequests(
  state: Pick<MaskViewState, 'mask' | 'thinking' | 'record'>,
  settings: MaskViewSettings,
  hoverCap: number,
): { drawn: RecordViewOptions; counts: RecordViewOptions } {
  const options = maskViewOptions(state, settings);
  return { drawn: { ...options, detailRecord: state.record, maxTokenizedChars: MASK_VIEW_TOTALS_CAP }, counts: rowCountOptions(options, hoverCap) };
}

/** Why the output's exact counts do not apply to the view, or undefined when they do (they are what the settings produce). */
export function exactMismatch(
  state: Pick<MaskViewState, 'mask' | 'thinking'>,
  settings: Pick<MaskViewSettings, 'mask'>,
): "the view's policy or enable_thinking differ from the settings" | undefined {
  return state.mask === settings.mask && state.thinking === 'settings' ? undefined : "the view's policy or enable_thinking differ from the settings";
}

/**
 * What is posted of a view: a record over {@link MAX_TOKENS_SHOWN} tokens keeps every trained span
 * with context around it (maskViewWindow.ts `rangesToDraw`), the gaps counted in `truncatedTokens`.
 */
export function postedView(view: RecordView): { posted: RecordView; shown: TokenRange[]; truncatedTokens: number } {
  const shown = view.detail
    ? rangesToDraw(
        view.detail.tokens.map((t) => t.trainable),
        MAX_TOKENS_SHOWN,
      )
    : [];
  const posted =
    view.detail && view.detail.tokens.length > MAX_TOKENS_SHOWN ? { ...view, detail: { ...view.detail, tokens: pick(view.detail.tokens, shown) } } : view;
  const truncatedTokens = view.detail ? view.detail.tokens.length - (posted.detail?.tokens.length ?? 0) : 0;
  return { posted, shown, truncatedTokens };
}

/** A render that ran out of its time budget: what to do instead. */
export function overBudgetMessage(message: string): string {
  return `${message}. Try again; for a row this heavy, prepare the file (no time limit): its report and Problems say what became of each row`;
}

/** The columns `[start, end)` of the JSON line that turn `turn` (and its `field`) came from: the field's value, else the turn's object. */
export function sourceRange(view: RecordView | undefined, turn: number, field?: TurnField): [number, number] | undefined {
  const t = view?.turns[turn];
  return (field && t?.fields?.find((f) => f.field === field)?.range) ?? t?.range;
}

/**
 * The next (`direction` 1) or previous (-1) non-blank line from `line`, at most 10,000 lines away;
 * undefined past the file's ends (`lineCount`, 0 = unknown) or when a line cannot be read.
 */
export async function nextRowLine(
  line: number,
  direction: 1 | -1,
  lineCount: number,
  readLine: (line: number) => Promise<string>,
): Promise<number | undefined> {
  for (let n = 0; n < 10000; n++) {
    line += direction;
    if (line < 1 || (lineCount > 0 && line > lineCount)) return undefined;
    try {
      if ((await readLine(line)).trim() !== '') return line;
    } catch {
      return undefined;
    }
  }
  return line;
}

/** Lines of an open document as the view counts them: a last empty line (the file's final newline) is not a row. */
export function documentLineCount(lineCount: number, lastLineText: string): number {
  return lineCount > 1 && lastLineText === '' ? lineCount - 1 : lineCount;
}

/**
 * What a string argument of `eagle3prep.openMaskView` names: a Uri (`file:///…`, `untitled:…`) or a
 * path (a Windows drive letter `C:\…` is a path).
 */
export function targetKind(arg: string): 'uri' | 'path' {
  return /^[a-z][a-z0-9+.-]+:/i.test(arg) && !/^[a-z]:[\\/]/i.test(arg) ? 'uri' : 'path';
}

/** The 1-based line of the command: `line` when a positive integer, else the editor's cursor line when it shows the file, else 1. */
export function lineArg(line: unknown, cursorLine: number | undefined): number {
  return typeof line === 'number' && Number.isInteger(line) && line >= 1 ? line : (cursorLine ?? 1);
}
