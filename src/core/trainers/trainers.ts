/**
 * The four EAGLE-3 trainers the records are made for, and what each one's length limit does to
 * them. Every trainer limits a training sequence to a number of tokens and applies that limit
 * when it loads the data, whatever `prepare` wrote; its default is what a user gets who sets
 * nothing. Read from each trainer's own loading code (their 2026 snapshots):
 *
 * - SpecForge (sgl-project/SpecForge, `specforge/data/prompt_builder.py` `_prompt_from_record`,
 *   `data.prompts_path`): `input_ids` and `loss_mask` cut to their first `data.max_length` tokens
 *   (`specforge/config/schema.py` `DataConfig.max_length`, default 2048); a record left with fewer
 *   than one trainable token (the EAGLE-3 strategy's `minimum_loss_tokens`) is skipped, without a
 *   message.
 * - speculators (vllm-project/speculators, `scripts/prepare_data.py` `--seq-length`, default 8192;
 *   `src/speculators/data_generation/preprocessing.py` `_append_row`): the same cut to the first
 *   tokens; a record with no trainable token left is dropped; both logged as warnings. A dataset
 *   folder given to `scripts/train.py --data-path` as it is (what `prepare --trainer speculators`
 *   writes, run/outputs/speculatorsOutput.ts) is cut by the collator to `--total-seq-len`, default 8192
 *   too (`src/speculators/train/data.py`).
 * - EAGLE (SafeAILab/EAGLE `eagle/traineagle3/main.py`, `train_config["max_len"]` 2048): a
 *   conversation whose tokens number more than `max_len` is left out whole.
 * - Model-Optimizer (NVIDIA/Model-Optimizer `examples/speculative_decoding`, `training.training_seq_len`,
 *   default 2048, `modelopt/torch/speculative/plugins/hf_training_args.py`; the collator
 *   `LanguageDataCollator` tokenizes with `truncation=True, max_length=training_seq_len`): cut to
 *   the first tokens; a sample with nothing left to train is still kept (it trains nothing).
 *
 * EAGLE and Model-Optimizer read conversations and tokenize them with the same chat template, so
 * a record's length stands for the length their loader sees (EAGLE's main.py also puts its own
 * system prompt first: its sequences are, if anything, longer). Pure; at run time it imports only numberText.ts.
 */
import { groupedInt } from '../numberText';

/** The trainers `prepare --trainer` knows, in the order shown. */
export const TRAINER_IDS = ['specforge', 'speculators', 'eagle', 'modelopt'] as const;

/** One of {@link TRAINER_IDS}. */
export type TrainerId = (typeof TRAINER_IDS)[number];

/**
 * What a trainer does with a record longer than its length `L`:
 * - `truncate-skip`: keeps the first `L` tokens; a record left with no trainable token is left out;
 * - `truncate-keep`: keeps the first `L` tokens; a record left with no trainable token stays (it trains nothing);
 * - `drop`: leaves the whole record out.
 */
export type LengthRule = 'truncate-skip' | 'truncate-keep' | 'drop';

/** One trainer: its name, its length setting and default, and what the length does to a longer record. */
export interface TrainerSpec {
  id: TrainerId;
  /** As the user knows it (`SpecForge`). */
  name: string;
  /** Tokens a training sequence may hold when the user sets nothing. */
  defaultLength: number;
  /** Where the length is set, as the trainer names it (`data.max_length`). */
  lengthSetting: string;
  rule: LengthRule;
  /** Whether the trainer reads `tokenized_data.jsonl` itself (else it reads conversations and tokenizes them). */
  readsRecords: boolean;
  /** Whether it says so when the length cuts a record (speculators logs a warning; the others say nothing). */
  warnsOnCut: boolean;
}

