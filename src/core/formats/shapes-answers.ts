/**
 * Several answers to one prompt (issue 20, "Answers to one prompt"): a prompt field beside
 * - a pair of answer fields with the same stem and paired suffixes (`output_1`/`output_2`,
 *   `response_a`/`response_b`, `response_j`/`response_k`), optionally with a preference signal:
 *   a field whose name says it (`preference`, `winner`, `choice`, `chosen`, `better`, `label`) and whose
 *   value names one of the two (`2`, `"model_a"`, `"response_j"`), or per-answer scores
 *   (`score_1`/`score_2`, `reward_a`/`reward_b`);
 * - a list of answers (`generations`, `responses`, `outputs`, `completions`, `samples`, `code`, … holding
 *   model text: words, longer than a label; or any list whose strings hold reasoning markers), strings or
 *   objects with a text field,
 *   optionally with per-answer scores (a parallel list such as `scores`/`rewards`/`score`, or a score
 *   field inside each object).
 *
 * Rule (never prompts-only while answers are present): with a preference signal or scores, the preferred
 * (best-scored) answer is trained, ties going to the first in order (noted `no_preferred_answer`); without
 * one, each distinct answer is its own record with the shared prompt (a `split` row, ids `<id>/<k>`).
 * `eagle3prep.jsonc` `"reading": {"answers": …}` chooses otherwise: `all` (each answer, even when one is
 * preferred), `first` (the first answer), `best` (the default rule; without a signal there is no best: each).
 * A short label in a response field beside them (`"answer": 27`, a ground truth for grading) is not the
 * answer: it is read as a label, never trained (noted `short_label_not_trained`).
 */
import type { Message, RowOutcome } from '../types';
import { convertTurns } from './common';
import { errored, isObject, isTurnError, nonEmptyString, type NormalizeContext, type Row, type ShapeHandler } from './base';
import { finish, splitOutcome } from './rowEnd';
import { isLabelValue } from './labels';
import { answerAfterPrompt, PROMPT_KEYS, promptText, RESPONSE_KEYS } from './shapes-instruct';

/** Field-name stems that hold what a model wrote (singular or plural). */
const ANSWER_STEM_RE = /^(responses?|completions?|outputs?|answers?|solutions?|generations?|generated|repl(y|ies)|samples?|candidates?|predictions?|code)$/i;
/** Names of a field that says which answer is preferred. */
const PREFERENCE_NAME_RE = /prefer|winner|choice|chosen|better|label/i;
/** Names of per-answer score fields / lists. */
const SCORE_NAME_RE = /score|reward|rating|correct|pass/i;
/** Markers that only a reasoning model's output holds. */
const REASONING_MARKER_RE = /<think>|<\/think>|<\|begin_of_thought\|>|<\|end_of_thought\|>/;
/** Text keys of an answer given as an object, in priority order. */
const ANSWER_TEXT_KEYS = ['text', 'content', 'response', 'output', 'completion', 'answer', 'generation'];

/** Paired suffixes of two answer fields, in order (the first is answer 1). */
const PAIRS: [string, string][] = [
  ['1', '2'],
  ['0', '1'],
  ['a', 'b'],
  ['j', 'k'],
];

/** The answers found in a row, where they came from and how one is preferred. */
export interface AnswerSet {
  /** `pair`: two fields; `list`: one list field. */
  kind: 'pair' | 'list';
  /** The answer fields (`["output_1", "output_2"]`, or `["generations"]`). */
  fields: string[];
  /** Each answer's text, in order. */
  texts: string[];
  /** Each answer's score when the row scores them (higher is better; `true` counts 1, `false` 0). */
  scores?: (number | undefined)[];
  /** The field holding the preference or the scores (for notes and reads). */
  signalFields: string[];
  /** 0-based index of the preferred answer; `tie` when the signal picks none (a tie, `null`, a value naming neither). */
  preferred?: number | 'tie';
}

function promptField(row: Row): string | undefined {
  return PROMPT_KEYS.find((k) => nonEmptyString(row[k]));
}

/** Whether a string looks written by a model: words (whitespace) or reasoning markers. */
function isText(s: string): boolean {
  return /\s/.test(s.trim()) || REASONING_MARKER_RE.test(s);
}

function answerPair(row: Row): { fields: [string, string]; suffixes: [string, string] } | undefined {
  for (const key of Object.keys(row)) {
    for (const [a, b] of PAIRS) {
      for (const sep of ['_', '-', '']) {
        if (sep === '' && !/^\d$/.test(a)) continue;
        const end = `${sep}${a}`;
        if (!key.toLowerCase().endsWith(end) || key.length === end.length) continue;
        const stem = key.slice(0, key.length - end.length);
        const other = `${stem}${sep}${key.slice(key.length - a.length) === a ? b : b.toUpperCase()}`;
        if (!ANSWER_STEM_RE.test(stem) || !(other in row)) continue;
        const v1 = row[key];
        const v2 = row[other];
        if (typeof v1 !== 'string' || typeof v2 !== 'string' || (v1.trim() === '' && v2.trim() === '')) continue;
        return { fields: [key, other], suffixes: [a, b] };
      }
    }
  }
  return undefined;
}

