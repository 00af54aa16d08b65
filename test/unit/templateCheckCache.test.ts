/**
 * The on-disk cache of the chat-template check (src/core/records/templateCheckCache.ts): a hit returns exactly what
 * a fresh check computes (DeepSeek-V3's real tokenizer and template), without encoding anything; every part of the
 * key misses when it changes; damaged, foreign-version and unwritable entries are misses, never errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isolateTokenizerCache, lenmlModelDir, tempDir } from '../helpers';
import { loadTokenizer } from '../../src/core/tokenizers/tokenizer';
import { checkTemplate } from '../../src/core/records/checkTemplate';
import { TEMPLATE_CHECK_CACHE_FORMAT, cachedCheckTemplate, codeIdentity, templateCheckKey, templateCheckPath } from '../../src/core/records/templateCheckCache';
import type { TargetTokenizer } from '../../src/core/tokenizers/types';
import type { CheckTemplateOptions } from '../../src/core/records/checkTemplateTypes';

isolateTokenizerCache();
const tok = loadTokenizer(lenmlModelDir('deepseek_v3'));
const CODE = 'code-a';
const OPTS: CheckTemplateOptions = { templateKwargs: {}, mask: 'assistant', grouping: 'exact' };

/** `tok` with its encodes counted (a hit encodes nothing). */
function counted(t: TargetTokenizer): { tok: TargetTokenizer; encodes: () => number } {
  let n = 0;
  const c = Object.create(t, {
    encode: {
      value: (text: string) => {
        n++;
        return t.encode(text);
      },
    },
  }) as TargetTokenizer;
  return { tok: c, encodes: () => n };
}

/** `tok` with one field replaced. */
function withField<K extends keyof TargetTokenizer>(t: TargetTokenizer, k: K, v: TargetTokenizer[K]): TargetTokenizer {
  return Object.create(t, { [k]: { value: v } }) as TargetTokenizer;
}

test('from source (tsx) there is no code identity, so nothing is cached', async () => {
  assert.equal(codeIdentity(), null);
  const dir = tempDir('eagle3-tcache-');
  const r = await cachedCheckTemplate(tok, OPTS, { dir });
  assert.equal(r.cache, 'off');
  assert.deepEqual(readdirSync(dir), []);
  assert.equal((await cachedCheckTemplate(tok, OPTS, { dir: null, code: CODE })).cache, 'off');
});

test('a second check with the same tokenizer, options and code is a hit: the very result of a fresh check, nothing encoded', async () => {
  const dir = tempDir('eagle3-tcache-');
  const fresh = checkTemplate(tok, OPTS);
  const first = await cachedCheckTemplate(tok, OPTS, { dir, code: CODE });
  assert.equal(first.cache, 'miss');
  assert.deepEqual(first.check, fresh);
  assert.equal(readdirSync(dir).length, 1);
  const c = counted(tok);
  const second = await cachedCheckTemplate(c.tok, OPTS, { dir, code: CODE });
  assert.equal(second.cache, 'hit');
  assert.equal(c.encodes(), 0);
  // Exactly the fresh check's result (deep strict equality: the same fields, values, order of arrays, and types).
  assert.deepStrictEqual(second.check, fresh);
  assert.equal(JSON.stringify(second.check), JSON.stringify(fresh));
  // Real findings, not an empty shell: DeepSeek-V3's end of turn is trained, and its amplification is counted.
  assert.deepEqual(second.check.endOfTurnTrained, ['<｜end▁of▁sentence｜>']);
  assert.ok(second.check.amplification.renderedTokens > 0);
  assert.equal(second.check.amplification.renderedTokens, fresh.amplification.renderedTokens);
});

