/**
 * The `prepare` job: read → detect → normalize → render → mask → tokenize → write.
 * The option/result shapes below are the contract the CLI, the worker and the
 * extension use. Accounting rule (spec loss-mask.md "Records that are not
 * written"): every row read ends written, set aside for generation, dropped
 * with a reason code, or errored; the four add up to the rows read, per file.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { DETECT_SAMPLE_SIZE, detectFormat } from './formats/detect';
import { normalizeRow } from './formats/normalize';
import { explainUnusableInput } from './inspect';
import { applyProjectConfig, loadProjectConfigFor } from './projectConfig';
import { checkTemplate, type TemplateCheck } from './checkTemplate';
import { applyGeneratedIds, generatedTurnsOf, type GeneratedTurnIds } from './generate/generatedIds';
import { buildRecords, maskFromSpans, SpecialTokenFinder, TemplateRenderError } from './mask';
import { AtomicOutput } from './output';
import { readRows, type RawRow } from './readers';
import { writeReports } from './report';
import { ChatTemplate, pickTemplate } from './template';
import { loadTokenizer, TokenizerLoadError, type TargetTokenizer } from './tokenizer';
import type { Conversation, MaskPolicy, TokenizedRecord } from './types';

/** Options of one `prepare` run. All inputs of one run share one output folder. */
export interface PrepareOptions {
  /** Input dataset files (absolute or relative to cwd). Folders are expanded by the caller (see `expandInputs`). */
  inputs: string[];
  /** Output folder; created if missing. */
  outDir: string;
  /** Local Hugging Face model folder with tokenizer files; undefined = the embedded default (Qwen3). */
  tokenizerDir?: string;
  /** Spec loss-mask.md "Targets"; default `assistant`. */
  mask?: MaskPolicy;
  /** Maximum record length in tokens; undefined = no limit. */
  maxLength?: number;
  /** Keep the first `maxLength` tokens instead of dropping `too_long` records. */
  truncate?: boolean;
  /** Extra variables for the chat template (`enable_thinking`, …). */
  templateKwargs?: Record<string, unknown>;
  /** Exit 0 even when an input yields no record and no prompt. */
  allowEmpty?: boolean;
  /** A field-mapping file (issue 3, `formats/mapping.ts`); default: the nearest `eagle3prep.jsonc` beside each input. */
  mapping?: string;
}

/** Progress event, emitted at most every ~100 ms and once at each file end. */
export interface PrepareProgress {
  file: string;
  fileIndex: number;
  fileCount: number;
  rowsRead: number;
  recordsWritten: number;
  /** Bytes of the current file consumed so far and its size, for a percentage. */
  bytesRead: number;
  bytesTotal: number;
}

