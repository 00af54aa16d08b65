/**
 * Field roles with evidence (issue 20, "Field roles, decided per file"): which top-level field of a file's rows
 * ended up as the prompt, the answer, the reasoning, the system prompt or a label, and why, with the
 * values' mean length: `"solution" (avg 1.9k chars) is the answer`, `"answer" (avg 3 chars) is a label …`.
 * Detection (`detect.ts`) adds one evidence line per role that matters, so `inspect` (text and `--json`),
 * report.json / report.md (per file) and the Datasets view's hover say it.
 *
 * The roles are read off what normalization did, not guessed again: a field's text found as an assistant turn's
 * content is the answer, as its `reasoning_content` the reasoning, inside a user turn the prompt, as the system
 * turn the system prompt; a field that was read but whose value is in no turn and is a short value (a number,
 * a letter, a few words: `labels.ts`) is a label, never trained. A field given a role in eagle3prep.jsonc
 * (`"fields"`, `read/projectConfig.ts`) is named as written in the dataset, with that as its why. Turn lists
 * and other structured fields are named by the shape line of the evidence, not here; unread model-written
 * fields by their own line (`model_text_not_read`).
 */
import type { Conversation } from '../types';
import { isObject, type Row } from './base';
import { isMetadataField } from './fields';
import { isLabelValue } from './labels';

/** The roles a top-level field can be given in the evidence. */
export type FieldRole = 'prompt' | 'answer' | 'answers' | 'reasoning' | 'system' | 'label';

/** The key of a rewritten row holding the roles eagle3prep.jsonc assigned (`projectConfig.ts`): canonical field → the dataset's path and role. */
export const ASSIGNED_ROLES_KEY = '$fieldRoles';

/** One row's assigned roles as `projectConfig.ts` records them on the rewritten row. */
export interface AssignedRoles {
  /** Field name in the rewritten row (`response`) → the path as the dataset writes it (`worked_solution`). */
  renamed: Record<string, string>;
  /** Path as the dataset writes it → the role assigned (`"gt": "label"`). */
  roles: Record<string, string>;
  /** Top-level fields assigned `label` or `metadata`, taken out of the row (never read as text): path → value. */
  hidden: Record<string, unknown>;
  /** Fields that were where an assigned field is now read from (`response` beside `"worked_solution": "answer"`): kept aside, reported as unread by these paths. */
  displaced: string[];
  /** Paths of the config this row does not have (a misspelled path, a field some rows lack): noted `field_role_unmatched`. */
  unmatched?: string[];
}

/**
 * Whether eagle3prep.jsonc "fieldRoles" put the value of the top-level field `field` of a rewritten row there
 * with a text role (`response` read from `"worked_solution": "answer"`, or `response` itself named). An assigned
 * field is read in its role whatever its value's length: the config outranks the shapes' guesses (a short value
 * taken for a label, a one-word reasoning taken for a switch).
 */
export function isAssignedField(row: Row, field: string): boolean {
  const a = row[ASSIGNED_ROLES_KEY];
  if (!isObject(a)) return false;
  const r = a as unknown as AssignedRoles;
  const role = r.roles[field];
  return r.renamed[field] !== undefined || (role !== undefined && role !== 'label' && role !== 'metadata');
}

/**
 * A rewritten row's keys as the user knows them, for messages: the dataset's own keys (never the product's
 * `$` bookkeeping), a field eagle3prep.jsonc "fieldRoles" took out or moved named by its path with what the
 * config did (`messages (eagle3prep.jsonc "fieldRoles": label, never read)`).
 */
export function datasetKeys(row: Row): string[] {
  const a = isObject(row[ASSIGNED_ROLES_KEY]) ? (row[ASSIGNED_ROLES_KEY] as unknown as AssignedRoles) : undefined;
  const keys = Object.keys(row)
    .filter((k) => !k.startsWith('$'))
    .map((k) => (a?.renamed[k] !== undefined ? `${a.renamed[k]} (read as "${k}": eagle3prep.jsonc "fieldRoles")` : k));
  for (const p of Object.keys(a?.hidden ?? {})) keys.push(`${p} (eagle3prep.jsonc "fieldRoles": ${a!.roles[p]}, never read)`);
  for (const p of a?.displaced ?? []) if (!p.includes('.')) keys.push(p);
  return keys;
}

/** A file's field roles as gathered over its sample rows (one per field path). */
export type FieldRoleTally = Map<string, { roles: Map<FieldRole, number>; chars: number; rows: number; assigned?: string }>;

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The same text, or most of it: equal, or one holding the other and at least half its length (`<think>` split off, a trailing marker removed). */
function sameText(field: string, turn: string): boolean {
  if (field === '' || turn === '') return false;
  if (field === turn) return true;
  return (field.includes(turn) && turn.length * 2 >= field.length) || (turn.includes(field) && field.length * 2 >= turn.length);
}

/** The role one value took in the conversations of its row, or undefined. */
function roleOfText(t: string, convs: readonly Conversation[]): FieldRole | undefined {
  let prompt = false;
  for (const c of convs) {
    for (const m of c.messages) {
      const content = norm(m.content ?? '');
      const reasoning = norm(m.reasoning_content ?? '');
      if (m.role === 'assistant' && m.trainable !== false && sameText(t, content)) return 'answer';
      // Reasoning written in the answer's text (`<think>R</think>C`, thought markers): the field holds both.
      if (m.role === 'assistant' && m.trainable !== false && reasoning !== '' && content !== '' && t.includes(reasoning) && t.includes(content))
        return 'answer';
      if (m.role === 'assistant' && sameText(t, reasoning)) return 'reasoning';
      if (m.role === 'system' && sameText(t, content)) return 'system';
      if (m.role === 'user' && content.includes(t)) prompt = true;
    }
  }
  return prompt ? 'prompt' : undefined;
}

