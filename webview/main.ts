/**
 * The mask view's page (bundled to dist/webview.js, styles to dist/webview.css).
 * It draws what the host sends (maskViewProtocol.ts `HostMessage`) and asks the
 * host for other rows, records, policies and template kwargs (`WebviewMessage`).
 * No remote content; all text is inserted as text (never as HTML).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import './style.css';
import type { RecordView, TokenView } from '../src/core/records/recordView';
import { type HostMessage, isHostMessage, MASK_POLICIES, type MaskViewState, type ThinkingChoice, type WebviewMessage } from '../src/vscode/maskViewProtocol';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; setState(s: unknown): void; getState(): unknown };
const vscode = acquireVsCodeApi();
const send = (m: WebviewMessage): void => vscode.postMessage(m);

type El = HTMLElement & { value?: string; disabled?: boolean };

function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): El {
  const e = document.createElement(tag) as El;
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

const fmt = (n: number, est = false): string => `${est ? '≈' : ''}${n.toLocaleString('en-US')}`;

function select(id: string, label: string, options: [string, string][], value: string, onChange: (v: string) => void): HTMLElement {
  const sel = h('vscode-single-select', { id, 'aria-label': label }) as El;
  for (const [v, text] of options) {
    const o = h('vscode-option', { value: v }, text);
    if (v === value) o.setAttribute('selected', '');
    sel.append(o);
  }
  sel.addEventListener('change', () => onChange(String(sel.value)));
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), sel);
}

function button(label: string, title: string, onClick: () => void, disabled = false): HTMLElement {
  const b = h('vscode-button', { title, secondary: '' }, label) as El;
  if (disabled) b.setAttribute('disabled', '');
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

/** How a token's characters are shown: line breaks and tabs made visible. */
function visible(text: string): string {
  return text.replace(/\t/g, '→\t').replace(/\r/g, '␍').replace(/\n/g, '↵\n');
}

const app = document.getElementById('app')!;
let busy: HTMLElement | undefined;

