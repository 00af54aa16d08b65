/** `eagle3-prep draft-vocab`: the d2t / t2d mapping of a reduced draft vocabulary, from prepare's token counts. */
import { buildDraftVocab, resolveTargetVocabSize, trainableCounts, writeDraftVocab } from '../core/run/jobs/draftVocab';
import { TOKEN_COUNTS_FILE } from '../core/run/outputFiles';
import { readTokenCountsFiles } from '../core/run/outputs/tokenCounts';
import { toSnakeJson } from '../core/run/reports/jsonCase';
import { addOptions, Command, EXIT, json, out, positiveInt, setUsageHint, usageError, type OptionSpec } from './command';

/** Version of the `draft-vocab --json` document (snake_case; docs/outputs.md "report.json"). */
export const DRAFT_VOCAB_SCHEMA_VERSION = 1;

const OPTIONS: readonly OptionSpec[] = [
  { flags: '--size <k>', help: 'Draft vocabulary size K (e.g. 32000). Required.', parse: positiveInt },
  {
    flags: '--counts <file...>',
    help: 'token_counts.json files of prepare runs (or their output folders); several (the shards of a job) add up. They must come from the same tokenizer.',
    defaultText: './token_counts.json',
  },
  {
    flags: '--target-vocab-size <v>',
    help: "The target model's vocabulary size (config.json vocab_size, the rows of its embedding; not the tokenizer's length): the length of t2d.",
    defaultText: 'from config.json in the tokenizer folder of the run (the embedded Qwen3 tokenizer: 151936)',
    parse: positiveInt,
  },
  { flags: '--out <dir>', help: 'Folder for the vocabulary files (created). Required.' },
  { flags: '--json', help: 'Print the result as JSON.' },
];

/** Declares `draft-vocab` on the program. */
export function registerDraftVocab(program: Command, done: (code: number) => void): void {
  const cmd = program
    .command('draft-vocab')
    .summary('top-K draft vocabulary (d2t / t2d) from the trained tokens of prepared data')
    .description(
      'Takes the K token ids trained most often (ties: the smaller id; fewer than K seen: the smallest unused ids fill up) and writes the mapping ' +
        'in the file each trainer reads (d2t[i] = target_id - i, so target_id = i + d2t[i]; t2d[target_id] is true for the K ids):\n' +
        '  d2t.npy, t2d.npy   speculators: train.py --d2t-path d2t.npy --t2d-path t2d.npy (int64 [K], bool [V])\n' +
        '  token_freq.pt      speculators: {token_id: trainable count} (train.py --token-freq-path)\n' +
        '  vocab_mapping.pt   SpecForge: model.vocab_mapping_path ({"d2t": int64 [K], "t2d": bool [V]})\n' +
        '  cache.pt           EAGLE traineagle3: the same dict, read from the folder main.py runs in\n' +
        '  d2t.pt             Model-Optimizer: data.draft_vocab_cache (int64 [K])\n' +
        '  draft_vocab.json   the ids, their counts and the share of trained tokens they cover\n' +
        "The .pt files load with torch.load(path, weights_only=True). V is the model's config.json vocab_size.",
    );
  addOptions(cmd, OPTIONS);
  cmd.addHelpText('after', '\nExit codes: 0 written; 1 unreadable counts or a bad size; 2 usage error.');
  setUsageHint(cmd);
  cmd.action(async (v: { size?: number; counts?: string[]; targetVocabSize?: number; out?: string; json?: boolean }, self: Command) => {
    if (v.size === undefined) usageError(self, "required option '--size <k>' not specified");
    if (!v.out) usageError(self, "required option '--out <dir>' not specified");
    const paths = v.counts?.length ? v.counts : [TOKEN_COUNTS_FILE];
    const files = readTokenCountsFiles(paths);
    let vocabSize: number;
    try {
      vocabSize = resolveTargetVocabSize(files, v.targetVocabSize);
    } catch (e) {
      usageError(self, (e as Error).message);
    }
    const counts = trainableCounts(files);
    const dv = buildDraftVocab(counts, v.size!, vocabSize);
    const written = await writeDraftVocab(dv, v.out!, { tokenizer: files[0].tokenizer, countFiles: paths }, counts);
    const result = { draftVocabSize: dv.size, targetVocabSize: dv.targetVocabSize, coverage: dv.coverage, filled: dv.filled, outputs: written };
    out(
      v.json
        ? json(toSnakeJson(result, DRAFT_VOCAB_SCHEMA_VERSION))
        : `draft vocabulary: ${dv.size} of ${dv.targetVocabSize} target ids, covering ${(100 * dv.coverage).toFixed(2)} % of the trained tokens` +
            (dv.filled ? `; ${dv.filled} never-trained ids added to fill it` : '') +
            `\n${written.map((w) => `  ${w}`).join('\n')}\n`,
    );
    done(EXIT.ok);
  });
}
