import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, copyFileSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers';

// Cache files go to a fresh folder so that the first load in this file really parses.
process.env.XDG_CACHE_HOME = tempDir('eagle3-cache-');

import { bpeMerge } from '../../src/core/tokenizers/tiktoken/bpe';
import { kimiSubstrings, KIMI_PAT_STR, pythonIsSpace } from '../../src/core/tokenizers/tiktoken/kimi';
import { loadRankTable, rankCachePath, tiktokenCacheDir } from '../../src/core/tokenizers/tiktoken/rankCache';
import { loadTiktokenTokenizer } from '../../src/core/tokenizers/tiktoken/load';
import { parseTiktokenModel } from '../../src/core/tokenizers/tiktoken/rankTable';
import { translatePattern } from '../../src/core/tokenizers/tiktoken/pattern';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { TokenizerLoadError } from '../../src/core/tokenizers/types';

const STANDIN = join(__dirname, '..', 'fixtures', 'kimi-format-standin');
const expected: { n_base: number; pat_str: string; cases: { text: string; ids: number[] }[] } = JSON.parse(
  readFileSync(join(STANDIN, 'expected_ids.json'), 'utf8'),
);
const standinSpecials: Record<string, string> = JSON.parse(readFileSync(join(STANDIN, 'specials.json'), 'utf8'));
const kimiSpecials: { tokens: Record<string, string>; known_ids: Record<string, number[]> } = JSON.parse(
  readFileSync(join(__dirname, '..', 'fixtures', 'kimi', 'special_tokens.json'), 'utf8'),
);

/** Links (or copies) a file into a folder. */
function place(src: string, dest: string): void {
  try {
    symlinkSync(src, dest);
  } catch {
    copyFileSync(src, dest);
  }
}

/**
 * A model folder in Kimi's real layout built from the stand-in: `tiktoken.model`
 * (linked) + `tokenizer_config.json` whose `added_tokens_decoder` names the ids
 * `n_base + offset` of specials.json (the stand-in ships specials.json instead of a config).
 */
function standinModelDir(extraConfig: Record<string, unknown> = {}, files: Record<string, string> = {}): string {
  const dir = tempDir('kimi-standin-');
  place(join(STANDIN, 'tiktoken.model'), join(dir, 'tiktoken.model'));
  const added: Record<string, { content: string; special: boolean }> = {};
  for (const [off, name] of Object.entries(standinSpecials)) added[String(expected.n_base + Number(off))] = { content: name, special: true };
  const config = {
    tokenizer_class: 'TikTokenTokenizer',
    added_tokens_decoder: added,
    bos_token: '[BOS]',
    eos_token: '[EOS]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    ...extraConfig,
  };
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(config));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const standinDir = standinModelDir({}, { 'chat_template.jinja': '{% for m in messages %}<|im_{{ m.role }}|>{{ m.content }}<|im_end|>{% endfor %}' });
const tok = loadTiktokenTokenizer(standinDir);
const table = loadRankTable(join(STANDIN, 'tiktoken.model')).ranks;
/** Bytes a token stands for in the text (a special token: its string). */
function tokenByteLength(id: number): number {
  return id < table.size ? table.tokenBytes(id).length : Buffer.byteLength(tok.idToToken(id)!);
}

test("Kimi's pat_str as built in equals the one the expected ids were made with", () => {
  assert.equal(KIMI_PAT_STR, expected.pat_str);
  const re = new RegExp(translatePattern(KIMI_PAT_STR), 'gv');
  // Intersection: Han is excluded from the letter classes; (?i:'s) matches 'S; \s includes U+0085 as in Rust.
  assert.deepEqual("Ab日本cD'S".match(re), ['Ab', '日本', 'c', "D'S"]);
  // JS's own \s lacks U+0085 and would give ['a', '\u0085\u0085', 'b'].
  assert.deepEqual('a\u0085\u0085b'.match(re), ['a', '\u0085', '\u0085b']);
});

