/**
 * What a `generate` run reports: its result (counts by outcome, requests, tokens, rates, failures) and the same as
 * text lines.
 */

/** The report of a run (`<out>.report.json`-like; the CLI prints it with --json). */
export interface GenerateResult {
  ok: boolean;
  cancelled: boolean;
  failures: string[];
  input: string;
  out: string;
  journal: string;
  model: string;
  servers: { url: string; limit: number; requests: number; failures: number }[];
  rowsRead: number;
  /** Written to the output by this run, by outcome (`ok`, `tool_call_diverged`). */
  generated: number;
  toolCallDiverged: number;
  /** Rows whose id was already in the output or journal (resume). */
  alreadyDone: number;
  /** Stopped by `max_tokens` (journaled, not written). */
  truncated: number;
  reasoningWithoutAnswer: number;
  /** reason → { count, first messages (≤ 5) }. */
  failed: Record<string, { count: number; examples: string[] }>;
  failedTotal: number;
  requests: number;
  retries: number;
  /** Rows written with generated token ids for every turn / without. */
  withTokenIds: number;
  withoutTokenIds: number;
  promptTokens: number;
  completionTokens: number;
  elapsedMs: number;
  requestsPerSecond: number;
  completionTokensPerSecond: number;
  /** Bytes of a torn last line cut from the output/journal on resume. */
  tornBytesCut: number;
}

/** A report with every count at zero. */
export function emptyResult(input: string, out: string, journal: string, model: string, tornBytesCut: number): GenerateResult {
  return {
    ok: false,
    cancelled: false,
    failures: [],
    input,
    out,
    journal,
    model,
    servers: [],
    rowsRead: 0,
    generated: 0,
    toolCallDiverged: 0,
    alreadyDone: 0,
    truncated: 0,
    reasoningWithoutAnswer: 0,
    failed: {},
    failedTotal: 0,
    requests: 0,
    retries: 0,
    withTokenIds: 0,
    withoutTokenIds: 0,
    promptTokens: 0,
    completionTokens: 0,
    elapsedMs: 0,
    requestsPerSecond: 0,
    completionTokensPerSecond: 0,
    tornBytesCut,
  };
}

/** The report as text lines (CLI and output channel). */
export function formatGenerateSummary(r: GenerateResult): string {
  const lines = [
    `${r.ok ? 'OK' : r.cancelled ? 'CANCELLED' : 'FAILED'}  ${r.out}  (model ${r.model})`,
    `  rows ${r.rowsRead}: generated ${r.generated}${r.toolCallDiverged ? ` (${r.toolCallDiverged} stopped at a diverging tool call)` : ''}, already done ${r.alreadyDone}, ` +
      `truncated by max_tokens ${r.truncated}, reasoning without answer ${r.reasoningWithoutAnswer}, failed ${r.failedTotal}`,
    `  requests ${r.requests} (${r.retries} retried), ${r.requestsPerSecond.toFixed(1)} req/s, ${r.completionTokens} completion tokens, ${r.completionTokensPerSecond.toFixed(1)} tok/s, ${(r.elapsedMs / 1000).toFixed(1)} s`,
    `  token ids returned for ${r.withTokenIds} rows, missing for ${r.withoutTokenIds} (prepare re-tokenizes those)`,
    ...r.servers.map((s) => `  server ${s.url}: limit ${s.limit}, ${s.requests} requests, ${s.failures} transient failures`),
  ];
  for (const [k, v] of Object.entries(r.failed)) lines.push(`  failed ${k} ${v.count}: ${v.examples[0]}`);
  for (const f of r.failures) lines.push(`  error: ${f}`);
  return lines.join('\n');
}