test('a change of any part of the key is a miss', async () => {
  const base = templateCheckKey(tok, OPTS, CODE, {});
  assert.match(base ?? '', /^[0-9a-f]{64}$/);
  assert.equal(templateCheckKey(tok, { ...OPTS }, CODE, {}), base, 'the same inputs give the same key');
  const variants: [string, string | null][] = [
    ['code', templateCheckKey(tok, OPTS, 'code-b', {})],
    ['files hash', templateCheckKey(withField(tok, 'hash', '0000000000000000'), OPTS, CODE, {})],
    ['folder', templateCheckKey(withField(tok, 'dir', '/elsewhere'), OPTS, CODE, {})],
    ['name', templateCheckKey(withField(tok, 'name', 'other'), OPTS, CODE, {})],
    ['backend', templateCheckKey(withField(tok, 'backend', 'rust'), OPTS, CODE, {})],
    ['templates', templateCheckKey(withField(tok, 'templates', [{ name: 'default', source: '{{ messages }}' }]), OPTS, CODE, {})],
    ['special-token variables', templateCheckKey(withField(tok, 'specialTokenVars', { bos_token: '<s>' }), OPTS, CODE, {})],
    ['special tokens', templateCheckKey(withField(tok, 'specialTokens', ['<x>']), OPTS, CODE, {})],
    ['stop tokens', templateCheckKey(withField(tok, 'stopTokens', ['<x>']), OPTS, CODE, {})],
    ['stop tokens source', templateCheckKey(withField(tok, 'stopTokensSource', 'none'), OPTS, CODE, {})],
    ['template kwargs', templateCheckKey(tok, { ...OPTS, templateKwargs: { enable_thinking: false } }, CODE, {})],
    ['mask policy', templateCheckKey(tok, { ...OPTS, mask: 'last-assistant' }, CODE, {})],
    ['grouping', templateCheckKey(tok, { ...OPTS, grouping: 'merged' }, CODE, {})],
    ['render budget', templateCheckKey(tok, { ...OPTS, budget: { maxLoopIterations: 10 } }, CODE, {})],
    ['compiled templates given', templateCheckKey(tok, { ...OPTS, templates: { template: () => undefined as never } }, CODE, {})],
    ['an EAGLE3_NO_ switch', templateCheckKey(tok, OPTS, CODE, { EAGLE3_NO_HEADER_REPLAY: '1' })],
  ];
  const seen = new Set([base]);
  for (const [part, key] of variants) {
    assert.ok(key, part);
    assert.ok(!seen.has(key), `${part}: a key of its own`);
    seen.add(key);
  }
  // Unrelated environment variables are not part of it; options that are not plain JSON are not cached at all.
  assert.equal(templateCheckKey(tok, OPTS, CODE, { HOME: '/x' }), base);
  assert.equal(templateCheckKey(tok, { ...OPTS, templateKwargs: { when: new Date(0) } }, CODE, {}), null);
  assert.equal(templateCheckKey(tok, { ...OPTS, templateKwargs: { x: undefined } }, CODE, {}), null);
  // Nor a template that reads the clock: its probes render today's date.
  const dated = [{ name: 'default', source: "{{ strftime_now('%d %b %Y') }}{% for m in messages %}{{ m.content }}{% endfor %}" }];
  assert.equal(templateCheckKey(withField(tok, 'templates', dated), OPTS, CODE, {}), null);
  const notJson = tempDir('eagle3-tcache-');
  const r0 = await cachedCheckTemplate(tok, { ...OPTS, templateKwargs: { x: undefined } }, { dir: notJson, code: CODE });
  assert.equal(r0.cache, 'off');
  assert.deepStrictEqual(r0.check.templateKwargs, { x: undefined });
  assert.deepEqual(readdirSync(notJson), []);

  // End to end: an entry written under one code and kwargs is not found under another.
  const dir = tempDir('eagle3-tcache-');
  assert.equal((await cachedCheckTemplate(tok, OPTS, { dir, code: CODE })).cache, 'miss');
  assert.equal((await cachedCheckTemplate(tok, OPTS, { dir, code: 'code-b' })).cache, 'miss');
  const thinkingOff = { ...OPTS, templateKwargs: { thinking: false } };
  const r = await cachedCheckTemplate(tok, thinkingOff, { dir, code: CODE });
  assert.equal(r.cache, 'miss');
  assert.deepEqual(r.check.templateKwargs, { thinking: false });
  assert.equal((await cachedCheckTemplate(tok, thinkingOff, { dir, code: CODE })).cache, 'hit');
  assert.equal(readdirSync(dir).length, 3);
});

