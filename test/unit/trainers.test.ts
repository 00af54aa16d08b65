/**
 * Trainer lengths (core/trainers/trainers.ts) and `prepare --trainer`: what each trainer's default
 * length does to hand-made records (exact counts), the note and the report sections of a run
 * without a trainer, and on the bundled samples that --trainer specforge / speculators lose no
 * trainable token to the trainer's length, checked by re-reading the records the way each loader
 * cuts them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepare } from '../../src/core/run/prepare/pipeline';
import { expandInputs } from '../../src/core/run/inputs/inputs';
import { mergeShardResults } from '../../src/core/run/jobs/mergeReports';
import { readReport } from '../../src/core/run/reports/report';
import { nextStepsOfRun, trainerNextSteps } from '../../src/core/run/reports/nextSteps';
import {
  addRecordCut,
  addTrainerCuts,
  emptyTrainerCuts,
  recordCut,
  TRAINER_IDS,
  TRAINERS,
  trainerCutLines,
  withTrainerDefaults,
  type TrainerId,
} from '../../src/core/trainers/trainers';
import { prepareSettingsFrom, SETTING_DEFAULTS, type SettingKey } from '../../src/vscode/settings';
import { isolateTokenizerCache, runCli, tempDir } from '../helpers';

isolateTokenizerCache();
const ROOT = join(__dirname, '..', '..');
const SAMPLES = join(ROOT, 'samples');

/** A loss mask of `length` tokens, 1 on [from, to). */
function maskOf(length: number, from: number, to: number): number[] {
  return Array.from({ length }, (_, i) => (i >= from && i < to ? 1 : 0));
}

test('recordCut: each rule on a record of 10 tokens at length 6', () => {
  // trainable at 2, 3 (before the length) and 7, 8 (past it)
  const m = [0, 0, 1, 1, 0, 0, 0, 1, 1, 0];
  assert.deepEqual(recordCut(m, 'truncate-skip', 6), { over: true, lost: 2, untrained: false });
  assert.deepEqual(recordCut(m, 'truncate-keep', 6), { over: true, lost: 2, untrained: false });
  assert.deepEqual(recordCut(m, 'drop', 6), { over: true, lost: 4, untrained: true });
  // Exactly the length fits (SpecForge input_ids[:L], EAGLE len > max_len): nothing cut.
  assert.deepEqual(recordCut(m, 'drop', 10), { over: false, lost: 0, untrained: false });
  assert.deepEqual(recordCut(m, 'truncate-skip', 10), { over: false, lost: 0, untrained: false });
  // Nothing trainable in the kept head: skipped or kept empty, by rule.
  const tail = [0, 0, 0, 0, 1, 1];
  assert.deepEqual(recordCut(tail, 'truncate-skip', 4), { over: true, lost: 2, untrained: true });
  assert.deepEqual(recordCut(tail, 'truncate-keep', 4), { over: true, lost: 2, untrained: true });
  // Position `length` itself is past the cut (0-based): a mask 1 at index 4 with length 4 is lost.
  assert.deepEqual(recordCut([1, 0, 0, 0, 1], 'truncate-skip', 4), { over: true, lost: 1, untrained: false });
});

