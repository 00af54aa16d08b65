/**
 * `eagle3-prep prepare`: its options (one table: flags, help, default, where
 * the value goes) and the run: every input group through `prepare()`, progress
 * on stderr, the summary on stdout, the exit code.
 */
import { DRY_RUN_SAMPLE_ROWS } from '../core/run/prepare/dryRun';
import { expandInputs } from '../core/run/inputs/inputs';
import { type PrepareOptions } from '../core/run/contract';
import { OUTPUT_FORMATS, type OutputFormat } from '../core/records/rowResult';
import {
  longSplitConflict,
  RUN_SETTING_KEYS,
  runSettingSpec,
  shown,
  type RunSettingOptions,
  type RunSettings,
  type SettingSpec,
} from '../core/run/runSettings';
import { ANSWER_MODES, type AnswerMode } from '../core/types';
import { TOKENIZER_BACKEND_CHOICES, type TokenizerBackendChoice } from '../core/tokenizers/types';
import {
  addOptions,
  applyOptions,
  Command,
  fraction,
  jsonObject,
  numberIn,
  positiveInt,
  setUsageHint,
  shardSpec,
  usageError,
  wholeNumberIn,
  workerCount,
  type OptionSpec,
} from './command';
import { runPrepare, type PrepareCliFlags } from './prepareRun';
import { TRAINER_IDS, TRAINERS, withTrainerDefaults, type TrainerId } from '../core/trainers/trainers';

/** Help of `--answers` (prepare and inspect). */
export const ANSWERS_HELP =
  'Several answers to one prompt (output_1/output_2, a generations / responses list): best trains the one the row prefers (a preference or chosen field) or scores highest (per-answer scores or rewards), ' +
  'and makes one record per answer when the row has neither; all makes one record of each answer with the shared prompt; first trains the first. ' +
  'Wins over eagle3prep.jsonc "reading": {"answers"} (docs/formats.md "Several answers to one prompt").';
/** Default of `--answers`, as the help shows it. */
export const ANSWERS_DEFAULT = 'best when the answers have scores or a preference, all otherwise';

const MODEL = 'Target model:';
const RECORDS = 'Records:';
const RUN = 'Run:';
const OUTPUT = 'Output and terminal:';

/**
 * The options of the run settings of one `--help` section, from their table (core/run/runSettings.ts
 * `RUN_SETTINGS`): flag, help, choices, default and parser. A choice that always applies gets its
 * default as the value (commander shows it with the choices); the others are left unset when not
 * given (`--long` needs `--max-length`), their default shown as text.
 */
function runSettingOptions(section: SettingSpec<keyof RunSettings>['section'], group: string): OptionSpec<PrepareOptions>[] {
  return RUN_SETTING_KEYS.filter((k) => runSettingSpec(k).section === section).map((key) => {
    const spec = runSettingSpec(key);
    const choices = spec.choices as readonly string[] | undefined;
    return {
      flags: spec.flag,
      group,
      help: spec.help,
      ...(choices ? { choices } : {}),
      ...(spec.kind === 'choice' && !spec.applies ? { default: String(spec.default) } : { defaultText: spec.defaultText ?? shown(spec.default) }),
      ...(spec.kind === 'integer' ? { parse: wholeNumberIn(spec.minimum, spec.maximum) } : {}),
      ...(spec.kind === 'number' ? { parse: numberIn(spec.minimum, spec.maximum) } : {}),
      ...(spec.kind === 'object' ? { parse: jsonObject } : {}),
      apply: (o: PrepareOptions, v: never) => Object.assign(o, { [key]: v } satisfies RunSettingOptions),
    };
  });
}

/**
 * The options of `prepare`. Options that feed the pipeline set a field of
 * {@link PrepareOptions}; the others (terminal, run policy) are read by the CLI.
 */