test('a damaged, truncated or other-version entry is a miss, and is rewritten', async () => {
  const dir = tempDir('eagle3-tcache-');
  const fresh = (await cachedCheckTemplate(tok, OPTS, { dir, code: CODE })).check;
  const path = templateCheckPath(dir, templateCheckKey(tok, OPTS, CODE)!);
  const good = readFileSync(path, 'utf8');
  const nl = good.indexOf('\n');
  const head = JSON.parse(good.slice(0, nl));
  const body = good.slice(nl + 1);
  const damaged: [string, string][] = [
    ['truncated', good.slice(0, Math.floor(good.length / 2))],
    ['empty', ''],
    ['a changed finding', good.replace('"prefixStable":true', '"prefixStable":false')],
    ['no header', body],
    ['another format', `${JSON.stringify({ ...head, format: TEMPLATE_CHECK_CACHE_FORMAT + 1 })}\n${body}`],
    ['another key', `${JSON.stringify({ ...head, key: 'f'.repeat(64) })}\n${body}`],
    ['not JSON', `${JSON.stringify(head)}\n{`],
  ];
  assert.notEqual(damaged[2][1], good, 'the probe finding is in the entry');
  for (const [what, text] of damaged) {
    writeFileSync(path, text);
    const r = await cachedCheckTemplate(tok, OPTS, { dir, code: CODE });
    assert.equal(r.cache, 'miss', what);
    assert.deepStrictEqual(r.check, fresh, what);
    assert.equal(readFileSync(path, 'utf8'), good, `${what}: rewritten`);
    assert.equal((await cachedCheckTemplate(tok, OPTS, { dir, code: CODE })).cache, 'hit', `${what}: then a hit`);
  }
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary files left',
  );
});

test('a cache that cannot be written or read is skipped, not an error', async () => {
  const fresh = checkTemplate(tok, OPTS);
  // A cache "folder" that is a file: nothing can be read or written under it.
  const file = join(tempDir('eagle3-tcache-'), 'a-file');
  writeFileSync(file, 'x');
  for (let k = 0; k < 2; k++) {
    const r = await cachedCheckTemplate(tok, OPTS, { dir: join(file, 'cache'), code: CODE });
    assert.equal(r.cache, 'miss');
    assert.deepStrictEqual(r.check, fresh);
  }
  assert.equal(readFileSync(file, 'utf8'), 'x');
});

test('a read-only cache folder is skipped, not an error', { skip: process.getuid?.() === 0 ? 'root writes to read-only folders' : false }, async () => {
  const dir = tempDir('eagle3-tcache-');
  chmodSync(dir, 0o555);
  try {
    const r = await cachedCheckTemplate(tok, OPTS, { dir, code: CODE });
    assert.equal(r.cache, 'miss');
    assert.deepStrictEqual(r.check, checkTemplate(tok, OPTS));
    assert.equal(existsSync(templateCheckPath(dir, templateCheckKey(tok, OPTS, CODE)!)), false);
  } finally {
    chmodSync(dir, 0o755);
  }
});

test("the bundles' code identity is a hash of src/ and package-lock.json: any change of either is another identity", async () => {
  const { codeId, NODE_BUNDLE } = await import('../../scripts/bundle-options.mjs');
  assert.equal(NODE_BUNDLE.define.__EAGLE3_CODE_ID__, JSON.stringify(codeId()));
  const root = tempDir('eagle3-codeid-');
  mkdirSync(join(root, 'src', 'core'), { recursive: true });
  writeFileSync(join(root, 'src', 'core', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
  const first = codeId(root);
  assert.match(first, /^[0-9a-f]{32}$/);
  assert.equal(codeId(root), first, 'the same sources, the same identity');
  const ids = new Set([first]);
  const changes: [string, () => void][] = [
    ['a source changed', () => writeFileSync(join(root, 'src', 'core', 'a.ts'), 'export const a = 2;\n')],
    ['a source added', () => writeFileSync(join(root, 'src', 'b.ts'), '')],
    ['a source renamed', () => renameSync(join(root, 'src', 'b.ts'), join(root, 'src', 'c.ts'))],
    ['the dependencies changed', () => writeFileSync(join(root, 'package-lock.json'), '{"lockfileVersion":3,"x":1}\n')],
  ];
  for (const [what, change] of changes) {
    change();
    const id = codeId(root);
    assert.ok(!ids.has(id), what);
    ids.add(id);
  }
});
