/**
 * Conversations wherever they sit (issue 12): when no known shape matches a
 * row, its structure is searched for the conversation —
 * - a list of turn-like objects at any depth, under any key: a role-ish key
 *   (every value a known role spelling, or a key named like a speaker:
 *   `role`, `speaker`, `author`, …) and a text-ish key (`content`, `text`,
 *   `utterance`, …, else the string field with the longest values);
 * - a list of such lists (one conversation each, `episodes[][]`), or such lists
 *   at the same place in each element of a list (`episodes[].turns`);
 * - a list of strings only with evidence of who speaks (issue 20 "Dialogues
 *   from string lists"): every string opening with a known speaker marker
 *   (`User: …`, `Assistant: …`), or two lists of the same length side by side
 *   named like questions and answers (`questions` / `answers`: one user turn
 *   then one assistant turn each). A list of strings without such evidence is
 *   never read (which strings are the user's is not known): it is reported,
 *   and named as answers when its path says so (`choices[].turns`);
 * - one string with speaker markers (`Human:`/`Assistant:`, `### Human:`,
 *   ChatML).
 * Every candidate is named by its path and keys (`traj[].speaker/utterance`)
 * so detection, `inspect` and error messages can say what was seen.
 *
 * Nothing here guesses a role: a list whose speaker key holds spellings that
 * are not in the alias table (`roles.ts`) is only reported as a candidate (the
 * row stays unrecognized, and the message suggests a field mapping with the
 * roles to fill in), never read.
 */
import type { Role } from '../types';
import { isObject, TEXT_KEYS, type Row } from './base';
import { isMetadataField } from './fields';
import { mapRole } from './roles';
import { GUANACO_MARKERS, HH_MARKERS, splitByMarkers, splitChatMl } from './transcript';
import { parseJsonLimited } from '../jsonDepth';

