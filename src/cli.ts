/**
 * `eagle3-prep` command line: wiring only (argument parsing, printing, exit
 * codes). The work is done by `src/core`.
 *
 * Exit codes: 0 success; 1 a run failed (an input yielded nothing, bad input,
 * unusable tokenizer); 2 usage error.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { checkTemplate, formatTemplateCheck } from './core/checkTemplate';
import { inspectFile } from './core/inspect';
import { mergeReports } from './core/mergeReports';
import { expandInputs, groupByDefaultOutDir, prepare, type PrepareOptions, type PrepareResult } from './core/pipeline';
import { loadTokenizer } from './core/tokenizer';
import type { MaskPolicy } from './core/types';

const USAGE = `eagle3-prep — EAGLE-3 draft-model training data from chat and agent datasets

Usage:
  eagle3-prep prepare <file|folder...> [--tokenizer DIR] [--out DIR]
                      [--mask assistant|last-assistant|non-system]
                      [--max-length N] [--truncate] [--template-kwargs JSON]
                      [--allow-empty] [--json] [--quiet]
                      [--workers N] [--shard I/N]
  eagle3-prep merge-reports <shard-dir|report.json...> --out DIR [--data] [--json]
  eagle3-prep inspect <file> --json [--limit N]
  eagle3-prep check-template [--tokenizer DIR] [--template-kwargs JSON] [--json]

prepare   renders every conversation with the target model's chat template,
          tokenizes it and writes, per output folder:
            tokenized_data.jsonl      {id, source, input_ids, loss_mask, seq_len,
                                       n_prompt_tokens, n_response_tokens}
            prompts_to_generate.jsonl prompt-only rows as OpenAI messages
            report.json, report.md    per-file accounting
          Without --out, each input file gets <input-name>.eagle3/ beside it;
          with --out, all inputs share that folder.
          --tokenizer  a local Hugging Face model folder (tokenizer.json +
                       tokenizer_config.json); default: embedded Qwen3.
          --workers N  threads that render and tokenize (default: the
                       available cores); the outputs are the same for any N.
          --shard I/N  only shard I (0-based) of N: every N-th row across the
                       inputs, for a cluster job array; own outputs and report.
merge-reports
          combines the report.json of the N shards of one job into one report
          in --out, checking that the shards add up (same settings and inputs,
          every row of every file in exactly one shard); --data also merges
          their tokenized_data.jsonl / prompts_to_generate.jsonl in input order.
inspect   prints the detected format and the normalized conversations (no
          tokenizing) as one JSON object.
check-template
          renders probe conversations (single turn, multi-turn, tool call and
          result, reasoning, trailing tool result) with the chat template and
          reports: prefix-stable or where not, the end-of-turn token trained,
          text after it, a default system prompt, a generation-prompt scaffold;
          then the records with trainable spans highlighted (⟦…⟧ without color).
          --json prints the findings as one JSON object.
`;

class UsageError extends Error {}

function parseMask(v: string | undefined): MaskPolicy {
  if (v === undefined) return 'assistant';
  if (v === 'assistant' || v === 'last-assistant' || v === 'non-system') return v;
  throw new UsageError(`--mask must be assistant, last-assistant or non-system (got "${v}")`);
}

function parseKwargs(v: string | undefined): Record<string, unknown> {
  if (v === undefined) return {};
  let o: unknown;
  try {
    o = JSON.parse(v);
  } catch (e) {
    throw new UsageError(`--template-kwargs is not valid JSON: ${(e as Error).message}`);
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new UsageError('--template-kwargs must be a JSON object, e.g. \'{"enable_thinking": false}\'');
  return o as Record<string, unknown>;
}

function parsePositiveInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${name} must be a positive integer (got "${v}")`);
  return n;
}

/** `I/N` with 0 ≤ I < N → `{index, count}`. */
function parseShard(v: string | undefined): { index: number; count: number } | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d+)\/(\d+)$/.exec(v.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index >= count) throw new UsageError(`--shard must be I/N with 0 <= I < N, e.g. 0/4 (got "${v}")`);
  return { index, count };
}

function summary(r: PrepareResult): string {
  const lines = [`${r.ok ? 'OK' : 'FAILED'}  ${r.outDir}  (tokenizer ${r.tokenizer.name}, mask ${r.mask})`];
  for (const f of r.files) {
    const drops = Object.entries(f.dropped).map(([k, v]) => `${k} ${v.count}`).join(', ');
    lines.push(
      `  ${f.file}\n    format ${f.format}; rows ${f.rowsRead}: written ${f.rowsWritten} (${f.recordsWritten} records, ${f.trainableTokens}/${f.totalTokens} tokens trainable), ` +
        `to generate ${f.rowsSetAside}, dropped ${f.rowsDropped}${drops ? ` (${drops})` : ''}, errored ${f.rowsErrored}`,
    );
    for (const e of f.errors.slice(0, 5)) lines.push(`    line ${e.line}: ${e.message.split('\n')[0]}`);
  }
  for (const fl of r.failures) lines.push(`  error: ${fl}`);
  return lines.join('\n');
}

