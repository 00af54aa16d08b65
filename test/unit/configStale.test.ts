import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appliedConfigOf, configChange, textHolds } from '../../src/core/formats/appliedConfig';
import { configAppliesTo } from '../../src/core/read/projectConfig';
import { readOutputState } from '../../src/core/run/editor/datasetScan';
import { readRunReport } from '../../src/core/run/reports/readReport';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { tempDir, writeJsonl } from '../helpers';

const row = (q: string, a: string) => ({
  conversations: [
    { from: 'human', value: q },
    { from: 'gpt', value: a },
  ],
});

/** Writes `eagle3prep.jsonc` with a modification time after every report (mtimes alone would stale every file). */
function writeConfig(dir: string, cfg: object): void {
  const p = join(dir, 'eagle3prep.jsonc');
  writeFileSync(p, `// project config\n${JSON.stringify(cfg)}\n`);
  const later = new Date(Date.now() + 60_000);
  utimesSync(p, later, later);
}

test('eagle3prep.jsonc: a change stales only the outputs of the files it can change', async () => {
  const dir = tempDir();
  const a = writeJsonl([row('Ahoy there, who steers?', 'The captain.')], 'a.jsonl', dir);
  const b = writeJsonl([row('What is 2+2?', 'Four.')], 'b.jsonl', dir);
  for (const f of [a, b]) {
    const res = await prepare({ inputs: [f], outDir: f.replace(/\.jsonl$/, '.eagle3') });
    assert.ok(res.ok);
  }
  // the run recorded what applied: no config at all
  const recorded = readRunReport(join(dir, 'a.eagle3', 'report.json')).report.files[0].input?.projectConfig;
  assert.deepEqual(recorded, { file: '', roleAliases: {}, fieldMappings: {}, reading: {} });
  assert.equal(readOutputState(a).state, 'prepared');

  // a role alias whose spelling only a.jsonl holds (matched case-insensitively, as aliases are)
  writeConfig(dir, { roleAliases: { AHOY: 'user' } });
  const cfg = join(dir, 'eagle3prep.jsonc');
  assert.deepEqual(readOutputState(a).staleBecause, [`${cfg} changed since the run: role alias "ahoy", used in this file`]);
  assert.equal(readOutputState(b).state, 'prepared', readOutputState(b).staleBecause.join('; '));
  assert.equal(readOutputState(a).readingChanged, true);
  assert.equal(readOutputState(b).readingChanged, false);

  // a field mapping of a field neither file has: nothing stale but a.jsonl's alias
  writeConfig(dir, { fieldMappings: { dialogue: 'conversations' } });
  assert.equal(readOutputState(a).state, 'prepared');
  assert.equal(readOutputState(b).state, 'prepared');
  // ... and of a field both have
  writeConfig(dir, { fieldMappings: { conversations: 'messages' } });
  assert.deepEqual(readOutputState(b).staleBecause, [`${cfg} changed since the run: field mapping "conversations", a field of this file`]);

  // a reading choice applies to every file below the config
  writeConfig(dir, { reading: { answers: 'all' } });
  for (const f of [a, b]) assert.deepEqual(readOutputState(f).staleBecause, [`${cfg} changed since the run: "reading" (run: {}, now: {"answers":"all"})`]);

  // a mapping entry stales the files its glob matches only
  writeConfig(dir, { mappings: [{ files: 'b.jsonl', turns: 'conversations' }] });
  assert.equal(readOutputState(a).state, 'prepared');
  assert.deepEqual(readOutputState(b).staleBecause, [`${cfg} changed since the run: the "mappings" entry for this file`]);

  // a config that cannot be read stales every file below it, with the reason
  writeFileSync(cfg, '{ "roleAliases": { "x": "narrator" } }');
  const broken = readOutputState(a).staleBecause;
  assert.equal(broken.length, 1);
  assert.match(broken[0], /eagle3prep\.jsonc changed since the run: .*"x" maps to "narrator"; use one of system, user, assistant, tool/);
});

test('appliedConfigOf / configChange / textHolds: what applies, what changed, what the text holds', () => {
  const dir = tempDir();
  const f = writeJsonl(['{"Dialogue": [{"speaker": "Bot", "text": "hi"}]}'], 'd.jsonl', dir);
  writeFileSync(join(dir, 'eagle3prep.jsonc'), '{"roleAliases": {" Bot ": "assistant"}, "fieldMappings": {"Dialogue": "messages"}}');
  const now = appliedConfigOf(f);
  assert.ok(!('error' in now));
  assert.deepEqual(now, { file: join(dir, 'eagle3prep.jsonc'), roleAliases: { bot: 'assistant' }, fieldMappings: { Dialogue: 'messages' }, reading: {} });
  const before = { file: '', roleAliases: { bot: 'user', old: 'tool' }, fieldMappings: { Dialogue: 'messages' }, reading: {} };
  assert.deepEqual(configChange(before, now), { always: [], aliases: ['bot', 'old'], fields: [] });
  assert.deepEqual(textHolds(f, ['bot', 'old'], ['Dialogue', 'speaker', 'text2']), { aliases: ['bot'], fields: ['Dialogue', 'speaker'] });
  // an unreadable file holds everything (stale rather than wrongly current)
  assert.deepEqual(textHolds(join(dir, 'missing.jsonl'), ['x'], ['y']), { aliases: ['x'], fields: ['y'] });
});

test('configAppliesTo: an eagle3prep.jsonc applies to its folder and below, unless a nearer one wins (also once deleted)', () => {
  const root = tempDir();
  const sub = join(root, 'sub');
  const deep = join(sub, 'deep');
  const other = join(root, 'other');
  for (const d of [deep, other]) mkdirSync(d, { recursive: true });
  const rootCfg = join(root, 'eagle3prep.jsonc');
  const subCfg = join(sub, 'eagle3prep.jsonc');
  writeFileSync(rootCfg, '{}');
  writeFileSync(subCfg, '{}');
  const files = { top: join(root, 'a.jsonl'), inSub: join(sub, 'b.jsonl'), inDeep: join(deep, 'c.jsonl'), inOther: join(other, 'd.jsonl') };
  const applies = (cfg: string) =>
    Object.entries(files)
      .filter(([, f]) => configAppliesTo(cfg, f))
      .map(([k]) => k);
  assert.deepEqual(applies(rootCfg), ['top', 'inOther'], 'the root config: not the files sub/eagle3prep.jsonc covers');
  assert.deepEqual(applies(subCfg), ['inSub', 'inDeep']);
  // A config in a folder beside the dataset's (not above it) applies to nothing of it.
  assert.equal(configAppliesTo(join(other, 'eagle3prep.jsonc'), files.inSub), false);
  // Deleted: the files it covered are the ones whose reading may change (the root one applies again).
  rmSync(subCfg);
  assert.deepEqual(applies(subCfg), ['inSub', 'inDeep']);
  assert.deepEqual(applies(rootCfg), ['top', 'inSub', 'inDeep', 'inOther']);
  // A sibling folder whose name starts with the config folder's name is not below it.
  const twin = join(`${sub}-twin`, 'e.jsonl');
  assert.equal(configAppliesTo(subCfg, twin), false);
});