test('addRecordCut: four hand-made records against the four default lengths', () => {
  const cuts = emptyTrainerCuts();
  // A: 2050 tokens, trainable 2040..2049 (8 before 2048, 2 past it).
  assert.equal(addRecordCut(cuts, maskOf(2050, 2040, 2050)), true);
  // B: 3000 tokens, trainable 2100..2199 (all 100 past 2048).
  assert.equal(addRecordCut(cuts, maskOf(3000, 2100, 2200)), true);
  // C: 9000 tokens, trainable 8000..8999 (192 before 8192, 808 past it; all 1000 past 2048).
  assert.equal(addRecordCut(cuts, maskOf(9000, 8000, 9000)), true);
  // D: 100 tokens, all trainable: no trainer cuts it.
  assert.equal(addRecordCut(cuts, maskOf(100, 0, 100)), false);
  // E: 2048 tokens exactly: fits every trainer.
  assert.equal(addRecordCut(cuts, maskOf(2048, 0, 2048)), false);
  assert.deepEqual(cuts, {
    specforge: { length: 2048, recordsOver: 3, recordsUntrained: 2, trainableLost: 2 + 100 + 1000 },
    speculators: { length: 8192, recordsOver: 1, recordsUntrained: 0, trainableLost: 808 },
    eagle: { length: 2048, recordsOver: 3, recordsUntrained: 3, trainableLost: 10 + 100 + 1000 },
    modelopt: { length: 2048, recordsOver: 3, recordsUntrained: 2, trainableLost: 2 + 100 + 1000 },
  });
  const doubled = addTrainerCuts(structuredClone(cuts), cuts);
  assert.equal(doubled.eagle.trainableLost, 2220);
  assert.equal(doubled.speculators.recordsOver, 2);
  // 8 + 2 + 100 + 1000 + 100 + 2048 trainable tokens in all.
  assert.deepEqual(trainerCutLines(cuts, 3258), [
    'SpecForge (data.max_length 2048): 3 records longer, cut to their first 2048 tokens, 2 of them left with nothing to train and skipped without a word; 1,102 of 3,258 trainable tokens (33.8 %) not trained',
    'speculators (prepare_data.py --seq-length 8192): 1 record longer, cut to its first 8192 tokens; 808 of 3,258 trainable tokens (24.8 %) not trained',
    'EAGLE (traineagle3 main.py max_len 2048): 3 records longer, left out whole; 1,110 of 3,258 trainable tokens (34.1 %) not trained',
    'Model-Optimizer (training.training_seq_len 2048): 3 records longer, cut to their first 2048 tokens, 2 of them kept with nothing to train; 1,102 of 3,258 trainable tokens (33.8 %) not trained',
  ]);
  assert.deepEqual(trainerCutLines(emptyTrainerCuts(), 10), []);
});

test('withTrainerDefaults: the trainer length unless given, split unless a long policy is given', () => {
  assert.deepEqual(withTrainerDefaults({ trainer: 'specforge' as TrainerId }), { trainer: 'specforge', maxLength: 2048, long: 'split' });
  assert.deepEqual(withTrainerDefaults({ trainer: 'speculators' as TrainerId }), { trainer: 'speculators', maxLength: 8192, long: 'split' });
  assert.deepEqual(withTrainerDefaults({ trainer: 'speculators' as TrainerId, maxLength: 4096 }), { trainer: 'speculators', maxLength: 4096, long: 'split' });
  assert.deepEqual(withTrainerDefaults({ trainer: 'eagle' as TrainerId, truncate: true }), {
    trainer: 'eagle',
    truncate: true,
    maxLength: 2048,
    long: 'truncate',
    format: 'messages',
  });
  // The trainers that read conversations get them (--format messages) unless a format is given.
  assert.deepEqual(withTrainerDefaults({ trainer: 'modelopt' as TrainerId, long: 'drop' as const }), {
    trainer: 'modelopt',
    long: 'drop',
    maxLength: 2048,
    format: 'messages',
  });
  assert.deepEqual(withTrainerDefaults({ trainer: 'modelopt' as TrainerId, format: 'jsonl' }), {
    trainer: 'modelopt',
    format: 'jsonl',
    maxLength: 2048,
    long: 'split',
  });
  assert.deepEqual(withTrainerDefaults({ maxLength: 100 }), { maxLength: 100 });
});

