/**
 * The run behind `eagle3-prep prepare`: groups the inputs by output folder,
 * stages every group's outputs (`prepareStaged`), then commits all of them or
 * none — a failing file fails the command and no output folder is replaced,
 * unless `--skip-failed-files` — and prints the progress line, the summary and
 * returns the exit code.
 */
import { prepareStaged, type StagedRun } from '../core/run/prepare/pipeline';
import { defaultWorkerCount, groupByDefaultOutDir } from '../core/run/inputs/inputs';
import { type PrepareOptions, type PrepareResult } from '../core/run/contract';
import { resolve } from 'node:path';
import { notProcessedFailure, preflightFile } from '../core/run/inputs/preflight';
import { reportToJson } from '../core/run/reports/report';
import { EXIT, err, json, out } from './command';
import { ProgressLine } from './progress';
import { abortOnSignals } from './signals';
import { commandStatus, formatSummary, type SummaryContext } from './summary';

/** The switches of `prepare` the CLI itself acts on. */
export interface PrepareCliFlags {
  out?: string;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
}

/**
 * Runs `prepare` over the expanded input files.
 * @returns the exit code: 0 done, 1 the run failed (nothing written) or was cancelled
 * @throws the run's error (tokenizer, unwritable output folder, cancel): the caller prints it in one line
 */
export async function runPrepare(files: string[], base: PrepareOptions, flags: PrepareCliFlags): Promise<number> {
  base.workers ??= defaultWorkerCount(files);
  let groups = flags.out ? [{ inputs: files, outDir: flags.out }] : groupByDefaultOutDir(files);
  // Fail early across output folders too: a file that fails its first look (run/inputs/preflight.ts) fails the command, so
  // the folders without such a file are not processed (each prepare checks only its own inputs).
  let notRun: string[] = [];
  if (groups.length > 1 && !base.skipFailedFiles) {
    const allowEmpty = base.allowEmpty === true || (base.shard !== undefined && base.shard.count > 1);
    const bad = new Set<string>();
    for (const f of files) if (await preflightFile(resolve(f), { mapping: base.mapping, allowEmpty })) bad.add(resolve(f));
    if (bad.size) {
      const failing = (g: { inputs: string[] }) => g.inputs.some((i) => bad.has(resolve(i)));
      notRun = groups.filter((g) => !failing(g)).flatMap((g) => g.inputs.map((i) => resolve(i)));
      groups = groups.filter(failing);
    }
  }
  const cancel = abortOnSignals();
  const progress = flags.json || flags.quiet ? undefined : new ProgressLine(groups.flatMap((g) => g.inputs));
  const log = flags.verbose && !flags.json && !flags.quiet ? (l: string) => (progress ? progress.log(l) : err(l)) : undefined;
  const dedup = base.dedup ? new Set<string>() : undefined;
  const staged: StagedRun[] = [];
  try {
    for (const g of groups)
      staged.push(await prepareStaged({ ...base, ...g }, { log, signal: cancel.signal, onProgress: progress && ((p) => progress.update(p)), dedup }));
  } catch (e) {
    progress?.stop();
    for (const s of staged) await s.abort();
    cancel.dispose();
    const sig = cancel.received();
    if (sig) throw new Error(`cancelled (${sig}): nothing was written; the output folders keep their previous files`, { cause: e });
    throw e;
  }
  progress?.stop();
  // A signal after the last row but before any commit still cancels; once commits start they all finish (see signals.ts).
  const early = cancel.received();
  if (early) {
    for (const s of staged) await s.abort();
    cancel.dispose();
    throw new Error(`cancelled (${early}): nothing was written; the output folders keep their previous files`);
  }
  const results = staged.map((s) => s.result);
  if (notRun.length) {
    const r = results[0];
    r.notProcessed = [...(r.notProcessed ?? []), ...notRun];
    r.failures.push(notProcessedFailure(notRun));
  }
  const ctx: SummaryContext = { dryRun: base.dryRun !== undefined, skipFailedFiles: base.skipFailedFiles === true, heldBack: [], skippedRuns: [] };
  const anyFailed = results.some((r) => !r.ok);
  try {
    for (const s of staged) {
      const r = s.result;
      if (ctx.dryRun) await s.abort();
      else if (!r.ok && base.skipFailedFiles) {
        // The whole folder's inputs failed: left out like a failed file, its previous outputs kept.
        await s.abort();
        ctx.skippedRuns!.push(r.outDir);
        for (const f of r.files) f.skipped = true;
        r.skippedFiles = r.files.map((f) => ({ file: f.file, reason: f.failure ?? `${f.file}: ${r.failures.join('; ')}` }));
      } else if (anyFailed && !base.skipFailedFiles) {
        // One folder failed: none is replaced (all or nothing), so a rerun sees the same state.
        await s.abort();
        if (r.ok) ctx.heldBack!.push(r.outDir);
      } else await s.commit();
    }
  } finally {
    cancel.dispose();
  }
  const late = cancel.received();
  if (late && !ctx.dryRun)
    err(`eagle3-prep: ${late} arrived while the outputs were being put in place: they were completed, not interrupted (a rerun is not needed)`);
  const status = commandStatus(results, ctx);
  if (flags.json) {
    const docs = results.map((r) => reportToJson(r));
    out(json(docs.length === 1 ? docs[0] : docs));
  } else out(formatSummary(results, ctx) + '\n');
  return status === 'failed' ? EXIT.failed : EXIT.ok;
}

export type { PrepareResult };