test('stand-in: all 601 expected id lists reproduced exactly', () => {
  assert.equal(expected.cases.length, 601);
  const bad: string[] = [];
  for (const c of expected.cases) {
    const ids = tok.encode(c.text).ids;
    if (JSON.stringify(ids) !== JSON.stringify(c.ids)) bad.push(`${JSON.stringify(c.text)}\n  got ${JSON.stringify(ids)}\n  exp ${JSON.stringify(c.ids)}`);
  }
  assert.equal(bad.length, 0, `${bad.length}/601 mismatch; first:\n${bad.slice(0, 3).join('\n')}`);
});

test('stand-in: token starts are consistent with the text; decode(ids) == text', () => {
  let ascii = 0;
  for (const c of expected.cases) {
    const { ids, starts, exactOffsets } = tok.encode(c.text);
    assert.equal(exactOffsets, true);
    assert.equal(starts.length, ids.length);
    assert.equal(tok.decode(ids), c.text);
    // Byte offset where each token begins = bytes of the tokens before it (specials by their string).
    let byte = 0;
    const isAscii = /^[\x00-\x7f]*$/.test(c.text);
    if (isAscii) ascii++;
    for (let k = 0; k < ids.length; k++) {
      if (k > 0) assert.ok(starts[k] >= starts[k - 1], `starts decrease at ${k} in ${JSON.stringify(c.text)}`);
      // The token's first byte lies in the character at starts[k].
      const before = Buffer.byteLength(c.text.slice(0, starts[k]));
      const cp = c.text.codePointAt(starts[k])!;
      const charBytes = Buffer.byteLength(String.fromCodePoint(cp));
      assert.ok(before <= byte && byte < before + charBytes, `token ${k} of ${JSON.stringify(c.text)}: byte ${byte} outside char at ${starts[k]}`);
      if (isAscii) assert.equal(starts[k], byte);
      byte += tokenByteLength(ids[k]);
    }
    assert.equal(byte, Buffer.byteLength(c.text));
  }
  assert.ok(ascii >= 20, `only ${ascii} ASCII cases`);
});

test('Kimi special ids (fixtures/kimi/special_tokens.json) come out as listed; unnamed ids are reserved tokens', () => {
  // Kimi's 163,584 ranks: take the stand-in's first 163,584 so the specials land where Kimi's do.
  const nBase = 163584;
  const dir = tempDir('kimi-real-ids-');
  const lines = readFileSync(join(STANDIN, 'tiktoken.model'), 'utf8')
    .split('\n')
    .filter((l) => l && Number(l.split(' ')[1]) < nBase);
  writeFileSync(join(dir, 'tiktoken.model'), lines.join('\n') + '\n');
  const added: Record<string, { content: string; special: boolean }> = {};
  for (const [id, name] of Object.entries(kimiSpecials.tokens)) added[id] = { content: name, special: true };
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ tokenizer_class: 'TikTokenTokenizer', added_tokens_decoder: added, eos_token: '[EOS]' }));
  const kimi = loadTokenizer(dir);
  for (const [id, name] of Object.entries(kimiSpecials.tokens)) {
    assert.deepEqual(kimi.encode(name).ids, [Number(id)], name);
    assert.equal(kimi.idToToken(Number(id)), name);
  }
  const all = Object.values(kimiSpecials.tokens).join('x');
  assert.deepEqual(
    kimi.encode(all).ids.filter((i) => i >= nBase),
    Object.keys(kimiSpecials.tokens).map(Number),
  );
  const sys = kimi.encode('<|im_system|>system<|im_middle|>').ids;
  assert.deepEqual([sys[0], sys[sys.length - 1]], [163594, 163601]);
  // 163589 has no name: it is <|reserved_token_163589|>, matched as one special id.
  assert.equal(kimiSpecials.tokens['163589'], undefined);
  assert.deepEqual(kimi.encode('<|reserved_token_163589|>').ids, [163589]);
  assert.equal(kimi.idToToken(163589), '<|reserved_token_163589|>');
  assert.equal(kimi.idToToken(163839), '[PAD]');
  assert.equal(kimi.idToToken(163840), undefined);
  assert.equal(kimi.specialTokenVars.bos_token, '[BOS]', 'tokenization_kimi.py default');
  assert.ok(kimi.specialTokens.includes('<|im_end|>'));
});