/** The trainers by id. */
export const TRAINERS: Readonly<Record<TrainerId, TrainerSpec>> = Object.freeze({
  specforge: {
    id: 'specforge',
    name: 'SpecForge',
    defaultLength: 2048,
    lengthSetting: 'data.max_length',
    rule: 'truncate-skip',
    readsRecords: true,
    warnsOnCut: false,
  },
  speculators: {
    id: 'speculators',
    name: 'speculators',
    defaultLength: 8192,
    lengthSetting: 'prepare_data.py --seq-length',
    rule: 'truncate-skip',
    readsRecords: true,
    warnsOnCut: true,
  },
  eagle: {
    id: 'eagle',
    name: 'EAGLE',
    defaultLength: 2048,
    lengthSetting: 'traineagle3 main.py max_len',
    rule: 'drop',
    readsRecords: false,
    warnsOnCut: false,
  },
  modelopt: {
    id: 'modelopt',
    name: 'Model-Optimizer',
    defaultLength: 2048,
    lengthSetting: 'training.training_seq_len',
    rule: 'truncate-keep',
    readsRecords: false,
    warnsOnCut: false,
  },
});

/** Whether `s` names a trainer. */
export function isTrainerId(s: unknown): s is TrainerId {
  return typeof s === 'string' && (TRAINER_IDS as readonly string[]).includes(s);
}

/** What one trainer's length does to a set of written records. */
export interface TrainerCut {
  /** The length applied (tokens). */
  length: number;
  /** Records longer than `length`: cut to their first `length` tokens, or left out (`drop`). */
  recordsOver: number;
  /** Records the trainer trains nothing of: left out (`drop`, or nothing trainable left for `truncate-skip`) or kept with nothing trainable (`truncate-keep`). */
  recordsUntrained: number;
  /** Trainable tokens (`loss_mask` 1) of the records that the trainer does not train. */
  trainableLost: number;
}

/** One {@link TrainerCut} per trainer, at each one's default length. */
export type TrainerCuts = Record<TrainerId, TrainerCut>;

/** Every trainer at its default length with nothing cut. */
export function emptyTrainerCuts(): TrainerCuts {
  const out = {} as TrainerCuts;
  for (const id of TRAINER_IDS) out[id] = { length: TRAINERS[id].defaultLength, recordsOver: 0, recordsUntrained: 0, trainableLost: 0 };
  return out;
}

/** The shortest default length of the trainers that read conversations (EAGLE, Model-Optimizer): a `--format messages` conversation longer than this, without `--max-length`, is cut by one. */
export const CONVERSATION_TRAINER_LENGTH = Math.min(...TRAINER_IDS.filter((id) => !TRAINERS[id].readsRecords).map((id) => TRAINERS[id].defaultLength));

/** The shortest default length of the trainers: a record no longer than this is cut by none. */
export const SHORTEST_TRAINER_LENGTH = Math.min(...TRAINER_IDS.map((id) => TRAINERS[id].defaultLength));

/**
 * What `rule` at `length` does to one record, from its `loss_mask` (1 = trainable; its length is
 * the record's `seq_len`): `over` when the record is longer than `length`, `lost` its trainable
 * tokens the trainer does not train (at or past position `length`; all of them when it drops the
 * record), `untrained` when the trainer trains none of it.
 */
export function recordCut(mask: ArrayLike<number>, rule: LengthRule, length: number): { over: boolean; lost: number; untrained: boolean } {
  if (mask.length <= length) return { over: false, lost: 0, untrained: false };
  let head = 0;
  let tail = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 1) continue;
    if (i < length) head++;
    else tail++;
  }
  if (rule === 'drop') return { over: true, lost: head + tail, untrained: true };
  return { over: true, lost: tail, untrained: head === 0 };
}

/**
 * Adds one written record to `cuts` (each trainer at its default length).
 * @returns whether some trainer does not train some of its trainable tokens
 */
export function addRecordCut(cuts: TrainerCuts, mask: ArrayLike<number>): boolean {
  if (mask.length <= SHORTEST_TRAINER_LENGTH) return false;
  // The trainable tokens in all and before each trainer's length, in one pass over the mask (recordCut's counts).
  let lengths = TRAINER_IDS.map((id) => cuts[id].length);
  const before = new Map<number, number>();
  let total = 0;
  lengths = [...new Set(lengths)].sort((a, b) => a - b);
  let next = 0;
  for (let i = 0; i < mask.length; i++) {
    while (next < lengths.length && lengths[next] <= i) before.set(lengths[next++], total);
    if (mask[i] === 1) total++;
  }
  while (next < lengths.length) before.set(lengths[next++], total);
  let lostAny = false;
  for (const id of TRAINER_IDS) {
    const c = cuts[id];
    if (mask.length <= c.length) continue;
    const head = before.get(c.length)!;
    const lost = TRAINERS[id].rule === 'drop' ? total : total - head;
    c.recordsOver++;
    if (TRAINERS[id].rule === 'drop' || head === 0) c.recordsUntrained++;
    c.trainableLost += lost;
    if (lost > 0) lostAny = true;
  }
  return lostAny;
}

