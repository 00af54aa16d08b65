/**
 * Shape handlers for instruction sets whose rows hold several exchanges:
 * - benchmark question files with several user turns per row (MT-bench
 *   `question.jsonl`: `{"question_id", "category", "turns": ["…", "…"],
 *   "reference"?}`, FastChat `llm_judge`; Arena-Hard writes `turns` as
 *   `[{"content": "…"}]`): a prompt whose user turns the target model answers in
 *   order (`generate` asks each one after its answer to the previous);
 * - Self-Instruct seed tasks (`seed_tasks.jsonl`: `{"id", "name",
 *   "instruction", "instances": [{"input", "output"}], "is_classification"}`,
 *   github.com/yizhongw/self-instruct): every instance is one example — the
 *   instruction (with the instance's input) then the instance's output as the
 *   answer.
 */
import type { Message, RowOutcome } from '../types';
import { finish, splitOutcome } from './rowEnd';
import { isObject, nonEmptyString, type Row, type ShapeHandler } from './base';
import { toText } from './content';
import { speakerMarkedStrings } from './discovery';

/** A benchmark question turn: a string, or `{"content": "…"}` with no role (Arena-Hard). */
function questionText(t: unknown): string | undefined {
  if (nonEmptyString(t)) return t;
  if (isObject(t) && nonEmptyString(t.content) && !('role' in t) && !('from' in t)) return t.content;
  return undefined;
}

function questionTurns(row: Row): string[] | undefined {
  const v = row.turns;
  // Strings that say who speaks (`User: …`, `Assistant: …`) are a dialogue read by its markers, not questions.
  if (!Array.isArray(v) || v.length === 0 || speakerMarkedStrings(v)) return undefined;
  const texts = v.map(questionText);
  return texts.every((t) => t !== undefined) ? (texts as string[]) : undefined;
}

/**
 * MT-bench style question rows: each string of `turns` is a user turn; the row
 * is a prompt (set aside in `prompts_to_generate.jsonl`) whose later user turns
 * follow empty assistant turns, the places `generate` answers in order (noted
 * `multi_turn_prompt` when there are several). `reference` answers (written for
 * judging) are not used, noted.
 */
export const questionTurnsHandler: ShapeHandler = {
  name: 'question-turns',
  matches: (row) => questionTurns(row) !== undefined,
  describe: (row) => `"turns": ${questionTurns(row)!.length === 1 ? 'one user question' : 'user questions asked in order'} (MT-bench style prompt set)`,
  roles: () => [],
  normalize(row, ctx) {
    const turns = questionTurns(row)!;
    ctx.fields.use(row, 'turns');
    if ('reference' in row) {
      ctx.fields.use(row, 'reference');
      ctx.note('reference_answers_not_used', '"reference" answers (written for judging) are not used: the target model answers the questions');
    }
    const messages: Message[] = [];
    turns.forEach((t, i) => {
      if (i > 0) messages.push({ role: 'assistant', content: '' });
      messages.push({ role: 'user', content: t });
    });
    return finish(row, messages, ctx);
  },
};

function instances(row: Row): Row[] | undefined {
  const v = row.instances;
  if (!nonEmptyString(row.instruction) || !Array.isArray(v) || v.length === 0) return undefined;
  return v.every((x) => isObject(x) && 'output' in x) ? (v as Row[]) : undefined;
}

/**
 * Self-Instruct seed tasks: one conversation per instance — a user turn with the
 * instruction (and the instance's `input` after a blank line, as Alpaca joins
 * them) and the instance's `output` as the answer (an empty output makes that
 * instance a prompt). Several instances → a `split` row, ids `<id>/<k>`.
 */
export const selfInstructHandler: ShapeHandler = {
  name: 'self-instruct-task',
  matches: (row) => instances(row) !== undefined,
  describe: () => '"instruction" + "instances" of {input, output} (Self-Instruct tasks: one example per instance)',
  roles: () => [],
  normalize(row, ctx) {
    const list = instances(row)!;
    ctx.fields.use(row, 'instruction', 'instances');
    ctx.note('instances_as_examples', 'each of the task\'s "instances" is one example: instruction (+ input) → output');
    const parts: RowOutcome[] = [];
    for (const inst of list) {
      ctx.fields.track(inst, 'instances[].');
      ctx.fields.use(inst, 'input', 'output');
      let user = row.instruction as string;
      if (nonEmptyString(inst.input)) {
        user = `${user}\n\n${inst.input}`;
        ctx.note('instruction_input_joined', '"instruction" and an instance\'s "input" joined into the user turn (blank line between)');
      }
      const messages: Message[] = [{ role: 'user', content: user }];
      const out = toText(inst.output, ctx);
      if (out !== '') messages.push({ role: 'assistant', content: out });
      parts.push(finish(row, messages, ctx));
    }
    return splitOutcome(parts, ctx);
  },
};
