/**
 * What one dataset row becomes, for a person looking at it (the record hover
 * and the mask view): its detected shape, its turns (with where each one lies
 * in the JSON line), the records it yields as tokens with their loss mask,
 * totals and warnings.
 *
 * Pure (no `vscode`); it reuses the pipeline's own steps, so what is shown is
 * what `prepare` writes: `normalizeDetailed` (formats/normalize.ts),
 * `buildRecords` / `maskFromSpans` (mask.ts, docs/loss-mask-rules.md) and the
 * tokenizer's `encode` (docs/loss-mask-rules.md "Text to tokens"). Turn positions inside the line
 * come from `jsonc-parser`'s syntax tree.
 *
 * Work cap: a hover must answer fast even on a 1 MB line, so at most
 * `maxTokenizedChars` characters are tokenized per call; beyond that, counts are
 * extrapolated from the part tokenized (tokens per character) and flagged
 * `estimated`. A line longer than `4 × maxTokenizedChars` has its turn texts
 * shortened before rendering (the template's structure, hence the number of
 * records, does not depend on text length); the removed characters are counted
 * back in at the same rate.
 *
 * Split by concern: the view's types (recordViewTypes.ts), the work cap (recordViewBudget.ts),
 * turn positions inside the line (recordViewSource.ts), the mask view's token detail (recordViewDetail.ts),
 * the viewer that builds the view (recordViewer.ts); this file keeps one viewer per tokenizer folder.
 */
import { resolve } from 'node:path';
import { loadTokenizer } from '../tokenizers/tokenizer';
import { tokenizerFilesStamp } from '../tokenizers/modelFolder';
import { RecordViewer } from './recordViewer';

export * from './recordViewTypes';
export { RecordViewer } from './recordViewer';

const viewers = new Map<string, RecordViewer>();

/**
 * A {@link RecordViewer} for a tokenizer folder, loaded once per process and
 * reloaded when one of its files (`tokenizer.json`, `tiktoken.model`,
 * `tokenizer_config.json`, `chat_template.jinja`, `chat_template.json`) changes
 * (by modification time and size: `tokenizerFilesStamp`).
 * @param dir local model folder; undefined or '' = the embedded default
 * @throws TokenizerLoadError as `loadTokenizer`
 */
export function recordViewerFor(dir: string | undefined): RecordViewer {
  const folder = dir ? resolve(dir) : '';
  const stamp = folder ? tokenizerFilesStamp(folder) : 'embedded';
  const key = `${folder}|${stamp}`;
  let v = viewers.get(key);
  if (!v) {
    for (const k of viewers.keys()) if (k.startsWith(`${folder}|`)) viewers.delete(k);
    v = new RecordViewer(loadTokenizer(dir || undefined));
    viewers.set(key, v);
  }
  return v;
}
