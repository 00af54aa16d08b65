/** The record view's work cap: the encoding cache, the shared token budget that extrapolates past it, and the texts it counts. */
import type { TargetTokenizer } from '../tokenizers/tokenizer';
import type { Message } from '../types';
import type { Span } from './mask';

const SAMPLE_MIN = 512;

/** Encodings of recent texts (records of a row re-shown with another record, policy or hover), bounded by total characters. */
export class EncodingCache {
  private readonly map = new Map<string, { ids: number[]; starts: number[] }>();
  private chars = 0;
  constructor(private readonly maxChars = 8_000_000) {}

  get(text: string): { ids: number[]; starts: number[] } | undefined {
    const e = this.map.get(text);
    if (e) {
      this.map.delete(text);
      this.map.set(text, e);
    }
    return e;
  }

  set(text: string, e: { ids: number[]; starts: number[] }): void {
    if (text.length > this.maxChars || this.map.has(text)) return;
    this.map.set(text, e);
    this.chars += text.length;
    for (const k of this.map.keys()) {
      if (this.chars <= this.maxChars) break;
      this.map.delete(k);
      this.chars -= k.length;
    }
  }
}

/** Counts tokens under a shared character budget; past it, extrapolates from what was tokenized. */
export class TokenBudget {
  private tokens = 0;
  private chars = 0;
  constructor(
    private remaining: number,
    private readonly tok: TargetTokenizer,
    private readonly cache: EncodingCache,
  ) {}

  /** Tokens per character seen so far (0.3 before anything was tokenized, a typical BPE rate for English). */
  rate(): number {
    return this.chars > 0 ? this.tokens / this.chars : 0.3;
  }

  /** Encodes `text`, or its first `max(remaining, 512)` characters when over budget (`cut` = where it stopped). */
  encode(text: string): { ids: number[]; starts: number[]; cut: number } {
    const hit = this.cache.get(text);
    if (hit) {
      this.tokens += hit.ids.length;
      this.chars += text.length;
      return { ...hit, cut: text.length };
    }
    const cut = text.length <= this.remaining ? text.length : Math.min(text.length, Math.max(this.remaining, SAMPLE_MIN));
    const enc = this.tok.encode(cut === text.length ? text : text.slice(0, cut));
    if (cut === text.length) this.cache.set(text, enc);
    this.remaining = Math.max(0, this.remaining - cut);
    this.tokens += enc.ids.length;
    this.chars += cut;
    return { ids: enc.ids, starts: enc.starts, cut };
  }

  /** Token count of `text`, extrapolated past the budget. */
  count(text: string): { tokens: number; estimated: boolean } {
    if (text.length === 0) return { tokens: 0, estimated: false };
    const { ids, cut } = this.encode(text);
    if (cut === text.length) return { tokens: ids.length, estimated: false };
    // Drop the last token of the sample: it may be cut in the middle.
    const exact = Math.max(0, ids.length - 1);
    return { tokens: exact + Math.round((text.length - cut) * this.rate()) + 1, estimated: true };
  }
}

/** The text of a turn that counts as its characters and tokens: reasoning, content, tool calls (name + arguments). */
export function turnText(m: Message): string {
  const parts: string[] = [];
  if (m.reasoning_content) parts.push(m.reasoning_content);
  if (m.content) parts.push(m.content);
  for (const tc of m.tool_calls ?? []) {
    parts.push(tc.function.name, typeof tc.function.arguments === 'string' ? tc.function.arguments : JSON.stringify(tc.function.arguments));
  }
  return parts.join('\n');
}

/** Characters of `spans` that lie in `[from, to)`. */
export function trainableChars(spans: readonly Span[], from: number, to: number): number {
  let n = 0;
  for (const [s, e] of spans) n += Math.max(0, Math.min(e, to) - Math.max(s, from));
  return n;
}
