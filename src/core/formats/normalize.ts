/**
 * Normalization: one raw dataset row → one {@link RowOutcome} in the message
 * model of `../types.ts`.
 *
 * Table-driven: {@link SHAPES} is an ordered list of {@link ShapeHandler}s, each
 * recognizing one row shape (`matches`), describing it for format detection
 * (`describe`, `roles`) and converting it (`normalize`). The first handler
 * whose `matches` is true owns the row. `detect.ts` uses the same table, so a
 * new shape is added in exactly one place: a handler in one of the
 * `shapes-*.ts` files, listed here (order matters).
 *
 * The shared turn conversion (roles, content parts, tool calls, reasoning,
 * training flags) is `common.ts`; its rules are documented there.
 */
import type { Code } from '../codes';
import type { Conversation, RowOutcome, Source } from '../types';
import { describeJsonType, drop, type NormalizeContext, type NormalizeOptions, type Row, type ShapeHandler } from './base';
import { describeCandidate, findConversations } from './discovery';
import { ASSIGNED_ROLES_KEY, datasetKeys, type AssignedRoles } from './fieldRoles';
import { FieldTracker } from './fields';
import { modelTextFields } from './modelText';
import { suggestMappingLine } from './mapping';
import { foundConversationHandler, noneWritten, placeOf, withOtherConversations } from './shapes-found';
import { atifHandler, openHandsEventsHandler, sweAgentTrajHandler, trajectoryStepsHandler } from './shapes-agent';
import {
  alpacaTextHandler,
  chatmlHandler,
  glaiveHandler,
  guanacoHandler,
  limaHandler,
  hhTextHandler,
  llama2Handler,
  mappedHandler,
  oasstMessageHandler,
  oasstTreeHandler,
  TURN_LIST_FIELDS,
  turnListHandler,
  ultrachatHandler,
} from './shapes-chat';
import {
  messagesCompletionHandler,
  pairListHandler,
  promptOnlyHandler,
  promptResponseHandler,
  promptTurnsHandler,
  queryToolsAnswersHandler,
  requestResponseHandler,
} from './shapes-instruct';
import { eventLineHandler, eventLogHandler } from './eventLog';
import { oasstPathHandler } from './oasst';
import { ktoHandler, llamaFactoryPreferenceHandler, openAiPreferenceHandler, preferenceHandler } from './shapes-preference';
import { questionTurnsHandler, selfInstructHandler } from './shapes-prompts';
import { answersWithoutPromptHandler, geminiBatchHandler } from './shapes-batch';
import { answersHandler } from './shapes-answers';
import { isStackOverflow, parseJsonLimited } from '../jsonDepth';

/** Result of {@link normalizeDetailed}: the outcome plus what detection needs to explain it. */
export interface DetailedOutcome {
  outcome: RowOutcome;
  /** The handler that owned the row; undefined for an unrecognized row. */
  handler?: ShapeHandler;
  /** Human-readable facts observed while normalizing (deduplicated, row-independent wording). */
  facts: string[];
  /** The object the handler read (the row, or the object a JSON-string row holds); undefined for an unrecognized row. */
  row?: Row;
}

/**
 * The shape table, in match order. Earlier handlers win: rows rewritten by a
 * field-mapping file → rows of the OpenAssistant file pass → rows of the
 * event-log file pass → agent CLI event lines (dropped, explained) → KTO rows →
 * preference rows (OpenAI `preferred_output`, LLaMA-Factory `chosen_messages`,
 * `chosen`, even beside `messages`) → SWE-agent `.traj` → `messages` +
 * `completion` → OpenAI `messages` → ShareGPT `conversations` (from/value) →
 * OpenHands events → ATIF steps → {input, output} pair lists → other
 * role/text turn lists → role-less step lists → prompt turn list + completion
 * → chat-completions request/response logs → Gemini batch prediction lines → UltraChat → MT-bench question
 * turns → OpenAssistant trees → xLAM query/tools/answers → marker transcripts
 * (Glaive, ChatML, Guanaco, HH) → a prompt with several answers → Self-Instruct tasks → prompt + response →
 * prompt only → OpenAssistant single-message rows (dropped, explained) → batch
 * output lines without their request (errored, explained) → a conversation
 * found anywhere in the row (`discovery.ts`).
 */
