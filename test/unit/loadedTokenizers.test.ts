/**
 * One in-memory tokenizer cache per thread (src/core/tokenizers/loadedTokenizers.ts) for `prepare`'s row processor
 * and the hover / mask view: both get the same loaded tokenizer of a folder; when the folder's tokenizer files change,
 * both get the new tokenizer (ids from the new `tokenizer.json`, as the Rust oracle gives them) and the old one is
 * not kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { cachedTokenizer, cachedTokenizerCount } from '../../src/core/tokenizers/loadedTokenizers';
import { RowProcessor } from '../../src/core/records/rowProcessor';
import { recordViewerFor } from '../../src/core/records/recordViewer';
import { lenmlModelDir, oracleEncode, tempDir } from '../helpers';

/** Copies a packaged vocabulary's files into `dir` (a newer modification time each call, as an edit in place gives). */
function putVocabulary(dir: string, name: 'deepseek_v3' | 'llama3_1', when: number): void {
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) {
    copyFileSync(join(lenmlModelDir(name), f), join(dir, f));
    utimesSync(join(dir, f), when, when);
  }
}

test("prepare's row processor and the record viewer share one tokenizer per folder; a changed folder gives both the new one and drops the old", async (t) => {
  // Test files share a process (scripts/test.mjs groups): put the variable back for the files after this one.
  const saved = process.env.EAGLE3_TOKENIZER_CACHE;
  t.after(() => {
    if (saved === undefined) delete process.env.EAGLE3_TOKENIZER_CACHE;
    else process.env.EAGLE3_TOKENIZER_CACHE = saved;
  });
  process.env.EAGLE3_TOKENIZER_CACHE = tempDir('eagle3-tokcache-');
  const dir = tempDir();
  const text = 'Hello world, a changed tokenizer folder: 漢字 😀 12345';
  putVocabulary(dir, 'deepseek_v3', 1_700_000_000);
  const before = cachedTokenizerCount();
  // prepare's default backend (auto) loads the JavaScript tokenizer for this vocabulary: the viewer's (js) is that load.
  const p1 = new RowProcessor({ tokenizerDir: dir, tokenizerBackend: 'auto' });
  const v1 = recordViewerFor(dir);
  assert.equal(v1.tokenizer, p1.tok, 'the viewer uses the row processor’s tokenizer');
  assert.equal(cachedTokenizer(dir, 'js').tok, p1.tok);
  assert.equal(recordViewerFor(dir), v1, 'the viewer is kept while the files are unchanged');
  assert.equal(cachedTokenizerCount(), before + 1);
  const deepseek = await oracleEncode(join(lenmlModelDir('deepseek_v3'), 'tokenizer.json'), text);
  assert.deepEqual(p1.tok.encode(text).ids, deepseek.ids);

  putVocabulary(dir, 'llama3_1', 1_800_000_000);
  const p2 = new RowProcessor({ tokenizerDir: dir, tokenizerBackend: 'auto' });
  const v2 = recordViewerFor(dir);
  assert.notEqual(p2.tok, p1.tok);
  assert.equal(v2.tokenizer, p2.tok);
  const llama = await oracleEncode(join(lenmlModelDir('llama3_1'), 'tokenizer.json'), text);
  assert.notDeepEqual(llama.ids, deepseek.ids);
  assert.deepEqual(p2.tok.encode(text).ids, llama.ids);
  assert.deepEqual(v2.tokenizer.encode(text).ids, llama.ids);
  assert.equal(cachedTokenizerCount(), before + 1, 'the old tokenizer of the folder is not kept');
  // The same files again (another modification time): reloaded, still one per folder.
  putVocabulary(dir, 'llama3_1', 1_900_000_000);
  assert.notEqual(recordViewerFor(dir).tokenizer, p2.tok);
  assert.equal(cachedTokenizerCount(), before + 1);
});
