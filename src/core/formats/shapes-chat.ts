/**
 * Shape handlers for chat data: turn lists (OpenAI `messages`, ShareGPT
 * `conversations`, role/text lists under other fields — LMSYS/WildChat
 * `conversation`, …), UltraChat `data` string lists, OpenAssistant message
 * trees, and conversations written as one string with speaker markers
 * (Glaive, HH, Guanaco, ChatML).
 */
import type { Message, RowOutcome } from '../types';
import { convertTurns } from './common';
import {
  drop,
  errored,
  fieldValue,
  isObject,
  isTurnError,
  nonEmptyString,
  roleSpelling,
  ROLE_KEYS,
  TEXT_KEYS,
  wasJsonString,
  type NormalizeContext,
  type Row,
  type ShapeHandler,
} from './base';
import { finish } from './rowEnd';
import { toText } from './content';
import { speakerMarkedStrings } from './discovery';
import { mapRole } from './roles';
import { PROMPT_KEYS } from './shapes-instruct';
import {
  ALPACA_MARKERS,
  GLAIVE_MARKERS,
  glaiveAssistant,
  GUANACO_MARKERS,
  HH_MARKERS,
  splitByMarkers,
  splitChatMl,
  splitLlama2,
  type MarkerSet,
} from './transcript';

/** Fields holding a role/text turn list other than OpenAI `messages`. */
export const TURN_LIST_FIELDS = [
  'trajectory',
  'history',
  'conversation',
  'conversations',
  'dialog',
  'dialogue',
  'turns',
  'chat',
  'messages_list',
  'contents',
  'chat_history',
];

/**
 * A handler for a list of turn objects stored under one of `fields` (or a JSON
 * string holding that list); a turn belongs to the shape when `turnKey` is
 * one of its keys.
 */
export function turnListHandler(name: string, fields: string[], turnKey: string): ShapeHandler {
  // An empty list is the row's (empty) conversation only when nothing else in the row is a prompt: an
  // Alpaca / LLaMA-Factory row with `"history": []` beside its `instruction` / `query` is a single-turn row.
  const listField = (row: Row): string | undefined =>
    fields.find((f) => {
      const v = fieldValue(row, f);
      return Array.isArray(v) && (v.length === 0 ? !PROMPT_KEYS.some((k) => nonEmptyString(row[k])) : v.some((t) => isObject(t) && turnKey in t));
    });
  return {
    name,
    matches: (row) => listField(row) !== undefined,
    describe(row) {
      const f = listField(row)!;
      const turns = (fieldValue(row, f) as unknown[]).filter(isObject);
      const keys = [ROLE_KEYS.find((k) => turns.some((t) => k in t)), ...TEXT_KEYS.filter((k) => turns.some((t) => k in t))].filter(
        (k): k is string => k !== undefined,
      );
      return `"${f}": ${wasJsonString(row, f) ? 'JSON string holding a ' : ''}list of {${keys.join(', ')}}`;
    },
    roles(row) {
      const f = listField(row);
      return f ? rolesOf(fieldValue(row, f) as unknown[]) : [];
    },
    normalize(row, ctx) {
      const f = listField(row)!;
      const list = fieldValue(row, f) as unknown[];
      ctx.fields.use(row, f);
      if (wasJsonString(row, f)) ctx.note('turns_json_string', `"${f}" given as a JSON string (parsed)`);
      if (list.length === 0) return drop(ctx.source, 'empty_conversation', `"${f}" is an empty list`);
      const messages = convertTurns(list, ctx, { label: `${f}[]` });
      if (isTurnError(messages)) return errored(ctx, messages.code, messages.message);
      return finish(row, messages, ctx);
    },
  };
}

export function rolesOf(list: unknown[]): string[] {
  const out: string[] = [];
  for (const t of list) {
    const r = isObject(t) ? roleSpelling(t) : undefined;
    if (typeof r === 'string') out.push(r);
  }
  return out;
}