export interface PrepareHooks {
  onProgress?: (p: PrepareProgress) => void;
  /** Log lines for an output channel / stderr. */
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** Per-input-file accounting; `written + setAside + dropped + errored == rowsRead` always. */
export interface FileReport {
  file: string;
  format: string;
  evidence: string[];
  rowsRead: number;
  /** Rows that produced at least one written record. */
  rowsWritten: number;
  recordsWritten: number;
  /** Rows set aside in prompts_to_generate.jsonl. */
  rowsSetAside: number;
  rowsDropped: number;
  rowsErrored: number;
  /** reason code → { count, first line numbers (at most 10) }. */
  dropped: Record<string, { count: number; lines: number[] }>;
  /** First errors (at most 50) with line and message. */
  errors: { line: number; message: string }[];
  /** note code → count (e.g. template_rewrites_history). */
  notes: Record<string, number>;
  trainableTokens: number;
  totalTokens: number;
  /** The input's size (bytes) and modification time (ms since the epoch) when the run read it (datasets tree: stale outputs). */
  input?: { size: number; mtimeMs: number };
}

/** The result of a run, also written as `report.json`. */
export interface PrepareResult {
  ok: boolean;
  /** Why the run failed (e.g. `samples/x.jsonl yielded no record and no prompt`). */
  failures: string[];
  outDir: string;
  outputs: { tokenizedData: string; promptsToGenerate: string; reportJson: string; reportMd: string };
  tokenizer: { dir: string; name: string; hash: string; embeddedDefault: boolean };
  templateKwargs: Record<string, unknown>;
  mask: MaskPolicy;
  maxLength: number | null;
  truncate: boolean;
  /**
   * The chat-template check run once per run (`eagle3-prep check-template`, issue 4):
   * its findings without the probe renders; null when the template could not be checked.
   */
  templateCheck: Omit<TemplateCheck, 'records' | 'turns'> | null;
  files: FileReport[];
  totals: Omit<FileReport, 'file' | 'format' | 'evidence' | 'errors' | 'dropped' | 'notes'> & { dropped: Record<string, number> };
  elapsedMs: number;
}

/** File extensions `prepare` reads when given a folder. */
export const DATASET_EXTENSIONS = ['.jsonl', '.json'];

/**
 * The default output folder of an input: `<input-name>.eagle3/` beside it
 * (`data/chat.jsonl` → `data/chat.eagle3`).
 */
export function defaultOutDir(input: string): string {
  const abs = resolve(input);
  const name = basename(abs).replace(/\.(jsonl|json|ndjson)(\.gz|\.zst)?$/i, '');
  return join(dirname(abs), `${name}.eagle3`);
}

/** The files a run writes; in a folder that holds a `report.json` beside them they are outputs, not datasets. */
const OUTPUT_NAMES = ['tokenized_data.jsonl', 'prompts_to_generate.jsonl', 'report.json'];
function isRunOutput(dir: string, name: string): boolean {
  return OUTPUT_NAMES.includes(name) && existsSync(join(dir, 'report.json'));
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
 * skipping `*.eagle3` output folders, `node_modules` and dot folders).
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
        if (!name.startsWith('.') && name !== 'node_modules' && !name.endsWith('.eagle3')) walk(p);
      } else if (DATASET_EXTENSIONS.includes(extname(name).toLowerCase()) && !name.startsWith('.') && !isRunOutput(dir, name)) out.push(p);
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

const tokenizerCache = new Map<string, TargetTokenizer>();

/**
 * Loads a tokenizer once per process: runs over several inputs (and the
 * extension's repeated runs) reuse it while its files are unchanged (keyed by
 * folder and the files' modification times).
 */
function cachedTokenizer(dir: string | undefined): TargetTokenizer {
  const folder = dir ? resolve(dir) : '';
  const stamp = folder
    ? ['tokenizer.json', 'tiktoken.model', 'tokenizer_config.json', 'chat_template.jinja']
        .map((f) => (existsSync(join(folder, f)) ? statSync(join(folder, f)).mtimeMs : 0))
        .join(',')
    : 'embedded';
  const key = `${folder}|${stamp}`;
  let tok = tokenizerCache.get(key);
  if (!tok) {
    tok = loadTokenizer(dir);
    tokenizerCache.set(key, tok);
  }
  return tok;
}

/** Rows sampled from the start of a file to detect its format. */
const DETECT_SAMPLE = DETECT_SAMPLE_SIZE;

function emptyFileReport(file: string): FileReport {
  return {
    file, format: 'unknown', evidence: [], rowsRead: 0, rowsWritten: 0, recordsWritten: 0, rowsSetAside: 0,
    rowsDropped: 0, rowsErrored: 0, dropped: {}, errors: [], notes: {}, trainableTokens: 0, totalTokens: 0,
  };
}

/** The per-run state shared by all files: tokenizer, templates and the open outputs. */
interface RunContext {
  tok: TargetTokenizer;
  specials: SpecialTokenFinder;
  templates: Map<string, ChatTemplate>;
  opts: Required<Pick<PrepareOptions, 'mask' | 'truncate'>> & PrepareOptions;
  data: AtomicOutput;
  prompts: AtomicOutput;
}

function templateFor(ctx: RunContext, hasTools: boolean): ChatTemplate {
  const named = pickTemplate(ctx.tok.templates, hasTools);
  if (!named) throw new TemplateRenderError(`tokenizer ${ctx.tok.dir} has no chat template (tokenizer_config.json "chat_template" or chat_template.jinja)`);
  let t = ctx.templates.get(named.name);
  if (!t) {
    t = new ChatTemplate(named, ctx.tok.specialTokenVars, ctx.opts.templateKwargs ?? {});
    ctx.templates.set(named.name, t);
  }
  return t;
}

