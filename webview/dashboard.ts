/**
 * The dataset dashboard's page (bundled to dist/dashboard.js, styles to dist/dashboard.css).
 * Draws the model the host sends (dashboardProtocol.ts): figures as text, charts with Chart.js
 * (bundled; canvas only, so the strict CSP holds), coloured from VS Code's theme variables and
 * redrawn when the theme changes. Every chart has its numbers in text beside it (percentiles, a
 * caption) and an aria-label, so nothing is only in a picture. All text is inserted as text.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import './dashboard.css';
import { Chart } from 'chart.js';
import type { DatasetDashboard, OutputStats, WorkspaceDashboard } from '../src/shared/dashboardModel';
import {
  isDashboardHostMessage,
  type DashboardAction,
  type DashboardDrawn,
  type DashboardHostMessage,
  type DashboardWebviewMessage,
} from '../src/shared/dashboardProtocol';
import type { DashboardModel } from '../src/shared/dashboardModel';
import { baseOptions, card, charts, clearCharts, drawnCharts, fmt, h, histogramCard, notComputed, pct, reasonsCard, shareCard, theme } from './dashboardCharts';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; setState(s: unknown): void; getState(): unknown };
const vscode = acquireVsCodeApi();
const send = (m: DashboardWebviewMessage): void => vscode.postMessage(m);

const app = document.getElementById('app')!;

// ------------------------------------------------------------------ sections

const figures: Record<string, string> = {};
let notComputedCount = 0;

function kpi(id: string, label: string, value: string, sub = ''): HTMLElement {
  figures[id] = value;
  return h(
    'div',
    { class: 'kpi', 'data-figure': id },
    h('div', { class: 'kpi-value' }, value),
    h('div', { class: 'kpi-label' }, label),
    ...(sub ? [h('div', { class: 'kpi-sub' }, sub)] : []),
  );
}

function actionButton(label: string, action: DashboardAction, file?: string): HTMLElement {
  const b = h('vscode-button', { secondary: '' }, label);
  b.addEventListener('click', () => send(file ? { type: 'action', action, file } : { type: 'action', action }));
  return b;
}

function statsCards(stats: OutputStats | null, source: string | null): HTMLElement[] {
  const t = theme();
  if (!stats) {
    notComputedCount += 4;
    return [
      notComputed('seq_len per record', 'tokenized_data.jsonl is missing, so record lengths are unknown'),
      notComputed('Trainable tokens per record', 'record lengths are unknown'),
      notComputed('Records per conversation', 'record lengths are unknown'),
      notComputed('Amplification', 'record lengths are unknown'),
    ];
  }
  const from = source === 'report' ? 'from report.json' : 'from tokenized_data.jsonl';
  figures.amplification = `${fmt(stats.amplificationOverall)}×`;
  return [
    histogramCard('seqLen', `seq_len per record (${from})`, stats.seqLen, 'tokens per record', t.blue),
    histogramCard('trainablePerRecord', 'Trainable tokens per record', stats.trainablePerRecord, 'trainable tokens per record', t.green),
    histogramCard('recordsPerConversation', 'Records per conversation', stats.recordsPerConversation, 'records per source row', t.purple),
    stats.amplification
      ? histogramCard(
          'amplification',
          `Amplification per conversation (overall ${fmt(stats.amplificationOverall)}×)`,
          stats.amplification,
          'tokens written ÷ longest record',
          t.orange,
          false,
        )
      : amplificationCard(stats),
  ];
}

/** Amplification as one figure (the report's): records' tokens ÷ the conversations rendered once. */
function amplificationCard(stats: OutputStats): HTMLElement {
  notComputedCount++;
  return h(
    'section',
    { class: 'card', 'data-chart': 'amplification' },
    h('h3', {}, 'Amplification'),
    h('div', { class: 'big-figure' }, `${fmt(stats.amplificationOverall)}×`),
    h(
      'p',
      { class: 'caption' },
      `${fmt(stats.totalTokens)} tokens written for ${fmt(stats.conversations)} conversations that render to ${fmt(stats.renderedTokens ?? 0)} tokens once (report.json). Per-conversation distribution: not computed by this run.`,
    ),
  );
}

