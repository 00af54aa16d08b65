/**
 * Format detection: decide a file's shape from a sample of its rows and say why.
 *
 * Uses the same shape table as normalization (`normalize.ts` {@link SHAPES}):
 * every sample row is normalized, and the evidence is built from which handler
 * owned it, how it described the row, the role spellings seen, and the facts
 * observed while normalizing (e.g. a `system_prompt` field filling a null
 * system turn). No key check is duplicated here.
 */
import type { FormatDetection, RowOutcome } from '../types';
import { fieldRoleEvidence, tallyFieldRoles, type FieldRoleTally } from './fieldRoles';
import { conversationsOf, normalizeDetailed, type DetailedOutcome } from './normalize';
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
 *
 * `normalized`: the rows' outcomes when the caller normalized them already (`normalized[i]` of `sampleRows[i]`, by
 * `normalizeDetailed` with no reading options — normalizedAhead.ts `readingIsDefault` — under any source and file
 * name: detection reads neither the ids nor the sources); else each row is normalized here.
 */
export function detectFormat(sampleRows: unknown[], normalized?: readonly DetailedOutcome[]): FormatDetection {
  const rows = sampleRows.slice(0, DETECT_SAMPLE_SIZE);
  const total = rows.length;
  if (total === 0) return { format: 'unknown', evidence: ['no rows to inspect (the file has no non-blank, valid JSON line)'] };
  const tally = emptyTally();
  rows.forEach((value, i) => tallyRow(tally, value, normalized?.[i] ?? normalizeDetailed(value, { file: '', line: i + 1 }, 'sample')));
  return { format: formatOf(tally), evidence: evidenceOf(tally, total) };
}

/** What the sample's rows showed, counted by {@link tallyRow}. */
interface SampleTally {
  /** Describe phrase → rows. */
  shapeCounts: Map<string, number>;
  /** Handler name → rows. */
  handlerCounts: Map<string, number>;
  factCounts: Map<string, number>;
  /** Role spellings seen, in order. */
  roles: string[];
  /** Keys of the objects no shape matched → rows. */
  unmatchedKeys: Map<string, number>;
  /** JSON types of rows that are not objects → rows. */
  nonObjects: Map<string, number>;
  recognized: number;
  prompts: number;
  conversations: number;
  unmatched: number;
  /** Messages of the errored rows, in order. */
  errors: string[];
  /** `reason: message` → rows. */
  drops: Map<string, number>;
  /** Field path → rows that did not read it. */
  unread: Map<string, number>;
  /** Top-level field → the roles it took (fieldRoles.ts). */
  fieldRoles: FieldRoleTally;
}

function emptyTally(): SampleTally {
  return {
    shapeCounts: new Map(),
    handlerCounts: new Map(),
    factCounts: new Map(),
    roles: [],
    unmatchedKeys: new Map(),
    nonObjects: new Map(),
    recognized: 0,
    prompts: 0,
    conversations: 0,
    unmatched: 0,
    errors: [],
    drops: new Map(),
    unread: new Map(),
    fieldRoles: new Map(),
  };
}

/** One sample row and its normalized outcome, counted: its shape, roles, facts, unread fields, field roles and outcome. */
function tallyRow(t: SampleTally, value: unknown, detailed: DetailedOutcome): void {
  const { outcome, handler, facts, row: readRow } = detailed;
  if (!handler) {
    t.unmatched++;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const k of Object.keys(value as Row)) t.unmatchedKeys.set(k, (t.unmatchedKeys.get(k) ?? 0) + 1);
    } else {
      const type = describeJsonType(value);
      t.nonObjects.set(type, (t.nonObjects.get(type) ?? 0) + 1);
    }
    return;
  }
  t.recognized++;
  const row = readRow as Row;
  bump(t.handlerCounts, handler.name);
  try {
    bump(t.shapeCounts, handler.describe(row));
    for (const r of handler.roles(row)) if (!t.roles.includes(r)) t.roles.push(r);
  } catch {
    bump(t.shapeCounts, `the ${handler.name} shape`);
  }
  for (const f of facts) bump(t.factCounts, f);
  const convs = conversationsOf(outcome);
  for (const f of convs[0]?.conversation.unreadFields ?? []) bump(t.unread, f);
  if (convs.length)
    tallyFieldRoles(
      t.fieldRoles,
      row,
      convs.map((c) => c.conversation),
      convs[0].conversation.unreadFields ?? [],
    );
  tallyOutcome(t, outcome, handler.name);
}

