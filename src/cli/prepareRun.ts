/**
 * The run behind `eagle3-prep prepare`: groups the inputs by output folder,
 * runs `prepare()` on each, prints the summary and returns the exit code.
 */
import { defaultWorkerCount, groupByDefaultOutDir, prepare, type PrepareOptions, type PrepareResult } from '../core/run/pipeline';
import { EXIT, err, json, out } from './command';
import { abortOnSignals } from './signals';
import { formatSummary } from './summary';

/** The switches of `prepare` the CLI itself acts on. */
export interface PrepareCliFlags {
  out?: string;
  json: boolean;
  quiet: boolean;
  verbose: boolean;
}

/**
 * Runs `prepare` over the expanded input files.
 * @returns the exit code: 0 done, 1 a run failed
 */
export async function runPrepare(files: string[], base: PrepareOptions, flags: PrepareCliFlags): Promise<number> {
  base.workers ??= defaultWorkerCount(files);
  const groups = flags.out ? [{ inputs: files, outDir: flags.out }] : groupByDefaultOutDir(files);
  const cancel = abortOnSignals();
  const log = flags.verbose && !flags.json && !flags.quiet ? (l: string) => err(l) : undefined;
  const results: PrepareResult[] = [];
  try {
    for (const g of groups) results.push(await prepare({ ...base, ...g }, { log, signal: cancel.signal }));
  } finally {
    cancel.dispose();
  }
  if (flags.json) out(json(results.length === 1 ? results[0] : results));
  else out(formatSummary(results) + '\n');
  return results.every((r) => r.ok) ? EXIT.ok : EXIT.failed;
}
