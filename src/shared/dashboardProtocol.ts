/**
 * The typed messages between the dashboard's host side (src/vscode/dashboard.ts) and its webview
 * (webview/dashboard.ts). Types and runtime guards only (no `vscode`, no DOM): both sides import it.
 */
import type { DashboardModel } from './dashboardModel';

/** Host → webview. */
export type DashboardHostMessage =
  /** The model to draw (replaces what is shown). */
  | { type: 'model'; model: DashboardModel }
  /** Work started (reading the output's statistics). */
  | { type: 'busy'; message: string }
  | { type: 'error'; message: string };

/** Actions the dashboard offers (the host runs the matching command). */
export type DashboardAction = 'refresh' | 'openReport' | 'showProblems' | 'openMaskView' | 'prepare' | 'openDataset';

/** What the webview drew (its acknowledgement, checked by the host tests). */
export interface DashboardDrawn {
  kind: DashboardModel['kind'];
  /** Charts drawn, by id (`seqLen`, `trainablePerRecord`, `recordsPerConversation`, `amplification`, `reasons`, `share`, `datasets`). */
  charts: string[];
  /** The figures written as text, by id (`rowsRead`, `records`, `tokens`, `trainable`, `share`, …). */
  figures: Record<string, string>;
  /** Sections saying "not computed by this run". */
  notComputed: number;
}

/** Webview → host. */
export type DashboardWebviewMessage =
  | { type: 'ready' }
  | { type: 'drawn'; drawn: DashboardDrawn }
  /** Run an action; `file` for a workspace dashboard's row. */
  | { type: 'action'; action: DashboardAction; file?: string };

const ACTIONS: readonly string[] = ['refresh', 'openReport', 'showProblems', 'openMaskView', 'prepare', 'openDataset'];

/** Runtime check of a message from the webview (untrusted input to the host). */
export function isDashboardWebviewMessage(m: unknown): m is DashboardWebviewMessage {
  if (!m || typeof m !== 'object') return false;
  const o = m as Record<string, unknown>;
  switch (o.type) {
    case 'ready':
      return true;
    case 'drawn': {
      const d = o.drawn as Partial<DashboardDrawn> | undefined;
      return !!d && Array.isArray(d.charts) && !!d.figures && typeof d.figures === 'object' && typeof d.notComputed === 'number';
    }
    case 'action':
      return ACTIONS.includes(o.action as string) && (o.file === undefined || typeof o.file === 'string');
    default:
      return false;
  }
}

/** Runtime check of a message from the host. */
export function isDashboardHostMessage(m: unknown): m is DashboardHostMessage {
  const t = (m as { type?: unknown } | null)?.type;
  return t === 'model' || t === 'busy' || t === 'error';
}