/** Key names that say "the speaker", in preference order (when values are not all known roles, only these are read). */
const ROLE_NAMES = ['role', 'from', 'speaker', 'author', 'sender', 'who', 'participant', 'actor', 'user_type', 'persona'];
/** Key names that say "the text", in preference order (then the string field with the longest values). */
const TEXT_NAMES = [...TEXT_KEYS, 'utterance', 'utt', 'body', 'msg', 'says', 'response', 'output', 'answer', 'question'];
/** A path part that says its strings are model answers kept without their questions. */
const ANSWER_PATH_RE = /choice|answer|respons|output|completion|generat|repl|candidate|prediction/i;
/** Field names of the question side and the answer side of two side-by-side string lists. */
const QUESTION_LIST_RE = /^(questions?|prompts?|quer(y|ies)|instructions?|inputs?|user_?(turns|messages)?|human)$/i;
const ANSWER_LIST_RE = /^(answers?|responses?|outputs?|completions?|replies|reply|assistant_?(turns|messages)?|gpt)$/i;
/** A speaker marker opening a string: `User:`, `Assistant:`, `### Human:`; the word must be a known role spelling. */
export const SPEAKER_PREFIX_RE = /^\s*(?:#{1,6}\s*)?([A-Za-z][A-Za-z _-]{0,19}?)\s*:\s*/;
/** Search limits: depth of nesting and values visited per row. */
const MAX_DEPTH = 8;
const MAX_NODES = 5000;

/** One place in a row that looks like a conversation. */
export interface ConversationCandidate {
  /** Where: `traj`, `data.episode.turns`, `episodes[]` (each element a list), `runs[].log`, `text`. */
  path: string;
  kind: 'turns' | 'turn-lists' | 'strings' | 'transcript';
  /** Turn objects: the keys holding the speaker and the text. */
  roleKey?: string;
  textKey?: string;
  /** Transcript strings: the marker family (`Human:/Assistant:`). */
  markers?: string;
  /** The conversations found there (one, or one per list for `turn-lists`). */
  lists: unknown[][];
  /** Turns in all lists, and turns with text. */
  turns: number;
  withText: number;
  /** Normalized roles seen. */
  roles: Role[];
  /** Role spellings not in the alias table. */
  unknownRoles: string[];
  /** Readable without a guess: every role known, some user or assistant turn; for strings, speaker markers or a paired questions field. */
  usable: boolean;
  /**
   * `strings`: how the roles were found — `markers` (each string opens with a speaker marker, removed from the
   * text) or `pairs` (a questions list and an answers list side by side; `lists[0]` holds them interleaved).
   */
  evidence?: 'markers' | 'pairs';
  /** Strings found: the roles of `lists[0]`, in order. */
  stringRoles?: Role[];
  /** `pairs`: the paths of the questions list and of the answers list (`path` is the first). */
  pairPaths?: [string, string];
  /** Why an unusable candidate was not read, one clause (`no speaker markers and no questions field beside it`). */
  why?: string;
}

/** `traj[].speaker/utterance (12 turns)`, `episodes[][].role/content (3 lists, 14 turns)`, `log: Human:/Assistant: transcript (4 turns)`. */
export function describeCandidate(c: ConversationCandidate): string {
  const n = `${c.turns} turn${c.turns === 1 ? '' : 's'}`;
  switch (c.kind) {
    case 'turns':
      return `"${c.path}[].${c.roleKey}/${c.textKey}" (${n})`;
    case 'turn-lists':
      return `"${c.path}[].${c.roleKey}/${c.textKey}" (${c.lists.length} lists, ${n})`;
    case 'strings':
      if (c.pairPaths) return `"${c.pairPaths[0]}" + "${c.pairPaths[1]}" question / answer string lists (${n})`;
      return `"${c.path}[]" strings${c.evidence === 'markers' ? ' opening with speaker markers' : ''} (${n})`;
    case 'transcript':
      return `"${c.path}": one string with ${c.markers} markers (${n})`;
  }
}

const cache = new WeakMap<object, ConversationCandidate[]>();

/**
 * The conversation candidates of a row, best first (usable before not; then
 * turn lists, lists of lists, transcripts, strings; then more turns with text).
 * Cached per row object. Never throws.
 */
export function findConversations(row: Row): ConversationCandidate[] {
  const hit = cache.get(row);
  if (hit) return hit;
  const found: ConversationCandidate[] = [];
  let nodes = 0;
  const visit = (v: unknown, path: string, depth: number): void => {
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) return;
    if (typeof v === 'string') {
      const t = v.trimStart();
      if ((t.startsWith('[') || t.startsWith('{')) && v.length < 8 * 1024 * 1024) {
        try {
          visit(parseJsonLimited(v), path, depth + 1);
          return;
        } catch {
          /* a string, not JSON */
        }
      }
      const tr = transcriptCandidate(v, path);
      if (tr) found.push(tr);
      return;
    }
    if (Array.isArray(v)) {
      if (v.length === 0) return;
      const turns = turnListCandidate(v, path);
      if (turns) {
        found.push(turns);
        return;
      }
      if (v.every((x) => Array.isArray(x))) {
        const inner = v.map((x) => turnListCandidate(x as unknown[], path));
        if (inner.every((c) => c !== undefined) && new Set(inner.map((c) => `${c!.roleKey}/${c!.textKey}`)).size === 1) {
          found.push(merge(inner as ConversationCandidate[], `${path}[]`));
          return;
        }
      }
      if (v.length >= 2 && v.every((x) => typeof x === 'string')) {
        found.push(stringsCandidate(v as string[], path));
        return;
      }
      // Containers: look inside (at most 50 elements); the same place in several elements is one list of conversations.
      const before = found.length;
      v.slice(0, 50).forEach((x, i) => visit(x, `${path}[${i}]`, depth + 1));
      const mine = found.splice(before);
      const groups = new Map<string, ConversationCandidate[]>();
      for (const c of mine) {
        const g = c.path.replace(/\[\d+\]/g, '[]');
        groups.set(g, [...(groups.get(g) ?? []), c]);
      }
      for (const [g, cs] of groups) {
        const sameKeys = new Set(cs.map((c) => `${c.kind}/${c.roleKey}/${c.textKey}`)).size === 1;
        if (cs.length > 1 && sameKeys && cs[0].kind === 'turns') found.push(merge(cs, g));
        else found.push(...cs);
      }
      return;
    }
    if (isObject(v)) {
      const pairs = pairedStrings(v, path);
      if (pairs) found.push(pairs);
      for (const [k, x] of Object.entries(v)) {
        // `$` keys are the product's own bookkeeping on a rewritten row (a field mapping, eagle3prep.jsonc "fieldRoles"), never the dataset's turns.
        if (k.startsWith('$') || isMetadataField(k, x) || pairs?.pairPaths?.includes(path === '' ? k : `${path}.${k}`)) continue;
        visit(x, path === '' ? k : `${path}.${k}`, depth + 1);
      }
    }
  };
  visit(row, '', 0);
  const kindOrder = ['turns', 'turn-lists', 'transcript', 'strings'];
  found.sort((a, b) => Number(b.usable) - Number(a.usable) || kindOrder.indexOf(a.kind) - kindOrder.indexOf(b.kind) || b.withText - a.withText);
  cache.set(row, found);
  return found;
}

