/**
 * `eagle3-prep` command line: wiring only. Each command is one module under
 * `src/cli/` (its options with their help and defaults, and its action); the
 * work is done by `src/core`.
 *
 * Exit codes: 0 success; 1 a run failed (an input yielded nothing, bad input,
 * unusable tokenizer, unwritable output folder, cancelled); 2 usage error
 * (stderr: the error naming the option at fault, the command's usage line).
 */
import { CommanderError } from 'commander';
import { Command, EXIT, err, oneLine, packageVersion } from './cli/command';
import { registerCheckTemplate } from './cli/checkTemplate';
import { registerDraftVocab } from './cli/draftVocab';
import { registerGenerate } from './cli/generate';
import { registerInspect } from './cli/inspect';
import { registerMergeReports } from './cli/mergeReports';
import { registerPrepare } from './cli/prepare';

/** The program with its commands; `done` receives the exit code of the command that ran. */
export function buildProgram(done: (code: number) => void): Command {
  const program = new Command('eagle3-prep')
    .description('EAGLE-3 draft-model training data from chat and agent datasets: input_ids + loss_mask rendered with the target model chat template.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command (eagle3-prep <command> --help)')
    .exitOverride()
    .configureOutput({ outputError: (s, write) => write(`eagle3-prep: ${s.replace(/^error: /, 'error: ')}`) })
    .showHelpAfterError('Run "eagle3-prep --help" to see the commands.')
    .addHelpText('after', '\nExit codes: 0 done; 1 the run failed; 2 usage error.\nRun "eagle3-prep <command> --help" for the options of a command.');
  // Commands inherit exitOverride and the output settings from the program (set above).
  registerPrepare(program, done);
  registerMergeReports(program, done);
  registerDraftVocab(program, done);
  registerInspect(program, done);
  registerCheckTemplate(program, done);
  registerGenerate(program, done);
  return program;
}

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => (code = c));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help, --version: 0. Usage errors (already printed with the usage line): 2. No command: the help, 2.
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return EXIT.ok;
      return EXIT.usage;
    }
    err(`eagle3-prep: ${oneLine(e)}`);
    return EXIT.failed;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
    // The command is done: end once stdout and stderr are flushed, rather than wait for a handle that
    // outlived it (a worker thread of a run a signal cancelled kept one process alive for minutes).
    let open = 2;
    const flushed = () => {
      if (--open === 0) process.exit(code);
    };
    process.stdout.write('', flushed);
    process.stderr.write('', flushed);
  });
}
