/**
 * The check behind the benchmark's warm `prepare` figure (scripts/bench-child.ts `sameAs`, docs/scale.md "Warm and
 * cold"): the warm run (a process warmed up on another input) must do exactly the work of the cold run of the same
 * input (a fresh process), so that nothing kept from the warm-up lets the measured run skip work.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What the instrumented encode of a run counted (bench-child.ts `instrumentEncode`). */
export interface EncodeStats {
  /** Wall and CPU ms inside the encode. */
  ms: number;
  cpuMs: number;
  tokens: number;
  /** Texts encoded, and their UTF-16 length in all. */
  calls: number;
  chars: number;
  /**
   * Pre-tokenized pieces (words) looked up in the tokenizer's caches during those calls (pieceEncoder.ts's piece cache,
   * wordCache.ts's word cache), and how many were found there (0 and 0 with the Rust backend).
   */
  pieces: number;
  found: number;
}

/** The work one `prepare` run did: its encode calls, its template renders (prefix renders served or rendered), its totals. */
export interface RunWork {
  encode: EncodeStats;
  renders: { render: number; spans: number; traced: number; proven: number; fallback: number };
  /** The run's totals (`PrepareResult.totals`), compared whole. */
  totals: unknown;
}

/** Every file under `dir` (relative paths, `/`-separated, sorted). */
function filesUnder(dir: string, at = ''): string[] {
  return readdirSync(join(dir, at), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(dir, `${at}${e.name}/`) : [`${at}${e.name}`]))
    .sort();
}

/**
 * A file of a run's output as it is compared between two runs of the same input: the bytes, except in the reports
 * (`report.json`, `report.md`) the output folder's path, which differs by construction, and the lines of the run's
 * time and speed (`elapsed_ms`, `tokens_per_second`, `rows_per_second`; `- Time:`), which are measurements.
 */
export function comparable(dir: string, file: string): Buffer | string {
  const bytes = readFileSync(join(dir, file));
  if (file !== 'report.json' && file !== 'report.md') return bytes;
  return bytes
    .toString('utf8')
    .split(dir)
    .join('<out>')
    .split('\n')
    .filter((l) => !/^\s*"(elapsed_ms|tokens_per_second|rows_per_second)": /.test(l) && !/^- Time: /.test(l))
    .join('\n');
}

/**
 * The warm run's check: the measured warm run (`b`, after a warm-up on another input in its process) did exactly the
 * work of the cold run of the same input (`a`, another process) — the same encode calls, encoded characters, tokens
 * and texts in the same order, the same pieces looked up in the tokenizer's caches (found or not: the hits may
 * differ), the same template renders and prefix renders, the same totals, and byte-identical output files (reports
 * compared by {@link comparable}) — so that nothing kept from the warm-up lets it skip work (what stays is the loaded
 * tokenizer with its word and piece caches, as the Rust library keeps its BPE cache: docs/scale.md "Warm and cold").
 * @param dirA the cold run's output folder; `dirB` the warm run's
 * @throws Error naming every difference
 */
export function assertSameWork(a: RunWork, b: RunWork, textsA: string[], textsB: string[], dirA: string, dirB: string): void {
  const diffs: string[] = [];
  const same = (what: string, x: unknown, y: unknown) => {
    if (JSON.stringify(x) !== JSON.stringify(y)) diffs.push(`${what}: ${JSON.stringify(x)} (cold run) vs ${JSON.stringify(y)} (warm run)`);
  };
  same('encode calls', a.encode.calls, b.encode.calls);
  same('encoded characters', a.encode.chars, b.encode.chars);
  same('encoded tokens', a.encode.tokens, b.encode.tokens);
  same('pieces looked up', a.encode.pieces, b.encode.pieces);
  same('template renders', a.renders, b.renders);
  same('totals', a.totals, b.totals);
  const k = textsA.findIndex((t, i) => t !== textsB[i]);
  if (k >= 0 || textsA.length !== textsB.length) diffs.push(`encoded texts differ (first at call ${k >= 0 ? k : Math.min(textsA.length, textsB.length)})`);
  const filesA = filesUnder(dirA);
  const filesB = filesUnder(dirB);
  same('output files', filesA, filesB);
  for (const f of filesA.filter((x) => filesB.includes(x))) {
    const x = comparable(dirA, f);
    const y = comparable(dirB, f);
    if (typeof x === 'string' ? x !== y : !(y instanceof Buffer && x.equals(y))) diffs.push(`output file ${f} differs`);
  }
  if (diffs.length)
    throw new Error(
      `the warm run did not do the cold run's work on the same input (a memo kept from its warm-up, or a template-check cache entry ` +
        `written by the cold run: bench.mjs fills it before the rounds):\n  ${diffs.join('\n  ')}`,
    );
}