test('eagle3prep.trainer: sets the length and split unless given; none and invalid values leave them', () => {
  const settings = (values: Partial<Record<SettingKey, unknown>>, explicitLong?: unknown) => {
    const warnings: string[] = [];
    const s = prepareSettingsFrom(
      (k) => (k in values ? values[k] : SETTING_DEFAULTS[k]),
      (w) => warnings.push(w),
      (k) => (k === 'longRecords' ? explicitLong : undefined),
    );
    return { maxLength: s.maxLength, long: s.long, trainer: s.trainer, warnings };
  };
  assert.deepEqual(settings({}), { maxLength: undefined, long: 'drop', trainer: undefined, warnings: [] });
  assert.deepEqual(settings({ trainer: 'specforge' }), { maxLength: 2048, long: 'split', trainer: 'specforge', warnings: [] });
  assert.deepEqual(settings({ trainer: 'speculators', maxLength: 16384 }), { maxLength: 16384, long: 'split', trainer: 'speculators', warnings: [] });
  assert.deepEqual(settings({ trainer: 'eagle', longRecords: 'drop' }, 'drop'), { maxLength: 2048, long: 'drop', trainer: 'eagle', warnings: [] });
  const parquet: string[] = [];
  const s = prepareSettingsFrom(
    (k) => (k === 'trainer' ? 'specforge' : k === 'outputFormat' ? 'parquet' : SETTING_DEFAULTS[k]),
    (w) => parquet.push(w),
  );
  assert.equal(s.format, 'both');
  assert.deepEqual(parquet, [
    'eagle3prep.trainer specforge: SpecForge reads tokenized_data.jsonl, which eagle3prep.outputFormat "parquet" does not write; using "both".',
  ]);
  const eagle = (k: string) => (k === 'trainer' ? 'eagle' : k === 'outputFormat' ? 'parquet' : SETTING_DEFAULTS[k as keyof typeof SETTING_DEFAULTS]);
  // EAGLE reads conversations: messages unless eagle3prep.outputFormat is set; a format set is kept.
  assert.equal(prepareSettingsFrom(eagle).format, 'messages');
  assert.equal(prepareSettingsFrom(eagle, undefined, (k) => (k === 'outputFormat' ? 'parquet' : undefined)).format, 'parquet');
  const messages: string[] = [];
  assert.equal(
    prepareSettingsFrom(
      (k) => (k === 'trainer' ? 'speculators' : k === 'outputFormat' ? 'messages' : SETTING_DEFAULTS[k]),
      (w) => messages.push(w),
    ).format,
    'jsonl',
  );
  assert.deepEqual(messages, [
    'eagle3prep.trainer speculators: speculators reads tokenized_data.jsonl, not conversations (eagle3prep.outputFormat "messages"); using "jsonl".',
  ]);
  assert.deepEqual(settings({ trainer: 'axolotl' }), {
    maxLength: undefined,
    long: 'drop',
    trainer: undefined,
    warnings: ['eagle3prep.trainer "axolotl" is not one of none, specforge, speculators, eagle, modelopt; using "none".'],
  });
});