async function cmdPrepare(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tokenizer: { type: 'string' },
      out: { type: 'string' },
      mask: { type: 'string' },
      'max-length': { type: 'string' },
      truncate: { type: 'boolean', default: false },
      'template-kwargs': { type: 'string' },
      'allow-empty': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      workers: { type: 'string' },
      shard: { type: 'string' },
    },
  });
  if (positionals.length === 0) throw new UsageError('prepare needs at least one input file or folder');
  const shard = parseShard(values.shard);
  if (shard && !values.out) throw new UsageError('--shard needs --out (each shard writes its own output folder)');
  const base: Omit<PrepareOptions, 'inputs' | 'outDir'> = {
    tokenizerDir: values.tokenizer,
    mask: parseMask(values.mask),
    maxLength: parsePositiveInt('--max-length', values['max-length']),
    truncate: values.truncate,
    templateKwargs: parseKwargs(values['template-kwargs']),
    allowEmpty: values['allow-empty'],
    workers: parsePositiveInt('--workers', values.workers) ?? availableParallelism(),
    shard,
  };
  if (base.truncate && base.maxLength === undefined) throw new UsageError('--truncate needs --max-length');
  const inputs = expandInputs(positionals);
  if (inputs.length === 0) throw new Error(`no dataset files (.jsonl, .json) found in ${positionals.join(', ')}`);
  const groups = values.out ? [{ inputs, outDir: values.out }] : groupByDefaultOutDir(inputs);
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort(new Error('cancelled (SIGINT)')));
  const log = values.quiet || values.json ? undefined : (l: string) => process.stderr.write(l + '\n');
  const results: PrepareResult[] = [];
  for (const g of groups) results.push(await prepare({ ...base, ...g }, { log, signal: ac.signal }));
  if (values.json) process.stdout.write(JSON.stringify(results.length === 1 ? results[0] : results, null, 2) + '\n');
  else for (const r of results) process.stdout.write(summary(r) + '\n');
  return results.every((r) => r.ok) ? 0 : 1;
}

async function cmdMergeReports(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string' }, data: { type: 'boolean', default: false }, 'allow-empty': { type: 'boolean', default: false }, json: { type: 'boolean', default: false } },
  });
  if (positionals.length === 0) throw new UsageError('merge-reports needs the shards\' output folders (or report.json files)');
  if (!values.out) throw new UsageError('merge-reports needs --out DIR for the merged report');
  const r = await mergeReports(positionals, values.out, { data: values.data, allowEmpty: values['allow-empty'] });
  if (values.json) process.stdout.write(JSON.stringify(r, null, 2) + '\n');
  else process.stdout.write(`merged ${r.shard!.count} shards\n${summary(r)}\n`);
  return r.ok ? 0 : 1;
}

async function cmdInspect(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, limit: { type: 'string' } },
  });
  if (positionals.length !== 1) throw new UsageError('inspect takes exactly one file');
  const r = await inspectFile(positionals[0], { limit: parsePositiveInt('--limit', values.limit) });
  if (values.json) process.stdout.write(JSON.stringify(r) + '\n');
  else {
    process.stdout.write(`${positionals[0]}: ${r.format}\n${r.evidence.map((e) => `  - ${e}`).join('\n')}\n`);
    process.stdout.write(`  ${r.records.length} records (${r.records.filter((x) => x.needs_generation).length} need generation), ${r.skipped.length} skipped\n`);
  }
  return 0;
}

async function cmdCheckTemplate(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { tokenizer: { type: 'string' }, 'template-kwargs': { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (positionals.length > 0) throw new UsageError(`check-template takes no positional arguments (got "${positionals[0]}")`);
  const templateKwargs = parseKwargs(values['template-kwargs']);
  const check = checkTemplate(loadTokenizer(values.tokenizer), { templateKwargs });
  if (values.json) process.stdout.write(JSON.stringify(check, null, 2) + '\n');
  else process.stdout.write(formatTemplateCheck(check, { color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR }));
  return 0;
}

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'prepare':
        return await cmdPrepare(rest);
      case 'merge-reports':
        return await cmdMergeReports(rest);
      case 'inspect':
        return await cmdInspect(rest);
      case 'check-template':
        return await cmdCheckTemplate(rest);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(USAGE);
        return cmd === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${cmd}"`);
    }
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`eagle3-prep: ${(e as Error).message}\n\n${USAGE}`);
      return 2;
    }
    process.stderr.write(`eagle3-prep: ${(e as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