test('reserved ids: named by id from added_tokens_decoder, the rest <|reserved_token_{id}|>, never renumbered', () => {
  const n = expected.n_base;
  assert.deepEqual(tok.encode(`<|reserved_token_${n + 5}|>`).ids, [n + 5]);
  assert.equal(tok.idToToken(n + 5), `<|reserved_token_${n + 5}|>`);
  assert.equal(tok.idToToken(n + 2), '<|im_end|>');
  assert.deepEqual(tok.encode('<|im_end|>').ids, [n + 2]);
  // Naming offset 5 in the config takes the reserved name's place at the same id; others stay put.
  const dir = standinModelDir({
    added_tokens_decoder: { [String(n + 5)]: { content: '<|custom|>', special: true }, [String(n + 2)]: { content: '<|im_end|>', special: true } },
  });
  const t2 = loadTiktokenTokenizer(dir);
  assert.deepEqual(t2.encode('<|custom|>').ids, [n + 5]);
  assert.ok(t2.encode(`<|reserved_token_${n + 5}|>`).ids.length > 1, 'the replaced reserved name is ordinary text');
  assert.deepEqual(t2.encode('<|im_end|>').ids, [n + 2]);
  assert.deepEqual(t2.encode('[BOS]').ids.length > 1, true, '[BOS] is not named in this config: ordinary text');
  assert.deepEqual(t2.encode(`<|reserved_token_${n}|>`).ids, [n]);
  assert.deepEqual(t2.specialTokens.sort(), ['<|custom|>', '<|im_end|>']);
});

test('folder loader: dispatch from loadTokenizer, templates, special-token vars, hash, cache', () => {
  const viaDispatch = loadTokenizer(standinDir);
  assert.equal(viaDispatch.name, tok.name);
  assert.equal(viaDispatch.hash, tok.hash);
  assert.match(tok.hash, /^[0-9a-f]{16}$/);
  assert.equal(viaDispatch.embeddedDefault, false);
  assert.deepEqual(viaDispatch.encode('Hello<|im_end|>').ids, tok.encode('Hello<|im_end|>').ids);
  assert.equal(tok.templates.length, 1);
  assert.match(tok.templates[0].source, /<\|im_end\|>/);
  assert.deepEqual(tok.specialTokenVars, { bos_token: '[BOS]', eos_token: '[EOS]', pad_token: '[PAD]', unk_token: '[UNK]' });
  assert.equal(tok.specialTokens.length, Object.keys(standinSpecials).length);
  // chat_template from the config when there is no .jinja file.
  const t3 = loadTiktokenTokenizer(standinModelDir({ chat_template: 'X{{ messages }}' }));
  assert.deepEqual(t3.templates, [{ name: 'default', source: 'X{{ messages }}' }]);
  assert.notEqual(t3.hash, tok.hash);
  // The converted rank table is cached under the model's sha256; the cached table encodes identically.
  const path = join(STANDIN, 'tiktoken.model');
  assert.equal(loadRankTable(path).fromCache, true);
  assert.ok(tiktokenCacheDir()!.startsWith(process.env.XDG_CACHE_HOME!));
  const parsed = loadRankTable(path, false);
  assert.equal(parsed.fromCache, false);
  assert.equal(parsed.ranks.size, expected.n_base);
  assert.deepEqual(Buffer.from(parsed.ranks.tokenBytes(199997)), Buffer.from(' cocos'));
  // idToToken uses the byte-level alphabet (space → Ġ), as tokenization_kimi.py's decoder does.
  assert.equal(tok.idToToken(199997), 'Ġcocos');
});