/** Which of the two suffixes a preference value names: 0, 1, `tie` (present but picks none), undefined (not a preference value). */
function preferenceValue(v: unknown, [a, b]: [string, string]): 0 | 1 | 'tie' | undefined {
  if (v === null) return 'tie';
  if (typeof v === 'number') {
    if (String(v) === a) return 0;
    if (String(v) === b) return 1;
    return 'tie';
  }
  if (typeof v !== 'string') return undefined;
  const t = v.trim().toLowerCase();
  const names = (s: string) => t === s || new RegExp(`[_\\-\\s]${s}$`).test(t);
  if (names(a)) return 0;
  if (names(b)) return 1;
  if (/^(tie|both|equal|none|neither|draw)/.test(t) || t === '') return 'tie';
  return undefined;
}

function numericScore(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return undefined;
}

function pairSignal(row: Row, fields: [string, string], suffixes: [string, string]): Pick<AnswerSet, 'scores' | 'signalFields' | 'preferred'> {
  for (const [k, v] of Object.entries(row)) {
    if (fields.includes(k) || !PREFERENCE_NAME_RE.test(k)) continue;
    const p = preferenceValue(v, suffixes);
    if (p !== undefined) return { signalFields: [k], preferred: p };
  }
  // Per-answer scores: `<score word><sep><suffix>` fields with numbers.
  for (const k of Object.keys(row)) {
    if (!SCORE_NAME_RE.test(k)) continue;
    for (const sep of ['_', '-', '']) {
      const end = `${sep}${suffixes[0]}`;
      if (!k.toLowerCase().endsWith(end)) continue;
      const other = `${k.slice(0, k.length - end.length)}${sep}${suffixes[1]}`;
      const s = [numericScore(row[k]), numericScore(row[other])];
      if (s[0] !== undefined && s[1] !== undefined) return { signalFields: [k, other], scores: s, preferred: bestOf(s) };
    }
  }
  return { signalFields: [] };
}

/** Index of the highest score; `tie` when two share it. */
function bestOf(scores: (number | undefined)[]): number | 'tie' {
  let best = -1;
  let tie = false;
  scores.forEach((s, i) => {
    if (s === undefined) return;
    if (best < 0 || s > scores[best]!) {
      best = i;
      tie = false;
    } else if (s === scores[best]) tie = true;
  });
  return best < 0 || tie ? 'tie' : best;
}

function answerTextOf(item: unknown): { text: string; score?: number } | undefined {
  if (typeof item === 'string') return { text: item };
  if (!isObject(item)) return undefined;
  const k = ANSWER_TEXT_KEYS.find((x) => typeof item[x] === 'string');
  if (!k) return undefined;
  const sk = Object.keys(item).find((x) => SCORE_NAME_RE.test(x) && numericScore(item[x]) !== undefined);
  return { text: item[k] as string, ...(sk ? { score: numericScore(item[sk]) } : {}) };
}

function answerList(row: Row): { field: string; texts: string[]; itemScores: (number | undefined)[] } | undefined {
  for (const [k, v] of Object.entries(row)) {
    if (!Array.isArray(v) || v.length === 0) continue;
    const items = v.map(answerTextOf);
    if (items.some((x) => x === undefined)) continue;
    const texts = (items as { text: string; score?: number }[]).map((x) => x.text);
    const marked = texts.some((t) => REASONING_MARKER_RE.test(t));
    // Scored answers are candidates a model wrote, short ones too ("Rome" scored 1, "Milan" 0): a label has no score.
    const scored =
      items.some((x) => x!.score !== undefined) ||
      Object.entries(row).some(
        ([sk, sv]) => sk !== k && SCORE_NAME_RE.test(sk) && Array.isArray(sv) && sv.length === v.length && sv.every((x) => numericScore(x) !== undefined),
      );
    // Beside a label-like response field ("answer": "14"), an answers list holds what the model wrote and the
    // field its ground truth: the list is read, the label never trained (a short label never wins).
    const labelBeside = RESPONSE_KEYS.some((rk) => rk !== k && isLabelValue(row[rk]));
    if (!marked && !(ANSWER_STEM_RE.test(k) && (scored || labelBeside || texts.some((t) => isText(t) && !isLabelValue(t))))) continue;
    return { field: k, texts, itemScores: (items as { score?: number }[]).map((x) => x.score) };
  }
  return undefined;
}

/**
 * The answers of a row with a prompt field (see the module doc), or undefined when the row has none, or
 * when a response field already holds model text (a prompt/response row: that handler reads it).
 */