function groupingTable(d: DatasetDashboard): HTMLElement {
  const row = (name: string, g: DatasetDashboard['grouping']['exact'], used: boolean) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, `${name}${used ? ' (this run)' : ''}`),
      ...(g
        ? [h('td', {}, fmt(g.records)), h('td', {}, fmt(g.tokens)), h('td', {}, fmt(g.trainableTokens))]
        : [h('td', { colspan: '3', class: 'muted' }, 'not computed by this run')]),
    );
  if (!d.grouping.exact || !d.grouping.merged) notComputedCount++;
  return h(
    'section',
    { class: 'card' },
    h('h3', {}, 'Record grouping: exact vs merged'),
    h(
      'table',
      { class: 'grid' },
      h('thead', {}, h('tr', {}, h('th', {}, 'grouping'), h('th', {}, 'records'), h('th', {}, 'tokens'), h('th', {}, 'trainable'))),
      h('tbody', {}, row('exact', d.grouping.exact, d.grouping.used === 'exact'), row('merged', d.grouping.merged, d.grouping.used === 'merged')),
    ),
  );
}

function datasetView(d: DatasetDashboard): HTMLElement[] {
  const head = h(
    'header',
    { class: 'head' },
    h('h2', {}, d.name),
    h('span', { class: `status status-${d.status}`, 'data-figure': 'status' }, d.status),
    h(
      'span',
      { class: 'muted' },
      `${d.outDir} · tokenizer ${d.tokenizer.name} · mask ${d.settings.mask}${d.settings.maxLength ? ` · max length ${fmt(d.settings.maxLength)}` : ''}`,
    ),
    h(
      'span',
      { class: 'actions' },
      actionButton('Refresh', 'refresh'),
      actionButton('Open report', 'openReport'),
      actionButton('Show problems', 'showProblems'),
      actionButton('Mask view', 'openMaskView'),
    ),
  );
  figures.status = d.status;
  const stale = d.staleBecause.length
    ? h('div', { class: 'stale', role: 'status' }, `Stale output: ${d.staleBecause.join('; ')}. `, actionButton('Prepare again', 'prepare'))
    : '';
  const kpis = h(
    'div',
    { class: 'kpis' },
    kpi(
      'rowsRead',
      'rows read',
      fmt(d.rows.read),
      `${fmt(d.rows.written)} written · ${fmt(d.rows.setAside)} set aside · ${fmt(d.rows.dropped)} dropped · ${fmt(d.rows.errored)} errored`,
    ),
    kpi('rowsKept', 'rows kept', pct(d.rowsKeptShare)),
    kpi('records', 'records', fmt(d.records)),
    kpi('tokens', 'tokens', fmt(d.tokens.total)),
    kpi('trainable', 'trainable tokens', fmt(d.tokens.trainable)),
    kpi('share', 'trainable share', pct(d.tokens.share)),
  );
  const format = h(
    'section',
    { class: 'card' },
    h('h3', {}, `Detected format: ${d.format.name}`),
    h('ul', { class: 'evidence' }, ...d.format.evidence.map((e) => h('li', {}, e))),
  );
  const grid = h(
    'div',
    { class: 'cards' },
    ...statsCards(d.stats, d.statsSource),
    shareCard(d.tokens.trainable, d.tokens.total),
    reasonsCard(d.reasons, d.errorCodesComplete),
    format,
    groupingTable(d),
  );
  return [head, ...(stale ? [stale] : []), kpis, grid];
}