/**
 * Adds one row's top-level fields to `tally`: each field with a string, a number or a list of strings that
 * took a role (see the module comment), with its text's length (for a list, the mean of its strings).
 * `unread`: the row's unread field paths (never given a role here); `row`: the object the shape read.
 */
export function tallyFieldRoles(tally: FieldRoleTally, row: Row, convs: readonly Conversation[], unread: readonly string[]): void {
  const assigned = isObject(row[ASSIGNED_ROLES_KEY]) ? (row[ASSIGNED_ROLES_KEY] as unknown as AssignedRoles) : undefined;
  const found: { k: string; role: FieldRole | undefined; chars: number; label: boolean }[] = [];
  for (const [k, v] of Object.entries(row)) {
    if (k.startsWith('$') || unread.includes(assigned?.renamed[k] ?? k) || isMetadataField(k, v)) continue;
    if (typeof v === 'string' || typeof v === 'number') {
      const t = norm(String(v));
      if (t === '') continue;
      // A label is a short value that is in no turn and is not structured text (`[]`, `{}`), beside an answer field (below).
      found.push({ k, role: roleOfText(t, convs), chars: t.length, label: isLabelValue(v) && !/^[[{]/.test(t) });
    } else if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) {
      const ts = (v as string[]).map(norm);
      const answers = ts.some((t) => roleOfText(t, convs) === 'answer');
      found.push({ k, role: answers ? 'answers' : undefined, chars: Math.round(ts.reduce((a, x) => a + x.length, 0) / ts.length), label: false });
    }
  }
  const beside = found.some((f) => f.role === 'answer' || f.role === 'answers');
  for (const { k, chars, ...f } of found) {
    const role = f.role ?? (f.label && beside ? 'label' : undefined);
    if (role === undefined) continue;
    const name = assigned?.renamed[k] ?? k;
    let e = tally.get(name);
    if (!e) tally.set(name, (e = { roles: new Map(), chars: 0, rows: 0 }));
    if (assigned?.roles[name] !== undefined) e.assigned = assigned.roles[name];
    e.roles.set(role, (e.roles.get(role) ?? 0) + 1);
    e.chars += chars;
    e.rows++;
  }
  // A field the config called a label is taken out of the row (never read as text): named with its role.
  for (const [path, v] of Object.entries(assigned?.hidden ?? {})) {
    if (assigned?.roles[path] !== 'label') continue;
    let e = tally.get(path);
    if (!e) tally.set(path, (e = { roles: new Map(), chars: 0, rows: 0, assigned: 'label' }));
    e.roles.set('label', (e.roles.get('label') ?? 0) + 1);
    e.chars += typeof v === 'string' || typeof v === 'number' ? norm(String(v)).length : 0;
    e.rows++;
  }
}

/** `3 chars`, `240 chars`, `1.9k chars`, `12k chars`. */
function charsText(n: number): string {
  if (n < 1000) return `${n} char${n === 1 ? '' : 's'}`;
  return `${n < 9950 ? (n / 1000).toFixed(1).replace(/\.0$/, '') : Math.round(n / 1000)}k chars`;
}

const WHAT: Record<FieldRole, string> = {
  answer: 'is the answer (the assistant turn trained)',
  answers: 'are the answers (each a candidate assistant turn)',
  reasoning: 'is the reasoning (reasoning_content before the answer)',
  prompt: 'is the prompt (the user turn)',
  system: 'is the system prompt',
  label: 'is a label (a short value beside the answer: never trained)',
};
const ORDER: FieldRole[] = ['answer', 'answers', 'reasoning', 'prompt', 'system', 'label'];

/**
 * The evidence lines of a file's field roles, one per role that matters, in the order answer, answers,
 * reasoning, prompt, system, label: `"solution" (avg 1.9k chars) is the answer (the assistant turn trained)`;
 * several fields of one role are joined (`"instruction" (avg 40 chars) + "input" (avg 120 chars) are the
 * prompt …`); `in 3/5 rows` when not every recognized row has the field; `; eagle3prep.jsonc` when the config
 * assigned it. Empty unless a top-level field is the answer, the reasoning or a label (a file of turn lists
 * has its roles in its turns: its shape line says where they are). `total`: the rows the tally covers.
 */
export function fieldRoleEvidence(tally: FieldRoleTally, total: number): string[] {
  const byRole = new Map<FieldRole, string[]>();
  for (const [path, e] of tally) {
    const role = [...e.roles].sort((a, b) => b[1] - a[1] || ORDER.indexOf(a[0]) - ORDER.indexOf(b[0]))[0][0];
    const where = e.rows < total ? ` in ${e.rows}/${total} rows` : '';
    const list = byRole.get(role) ?? [];
    list.push(`"${path}" (avg ${charsText(Math.round(e.chars / Math.max(1, e.rows)))}${where}${e.assigned !== undefined ? '; eagle3prep.jsonc' : ''})`);
    byRole.set(role, list);
  }
  if (!['answer', 'answers', 'reasoning', 'label'].some((r) => byRole.has(r as FieldRole))) return [];
  return ORDER.filter((r) => byRole.has(r)).map((r) => {
    const names = byRole.get(r)!;
    const what = names.length > 1 ? WHAT[r].replace(/^is /, 'are ').replace(/^are a label/, 'are labels') : WHAT[r];
    return `${names.join(' + ')} ${what}`;
  });
}