test(
  'a cached rank table another user owns is not read (a shared temporary folder): the model is parsed instead',
  { skip: process.getuid?.() === 0 ? false : 'needs root to give the entry to another user' },
  () => {
    const saved = process.env.EAGLE3_TOKENIZER_CACHE;
    const cache = tempDir('eagle3-tiktoken-cache-');
    process.env.EAGLE3_TOKENIZER_CACHE = cache;
    try {
      const path = join(STANDIN, 'tiktoken.model');
      assert.equal(loadRankTable(path).fromCache, false);
      const entry = rankCachePath(cache, loadRankTable(path).sha256);
      assert.equal(loadRankTable(path).fromCache, true, "this user's entry is read");
      chownSync(entry, 65534, 65534);
      assert.equal(loadRankTable(path).fromCache, false, "another user's entry is not");
    } finally {
      if (saved === undefined) delete process.env.EAGLE3_TOKENIZER_CACHE;
      else process.env.EAGLE3_TOKENIZER_CACHE = saved;
    }
  },
);

test("Kimi's splitting of long whitespace / non-whitespace runs (tokenization_kimi.py)", () => {
  assert.deepEqual(kimiSubstrings('abc'), [[0, 3]]);
  assert.deepEqual(kimiSubstrings(''), [[0, 0]]);
  const run = 'a'.repeat(25_001);
  assert.deepEqual(kimiSubstrings(run), [
    [0, 25_000],
    [25_000, 25_001],
  ]);
  assert.deepEqual(kimiSubstrings('a'.repeat(25_000) + ' ' + 'b'.repeat(25_000)), [[0, 50_001]]);
  // Whitespace is Python's str.isspace: U+0085 and U+001C count, U+200B and U+FEFF do not.
  assert.ok(pythonIsSpace(0x85) && pythonIsSpace(0x1c) && pythonIsSpace(0x3000));
  assert.ok(!pythonIsSpace(0x200b) && !pythonIsSpace(0xfeff) && !pythonIsSpace(0x41));
  assert.deepEqual(kimiSubstrings('\u0085'.repeat(25_002)), [
    [0, 25_000],
    [25_000, 25_002],
  ]);
  // Runs count code points: 25,001 emoji (50,002 UTF-16 units) split after 25,000 of them.
  assert.deepEqual(kimiSubstrings('😀'.repeat(25_001)), [
    [0, 50_000],
    [50_000, 50_002],
  ]);
  // Small limits exercise the 400k chunking the same way: chunks first, runs within each chunk.
  assert.deepEqual(kimiSubstrings('ab cdefg', 4, 3), [
    [0, 4],
    [4, 7],
    [7, 8],
  ]);
  // The ids of a long run are the ids of its pieces, which differ from BPE over the whole run.
  for (const text of ['abc'.repeat(8_334), '.'.repeat(25_001)]) {
    const split = [...tok.encode(text.slice(0, 25_000)).ids, ...tok.encode(text.slice(25_000)).ids];
    const got = tok.encode(text).ids;
    assert.ok(JSON.stringify(got) === JSON.stringify(split), `ids of ${text.slice(0, 6)}… are not those of its 25,000-char pieces`);
    const whole: number[] = [];
    bpeMerge(table, Buffer.from(text), 0, text.length, whole, []);
    assert.ok(JSON.stringify(whole) !== JSON.stringify(split), 'the test string must be one where splitting matters');
  }
  // The serving stack (transformers) splits on special tokens before Kimi's chunking: a special token
  // after a 24,995-char run stays one token (chunking the whole text would cut it at 25,000).
  const dots = '.'.repeat(24_995);
  assert.deepEqual(tok.encode(dots + '<|im_end|>').ids, [...tok.encode(dots).ids, expected.n_base + 2]);
  const spaces = ' '.repeat(30_000) + 'x';
  assert.equal(tok.decode(tok.encode(spaces).ids), spaces);
});