export const SHAPES: ShapeHandler[] = [
  // Rows rewritten by a field-mapping file (eagle3prep.jsonc / --mapping) come first: the user said how to read them.
  mappedHandler,
  // Rows written by the OpenAssistant file pass (oasst.ts): a root-to-leaf path, or a message row dropped with its reason.
  oasstPathHandler,
  // Rows written by the event-log file pass (eventLog.ts), then an agent CLI event line read on its own (dropped, explained).
  eventLogHandler,
  eventLineHandler,
  // KTO (boolean "label": false rows are never trained), then the preference layouts: only the preferred answer is trained.
  ktoHandler,
  openAiPreferenceHandler,
  llamaFactoryPreferenceHandler,
  preferenceHandler,
  sweAgentTrajHandler,
  // "messages" + "completion": the messages are the prompt (its assistant turns are context).
  messagesCompletionHandler,
  // OpenAI chat-completions `messages` (platform.openai.com/docs/api-reference/chat); also Anthropic content blocks, mini-swe-agent runs.
  turnListHandler('openai-messages', ['messages'], 'role'),
  // ShareGPT: `conversations` of {from, value} (FastChat / LLaMA-Factory sharegpt format, incl. function_call / observation turns).
  turnListHandler('sharegpt', ['conversations'], 'from'),
  openHandsEventsHandler,
  atifHandler,
  pairListHandler,
  // Trajectories / chats stored under another field with role + text|content keys (SWE-agent `trajectory`, LMSYS/WildChat `conversation`, …).
  turnListHandler('role-text-trajectory', TURN_LIST_FIELDS, 'role'),
  turnListHandler(
    'role-text-trajectory',
    TURN_LIST_FIELDS.filter((f) => f !== 'conversations'),
    'from',
  ),
  trajectoryStepsHandler,
  promptTurnsHandler,
  requestResponseHandler,
  // Gemini / Vertex AI batch prediction lines: request.contents + response.candidates.
  geminiBatchHandler,
  ultrachatHandler,
  limaHandler,
  // MT-bench style "turns": ["q1", "q2"]: a prompt whose user turns are answered in order.
  questionTurnsHandler,
  oasstTreeHandler,
  queryToolsAnswersHandler,
  glaiveHandler,
  chatmlHandler,
  llama2Handler,
  guanacoHandler,
  hhTextHandler,
  // A prompt with several answers (output_1/output_2 + preference, generations lists): the preferred one, else each its own record.
  answersHandler,
  // Self-Instruct tasks: "instruction" + "instances" [{input, output}] (before the instruction/output rows).
  selfInstructHandler,
  promptResponseHandler,
  promptOnlyHandler,
  // A `text` written in the Alpaca template, only when no instruction/output fields exist (tatsu-lab/alpaca has both).
  alpacaTextHandler,
  oasstMessageHandler,
  // Batch output lines holding answers without their request: errored, naming the join that reads them.
  answersWithoutPromptHandler,
  // No known shape: the conversation found by searching the row's structure (discovery.ts), named in the evidence.
  foundConversationHandler,
];

/**
 * Normalize one row (a parsed JSON value) into an outcome.
 *
 * - `conversation`: messages with at least one assistant turn that says something.
 * - `prompt`: no answer yet (prompt-only rows, user-only message lists, MT-bench
 *   question turns); the target model must answer first.
 * - `split`: several conversations in one row (Self-Instruct instances, a list
 *   of conversation lists), one part each.
 * - `dropped`: `empty_conversation` (zero turns), `no_assistant_turn` (neither a
 *   user nor an assistant turn), `unrecognized_shape` (message names the keys
 *   and the candidate conversations seen), `message_fragment` (one message of a
 *   tree read outside its file), `kto_undesirable` (a KTO row labelled
 *   undesirable: never trained).
 * - `errored`: bad data in a recognized shape, with a code (`unknown_role`,
 *   `bad_tool_calls`, …), e.g.
 *   `unknown role "narrator" in message 3 (known: …); add it to "roleAliases" in eagle3prep.jsonc`.
 *
 * Conversations carry the row's unread fields (`Conversation.unreadFields`,
 * `fields.ts`). The id is the row's own id field (`ID_KEYS`) when it is a
 * string or number, else `${fileBase}:${source.line}`. Never throws.
 */
export function normalizeRow(value: unknown, source: Source, fileBase: string, options: NormalizeOptions = {}): RowOutcome {
  return normalizeDetailed(value, source, fileBase, options).outcome;
}