function merge(cs: ConversationCandidate[], path: string): ConversationCandidate {
  const roles = [...new Set(cs.flatMap((c) => c.roles))];
  const unknownRoles = [...new Set(cs.flatMap((c) => c.unknownRoles))];
  return {
    path,
    kind: 'turn-lists',
    roleKey: cs[0].roleKey,
    textKey: cs[0].textKey,
    lists: cs.flatMap((c) => c.lists),
    turns: cs.reduce((a, c) => a + c.turns, 0),
    withText: cs.reduce((a, c) => a + c.withText, 0),
    roles,
    unknownRoles,
    usable: cs.every((c) => c.usable),
  };
}

/** A list of turn-like objects: the role key and text key, or undefined. */
function turnListCandidate(list: unknown[], path: string): ConversationCandidate | undefined {
  if (list.length === 0 || !list.every(isObject)) return undefined;
  const turns = list as Row[];
  const keys = [...new Set(turns.flatMap((t) => Object.keys(t)))];
  const allStrings = (k: string) => turns.every((t) => typeof t[k] === 'string' && (t[k] as string).trim() !== '');
  const mapped = keys.filter((k) => allStrings(k) && turns.every((t) => mapRole(t[k]) !== undefined));
  const named = ROLE_NAMES.filter((k) => keys.includes(k) && allStrings(k));
  const roleKey = mapped.sort((a, b) => rank(ROLE_NAMES, a) - rank(ROLE_NAMES, b))[0] ?? named[0];
  if (roleKey === undefined) return undefined;
  const spellings = turns.map((t) => t[roleKey] as string);
  // A role key holds a few distinct short words, not free text.
  if (spellings.some((s) => s.length > 40) || (new Set(spellings).size > 8 && mapped.length === 0)) return undefined;
  const textish = keys.filter(
    (k) =>
      k !== roleKey &&
      turns.filter((t) => typeof t[k] === 'string' || t[k] === null || Array.isArray(t[k])).length * 2 >= turns.length &&
      !isMetadataField(k, 'x y'),
  );
  const named2 = TEXT_NAMES.filter((k) => textish.includes(k));
  const textKey = named2[0] ?? textish.filter((k) => turns.some((t) => typeof t[k] === 'string')).sort((a, b) => avgLen(turns, b) - avgLen(turns, a))[0];
  if (textKey === undefined) return undefined;
  const roles = [...new Set(spellings.map((s) => mapRole(s)).filter((r): r is Role => r !== undefined))];
  const unknownRoles = [...new Set(spellings.filter((s) => mapRole(s) === undefined))];
  return {
    path,
    kind: 'turns',
    roleKey,
    textKey,
    lists: [turns],
    turns: turns.length,
    withText: turns.filter((t) => typeof t[textKey] === 'string' && (t[textKey] as string).trim() !== '').length,
    roles,
    unknownRoles,
    usable: roles.some((r) => r === 'user' || r === 'assistant') && unknownRoles.length === 0,
  };
}

/**
 * Whether every string of a list opens with a known speaker marker (`User: …`, `### Assistant: …`): the
 * markers, not a layout's alternation, say who speaks. Layouts that alternate plain strings (UltraChat
 * `data`, LIMA `conversations`) and MT-bench `turns` step aside for such a list, which is read by its
 * markers (the markers removed from the text), so a marker is never trained as text nor a role flipped.
 */
export function speakerMarkedStrings(list: readonly unknown[]): boolean {
  return list.length > 0 && list.every((s) => typeof s === 'string' && mapRole(SPEAKER_PREFIX_RE.exec(s)?.[1]) !== undefined);
}

/**
 * A list of strings: usable only when every string opens with a known speaker marker (`User: …`), some of them
 * the user's (answers alone have no prompt); otherwise reported with why (its strings named as answers when a part of its
 * path says so: `choices[0].turns`, `responses`).
 */
