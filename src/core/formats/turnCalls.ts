/**
 * Tool calls kept beside a turn's text (issue 20, "Tool calls kept beside the turns"): an assistant turn that
 * carries, under any key, a list of call objects — `{request: {<name>, <arguments>}, response}` or
 * `{<name>, <arguments>, <result>}` — next to its text. Which list is a call list is decided by the objects'
 * structure, never by the list's name:
 * - a call names its tool in a short identifier string under a key ending in `name` (`name`, `api_name`,
 *   `tool_name`, `API_name`, …) or named `tool` / `function` / `api`, inside `request` when there is one;
 * - its arguments are an object or a string under `arguments` / `args` / `parameters` / `params` / `input(s)` /
 *   `kwargs` (or a key ending so: `API_params`), optional;
 * - its result, optional, is under `response` / `result(s)` / `output(s)` / `observation` / `return(s)` /
 *   `return_value` (or a key ending in `_response` / `_result` / `_output`); an error under `exception` / `error`
 *   stands for the result when there is none;
 * - a list of tool definitions (a `description` and JSON-schema `parameters` with `properties`, no result) is not
 *   a call list.
 *
 * Order (docs/formats.md "Tool calls beside the turns"): when some call has a result, each call becomes an
 * assistant turn of its own followed by a `tool` turn with its result, and the turn's text comes last — the text
 * was written with the results in hand, and a later call may use an earlier result (one assistant turn holding
 * every call would train arguments the model could not yet know). When no call has a result the calls stay on
 * the turn with its text (text first, then the calls, as in OpenAI `tool_calls`).
 */
import type { ToolCall } from '../types';
import { isObject, type Row } from './base';

const NAME_KEY_RE = /(^|[_-])name$/i;
const NAME_KEYS = new Set(['name', 'tool', 'function', 'api', 'toolname', 'apiname', 'functionname']);
const ARGS_KEY_RE = /(^|[_-])(arguments|args|parameters|params|inputs?|kwargs)$/i;
const RESULT_KEY_RE = /^(response|results?|outputs?|observation|returns?|return_value)$|[_-](response|result|output)$/i;
const ERROR_KEYS = ['exception', 'error'];
const ID_KEYS = ['id', 'call_id', 'tool_call_id'];

/** One call read from a call object: the structured call, its result (when the source kept one), and the keys read. */
export interface SideCall {
  call: ToolCall;
  /** The result as the source holds it (any JSON value); undefined when the source kept none. */
  result?: unknown;
  /** The object the name and arguments were read from (the call object, or its `request`). */
  request: Row;
  /** Keys read of the call object and of its `request` (for the unread-field report). */
  read: string[];
  requestRead: string[];
}

/** An identifier-like tool name: a non-empty string without spaces, at most 100 characters. */
function toolName(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '' && v.length <= 100 && !/\s/.test(v.trim());
}

function nameKey(o: Row): string | undefined {
  return Object.keys(o).find((k) => (NAME_KEYS.has(k.toLowerCase()) || NAME_KEY_RE.test(k)) && toolName(o[k]));
}

function argsKey(o: Row): string | undefined {
  return Object.keys(o).find((k) => ARGS_KEY_RE.test(k) && (isObject(o[k]) || typeof o[k] === 'string' || o[k] === null));
}

function resultKey(o: Row): string | undefined {
  return Object.keys(o).find((k) => RESULT_KEY_RE.test(k) && o[k] !== undefined);
}

/** A JSON-schema parameters object (a tool definition's, not a call's arguments). */
function isSchema(v: unknown): boolean {
  return isObject(v) && isObject(v.properties) && (v.type === 'object' || 'required' in v);
}

/** The call an object holds, or undefined when it is not a call object. */
export function readSideCall(o: unknown): SideCall | undefined {
  if (!isObject(o)) return undefined;
  const nested = isObject(o.request) ? o.request : undefined;
  const req = nested ?? o;
  const nk = nameKey(req);
  if (nk === undefined) return undefined;
  const ak = argsKey(req);
  const rk = nested ? (resultKey(o) ?? ('response' in o ? 'response' : undefined)) : resultKey(o);
  if (!nested && ak === undefined && rk === undefined) return undefined; // a bare {name}: nothing says it is a call
  if (rk === undefined && (isSchema(ak === undefined ? undefined : req[ak]) || typeof req.description === 'string')) return undefined; // a tool definition
  const args = ak === undefined ? undefined : req[ak];
  const call: ToolCall = {
    type: 'function',
    function: { name: (req[nk] as string).trim(), arguments: isObject(args) || typeof args === 'string' ? (args as string | Record<string, unknown>) : {} },
  };
  const read = nested ? ['request'] : [nk, ...(ak ? [ak] : [])];
  const idKey = ID_KEYS.find((k) => typeof o[k] === 'string' && o[k] !== '');
  if (idKey) {
    call.id = o[idKey] as string;
    read.push(idKey);
  }
  const out: SideCall = { call, request: req, read, requestRead: nested ? [nk, ...(ak ? [ak] : [])] : [] };
  if (rk !== undefined) read.push(rk);
  const result = rk === undefined ? undefined : o[rk];
  const errKey = ERROR_KEYS.find((k) => o[k] !== undefined && o[k] !== null && o[k] !== '');
  for (const k of ERROR_KEYS) if (k in o) read.push(k);
  if (result !== undefined && result !== null) out.result = result;
  else if (errKey !== undefined) out.result = o[errKey];
  else if (rk !== undefined) out.result = result; // null: the tool returned nothing (kept as an empty tool turn)
  return out;
}

/**
 * The key of a turn holding a list of call objects beside its text, with the calls read, or undefined. `skip`:
 * keys already read (role, text, reasoning). A list qualifies when it is non-empty and every element is a call
 * object ({@link readSideCall}).
 */
export function sideCallList(turn: Row, skip: ReadonlySet<string>): { key: string; calls: SideCall[] } | undefined {
  for (const [key, v] of Object.entries(turn)) {
    if (skip.has(key) || !Array.isArray(v) || v.length === 0) continue;
    const calls = v.map(readSideCall);
    if (calls.every((c): c is SideCall => c !== undefined)) return { key, calls };
  }
  return undefined;
}

/** Whether any of a turn's fields holds a non-empty list (without one, {@link sideCallList} finds none, whatever it skips). */
export function hasNonEmptyList(turn: Row): boolean {
  for (const k of Object.keys(turn)) {
    const v = turn[k];
    if (Array.isArray(v) && v.length > 0) return true;
  }
  return false;
}

/** A result as the text of a `tool` turn: a string as is, anything else as compact JSON; null → `""`. */
export function resultText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  return JSON.stringify(v);
}
