/** `eagle3-prep generate`: answers prompt-only conversations with the target model on OpenAI-compatible servers. */
import { generate } from '../core/generate/run';
import type { GenerateOptions } from '../core/generate/options';
import { formatGenerateSummary } from '../core/generate/report';
import { REASONING_MODES, type ReasoningMode } from '../core/generate/client';
import {
  addOptions,
  applyOptions,
  Command,
  commaList,
  EXIT,
  json,
  jsonObject,
  nonNegativeInt,
  nonNegativeNumber,
  out,
  positiveInt,
  positiveNumber,
  setUsageHint,
  usageError,
  type OptionSpec,
} from './command';
import { abortOnSignals } from './signals';
import { awaitServers } from '../core/generate/preflight';

/** Deadline of the check before a run (one GET /v1/models per server): a closed port or a silent server fails within it. */
const PREFLIGHT_MS = 1500;
import { toSnakeJson } from '../core/run/reports/jsonCase';

/** Version of the `generate --json` document (snake_case; docs/outputs.md "report.json"). */
export const GENERATE_SCHEMA_VERSION = 1;

const OPTIONS: readonly OptionSpec<GenerateOptions>[] = [
  {
    flags: '--server <urls>',
    help: 'Server roots, comma-separated or repeated (http://host:port; a trailing /v1 is accepted). Requests are spread over them. Required.',
    parse: commaList,
    apply: (o, v: string[]) => (o.servers = v),
  },
  { flags: '--model <name>', help: 'Model name sent in requests.', defaultText: 'the first model of GET /v1/models', apply: (o, v: string) => (o.model = v) },
  {
    flags: '--out <file>',
    help: 'Output JSONL (OpenAI messages, read by prepare); rerun with the same --out to resume (rows keyed by id).',
    defaultText: 'generated.jsonl beside prompts_to_generate.jsonl, <name>.generated.jsonl beside any other input',
    apply: (o, v: string) => (o.out = v),
  },
  {
    flags: '--concurrency <n>',
    help: 'Requests in flight per server.',
    defaultText: "the server's max_running_requests (SGLang), else 64",
    parse: positiveInt,
    apply: (o, v: number) => (o.concurrency = v),
  },
  {
    flags: '--max-tokens <n>',
    help: 'max_tokens per turn; a turn that hits it is counted as truncated and not written.',
    defaultText: '8192',
    parse: positiveInt,
    apply: (o, v: number) => (o.maxTokens = v),
  },
  {
    flags: '--timeout <seconds>',
    help: 'Per-request deadline; timed-out requests are retried with backoff.',
    defaultText: '600',
    parse: positiveNumber,
    apply: (o, v: number) => (o.timeoutMs = v * 1000),
  },
  {
    flags: '--retries <n>',
    help: 'Retries per request on transient failures (connection errors, 429, 5xx, timeouts).',
    defaultText: '8',
    parse: nonNegativeInt,
    apply: (o, v: number) => (o.retries = v),
  },
  {
    flags: '--backoff-ms <ms>',
    help: 'Base of the exponential retry backoff (capped at 60 s).',
    defaultText: '1000',
    parse: positiveInt,
    apply: (o, v: number) => (o.backoffBaseMs = v),
  },
  {
    flags: '--temperature <x>',
    help: 'Sampling temperature sent in requests.',
    defaultText: "the server's default",
    parse: nonNegativeNumber,
    apply: (o, v: number) => (o.temperature = v),
  },
  {
    flags: '--reasoning <mode>',
    help: "What to do with the model's reasoning: keep reasoning_content in the written turns; drop it; or disable thinking (chat_template_kwargs enable_thinking false).",
    choices: REASONING_MODES,
    default: 'keep',
    apply: (o, v: ReasoningMode) => (o.reasoning = v),
  },
  {
    flags: '--api-key-env <name>',
    help: 'Environment variable holding the API key (sent as a Bearer token, never printed).',
    defaultText: 'OPENAI_API_KEY',
  },
  {
    flags: '--extra-body <json>',
    help: 'Extra request fields as a JSON object, e.g. \'{"top_p": 0.95}\'.',
    parse: jsonObject,
    apply: (o, v: Record<string, unknown>) => (o.extraBody = v),
  },
  {
    flags: '--wait-for-server <seconds>',
    help: 'Before the run, wait up to this long for every server to answer GET /v1/models (a server still loading); 0 checks once and fails within 1.5 s.',
    defaultText: '0',
    parse: nonNegativeNumber,
  },
  { flags: '--json', help: 'Print the result as one JSON object instead of the summary.' },
  { flags: '--quiet', help: 'No progress line and no log on stderr.' },
];

