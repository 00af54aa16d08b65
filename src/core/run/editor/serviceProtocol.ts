/**
 * Messages between the extension host and its long-lived service workers
 * (`dist/worker.js` with `workerData` `{ job: 'service' }`): the work the
 * editor asks for while a person looks at a dataset — a row's records and
 * tokens (hover, mask view), the rows normalization drops (Problems), the
 * chat-template check, the length statistics and exact counts of an output.
 * Run off the extension host's thread so a huge row or a hostile template can
 * neither freeze nor crash it. Plain structured-clone data; no `vscode`.
 */
import type { RecordView, RecordViewOptions, RowInput } from '../../records/recordViewTypes';
import type { TemplateCheck } from '../../records/checkTemplateTypes';
import type { OutputStats } from '../outputs/outputStats';
import type { RowProblems } from './rowProblems';

/** `workerData` of a service worker. */
export interface ServiceWorkerData {
  job: 'service';
  /** Lower this thread's OS priority (Linux). */
  lowPriority?: boolean;
}

/** Every request, by operation. */
export type ServiceRequest =
  /** A row's view (records, totals, tokens of `options.detailRecord`) with the tokenizer of `tokenizerDir` ('' / undefined = embedded). */
  | { op: 'view'; row: RowInput; tokenizerDir?: string; options: Omit<RecordViewOptions, 'checkCancelled'>; budgetMs?: number }
  /** The rows prepare drops or errors as it reads them (`rowProblems.ts` `scanRowProblems`). */
  | { op: 'rowProblems'; file: string; maxProblems?: number }
  /** `check-template` for a tokenizer and template kwargs. */
  | { op: 'checkTemplate'; tokenizerDir?: string; templateKwargs: Record<string, unknown> }
  /** Length statistics of the records of `inputs` (all when omitted) in each `tokenized_data.jsonl`. */
  | { op: 'stats'; parts: { tokenizedData: string; inputs?: string[] }[] }
  /** The records row `line` of `input` became in `tokenizedData` (exact counts); `null` when the output is not indexed yet and `wait` is false (indexing starts). */
  | { op: 'rowRecords'; tokenizedData: string; input: string; line: number; wait?: boolean };

/** What each operation answers. */
export interface ServiceResults {
  view: RecordView;
  rowProblems: RowProblems;
  checkTemplate: TemplateCheck;
  stats: OutputStats;
  rowRecords: { id: string; tokens: number; trainableTokens: number }[] | null;
}

/** The last part of a path (`/a/b.jsonl` → `b.jsonl`), without importing `node:path` here. */
function baseName(p: string): string {
  return p.split(/[\\/]/).pop() || p;
}

/**
 * What a request does, for messages about it: `rendering line 12 of chat.jsonl`, `the chat template
 * check of ./models/qwen`. A timeout or a restart names the work with this.
 */
export function describeServiceRequest(r: ServiceRequest): string {
  switch (r.op) {
    case 'view':
      return `rendering line ${r.row.line} of ${baseName(r.row.file)}`;
    case 'checkTemplate':
      return `the chat template check of ${r.tokenizerDir ? r.tokenizerDir : 'the embedded tokenizer'}`;
    case 'rowProblems':
      return `checking the rows of ${baseName(r.file)}`;
    case 'stats':
      return `reading the record lengths of ${r.parts.length === 1 ? baseName(r.parts[0].tokenizedData) : `${r.parts.length} outputs`}`;
    case 'rowRecords':
      return `finding the records of line ${r.line} of ${baseName(r.input)}`;
  }
}

/**
 * The error name a `view` call answers with when it stopped itself at its deadline (`service.ts`
 * `DeadlineExceededError`, checked between the viewer's steps): the worker is left running, and the
 * host reports the call as past its budget, naming it (`serviceLanes.ts`).
 */
export const DEADLINE_EXCEEDED_ERROR = 'DeadlineExceededError';

/** Host → worker. */
export interface ServiceCall {
  type: 'call';
  id: number;
  request: ServiceRequest;
}

/**
 * Worker → host: the answer to call `id`, or why it failed (`name` = the error class, e.g. `TokenizerLoadError`);
 * `started`: the worker began the call's own work (for `view`: the tokenizer is loaded) — its time budget runs from here.
 */
export type ServiceReply =
  { type: 'reply'; id: number; result: unknown } | { type: 'reply'; id: number; error: { name: string; message: string } } | { type: 'started'; id: number };

/** Narrows a message received by a service worker. */
export function isServiceCall(m: unknown): m is ServiceCall {
  const o = m as Partial<ServiceCall> | null;
  return !!o && typeof o === 'object' && o.type === 'call' && typeof o.id === 'number' && !!o.request && typeof o.request === 'object';
}

/** Narrows a message received from a service worker. */
export function isServiceReply(m: unknown): m is ServiceReply {
  const o = m as Partial<ServiceReply> | null;
  return !!o && typeof o === 'object' && (o.type === 'reply' || o.type === 'started') && typeof o.id === 'number';
}