test('trainerNextSteps: SpecForge points data.prompts_path and data.max_length at the run; paths with spaces quoted', () => {
  const lines = trainerNextSteps('specforge', {
    records: '/d/my out/tokenized_data.jsonl',
    tokenCounts: '/d/my out/token_counts.json',
    outDir: '/d/my out',
    maxLength: 4096,
  });
  assert.deepEqual(lines, [
    'Next (SpecForge, data.max_length 4096: every written record fits, the trainer cuts nothing):',
    "  eagle3-prep draft-vocab --size 32000 --counts '/d/my out/token_counts.json' --out '/d/my out/draft-vocab'",
    "  specforge train -c <your run config.yaml> data.train_data_path= data.prompts_path='/d/my out/tokenized_data.jsonl' data.max_length=4096 model.vocab_mapping_path='/d/my out/draft-vocab'/vocab_mapping.pt",
    "  (or in the YAML: data.prompts_path: '/d/my out/tokenized_data.jsonl', data.max_length: 4096, model.vocab_mapping_path: '/d/my out/draft-vocab'/vocab_mapping.pt)",
  ]);
  const spec = trainerNextSteps('speculators', {
    records: '/o/tokenized_data.jsonl',
    tokenCounts: '/o/token_counts.json',
    outDir: '/o',
    maxLength: 8192,
    modelDir: '/m/Qwen3-8B',
  });
  assert.equal(spec[1], '  python scripts/prepare_data.py --model /m/Qwen3-8B --data /o/tokenized_data.jsonl --seq-length 8192 --output /o/speculators');
  // Without conversations written, the command says how to get them; with them, it points at them.
  assert.match(
    trainerNextSteps('eagle', { tokenCounts: '/o/t.json', outDir: '/o', maxLength: 2048 }).join('\n'),
    /--trainpath <conversations_sharegpt\.jsonl: prepare with --format messages> /,
  );
  // A records run (--format jsonl) for a trainer that reads conversations: the header does not speak of a note that run never gives.
  assert.equal(
    trainerNextSteps('eagle', { tokenCounts: '/o/t.json', outDir: '/o', maxLength: 2048 })[0],
    'Next (EAGLE, traineagle3 main.py max_len 2048: it reads conversations, which this run did not write — prepare with --format messages):',
  );
  // An empty ShareGPT file: no train command pointing at it, the reason instead.
  const empty = trainerNextSteps('eagle', {
    sharegpt: '/o/c.jsonl',
    sharegptEmpty: 'c.jsonl holds no conversation',
    tokenCounts: '/o/t.json',
    outDir: '/o',
    maxLength: 2048,
  });
  assert.equal(empty[1], '  NO TRAIN COMMAND: c.jsonl holds no conversation.');
  assert.doesNotMatch(empty.join('\n'), /--trainpath/);
  assert.match(
    trainerNextSteps('modelopt', { tokenCounts: '/o/t.json', outDir: '/o', maxLength: 2048 }).join('\n'),
    / data\.data_path=<conversations\.jsonl: prepare with --format messages> /,
  );
  assert.deepEqual(
    trainerNextSteps('eagle', { sharegpt: '/o/conversations_sharegpt.jsonl', tokenCounts: '/o/t.json', outDir: '/o', maxLength: 2048, modelDir: '/m' }),
    [
      'Next (EAGLE, traineagle3 main.py max_len 2048: it tokenizes the conversations itself; a conversation longer than 2048 tokens is noted conversation_over_trainer_length):',
      '  main.py (eagle/traineagle3) reads ShareGPT conversations ("id", "conversations" from human/gpt) and tokenizes and masks them itself (its own system prompt first, its mask code written for Llama 3\'s template).',
      '  keep train_config["max_len"] at 2048; deepspeed main.py --deepspeed_config ds_config.json --basepath /m --trainpath /o/conversations_sharegpt.jsonl --testpath /o/conversations_sharegpt.jsonl --savedir <dir>   (a held-out file as --testpath if you have one)',
      '  eagle3-prep draft-vocab --size 32000 --counts /o/t.json --out /o/draft-vocab, then copy /o/draft-vocab/cache.pt into the folder main.py runs in',
    ],
  );
  assert.equal(
    trainerNextSteps('modelopt', { conversations: '/o/conversations.jsonl', tokenCounts: '/o/t.json', outDir: '/o', maxLength: 2048, modelDir: '/m' })[3],
    '  ./launch_train.sh --config ../../modelopt_recipes/general/speculative_decoding/eagle3.yaml model.model_name_or_path=/m data.data_path=/o/conversations.jsonl training.training_seq_len=2048 data.draft_vocab_cache=/o/draft-vocab/d2t.pt training.output_dir=<dir>',
  );
  // A run that wrote the speculators dataset: train.py reads it as it is, no prepare_data.py.
  const direct = trainerNextSteps('speculators', {
    records: '/o/data/tokenized_data.jsonl',
    tokenCounts: '/o/token_counts.json',
    outDir: '/o',
    maxLength: 8192,
    modelDir: '/m/Qwen3-8B',
    speculatorsDataset: '/o/speculators',
  });
  assert.equal(
    direct[1],
    '  eagle3-prep draft-vocab --size 32000 --counts /o/token_counts.json --out /o/speculators   (d2t.npy, t2d.npy, token_freq.pt where train.py looks for them)',
  );
  assert.match(direct[2], / scripts\/train\.py --verifier-name-or-path \/m\/Qwen3-8B --data-path \/o\/speculators --total-seq-len 8192 /);
  assert.equal(direct[0], 'Next (speculators, train.py --total-seq-len 8192: every written record fits, the trainer cuts nothing):');
  assert.doesNotMatch(direct.join('\n'), /python scripts\/prepare_data\.py/);
});

