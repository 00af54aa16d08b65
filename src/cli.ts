/**
 * `eagle3-prep` command line: wiring only (argument parsing, printing, exit
 * codes). The work is done by `src/core`.
 *
 * Exit codes: 0 success; 1 a run failed (an input yielded nothing, bad input,
 * unusable tokenizer); 2 usage error.
 */
import { parseArgs } from 'node:util';
import { checkTemplate, formatTemplateCheck } from './core/templates/checkTemplate';
import { formatGenerateSummary, generate, type GenerateOptions } from './core/generate/run';
import { inspectFile } from './core/run/inspect';
import { mergeReports } from './core/run/mergeReports';
import { defaultWorkerCount, expandInputs, groupByDefaultOutDir, prepare, type PrepareOptions, type PrepareResult } from './core/run/pipeline';
import { loadTokenizer } from './core/tokenizers/tokenizer';
import { isMaskPolicy, type MaskPolicy } from './core/types';

const USAGE = `eagle3-prep — EAGLE-3 draft-model training data from chat and agent datasets

Usage:
  eagle3-prep prepare <file|folder...> [--tokenizer DIR] [--out DIR]
                      [--mask assistant|last-assistant|non-system]
                      [--max-length N] [--truncate] [--template-kwargs JSON]
                      [--allow-empty] [--json] [--quiet] [--mapping FILE]
                      [--workers N] [--shard I/N]
  eagle3-prep merge-reports <shard-dir|report.json...> --out DIR [--data] [--json]
  eagle3-prep inspect <file> --json [--limit N] [--mapping FILE]
  eagle3-prep check-template [--tokenizer DIR] [--template-kwargs JSON] [--json]
  eagle3-prep generate <prompts.jsonl> --server URL[,URL...] [--model NAME]
                      [--out FILE] [--concurrency N] [--max-tokens N]
                      [--timeout SECONDS] [--retries N] [--temperature X]
                      [--reasoning keep|drop|disable] [--api-key-env NAME]
                      [--extra-body JSON] [--json] [--quiet]

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
                       available cores; 1 for inputs under 4 MB); the outputs
                       are the same for any N.
          --shard I/N  only shard I (0-based) of N: every N-th row across the
                       inputs, for a cluster job array; own outputs and report.
merge-reports
          combines the report.json of the N shards of one job into one report
          in --out, checking that the shards add up (same settings and inputs,
          every row of every file in exactly one shard); --data also merges
          their tokenized_data.jsonl / prompts_to_generate.jsonl in input order.
inspect   prints the detected format and the normalized conversations (no
          tokenizing) as one JSON object.
--mapping a JSONC field-mapping file for shapes the detector does not know
          (default: eagle3prep.jsonc beside the input or in a parent folder).
check-template
          renders probe conversations (single turn, multi-turn, tool call and
          result, reasoning, trailing tool result) with the chat template and
          reports: prefix-stable or where not, the end-of-turn token trained,
          text after it, a default system prompt, a generation-prompt scaffold;
          then the records with trainable spans highlighted (⟦…⟧ without color).
          --json prints the findings as one JSON object.
generate  answers every conversation of <prompts.jsonl> (prepare's
          prompts_to_generate.jsonl, or any dataset prepare reads) with the
          target model on OpenAI-compatible servers (SGLang, vLLM), every
          assistant turn in order, and appends them as OpenAI messages JSONL
          (default: generated.jsonl beside the input) that prepare reads.
          Rerun with the same --out to resume (keyed by row id).
          --server       server roots, comma-separated (http://host:port)
          --model        default: the first model of GET /v1/models
          --concurrency  requests in flight per server; default: the server's
                         max_running_requests (SGLang) or 64
          --max-tokens   cap per turn (default 8192); a capped turn is counted
                         as truncated, not written
          --timeout      per request, seconds (default 600)
          --reasoning    keep (default) | drop | disable (enable_thinking false)
          --api-key-env  environment variable holding the API key
                         (default OPENAI_API_KEY); never printed
`;

class UsageError extends Error {}

