/** The mask view's per-token detail of one record: each token's turn (from prefix renders), trainability and specialness, and where each turn's fields lie in the rendered text. */
import type { ChatTemplate } from '../templates/template';
import type { TargetTokenizer } from '../tokenizers/types';
import type { Conversation, Message, Role } from '../types';
import { lastAtMost } from '../sortedSearch';
import type { Span, TextRecord } from './maskTypes';
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
  const bounds = turnStarts(specialSet, rec, starts, conv, messages, template, prefixRenders);
  const last = Math.max(...rec.targets, 0);
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
  return { index, tokens, turnRanges, spans: rec.spans.map((s) => [s[0], s[1]] as Span), fieldSpans: fieldSpansOf(rec.text, conv, turnRanges) };
}

/**
 * Where each turn through the record's last target starts in its text (on a token start), ascending. Turn k's header
 * starts where messages[:k] followed by a stand-in turn k (its role, a placeholder text) and the same with another
 * role part; the special tokens right before that point (`<|im_start|>`) open the header. History is rendered as
 * history here, as in the record, so templates that rewrite earlier turns (Qwen3 dropping reasoning) do not shift the
 * boundary. Falls back to the plain prefix render when the template refuses a stand-in (e.g. role alternation checks).
 */
function turnStarts(
  specialSet: ReadonlySet<string>,
  rec: TextRecord,
  starts: number[],
  conv: Conversation,
  messages: readonly Message[],
  template: ChatTemplate,
  prefixRenders: Map<string, string>,
): number[] {
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
      return specialStart(specialSet, rec.text, Math.min(commonPrefixLength(a, render(k, other)), commonPrefixLength(a, rec.text)));
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
    prev = Math.max(prev, tokenStartAt(starts, b));
    bounds.push(prev);
  }
  return bounds;
}

/** `p` moved back out of a special token it is inside (`<｜User｜>` vs `<｜Assistant｜>` part after `<｜`), then before the special tokens right before it. */
function specialStart(specialSet: ReadonlySet<string>, text: string, p: number): number {
  for (const sp of specialSet) {
    const i = sp ? text.lastIndexOf(sp, p) : -1;
    if (i >= 0 && i < p && i + sp.length > p) p = i;
  }
  for (let moved = true; moved;) {
    moved = false;
    for (const sp of specialSet) {
      if (sp && p >= sp.length && text.startsWith(sp, p - sp.length)) {
        p -= sp.length;
        moved = true;
        break;
      }
    }
  }
  return p;
}

/** A boundary inside a token (`<｜User｜>` vs `<｜Assistant｜>` part after `<｜`) moved to that token's start. */
function tokenStartAt(starts: readonly number[], b: number): number {
  const lo = lastAtMost(starts, b);
  return starts.length && starts[lo] < b && (lo + 1 >= starts.length || starts[lo + 1] > b) ? starts[lo] : b;
}

/** Each field's text inside its turn's rendered range (templates write content verbatim; a field not found is left out). */
function fieldSpansOf(text: string, conv: Conversation, turnRanges: RecordDetail['turnRanges']): RecordDetail['fieldSpans'] {
  const fieldSpans: RecordDetail['fieldSpans'] = [];
  for (const tr of turnRanges) {
    const m = conv.messages[tr.turn];
    if (!m) continue;
    const look = (field: TurnField, t: string | null | undefined) => {
      if (!t) return;
      const i = text.indexOf(t, tr.start);
      if (i >= 0 && i + t.length <= tr.end) fieldSpans.push({ turn: tr.turn, field, start: i, end: i + t.length });
    };
    look('reasoning_content', m.reasoning_content);
    look('content', m.content);
    for (const tc of m.tool_calls ?? []) {
      const args = typeof tc.function.arguments === 'string' ? tc.function.arguments : JSON.stringify(tc.function.arguments);
      const i = text.indexOf(tc.function.name, tr.start);
      if (i >= 0 && i < tr.end) {
        const j = args ? text.indexOf(args.slice(0, 40), i) : -1;
        const end = j >= 0 ? Math.min(tr.end, j + args.length) : i + tc.function.name.length;
        fieldSpans.push({ turn: tr.turn, field: 'tool_calls', start: i, end });
      }
    }
  }
  return fieldSpans;
}