function drop(rep: FileReport, line: number, reason: string) {
  rep.rowsDropped++;
  const d = (rep.dropped[reason] ??= { count: 0, lines: [] });
  d.count++;
  if (d.lines.length < 10) d.lines.push(line);
}

function error(rep: FileReport, line: number, message: string) {
  rep.rowsErrored++;
  if (rep.errors.length < 50) rep.errors.push({ line, message });
}

function note(rep: FileReport, code: string) {
  rep.notes[code] = (rep.notes[code] ?? 0) + 1;
}

/** Turns one conversation into tokenized records and writes them; updates the file report with the row's fate. */
async function processConversation(ctx: RunContext, rep: FileReport, conv: Conversation, generated?: GeneratedTurnIds[]): Promise<number> {
  const line = conv.source.line;
  let built;
  let template: ChatTemplate | undefined;
  try {
    template = templateFor(ctx, (conv.tools?.length ?? 0) > 0);
    built = buildRecords(conv, template, ctx.specials, ctx.opts.mask);
  } catch (e) {
    if (e instanceof TemplateRenderError) {
      error(rep, line, `chat template error: ${e.message}`);
      return 0;
    }
    throw e;
  }
  for (const n of built.notes) note(rep, n);
  if (built.records.length > 1) note(rep, 'split_into_records');
  for (const te of built.targetErrors) note(rep, te.reason);
  let written = 0;
  let lastDrop: string | null = built.targetCount === 0 ? 'no_trainable_tokens' : null;
  for (let r = 0; r < built.records.length; r++) {
    const rec = built.records[r];
    const enc = ctx.tok.encode(rec.text);
    if (!enc.exactOffsets) note(rep, 'offsets_approximate');
    let ids = enc.ids;
    let mask = maskFromSpans(enc.starts, rec.spans);
    // Rows written by `generate` carry the generated token ids (src/core/generate/generatedIds.ts).
    let idsSource: 'generated' | 'retokenized' | undefined;
    if (generated) {
      const g = applyGeneratedIds(rec, enc, mask, generated, (x) => ctx.tok.decode(x));
      ({ ids, mask } = g);
      idsSource = g.source;
      note(rep, g.source === 'generated' ? 'generated_token_ids_used' : `retokenized_${g.reason}`);
    }
    const max = ctx.opts.maxLength;
    if (max !== undefined && ids.length > max) {
      if (!ctx.opts.truncate) {
        lastDrop = 'too_long';
        note(rep, 'record_dropped_too_long');
        continue;
      }
      ids = ids.slice(0, max);
      mask = mask.slice(0, max);
      note(rep, 'record_truncated');
    }
    const nResp = mask.reduce((a, b) => a + b, 0);
    if (nResp === 0) {
      lastDrop = 'no_trainable_tokens';
      note(rep, 'record_dropped_no_trainable_tokens');
      continue;
    }
    const out: TokenizedRecord = {
      id: built.records.length > 1 ? `${conv.id}#${r}` : conv.id,
      source: { file: conv.source.file, line },
      input_ids: ids,
      loss_mask: mask,
      seq_len: ids.length,
      n_prompt_tokens: ids.length - nResp,
      n_response_tokens: nResp,
      ...(idsSource ? { ids_source: idsSource } : {}),
    };
    await ctx.data.write(JSON.stringify(out) + '\n');
    written++;
    rep.recordsWritten++;
    rep.trainableTokens += nResp;
    rep.totalTokens += ids.length;
  }
  if (written > 0) rep.rowsWritten++;
  else if (built.targetErrors.length > 0) {
    const te = built.targetErrors[0];
    error(rep, line, `${te.reason}: ${te.message}; template "${template.named.name}" of ${ctx.tok.dir}`);
  } else drop(rep, line, lastDrop ?? 'no_trainable_tokens');
  return written;
}

/**
 * Runs `prepare` over the inputs into one output folder.
 *
 * Writes `tokenized_data.jsonl` (one {@link TokenizedRecord} per line, input
 * order), `prompts_to_generate.jsonl` (`{"id", "source", "messages", "tools"?}`
 * per prompt-only row), `report.json` ({@link PrepareResult}) and `report.md`,
 * each atomically (temp file + rename; nothing is left half-written on error or
 * cancel). Inputs are only read.
 *
 * @returns the result; `ok` is false (with `failures`) when an input yields no
 *   record and no prompt, unless `allowEmpty`.
 * @throws TokenizerLoadError for an unusable tokenizer folder; Error for a
 *   missing input; the signal's reason when aborted.
 */
