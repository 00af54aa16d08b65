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
import {
  type ExactCounts,
  type HostMessage,
  isHostMessage,
  MASK_POLICIES,
  MASK_POLICY_DESCRIPTIONS,
  turnLabel,
  type MaskViewState,
  type RecordView,
  type TokenRange,
  type TokenView,
  type ThinkingChoice,
  type WebviewMessage,
} from '../src/shared/maskViewProtocol';

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

function select(id: string, label: string, options: [string, string, string?][], value: string, onChange: (v: string) => void): HTMLElement {
  const sel = h('vscode-single-select', { id, 'aria-label': label }) as El;
  for (const [v, text, description] of options) {
    const o = h('vscode-option', description ? { value: v, description } : { value: v }, text);
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

/** Text of the counts line: exact from the output, computed from the line, or an estimate. */
function countsLine(view: RecordView, exact: ExactCounts): { text: string; source: string; title: string } {
  const t = view.totals;
  if ('records' in exact)
    return {
      text: `${fmt(exact.tokens)} tokens, ${fmt(exact.trainableTokens)} trainable in ${exact.records.length} record${exact.records.length === 1 ? '' : 's'}`,
      source: 'exact',
      title: `From the current prepared output ${exact.tokenizedData}`,
    };
  return {
    text: `${fmt(t.tokens, t.estimated)} tokens, ${fmt(t.trainableTokens, t.estimated)} trainable in ${t.records} record${t.records === 1 ? '' : 's'}`,
    source: t.estimated ? 'estimate' : 'computed',
    title: `Not from a prepared output: ${exact.none}`,
  };
}

type Detail = NonNullable<RecordView['detail']>;

/** Draws a record view: toolbars, summary, legend, warnings, the tokens by turn and the trained-span navigation. */
function render(
  state: MaskViewState,
  view: RecordView,
  shown: readonly TokenRange[],
  truncated: number,
  elapsedMs: number,
  exact: ExactCounts,
  because?: string,
): { drawn: number; labels: string[]; trainedSpans: number } {
  const status = h(
    'div',
    { class: 'status', 'aria-live': 'polite' },
    'Hover a token for its id and position; click it to reveal its turn and field in the JSON source.',
  );
  const body = h('div', { class: 'tokens', role: 'document' });
  let drawn: DrawnTokens = { drawn: 0, labels: [], spanStarts: [] };
  if (view.detail) drawn = drawTokens(view, view.detail, shown, truncated, body, status);
  else if (view.status === 'conversation') body.append(h('p', { class: 'muted' }, 'This row yields no record under this policy.'));
  const { spanStarts } = drawn;
  const notice = because ? h('div', { class: 'notice', role: 'status' }, because) : '';
  app.replaceChildren(
    rowToolbar(state),
    viewControls(state, view),
    h('vscode-divider', {}),
    notice,
    summaryOf(view, exact),
    legendOf(elapsedMs),
    warningsOf(view),
    spanNavigation(spanStarts, body),
    body,
    status,
  );
  // The view opens where the training is: the first trained span, when it is below the fold.
  const first = spanStarts[0];
  if (first) requestAnimationFrame(() => first.getBoundingClientRect().top > window.innerHeight && first.scrollIntoView({ block: 'center' }));
  busy = undefined;
  return { drawn: drawn.drawn, labels: drawn.labels, trainedSpans: spanStarts.length };
}

/** The row toolbar: previous / next row, the line field and Go, Reveal, and where the row is. */
function rowToolbar(state: MaskViewState): HTMLElement {
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
    button('◀ Row', 'Previous non-blank row', () => send({ type: 'step', direction: -1 }), state.line <= 1),
    button('Row ▶', 'Next non-blank row', () => send({ type: 'step', direction: 1 }), state.lineCount > 0 && state.line >= state.lineCount),
    h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Line'), lineField),
    button('Go', 'Show the row on this line', go),
    button('Reveal', 'Show this line in the editor', () => send({ type: 'reveal' })),
    h(
      'span',
      { class: 'where' },
      `${state.fileName} · line ${state.line} of ${fmt(state.lineCount)} · read from ${state.source === 'editor' ? 'the editor' : 'disk'}`,
    ),
  );
  return toolbar;
}

/** The view's controls: the mask policy, enable_thinking, and the record shown (when the row has records). */
function viewControls(state: MaskViewState, view: RecordView): HTMLElement {
  const controls = h('div', { class: 'toolbar controls' });
  const policy = select(
    'mask',
    'Mask policy',
    MASK_POLICIES.map((p) => [p, p, MASK_POLICY_DESCRIPTIONS[p]]),
    state.mask,
    (v) => send({ type: 'setMask', mask: v as MaskViewState['mask'] }),
  );
  controls.append(
    h(
      'div',
      { class: 'control' },
      policy,
      h(
        'span',
        { class: 'hint', id: 'mask-desc' },
        `${MASK_POLICY_DESCRIPTIONS[state.mask]}${state.maskFromSettings ? ' (from settings)' : ' (this view only)'}`,
      ),
    ),
    h(
      'div',
      { class: 'control' },
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
    ),
  );
  if (view.records.length > 0) {
    controls.append(
      h(
        'div',
        { class: 'control' },
        select(
          'record',
          `Record (${view.records.length})`,
          view.records.map((r) => [
            String(r.index),
            `#${r.index} · ${fmt(r.tokens, r.estimated)} tokens · ${fmt(r.trainableTokens, r.estimated)} trainable`,
            `${r.id}: trains turn${r.targets.length === 1 ? '' : 's'} ${r.targets.map((x) => x + 1).join(', ') || '–'}`,
          ]),
          String(state.record),
          (v) => send({ type: 'record', index: Number(v) }),
        ),
      ),
    );
  }
  return controls;
}

/** The summary line: shape, turns, the counts with their source (or the row's status), tokenizer and template. */
function summaryOf(view: RecordView, exact: ExactCounts): HTMLElement {
  const summary = h('div', { class: 'summary' });
  const badge = (text: string, cls = '', title = ''): HTMLElement => h('span', { class: `pill ${cls}`, title }, text);
  summary.append(
    badge(view.shape ? view.shape.format : 'unknown shape', 'shape'),
    h('span', {}, view.shape?.description ?? ''),
    h('span', { class: 'sep' }, '·'),
    h('span', {}, `${view.turns.length} turns`),
  );
  if (view.status === 'conversation') {
    const c = countsLine(view, exact);
    summary.append(h('span', { class: 'sep' }, '·'), h('strong', { class: 'counts' }, c.text), badge(c.source, `source source-${c.source}`, c.title));
  } else {
    summary.append(
      h('span', { class: 'sep' }, '·'),
      h('strong', {}, view.status === 'prompt' ? 'prompt only (set aside)' : `${view.status}${view.reason ? ` (${view.reason})` : ''}`),
    );
  }
  summary.append(h('span', { class: 'sep' }, '·'), h('span', {}, `tokenizer ${view.tokenizer.name}${view.template ? `, template ${view.template}` : ''}`));
  return summary;
}

/** The legend of the token colours, and the render time. */
function legendOf(elapsedMs: number): HTMLElement {
  return h(
    'div',
    { class: 'legend' },
    h('span', { class: 'tok trainable' }, 'trainable'),
    h('span', { class: 'tok prompt' }, 'prompt (not trained)'),
    h('span', { class: 'tok special prompt' }, '<|special|>'),
    h('span', { class: 'tok special trainable' }, '<|special|> trained'),
    h('span', { class: 'muted' }, `rendered in ${elapsedMs} ms · click a token to reveal its source`),
  );
}

/** The row's warnings with their codes (or its message when it has none). */
function warningsOf(view: RecordView): HTMLElement {
  const warnings = h('ul', { class: 'warnings' });
  for (const w of view.warnings) warnings.append(h('li', {}, h('span', { class: 'warn-code' }, w.code), ' ', w.message));
  if (view.message && !view.warnings.length) warnings.append(h('li', {}, view.message));
  return warnings;
}

/** What drawing the tokens gave: tokens drawn, each turn group's label, and the first token of each trained span. */
interface DrawnTokens {
  drawn: number;
  labels: string[];
  spanStarts: HTMLElement[];
}

/** A run of consecutive drawn tokens of one turn; `trained` when one of its tokens is. */
interface TurnGroup {
  turn: number;
  from: number;
  to: number;
  trained: boolean;
}

/**
 * The record's tokens into `body`, by turn, with the gaps of a long record's undrawn ranges; hovering a token
 * describes it in `status`, clicking it reveals its turn and field in the source.
 */
function drawTokens(view: RecordView, detail: Detail, shown: readonly TokenRange[], truncated: number, body: HTMLElement, status: HTMLElement): DrawnTokens {
  const frag = document.createDocumentFragment();
  const tokens: TokenView[] = detail.tokens;
  // The record index of each drawn token (a long record is drawn in ranges around its trained spans).
  const index = shown.length ? shown.flatMap((r) => Array.from({ length: r.to - r.from }, (_, i) => r.from + i)) : tokens.map((_, k) => k);
  const total = tokens.length + truncated;
  const out: DrawnTokens = { drawn: 0, labels: [], spanStarts: [] };
  const groups = turnGroups(tokens, index);
  for (const [gi, g] of groups.entries()) {
    // A gap in the drawn ranges: say how many tokens are not drawn there.
    const gapBefore = gi === 0 ? index[0] : index[g.from] - index[g.from - 1] - 1;
    if (gapBefore > 0) frag.append(h('p', { class: 'muted gap' }, `… ${fmt(gapBefore)} tokens not shown …`));
    frag.append(drawGroup(view, tokens, index, g, out));
  }
  body.append(frag);
  const after = total - 1 - (index[index.length - 1] ?? -1);
  if (after > 0) body.append(h('p', { class: 'muted gap' }, `… ${fmt(after)} more tokens not shown.`));
  listenToTokens(view, detail, index, total, body, status);
  return out;
}

/** Groups of consecutive tokens of one turn (a gap in the drawn ranges starts a new group). */
function turnGroups(tokens: TokenView[], index: number[]): TurnGroup[] {
  const groups: TurnGroup[] = [];
  tokens.forEach((tok, k) => {
    const g = groups[groups.length - 1];
    if (!g || g.turn !== tok.turn || index[k] !== index[k - 1] + 1) groups.push({ turn: tok.turn, from: k, to: k + 1, trained: tok.trainable });
    else {
      g.to = k + 1;
      g.trained ||= tok.trainable;
    }
  });
  return groups;
}

/** One turn group as a section: its label, then each token as a span (counted, and noted when it starts a trained span). */
function drawGroup(view: RecordView, tokens: TokenView[], index: number[], g: TurnGroup, out: DrawnTokens): HTMLElement {
  const turn = view.turns[g.turn];
  const role = turn ? turn.role : 'template';
  const label = turnLabel(view, g.turn, g.trained);
  out.labels.push(label);
  const section = h('section', { class: `turn role-${role}${g.trained ? ' target' : ''}` });
  section.append(h('div', { class: 'turn-label' }, h('vscode-badge', { variant: g.trained ? 'counter' : 'default' }, label)));
  const textEl = h('div', { class: 'turn-text' });
  for (let k = g.from; k < g.to; k++) {
    const tok = tokens[k];
    const cls = `tok ${tok.trainable ? 'trainable' : 'prompt'}${tok.special ? ' special' : ''}${k % 2 ? ' odd' : ''}`;
    const span = h('span', { class: cls, 'data-k': String(k) }, visible(tok.text));
    span.title = `token ${index[k]} · id ${tok.id} · offset ${tok.start}${tok.special ? ' · special' : ''} · ${tok.trainable ? 'trainable (loss_mask 1)' : 'prompt (loss_mask 0)'}`;
    if (tok.trainable && (k === 0 || !tokens[k - 1].trainable || index[k] !== index[k - 1] + 1)) out.spanStarts.push(span);
    if (k > g.from) textEl.append(document.createElement('wbr'));
    textEl.append(span);
    out.drawn++;
  }
  section.append(textEl);
  return section;
}

/** Hover: the token's id, position, mask and source turn and field in `status`; click: reveal its turn and field. */
function listenToTokens(view: RecordView, detail: Detail, index: number[], total: number, body: HTMLElement, status: HTMLElement): void {
  const tokens: TokenView[] = detail.tokens;
  const fieldOf = (tok: TokenView) => detail.fieldSpans?.find((f) => f.turn === tok.turn && tok.start >= f.start && tok.start < f.end)?.field;
  body.addEventListener('mouseover', (e) => {
    const target = (e.target as HTMLElement).closest('.tok') as HTMLElement | null;
    if (!target?.dataset.k) return;
    const k = Number(target.dataset.k);
    const tok = tokens[k];
    const turn = view.turns[tok.turn];
    const field = fieldOf(tok);
    status.textContent =
      `token ${index[k]} of ${fmt(total)} · id ${tok.id} · ${JSON.stringify(tok.text)} · character offset ${tok.start}` +
      `${tok.special ? ' · special token' : ''} · ${tok.trainable ? 'trainable (loss_mask 1)' : 'prompt (loss_mask 0)'}` +
      ` · ${turn ? `turn ${turn.index + 1} (${turn.role})${field ? `, ${field}` : ''}` : 'template text'}`;
  });
  body.addEventListener('click', (e) => {
    const target = (e.target as HTMLElement).closest('.tok') as HTMLElement | null;
    if (!target?.dataset.k) return;
    const tok = tokens[Number(target.dataset.k)];
    if (tok.turn < 0) return;
    const field = fieldOf(tok);
    send(field ? { type: 'revealToken', turn: tok.turn, field } : { type: 'revealToken', turn: tok.turn });
  });
}

/** Previous / next trained span buttons: relative to the last one jumped to, which flashes. */
function spanNavigation(spanStarts: HTMLElement[], body: HTMLElement): HTMLElement {
  let at = -1;
  const where = h(
    'span',
    { class: 'muted', id: 'span-pos' },
    spanStarts.length ? `${spanStarts.length} trained span${spanStarts.length === 1 ? '' : 's'}` : 'no trained span',
  );
  const jump = (dir: 1 | -1) => {
    if (!spanStarts.length) return;
    at = at < 0 ? (dir === 1 ? 0 : spanStarts.length - 1) : Math.min(spanStarts.length - 1, Math.max(0, at + dir));
    const el = spanStarts[at];
    el.scrollIntoView({ block: 'center' });
    body.querySelectorAll('.flash').forEach((f) => f.classList.remove('flash'));
    el.classList.add('flash');
    where.textContent = `trained span ${at + 1} of ${spanStarts.length}`;
  };
  return h(
    'div',
    { class: 'toolbar spans' },
    button('◀ Trained span', 'Scroll to the previous trained span', () => jump(-1), spanStarts.length === 0),
    button('Trained span ▶', 'Scroll to the next trained span', () => jump(1), spanStarts.length === 0),
    where,
  );
}

function showError(state: MaskViewState, message: string): void {
  const toolbar = h('div', { class: 'toolbar' });
  toolbar.append(
    button('◀ Row', 'Previous non-blank row', () => send({ type: 'step', direction: -1 }), state.line <= 1),
    button('Row ▶', 'Next non-blank row', () => send({ type: 'step', direction: 1 })),
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
      const { drawn, labels, trainedSpans } = render(msg.state, msg.view, msg.shown ?? [], msg.truncatedTokens, msg.elapsedMs, msg.exact, msg.because);
      vscode.setState(msg.state);
      send({ type: 'rendered', line: msg.state.line, record: msg.state.record, tokens: drawn, labels, trainedSpans });
      break;
    }
    case 'error':
      showError(msg.state, msg.message);
      send({ type: 'rendered', line: msg.state.line, record: msg.state.record, tokens: 0 });
      break;
  }
});

send({ type: 'ready' });