/** The workspace's dashboard: head, totals, the mixed-tokenizer note, the datasets table and the charts. */
function workspaceView(w: WorkspaceDashboard): HTMLElement[] {
  const t = theme();
  figures.status = w.status;
  const mixed = w.tokenizerNote;
  if (mixed) figures.tokenizerNote = mixed;
  const head = h(
    'header',
    { class: 'head' },
    h('h2', {}, 'Workspace'),
    h('span', { class: `status status-${w.status}` }, w.status),
    h(
      'span',
      { class: 'muted' },
      `${w.datasets.length} prepared dataset${w.datasets.length === 1 ? '' : 's'}${w.notPrepared.length ? ` · not prepared: ${w.notPrepared.join(', ')}` : ''}`,
    ),
    h('span', { class: 'actions' }, actionButton('Refresh', 'refresh'), actionButton('Show problems', 'showProblems')),
  );
  const kpis = h(
    'div',
    { class: 'kpis' },
    kpi('rowsRead', 'rows read', fmt(w.rows.read), `${fmt(w.rows.dropped)} dropped · ${fmt(w.rows.errored)} errored`),
    kpi('records', 'records', fmt(w.records)),
    kpi('tokens', mixed ? `tokens (${w.tokenizers.length} tokenizers mixed)` : 'tokens', fmt(w.tokens.total), mixed ? 'not comparable: see per tokenizer' : ''),
    kpi('trainable', 'trainable tokens', fmt(w.tokens.trainable)),
    kpi('share', 'trainable share', pct(w.tokens.share)),
  );
  const mixedNote = mixed ? [tokenizerNoteCard(w, mixed)] : [];
  const table = datasetsTable(w, !!mixed);
  const perDataset = perDatasetCard(w, t);
  const grid = h(
    'div',
    { class: 'cards' },
    perDataset,
    ...statsCards(w.stats, 'tokenized_data.jsonl'),
    shareCard(w.tokens.trainable, w.tokens.total),
    reasonsCard(w.reasons, true),
  );
  return [head, kpis, ...mixedNote, h('section', { class: 'card wide' }, h('h3', {}, 'Datasets'), h('div', { class: 'table-scroll' }, table)), grid];
}

/** Two tokenizers: the sum adds counts of different vocabularies, so each tokenizer's totals are given beside it. */
function tokenizerNoteCard(w: WorkspaceDashboard, mixed: string): HTMLElement {
  return h(
    'section',
    { class: 'card wide warning-card', 'data-figure': 'tokenizerNote' },
    h('p', { class: 'warning' }, `⚠ ${mixed}`),
    h(
      'div',
      { class: 'table-scroll' },
      h(
        'table',
        { class: 'grid per-tokenizer' },
        h(
          'thead',
          {},
          h('tr', {}, ...['tokenizer', 'datasets', 'records', 'tokens', 'trainable'].map((c) => h('th', c === 'datasets' ? { class: 'text' } : {}, c))),
        ),
        h(
          'tbody',
          {},
          ...w.tokenizers.map((tk) =>
            h(
              'tr',
              {},
              h('th', { scope: 'row' }, `${tk.name} (${tk.hash.slice(0, 8)})`),
              h('td', { class: 'text names' }, tk.datasets.join(', ')),
              h('td', {}, fmt(tk.records)),
              h('td', {}, fmt(tk.tokens)),
              h('td', {}, fmt(tk.trainableTokens)),
            ),
          ),
        ),
      ),
    ),
  );
}

/**
 * The datasets table. It fits a narrow editor (800 px): the dataset name is the link that opens its dashboard, long
 * names and the status wrap, numbers do not; narrower still, the table scrolls inside its card.
 */