/** A row's outcome counted: a prompt, a conversation (or several), an error, or a drop (a message fragment of a file pass is a fact instead). */
function tallyOutcome(t: SampleTally, outcome: RowOutcome, handlerName: string): void {
  switch (outcome.kind) {
    case 'prompt':
      t.prompts++;
      break;
    case 'conversation':
      t.conversations++;
      break;
    case 'errored':
      t.errors.push(outcome.message);
      break;
    case 'dropped':
      // OpenAssistant message rows are not dropped in a file of them: the file pass rebuilds their trees (oasst.ts).
      if (outcome.reason === 'message_fragment' && handlerName === 'event-log')
        bump(
          t.factCounts,
          'agent CLI event lines: the file is read whole and its events joined by parentUuid (one conversation per root-to-leaf chain; summary lines are not turns)',
        );
      else if (outcome.reason === 'message_fragment')
        bump(t.factCounts, 'OpenAssistant message rows: the file is read whole and its trees rebuilt (one conversation per root-to-leaf path)');
      else bump(t.drops, `${outcome.reason}: ${outcome.message}`);
      break;
    case 'split':
      t.conversations++;
      break;
  }
}

/** The evidence lines, counts as `n/total` over the sample (see {@link detectFormat}). */
function evidenceOf(t: SampleTally, total: number): string[] {
  const evidence: string[] = [];
  for (const [shape, n] of t.shapeCounts) evidence.push(`${n}/${total} rows have ${shape}`);
  evidence.push(...fieldRoleEvidence(t.fieldRoles, t.recognized));
  if (t.roles.length) evidence.push(`roles seen: ${t.roles.join(', ')}`);
  for (const [fact, n] of t.factCounts) evidence.push(`${n}/${total} rows: ${fact}`);
  if (t.unread.size) {
    evidence.push(`fields not read (neither read by the shape nor known metadata): ${[...t.unread].map(([f, n]) => `${f} (${n}/${total} rows)`).join(', ')}`);
  }
  if (t.prompts) evidence.push(`${t.prompts}/${total} rows have no assistant turn: prompts for the target model to answer first`);
  for (const [d, n] of t.drops) evidence.push(`${n}/${total} rows dropped (${d})`);
  if (t.errors.length) evidence.push(`${t.errors.length}/${total} rows errored (first: ${t.errors[0]})`);
  if (t.unmatched) {
    const parts: string[] = [];
    if (t.unmatchedKeys.size) parts.push(`keys: ${[...t.unmatchedKeys].map(([k, n]) => `${k} (${n})`).join(', ')}`);
    for (const [type, n] of t.nonObjects) parts.push(`${n} ${n === 1 ? 'is' : 'are'} ${type}`);
    evidence.push(`${t.unmatched}/${total} rows match no known shape (${parts.join('; ')})`);
    if (t.unmatchedKeys.has('input_ids')) evidence.push('rows with "input_ids" are already tokenized; give the untokenized chat data instead');
  }
  return evidence;
}

/** The sample's format: `unknown` (no row recognized), `prompt-only`, the one handler's name, or `mixed`. */
function formatOf(t: SampleTally): string {
  if (t.recognized === 0) return 'unknown';
  if (t.conversations === 0 && t.prompts > 0) return 'prompt-only';
  if (t.handlerCounts.size === 1) return [...t.handlerCounts.keys()][0];
  return 'mixed';
}

function bump(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}
