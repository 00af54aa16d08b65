/**
 * The typed messages between "Check chat template"'s webview panel (src/vscode/templateCheckView.ts)
 * and its page (webview/templateCheck.ts). Types and guards only; both sides import it.
 */
import type { TemplateCheck } from '../core/records/checkTemplateTypes';
import type { TextSegment } from '../core/records/checkTemplateFormat';

/** One probe as drawn: its records cut into segments (trained / special), like the mask view colours tokens. */
export interface ProbeView {
  probe: string;
  title: string;
  template: string;
  error: string | null;
  prefixStable: boolean | null;
  records: { targets: number[]; segments: TextSegment[] }[];
}

/** Everything the page draws: the findings (decisions) and the probes. */
export interface TemplateCheckModel {
  check: Omit<TemplateCheck, 'records'>;
  probes: ProbeView[];
  /** The settings the check ran with, for the header. */
  scope: string;
}

/** Host → page. */
export type TemplateCheckHostMessage = { type: 'model'; model: TemplateCheckModel } | { type: 'busy'; message: string } | { type: 'error'; message: string };

/** Page → host. `drawn`: what was drawn (probes, trained segments, decision rows) — the host tests check it. */
export type TemplateCheckWebviewMessage =
  | { type: 'ready' }
  | { type: 'drawn'; probes: number; trainedSegments: number; decisions: string[] }
  | { type: 'action'; action: 'recheck' | 'selectTokenizer' | 'openSettings' };

/** Runtime check of a page message (untrusted input to the host). */
export function isTemplateCheckWebviewMessage(m: unknown): m is TemplateCheckWebviewMessage {
  const o = m as Record<string, unknown> | null;
  if (!o || typeof o !== 'object') return false;
  if (o.type === 'ready') return true;
  if (o.type === 'drawn') return Number.isInteger(o.probes) && Number.isInteger(o.trainedSegments) && Array.isArray(o.decisions);
  if (o.type === 'action') return o.action === 'recheck' || o.action === 'selectTokenizer' || o.action === 'openSettings';
  return false;
}

/** Runtime check of a host message. */
export function isTemplateCheckHostMessage(m: unknown): m is TemplateCheckHostMessage {
  const t = (m as { type?: unknown } | null)?.type;
  return t === 'model' || t === 'busy' || t === 'error';
}
