/**
 * Compares the product's tokenizer (`loadTokenizer`) with the Rust `tokenizers` binding on every code point
 * (docs/fidelity.md "Unicode versions"): each code point c (surrogates aside) is encoded in the probe
 * `q{c}'ll 1{c}2 {c}{c} ,{c}` — beside a letter, a contraction, a digit, a space, itself and punctuation — so that
 * a code point whose Unicode properties differ between the runtime's tables and Rust's changes the pieces. Probes go
 * in batches of 64 per text; a batch whose ids differ is probed code point by code point. Prints, per tokenizer, how
 * many code points give other ids than Rust's, with their ranges and their category in this runtime; exits 1 when any.
 *
 * Usage: node --import tsx scripts/compare-unicode.ts [--tokenizers qwen3,deepseek_v3,llama3_1,gemma3] [--from 0] [--to 10ffff]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadTokenizer } from '../src/core/tokenizers/tokenizer';
import { GC_LEAVES } from '../src/core/tokenizers/rustUnicode';
import { lenmlModelDir, oracleEncodeBatch } from '../test/helpers';

const { values } = parseArgs({
  options: {
    tokenizers: { type: 'string', default: 'qwen3,deepseek_v3,llama3_1,gemma3' },
    from: { type: 'string', default: '0' },
    to: { type: 'string', default: '10ffff' },
  },
});

const probe = (c: string): string => `q${c}'ll 1${c}2 ${c}${c} ,${c}`;
// Every General_Category leaf but unassigned (the fallback) and surrogates (a code point here is a whole character).
const CATEGORIES = GC_LEAVES.filter((k) => k !== 'Cn' && k !== 'Cs');
const categoryOf = (c: string): string => CATEGORIES.find((k) => new RegExp(`^\\p{${k}}$`, 'u').test(c)) ?? 'Cn';

/** Ranges of sorted code points, as hex text. */
function ranges(cps: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < cps.length;) {
    let j = i;
    while (j + 1 < cps.length && cps[j + 1] === cps[j] + 1) j++;
    out.push(cps[i].toString(16).toUpperCase() + (j > i ? '-' + cps[j].toString(16).toUpperCase() : ''));
    i = j + 1;
  }
  return out.join(' ');
}

async function main(): Promise<number> {
  const cps: number[] = [];
  for (let cp = parseInt(values.from, 16); cp <= parseInt(values.to, 16); cp++) if (cp < 0xd800 || cp > 0xdfff) cps.push(cp);
  let differ = 0;
  for (const name of values.tokenizers.split(',') as Parameters<typeof lenmlModelDir>[0][]) {
    const dir = lenmlModelDir(name);
    const tj = join(dir, 'tokenizer.json');
    const tok = loadTokenizer(dir);
    const batches: number[][] = [];
    for (let k = 0; k < cps.length; k += 64) batches.push(cps.slice(k, k + 64));
    const bad: number[] = [];
    for (let b = 0; b < batches.length; b += 256) {
      const group = batches.slice(b, b + 256);
      const texts = group.map((g) => g.map((cp) => probe(String.fromCodePoint(cp))).join(' '));
      const want = await oracleEncodeBatch(tj, texts);
      for (let k = 0; k < group.length; k++) {
        if (JSON.stringify(tok.encode(texts[k]).ids) === JSON.stringify(want[k].ids)) continue;
        const single = group[k].map((cp) => probe(String.fromCodePoint(cp)));
        const w = await oracleEncodeBatch(tj, single);
        group[k].forEach((cp, i) => {
          if (JSON.stringify(tok.encode(single[i]).ids) !== JSON.stringify(w[i].ids)) bad.push(cp);
        });
      }
    }
    const byCategory = new Map<string, number>();
    for (const cp of bad) byCategory.set(categoryOf(String.fromCodePoint(cp)), (byCategory.get(categoryOf(String.fromCodePoint(cp))) ?? 0) + 1);
    console.log(`${name}: ${bad.length} of ${cps.length} code points give other ids than Rust's ${JSON.stringify(Object.fromEntries(byCategory))}`);
    if (bad.length) console.log(`  ${ranges(bad)}`);
    differ += bad.length;
  }
  return differ ? 1 : 0;
}

main().then((code) => process.exit(code));
