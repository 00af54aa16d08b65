/**
 * `prepare` on `generate` output: use the token ids the target model actually
 * generated instead of re-tokenizing its answer text (issue 6 "Exactly what the
 * model produced").
 *
 * Input: a row written by `generate` carries `generation.turns[k] =
 * {message_index, token_ids?}` (run.ts). For one record built by mask.ts
 * (`text`, `spans`, `targets` = message indices, one span per target), each
 * trainable span is replaced by the generated ids of its turn when
 * - the record has exactly one span per target, and every target has `token_ids`;
 * - the span starts and ends on token boundaries of the re-tokenized text (the
 *   server tokenizes the rendered prompt the same way, docs/loss-mask-rules.md
 *   "Tokens"), and
 * - `decode(token_ids)` is exactly the span's text (what the chat template
 *   renders for that turn, end-of-turn token included).
 * Otherwise the whole record keeps its re-tokenized ids and is marked
 * `retokenized` with the first reason: `no_token_ids`, `spans_not_per_turn`,
 * `token_boundary`, `text_differs` (e.g. the template re-renders reasoning
 * differently from what the model wrote). All or nothing per record, so a
 * record never mixes the two.
 */
import type { EncodedText } from '../tokenizers/types';
import type { TextRecord } from './maskTypes';

/** One generated turn as `generate` writes it. */
export interface GeneratedTurnIds {
  message_index: number;
  token_ids?: number[];
}

/** Why a record had to be re-tokenized. */
export type RetokenizedReason = 'no_token_ids' | 'spans_not_per_turn' | 'token_boundary' | 'text_differs';

export type GeneratedIdsResult =
  | { source: 'generated'; ids: number[]; mask: number[]; starts?: number[] }
  | { source: 'retokenized'; reason: RetokenizedReason; ids: number[]; mask: number[] };

/**
 * The generated turns of a raw input row (`row.generation.turns`), or undefined
 * when the row was not written by `generate`.
 */
export function generatedTurnsOf(row: unknown): GeneratedTurnIds[] | undefined {
  const turns = (row as { generation?: { turns?: unknown } } | null)?.generation?.turns;
  if (!Array.isArray(turns)) return undefined;
  return turns
    .filter((t) => Number.isInteger(t?.message_index))
    .map((t) => ({ message_index: t.message_index, ...(Array.isArray(t.token_ids) ? { token_ids: t.token_ids } : {}) }));
}

/**
 * Splices generated ids into one record (see module doc).
 * @param rec the record's text, trainable spans and target message indices
 * @param enc the re-tokenized record (`ids`, `starts` as UTF-16 indices)
 * @param mask the loss mask of `enc` (1 inside spans)
 * @param turns the row's generated turns
 * @param decode the target tokenizer's decode (special tokens kept)
 * @param withStarts also return each token's UTF-16 start in `rec.text` (the mask view's detail): a generated token's
 *   is where the decoded tokens before it in its turn end (capped at the span's end, as a token may hold part of a character)
 * @returns ids and mask to write, and whether they are the generated ones
 */
export function applyGeneratedIds(
  rec: TextRecord,
  enc: EncodedText,
  mask: number[],
  turns: GeneratedTurnIds[],
  decode: (ids: number[]) => string,
  withStarts = false,
): GeneratedIdsResult {
  const keep = (reason: RetokenizedReason): GeneratedIdsResult => ({ source: 'retokenized', reason, ids: enc.ids, mask });
  if (rec.spans.length !== rec.targets.length || rec.spans.length === 0) return keep('spans_not_per_turn');
  const byIndex = new Map(turns.map((t) => [t.message_index, t.token_ids]));
  const ids: number[] = [];
  const outMask: number[] = [];
  const starts: number[] = [];
  let k = 0; // next token of enc to copy
  for (let s = 0; s < rec.spans.length; s++) {
    const [start, end] = rec.spans[s];
    const gen = byIndex.get(rec.targets[s]);
    if (!gen || gen.length === 0) return keep('no_token_ids');
    let a = k;
    while (a < enc.ids.length && enc.starts[a] < start) a++;
    let b = a;
    while (b < enc.ids.length && enc.starts[b] < end) b++;
    if (enc.starts[a] !== start || (b < enc.ids.length && enc.starts[b] !== end)) return keep('token_boundary');
    if (decode(gen) !== rec.text.slice(start, end)) return keep('text_differs');
    for (; k < a; k++) {
      ids.push(enc.ids[k]);
      outMask.push(mask[k]);
      if (withStarts) starts.push(enc.starts[k]);
    }
    let at = start;
    for (const id of gen) {
      ids.push(id);
      outMask.push(1);
      if (withStarts) {
        starts.push(at);
        at = Math.min(end, at + decode([id]).length);
      }
    }
    k = b;
  }
  for (; k < enc.ids.length; k++) {
    ids.push(enc.ids[k]);
    outMask.push(mask[k]);
    if (withStarts) starts.push(enc.starts[k]);
  }
  return { source: 'generated', ids, mask: outMask, ...(withStarts ? { starts } : {}) };
}
