/**
 * Regenerates src/core/tokenizers/rustUnicodeData.ts: the General_Category of every code point and the White_Space
 * set as the Rust `tokenizers` package's regex engine (Oniguruma, through the `onig` crate) sees them, read from the
 * engine itself: for each category, a `Split` pre-tokenizer with the pattern `\p{<category>}` and behaviour `Removed`
 * runs over a string of every code point (surrogates aside), and the code points it removes are the category's.
 * The categories must partition the code points (checked), and each group (`L`, `M`, …) must be the union of its
 * categories (checked). Run it after upgrading the `tokenizers` package (test/unit/rustUnicode.test.ts fails until then):
 *
 *   node --import tsx scripts/gen-rust-unicode.ts [--check]
 *
 * `--check` writes nothing and exits 1 when the file is not what the package gives.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rustUnicodeTables, renderRustUnicodeData } from '../test/rustUnicodeProbe';

const out = join(__dirname, '..', 'src', 'core', 'tokenizers', 'rustUnicodeData.ts');
const text = renderRustUnicodeData(rustUnicodeTables());
if (process.argv.includes('--check')) {
  const same = readFileSync(out, 'utf8') === text;
  console.log(same ? `${out}: up to date` : `${out}: differs from what the tokenizers package gives; run without --check`);
  process.exit(same ? 0 : 1);
}
writeFileSync(out, text);
console.log(`wrote ${out}`);