function datasetsTable(w: WorkspaceDashboard, mixed: boolean): HTMLElement {
  const columns = ['dataset', 'status', ...(mixed ? ['tokenizer'] : []), 'format', 'rows', 'kept', 'records', 'tokens', 'trainable'];
  return h(
    'table',
    { class: 'grid datasets' },
    h(
      'thead',
      {},
      h('tr', {}, ...columns.map((c) => h('th', { 'data-column': c, ...(['status', 'tokenizer', 'format'].includes(c) ? { class: 'text' } : {}) }, c))),
    ),
    h(
      'tbody',
      {},
      ...w.datasets.map((d) => {
        const open = h('a', { href: '#', class: 'open-dataset', title: `Open the dashboard of ${d.file}` }, d.name);
        open.addEventListener('click', (e) => {
          e.preventDefault();
          send({ type: 'action', action: 'openDataset', file: d.file });
        });
        return h(
          'tr',
          {},
          h('th', { scope: 'row' }, open),
          h(
            'td',
            { class: 'text' },
            h('span', { class: `status status-${d.status}` }, d.status),
            ...(d.staleBecause.length ? [h('span', { class: 'muted stale-mark', title: d.staleBecause.join('; ') }, '⟲ stale')] : []),
          ),
          ...(mixed ? [h('td', { class: 'text' }, d.tokenizer.name)] : []),
          h('td', { class: 'text' }, d.format.name),
          h('td', {}, fmt(d.rows.read)),
          h('td', {}, pct(d.rowsKeptShare)),
          h('td', {}, fmt(d.records)),
          h('td', {}, fmt(d.tokens.total)),
          h('td', { class: 'wrap' }, fmt(d.tokens.trainable), ' ', h('span', { class: 'muted share' }, `(${pct(d.tokens.share)})`)),
        );
      }),
    ),
  );
}

/** The chart of trainable vs prompt / context tokens per dataset (stacked bars). */
function perDatasetCard(w: WorkspaceDashboard, t: ReturnType<typeof theme>): HTMLElement {
  return card(
    'datasets',
    'Tokens per dataset',
    'trainable vs prompt / context tokens written for each dataset',
    (canvas) => {
      const o = baseOptions(t, 'dataset', 'tokens');
      charts.push(
        new Chart(canvas, {
          type: 'bar',
          data: {
            labels: w.datasets.map((d) => d.name),
            datasets: [
              {
                label: 'trainable',
                data: w.datasets.map((d) => d.tokens.trainable),
                backgroundColor: t.green,
                borderColor: t.border,
                borderWidth: t.hc ? 1 : 0,
              },
              {
                label: 'prompt / context',
                data: w.datasets.map((d) => d.tokens.total - d.tokens.trainable),
                backgroundColor: t.grid,
                borderColor: t.border,
                borderWidth: t.hc ? 1 : 0,
              },
            ],
          },
          options: {
            ...o,
            plugins: { ...o!.plugins, legend: { display: true, labels: { color: t.fg, font: { family: t.font } } } },
            scales: { x: { ...o!.scales!.x, stacked: true }, y: { ...o!.scales!.y, stacked: true } },
          },
        }),
      );
    },
    `Tokens per dataset: ${w.datasets.map((d) => `${d.name} ${d.tokens.total}`).join(', ')}`,
    true,
  );
}

// ------------------------------------------------------------------ drawing

let current: DashboardModel | undefined;

function draw(model: DashboardModel): Promise<DashboardDrawn> {
  clearCharts();
  notComputedCount = 0;
  for (const k of Object.keys(figures)) delete figures[k];
  current = model;
  const parts = model.kind === 'dataset' ? datasetView(model.dataset) : workspaceView(model.workspace);
  app.replaceChildren(...parts);
  // Charts are created in microtasks after the cards are in the page (they measure their box).
  return new Promise((resolve) =>
    requestAnimationFrame(() => resolve({ kind: model.kind, charts: [...drawnCharts], figures: { ...figures }, notComputed: notComputedCount })),
  );
}

// The theme changes the body's classes and the CSS variables: redraw with the new colours.
new MutationObserver(() => {
  if (current) void draw(current);
}).observe(document.body, { attributes: true, attributeFilter: ['class'] });

window.addEventListener('message', (e: MessageEvent) => {
  const m: unknown = e.data;
  if (!isDashboardHostMessage(m)) return;
  const msg: DashboardHostMessage = m;
  switch (msg.type) {
    case 'busy':
      if (!current) app.replaceChildren(h('p', { class: 'muted' }, msg.message));
      break;
    case 'error':
      app.replaceChildren(h('p', { class: 'error' }, msg.message));
      send({ type: 'drawn', drawn: { kind: 'dataset', charts: [], figures: {}, notComputed: 0 } });
      break;
    case 'model':
      void draw(msg.model).then((drawn) => send({ type: 'drawn', drawn }));
      break;
  }
});

send({ type: 'ready' });