export function answerSet(row: Row): AnswerSet | undefined {
  if (!promptField(row)) return undefined;
  if (RESPONSE_KEYS.some((k) => nonEmptyString(row[k]) && !isLabelValue(row[k]))) return undefined;
  const pair = answerPair(row);
  if (pair) {
    return { kind: 'pair', fields: pair.fields, texts: pair.fields.map((f) => row[f] as string), ...pairSignal(row, pair.fields, pair.suffixes) };
  }
  const list = answerList(row);
  if (!list) return undefined;
  const set: AnswerSet = { kind: 'list', fields: [list.field], texts: list.texts, signalFields: [] };
  if (list.itemScores.some((s) => s !== undefined)) {
    set.scores = list.itemScores;
    set.preferred = bestOf(list.itemScores);
  } else {
    for (const [k, v] of Object.entries(row)) {
      if (k === list.field || !SCORE_NAME_RE.test(k) || !Array.isArray(v) || v.length !== list.texts.length) continue;
      const s = v.map(numericScore);
      if (s.every((x) => x !== undefined)) {
        set.scores = s;
        set.signalFields = [k];
        set.preferred = list.texts.length === 1 ? 0 : bestOf(s);
        break;
      }
    }
  }
  return set;
}

function describeSet(row: Row): string {
  const s = answerSet(row)!;
  const where = s.kind === 'pair' ? `"${s.fields[0]}"/"${s.fields[1]}"` : `"${s.fields[0]}" (${s.texts.length} answer${s.texts.length === 1 ? '' : 's'})`;
  const signal = s.signalFields.length ? ` + ${s.scores ? 'scores' : 'preference'} "${s.signalFields.join('"/"')}"` : '';
  return `"${promptField(row)}" + answers ${where}${signal}: several answers to one prompt`;
}

/** One record: the prompt (read afresh: finish mutates its messages), then the answer as an assistant turn. */
function answerRecord(row: Row, text: string, label: string, ctx: NormalizeContext): RowOutcome {
  const prompt = promptText(row, promptField(row)!, ctx);
  const field = label.replace(/[.[\]]+$/, '');
  const answer = convertTurns([{ role: 'assistant', content: answerAfterPrompt(prompt, text, field, ctx) }], ctx, { label });
  if (isTurnError(answer)) return errored(ctx, answer.code, `"${field}": ${answer.message}`);
  return finish(row, [...prompt, ...(answer as Message[])], ctx);
}

/**
 * Rows with a prompt and several answers to it (module doc): the preferred answer when the row says which
 * (preference field or scores), else one record per distinct answer.
 */
export const answersHandler: ShapeHandler = {
  name: 'prompt-answers',
  matches: (row) => answerSet(row) !== undefined,
  describe: describeSet,
  roles: () => [],
  normalize(row, ctx) {
    const set = answerSet(row)!;
    ctx.fields.use(row, ...set.fields, ...set.signalFields);
    for (const k of RESPONSE_KEYS) {
      if (!set.fields.includes(k) && isLabelValue(row[k])) {
        ctx.fields.use(row, k);
        ctx.note(
          'short_label_not_trained',
          `"${k}" holds a short label (a ground truth such as a number or a letter) beside the model-written answers: read as a label, not trained`,
        );
      }
    }
    const label = (i: number) => (set.kind === 'pair' ? `${set.fields[i]}.` : `${set.fields[0]}[].`);
    // eagle3prep.jsonc "reading": "answers"; default: the preferred one when the row says which, else each.
    const mode = ctx.options.answers ?? (set.preferred !== undefined ? 'best' : 'all');
    if (mode === 'first' && set.texts.length > 1) {
      ctx.note('first_answer_used', 'several answers to one prompt: the first is trained ("answers": "first"), the others not used');
      return answerRecord(row, set.texts[0], label(0), ctx);
    }
    if (mode === 'first' || (mode === 'best' && set.preferred !== undefined)) {
      let i = (set.preferred ?? 0) as number;
      if (set.preferred === 'tie') {
        i = 0;
        if (set.texts.length > 1 && new Set(set.texts).size > 1) {
          ctx.note(
            'no_preferred_answer',
            `the row's ${set.scores ? 'scores' : 'preference'} ("${set.signalFields.join('"/"')}") pick no single answer: the first one is trained`,
          );
        }
      } else if (set.texts.length > 1)
        ctx.note('preferred_answer_used', `several answers to one prompt: the one the row prefers is trained, the others not used`);
      return answerRecord(row, set.texts[i], label(i), ctx);
    }
    const seen = new Set<string>();
    const parts: RowOutcome[] = [];
    set.texts.forEach((t, i) => {
      if (seen.has(t)) return;
      seen.add(t);
      parts.push(answerRecord(row, t, label(i), ctx));
    });
    if (parts.length > 1) ctx.note('answers_as_records', 'several answers to one prompt: each answer is its own record with the shared prompt');
    return splitOutcome(parts, ctx);
  },
};
