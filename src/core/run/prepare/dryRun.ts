/** Dry runs (docs/cli.md `--dry-run`): the rows sampled per file and the whole-file estimates made from them. */
import type { DryRunEstimate, FileReport } from '../contract';

/** Rows of each file a dry run processes by default. */
export const DRY_RUN_SAMPLE_ROWS = 1000;

/** Whole-file estimates from the rows a dry run processed: scaled by the input bytes they took. */
export function estimate(rep: FileReport, bytesSampled: number, bytesTotal: number, complete: boolean): DryRunEstimate {
  const k = complete || bytesSampled <= 0 ? 1 : bytesTotal / bytesSampled;
  const est = (n: number) => Math.round(n * k);
  return {
    file: rep.file,
    rowsSampled: rep.rowsRead,
    bytesSampled: complete ? bytesTotal : bytesSampled,
    bytesTotal,
    complete,
    rows: est(rep.rowsRead),
    records: est(rep.recordsWritten),
    tokens: est(rep.totalTokens),
    trainableTokens: est(rep.trainableTokens),
  };
}
