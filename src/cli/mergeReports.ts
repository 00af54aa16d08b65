/** `eagle3-prep merge-reports`: one report (and optionally one dataset) from the N shards of a job. */
import { mergeReports } from '../core/run/jobs/mergeReports';
import { reportToJson } from '../core/run/reports/report';
import { addOptions, Command, EXIT, json, out, setUsageHint, type OptionSpec } from './command';
import { abortOnSignals } from './signals';
import { formatRunSummary } from './summary';

const OPTIONS: readonly OptionSpec[] = [
  { flags: '--out <dir>', help: 'Folder of the merged report.json / report.md (and data with --data); not one of the shard folders. Required.' },
  {
    flags: '--data',
    help: "Also merge the shards' tokenized_data.jsonl / tokenized_data.parquet (each format every shard wrote) and prompts_to_generate.jsonl, in input order (the same records as one unsharded run).",
  },
  { flags: '--allow-empty', help: 'Succeed even when an input yields no record and no prompt across the shards (as prepare --allow-empty).' },
  {
    flags: '--skip-failed-files',
    help: 'When a file fails the merge (nothing usable across the shards), write the other files and list the failed ones as skipped (as prepare --skip-failed-files).',
  },
  { flags: '--json', help: 'Print the merged report (report.json schema) on stdout instead of the summary.' },
];

/** Declares `merge-reports` on the program. */
export function registerMergeReports(program: Command, done: (code: number) => void): void {
  const cmd = program
    .command('merge-reports')
    .summary('combine the reports (and data) of the shards of one --shard job')
    .description(
      'Combines the report.json of the N shards of one job (prepare --shard I/N) into one report, checking that they add up: ' +
        'same settings and inputs, every row of every file in exactly one shard.',
    )
    .argument('<shards...>', "the shards' output folders (or their report.json files)");
  addOptions(cmd, OPTIONS);
  cmd.addHelpText('after', '\nExit codes: 0 merged; 1 the shards do not add up or the merged run failed (nothing written); 2 usage error.');
  setUsageHint(cmd);
  cmd.action(async (shards: string[], v: { out?: string; data?: boolean; allowEmpty?: boolean; skipFailedFiles?: boolean; json?: boolean }, self: Command) => {
    if (!v.out) self.error("error: required option '--out <dir>' not specified", { exitCode: EXIT.usage });
    // A signal cancels the merge like a prepare (signals.ts): its staged files are removed, --out keeps its previous files.
    const cancel = abortOnSignals();
    let r: Awaited<ReturnType<typeof mergeReports>>;
    try {
      r = await mergeReports(shards, v.out!, {
        data: v.data === true,
        allowEmpty: v.allowEmpty === true,
        skipFailedFiles: v.skipFailedFiles === true,
        signal: cancel.signal,
      });
    } catch (e) {
      const sig = cancel.received();
      cancel.dispose();
      if (sig) throw new Error(`cancelled (${sig}): nothing was written; --out keeps its previous files`, { cause: e });
      throw e;
    }
    cancel.dispose();
    const head = r.ok ? `merged ${r.shard!.count} shards` : `the merge of ${r.shard!.count} shards failed`;
    out(
      v.json ? json(reportToJson(r)) : `${head}\n${formatRunSummary(r, { skipFailedFiles: v.skipFailedFiles === true, allowEmpty: v.allowEmpty === true })}\n`,
    );
    done(r.ok ? EXIT.ok : EXIT.failed);
  });
}