function parseMask(v: string | undefined): MaskPolicy {
  if (v === undefined) return 'assistant';
  if (isMaskPolicy(v)) return v;
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
    const drops = Object.entries(f.dropped)
      .map(([k, v]) => `${k} ${v.count}`)
      .join(', ');
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
      mapping: { type: 'string' },
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
    mapping: values.mapping,
    workers: parsePositiveInt('--workers', values.workers),
    shard,
  };
  if (base.truncate && base.maxLength === undefined) throw new UsageError('--truncate needs --max-length');
  const inputs = expandInputs(positionals);
  if (inputs.length === 0)
    throw new Error(`no dataset files (.jsonl, .ndjson, .json, .traj, .parquet, optionally .gz/.zst) found in ${positionals.join(', ')}`);
  base.workers ??= defaultWorkerCount(inputs);
  const groups = values.out ? [{ inputs, outDir: values.out }] : groupByDefaultOutDir(inputs);
  const ac = new AbortController();
  // SIGTERM too: what Slurm and Kubernetes send on cancel or preemption. The run aborts its temporary outputs.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => ac.abort(new Error(`cancelled (${sig})`)));
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
    options: {
      out: { type: 'string' },
      data: { type: 'boolean', default: false },
      'allow-empty': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals.length === 0) throw new UsageError("merge-reports needs the shards' output folders (or report.json files)");
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
    options: { json: { type: 'boolean', default: false }, limit: { type: 'string' }, mapping: { type: 'string' } },
  });
  if (positionals.length !== 1) throw new UsageError('inspect takes exactly one file');
  const r = await inspectFile(positionals[0], { limit: parsePositiveInt('--limit', values.limit), mapping: values.mapping });
  if (values.json) process.stdout.write(JSON.stringify(r) + '\n');
  else {
    process.stdout.write(`${positionals[0]}: ${r.format}\n${r.evidence.map((e) => `  - ${e}`).join('\n')}\n`);
    process.stdout.write(
      `  ${r.records.length} records (${r.records.filter((x) => x.needs_generation).length} need generation), ${r.skipped.length} skipped\n`,
    );
  }
  if (r.records.length === 0) {
    // Recognized rows that all failed: the JSON above says why per row; the run fails like `prepare` would.
    const s = r.skipped[0];
    process.stderr.write(
      `eagle3-prep: ${r.file}: no usable record: all ${r.rows_read} rows skipped (first: line ${s?.line}: ${s?.reason}${s?.code ? ` ${s.code}` : ''}: ${s?.message})\n`,
    );
    return 1;
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

function parseExtraBody(v: string | undefined): Record<string, unknown> | undefined {
  if (v === undefined) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(v);
  } catch (e) {
    throw new UsageError(`--extra-body is not valid JSON: ${(e as Error).message}`);
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) throw new UsageError('--extra-body must be a JSON object, e.g. \'{"top_p": 0.95}\'');
  return o as Record<string, unknown>;
}

async function cmdGenerate(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      server: { type: 'string', multiple: true },
      model: { type: 'string' },
      out: { type: 'string' },
      concurrency: { type: 'string' },
      'max-tokens': { type: 'string' },
      timeout: { type: 'string' },
      retries: { type: 'string' },
      'backoff-ms': { type: 'string' },
      temperature: { type: 'string' },
      reasoning: { type: 'string' },
      'api-key-env': { type: 'string' },
      'extra-body': { type: 'string' },
      json: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) throw new UsageError('generate takes exactly one input file');
  const servers = (values.server ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  if (servers.length === 0) throw new UsageError('generate needs --server URL (e.g. --server http://127.0.0.1:30000)');
  const reasoning = values.reasoning ?? 'keep';
  if (reasoning !== 'keep' && reasoning !== 'drop' && reasoning !== 'disable')
    throw new UsageError(`--reasoning must be keep, drop or disable (got "${reasoning}")`);
  const retries = values.retries === undefined ? undefined : Number(values.retries);
  if (retries !== undefined && (!Number.isInteger(retries) || retries < 0))
    throw new UsageError(`--retries must be a whole number ≥ 0 (got "${values.retries}")`);
  const temperature = values.temperature === undefined ? undefined : Number(values.temperature);
  if (temperature !== undefined && !(temperature >= 0)) throw new UsageError(`--temperature must be a number ≥ 0 (got "${values.temperature}")`);
  const timeoutS = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeoutS !== undefined && !(timeoutS > 0)) throw new UsageError(`--timeout must be a positive number of seconds (got "${values.timeout}")`);
  const keyEnv = values['api-key-env'] ?? 'OPENAI_API_KEY';
  if (values['api-key-env'] !== undefined && !process.env[keyEnv]) throw new UsageError(`--api-key-env ${keyEnv}: that environment variable is not set`);
  const opts: GenerateOptions = {
    input: positionals[0],
    out: values.out,
    servers,
    model: values.model,
    apiKey: process.env[keyEnv] || undefined,
    concurrency: parsePositiveInt('--concurrency', values.concurrency),
    maxTokens: parsePositiveInt('--max-tokens', values['max-tokens']),
    timeoutMs: timeoutS === undefined ? undefined : timeoutS * 1000,
    retries,
    backoffBaseMs: parsePositiveInt('--backoff-ms', values['backoff-ms']),
    temperature,
    reasoning,
    extraBody: parseExtraBody(values['extra-body']),
  };
  const ac = new AbortController();
  // SIGTERM too: what Slurm and Kubernetes send on cancel or preemption. The run aborts its temporary outputs.
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => ac.abort(new Error(`cancelled (${sig})`)));
  const quiet = values.quiet || values.json;
  const log = quiet ? undefined : (l: string) => process.stderr.write(l + '\n');
  const onProgress =
    quiet || !process.stderr.isTTY
      ? undefined
      : (p: { rowsRead: number; generated: number; failed: number; inFlight: number; tokensPerSecond: number }) =>
          process.stderr.write(
            `\r  read ${p.rowsRead}, generated ${p.generated}, failed ${p.failed}, in flight ${p.inFlight}, ${p.tokensPerSecond.toFixed(0)} tok/s   `,
          );
  const r = await generate(opts, { log, onProgress, signal: ac.signal });
  if (onProgress) process.stderr.write('\n');
  process.stdout.write(values.json ? JSON.stringify(r, null, 2) + '\n' : formatGenerateSummary(r) + '\n');
  return r.ok ? 0 : 1;
}

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  // `eagle3-prep prepare --help` (any command): the usage, exit 0.
  if (cmd !== undefined && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(USAGE);
    return 0;
  }
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
      case 'generate':
        return await cmdGenerate(rest);
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
