/**
 * The typed messages between the mask view's host side (src/vscode/maskView.ts)
 * and its webview (webview/main.ts). Both sides import this file; it holds
 * types and guards only (no `vscode`, no DOM), so it bundles into either.
 */
import type { RecordView } from '../core/records/recordView';
import { isMaskPolicy, type MaskPolicy } from '../core/types';

/** Template kwarg `enable_thinking` as the view sets it: left to the settings, or forced on / off. */
export type ThinkingChoice = 'settings' | 'on' | 'off';

/** The mask policies, in the order the view offers them (the core's one list). */
export { MASK_POLICIES } from '../core/types';

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
  thinking: ThinkingChoice;
  /** Where the row was read: the open editor (unsaved edits included) or the file on disk (line index). */
  source: 'editor' | 'disk';
}

/** Host → webview. */
export type HostMessage =
  /** A row to show: `view.detail` holds the tokens of record `state.record` (at most `maxTokens`; `truncatedTokens` more were left out). */
  | { type: 'render'; state: MaskViewState; view: RecordView; truncatedTokens: number; elapsedMs: number }
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
  /** The webview drew a render (its acknowledgement: which row and record, how many tokens). */
  | { type: 'rendered'; line: number; record: number; tokens: number };

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
      return Number.isInteger(o.line) && Number.isInteger(o.record) && Number.isInteger(o.tokens);
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
