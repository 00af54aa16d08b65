/**
 * How the one row path (records/rowTrace.ts) counts tokens: exactly (prepare), or within the views' work cap through
 * a shared budget (records/recordViewBudget.ts), extrapolated past it (records/tokenEstimate.ts).
 */
import type { Code } from '../codes';
import type { MaskPolicy } from '../types';
import type { EncodedText } from '../tokenizers/types';
import { applyGeneratedIds, type GeneratedTurnIds } from './generatedIds';
import { maskFromSpans } from './mask';
import type { TextRecord } from './maskTypes';
import { TokenBudget, trainableChars } from './recordViewBudget';
import { NOT_DECIDED, type ConversationTrace, type TraceContext, type TracedRecord } from './rowTraceTypes';

/**
 * Tokenizes for one conversation: exactly (prepare), or through the work cap's shared budget (the first conversation
 * counts its turns first; a record in detail is tokenized whole whatever the cap).
 */
export class Counter {
  private readonly budget?: TokenBudget;
  /** A piece of `--long split` could not be tokenized whole within the cap. */
  overCap = false;
  /** The record tokenized whole whatever the cap (the first conversation's record in detail, clamped). */
  exactIndex?: number;
  /** Without a cap: the conversation's records already encoded (records/rowTrace.ts `TraceSteps`), by record index. */
  given?: readonly EncodedText[];

  constructor(
    private readonly ctx: TraceContext,
    private readonly first: boolean,
    private readonly mask: MaskPolicy,
    budget?: TokenBudget,
    private readonly pieces = false,
  ) {
    this.budget = budget ?? (ctx.cap ? new TokenBudget(ctx.cap.chars, ctx.tok, ctx.cap.encodings) : undefined);
  }

  /** A counter for the pieces of `--long split`: the same budget; a piece it cannot tokenize whole sets {@link overCap}. */
  forPieces(): Counter {
    return new Counter(this.ctx, false, this.mask, this.budget, true);
  }

  /** A turn's text counted (work cap). */
  turn(text: string): { tokens: number; estimated: boolean } {
    return this.budget!.count(text);
  }

  /** The tokens of a text, counted within the cap. */
  count(text: string): number {
    return this.budget ? this.budget.count(text).tokens : this.ctx.tok.encode(text).ids.length;
  }

  /**
   * Tokenizes one text record and masks it; a row written by `generate` gets the generated token ids
   * (records/generatedIds.ts) when the record is tokenized whole. Notes `offsets_approximate`, `unicode_tables_unverified` and the ids' source.
   */
  record(rec: TextRecord, generated: GeneratedTurnIds[] | undefined, notes: Code[], t?: ConversationTrace, index?: number): TracedRecord {
    const enc = this.encode(rec.text, index);
    if (enc.exactOffsets === false) notes.push('offsets_approximate');
    if (enc.unicodeUnverified) notes.push('unicode_tables_unverified');
    const mask = maskFromSpans(enc.starts, rec.spans);
    const whole = enc.cut >= rec.text.length;
    if (!whole && this.pieces) this.overCap = true;
    const out: TracedRecord = {
      text: rec,
      ids: enc.ids,
      starts: enc.starts,
      mask,
      ...countOf(rec, enc, mask, this.rate()),
      targets: rec.targets,
      fate: NOT_DECIDED,
    };
    if (t?.removed) shortenedCounts(out, t, this.mask, this.rate());
    else if (generated && whole) {
      const g = applyGeneratedIds(rec, { ids: enc.ids, starts: enc.starts, exactOffsets: true }, mask, generated, (x) => this.ctx.tok.decode(x), !!this.budget);
      notes.push(g.source === 'generated' ? 'generated_token_ids_used' : `retokenized_${g.reason}`);
      Object.assign(out, { ids: g.ids, mask: g.mask, idsSource: g.source, tokens: g.ids.length, trainable: sum(g.mask) });
      if (g.source === 'generated') out.starts = g.starts ?? [];
    }
    return out;
  }

