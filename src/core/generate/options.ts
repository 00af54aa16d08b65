/**
 * What a `generate` run is asked: its options (input, output, servers, model, request settings), the hooks it
 * reports through, and how the output path and server URLs are resolved.
 */
import { basename, dirname, join, resolve } from 'node:path';
import { DATASET_FILE_RE } from '../read/readers';
import { GENERATED_FILE, GENERATED_SUFFIX, OUTPUT_FILES } from '../run/outputFiles';
import type { ReasoningMode } from './client';

/** Options of one `generate` run. */
export interface GenerateOptions {
  /** Input JSONL/JSON file. */
  input: string;
  /** Output JSONL; default {@link defaultGenerateOut}. The journal is `<out>.journal`. */
  out?: string;
  /** Server roots (`http://host:port`, a trailing `/v1` is accepted and removed). */
  servers: string[];
  /** Model name sent in requests; default: the first model of the first server's `GET /v1/models`. */
  model?: string;
  /** Bearer token; the CLI reads it from an environment variable, the extension from SecretStorage. Never logged. */
  apiKey?: string;
  /** Requests in flight per server; default: the server's `max_running_requests` when it reports one (SGLang), else {@link DEFAULT_CONCURRENCY}. */
  concurrency?: number;
  /** `max_tokens` per turn; default 8192. */
  maxTokens?: number;
  temperature?: number;
  /** Per-request deadline in ms; default 600 000 (10 min). */
  timeoutMs?: number;
  /** Retries per request on transient failures; default 8. */
  retries?: number;
  /** Backoff base and cap in ms; default 1000 and 60 000. */
  backoffBaseMs?: number;
  backoffCapMs?: number;
  reasoning?: ReasoningMode;
  /** Ask for token ids through logprobs too (older vLLM). */
  logprobTokenIds?: boolean;
  /** Extra request fields (`{"top_p": 0.95}`). */
  extraBody?: Record<string, unknown>;
  /** fdatasync interval of the output and journal (ms); default 1000. */
  fsyncIntervalMs?: number;
}

/** Requests in flight per server when neither the user nor the server says (vLLM's default `--max-num-seqs` is 256 on GPUs; 64 keeps latency per request low). */
export const DEFAULT_CONCURRENCY = 64;

export interface GenerateProgress {
  rowsRead: number;
  generated: number;
  alreadyDone: number;
  failed: number;
  /** length + reasoning_without_answer. */
  notWritten: number;
  inFlight: number;
  completionTokens: number;
  /** Completion tokens per second since the start (this process). */
  tokensPerSecond: number;
}

export interface GenerateHooks {
  onProgress?: (p: GenerateProgress) => void;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** `x/prompts_to_generate.jsonl` → `x/generated.jsonl`; `x/data.jsonl` (or `.json.gz`, `.parquet`, … — `read/readers` `DATASET_FILE_RE`) → `x/data.generated.jsonl`. */
export function defaultGenerateOut(input: string): string {
  const abs = resolve(input);
  const name = basename(abs);
  if (name === OUTPUT_FILES.promptsToGenerate) return join(dirname(abs), GENERATED_FILE);
  return join(dirname(abs), name.replace(DATASET_FILE_RE, '') + GENERATED_SUFFIX);
}

/** `http://h:1/v1/` → `http://h:1`. @throws Error for a URL that is not http(s) */
export function normalizeServerUrl(u: string): string {
  let url: URL;
  try {
    url = new URL(u.trim());
  } catch {
    throw new Error(`--server "${u}" is not a URL (e.g. http://127.0.0.1:30000)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--server "${u}" must be http:// or https://`);
  return url.toString().replace(/\/+$/, '').replace(/\/v1$/, '');
}