function stringsCandidate(list: string[], path: string): ConversationCandidate {
  const base = { path, kind: 'strings' as const, lists: [list], turns: list.length, withText: list.filter((s) => s.trim() !== '').length, unknownRoles: [] };
  const marked = list.map((s) => mapRole(SPEAKER_PREFIX_RE.exec(s)?.[1]));
  if (marked.every((r) => r !== undefined)) {
    const stringRoles = marked as Role[];
    if (stringRoles.includes('user')) return { ...base, roles: [...new Set(stringRoles)], usable: true, evidence: 'markers', stringRoles };
    return { ...base, roles: [], usable: false, why: 'every string is marked as a speaker other than the user: no prompt to pair them with' };
  }
  const answers = path.split(/[.[\]]/).find((p) => ANSWER_PATH_RE.test(p));
  const why =
    answers !== undefined
      ? `answers, by their path ("${answers}"), with no questions beside them: no prompt to pair them with`
      : 'no speaker markers ("User: …") and no questions list beside them: which strings are the user’s is not known';
  return { ...base, roles: [], usable: false, why };
}

/**
 * Two string lists of the same length side by side in one object, one named like questions (`questions`,
 * `prompts`, `inputs`, …) and one like answers (`answers`, `responses`, `outputs`, …): one user turn then one
 * assistant turn per position (the `pairs` evidence), `lists[0]` holding them interleaved.
 */
function pairedStrings(o: Row, path: string): ConversationCandidate | undefined {
  const strList = (k: string) => Array.isArray(o[k]) && (o[k] as unknown[]).length > 0 && (o[k] as unknown[]).every((x) => typeof x === 'string');
  const q = Object.keys(o).find((k) => QUESTION_LIST_RE.test(k) && strList(k));
  const a = Object.keys(o).find((k) => ANSWER_LIST_RE.test(k) && strList(k));
  if (q === undefined || a === undefined || (o[q] as string[]).length !== (o[a] as string[]).length) return undefined;
  const qs = o[q] as string[];
  const as = o[a] as string[];
  const list = qs.flatMap((x, i) => [x, as[i]]);
  const at = (k: string) => (path === '' ? k : `${path}.${k}`);
  return {
    path: at(q),
    kind: 'strings',
    lists: [list],
    turns: list.length,
    withText: list.filter((s) => s.trim() !== '').length,
    roles: ['user', 'assistant'],
    unknownRoles: [],
    usable: true,
    evidence: 'pairs',
    stringRoles: list.map((_, i) => (i % 2 === 0 ? 'user' : 'assistant')),
    pairPaths: [at(q), at(a)],
  };
}

function transcriptCandidate(text: string, path: string): ConversationCandidate | undefined {
  if (text.length < 16) return undefined;
  for (const set of [HH_MARKERS, GUANACO_MARKERS]) {
    const s = splitByMarkers(text, set);
    if (s && s.turns.length >= 2 && s.turns.some((t) => t.role === 'assistant')) {
      return transcript(path, set.name, s.turns.length, s.turns.filter((t) => t.content !== '').length, [...new Set(s.turns.map((t) => t.role))]);
    }
  }
  if (text.includes('<|im_start|>')) {
    const c = splitChatMl(text);
    const roles = (c ?? []).map((t) => mapRole(t.role));
    if (c && c.length >= 2 && roles.includes('user') && roles.includes('assistant')) {
      return transcript(
        path,
        'ChatML',
        c.length,
        c.filter((t) => t.content !== '').length,
        [...new Set(roles)].filter((r): r is Role => r !== undefined),
      );
    }
  }
  return undefined;
}

function transcript(path: string, markers: string, turns: number, withText: number, roles: Role[]): ConversationCandidate {
  return { path, kind: 'transcript', markers, lists: [], turns, withText, roles, unknownRoles: [], usable: true };
}

function rank(order: readonly string[], k: string): number {
  const i = order.indexOf(k);
  return i < 0 ? order.length : i;
}

function avgLen(turns: Row[], k: string): number {
  const v = turns.map((t) => t[k]).filter((x): x is string => typeof x === 'string');
  return v.length ? v.reduce((a, s) => a + s.length, 0) / v.length : 0;
}

/** The value at a candidate path's start key (the row field that holds it): `traj` for `traj`, `data` for `data.episode.turns`. */
export function topKey(path: string): string {
  return path.split(/[.[]/)[0];
}
