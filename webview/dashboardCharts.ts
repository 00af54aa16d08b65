/** The dashboard's charts (docs/vscode.md "Dataset dashboard"): Chart.js cards coloured from VS Code's theme, each with its numbers in text, and the page's element and number helpers. */
import {
  ArcElement,
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  DoughnutController,
  Legend,
  LinearScale,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import type { Distribution, ReasonCount } from '../src/shared/dashboardModel';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend, DoughnutController, ArcElement);

export const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });
export const pct = (x: number) => `${(100 * x).toFixed(1)} %`;

export function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

// ------------------------------------------------------------------ theme

/** Colours from VS Code's theme variables (read at draw time: they change with the theme). */
export function theme() {
  const css = getComputedStyle(document.body);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const hc = document.body.classList.contains('vscode-high-contrast') || document.body.classList.contains('vscode-high-contrast-light');
  return {
    hc,
    fg: v('--vscode-foreground', '#888'),
    muted: v('--vscode-descriptionForeground', '#888'),
    grid: v('--vscode-editorWidget-border', v('--vscode-panel-border', '#8884')),
    border: hc ? v('--vscode-contrastBorder', '#fff') : 'transparent',
    font: v('--vscode-font-family', 'sans-serif'),
    size: parseFloat(v('--vscode-font-size', '13')) || 13,
    blue: v('--vscode-charts-blue', '#3794ff'),
    green: v('--vscode-charts-green', '#89d185'),
    red: v('--vscode-charts-red', '#f14c4c'),
    yellow: v('--vscode-charts-yellow', '#cca700'),
    orange: v('--vscode-charts-orange', '#d18616'),
    purple: v('--vscode-charts-purple', '#b180d7'),
    bg: v('--vscode-editor-background', '#1e1e1e'),
  };
}

export const charts: Chart[] = [];
export let drawnCharts: string[] = [];

export function baseOptions(t: ReturnType<typeof theme>, xTitle: string, yTitle: string, horizontal = false): ChartConfiguration<'bar'>['options'] {
  const axis = (title: string) => ({
    // precision 0: counts are whole numbers (a chart of 1s must not tick 0.2, 0.4, …); category axes ignore it.
    ticks: { color: t.fg, font: { family: t.font, size: t.size - 1 }, precision: 0 },
    grid: { color: t.grid },
    border: { color: t.grid },
    title: { display: true, text: title, color: t.muted, font: { family: t.font, size: t.size - 1 } },
  });
  return {
    indexAxis: horizontal ? 'y' : 'x',
    responsive: true,
    maintainAspectRatio: false,
    animation: false,
    plugins: {
      legend: { display: false },
      tooltip: { titleFont: { family: t.font }, bodyFont: { family: t.font } },
    },
    scales: { x: axis(xTitle), y: { ...axis(yTitle), beginAtZero: true } },
  };
}

/** A chart card: title, canvas (with an aria-label), caption with the numbers. */
export function card(id: string, title: string, caption: string, make: (canvas: HTMLCanvasElement) => void, label: string, wide = false): HTMLElement {
  const canvas = h('canvas', { role: 'img', 'aria-label': label, id: `chart-${id}` }) as HTMLCanvasElement;
  const box = h('div', { class: 'chart-box' }, canvas);
  const el = h('section', { class: `card${wide ? ' wide' : ''}`, 'data-chart': id }, h('h3', {}, title), box, h('p', { class: 'caption' }, caption));
  queueMicrotask(() => {
    make(canvas);
    drawnCharts.push(id);
  });
  return el;
}

export function notComputed(title: string, what: string): HTMLElement {
  return h('section', { class: 'card not-computed' }, h('h3', {}, title), h('p', { class: 'muted' }, `Not computed by this run: ${what}.`));
}

const binLabel = (from: number, to: number, integer: boolean) => (integer && to - from === 1 ? fmt(from) : `${fmt(from)}–${fmt(to)}`);

