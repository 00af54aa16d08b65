/**
 * The inputs of a run: folder expansion, the default output folder of an
 * input and the grouping of inputs by it, default record ids, and the default
 * number of row workers.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { availableParallelism, loadavg } from 'node:os';
import { DATASET_FILE_RE } from '../../read/readers';
import {
  CONVERSATIONS_FILE,
  CONVERSATIONS_SHAREGPT_FILE,
  OUTPUT_DIR_SUFFIX,
  OUTPUT_FILES,
  previousRunFiles,
  PROBLEMS_FILE,
  RECORDS_DIR,
  SPECULATORS_DIR,
  TOKEN_COUNTS_FILE,
  TOKENIZED_DATA_PARQUET,
} from '../outputFiles';

/** File extensions `prepare` reads when given a folder (each also gzip- or zstd-compressed, `read/readers` DATASET_FILE_RE). */
export const DATASET_EXTENSIONS = ['.jsonl', '.ndjson', '.json', '.traj', '.parquet'];

/** Whether folder expansion takes a file of this name as a dataset (`x.jsonl`, `x.jsonl.gz`, `run.traj`, …). */
function isDatasetName(name: string): boolean {
  return DATASET_FILE_RE.test(name);
}

/** Inputs smaller than this (bytes, all files together) run in one thread by default. */
export const SMALL_INPUT_BYTES = 4 * 1024 * 1024;

/**
 * The default number of row workers for a run over `inputs` (paths), also `--workers auto`: the cores
 * that are free — the available cores (`os.availableParallelism()`) less the machine's 1-minute load
 * average (`os.loadavg()`, the processes already running or waiting for a core), rounded, at least 1
 * and at most every core — so a busy machine is not oversubscribed (issue 25: on a machine loaded by
 * other work, 2 workers on 2 cores ran slower than 1). 1 when the inputs add up to less than
 * {@link SMALL_INPUT_BYTES}, where starting the pool (a tokenizer load per worker, ~1-3 s) costs more
 * than it saves (`npm run bench`: 1,000 reasoning rows ran 0.65x at 2 workers). Missing files count 0
 * (the run reports them).
 * @param machine the cores and the 1-minute load average; this machine's by default (tests pass their own)
 */
export function defaultWorkerCount(
  inputs: readonly string[],
  machine: { cpus: number; load: number } = { cpus: availableParallelism(), load: loadavg()[0] ?? 0 },
): number {
  let bytes = 0;
  for (const f of inputs) {
    try {
      bytes += statSync(f).size;
    } catch {
      /* reported by the run */
    }
  }
  if (bytes < SMALL_INPUT_BYTES) return 1;
  const free = Math.round(machine.cpus - (Number.isFinite(machine.load) ? machine.load : 0));
  return Math.max(1, Math.min(machine.cpus, free));
}

/**
 * The name each input's default record ids start with (`<name>:<line>`,
 * formats/common.ts): its file name, or, for inputs of one run that share a
 * file name (`a/data.jsonl`, `b/data.jsonl` into one `--out`), its path from the
 * folder they have in common, so no two rows of a run share a default id.
 * @param files absolute paths
 * @returns absolute path → id base, for every input
 */
export function defaultIdBases(files: readonly string[]): Map<string, string> {
  const byName = new Map<string, string[]>();
  for (const f of files) byName.set(basename(f), [...(byName.get(basename(f)) ?? []), f]);
  const out = new Map<string, string>();
  for (const [name, group] of byName) {
    if (group.length === 1) {
      out.set(group[0], name);
      continue;
    }
    let common = dirname(group[0]);
    while (!group.every((f) => f.startsWith(common.endsWith(sep) ? common : common + sep)) && dirname(common) !== common) common = dirname(common);
    for (const f of group) out.set(f, relative(common, f).split(sep).join('/'));
  }
  return out;
}

/**
 * The default output folder of an input: `<input-name>.eagle3/` beside it
 * (`data/chat.jsonl` → `data/chat.eagle3`).
 */
export function defaultOutDir(input: string): string {
  const abs = resolve(input);
  const name = basename(abs).replace(DATASET_FILE_RE, '');
  return join(dirname(abs), `${name}${OUTPUT_DIR_SUFFIX}`);
}

/** The files a run writes; in a folder that holds a `report.json` beside them they are outputs, not datasets. */
const OUTPUT_NAMES: string[] = [...Object.values(OUTPUT_FILES), TOKEN_COUNTS_FILE, TOKENIZED_DATA_PARQUET, PROBLEMS_FILE];
function isRunOutput(dir: string, name: string): boolean {
  // conversations.jsonl / conversations_sharegpt.jsonl are common dataset names: outputs only when the report beside them lists them.
  if (name === CONVERSATIONS_FILE || name === CONVERSATIONS_SHAREGPT_FILE) return previousRunFiles(dir).includes(resolve(dir, name));
  if (!OUTPUT_NAMES.includes(name)) return false;
  // The records folder itself given as an input: its records are outputs of the run beside it.
  return existsSync(join(dir, OUTPUT_FILES.reportJson)) || (basename(dir) === RECORDS_DIR && existsSync(join(dirname(dir), OUTPUT_FILES.reportJson)));
}

/** The folders a run writes inside its output folder (`data/`, `speculators/`): a folder holding a `report.json` keeps its outputs there, not datasets. */
function isRunOutputFolder(dir: string, name: string): boolean {
  return (name === RECORDS_DIR || name === SPECULATORS_DIR) && existsSync(join(dir, OUTPUT_FILES.reportJson));
}

/**
 * Groups inputs by their default output folder (`defaultOutDir`), so that
 * `d.json` and `d.jsonl` beside each other share one run instead of one
 * overwriting the other's outputs. Duplicate paths are kept once. Order: first appearance.
 */
export function groupByDefaultOutDir(inputs: string[]): { inputs: string[]; outDir: string }[] {
  const groups = new Map<string, string[]>();
  for (const f of inputs.map((x) => resolve(x))) {
    const d = defaultOutDir(f);
    const g = groups.get(d) ?? [];
    if (!g.includes(f)) g.push(f);
    groups.set(d, g);
  }
  return [...groups].map(([outDir, files]) => ({ inputs: files, outDir }));
}

/**
 * Expands folders into the dataset files they hold (recursively, sorted;
 * skipping `*.eagle3` output folders, the `data/` and `speculators/` folders of
 * an output folder elsewhere (`--out`), `node_modules` and dot folders).
 * Files are returned as given (resolved).
 * @throws Error naming a path that does not exist
 */
export function expandInputs(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) {
        if (!name.startsWith('.') && name !== 'node_modules' && !name.endsWith(OUTPUT_DIR_SUFFIX) && !isRunOutputFolder(dir, name)) walk(p);
      } else if (isDatasetName(name) && !name.startsWith('.') && !isRunOutput(dir, name)) out.push(p);
    }
  };
  for (const p of paths) {
    const abs = resolve(p);
    if (!existsSync(abs)) throw new Error(`input not found: ${p}`);
    if (statSync(abs).isDirectory()) walk(abs);
    else out.push(abs);
  }
  return [...new Set(out)];
}