export const PREPARE_OPTIONS: readonly OptionSpec<PrepareOptions>[] = [
  {
    flags: '--tokenizer <dir>',
    group: MODEL,
    help: "Local Hugging Face model folder of the target model: tokenizer.json (or tiktoken.model) and tokenizer_config.json with its chat template (chat_template.jinja when the model ships one), and generation_config.json, whose eos_token_id names the model's stop tokens (else eos_token). The report names it and hashes its files.",
    defaultText: 'the embedded Qwen3 tokenizer and template',
    apply: (o, v: string) => (o.tokenizerDir = v),
  },
  {
    flags: '--tokenizer-backend <backend>',
    group: MODEL,
    help:
      'The tokenizer implementation: auto takes the faster one as measured, the JavaScript tokenizer where its word cache fits (byte-level BPE) and the Rust tokenizers binding (the same code as Python tokenizers) for the others where it loads, saying so once in the log and the report when it does not; rust fails when the binding does not load; js never loads it. ' +
      'The records are the same with either (docs/scale.md "Tokenizer backends"). Default: the EAGLE3_TOKENIZER_BACKEND environment variable, else auto.',
    choices: TOKENIZER_BACKEND_CHOICES,
    defaultText: 'auto',
    apply: (o, v: TokenizerBackendChoice) => (o.tokenizerBackend = v),
  },
  ...runSettingOptions('model', MODEL),
  ...runSettingOptions('records', RECORDS),
  {
    flags: '--truncate',
    group: RECORDS,
    help: 'The same as --long truncate: keep the first --max-length tokens of a longer record (a record left with nothing to train is still dropped). Needs --max-length.',
    apply: (o, v: boolean) => (o.truncate = v),
  },
  {
    flags: '--trainer <trainer>',
    group: RECORDS,
    help:
      `The trainer the records are for: sets --max-length to its default length (${TRAINER_IDS.map((id) => `${id} ${TRAINERS[id].defaultLength}`).join(', ')}; a --max-length given wins) with --long split, ` +
      "so that the trainer cuts nothing, and prints the next command (the flags or YAML fields that point it at the files; docs/training.md); speculators also gets speculators/, the dataset its train.py --data-path reads as it is. Without it, the summary and the report say what each trainer's default length would cut (trainer_length_cut).",
    choices: TRAINER_IDS,
    defaultText: 'none',
    apply: (o, v: TrainerId) => (o.trainer = v),
  },
  {
    flags: '--mapping <file>',
    group: RECORDS,
    help: 'A JSONC field-mapping file for shapes the detector does not know (docs/formats.md "Project configuration").',
    defaultText: 'the nearest eagle3prep.jsonc beside each input or in a parent folder',
    apply: (o, v: string) => (o.mapping = v),
  },
  {
    flags: '--answers <mode>',
    group: RECORDS,
    help: ANSWERS_HELP,
    choices: ANSWER_MODES,
    defaultText: ANSWERS_DEFAULT,
    apply: (o, v: AnswerMode) => (o.answers = v),
  },
  {
    flags: '--format <format>',
    group: RECORDS,
    help:
      'The records file, in the output folder\'s data/: tokenized_data.jsonl; tokenized_data.parquet (input_ids list<int32>, loss_mask list<int8>, source a struct: loads with datasets.load_dataset("parquet", data_files=…), pandas, pyarrow; docs/outputs.md "Parquet"); or both (the same records in the same order). ' +
      'messages: no records; the written conversations, normalized, as conversations.jsonl (OpenAI messages with tool_calls, reasoning_content, tools) for the trainers that tokenize and mask themselves (their masking applies, not --mask), ' +
      'and with --trainer eagle conversations_sharegpt.jsonl (ShareGPT human/gpt; conversations EAGLE cannot read as they are are noted eagle_*, not written there; docs/outputs.md "Conversations"); ' +
      '--max-length is then checked on the whole conversation (conversation_over_trainer_length) and --long does not apply. ' +
      'prompts_to_generate.jsonl stays JSONL.',
    choices: OUTPUT_FORMATS,
    defaultText: `${OUTPUT_FORMATS[0]}; messages with --trainer eagle or modelopt`,
    apply: (o, v: OutputFormat) => (o.format = v),
  },
  {
    flags: '--out <dir>',
    group: RUN,
    help: 'Output folder shared by all inputs (created if missing).',
    defaultText: '<input-name>.eagle3/ beside each input',
  },
  {
    flags: '--workers <n|auto>',
    group: RUN,
    help: 'Threads that render and tokenize. The outputs are the same for any number. auto: the free cores (the available cores less the 1-minute load average, at least 1).',
    defaultText: 'auto; 1 when the inputs add up to less than 4 MB',
    parse: workerCount,
    apply: (o, v: number | 'auto') => {
      if (v !== 'auto') o.workers = v;
    },
  },
  {
    flags: '--shard <i/n>',
    group: RUN,
    help: 'Process only shard I (0-based) of N: every N-th row across the inputs, for a cluster job array. Needs --out; combine the shards with merge-reports.',
    defaultText: 'every row',
    parse: shardSpec,
    apply: (o, v: { index: number; count: number }) => (o.shard = v),
  },
  {
    flags: '--allow-empty',
    group: RUN,
    help: 'Succeed even when an input yields no record and no prompt (by default that fails the run).',
    apply: (o, v: boolean) => (o.allowEmpty = v),
  },
  {
    flags: '--strict',
    group: RUN,
    help: 'Fail the run (nothing written) when any row errored or any data-changing warning fired (dropped rows, truncated records, text a template does not render, …; see the summary).',
    apply: (o, v: boolean) => (o.strict = v),
  },
  {
    flags: '--max-error-rate <r>',
    group: RUN,
    help: "Fail the run (nothing written) when a file's errored rows exceed this share of its rows: a fraction (0.01) or a percentage (1%); 0 fails on any errored row.",
    defaultText: 'no limit: errored rows make the file DEGRADED, the run still succeeds',
    parse: fraction,
    apply: (o, v: number) => (o.maxErrorRate = v),
  },
  {
    flags: '--skip-failed-files',
    group: RUN,
    help: 'When a file fails (unreadable, nothing usable, over --max-error-rate, --strict), write the other files and list the failed ones as skipped, instead of failing the run.',
    apply: (o, v: boolean) => (o.skipFailedFiles = v),
  },
  {
    flags: '--dedup',
    group: RECORDS,
    help: 'Write conversations that are identical after normalization once, across all files of the run; the others are dropped with reason duplicate (line numbers in the report). A row holding several conversations is dropped only when all of them were written before; otherwise it is written whole and its repeats are counted (duplicate_conversation_kept). Within one shard only with --shard.',
    apply: (o, v: boolean) => (o.dedup = v),
  },
  {
    flags: '--dry-run [rows]',
    group: RUN,
    help: 'Process only the first rows of each file and write nothing: detection, row accounting, warnings, and record and token estimates for the whole files.',
    defaultText: `off; ${DRY_RUN_SAMPLE_ROWS} rows when given without a number`,
    parse: positiveInt,
    apply: (o, v: number | boolean) => (o.dryRun = { sampleRows: v === true ? DRY_RUN_SAMPLE_ROWS : (v as number) }),
  },
  {
    flags: '--json',
    group: OUTPUT,
    help: 'Print the report (report.json schema, snake_case) on stdout instead of the summary; no progress line.',
  },
  {
    flags: '--quiet',
    group: OUTPUT,
    help: 'No progress line and no step log on stderr; the summary is still printed.',
  },
  {
    flags: '--verbose',
    group: OUTPUT,
    help: 'Log each step on stderr: tokenizer, chat template check, each file with its detected format and evidence.',
  },
];