export function histogramCard(id: string, title: string, d: Distribution, unit: string, color: string, integer = true): HTMLElement {
  const t = theme();
  const caption = `${fmt(d.count)} values · min ${fmt(d.min)} · p50 ${fmt(d.p50)} · mean ${fmt(d.mean)} · p90 ${fmt(d.p90)} · p99 ${fmt(d.p99)} · max ${fmt(d.max)}`;
  return card(
    id,
    title,
    caption,
    (canvas) => {
      charts.push(
        new Chart(canvas, {
          type: 'bar',
          data: {
            labels: d.histogram.map((b) => binLabel(b.from, b.to, integer)),
            datasets: [
              {
                label: 'count',
                data: d.histogram.map((b) => b.count),
                backgroundColor: color,
                borderColor: t.hc ? t.border : color,
                borderWidth: t.hc ? 1 : 0,
                barPercentage: 1,
                categoryPercentage: 0.95,
              },
            ],
          },
          options: baseOptions(t, unit, 'count'),
        }),
      );
    },
    `${title}: histogram of ${d.count} values; ${caption}`,
  );
}

export function reasonsCard(reasons: ReasonCount[], complete: boolean): HTMLElement {
  if (reasons.length === 0)
    return h(
      'section',
      { class: 'card' },
      h('h3', {}, 'Drop and error reasons'),
      h('p', { class: 'ok-text' }, 'No row dropped or errored, no data-changing note.'),
    );
  const t = theme();
  const color = (r: ReasonCount) => (r.kind === 'error' ? t.red : r.kind === 'drop' ? t.orange : t.yellow);
  const list = h('ul', { class: 'reasons' });
  for (const r of reasons)
    list.append(
      h(
        'li',
        {},
        h('span', { class: `kind kind-${r.kind}` }, r.kind),
        ' ',
        h('code', {}, r.code),
        ` × ${fmt(r.count)} — ${r.meaning}`,
        ...(r.remedy ? [h('div', { class: 'muted' }, `What to do: ${r.remedy}`)] : []),
      ),
    );
  const el = card(
    'reasons',
    'Drop and error reasons',
    !reasons.some((r) => r.kind === 'error')
      ? 'no row errored; drops and data-changing notes of the run'
      : complete
        ? 'errors by code (every errored row, from problems.jsonl)'
        : 'errors by code as far as the report lists them',
    (canvas) => {
      charts.push(
        new Chart(canvas, {
          type: 'bar',
          data: {
            labels: reasons.map((r) => `${r.code} (${r.kind})`),
            datasets: [
              {
                label: 'rows / occurrences',
                data: reasons.map((r) => r.count),
                backgroundColor: reasons.map(color),
                borderColor: t.border,
                borderWidth: t.hc ? 1 : 0,
              },
            ],
          },
          options: baseOptions(t, 'rows (notes: occurrences)', '', true),
        }),
      );
    },
    `Drop and error reasons: ${reasons.map((r) => `${r.code} ${r.count}`).join(', ')}`,
  );
  el.querySelector('.chart-box')!.classList.add(`rows-${Math.min(reasons.length, 12)}`);
  el.append(list);
  return el;
}

export function shareCard(trainable: number, total: number): HTMLElement {
  const t = theme();
  return card(
    'share',
    'Trainable share',
    `${fmt(trainable)} of ${fmt(total)} tokens trainable (${pct(total ? trainable / total : 0)}); the rest is prompt and context`,
    (canvas) => {
      charts.push(
        new Chart(canvas, {
          type: 'doughnut',
          data: {
            labels: ['trainable (loss_mask 1)', 'prompt / context (loss_mask 0)'],
            datasets: [
              { data: [trainable, total - trainable], backgroundColor: [t.green, t.grid], borderColor: t.hc ? t.border : t.bg, borderWidth: t.hc ? 2 : 1 },
            ],
          },
          options: {
            responsive: true,
            maintainAspectRatio: false,
            animation: false,
            plugins: { legend: { position: 'bottom', labels: { color: t.fg, font: { family: t.font } } } },
          },
        }),
      );
    },
    `Trainable share ${pct(total ? trainable / total : 0)}`,
  );
}

/** Destroys the drawn charts and forgets their ids (before a redraw). */
export function clearCharts(): void {
  for (const c of charts.splice(0)) c.destroy();
  drawnCharts = [];
}