  private encode(
    text: string,
    index: number | undefined,
  ): { ids: number[]; starts: number[]; cut: number; restRate?: number; exactOffsets?: boolean; unicodeUnverified?: true } {
    const cap = this.ctx.cap;
    if (!this.budget || !cap) {
      const e = (index !== undefined ? this.given?.[index] : undefined) ?? this.ctx.tok.encode(text);
      return {
        ids: e.ids,
        starts: e.starts,
        cut: text.length,
        exactOffsets: e.exactOffsets,
        ...(e.unicodeUnverified ? { unicodeUnverified: true as const } : {}),
      };
    }
    if (this.first && index !== undefined && index === this.exactIndex) {
      let e = cap.encodings.get(text);
      if (!e) {
        const enc = this.ctx.tok.encode(text);
        e = { ids: enc.ids, starts: enc.starts };
        cap.encodings.set(text, e);
      }
      return { ...e, cut: text.length };
    }
    return this.budget.encode(text);
  }

  /** Tokens per character of what was tokenized so far. */
  rate(): number {
    return this.budget ? this.budget.rate() : 0.3;
  }
}

/**
 * A record's tokens and trainable tokens from its encoding, extrapolated past the part the work cap tokenized
 * (`estimated`): the last sampled token may be cut, so the rest is counted from its start at the record's sampled rate.
 */
function countOf(
  rec: TextRecord,
  enc: { ids: number[]; starts: number[]; cut: number; restRate?: number },
  m: readonly number[],
  fallbackRate: number,
): { tokens: number; trainable: number; estimated: boolean } {
  let tokens = enc.ids.length;
  let trainable = sum(m);
  if (enc.cut >= rec.text.length) return { tokens, trainable, estimated: false };
  const from = enc.starts.length ? enc.starts[enc.starts.length - 1] : 0;
  tokens -= 1;
  trainable -= m.length ? m[m.length - 1] : 0;
  const rate = enc.restRate ?? fallbackRate; // the record's own sampled rate (tokenEstimate.ts)
  tokens += Math.round((rec.text.length - from) * rate);
  trainable += Math.round(trainableChars(rec.spans, from, rec.text.length) * rate);
  return { tokens, trainable, estimated: true };
}

/** Work cap, shortened turns: the characters removed before rendering counted back in, each turn's at that turn's own rate. */
function shortenedCounts(r: TracedRecord, t: ConversationTrace, mask: MaskPolicy, fallbackRate: number): void {
  const removed = t.removed!;
  const turns = t.turns!;
  const lastMsg = Math.max(...r.targets, 0);
  const rate = (i: number) => (turns[i]?.chars ? turns[i].tokens / turns[i].chars : fallbackRate);
  for (let i = 0; i <= lastMsg && i < removed.length; i++) r.tokens += Math.round(removed[i] * rate(i));
  for (const k of r.targets) r.trainable += Math.round(removed[k] * rate(k));
  if (mask === 'non-system')
    for (let i = 0; i < removed.length; i++)
      if (t.conversation.messages[i].role !== 'system' && !r.targets.includes(i)) r.trainable += Math.round(removed[i] * rate(i));
  r.estimated = true;
}

/** The trainable tokens among a record's first `n` tokens: from the mask where it was tokenized, in proportion past that. */
export function trainableInOf(m: readonly number[], tokens: number, trainable: number): (n: number) => number {
  return (n) => {
    if (n >= tokens) return trainable;
    if (n > m.length) return Math.round((trainable * n) / tokens);
    let s = 0;
    for (let i = 0; i < n; i++) s += m[i];
    return s;
  };
}

/**
 * The sum of a list of numbers (a loss mask's trainable tokens). Indexed, not `for…of`: called a few times per record
 * over masks of thousands of tokens, it mostly runs before the optimizing compiler takes it, where `for…of` allocates
 * an iterator result per element (8 MB on 20 agent runs of 80 messages).
 */
export function sum(a: readonly number[]): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k];
  return s;
}