/** The conversations of an outcome (one, the parts of a split, or none). */
export function conversationsOf(o: RowOutcome): { kind: 'conversation' | 'prompt'; conversation: Conversation }[] {
  if (o.kind === 'conversation' || o.kind === 'prompt') return [{ kind: o.kind, conversation: o.conversation }];
  if (o.kind === 'split') return o.parts;
  return [];
}

/** {@link normalizeRow} plus the owning handler and the facts observed (used by format detection). Never throws. */
export function normalizeDetailed(value: unknown, source: Source, fileBase: string, options: NormalizeOptions = {}): DetailedOutcome {
  const decoded = typeof value === 'string' ? decodedRowString(value, source, fileBase, options) : undefined;
  if (decoded) return decoded;
  const { ctx, notes, facts } = rowContext(source, fileBase, options);
  if (!isRow(value)) {
    return { outcome: drop(source, 'unrecognized_shape', `row is ${describeJsonType(value)}, not an object`), facts };
  }
  const handler = findHandler(value);
  if (!handler) return { outcome: drop(source, 'unrecognized_shape', unrecognizedMessage(value, fileBase)), facts };
  ctx.fields.track(value, '');
  let outcome = handledRow(handler, value, ctx);
  if (!ONE_CONVERSATION_SHAPES.has(handler) && outcome.kind !== 'dropped') outcome = otherConversations(value, outcome, ctx);
  const assigned = isRow(value[ASSIGNED_ROLES_KEY]) ? (value[ASSIGNED_ROLES_KEY] as unknown as AssignedRoles) : undefined;
  noteAssignedRoles(assigned, ctx);
  const convs = conversationsOf(outcome);
  if (convs.length) {
    const unread = unreadFields(convs, assigned, ctx);
    for (const { conversation } of convs) {
      if (notes.length) conversation.notes = [...(conversation.notes ?? []), ...notes.filter((n) => !conversation.notes?.includes(n))];
      if (unread.length) conversation.unreadFields = unread;
    }
  }
  return { outcome, handler, facts, row: value };
}

/** A row's normalization context, with the notes (each code once, in order) and facts it collects. */
function rowContext(source: Source, fileBase: string, options: NormalizeOptions): { ctx: NormalizeContext; notes: Code[]; facts: string[] } {
  const notes: Code[] = [];
  const facts: string[] = [];
  const ctx: NormalizeContext = {
    source,
    fileBase,
    options,
    fields: new FieldTracker(),
    nonText: [],
    note(code, fact) {
      if (!notes.includes(code)) notes.push(code);
      if (fact !== undefined && !facts.includes(fact)) facts.push(fact);
    },
    fact(text) {
      if (!facts.includes(text)) facts.push(text);
    },
  };
  return { ctx, notes, facts };
}

/**
 * A row stored as a JSON string holding the object (double-encoded JSON Lines): the object normalized, its
 * conversations noted `row_json_string`. Undefined when the string does not hold a JSON object.
 */
