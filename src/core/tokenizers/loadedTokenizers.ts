/**
 * The one in-memory cache of loaded tokenizers of a thread, for `prepare`'s row processors (records/rowProcessor.ts)
 * and the hover and mask view (records/recordViewer.ts) alike: a tokenizer folder is loaded once per thread and
 * backend, and loaded again when one of its files changes (`tokenizerFilesStamp`: each file's modification time and
 * size); the entries of the folder's older files are then dropped, so a changed folder never keeps its old tokenizer.
 */
import { resolve } from 'node:path';
import { tokenizerFilesStamp } from './modelFolder';
import { loadTokenizerWithBackend, tokenizerBackendChoice, type BackendTokenizer } from './backend';
import type { TokenizerBackendChoice } from './types';

/** Per folder ('' = the embedded default): the stamp of its files when loaded, and its tokenizers by backend asked for. */
const loaded = new Map<string, { stamp: string; byChoice: Map<TokenizerBackendChoice, BackendTokenizer> }>();

/**
 * The tokenizer of `dir` with the backend `backend` asks for (tokenizers/backend.ts `loadTokenizerWithBackend`),
 * loaded once per thread while the folder's files are unchanged. `js` is also served by a tokenizer `auto` loaded
 * as the JavaScript one (the same load; without `auto`'s fallback note).
 * @param dir local model folder; undefined or '' = the embedded default
 * @throws TokenizerLoadError for an unusable folder, an unknown EAGLE3_TOKENIZER_BACKEND, or `rust` without the binding
 */
export function cachedTokenizer(dir: string | undefined, backend?: TokenizerBackendChoice): BackendTokenizer {
  const folder = dir ? resolve(dir) : '';
  const stamp = folder ? tokenizerFilesStamp(folder) : 'embedded';
  const choice = tokenizerBackendChoice(backend);
  let entry = loaded.get(folder);
  if (!entry || entry.stamp !== stamp) {
    entry = { stamp, byChoice: new Map() };
    loaded.set(folder, entry); // the folder's tokenizers of older files are dropped here
  }
  let tok = entry.byChoice.get(choice);
  if (!tok && choice === 'js') {
    const same = [...entry.byChoice.values()].find((t) => (t.tok.backend ?? 'js') === 'js');
    if (same) tok = { tok: same.tok };
  }
  if (!tok) {
    tok = loadTokenizerWithBackend(dir || undefined, choice);
    entry.byChoice.set(choice, tok);
  }
  return tok;
}

/** How many tokenizers this thread holds (for tests: a changed folder's old tokenizer is not kept). */
export function cachedTokenizerCount(): number {
  let n = 0;
  for (const e of loaded.values()) n += new Set([...e.byChoice.values()].map((t) => t.tok)).size;
  return n;
}
