/** `eagle3-prep inspect`: the detected format and the normalized conversations of one file (no tokenizing). */
import { inspectFile } from '../core/run/inputs/inspect';
import { addOptions, Command, EXIT, err, out, positiveInt, setUsageHint, type OptionSpec } from './command';
import { ANSWER_MODES, type AnswerMode } from '../core/types';
import { ANSWERS_DEFAULT, ANSWERS_HELP } from './prepare';

/** Version of the `inspect --json` document (docs/cli.md "inspect --json"). */
export const INSPECT_SCHEMA_VERSION = 1;

const OPTIONS: readonly OptionSpec[] = [
  { flags: '--json', help: 'Print the result as one JSON object (docs/cli.md "inspect --json") instead of a short text summary.' },
  { flags: '--limit <rows>', help: 'Read at most this many rows.', defaultText: 'every row', parse: positiveInt },
  {
    flags: '--mapping <file>',
    help: 'A JSONC field-mapping file for shapes the detector does not know.',
    defaultText: 'the nearest eagle3prep.jsonc beside the input or in a parent folder',
  },
  { flags: '--answers <mode>', help: ANSWERS_HELP, choices: ANSWER_MODES, defaultText: ANSWERS_DEFAULT },
];

/** Declares `inspect` on the program. */
export function registerInspect(program: Command, done: (code: number) => void): void {
  const cmd = program
    .command('inspect')
    .summary('show the detected format and the normalized conversations of a file')
    .description('Detects the shape of a dataset file and normalizes its rows to OpenAI messages, without tokenizing.')
    .argument('<file>', 'one dataset file');
  addOptions(cmd, OPTIONS);
  cmd.addHelpText('after', '\nExit codes: 0 at least one record read; 1 no usable record (stderr names the first reason); 2 usage error.');
  setUsageHint(cmd);
  cmd.action(async (file: string, v: { json?: boolean; limit?: number; mapping?: string; answers?: AnswerMode }) => {
    const r = await inspectFile(file, { limit: v.limit, mapping: v.mapping, answers: v.answers });
    if (v.json) out(JSON.stringify({ schema_version: INSPECT_SCHEMA_VERSION, ...r }) + '\n');
    else {
      out(`${file}: ${r.format}\n${r.evidence.map((e) => `  - ${e}`).join('\n')}\n`);
      out(`  ${r.records.length} records (${r.records.filter((x) => x.needs_generation).length} need generation), ${r.skipped.length} skipped\n`);
    }
    if (r.records.length === 0) {
      // Recognized rows that all failed: the JSON above says why per row; the run fails like `prepare` would.
      const s = r.skipped[0];
      err(
        `eagle3-prep: ${r.file}: no usable record: all ${r.rows_read} rows skipped (first: line ${s?.line}: ${s?.reason}${s?.code ? ` ${s.code}` : ''}: ${s?.message})`,
      );
      return done(EXIT.failed);
    }
    done(EXIT.ok);
  });
}
