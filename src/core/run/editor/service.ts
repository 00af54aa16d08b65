/**
 * The service worker's side of `serviceProtocol.ts`: answers one request with
 * the core's own functions. Record viewers (tokenizer + compiled templates) and
 * output indexes are kept between requests. Pure Node, no `vscode`.
 */
import * as fs from 'node:fs';
import { recordViewerFor } from '../../records/recordViewer';
import { checkTemplate } from '../../records/checkTemplate';
import { loadTokenizer } from '../../tokenizers/tokenizer';
import { scanRowProblems } from './rowProblems';
import { viewRow } from './fileRows';
import { indexTokenizedData, outputStats, recordsOfRow, type RecordIndex } from '../outputs/outputStats';
import type { ServiceRequest, ServiceResults } from './serviceProtocol';
import { fileStamp } from '../../read/fileStamp';

/** A request that ran past its deadline (checked between the viewer's steps); the worker replies with its class name, `serviceProtocol.ts` DEADLINE_EXCEEDED_ERROR. */
export class DeadlineExceededError extends Error {}

const indexes = new Map<string, { stamp: string; index: Promise<RecordIndex> }>();

/** The index of a tokenized_data.jsonl, built once per file stamp (read/fileStamp.ts); at most 8 kept. */
function indexOf(file: string): { ready: boolean; index: Promise<RecordIndex> } {
  const stamp = fileStamp(fs.statSync(file));
  const hit = indexes.get(file);
  if (hit && hit.stamp === stamp) {
    return { ready: (hit as { done?: boolean }).done === true, index: hit.index };
  }
  const entry: { stamp: string; index: Promise<RecordIndex>; done?: boolean } = { stamp, index: indexTokenizedData(file) };
  entry.index.then(
    () => (entry.done = true),
    () => indexes.delete(file),
  );
  indexes.delete(file);
  indexes.set(file, entry);
  while (indexes.size > 8) indexes.delete(indexes.keys().next().value!);
  return { ready: false, index: entry.index };
}

/**
 * Answers one request. `started` is called when the request's own work begins (for `view`, once
 * the tokenizer is loaded): its time budget runs from there.
 * @throws the core's errors (TokenizerLoadError, NoChatTemplateError, …), DeadlineExceededError
 */
export async function handleServiceRequest<R extends ServiceRequest>(req: R, started: () => void = () => {}): Promise<ServiceResults[R['op']]> {
  type Out = ServiceResults[R['op']];
  if (req.op !== 'view') started();
  switch (req.op) {
    case 'view': {
      const viewer = recordViewerFor(req.tokenizerDir);
      started();
      const deadline = req.budgetMs !== undefined ? Date.now() + req.budgetMs : undefined;
      return (await viewRow(viewer, req.row, {
        ...req.options,
        checkCancelled: deadline
          ? () => {
              if (Date.now() > deadline) throw new DeadlineExceededError('the row took longer than its time budget to render');
            }
          : undefined,
      })) as Out;
    }
    case 'rowProblems':
      return (await scanRowProblems(req.file, { maxProblems: req.maxProblems, yieldEveryMs: 50 })) as Out;
    case 'checkTemplate':
      return checkTemplate(loadTokenizer(req.tokenizerDir || undefined), { templateKwargs: req.templateKwargs }) as Out;
    case 'stats': {
      const parts = await Promise.all(req.parts.map(async (p) => ({ index: await indexOf(p.tokenizedData).index, inputs: p.inputs })));
      return outputStats(parts) as Out;
    }
    case 'rowRecords': {
      const { ready, index } = indexOf(req.tokenizedData);
      if (!ready && !req.wait) return null as Out;
      return recordsOfRow(await index, req.input, req.line) as Out;
    }
  }
  throw new Error(`unknown service operation ${JSON.stringify((req as { op?: unknown }).op)}`);
}