function decodedRowString(value: string, source: Source, fileBase: string, options: NormalizeOptions): DetailedOutcome | undefined {
  if (!/^\s*\{/.test(value)) return undefined;
  try {
    const inner: unknown = parseJsonLimited(value);
    if (!isRow(inner)) return undefined;
    const d = normalizeDetailed(inner, source, fileBase, options);
    d.facts.push('row is a JSON string holding the object (decoded)');
    for (const { conversation } of conversationsOf(d.outcome)) conversation.notes = [...(conversation.notes ?? []), 'row_json_string'];
    return d;
  } catch {
    return undefined; // not JSON inside: unrecognized
  }
}

/** The handler's outcome for the row; a handler that throws makes the row `internal_error` (a row too deep to walk says so). */
function handledRow(handler: ShapeHandler, value: Row, ctx: NormalizeContext): RowOutcome {
  try {
    return handler.normalize(value, ctx);
  } catch (err) {
    const why = isStackOverflow(err)
      ? `the row is nested too deep to normalize (JavaScript stack overflow: ${(err as Error).message})`
      : `internal error normalizing ${handler.name} row: ${err instanceof Error ? err.message : String(err)} (please report it with the row's shape)`;
    return { kind: 'errored', source: ctx.source, message: why, code: 'internal_error' };
  }
}

/**
 * The roles eagle3prep.jsonc "fieldRoles" assigned (`fieldRoles.ts`), said (`field_role_assigned`, with the fields they
 * displaced), and the config's paths the row does not have (`field_role_unmatched`), so a misspelled one is seen
 * (counted per row in the summary).
 */
function noteAssignedRoles(assigned: AssignedRoles | undefined, ctx: NormalizeContext): void {
  if (assigned && Object.keys(assigned.roles).length) {
    const said = Object.entries(assigned.roles).map(
      ([p, r]) =>
        `"${p}" as ${r === 'label' ? 'a label (never read as text)' : r === 'metadata' ? 'metadata (never read as text)' : `the ${r}`}${Object.entries(
          assigned.renamed,
        )
          .filter(([, from]) => from === p)
          .map(([to]) => ` (read as "${to}")`)
          .join('')}`,
    );
    ctx.note('field_role_assigned', `read as eagle3prep.jsonc "fieldRoles" says: ${said.join(', ')}`);
  }
  const unmatched = assigned?.unmatched ?? [];
  if (unmatched.length)
    ctx.note(
      'field_role_unmatched',
      `eagle3prep.jsonc "fieldRoles" path${unmatched.length > 1 ? 's' : ''} ${unmatched.map((p) => `"${p}"`).join(', ')} matched no field`,
    );
}

/**
 * The row's fields no conversation read, as the dataset writes them (an assigned field by its own name, a displaced one
 * by its own), noted `fields_not_read` (detect.ts sums them per field for the evidence). An unread field that looks
 * model-written (`modelText.ts`) is a warning of its own: `longest_text_not_read` when it is longer than every turn read
 * (most likely the row's answer), else `model_text_not_read`.
 */
function unreadFields(convs: { conversation: Conversation }[], assigned: AssignedRoles | undefined, ctx: NormalizeContext): string[] {
  const named = (p: string) => assigned?.renamed[p] ?? p;
  // Without assigned roles the tracker's paths are the list (distinct already, in order): no copies per row.
  const unread = assigned ? [...new Set([...assigned.displaced, ...ctx.fields.unread().map(named)])] : ctx.fields.unread();
  if (!unread.length) return unread;
  ctx.note('fields_not_read');
  const readTexts = convs.flatMap(({ conversation: c }) => c.messages.flatMap((m) => [m.content ?? '', m.reasoning_content ?? '']));
  const longestRead = Math.max(0, ...readTexts.map((t) => t.trim().length));
  const unreadValues = new Map([...ctx.fields.unreadValues()].map(([p, v]) => [named(p), v]));
  for (const { path, longest } of modelTextFields(unreadValues, readTexts)) {
    if (longest > longestRead) ctx.note('longest_text_not_read', `"${path}" looks written by a model and is longer than every turn read: not read`);
    else ctx.note('model_text_not_read', `"${path}" looks written by a model (long prose or code) and is not read`);
  }
  return unread;
}

/**
 * Shapes never searched for other conversations: a field mapping (the user named the turns), the file passes
 * (OpenAssistant, event logs: whole conversations rebuilt across rows), the preference layouts (their other
 * lists are the compared sides), a row of no known shape (its own search reads every conversation found) and
 * the rows that are errored or dropped whole.
 */
const ONE_CONVERSATION_SHAPES: ReadonlySet<ShapeHandler> = new Set([
  mappedHandler,
  oasstPathHandler,
  eventLogHandler,
  eventLineHandler,
  ktoHandler,
  openAiPreferenceHandler,
  llamaFactoryPreferenceHandler,
  preferenceHandler,
  oasstMessageHandler,
  answersWithoutPromptHandler,
  foundConversationHandler,
]);

/**
 * Several conversations in one row of a known shape (issue 20): the places of the row no field of which the
 * shape read that hold a list of turns with known speakers (or a list of such lists, `discovery.ts`) are other
 * conversations of the row, one record each (`shapes-found.ts` {@link withOtherConversations}). Strings and
 * transcripts are not searched here: beside a shape that read the row they are most often its rendered copy.
 * When the shape's conversation errored, the row errors whole, and the message says so when it holds others.
 */
function otherConversations(row: Row, outcome: RowOutcome, ctx: NormalizeContext): RowOutcome {
  const used = ctx.fields.usedKeys(row);
  // Only the unread fields that can hold a list are searched (most rows have none: no search at all).
  const rest: Row = {};
  for (const [k, v] of Object.entries(row)) {
    if (used?.has(k) || k.startsWith('$')) continue;
    if (mayHoldTurns(v)) rest[k] = v;
  }
  if (Object.keys(rest).length === 0) return outcome;
  const others = findConversations(rest).filter((c) => c.usable && (c.kind === 'turns' || c.kind === 'turn-lists'));
  if (others.length === 0) return outcome;
  if (outcome.kind === 'errored') {
    // The conversation the shape read errored: the message names its fields and says the others are not written either.
    const at = [...(used ?? [])].map((k) => `"${k}"`).join(' + ');
    const prefix = at && !outcome.message.startsWith('"') ? `${at}: ` : '';
    return { ...outcome, message: `${prefix}${outcome.message}${noneWritten(others.map(placeOf).join(', '))}` };
  }
  return withOtherConversations(row, outcome, others, ctx);
}

/**
 * Whether a value can hold a list of turn objects: a list with an object in it, at any depth (at most 2,000
 * values looked at), or a string that may be JSON. A cheap test before the search of `discovery.ts`.
 */
function mayHoldTurns(v: unknown): boolean {
  let budget = 2000;
  const walk = (x: unknown, depth: number): boolean => {
    if (--budget < 0 || depth > 8) return false;
    if (typeof x === 'string') return /^\s*[[{]/.test(x);
    if (Array.isArray(x)) return x.some((e) => (e !== null && typeof e === 'object' && !Array.isArray(e)) || walk(e, depth + 1));
    return x !== null && typeof x === 'object' && Object.values(x).some((e) => walk(e, depth + 1));
  };
  return walk(v, 0);
}

function isRow(v: unknown): v is Row {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The first handler of {@link SHAPES} that matches the row, or undefined. */
export function findHandler(row: unknown): ShapeHandler | undefined {
  if (!isRow(row)) return undefined;
  return SHAPES.find((h) => {
    try {
      return h.matches(row);
    } catch {
      return false; // a matcher must never take the run down on odd data
    }
  });
}

/**
 * Why a row is not recognized, in one paragraph: the keys found, the places
 * that looked like a conversation but could not be read (with why), and what
 * would work (a field mapping in `eagle3prep.jsonc`, suggested from the row on
 * one line), e.g. `unrecognized row shape; keys found: input_ids, labels — the
 * row is already tokenized …`. Never quotes the row's values.
 */
export function unrecognizedMessage(row: Row, fileName = '<this file>'): string {
  const keys = datasetKeys(row);
  const found = keys.length ? `keys found: ${keys.slice(0, 20).join(', ')}${keys.length > 20 ? ', …' : ''}` : 'the object is empty';
  if ('input_ids' in row) {
    return `unrecognized row shape; ${found} — the row is already tokenized ("input_ids"); give the untokenized chat data instead`;
  }
  if (typeof row.text === 'string' && keys.every((k) => k === 'text' || !(typeof row[k] === 'object' && row[k] !== null))) {
    return `unrecognized row shape; ${found} — "text" is plain text without speaker markers (pretraining-style text, not a conversation); ${EXPECTED_SHAPES}`;
  }
  const seen = findConversations(row);
  const cands = seen.length
    ? `; places that look like a conversation but were not read: ${seen
        .slice(0, 5)
        .map(
          (c) =>
            `${describeCandidate(c)}${c.unknownRoles.length ? ` with unknown speakers ${c.unknownRoles.map((r) => `"${r}"`).join(', ')}` : c.why ? ` (${c.why})` : ''}`,
        )
        .join(', ')}`
    : '';
  const suggestion = suggestMappingLine(row, fileName);
  return `unrecognized row shape; ${found}${cands} — ${suggestion ? `a field mapping in eagle3prep.jsonc reads it, e.g. ${suggestion}; ` : ''}${EXPECTED_SHAPES}`;
}
/** What a recognizable row looks like, for error messages. */
export const EXPECTED_SHAPES =
  'expected "messages" (list of {role, content}), "conversations" (list of {from, value}), a list of {role, text|content} under ' +
  TURN_LIST_FIELDS.filter((f) => f !== 'conversations')
    .map((f) => `"${f}"`)
    .join('/') +
  ', a "prompt"/"instruction"/"question"/"query" string (with an optional "response"/"output"/"completion"/"answer"), ' +
  '"chosen" (+ "rejected") preference rows, or a "text" transcript with Human:/Assistant: or ChatML markers (docs/formats.md "Input shapes")';