/** The CLI-only switches of `prepare` (not pipeline options). */
function cliFlags(v: Record<string, unknown>): PrepareCliFlags {
  return {
    out: v.out as string | undefined,
    json: v.json === true,
    quiet: v.quiet === true,
    verbose: v.verbose === true,
  };
}

/** Declares `prepare` on the program. */
export function registerPrepare(program: Command, done: (code: number) => void): void {
  const cmd = program
    .command('prepare')
    .summary('render, tokenize and mask datasets into EAGLE-3 training records')
    .description(
      "Renders every conversation of the inputs with the target model's chat template, tokenizes it and writes, per output folder:\n" +
        '  data/tokenized_data.jsonl  one record per line: input_ids, loss_mask, … (data/ holds the records only)\n' +
        '  prompts_to_generate.jsonl  prompt-only rows, to answer with `generate`\n' +
        '  report.json, report.md     what became of every row, per file; length statistics and amplification\n' +
        '  token_counts.json          count of each token id, trainable and all (for draft-vocab)\n' +
        '  speculators/               with --trainer speculators: the dataset its train.py --data-path reads\n' +
        'With --format messages (the default with --trainer eagle or modelopt), no records: the written conversations, normalized,\n' +
        '  conversations.jsonl        OpenAI messages (and conversations_sharegpt.jsonl, ShareGPT, with --trainer eagle)\n' +
        'Inputs: .jsonl .ndjson .json .traj .parquet files (optionally .gz or .zst)\n' +
        'or folders holding them.',
    )
    .argument('<inputs...>', 'dataset files or folders');
  addOptions(cmd, PREPARE_OPTIONS as readonly OptionSpec<never>[]);
  cmd.addHelpText(
    'after',
    '\nExit codes: 0 done; 1 the run failed (nothing written, the previous outputs kept); 2 usage error.\n' +
      'Examples:\n' +
      '  eagle3-prep prepare samples/\n' +
      '  eagle3-prep prepare data/*.jsonl --tokenizer ~/models/Qwen3-8B --out prepared/ --max-length 8192',
  );
  setUsageHint(cmd);
  cmd.action(async (inputs: string[], values: Record<string, unknown>, self: Command) => {
    const given = applyOptions({ inputs: [], outDir: '' } as PrepareOptions, PREPARE_OPTIONS, values);
    const flags = cliFlags(values);
    if (given.trainer && TRAINERS[given.trainer].readsRecords && (given.format === 'parquet' || given.format === 'messages'))
      usageError(
        self,
        `${TRAINERS[given.trainer].name} reads JSONL records, not ${given.format === 'parquet' ? 'Parquet' : 'conversations'}: use --format jsonl or both with --trainer ${given.trainer}`,
      );
    const base = withTrainerDefaults(given);
    if (base.truncate && base.maxLength === undefined) usageError(self, '--truncate needs --max-length');
    if (base.long !== undefined && base.maxLength === undefined) usageError(self, '--long needs --max-length');
    if (base.truncate && base.long !== undefined && base.long !== 'truncate')
      usageError(self, `--truncate is --long truncate; it cannot go with --long ${base.long}`);
    const conflict = longSplitConflict(base);
    if (conflict) usageError(self, conflict);
    if (base.shard && !flags.out) usageError(self, '--shard needs --out (each shard writes its own output folder)');
    const files = expandInputs(inputs);
    if (files.length === 0) throw new Error(`no dataset files (.jsonl, .ndjson, .json, .traj, .parquet, optionally .gz/.zst) found in ${inputs.join(', ')}`);
    done(await runPrepare(files, base, flags));
  });
}
