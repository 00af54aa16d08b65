/**
 * What a `--format messages` run says about its conversation files, in the terminal summary and
 * report.md alike: how many conversations each file holds, what EAGLE's file leaves out and why,
 * and that the trainer's own masking applies (docs/outputs.md "Conversations"). Pure.
 */
import { basename } from 'node:path';
import type { PrepareResult } from '../contract';
import { groupedInt } from '../../numberText';

/** The `eagle_*` notes: why a conversation is not in `conversations_sharegpt.jsonl`. */
const SHAREGPT_REFUSALS = ['eagle_tool_turns', 'eagle_reasoning', 'eagle_turn_not_trainable', 'eagle_turn_order'] as const;

function num(n: number): string {
  return groupedInt(n);
}

/**
 * The lines about the conversation files of a run (none when it wrote none): the count in
 * `conversations.jsonl`, and with the ShareGPT file its count and the conversations left out of it
 * per reason; then that the records counted are what this run's rules would train, while the
 * trainer renders, tokenizes and masks the conversations itself.
 */
export function conversationsLines(r: Pick<PrepareResult, 'outputs' | 'files' | 'totals' | 'mask'>): string[] {
  if (!r.outputs.conversations) return [];
  const kept = r.files.filter((f) => !f.skipped);
  const n = r.totals.conversationsWritten ?? kept.reduce((a, f) => a + (f.conversationsWritten ?? 0), 0);
  const out = [
    `${num(n)} conversation${n === 1 ? '' : 's'} in ${basename(r.outputs.conversations)} (OpenAI messages, normalized; one per written conversation)`,
  ];
  if (r.outputs.conversationsSharegpt) {
    const m = r.totals.sharegptWritten ?? kept.reduce((a, f) => a + (f.sharegptWritten ?? 0), 0);
    const system = kept.reduce((a, f) => a + (f.notes.eagle_system_prompt ?? 0), 0);
    const why = SHAREGPT_REFUSALS.map((c) => [c, kept.reduce((a, f) => a + (f.notes[c] ?? 0), 0)] as const).filter(([, k]) => k > 0);
    out.push(
      `${num(m)} of them in ${basename(r.outputs.conversationsSharegpt)} (ShareGPT human/gpt, as EAGLE's main.py reads them)` +
        (n > m ? `; ${num(n - m)} left out, which EAGLE cannot read as they are: ${why.map(([c, k]) => `${c} ×${num(k)}`).join(', ')}` : '') +
        (system ? `; ${num(system)} written without their system turn (eagle_system_prompt: EAGLE puts its own first)` : ''),
    );
  }
  out.push(
    `The trainer renders, tokenizes and masks these conversations itself: its own masking applies${r.mask !== 'assistant' ? ` (not --mask ${r.mask})` : ''}; the records and tokens counted are what this run's rules would train (token_counts.json counts them, for draft-vocab).`,
  );
  return out;
}

/**
 * Why `conversations_sharegpt.jsonl` (`--format messages --trainer eagle`) holds no conversation, with what to do
 * instead; undefined when the run did not write that file or it holds at least one. EAGLE's `main.py` would train on
 * nothing: the run fails when conversations were written but none fits EAGLE (runResult.ts, unless `--allow-empty`
 * or a shard), and the next steps print this instead of a train command (run/reports/nextSteps.ts).
 */
export function sharegptEmptyReason(r: Pick<PrepareResult, 'outputs' | 'files'>): string | undefined {
  if (!r.outputs.conversationsSharegpt) return undefined;
  const kept = r.files.filter((f) => !f.skipped);
  if (kept.reduce((a, f) => a + (f.sharegptWritten ?? 0), 0) > 0) return undefined;
  const n = kept.reduce((a, f) => a + (f.conversationsWritten ?? 0), 0);
  const why = SHAREGPT_REFUSALS.map((c) => [c, kept.reduce((a, f) => a + (f.notes[c] ?? 0), 0)] as const).filter(([, k]) => k > 0);
  return (
    `${basename(r.outputs.conversationsSharegpt)} holds no conversation: ` +
    (n > 0
      ? `EAGLE's main.py cannot read any of the ${num(n)} written conversation${n === 1 ? '' : 's'} as ${n === 1 ? 'it is' : 'they are'} (${why.map(([c, k]) => `${c} ×${num(k)}`).join(', ')})`
      : 'no conversation was written') +
    `, so --trainer eagle has nothing to train on. --trainer modelopt reads ${basename(r.outputs.conversations ?? 'conversations.jsonl')} (tool turns and reasoning included); --format jsonl writes records for SpecForge or speculators`
  );
}