/** Adds `b` into `a` (the same trainers at the same lengths: shards, files, rows). */
export function addTrainerCuts(a: TrainerCuts, b: Partial<TrainerCuts>): TrainerCuts {
  for (const id of TRAINER_IDS) {
    const x = b[id];
    if (!x) continue;
    const c = (a[id] ??= { length: x.length, recordsOver: 0, recordsUntrained: 0, trainableLost: 0 });
    c.recordsOver += x.recordsOver;
    c.recordsUntrained += x.recordsUntrained;
    c.trainableLost += x.trainableLost;
  }
  return a;
}

/** Whether some trainer's length loses trainable tokens. */
export function anyTrainableLost(cuts: Partial<TrainerCuts> | undefined): boolean {
  return TRAINER_IDS.some((id) => (cuts?.[id]?.trainableLost ?? 0) > 0);
}

function num(n: number): string {
  return groupedInt(n);
}

/**
 * One line per trainer that loses trainable tokens at its default length, e.g. `SpecForge
 * (data.max_length 2048): 21 records longer; 1,162 of 3,699 trainable tokens (31.4 %) not trained;
 * 20 records skipped without a word`. Empty when none loses any.
 * @param trainable the trainable tokens of the records (the run's or the file's)
 */
export function trainerCutLines(cuts: Partial<TrainerCuts> | undefined, trainable: number): string[] {
  const out: string[] = [];
  for (const id of TRAINER_IDS) {
    const c = cuts?.[id];
    if (!c || c.trainableLost === 0) continue;
    const t = TRAINERS[id];
    const share = trainable > 0 ? ` (${((100 * c.trainableLost) / trainable).toFixed(1)} %)` : '';
    const longer = `${num(c.recordsOver)} record${c.recordsOver === 1 ? '' : 's'} longer`;
    const what =
      t.rule === 'drop'
        ? `${longer}, left out whole`
        : `${longer}, cut to ${c.recordsOver === 1 ? 'its' : 'their'} first ${c.length} tokens` +
          (c.recordsUntrained
            ? t.rule === 'truncate-skip'
              ? `, ${num(c.recordsUntrained)} of them left with nothing to train and skipped${t.warnsOnCut ? '' : ' without a word'}`
              : `, ${num(c.recordsUntrained)} of them kept with nothing to train`
            : '');
    out.push(`${t.name} (${t.lengthSetting} ${c.length}): ${what}; ${num(c.trainableLost)} of ${num(trainable)} trainable tokens${share} not trained`);
  }
  return out;
}

/**
 * The length settings of a run made for a trainer (`--trainer`, `eagle3prep.trainer`): `maxLength`
 * its default length unless one is given, and `long: 'split'` unless a long policy (or the legacy
 * `truncate`) is given, so that no record is longer than the trainer takes and every turn is
 * trained (`long: 'drop'` with `mask` `non-system`, whose records are never split: the run then says
 * what it does). For a trainer that reads conversations, not records (EAGLE, Model-Optimizer), `format`
 * `messages` unless a format is given: the run writes `conversations.jsonl` (and for EAGLE
 * `conversations_sharegpt.jsonl`), which the next command points at, with `token_counts.json` for
 * its vocabulary file. Without a trainer, `o` as it is. Returns a copy.
 */
export function withTrainerDefaults<
  T extends { trainer?: TrainerId; maxLength?: number; long?: 'drop' | 'truncate' | 'split'; truncate?: boolean; format?: string; mask?: string },
>(o: T): T {
  if (!o.trainer) return o;
  return {
    ...o,
    maxLength: o.maxLength ?? TRAINERS[o.trainer].defaultLength,
    long: o.long ?? (o.truncate ? 'truncate' : o.mask === 'non-system' ? 'drop' : 'split'),
    ...(o.format === undefined && !TRAINERS[o.trainer].readsRecords ? { format: 'messages' } : {}),
  };
}
