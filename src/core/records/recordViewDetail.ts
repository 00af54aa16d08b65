/** The mask view's per-token detail of one record: each token's turn (from prefix renders), trainability and specialness, and where each turn's fields lie in the rendered text. */
import type { ChatTemplate } from '../templates/template';
import type { TargetTokenizer } from '../tokenizers/types';
import type { Conversation, Message, Role } from '../types';
import type { Span, TextRecord } from './mask';
import { commonPrefixLength } from './specialTokens';
import type { RecordDetail, TokenView, TurnField, TurnView } from './recordViewTypes';

/** Tokens of one record with their turn, from prefix renders: turn k starts where the render of messages[:k] stops agreeing with the record's text. */
export function detailOf(
  tokenizer: TargetTokenizer,
  specialSet: ReadonlySet<string>,
  index: number,
  rec: TextRecord,
  ids: number[],
  starts: number[],
  mask: number[],
  conv: Conversation,
  messages: readonly Message[],
  template: ChatTemplate,
  turns: TurnView[],
  prefixRenders: Map<string, string>,
): RecordDetail {
  // Where turn k's header starts: render messages[:k] followed by a stand-in turn k (its role, a
  // placeholder text) and the same with another role; the two renders part where the role is
  // written, and the special tokens right before that point (`<|im_start|>`) open the header.
  // History is rendered as history here, as in the record, so templates that rewrite earlier
  // turns (Qwen3 dropping reasoning) do not shift the boundary. Falls back to the plain
  // prefix render when the template refuses a stand-in (e.g. role alternation checks).
  const render = (k: number, role?: Role): string => {
    const key = `${k}:${role ?? ''}`;
    let r = prefixRenders.get(key);
    if (r === undefined) {
      const msgs = role ? [...messages.slice(0, k), { role, content: 'eagle3 turn placeholder' }] : messages.slice(0, k);
      r = template.render(msgs, conv.tools, { addGenerationPrompt: false });
      prefixRenders.set(key, r);
    }
    return r;
  };
  const headerStart = (k: number): number => {
    const role = messages[k].role;
    const other: Role = role === 'user' ? 'assistant' : 'user';
    try {
      const a = render(k, role);
      let p = Math.min(commonPrefixLength(a, render(k, other)), commonPrefixLength(a, rec.text));
      // Inside a special token (`<｜User｜>` vs `<｜Assistant｜>` part after `<｜`): back to its start.
      for (const sp of specialSet) {
        const i = sp ? rec.text.lastIndexOf(sp, p) : -1;
        if (i >= 0 && i < p && i + sp.length > p) p = i;
      }
      for (let moved = true; moved;) {
        moved = false;
        for (const sp of specialSet) {
          if (sp && p >= sp.length && rec.text.startsWith(sp, p - sp.length)) {
            p -= sp.length;
            moved = true;
            break;
          }
        }
      }
      return p;
    } catch {
      return commonPrefixLength(render(k), rec.text);
    }
  };
  const last = Math.max(...rec.targets, 0);
  const bounds: number[] = [];
  let prev = 0;
  for (let k = 0; k <= last && k < messages.length; k++) {
    let b: number;
    try {
      b = k === 0 ? 0 : headerStart(k);
    } catch {
      b = prev;
    }
    // A boundary inside a token (`<｜User｜>` vs `<｜Assistant｜>` part after `<｜`) moves to that token's start.
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= b) lo = mid;
      else hi = mid - 1;
    }
    if (starts.length && starts[lo] < b && (lo + 1 >= starts.length || starts[lo + 1] > b)) b = starts[lo];
    prev = Math.max(prev, b);
    bounds.push(prev);
  }
  // The last target's completion follows the generation prompt: the target turn runs from its own start to the end of the text.
  const turnRanges: RecordDetail['turnRanges'] = [];
  for (let k = 0; k <= last && k < turns.length; k++) {
    const start = bounds[k];
    const end = k === last ? rec.text.length : bounds[k + 1];
    if (end > start) turnRanges.push({ turn: k, role: turns[k].role, start, end });
  }
  // Within the last target's range, the generation prompt lies between the end of messages[:last] and the completion.
  const tokens: TokenView[] = ids.map((id, k) => {
    const start = starts[k];
    const end = k + 1 < starts.length ? starts[k + 1] : rec.text.length;
    const surface = rec.text.slice(start, end);
    let turn = -1;
    for (const tr of turnRanges) if (start >= tr.start && start < tr.end) turn = tr.turn;
    const content = tokenizer.idToToken(id);
    return { id, text: surface, start, trainable: mask[k] === 1, special: content !== undefined && specialSet.has(content), turn };
  });
  // Each field's text inside its turn's rendered range (templates write content verbatim; a field not found is left out).
  const fieldSpans: RecordDetail['fieldSpans'] = [];
  for (const tr of turnRanges) {
    const m = conv.messages[tr.turn];
    if (!m) continue;
    const look = (field: TurnField, t: string | null | undefined) => {
      if (!t) return;
      const i = rec.text.indexOf(t, tr.start);
      if (i >= 0 && i + t.length <= tr.end) fieldSpans.push({ turn: tr.turn, field, start: i, end: i + t.length });
    };
    look('reasoning_content', m.reasoning_content);
    look('content', m.content);
    for (const tc of m.tool_calls ?? []) {
      const args = typeof tc.function.arguments === 'string' ? tc.function.arguments : JSON.stringify(tc.function.arguments);
      const i = rec.text.indexOf(tc.function.name, tr.start);
      if (i >= 0 && i < tr.end) {
        const j = args ? rec.text.indexOf(args.slice(0, 40), i) : -1;
        const end = j >= 0 ? Math.min(tr.end, j + args.length) : i + tc.function.name.length;
        fieldSpans.push({ turn: tr.turn, field: 'tool_calls', start: i, end });
      }
    }
  }
  return { index, tokens, turnRanges, spans: rec.spans.map((s) => [s[0], s[1]] as Span), fieldSpans };
}
