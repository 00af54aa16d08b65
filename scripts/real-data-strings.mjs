// The string values of the shared real dataset files, for the tokenizer benchmark and comparison
// (scripts/bench-tokenizer.mjs, scripts/compare-tokenizers.ts; docs/scale.md "Tokenizer backends").
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real-data corpus folder: $EAGLE3_REAL_DATA, else `shared/real-data` beside the checkout (as
 * test/unit/rowVerdictParity.test.ts and scripts/check-real.mjs find it). Its `files` and `adp_std`
 * folders hold the dataset files.
 */
export const REAL_DATA_DIR = process.env.EAGLE3_REAL_DATA || resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..', 'shared', 'real-data');

/**
 * Hands every string value (at any depth) of the `.json`, `.jsonl` and `.traj` files directly in
 * each of `dirs` to `onString`, files in name order; a file that is not one JSON document is read
 * line by line, lines that are not JSON skipped. A missing folder is skipped.
 * @param {string[]} dirs folders
 * @param {(s: string) => void} onString called once per string value, in document order
 */
export function forEachJsonString(dirs, onString) {
  const visit = (v) => {
    if (typeof v === 'string') onString(v);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).sort()) {
      if (!/\.(jsonl?|traj)$/.test(f)) continue;
      const raw = readFileSync(join(dir, f), 'utf8');
      try {
        visit(JSON.parse(raw));
      } catch {
        for (const line of raw.split('\n')) {
          try {
            visit(JSON.parse(line));
          } catch {
            /* not a JSON line */
          }
        }
      }
    }
  }
}