/** UltraChat (huggingface.co/datasets/stingning/ultrachat): `data` is a list of strings, alternating user / assistant, user first. */
export const ultrachatHandler: ShapeHandler = {
  name: 'ultrachat',
  matches: (row) =>
    Array.isArray(row.data) &&
    row.data.length > 0 &&
    row.data.every((x) => typeof x === 'string' || x === null || typeof x === 'number') &&
    !speakerMarkedStrings(row.data),
  describe: () => '"data": list of strings (alternating user / assistant)',
  roles: () => [],
  normalize(row, ctx) {
    const data = row.data as unknown[];
    ctx.fields.use(row, 'data');
    ctx.note('alternating_strings', '"data" strings alternate user / assistant, user first');
    const messages: Message[] = data.map((t, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: toText(t, ctx) }));
    return finish(row, messages, ctx);
  },
};

/**
 * LIMA (huggingface.co/datasets/GAIR/lima, "conversations": a list of strings, user first, alternating with the
 * assistant): the documented layout of a list of plain strings under `conversations` (ShareGPT's field holds
 * `{from, value}` objects, never strings).
 */
export const limaHandler: ShapeHandler = {
  name: 'lima',
  matches: (row) =>
    Array.isArray(row.conversations) &&
    row.conversations.length > 0 &&
    row.conversations.every((x) => typeof x === 'string') &&
    !speakerMarkedStrings(row.conversations),
  describe: () => '"conversations": list of strings (LIMA: alternating user / assistant, user first)',
  roles: () => [],
  normalize(row, ctx) {
    const list = row.conversations as string[];
    ctx.fields.use(row, 'conversations');
    ctx.note('alternating_strings', '"conversations" strings alternate user / assistant, user first (LIMA)');
    const messages: Message[] = list.map((t, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: t }));
    return finish(row, messages, ctx);
  },
};

/**
 * OpenAssistant message trees (`*.trees.jsonl` exports, github.com/LAION-AI/Open-Assistant
 * oasst-data): a node `{text, role: prompter|assistant, rank?, replies: [node]}`
 * at the row root or under `prompt`. The conversation is the best-ranked path:
 * at every node the reply with the lowest `rank` (the first reply when unranked).
 */
export const oasstTreeHandler: ShapeHandler = {
  name: 'oasst-tree',
  matches: (row) => oasstRoot(row) !== undefined,
  describe: (row) => (isObject(row.prompt) ? '"prompt": OpenAssistant message tree {text, role, replies}' : 'OpenAssistant message tree {text, role, replies}'),
  roles(row) {
    const out: string[] = [];
    for (let n: Row | undefined = oasstRoot(row); n; n = bestReply(n)) if (typeof n.role === 'string') out.push(n.role);
    return out;
  },
  normalize(row, ctx) {
    const list: Row[] = [];
    for (let n: Row | undefined = oasstRoot(row); n; n = bestReply(n)) list.push(n);
    if (isObject(row.prompt)) ctx.fields.use(row, 'prompt');
    ctx.note('oasst_best_path', 'OpenAssistant tree: the best-ranked reply path is the conversation (other branches not used)');
    const messages = convertTurns(list, ctx, { label: isObject(row.prompt) ? 'prompt[]' : 'tree[]', derived: ['replies'] });
    if (isTurnError(messages)) return errored(ctx, messages.code, messages.message);
    return finish(row, messages, ctx);
  },
};

function oasstRoot(row: Row): Row | undefined {
  const n = isObject(row.prompt) ? row.prompt : row;
  return typeof n.text === 'string' && typeof n.role === 'string' && Array.isArray(n.replies) ? n : undefined;
}

function bestReply(n: Row): Row | undefined {
  const replies = (Array.isArray(n.replies) ? n.replies : []).filter(isObject);
  if (!replies.length) return undefined;
  const rank = (r: Row) => (typeof r.rank === 'number' ? r.rank : Infinity);
  return replies.reduce((best, r) => (rank(r) < rank(best) ? r : best), replies[0]);
}

/**
 * One message of an OpenAssistant flat export (`message_id`, `parent_id`,
 * `role`, `text`), met on its own: not a conversation. A file of such rows is
 * rebuilt into trees by a file-level pass (`oasst.ts`, used by `prepare` and
 * `inspect` when the file's format is `oasst-messages`); a row read here (a
 * mixed file, the mask view) is dropped with `message_fragment`, saying so.
 */
