/**
 * The typed messages between the mask view's host side (src/vscode/maskView.ts)
 * and its webview (webview/main.ts). Both sides import this file; it holds
 * types and guards only (no `vscode`, no DOM), so it bundles into either.
 */
import type { RecordView, TurnField } from '../core/records/recordViewTypes';
import { isMaskPolicy, type MaskPolicy } from '../core/types';
import type { TokenRange } from './maskViewWindow';

/** The record view the page draws (built by `records/recordView.ts` on the host side), as the messages carry it. */
export type { RecordView, TokenView } from '../core/records/recordViewTypes';
export type { TokenRange } from './maskViewWindow';

/** Template kwarg `enable_thinking` as the view sets it: left to the settings, or forced on / off. */
export type ThinkingChoice = 'settings' | 'on' | 'off';

/** The mask policies, in the order the view offers them (the core's one list). */
export { MASK_POLICIES } from '../core/types';

/** One line per policy: what it trains (the same words as the setting's descriptions). */
export const MASK_POLICY_DESCRIPTIONS: Readonly<Record<MaskPolicy, string>> = {
  assistant: 'Train on every assistant turn (tool calls included).',
  'last-assistant': 'Train on the last assistant turn only; earlier ones are context.',
  'non-system': 'Train on every turn except the system prompt (user and tool turns too).',
};

/** The row's counts from the current prepared output (exact), or why there are none. */
export type ExactCounts =
  { records: { id: string; tokens: number; trainableTokens: number }[]; tokens: number; trainableTokens: number; tokenizedData: string } | { none: string };

/** What the view is showing. */
export interface MaskViewState {
  /** The dataset file's Uri, as a string. */
  uri: string;
  /** Its base name, for the title. */
  fileName: string;
  /** 1-based line of the row shown. */
  line: number;
  /** Lines in the file (from the open document or the line index). */
  lineCount: number;
  /** Index of the record shown (of `view.records`). */
  record: number;
  mask: MaskPolicy;
  /** True while the mask policy is the settings' one (the view follows a settings change); false once picked in the view. */
  maskFromSettings: boolean;
  thinking: ThinkingChoice;
  /** Where the row was read: the open editor (unsaved edits included) or the file on disk (line index). */
  source: 'editor' | 'disk';
}

/** Host → webview. */
export type HostMessage =
  /**
   * A row to show: `view.detail` holds tokens of record `state.record`, at most {@link MAX_TOKENS_SHOWN}:
   * those of the index ranges `shown` (in order; the whole record when it fits), `truncatedTokens`
   * more were left out (maskViewWindow.ts chooses: every trained span with context around it).
   */
  | {
      type: 'render';
      state: MaskViewState;
      view: RecordView;
      shown: TokenRange[];
      truncatedTokens: number;
      elapsedMs: number;
      /** Counts of the row from the current prepared output, or why there are none. */
      exact: ExactCounts;
      /** Why the view re-rendered on its own (e.g. `the tokenizer setting changed`). */
      because?: string;
    }
  /** Work started (the previous render stays until the next one). */
  | { type: 'busy'; message: string }
  /** The row could not be shown (blank line, unreadable file, tokenizer error); `state` says where. */
  | { type: 'error'; state: MaskViewState; message: string };

/** Webview → host. */
export type WebviewMessage =
  /** The webview has loaded its script; the host answers with a render. */
  | { type: 'ready' }
  /** Show the row on this 1-based line. */
  | { type: 'goToLine'; line: number }
  /** Show the next (+1) or previous (-1) non-blank row. */
  | { type: 'step'; direction: 1 | -1 }
  /** Show another record of the same row. */
  | { type: 'record'; index: number }
  | { type: 'setMask'; mask: MaskPolicy }
  | { type: 'setThinking'; thinking: ThinkingChoice }
  /** Reveal the row in a text editor. */
  | { type: 'reveal' }
  /** Reveal in the JSON source the turn (and field) a clicked token came from. */
  | { type: 'revealToken'; turn: number; field?: TurnField }
  /** The webview drew a render (its acknowledgement: which row and record, how many tokens). */
  | { type: 'rendered'; line: number; record: number; tokens: number; labels?: string[]; trainedSpans?: number };

/** The label of a turn's group in the record shown: trained here, context here (trained in another record), or not trained. */
/**
 * (Pure: used by the webview and unit tests.)
 */
export function turnLabel(view: RecordView, turn: number, trainedHere: boolean): string {
  const t = view.turns[turn];
  if (!t) return 'template text';
  const base = `turn ${t.index + 1} · ${t.role}`;
  if (trainedHere) return `${base} · trained`;
  const elsewhere = view.records.find((r) => r.targets.includes(turn) && r.index !== view.detail?.index);
  if (elsewhere) return `${base} · context here (trained in record #${elsewhere.index})`;
  return t.target && view.mask === 'non-system' ? `${base} · context` : base;
}

/** Most tokens of one record sent to the webview; the rest is counted in `truncatedTokens`. */
export const MAX_TOKENS_SHOWN = 20000;

/** Runtime check of a message from the webview (it is untrusted input to the host). */
export function isWebviewMessage(m: unknown): m is WebviewMessage {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  switch (o.type) {
    case 'ready':
    case 'reveal':
      return true;
    case 'rendered':
      return (
        Number.isInteger(o.line) &&
        Number.isInteger(o.record) &&
        Number.isInteger(o.tokens) &&
        (o.trainedSpans === undefined || Number.isInteger(o.trainedSpans)) &&
        (o.labels === undefined || (Array.isArray(o.labels) && o.labels.every((l) => typeof l === 'string')))
      );
    case 'revealToken':
      return (
        Number.isInteger(o.turn) &&
        (o.turn as number) >= 0 &&
        (o.field === undefined || ['content', 'reasoning_content', 'tool_calls'].includes(o.field as string))
      );
    case 'goToLine':
      return Number.isInteger(o.line) && (o.line as number) >= 1;
    case 'step':
      return o.direction === 1 || o.direction === -1;
    case 'record':
      return Number.isInteger(o.index) && (o.index as number) >= 0;
    case 'setMask':
      return isMaskPolicy(o.mask);
    case 'setThinking':
      return o.thinking === 'settings' || o.thinking === 'on' || o.thinking === 'off';
    default:
      return false;
  }
}

/** Runtime check of a message from the host. */
export function isHostMessage(m: unknown): m is HostMessage {
  if (!m || typeof m !== 'object') return false;
  const t = (m as { type?: unknown }).type;
  return t === 'render' || t === 'busy' || t === 'error';
}