/** Every record of a run's tokenized_data.jsonl: its loss mask. */
function masksOf(outDir: string): number[][] {
  return readFileSync(join(outDir, 'data', 'tokenized_data.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { loss_mask: number[] }).loss_mask);
}

/**
 * The trainable tokens a trainer trains of these records, read as its loader cuts them: SpecForge's
 * `_prompt_from_record` and speculators' `_append_row` keep `[:L]` and skip a record with no 1 left;
 * EAGLE's main.py skips `len > max_len`; Model-Optimizer truncates to `training_seq_len`.
 */
function trainedByLoader(masks: number[][], id: TrainerId, length: number): number {
  let n = 0;
  for (const m of masks) {
    if (id === 'eagle') {
      if (m.length > length) continue;
      n += m.filter((x) => x === 1).length;
      continue;
    }
    const head = m.slice(0, length).filter((x) => x === 1).length;
    n += head;
  }
  return n;
}

test('prepare without --trainer on the samples: trainer_length_cut and the cuts agree with a re-reading of the records', async () => {
  const out = join(tempDir(), 'out');
  const r = await prepare({ inputs: expandInputs([SAMPLES]), outDir: out, workers: 1 });
  assert.equal(r.ok, true, r.failures.join('; '));
  const masks = masksOf(out);
  const trainable = masks.reduce((a, m) => a + m.filter((x) => x === 1).length, 0);
  assert.equal(r.totals.trainableTokens, trainable);
  const cuts = r.totals.trainerCuts!;
  for (const id of TRAINER_IDS) {
    const L = TRAINERS[id].defaultLength;
    assert.equal(cuts[id].length, L);
    assert.equal(cuts[id].recordsOver, masks.filter((m) => m.length > L).length, id);
    assert.equal(cuts[id].trainableLost, trainable - trainedByLoader(masks, id, L), id);
  }
  assert.equal(cuts.specforge.recordsUntrained, masks.filter((m) => m.length > 2048 && !m.slice(0, 2048).includes(1)).length);
  // The samples hold long agent trajectories: the 2048 trainers lose tokens, speculators' 8192 does not.
  assert.ok(cuts.specforge.trainableLost > 0);
  assert.equal(cuts.speculators.trainableLost, 0);
  const lossy = masks.filter((m) =>
    TRAINER_IDS.some((id) => m.length > TRAINERS[id].defaultLength && (id === 'eagle' || m.slice(TRAINERS[id].defaultLength).includes(1))),
  );
  const noted = r.files.reduce((a, f) => a + (f.notes.trainer_length_cut ?? 0), 0);
  assert.equal(noted, lossy.length);
  assert.equal(r.status, 'warnings');
  assert.ok(r.warnings!.some((w) => w.code === 'trainer_length_cut' && w.count === lossy.length));
  // report.json round trip and report.md's section.
  const back = readReport(join(out, 'report.json')).report;
  assert.deepEqual(back.totals.trainerCuts, cuts);
  assert.equal(back.trainer, null);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(
    md,
    new RegExp(`\\| SpecForge \\| \`data.max_length\` \\| 2048 \\| [^|]+ \\| ${cuts.specforge.recordsOver} \\| ${cuts.specforge.recordsUntrained} \\|`),
  );
});

for (const id of ['specforge', 'speculators'] as const)
  test(`prepare --trainer ${id} on the samples: no trainable token lost to ${TRAINERS[id].name}'s length, no note, the next command printed`, async () => {
    const out = tempDir();
    const run = await runCli(['prepare', 'samples/', '--out', out, '--trainer', id], { cwd: ROOT });
    assert.equal(run.status, 0, run.stderr);
    const r = readReport(join(out, 'report.json')).report;
    const L = TRAINERS[id].defaultLength;
    assert.equal(r.trainer, id);
    assert.equal(r.maxLength, L);
    assert.equal(r.long, 'split');
    const masks = masksOf(out);
    const trainable = masks.reduce((a, m) => a + m.filter((x) => x === 1).length, 0);
    assert.ok(trainable > 0);
    assert.equal(trainedByLoader(masks, id, L), trainable, 'the loader trains every trainable token');
    assert.ok(
      masks.every((m) => m.length <= L),
      'every record fits',
    );
    assert.equal(r.totals.trainerCuts![id].trainableLost, 0);
    assert.ok(r.files.every((f) => !f.notes.trainer_length_cut));
    // speculators: train.py reads the dataset folder the run wrote, and cuts at its --total-seq-len.
    const setting = id === 'speculators' ? 'train.py --total-seq-len' : TRAINERS[id].lengthSetting;
    assert.match(run.stdout, new RegExp(`Next \\(${TRAINERS[id].name}, ${setting.replace(/[.]/g, '\\.')} ${L}: every written record fits`));
    assert.match(
      run.stdout,
      id === 'specforge' ? /data\.prompts_path=\S+\/data\/tokenized_data\.jsonl data\.max_length=2048/ : /--data-path \S+\/speculators --total-seq-len 8192/,
    );
    assert.doesNotMatch(run.stdout, /Trainer lengths/);
  });

test('prepare --trainer: Parquet only is refused for a trainer that reads JSONL records', async () => {
  const run = await runCli(['prepare', 'samples/', '--out', tempDir(), '--trainer', 'specforge', '--format', 'parquet'], { cwd: ROOT });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /SpecForge reads JSONL records, not Parquet: use --format jsonl or both with --trainer specforge/);
});

test('trainer cuts of shards add up to those of one run over all rows (merge-reports)', async () => {
  const dir = tempDir();
  const inputs = expandInputs([join(SAMPLES, 'agentic-trajectories.jsonl'), join(SAMPLES, 'chat-sharegpt-human-gpt.jsonl')]);
  const whole = await prepare({ inputs, outDir: join(dir, 'whole'), workers: 1 });
  const shards = [];
  for (let i = 0; i < 2; i++) shards.push(await prepare({ inputs, outDir: join(dir, `s${i}`), workers: 1, shard: { index: i, count: 2 } }));
  // The shards' cuts add up to the whole run's; the merge carries them per file and in the totals.
  assert.equal(
    shards.reduce((a, s) => a + s.totals.trainerCuts!.specforge.trainableLost, 0),
    whole.totals.trainerCuts!.specforge.trainableLost,
  );
  const merged = mergeShardResults(shards, join(dir, 'merged'));
  assert.deepEqual(merged.totals.trainerCuts, whole.totals.trainerCuts);
  assert.deepEqual(
    merged.files.map((f) => f.trainerCuts),
    whole.files.map((f) => f.trainerCuts),
  );
  assert.equal(merged.files[0].notes.trainer_length_cut, whole.files[0].notes.trainer_length_cut);
  assert.ok(whole.totals.trainerCuts!.eagle.trainableLost > 0);
});

test('nextStepsOfRun: only for a run made for a trainer that wrote its records file', () => {
  const run = {
    trainer: 'specforge' as TrainerId,
    maxLength: 2048,
    outDir: '/o',
    tokenCounts: '/o/token_counts.json',
    tokenizer: { dir: '/m', name: 'm', hash: 'h', embeddedDefault: false },
    outputs: { tokenizedData: '/o/tokenized_data.jsonl', promptsToGenerate: '/o/p.jsonl', reportJson: '/o/report.json', reportMd: '/o/report.md' },
    files: [],
  };
  assert.match(
    nextStepsOfRun({ ...run, outputs: { ...run.outputs, written: ['/o/tokenized_data.jsonl', '/o/report.json'] } })[2],
    /data\.prompts_path=\/o\/tokenized_data\.jsonl data\.max_length=2048/,
  );
  // merge-reports without --data writes only the reports: the records are in the shards' folders.
  assert.deepEqual(nextStepsOfRun({ ...run, outputs: { ...run.outputs, written: ['/o/report.json', '/o/report.md'] } }), []);
  assert.deepEqual(nextStepsOfRun({ ...run, trainer: null }), []);
});
