/**
 * The commands that follow `prepare --trainer X`: the flags, dotlist overrides or YAML fields
 * that point each trainer at what the run wrote, at the length the records were made for.
 * Setting names as each trainer's own configuration spells them (core/trainers/trainers.ts
 * names the sources); docs/training.md explains the same commands. Pure.
 */
import type { PrepareResult } from '../contract';
import { sharegptEmptyReason } from './conversationsNote';
import { TRAINERS, type TrainerId } from '../../trainers/trainers';

/** What the commands point at. */
export interface NextStepInputs {
  /** `tokenized_data.jsonl` (absolute), or undefined when the run wrote Parquet only. */
  records?: string;
  /** `conversations.jsonl` (absolute) of a `--format messages` run, for Model-Optimizer; undefined when not written. */
  conversations?: string;
  /** `conversations_sharegpt.jsonl` (absolute) of a `--format messages --trainer eagle` run; undefined when not written. */
  sharegpt?: string;
  /** Why `sharegpt` holds no conversation (run/reports/conversationsNote.ts sharegptEmptyReason): said instead of a train command pointing at it. */
  sharegptEmpty?: string;
  /** `token_counts.json` (absolute), for `eagle3-prep draft-vocab`. */
  tokenCounts: string;
  /** The output folder (absolute). */
  outDir: string;
  /** The length the records were made for (`--max-length`). */
  maxLength: number;
  /** The tokenizer's model folder, or undefined for the embedded Qwen3 tokenizer (the user names the model then). */
  modelDir?: string;
  /** The speculators dataset folder the run wrote (`<outDir>/speculators`, run/outputs/speculatorsOutput.ts), if it wrote one. */
  speculatorsDataset?: string;
}

/** A path as one shell word (single-quoted when it holds anything but safe characters). */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The lines to print after a run for `trainer` (no trailing newline): the command that reads the
 * records (or, for the trainers that read conversations, what they read instead), the length
 * setting, and the `draft-vocab` call that writes the trainer's vocabulary file.
 */