export async function prepare(options: PrepareOptions, hooks: PrepareHooks = {}): Promise<PrepareResult> {
  const t0 = Date.now();
  const opts = { mask: 'assistant' as MaskPolicy, truncate: false, ...options };
  const tok = cachedTokenizer(opts.tokenizerDir);
  if (tok.templates.length === 0) {
    throw new TokenizerLoadError(`${tok.dir}: no chat template (tokenizer_config.json "chat_template", chat_template.jinja or chat_template.json); records cannot be rendered as the target model serves them`);
  }
  hooks.log?.(`tokenizer: ${tok.name} (${tok.dir}, sha256 ${tok.hash})`);
  let templateCheck: PrepareResult['templateCheck'] = null;
  try {
    const { records: _r, turns: _t, ...findings } = checkTemplate(tok, { templateKwargs: opts.templateKwargs, mask: opts.mask });
    templateCheck = findings;
    hooks.log?.(
      `chat template: ${findings.prefixStable ? 'prefix-stable' : 'rewrites history'}; end of turn trained ${JSON.stringify(findings.endOfTurnTrained)}` +
        (findings.defaultSystemPrompt ? `; injects a default system prompt` : '') +
        (findings.generationPromptScaffold ? `; generation prompt pre-fills ${JSON.stringify(findings.generationPromptScaffold)}` : ''),
    );
  } catch (e) {
    hooks.log?.(`chat template check failed: ${(e as Error).message}`);
  }
  const outDir = resolve(opts.outDir);
  const outputs = {
    tokenizedData: join(outDir, 'tokenized_data.jsonl'),
    promptsToGenerate: join(outDir, 'prompts_to_generate.jsonl'),
    reportJson: join(outDir, 'report.json'),
    reportMd: join(outDir, 'report.md'),
  };
  const outputPaths = new Set(Object.values(outputs));
  for (const input of opts.inputs) {
    if (outputPaths.has(resolve(input))) throw new Error(`${resolve(input)} is an output of this run (--out ${outDir}); inputs are never overwritten: choose another --out`);
  }
  const ctx: RunContext = {
    tok,
    specials: new SpecialTokenFinder(tok.specialTokens),
    templates: new Map(),
    opts,
    data: new AtomicOutput(outputs.tokenizedData),
    prompts: new AtomicOutput(outputs.promptsToGenerate),
  };
  const files: FileReport[] = [];
  try {
    for (let fi = 0; fi < opts.inputs.length; fi++) {
      const file = resolve(opts.inputs[fi]);
      const rep = emptyFileReport(file);
      files.push(rep);
      const inputStat = statSync(file);
      const bytesTotal = inputStat.size;
      rep.input = { size: inputStat.size, mtimeMs: inputStat.mtimeMs };
      // eagle3prep.jsonc (role aliases, field mappings) nearest to the file, applied before normalization.
      const project = loadProjectConfigFor(file);
      if (project) hooks.log?.(`  project config: ${project.file}`);
      let lastEmit = 0;
      const emit = (bytesRead: number, force = false) => {
        const now = Date.now();
        if (!hooks.onProgress || (!force && now - lastEmit < 100)) return;
        lastEmit = now;
        hooks.onProgress({ file, fileIndex: fi, fileCount: opts.inputs.length, rowsRead: rep.rowsRead, recordsWritten: rep.recordsWritten, bytesRead, bytesTotal });
      };
      hooks.log?.(`reading ${file}`);
      const rows = readRows(file, { signal: hooks.signal, mapping: opts.mapping });
      const head: RawRow[] = [];
      let it = await rows.next();
      while (!it.done && head.length < DETECT_SAMPLE) {
        head.push(it.value);
        it = await rows.next();
      }
      const det = detectFormat(head.filter((r) => r.error === undefined).map((r) => applyProjectConfig(r.value, project)));
      rep.format = det.format;
      rep.evidence = det.evidence;
      hooks.log?.(`  format: ${det.format} — ${det.evidence.join('; ')}`);
      const fileBase = basename(file);
      const handle = async (row: RawRow) => {
        hooks.signal?.throwIfAborted();
        rep.rowsRead++;
        if (row.error !== undefined) {
          error(rep, row.line, row.error);
        } else {
          const outcome = normalizeRow(applyProjectConfig(row.value, project), { file, line: row.line }, fileBase);
          switch (outcome.kind) {
            case 'conversation':
              for (const n of outcome.conversation.notes ?? []) note(rep, n);
              await processConversation(ctx, rep, outcome.conversation, generatedTurnsOf(row.value));
              break;
            case 'prompt': {
              const c = outcome.conversation;
              const msgs = c.messages.map((m) => ({ role: m.role, content: m.content ?? '' }));
              await ctx.prompts.write(JSON.stringify({ id: c.id, source: c.source, messages: msgs, ...(c.tools?.length ? { tools: c.tools } : {}) }) + '\n');
              rep.rowsSetAside++;
              break;
            }
            case 'dropped':
              drop(rep, row.line, outcome.reason);
              break;
            case 'errored':
              error(rep, row.line, outcome.message);
              break;
          }
        }
        emit(row.bytes);
      };
      for (const row of head) await handle(row);
      while (!it.done) {
        await handle(it.value);
        it = await rows.next();
      }
      emit(bytesTotal, true);
      hooks.log?.(
        `  rows ${rep.rowsRead}: written ${rep.rowsWritten} (${rep.recordsWritten} records), set aside ${rep.rowsSetAside}, dropped ${rep.rowsDropped}, errored ${rep.rowsErrored}`,
      );
    }
  } catch (e) {
    await ctx.data.abort();
    await ctx.prompts.abort();
    throw e;
  }
  await ctx.data.commit();
  await ctx.prompts.commit();

  const failures: string[] = [];
  for (const f of files) {
    const sum = f.rowsWritten + f.rowsSetAside + f.rowsDropped + f.rowsErrored;
    if (sum !== f.rowsRead) failures.push(`${f.file}: accounting mismatch (${sum} accounted, ${f.rowsRead} read)`);
    if (!opts.allowEmpty && f.recordsWritten === 0 && f.rowsSetAside === 0) {
      const why = Object.entries(f.dropped).map(([k, v]) => `${v.count} ${k}`).concat(f.rowsErrored ? [`${f.rowsErrored} errored`] : []);
      const unusable = await explainUnusableInput(f.file, 1000, opts.mapping); // issue 3: same message as `inspect` (empty, CSV, tokenized, no conversation)
      failures.push(`${f.file}: no record written and no prompt set aside (${f.rowsRead} rows read${why.length ? ': ' + why.join(', ') : ''}; format ${f.format})${unusable ? `. ${unusable}` : ''}`);
    } else if (!opts.allowEmpty && f.recordsWritten === 0 && f.rowsErrored > 0) {
      failures.push(`${f.file}: no record written; ${f.rowsErrored} rows errored (first: line ${f.errors[0]?.line}: ${f.errors[0]?.message.split('\n')[0]})`);
    }
  }
  const sumKeys = ['rowsRead', 'rowsWritten', 'recordsWritten', 'rowsSetAside', 'rowsDropped', 'rowsErrored', 'trainableTokens', 'totalTokens'] as const;
  const totals = { dropped: {} as Record<string, number> } as PrepareResult['totals'];
  for (const k of sumKeys) totals[k] = files.reduce((a, f) => a + f[k], 0);
  for (const f of files) for (const [k, v] of Object.entries(f.dropped)) totals.dropped[k] = (totals.dropped[k] ?? 0) + v.count;
  const result: PrepareResult = {
    ok: failures.length === 0,
    failures,
    outDir,
    outputs,
    tokenizer: { dir: tok.dir, name: tok.name, hash: tok.hash, embeddedDefault: tok.embeddedDefault },
    templateKwargs: opts.templateKwargs ?? {},
    mask: opts.mask,
    maxLength: opts.maxLength ?? null,
    truncate: opts.truncate,
    templateCheck,
    files,
    totals,
    elapsedMs: Date.now() - t0,
  };
  await writeReports(result);
  return result;
}