export const oasstMessageHandler: ShapeHandler = {
  name: 'oasst-messages',
  matches: (row) => isOasstMessage(row),
  describe: () => 'one message per row {message_id, parent_id, role, text} (OpenAssistant flat export)',
  roles: (row) => [String(row.role)],
  normalize: (row, ctx) =>
    drop(
      ctx.source,
      'message_fragment',
      `the row is one message (role "${String(row.role)}") of an OpenAssistant message tree; its conversations are rebuilt when the file is read as a whole and its rows are OpenAssistant messages (format "oasst-messages"); this row was read on its own`,
    ),
};

/** A row of an OpenAssistant flat export: `message_id`, a `parent_id` key (null for a root), `text` and `role` strings. */
export function isOasstMessage(row: Row): boolean {
  return 'message_id' in row && 'parent_id' in row && typeof row.text === 'string' && typeof row.role === 'string';
}

/** String fields that may hold a whole conversation with speaker markers. */
const TRANSCRIPT_FIELDS = ['text', 'chat', 'sample', 'conversation', 'dialogue', 'dialog', 'transcript', 'content'];

function transcriptField(row: Row, set: MarkerSet): string | undefined {
  return TRANSCRIPT_FIELDS.find((f) => typeof row[f] === 'string' && splitByMarkers(row[f] as string, set) !== null);
}

/** A conversation written as one string with `set`'s markers under one of the transcript fields. */
export function markerTranscriptHandler(name: string, set: MarkerSet): ShapeHandler {
  return {
    name,
    matches: (row) => transcriptField(row, set) !== undefined,
    describe: (row) => `"${transcriptField(row, set)}": one string with ${set.name} markers`,
    roles: (row) => splitByMarkers(row[transcriptField(row, set)!] as string, set)!.turns.map((t) => t.role),
    normalize(row, ctx) {
      const f = transcriptField(row, set)!;
      ctx.fields.use(row, f);
      if (set === GLAIVE_MARKERS && 'system' in row) ctx.fields.use(row, 'system');
      return transcriptOutcome(row, row[f] as string, set, ctx, `"${f}"`);
    },
  };
}

/**
 * Turns of a marker transcript → outcome. Glaive assistant turns get their
 * `<functioncall>` converted; a Glaive `system` field's `SYSTEM:` prefix is removed.
 */
export function transcriptOutcome(
  row: Row,
  text: string,
  set: MarkerSet,
  ctx: NormalizeContext,
  what: string,
  extra: Partial<{ system: string }> = {},
): RowOutcome {
  const split = splitByMarkers(text, set)!;
  const messages: Message[] = [];
  if (split.preamble !== '') {
    messages.push({ role: 'system', content: split.preamble });
    ctx.note('transcript_preamble_as_system', 'text before the first speaker marker used as the system message');
  }
  for (const [i, t] of split.turns.entries()) {
    if (set === GLAIVE_MARKERS && t.role === 'assistant') messages.push(glaiveAssistant(t.content, ctx));
    else if (set === ALPACA_MARKERS && i > 0 && t.role === 'user' && messages[messages.length - 1].role === 'user') {
      // `### Input:` belongs to the instruction's user turn (the Alpaca template's layout).
      messages[messages.length - 1].content += `\n\n${t.content}`;
      ctx.note('instruction_input_joined', '"### Input:" joined to the instruction\'s user turn (blank line between)');
    } else messages.push({ role: t.role, content: t.content });
  }
  ctx.note('transcript_split', `${what} split into turns at ${set.name} markers`);
  const sys = extra.system ?? (set === GLAIVE_MARKERS && nonEmptyString(row.system) ? row.system.replace(/^\s*SYSTEM:\s*/, '') : undefined);
  if (sys !== undefined && !messages.some((m) => m.role === 'system')) messages.unshift({ role: 'system', content: sys });
  return finish(set === GLAIVE_MARKERS ? { ...row, system: undefined } : row, messages, ctx);
}

