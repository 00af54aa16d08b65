/**
 * "Check chat template"'s page (bundled to dist/templateCheck.js / .css): the probe decisions as a
 * table, then each probe's records with trainable text and special tokens coloured like the mask
 * view. Draws what the host sends (templateCheckProtocol.ts); all text is inserted as text.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import './templateCheck.css';
import type { TemplateCheckModel } from '../src/shared/templateCheckProtocol';
import { isTemplateCheckHostMessage, type TemplateCheckWebviewMessage } from '../src/shared/templateCheckProtocol';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };
const vscode = acquireVsCodeApi();
const send = (m: TemplateCheckWebviewMessage): void => vscode.postMessage(m);
const app = document.getElementById('app')!;

function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

const q = (s: string) => JSON.stringify(s);
/** Line breaks and tabs made visible, as in the mask view. */
const visible = (text: string) => text.replace(/\t/g, '→\t').replace(/\r/g, '␍').replace(/\n/g, '↵\n');

function code(text: string): HTMLElement {
  return h('code', {}, text);
}

/** The decision rows: [label, value (text or element), verdict class]. */
function decisions(m: TemplateCheckModel): [string, Node | string, string][] {
  const c = m.check;
  const rows: [string, Node | string, string][] = [
    [
      'Prefix-stable',
      c.prefixStable ? 'yes — one record per conversation' : 'no — the template rewrites earlier turns; conversations split into several records',
      c.prefixStable ? 'good' : 'warn',
    ],
    [
      'End-of-turn token trained',
      c.endOfTurnTrained.length ? code(c.endOfTurnTrained.join(', ')) : 'none (spans end without a special token)',
      c.endOfTurnTrained.length ? 'good' : 'warn',
    ],
    ['Text after it (not trained)', c.textAfterEndOfTurn.length ? code(c.textAfterEndOfTurn.map(q).join(', ')) : '–', ''],
    ['Default system prompt', c.defaultSystemPrompt === null ? 'none' : code(q(c.defaultSystemPrompt)), c.defaultSystemPrompt === null ? '' : 'warn'],
    ['Generation prompt', c.generationPrompt === null ? '–' : code(q(c.generationPrompt)), ''],
    ['Assistant header in history', c.assistantHeader === null ? '–' : code(q(c.assistantHeader)), ''],
    [
      'Generation prompt scaffold (never trained)',
      c.generationPromptScaffold === null ? 'none' : code(q(c.generationPromptScaffold)),
      c.generationPromptScaffold === null ? '' : 'warn',
    ],
  ];
  // Decisions a newer check reports (argument form, reasoning handling, stop tokens, …): shown as they come.
  const extra = (c as unknown as { decisions?: unknown }).decisions;
  if (extra && typeof extra === 'object' && !Array.isArray(extra))
    for (const [k, v] of Object.entries(extra as Record<string, unknown>))
      rows.push([k.replace(/_/g, ' '), typeof v === 'string' ? v : code(JSON.stringify(v)), '']);
  return rows;
}

/** Draws the check: head with its actions, the decisions, where the prefix breaks, warnings, and each probe's records. */
function draw(m: TemplateCheckModel): void {
  const rows = decisions(m);
  const table = h(
    'table',
    { class: 'decisions' },
    h('tbody', {}, ...rows.map(([label, value, cls]) => h('tr', { class: cls }, h('th', { scope: 'row' }, label), h('td', {}, value)))),
  );
  const legend = h(
    'div',
    { class: 'legend' },
    h('span', { class: 'seg trained' }, 'trainable'),
    h('span', { class: 'seg prompt' }, 'prompt (not trained)'),
    h('span', { class: 'seg special prompt' }, '<|special|>'),
    h('span', { class: 'seg special trained' }, '<|special|> trained'),
  );
  const counter = { trainedSegments: 0 };
  const probes = m.probes.map((p) => probeSection(p, counter));
  app.replaceChildren(checkHead(m), table, prefixBreaksOf(m), warningsOf(m), h('h2', { class: 'sub' }, 'Probe renders'), legend, ...probes);
  send({ type: 'drawn', probes: m.probes.length, trainedSegments: counter.trainedSegments, decisions: rows.map((r) => r[0]) });
}

