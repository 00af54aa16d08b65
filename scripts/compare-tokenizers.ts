/**
 * Compares the product's tokenizer (`loadTokenizer`: ids and each token's UTF-16 start) with the
 * Rust `tokenizers` binding (ids, offsets converted from code points to UTF-16 units, as
 * test/helpers.ts `oracleEncode` does) on every distinct string of the shared real dataset files,
 * for each tokenizer the tests use (docs/scale.md "Tokenizer backends"). Prints the counts of
 * strings whose ids or starts differ (the first two of each are shown); exits 1 when any differ.
 *
 * Usage: node --import tsx scripts/compare-tokenizers.ts [--tokenizers qwen3,deepseek_v3,llama3_1,gemma3]
 *        [--data <real-data>/files,<real-data>/adp_std]   (real-data: $EAGLE3_REAL_DATA, else shared/real-data beside the checkout)
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadTokenizer } from '../src/core/tokenizers/tokenizer';
import { lenmlModelDir, oracleEncode } from '../test/helpers';
import { forEachJsonString, REAL_DATA_DIR } from './real-data-strings.mjs';

const { values } = parseArgs({
  options: {
    tokenizers: { type: 'string', default: 'qwen3,deepseek_v3,llama3_1,gemma3' },
    data: { type: 'string', default: [join(REAL_DATA_DIR, 'files'), join(REAL_DATA_DIR, 'adp_std')].join(',') },
  },
});

const texts = new Set<string>();
forEachJsonString(values.data.split(','), (v) => {
  if (v.length) texts.add(v);
});

async function main(): Promise<number> {
  console.log(`${texts.size} distinct strings, ${[...texts].reduce((a, s) => a + s.length, 0)} characters`);
  let differ = 0;
  for (const name of values.tokenizers.split(',') as Parameters<typeof lenmlModelDir>[0][]) {
    const dir = lenmlModelDir(name);
    const tok = loadTokenizer(dir);
    let ids = 0;
    let starts = 0;
    let tokens = 0;
    for (const s of texts) {
      const got = tok.encode(s);
      const want = await oracleEncode(join(dir, 'tokenizer.json'), s);
      tokens += want.ids.length;
      if (JSON.stringify(got.ids) !== JSON.stringify(want.ids)) {
        if (++ids <= 2) console.log(`${name}: ids differ on ${JSON.stringify(s.slice(0, 80))}`);
      } else if (JSON.stringify(got.starts) !== JSON.stringify(want.starts)) {
        if (++starts <= 2) console.log(`${name}: starts differ on ${JSON.stringify(s.slice(0, 80))}`);
      }
    }
    console.log(`${name}: ${tokens} tokens; ids differ on ${ids} strings, starts on ${starts}`);
    differ += ids + starts;
  }
  return differ ? 1 : 0;
}

main().then((code) => process.exit(code));