export function trainerNextSteps(trainer: TrainerId, o: NextStepInputs): string[] {
  const t = TRAINERS[trainer];
  const n = o.maxLength;
  const records = o.records ? shellWord(o.records) : '<tokenized_data.jsonl>';
  // Without --format messages nothing wrote the conversations these trainers read: say how to get them.
  const sharegpt = o.sharegpt ? shellWord(o.sharegpt) : '<conversations_sharegpt.jsonl: prepare with --format messages>';
  const conversations = o.conversations ? shellWord(o.conversations) : '<conversations.jsonl: prepare with --format messages>';
  const model = o.modelDir ? shellWord(o.modelDir) : '<target model>';
  const vocab = shellWord(`${o.outDir}/draft-vocab`);
  const draftVocab = (size: number, out = vocab) => `eagle3-prep draft-vocab --size ${size} --counts ${shellWord(o.tokenCounts)} --out ${out}`;
  const lines = [
    t.readsRecords
      ? `Next (${t.name}, ${t.lengthSetting} ${n}: every written record fits, the trainer cuts nothing):`
      : o.conversations || o.sharegpt
        ? `Next (${t.name}, ${t.lengthSetting} ${n}: it tokenizes the conversations itself; a conversation longer than ${n} tokens is noted conversation_over_trainer_length):`
        : `Next (${t.name}, ${t.lengthSetting} ${n}: it reads conversations, which this run did not write — prepare with --format messages):`,
  ];
  switch (trainer) {
    case 'specforge':
      lines.push(
        `  ${draftVocab(32000)}`,
        `  specforge train -c <your run config.yaml> data.train_data_path= data.prompts_path=${records} data.max_length=${n} model.vocab_mapping_path=${vocab}/vocab_mapping.pt`,
        `  (or in the YAML: data.prompts_path: ${records}, data.max_length: ${n}, model.vocab_mapping_path: ${vocab}/vocab_mapping.pt)`,
      );
      break;
    case 'speculators': {
      const data = shellWord(o.speculatorsDataset ?? `${o.outDir}/speculators`);
      if (o.speculatorsDataset) {
        // The run wrote the save_to_disk folder train.py reads: no prepare_data.py (scripts/train.py, DataArgs in
        // src/speculators/train/config/schema.py); its collator (src/speculators/train/data.py) cuts at --total-seq-len.
        lines[0] = `Next (${t.name}, train.py --total-seq-len ${n}: every written record fits, the trainer cuts nothing):`;
        lines.push(
          `  ${draftVocab(32000, data)}   (d2t.npy, t2d.npy, token_freq.pt where train.py looks for them)`,
          `  torchrun --standalone --nproc_per_node <gpus> scripts/train.py --verifier-name-or-path ${model} --data-path ${data} --total-seq-len ${n} --draft-vocab-size 32000 --vllm-endpoint <the target model's vLLM server>/v1 --save-path <dir>`,
          `  (${data} is the dataset prepare_data.py would write: input_ids, loss_mask, seq_len; the hidden states are generated from the vLLM server as train.py runs)`,
        );
        break;
      }
      lines.push(
        `  python scripts/prepare_data.py --model ${model} --data ${records} --seq-length ${n} --output ${data}`,
        `  ${draftVocab(32000, data)}   (d2t.npy, t2d.npy, token_freq.pt where train.py looks for them)`,
        `  then train.py --data-path ${data} --total-seq-len ${n} once the hidden states are generated`,
      );
      break;
    }
    case 'eagle':
      if (o.sharegptEmpty) {
        lines.push(`  NO TRAIN COMMAND: ${o.sharegptEmpty}.`);
        break;
      }
      lines.push(
        '  main.py (eagle/traineagle3) reads ShareGPT conversations ("id", "conversations" from human/gpt) and tokenizes and masks them itself (its own system prompt first, its mask code written for Llama 3\'s template).',
        `  keep train_config["max_len"] at ${n}; deepspeed main.py --deepspeed_config ds_config.json --basepath ${model} --trainpath ${sharegpt} --testpath ${sharegpt} --savedir <dir>   (a held-out file as --testpath if you have one)`,
        `  ${draftVocab(32000)}, then copy ${vocab}/cache.pt into the folder main.py runs in`,
      );
      break;
    case 'modelopt':
      lines.push(
        '  examples/speculative_decoding reads conversations (OpenAI "messages") and tokenizes and masks them itself: every token is trained unless training.answer_only_loss=true, which needs {% generation %} tags in the chat template (data.chat_template).',
        `  ${draftVocab(32000)}`,
        `  ./launch_train.sh --config ../../modelopt_recipes/general/speculative_decoding/eagle3.yaml model.model_name_or_path=${model} data.data_path=${conversations} training.training_seq_len=${n} data.draft_vocab_cache=${vocab}/d2t.pt training.output_dir=<dir>`,
      );
      break;
  }
  return lines;
}

/**
 * The next steps of a run made for a trainer (`--trainer`, with its max length); none for another
 * run, nor for one that wrote no records file into its folder (`merge-reports` without `--data`:
 * the records stay in the shards' folders).
 */
export function nextStepsOfRun(r: Pick<PrepareResult, 'trainer' | 'maxLength' | 'outputs' | 'tokenCounts' | 'outDir' | 'tokenizer' | 'files'>): string[] {
  if (!r.trainer || !r.maxLength) return [];
  const w = r.outputs.written;
  const wrote = (p: string | undefined) => p !== undefined && (!w || w.includes(p));
  if (w && ![r.outputs.tokenizedData, r.outputs.tokenizedDataParquet, r.outputs.conversations].some((p) => p !== undefined && w.includes(p))) return [];
  const format = r.outputs.format ?? 'jsonl';
  return trainerNextSteps(r.trainer, {
    records: format === 'parquet' || format === 'messages' ? undefined : r.outputs.tokenizedData,
    conversations: wrote(r.outputs.conversations) ? r.outputs.conversations : undefined,
    sharegpt: wrote(r.outputs.conversationsSharegpt) ? r.outputs.conversationsSharegpt : undefined,
    sharegptEmpty: wrote(r.outputs.conversationsSharegpt) ? sharegptEmptyReason(r) : undefined,
    tokenCounts: r.tokenCounts ?? `${r.outDir}/token_counts.json`,
    outDir: r.outDir,
    maxLength: r.maxLength,
    modelDir: r.tokenizer.embeddedDefault ? undefined : r.tokenizer.dir,
    speculatorsDataset:
      r.outputs.speculatorsDataset && (!w || w.some((p) => p.startsWith(r.outputs.speculatorsDataset!))) ? r.outputs.speculatorsDataset : undefined,
  });
}
