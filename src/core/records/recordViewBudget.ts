/** The record view's work cap: the encoding cache, the shared token budget that extrapolates past it, and the texts it counts. */
import type { TargetTokenizer } from '../tokenizers/types';
import type { Message } from '../types';
import type { Span } from './maskTypes';
import { encodeHead, estimatedCount, type HeadEncoding } from './tokenEstimate';

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

/**
 * Counts tokens under a shared character budget; a text over what is left is estimated by the one
 * estimator of the record view (`tokenEstimate.ts`: its head and windows over its rest). The cache only
 * saves work: a text is counted the same with or without it, so the hover and the mask view agree.
 */
export class TokenBudget {
  private tokens = 0;
  private chars = 0;
  constructor(
    private remaining: number,
    private readonly tok: TargetTokenizer,
    private readonly cache: EncodingCache,
  ) {}

  /** Tokens per character of what was tokenized so far (0.3 before anything was, a typical BPE rate for English). */
  rate(): number {
    return this.chars > 0 ? this.tokens / this.chars : 0.3;
  }

  /** Encodes `text` whole when it fits what is left of the budget, else its head and sampled windows (`tokenEstimate.ts` `encodeHead`). */
  encode(text: string): HeadEncoding {
    let enc: HeadEncoding;
    const hit = text.length <= this.remaining ? this.cache.get(text) : undefined;
    if (hit) enc = { ...hit, cut: text.length, charsTokenized: text.length };
    else {
      enc = encodeHead((t) => this.tok.encode(t), text, this.remaining);
      if (enc.cut === text.length) this.cache.set(text, { ids: enc.ids, starts: enc.starts });
    }
    this.remaining = Math.max(0, this.remaining - enc.charsTokenized);
    this.tokens += enc.ids.length;
    this.chars += enc.cut;
    return enc;
  }

  /** Token count of `text`, estimated past the budget (`tokenEstimate.ts` `estimatedCount`). */
  count(text: string): { tokens: number; estimated: boolean } {
    if (text.length === 0) return { tokens: 0, estimated: false };
    return estimatedCount(text, this.encode(text));
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