function render(state: MaskViewState, view: RecordView, truncated: number, elapsedMs: number): number {
  const toolbar = h('div', { class: 'toolbar', role: 'toolbar' });
  const lineField = h('vscode-textfield', { id: 'line', type: 'number', value: String(state.line), 'aria-label': 'Line', size: '6' }) as El;
  const go = (): void => {
    const n = Number(lineField.value);
    if (Number.isInteger(n) && n >= 1) send({ type: 'goToLine', line: n });
  };
  lineField.addEventListener('keydown', (e) => {
    if ((e as KeyboardEvent).key === 'Enter') go();
  });
  toolbar.append(
    button('◀ Previous row', 'Previous non-blank row', () => send({ type: 'step', direction: -1 }), state.line <= 1),
    button('Next row ▶', 'Next non-blank row', () => send({ type: 'step', direction: 1 }), state.lineCount > 0 && state.line >= state.lineCount),
    h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Line'), lineField),
    button('Go', 'Show the row on this line', go),
    h(
      'span',
      { class: 'where' },
      `${state.fileName} · line ${state.line} of ${fmt(state.lineCount)} · read from ${state.source === 'editor' ? 'the editor' : 'disk'}`,
    ),
    button('Reveal', 'Show this line in the editor', () => send({ type: 'reveal' })),
  );
  const controls = h('div', { class: 'toolbar' });
  controls.append(
    select(
      'mask',
      'Mask policy',
      MASK_POLICIES.map((p) => [p, p]),
      state.mask,
      (v) => send({ type: 'setMask', mask: v as MaskViewState['mask'] }),
    ),
    select(
      'thinking',
      'enable_thinking',
      [
        ['settings', `from settings${view.templateKwargs.enable_thinking === undefined ? '' : ` (${String(view.templateKwargs.enable_thinking)})`}`],
        ['on', 'true (thinking on)'],
        ['off', 'false (thinking off)'],
      ],
      state.thinking,
      (v) => send({ type: 'setThinking', thinking: v as ThinkingChoice }),
    ),
  );
  if (view.records.length > 0) {
    controls.append(
      select(
        'record',
        `Record (${view.records.length})`,
        view.records.map((r) => [
          String(r.index),
          `#${r.index} ${r.id} — ${fmt(r.tokens, r.estimated)} tokens, ${fmt(r.trainableTokens, r.estimated)} trainable`,
        ]),
        String(state.record),
        (v) => send({ type: 'record', index: Number(v) }),
      ),
    );
  }

  const t = view.totals;
  const summary = h('div', { class: 'summary' });
  const badge = (text: string, cls = ''): HTMLElement => h('span', { class: `pill ${cls}` }, text);
  summary.append(
    badge(view.shape ? view.shape.format : 'unknown shape', 'shape'),
    h('span', {}, view.shape?.description ?? ''),
    h('span', { class: 'sep' }, '·'),
    h('span', {}, `${view.turns.length} turns`),
  );
  if (view.status === 'conversation') {
    summary.append(
      h('span', { class: 'sep' }, '·'),
      h('strong', {}, `${fmt(t.tokens, t.estimated)} tokens`),
      h('span', {}, ', '),
      h('strong', { class: 'trainable-text' }, `${fmt(t.trainableTokens, t.estimated)} trainable`),
      h('span', {}, ` in ${t.records} record${t.records === 1 ? '' : 's'}`),
    );
  } else {
    summary.append(
      h('span', { class: 'sep' }, '·'),
      h('strong', {}, view.status === 'prompt' ? 'prompt only (set aside)' : `${view.status}${view.reason ? ` (${view.reason})` : ''}`),
    );
  }
  summary.append(h('span', { class: 'sep' }, '·'), h('span', {}, `tokenizer ${view.tokenizer.name}${view.template ? `, template ${view.template}` : ''}`));

  const legend = h(
    'div',
    { class: 'legend' },
    h('span', { class: 'tok trainable' }, 'trainable'),
    h('span', { class: 'tok prompt' }, 'prompt (not trained)'),
    h('span', { class: 'tok special prompt' }, '<|special|>'),
    h('span', { class: 'tok special trainable' }, '<|special|> trained'),
    h('span', { class: 'muted' }, `rendered in ${elapsedMs} ms`),
  );

  const warnings = h('ul', { class: 'warnings' });
  for (const w of view.warnings) warnings.append(h('li', {}, h('span', { class: 'warn-code' }, w.code), ' ', w.message));
  if (view.message && !view.warnings.length) warnings.append(h('li', {}, view.message));

  const status = h('div', { class: 'status', 'aria-live': 'polite' }, 'Hover a token for its id and position.');
  const body = h('div', { class: 'tokens', role: 'document' });
  const detail = view.detail;
  let drawn = 0;
  if (detail) {
    const frag = document.createDocumentFragment();
    let group: HTMLElement | undefined;
    let groupTurn = Number.NaN;
    const tokens: TokenView[] = detail.tokens;
    tokens.forEach((tok, k) => {
      if (tok.turn !== groupTurn) {
        groupTurn = tok.turn;
        const turn = view.turns[tok.turn];
        const role = turn ? turn.role : 'template';
        group = h('section', { class: `turn role-${role}${turn?.target ? ' target' : ''}` });
        const label = turn ? `turn ${turn.index + 1} · ${turn.role}${turn.target ? ' · trained' : ''}` : 'template text';
        group.append(h('div', { class: 'turn-label' }, h('vscode-badge', { variant: turn?.target ? 'counter' : 'default' }, label)));
        group.append(h('div', { class: 'turn-text' }));
        frag.append(group);
      }
      const cls = `tok ${tok.trainable ? 'trainable' : 'prompt'}${tok.special ? ' special' : ''}${k % 2 ? ' odd' : ''}`;
      const span = h('span', { class: cls, 'data-k': String(k) }, visible(tok.text));
      span.title = `token ${k} · id ${tok.id} · offset ${tok.start}${tok.special ? ' · special' : ''} · ${tok.trainable ? 'trainable (loss_mask 1)' : 'prompt (loss_mask 0)'}`;
      group!.lastElementChild!.append(span);
      drawn++;
    });
    body.append(frag);
    if (truncated > 0) body.append(h('p', { class: 'muted' }, `… ${fmt(truncated)} more tokens not shown.`));
    body.addEventListener('mouseover', (e) => {
      const target = (e.target as HTMLElement).closest('.tok') as HTMLElement | null;
      if (!target?.dataset.k) return;
      const k = Number(target.dataset.k);
      const tok = tokens[k];
      const turn = view.turns[tok.turn];
      status.textContent =
        `token ${k} of ${fmt(tokens.length + truncated)} · id ${tok.id} · ${JSON.stringify(tok.text)} · character offset ${tok.start}` +
        `${tok.special ? ' · special token' : ''} · ${tok.trainable ? 'trainable (loss_mask 1)' : 'prompt (loss_mask 0)'}` +
        ` · ${turn ? `turn ${turn.index + 1} (${turn.role})` : 'template text'}`;
    });
  } else if (view.status === 'conversation') {
    body.append(h('p', { class: 'muted' }, 'This row yields no record under this policy.'));
  }

  app.replaceChildren(toolbar, controls, h('vscode-divider', {}), summary, legend, warnings, body, status);
  busy = undefined;
  return drawn;
}

function showError(state: MaskViewState, message: string): void {
  const toolbar = h('div', { class: 'toolbar' });
  toolbar.append(
    button('◀ Previous row', 'Previous non-blank row', () => send({ type: 'step', direction: -1 }), state.line <= 1),
    button('Next row ▶', 'Next non-blank row', () => send({ type: 'step', direction: 1 })),
    h('span', { class: 'where' }, `${state.fileName} · line ${state.line}`),
  );
  app.replaceChildren(toolbar, h('p', { class: 'error' }, message));
}

window.addEventListener('message', (e: MessageEvent) => {
  const m: unknown = e.data;
  if (!isHostMessage(m)) return;
  const msg: HostMessage = m;
  switch (msg.type) {
    case 'busy':
      if (!busy) {
        busy = h('div', { class: 'busy' }, msg.message);
        app.prepend(busy);
      } else busy.textContent = msg.message;
      break;
    case 'render': {
      const tokens = render(msg.state, msg.view, msg.truncatedTokens, msg.elapsedMs);
      vscode.setState(msg.state);
      send({ type: 'rendered', line: msg.state.line, record: msg.state.record, tokens });
      break;
    }
    case 'error':
      showError(msg.state, msg.message);
      send({ type: 'rendered', line: msg.state.line, record: msg.state.record, tokens: 0 });
      break;
  }
});

send({ type: 'ready' });