/** Declares `generate` on the program. */
export function registerGenerate(program: Command, done: (code: number) => void): void {
  const cmd = program
    .command('generate')
    .summary('answer prompt-only conversations with the target model (SGLang, vLLM)')
    .description(
      "Answers every conversation of the input (prepare's prompts_to_generate.jsonl, or any dataset prepare reads) with the target model on " +
        'OpenAI-compatible servers, every assistant turn in order, and appends them as OpenAI messages JSONL that prepare reads.',
    )
    .argument('<prompts>', 'prompts_to_generate.jsonl or another dataset file');
  addOptions(cmd, OPTIONS as readonly OptionSpec<never>[]);
  cmd.addHelpText('after', '\nExit codes: 0 every row answered or already done; 1 rows failed (rerun to resume) or cancelled; 2 usage error.');
  setUsageHint(cmd);
  cmd.action(async (input: string, v: Record<string, unknown>, self: Command) => {
    const opts = applyOptions({ input, servers: [] } as GenerateOptions, OPTIONS, v);
    if (opts.servers.length === 0) usageError(self, 'generate needs --server URL (e.g. --server http://127.0.0.1:30000)');
    const keyEnv = (v.apiKeyEnv as string | undefined) ?? 'OPENAI_API_KEY';
    if (v.apiKeyEnv !== undefined && !process.env[keyEnv]) usageError(self, `--api-key-env ${keyEnv}: that environment variable is not set`);
    opts.apiKey = process.env[keyEnv] || undefined;
    const cancel = abortOnSignals();
    const quiet = v.quiet === true || v.json === true;
    const log = quiet ? undefined : (l: string) => process.stderr.write(l + '\n');
    const onProgress =
      quiet || !process.stderr.isTTY
        ? undefined
        : (p: { rowsRead: number; generated: number; failed: number; inFlight: number; tokensPerSecond: number }) =>
            process.stderr.write(
              `\r  read ${p.rowsRead}, generated ${p.generated}, failed ${p.failed}, in flight ${p.inFlight}, ${p.tokensPerSecond.toFixed(0)} tok/s   `,
            );
    try {
      // Each server once before any row: a closed port or a server that answers nothing fails here, in seconds, not after the retries of every row.
      const waitMs = ((v.waitForServer as number | undefined) ?? 0) * 1000;
      const checks = await awaitServers(opts.servers, {
        apiKey: opts.apiKey,
        timeoutMs: PREFLIGHT_MS,
        waitMs,
        signal: cancel.signal,
        keyHint: `set the key in the environment variable ${keyEnv}${v.apiKeyEnv === undefined ? ' (or name another with --api-key-env)' : ''}`,
        log,
      });
      const bad = checks.filter((c) => !c.ok);
      if (bad.length)
        throw new Error(
          `generate: ${bad.map((c) => `${c.url} — ${c.error}`).join('; ')}. Check --server (the SGLang / vLLM server's host and port)` +
            `${waitMs ? '' : ', or wait for a server still starting with --wait-for-server SECONDS'}; nothing was written`,
        );
      for (const c of checks) log?.(`server ${c.url}: ${c.models.join(', ')} (${c.ms} ms)`);
      const r = await generate(opts, { log, onProgress, signal: cancel.signal });
      if (onProgress) process.stderr.write('\n');
      out(v.json ? json(toSnakeJson(r, GENERATE_SCHEMA_VERSION)) : formatGenerateSummary(r) + '\n');
      done(r.ok ? EXIT.ok : EXIT.failed);
    } finally {
      cancel.dispose();
    }
  });
}
