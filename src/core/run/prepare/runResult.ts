/** Assembles a `prepare` run's result (docs/outputs.md "report.json") from its file reports: failures, skipped files, totals, status. */
import { explainUnusableInput } from '../inputs/inspect';
import { computeTotals, runFailures, throughputOf, type FailurePolicy } from '../reports/accounting';
import { settlePromptsWritten } from '../reports/promptLines';
import { applyStatus } from '../reports/status';
import { sharegptEmptyReason } from '../reports/conversationsNote';
import type { DryRunEstimate, FileReport, PrepareOptions, PrepareResult, RunSetup } from '../contract';
import type { LongPolicy, OutputFormat } from '../../records/rowResult';
import type { MaskPolicy } from '../../types';
import { reportedSettings, resolveRunSettings } from '../runSettings';

/** What {@link assembleResult} reads: the run's options, its outputs and its file reports. */
export interface RunOutcome {
  t0: number;
  opts: PrepareOptions & { mask: MaskPolicy; grouping: NonNullable<PrepareOptions['grouping']> };
  long: LongPolicy;
  outDir: string;
  format: OutputFormat;
  outputs: PrepareResult['outputs'];
  tokenCountsPath: string;
  tok: RunSetup['tokenizer'];
  templateCheck: RunSetup['templateCheck'];
  files: FileReport[];
  policy: FailurePolicy;
  shard: { index: number; count: number } | null;
  dryRun: { sampleRows: number } | null;
  estimates: DryRunEstimate[];
}

/** The run's {@link PrepareResult} (status applied; `outputs.format` set, `outputs.written` left to the caller). */
export async function assembleResult(run: RunOutcome): Promise<PrepareResult> {
  const { t0, opts, long, outDir, format, outputs, tokenCountsPath, tok, templateCheck, files, policy, shard, dryRun, estimates } = run;
  for (const f of files) settlePromptsWritten(f);
  const failures = runFailures(files, policy);
  const skippedFiles = files.filter((f) => f.skipped).map((f) => ({ file: f.file, reason: f.failure ?? 'failed' }));
  if (files.length > 0 && skippedFiles.length === files.length) failures.push(`every input failed; nothing to write (${skippedFiles.length} skipped)`);
  // --trainer eagle's file with no conversation while conversations were written: the run's output for that trainer is empty.
  const sharegptEmpty = sharegptEmptyReason({ outputs, files });
  if (sharegptEmpty && !dryRun && !policy.allowEmpty && files.some((f) => !f.skipped && (f.conversationsWritten ?? 0) > 0))
    failures.push(`--trainer eagle: ${sharegptEmpty}; or --allow-empty to write the files anyway`);
  // A file that yielded nothing gets the same explanation as `inspect` (empty, CSV, tokenized, no conversation),
  // whether it failed the run or was skipped (skipping must not hide why). Worked out once per file; an
  // explanation that cannot be made leaves the message as it is (it must not replace it).
  const explained = new Map<string, Promise<string | undefined>>();
  const explain = async (message: string, file: string): Promise<string> => {
    if (!message.startsWith(`${file}: no record written and no prompt`)) return message;
    if (!explained.has(file))
      explained.set(
        file,
        explainUnusableInput(file, 1000, opts.mapping).catch(() => undefined),
      );
    const unusable = await explained.get(file);
    return unusable ? `${message}. ${unusable}` : message;
  };
  for (let i = 0; i < failures.length; i++) {
    const f = files.find((x) => failures[i].startsWith(`${x.file}: no record written and no prompt`));
    if (f) failures[i] = await explain(failures[i], f.file);
  }
  for (const s of skippedFiles) s.reason = await explain(s.reason, s.file);
  const result: PrepareResult = {
    ok: failures.length === 0,
    failures,
    outDir,
    outputs,
    tokenizer: tok,
    templateKwargs: opts.templateKwargs ?? {},
    mask: opts.mask,
    reasoning: opts.reasoning ?? 'keep',
    maxLength: opts.maxLength ?? null,
    truncate: long === 'truncate',
    long,
    grouping: opts.grouping,
    minTrainableTokens: opts.minTrainableTokens ?? 1,
    ...reportedSettings(resolveRunSettings(opts)),
    trainer: opts.trainer ?? null,
    ...(failures.length || dryRun ? {} : { tokenCounts: tokenCountsPath }),
    templateCheck,
    files,
    totals: computeTotals(files),
    elapsedMs: Date.now() - t0,
    ...(shard ? { shard: { index: shard.index, count: shard.count } } : {}),
    policy: {
      strict: opts.strict === true,
      maxErrorRate: opts.maxErrorRate ?? null,
      skipFailedFiles: opts.skipFailedFiles === true,
      dedup: opts.dedup === true,
    },
    ...(skippedFiles.length ? { skippedFiles } : {}),
    ...(dryRun ? { dryRun: { sampleRows: dryRun.sampleRows, files: estimates } } : {}),
  };
  result.throughput = throughputOf(result.totals, result.elapsedMs);
  applyStatus(result, new Set(files.filter((f) => f.failure && !f.skipped).map((f) => f.file)));
  outputs.format = format;
  return result;
}