test('BPE: the heap path merges exactly as the linear scan (tiktoken order: lowest rank, leftmost)', () => {
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const words = ['the', 'tion', 'ing', ' ', 'ab', 'aa', 'é', '日本', 'の', 'zz', 'q', '😀', 'xyz'];
  for (let k = 0; k < 40; k++) {
    let s = '';
    const len = 1 + Math.floor(rnd() * 120);
    for (let j = 0; j < len; j++) s += words[Math.floor(rnd() * words.length)];
    const buf = Buffer.from(s);
    const a: number[] = [];
    const ap: number[] = [];
    const b: number[] = [];
    const bp: number[] = [];
    bpeMerge(table, buf, 0, buf.length, a, ap, false);
    bpeMerge(table, buf, 0, buf.length, b, bp, true);
    assert.deepEqual(b, a, JSON.stringify(s));
    assert.deepEqual(bp, ap);
  }
});

test('malformed tiktoken.model: the error names the file and the line', () => {
  const dir = tempDir('bad-tiktoken-');
  const good = Array.from({ length: 256 }, (_, b) => `${Buffer.from([b]).toString('base64')} ${b}`);
  const write = (lines: string[]) => {
    const p = join(dir, 'tiktoken.model');
    writeFileSync(p, lines.join('\n') + '\n');
    return p;
  };
  const okPath = write([...good, `${Buffer.from('ab').toString('base64')} 256`]);
  assert.equal(parseTiktokenModel(okPath).size, 257);
  const cases: [string[], RegExp][] = [
    [[...good.slice(0, 2), 'QUI=', ...good.slice(2)], /tiktoken\.model:3: expected "<base64 token> <rank>", found one field/],
    [[...good, 'YWI= 25x'], /tiktoken\.model:257: rank is not a non-negative integer/],
    [[...good, 'Y*I= 256'], /tiktoken\.model:257: token is not valid base64/],
    [[...good, 'YWI= 255'], /tiktoken\.model:257: rank 255 given twice \(first on line 256\)/],
    [[...good, 'YWI= 300'], /rank 300 is not below the number of lines|rank 256 is missing/],
    [[...good, 'YQ== 256'], /tiktoken\.model:257: token repeats the one on line 98/],
    [[...good.slice(1), 'YWI= 0'], /no rank for the single byte 0x00/],
  ];
  for (const [lines, re] of cases) {
    const p = write(lines);
    assert.throws(
      () => parseTiktokenModel(p),
      (e: unknown) => e instanceof TokenizerLoadError && re.test((e as Error).message) && (e as Error).message.includes(p),
      String(re),
    );
  }
  // A tiktoken folder that is not Kimi's layout, or whose tokenization_kimi.py has another pattern, is refused.
  assert.throws(() => loadTiktokenTokenizer(standinModelDir({ tokenizer_class: 'QWenTokenizer' })), /tokenizer_config\.json: tokenizer_class "QWenTokenizer"/);
  const py = (pat: string) =>
    `class TikTokenTokenizer:\n    pat_str = "|".join([\n${pat
      .split('|')
      .map((a) => `        r"""${a}""",`)
      .join('\n')}\n    ])\n`;
  assert.equal(loadTiktokenTokenizer(standinModelDir({}, { 'tokenization_kimi.py': py(KIMI_PAT_STR) })).encode('ok').ids.length, 1);
  assert.throws(
    () => loadTiktokenTokenizer(standinModelDir({}, { 'tokenization_kimi.py': py(KIMI_PAT_STR.replace('\\p{N}{1,3}', '\\p{N}+')) })),
    /tokenization_kimi\.py: its pat_str differs/,
  );
  // Through the folder loaders too; and a bad tokenizer_config names its file.
  writeFileSync(join(dir, 'tokenizer_config.json'), '{}');
  write([...good.slice(0, 2), 'QUI=', ...good.slice(2)]);
  assert.throws(() => loadTokenizer(dir), /tiktoken\.model:3:/);
  write(good);
  writeFileSync(join(dir, 'tokenizer_config.json'), '{ nope');
  assert.throws(
    () => loadTokenizer(dir),
    (e: unknown) => e instanceof TokenizerLoadError && (e as Error).message.includes(join(dir, 'tokenizer_config.json')),
  );
});