/** Glaive function-calling v2: `system` ("SYSTEM: …function definitions…") + `chat` with USER:/ASSISTANT:/FUNCTION RESPONSE: markers. */
export const glaiveHandler = markerTranscriptHandler('glaive', GLAIVE_MARKERS);
/** Guanaco-style `### Human:` / `### Assistant:` in a `text` string. */
export const guanacoHandler = markerTranscriptHandler('human-assistant-transcript', GUANACO_MARKERS);
/** Anthropic HH-style `\n\nHuman:` / `\n\nAssistant:` in one string (not under `chosen`, see the preference handler). */
export const hhTextHandler = markerTranscriptHandler('hh-transcript', HH_MARKERS);

/** Alpaca template written out in a `text` string (`### Instruction:` … `### Response:`; the preamble becomes the system turn). */
export const alpacaTextHandler = markerTranscriptHandler('alpaca-transcript', ALPACA_MARKERS);

/** Llama-2 `[INST] … [/INST]` strings in a `text` field (optional `<<SYS>>` block). */
export const llama2Handler: ShapeHandler = {
  name: 'llama2-transcript',
  matches: (row) => llama2Field(row) !== undefined,
  describe: (row) => `"${llama2Field(row)}": one string of Llama-2 [INST] … [/INST] turns`,
  roles: (row) => splitLlama2(row[llama2Field(row)!] as string)!.map((t) => t.role),
  normalize(row, ctx) {
    const f = llama2Field(row)!;
    ctx.fields.use(row, f);
    ctx.note('transcript_split', `"${f}" split into turns at Llama-2 [INST] markers`);
    return finish(
      row,
      splitLlama2(row[f] as string)!.map((t) => ({ role: t.role, content: t.content })),
      ctx,
    );
  },
};

function llama2Field(row: Row): string | undefined {
  return TRANSCRIPT_FIELDS.find((f) => typeof row[f] === 'string' && (row[f] as string).includes('[/INST]') && splitLlama2(row[f] as string) !== null);
}

/** ChatML transcript in a `text` string (`<|im_start|>user\n…<|im_end|>`), e.g. OpenAssistant top-1 exports. */
export const chatmlHandler: ShapeHandler = {
  name: 'chatml-transcript',
  matches: (row) => chatmlField(row) !== undefined,
  describe: (row) => `"${chatmlField(row)}": one string of ChatML turns (<|im_start|>role … <|im_end|>)`,
  roles: (row) => splitChatMl(row[chatmlField(row)!] as string)!.map((t) => t.role),
  normalize(row, ctx) {
    const f = chatmlField(row)!;
    ctx.fields.use(row, f);
    const turns = splitChatMl(row[f] as string)!.map((t) => ({ role: t.role, content: t.content }));
    ctx.note('transcript_split', `"${f}" split into turns at ChatML <|im_start|> markers`);
    const messages = convertTurns(turns, ctx, { label: `${f}[]` });
    if (isTurnError(messages)) return errored(ctx, messages.code, messages.message);
    return finish(row, messages, ctx);
  },
};

function chatmlField(row: Row): string | undefined {
  return TRANSCRIPT_FIELDS.find(
    (f) => typeof row[f] === 'string' && (row[f] as string).includes('<|im_start|>') && splitChatMl(row[f] as string)?.some((t) => mapRole(t.role) === 'user'),
  );
}

/** Rows rewritten by a field-mapping file (`mapping.ts`): `{"$mapping", "messages", …}`. */
export const mappedHandler: ShapeHandler = (() => {
  const inner = turnListHandler('mapped', ['messages'], 'role');
  return {
    ...inner,
    matches: (row: Row) => typeof row.$mapping === 'string' && inner.matches(row),
    describe: (row: Row) => `fields mapped by ${String(row.$mapping)}: ${inner.describe(row)}`,
    normalize(row: Row, ctx: NormalizeContext) {
      ctx.note('field_mapping_used', `fields mapped by ${String(row.$mapping)}`);
      // The mapping named the fields it reads; the ones it does not name were listed by applyMapping (`$unread`).
      ctx.fields.useAll(row);
      if (Array.isArray(row.$unread)) ctx.fields.report(row.$unread.filter((x): x is string => typeof x === 'string'));
      const out = inner.normalize(row, ctx);
      return out;
    },
  };
})();
