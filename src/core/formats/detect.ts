/**
 * Format detection: decide a file's shape from a sample of its rows and say why.
 *
 * Uses the same shape table as normalization (`normalize.ts` {@link SHAPES}):
 * every sample row is normalized, and the evidence is built from which handler
 * owned it, how it described the row, the role spellings seen, and the facts
 * observed while normalizing (e.g. a `system_prompt` field filling a null
 * system turn). No key check is duplicated here.
 */
import type { FormatDetection } from '../types';
import { fieldRoleEvidence, tallyFieldRoles, type FieldRoleTally } from './fieldRoles';
import { conversationsOf, normalizeDetailed } from './normalize';
import { describeJsonType, type Row } from './base';

/** How many rows detection looks at by default. */
export const DETECT_SAMPLE_SIZE = 50;

/**
 * Detect the format of a file from (up to {@link DETECT_SAMPLE_SIZE}) parsed rows.
 *
 * `format`:
 * - the owning handler's name when all recognized rows share one
 *   (`openai-messages`, `sharegpt`, `role-text-trajectory`, `prompt-response`),
 * - `prompt-only` when every recognized row yields a prompt (no assistant turn
 *   yet), whichever shapes they have (e.g. `prompt` strings mixed with user-only
 *   `messages`),
 * - `mixed` when rows of several shapes yield conversations,
 * - `unknown` when no row is recognized (evidence names the keys found, and
 *   says so when rows are already tokenized).
 *
 * `evidence` (human-readable, counts are `n/total` over the sample), e.g.
 * `3/3 rows have "conversations": list of {from, value}`,
 * `"solution" (avg 1.9k chars) is the answer (the assistant turn trained)` (field roles, `fieldRoles.ts`),
 * `roles seen: system, human, gpt`,
 * `3/3 rows: "system_prompt" top-level field used as system message (system turn content is null)`.
 *
 * Rows beyond the first {@link DETECT_SAMPLE_SIZE} are ignored. Never throws.
 */
export function detectFormat(sampleRows: unknown[]): FormatDetection {
  const rows = sampleRows.slice(0, DETECT_SAMPLE_SIZE);
  const total = rows.length;
  if (total === 0) return { format: 'unknown', evidence: ['no rows to inspect (the file has no non-blank, valid JSON line)'] };

  const shapeCounts = new Map<string, number>(); // describe phrase → rows
  const handlerCounts = new Map<string, number>(); // handler name → rows
  const factCounts = new Map<string, number>();
  const roles: string[] = [];
  const unmatchedKeys = new Map<string, number>();
  const nonObjects = new Map<string, number>();
  let recognized = 0;
  let prompts = 0;
  let conversations = 0;
  let unmatched = 0;
  const errors: string[] = [];
  const drops = new Map<string, number>();
  const unread = new Map<string, number>(); // field path → rows
  const fieldRoles: FieldRoleTally = new Map(); // top-level field → the roles it took (fieldRoles.ts)

  rows.forEach((value, i) => {
    const { outcome, handler, facts, row: readRow } = normalizeDetailed(value, { file: '', line: i + 1 }, 'sample');
    if (!handler) {
      unmatched++;
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const k of Object.keys(value as Row)) unmatchedKeys.set(k, (unmatchedKeys.get(k) ?? 0) + 1);
      } else {
        const t = describeJsonType(value);
        nonObjects.set(t, (nonObjects.get(t) ?? 0) + 1);
      }
      return;
    }
    recognized++;
    const row = readRow as Row;
    bump(handlerCounts, handler.name);
    try {
      bump(shapeCounts, handler.describe(row));
      for (const r of handler.roles(row)) if (!roles.includes(r)) roles.push(r);
    } catch {
      bump(shapeCounts, `the ${handler.name} shape`);
    }
    for (const f of facts) bump(factCounts, f);
    const convs = conversationsOf(outcome);
    for (const f of convs[0]?.conversation.unreadFields ?? []) bump(unread, f);
    if (convs.length)
      tallyFieldRoles(
        fieldRoles,
        row,
        convs.map((c) => c.conversation),
        convs[0].conversation.unreadFields ?? [],
      );
    switch (outcome.kind) {
      case 'prompt':
        prompts++;
        break;
      case 'conversation':
        conversations++;
        break;
      case 'errored':
        errors.push(outcome.message);
        break;
      case 'dropped':
        // OpenAssistant message rows are not dropped in a file of them: the file pass rebuilds their trees (oasst.ts).
        if (outcome.reason === 'message_fragment' && handler.name === 'event-log')
          bump(
            factCounts,
            'agent CLI event lines: the file is read whole and its events joined by parentUuid (one conversation per root-to-leaf chain; summary lines are not turns)',
          );
        else if (outcome.reason === 'message_fragment')
          bump(factCounts, 'OpenAssistant message rows: the file is read whole and its trees rebuilt (one conversation per root-to-leaf path)');
        else bump(drops, `${outcome.reason}: ${outcome.message}`);
        break;
      case 'split':
        conversations++;
        break;
    }
  });

  const evidence: string[] = [];
  for (const [shape, n] of shapeCounts) evidence.push(`${n}/${total} rows have ${shape}`);
  evidence.push(...fieldRoleEvidence(fieldRoles, recognized));
  if (roles.length) evidence.push(`roles seen: ${roles.join(', ')}`);
  for (const [fact, n] of factCounts) evidence.push(`${n}/${total} rows: ${fact}`);
  if (unread.size) {
    evidence.push(`fields not read (neither read by the shape nor known metadata): ${[...unread].map(([f, n]) => `${f} (${n}/${total} rows)`).join(', ')}`);
  }
  if (prompts) evidence.push(`${prompts}/${total} rows have no assistant turn: prompts for the target model to answer first`);
  for (const [d, n] of drops) evidence.push(`${n}/${total} rows dropped (${d})`);
  if (errors.length) evidence.push(`${errors.length}/${total} rows errored (first: ${errors[0]})`);
  if (unmatched) {
    const parts: string[] = [];
    if (unmatchedKeys.size) parts.push(`keys: ${[...unmatchedKeys].map(([k, n]) => `${k} (${n})`).join(', ')}`);
    for (const [t, n] of nonObjects) parts.push(`${n} ${n === 1 ? 'is' : 'are'} ${t}`);
    evidence.push(`${unmatched}/${total} rows match no known shape (${parts.join('; ')})`);
    if (unmatchedKeys.has('input_ids')) evidence.push('rows with "input_ids" are already tokenized; give the untokenized chat data instead');
  }

  let format: string;
  if (recognized === 0) format = 'unknown';
  else if (conversations === 0 && prompts > 0) format = 'prompt-only';
  else if (handlerCounts.size === 1) format = [...handlerCounts.keys()][0];
  else format = 'mixed';
  return { format, evidence };
}

function bump(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}