/** The head: the tokenizer, scope, hash and mask, and the actions (check again, select tokenizer, template kwargs). */
function checkHead(m: TemplateCheckModel): HTMLElement {
  const c = m.check;
  return h(
    'header',
    { class: 'head' },
    h('h2', {}, `Chat template: ${c.tokenizer.name}`),
    h('span', { class: 'muted' }, `${m.scope} · hash ${c.tokenizer.hash} · mask ${c.mask}`),
    h(
      'span',
      { class: 'actions' },
      ...(
        [
          ['Check again', 'recheck'],
          ['Select tokenizer…', 'selectTokenizer'],
          ['Template kwargs…', 'openSettings'],
        ] as const
      ).map(([label, action]) => {
        const b = h('vscode-button', { secondary: '' }, label);
        b.addEventListener('click', () => send({ type: 'action', action }));
        return b;
      }),
    ),
  );
}

/** Where the prefix breaks, each with what was expected and what was rendered; nothing when it never breaks. */
function prefixBreaksOf(m: TemplateCheckModel): HTMLElement | string {
  const c = m.check;
  if (!c.prefixBreaks.length) return '';
  return h(
    'section',
    {},
    h('h3', {}, 'Where the prefix breaks'),
    h(
      'ul',
      {},
      ...c.prefixBreaks.map((b) =>
        h('li', {}, `${b.probe}, turn ${b.turn}: `, code(b.kind), ` at character ${b.at}: expected `, code(q(b.expected)), ', rendered ', code(q(b.actual))),
      ),
    ),
  );
}

/** The check's warnings with their codes, or "No warning.". */
function warningsOf(m: TemplateCheckModel): HTMLElement {
  const c = m.check;
  return c.warnings.length
    ? h(
        'section',
        {},
        h('h3', {}, `Warnings (${c.warnings.length})`),
        h('ul', { class: 'warnings' }, ...c.warnings.map((w) => h('li', {}, w.probe ? `${w.probe}: ` : '', code(w.code), ` ${w.message}`))),
      )
    : h('p', { class: 'good-text' }, 'No warning.');
}

/** One probe: its template error, or each record's text coloured by segment (trained segments counted). */
function probeSection(p: TemplateCheckModel['probes'][number], counter: { trainedSegments: number }): HTMLElement {
  const sec = h('section', { class: 'probe' }, h('h3', {}, `probe ${p.probe}`, ' ', h('span', { class: 'muted' }, `— ${p.title} (template "${p.template}")`)));
  if (p.error !== null) {
    sec.append(h('p', { class: 'error' }, `template error: ${p.error}`));
    return sec;
  }
  p.records.forEach((r, k) => {
    const text = h('div', { class: 'record-text' });
    for (const s of r.segments) {
      if (s.trained) counter.trainedSegments++;
      text.append(h('span', { class: `seg ${s.trained ? 'trained' : 'prompt'}${s.special ? ' special' : ''}` }, visible(s.text)));
    }
    sec.append(
      h(
        'div',
        { class: 'record-label' },
        h('vscode-badge', {}, `record ${k + 1}/${p.records.length}`),
        ` trains turn${r.targets.length === 1 ? '' : 's'} ${r.targets.join(', ') || '–'}`,
      ),
      text,
    );
  });
  return sec;
}

window.addEventListener('message', (e: MessageEvent) => {
  const m: unknown = e.data;
  if (!isTemplateCheckHostMessage(m)) return;
  if (m.type === 'busy') app.replaceChildren(h('p', { class: 'muted' }, m.message));
  else if (m.type === 'error') app.replaceChildren(h('p', { class: 'error' }, m.message));
  else draw(m.model);
});

send({ type: 'ready' });
