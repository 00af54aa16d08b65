/**
 * "Generate answers with the target model…" (`eagle3prep.generate`): runs
 * `generate` (src/core/generate) on a `prompts_to_generate.jsonl` (or any
 * dataset file) against the configured OpenAI-compatible servers. First a
 * preflight (`core/generate/preflight.ts`: one `GET /v1/models` per server, no
 * retry) that fails in seconds with Retry / Open settings; then a confirmation
 * with the number of prompts, the model, the servers and the output file; then
 * a cancellable progress notification (done / failed / in flight, tokens per
 * second, time left); running it again on the same file resumes (keyed by row id).
 * "Set generation server API key…" (`eagle3prep.setGenerateApiKey`) stores the
 * key in VS Code SecretStorage; it is never read from settings nor logged.
 * In an untrusted workspace, servers named by workspace settings are ignored (trust.ts).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import * as fs from 'node:fs';
import { countRows, DATASET_FILE_RE } from '../core/read/readers';
import { preflightServers, type ServerCheck } from '../core/generate/preflight';
import { generate } from '../core/generate/run';
import { defaultGenerateOut, type GenerateProgress } from '../core/generate/options';
import { formatGenerateSummary, type GenerateResult } from '../core/generate/report';
import { OUTPUT_FILES } from '../core/run/outputFiles';
import { readGenerateSettings } from './config';
import type { GenerateSettingValues } from './settings';
import { API_KEY_SECRET, COMMANDS, CONFIG_SECTION } from './ids';
import { notify } from './notify';
import { pickDataset } from './pickDataset';
import { urisFromCommandArgs } from './prepareCommand';

/** What the command resolves with (for tests and scripts). */
export interface GenerateCommandResult {
  /** The servers' check; the run stops when one failed. */
  preflight?: ServerCheck[];
  /** Why nothing ran: `preflight`, `declined`, `no servers`, `running`. */
  stopped?: string;
  result?: GenerateResult;
  /** Time from the command's start to the preflight's end, ms. */
  preflightMs?: number;
}

/** `3 min`, `45 s`, `2 h 5 min`. */
export function durationText(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

/** Runs in progress, by output file. */
const running = new Set<string>();

/** The extension's context and output channel the commands work with. */
interface GenerateWiring {
  context: vscode.ExtensionContext;
  output: vscode.OutputChannel;
  log: (line: string) => void;
}

/** The generation settings of a dataset, its preflight timeout aside. */
type GenerateRunSettings = Omit<GenerateSettingValues, 'preflightSeconds'>;

/** Registers both commands; returns their disposables. */
export function registerGenerateCommand(context: vscode.ExtensionContext, output: vscode.OutputChannel): vscode.Disposable {
  const w: GenerateWiring = { context, output, log: (l: string) => output.appendLine(l) };
  const setKey = vscode.commands.registerCommand(COMMANDS.setGenerateApiKey, () => setApiKey(context));
  const gen = vscode.commands.registerCommand(
    COMMANDS.generate,
    (arg?: unknown, multi?: unknown, opts?: { confirm?: boolean }): Promise<GenerateCommandResult | undefined> => generateCommand(w, arg, multi, opts),
  );
  return vscode.Disposable.from(gen, setKey);
}

/** "Set generation server API key…": asks for the key and stores it in SecretStorage (empty removes it). */
async function setApiKey(context: vscode.ExtensionContext): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: 'API key of the generation servers',
    prompt: 'Stored in VS Code SecretStorage; empty removes it.',
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key === '') await context.secrets.delete(API_KEY_SECRET);
  else await context.secrets.store(API_KEY_SECRET, key);
  void vscode.window.showInformationMessage(key === '' ? 'Generation API key removed.' : 'Generation API key stored.');
}

/** "Generate answers with the target model…": the input, its servers, the preflight, the confirmation, the run. */
async function generateCommand(
  w: GenerateWiring,
  arg: unknown,
  multi: unknown,
  opts: { confirm?: boolean } | undefined,
): Promise<GenerateCommandResult | undefined> {
  const t0 = Date.now();
  const uri = await generateInput(arg, multi);
  if (!uri) return undefined;
  const { settings, servers: configured, ignored } = readGenerateSettings(uri);
  const { preflightSeconds: seconds, ...genOpts } = settings;
  if (ignored.length) w.log(`Restricted Mode: ignoring the servers named by this workspace's settings (${ignored.join(', ')}); only your user settings apply.`);
  const servers = configured.length ? configured : await askServers();
  if (!servers) return { stopped: 'no servers' };
  const input = uri.fsPath;
  const out = defaultGenerateOut(input);
  if (running.has(out)) {
    void notify('warning', `Generation into ${path.basename(out)} is already running.`);
    return { stopped: 'running' };
  }
  const apiKey = (await w.context.secrets.get(API_KEY_SECRET)) || undefined;
  // 1. Preflight: each server once, a few seconds at most.
  const preflight = await runPreflight(w, servers, apiKey, seconds);
  const preflightMs = Date.now() - t0;
  const bad = preflight.filter((c) => !c.ok);
  if (bad.length) {
    offerPreflightRemedies(w, bad, uri, opts);
    return { preflight, stopped: 'preflight', preflightMs };
  }
  const model = genOpts.model ?? preflight[0].models[0];
  // 2. Confirmation: what is about to be sent where.
  const total = await countRows(input).catch(() => 0);
  const done = fs.existsSync(out) ? await countRows(out).catch(() => 0) : 0;
  if (opts?.confirm !== false && !(await confirmGenerate({ input, out, model, genOpts, preflight, total, done })))
    return { preflight, stopped: 'declined', preflightMs };
  // 3. The run, with progress and time left.
  const run = await runGenerate(w, { input, out, model, genOpts, servers, apiKey, total });
  return { preflight, preflightMs, ...run };
}

/** The dataset file the command was given (explorer, editor) or, called without one, picked; null after saying why. */
async function generateInput(arg: unknown, multi: unknown): Promise<vscode.Uri | undefined> {
  let uri = urisFromCommandArgs(arg, multi).find((u) => u.scheme === 'file' && DATASET_FILE_RE.test(u.fsPath));
  if (!uri && arg === undefined) uri = await pickDataset('Generate answers with the target model', { outputs: [OUTPUT_FILES.promptsToGenerate] });
  if (!uri && arg !== undefined)
    void notify(
      'error',
      'Generate: pick a prompts_to_generate.jsonl (or a .jsonl / .ndjson / .json / .traj / .parquet dataset, optionally .gz / .zst) in the explorer or open it in an editor.',
    );
  return uri;
}

/** Asks for the server roots when no setting names one; undefined when the user gives none. */
async function askServers(): Promise<string[] | undefined> {
  const typed = await vscode.window.showInputBox({
    title: 'OpenAI-compatible server (SGLang, vLLM)',
    prompt: 'Server root, e.g. http://127.0.0.1:30000 (several: comma-separated). Set eagle3prep.generate.servers in your user settings to skip this.',
    ignoreFocusOut: true,
    validateInput: (v) => (v.split(',').every((x) => /^https?:\/\/\S+$/.test(x.trim())) ? undefined : 'http:// or https:// URL(s)'),
  });
  if (!typed) return undefined;
  return typed.split(',').map((x) => x.trim());
}

/** Each server asked once (`GET /v1/models`) under a progress notification; each answer logged. */
async function runPreflight(w: GenerateWiring, servers: string[], apiKey: string | undefined, seconds: number): Promise<ServerCheck[]> {
  const preflight = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Generate: checking ${servers.length === 1 ? servers[0] : `${servers.length} servers`}…` },
    () => preflightServers(servers, { apiKey, timeoutMs: Math.max(1, seconds) * 1000 }),
  );
  for (const c of preflight) w.log(`preflight ${c.url}: ${c.ok ? `ok (${c.models.join(', ')}, ${c.ms} ms)` : `${c.error} (${c.ms} ms)`}`);
  return preflight;
}

/** The failed servers in an error notification with Retry / Open settings / Show log. */
function offerPreflightRemedies(w: GenerateWiring, bad: ServerCheck[], uri: vscode.Uri, opts: { confirm?: boolean } | undefined): void {
  const msg = `Generate: ${bad.map((c) => `${c.url} — ${c.error}`).join('; ')}`;
  void notify('error', msg, 'Retry', 'Open settings', 'Show log').then((pick) => {
    if (pick === 'Retry') void vscode.commands.executeCommand(COMMANDS.generate, uri, undefined, opts);
    else if (pick === 'Open settings') void vscode.commands.executeCommand('workbench.action.openSettings', `${CONFIG_SECTION}.generate`);
    else if (pick === 'Show log') w.output.show(true);
  });
}

/** What the confirmation shows: the prompts (and how many are already answered), model, servers, output, settings. */
interface GeneratePlan {
  input: string;
  out: string;
  model: string;
  genOpts: GenerateRunSettings;
  preflight: ServerCheck[];
  /** Rows of the input, and rows already in the output (resumed). */
  total: number;
  done: number;
}

/** The modal confirmation of what is about to be sent where; true when the user chose Generate. */
async function confirmGenerate(p: GeneratePlan): Promise<boolean> {
  const { input, out, model, genOpts, preflight, total, done } = p;
  const missing = genOpts.model ? preflight.filter((c) => !c.models.includes(genOpts.model!)) : [];
  const detail = [
    `Prompts: ${total.toLocaleString('en-US')} rows of ${path.basename(input)}${done ? ` (${done.toLocaleString('en-US')} already answered in ${path.basename(out)}: resumed)` : ''}`,
    `Model: ${model}${genOpts.model ? '' : ' (the first the server lists)'}`,
    `Servers: ${preflight.map((c) => c.url).join(', ')}`,
    `Output: ${out}`,
    `max_tokens ${genOpts.maxTokens ?? 8192} · reasoning ${genOpts.reasoning ?? 'keep'}${genOpts.concurrency ? ` · ${genOpts.concurrency} requests in flight per server` : ''}`,
    ...(missing.length ? [`Warning: ${missing.map((c) => c.url).join(', ')} do not list ${genOpts.model} (they list ${missing[0].models.join(', ')})`] : []),
  ].join('\n');
  const go = await vscode.window.showInformationMessage(
    `Generate answers for ${(total - done).toLocaleString('en-US')} prompts with ${model}?`,
    { modal: true, detail },
    'Generate',
  );
  return go === 'Generate';
}

/** The run's inputs once confirmed. */
interface GenerateRun {
  input: string;
  out: string;
  model: string;
  genOpts: GenerateRunSettings;
  servers: string[];
  apiKey: string | undefined;
  /** Rows of the input (0 when unknown: no percentage, no time left). */
  total: number;
}

/** Runs `generate` under a cancellable progress notification, then logs its summary and says how it ended. */
async function runGenerate(w: GenerateWiring, g: GenerateRun): Promise<Pick<GenerateCommandResult, 'result' | 'stopped'>> {
  const { input, out, model, genOpts, servers, apiKey, total } = g;
  running.add(out);
  w.output.show(true);
  w.log(`generate ${input} → ${out} on ${servers.join(', ')} (model ${model})`);
  try {
    const started = Date.now();
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Generating ${path.basename(input)}`, cancellable: true },
      async (progress, token) => {
        const ac = new AbortController();
        token.onCancellationRequested(() => ac.abort(new Error('cancelled')));
        return generate(
          { ...genOpts, model, input, out, servers, apiKey },
          { signal: ac.signal, log: w.log, onProgress: progressReporter(progress, total, started) },
        );
      },
    );
    w.log(formatGenerateSummary(result));
    const msg = `${result.cancelled ? 'Generation cancelled' : result.ok ? 'Generation done' : 'Generation finished with failures'}: ${result.generated} generated, ${result.alreadyDone} already done, ${result.truncated} truncated, ${result.failedTotal} failed.`;
    const open = 'Open output';
    const pick = await (result.ok ? notify('info', msg, open) : notify('warning', `${msg} Run again to resume.`, open, 'Show log'));
    if (pick === open) await vscode.window.showTextDocument(vscode.Uri.file(out), { preview: true });
    else if (pick === 'Show log') w.output.show(true);
    return { result };
  } catch (e) {
    const m = e instanceof Error ? e.message : String(e);
    w.log(`generate failed: ${m}`);
    void notify('error', `Generate: ${m}`, 'Show log').then((pick) => pick && w.output.show(true));
    return { stopped: m };
  } finally {
    running.delete(out);
  }
}

/** The progress notification's increment and message from the run's progress: done of total, new, failed, in flight, tok/s, time left. */
function progressReporter(progress: vscode.Progress<{ increment?: number; message?: string }>, total: number, started: number): (p: GenerateProgress) => void {
  let lastDone = 0;
  return (p) => {
    const finished = p.generated + p.alreadyDone + p.failed + p.notWritten;
    const increment = total ? ((finished - lastDone) / total) * 100 : undefined;
    lastDone = finished;
    const newDone = p.generated + p.failed + p.notWritten;
    const rate = newDone / Math.max(0.001, (Date.now() - started) / 1000);
    const left = total ? Math.max(0, total - finished) : 0;
    const eta = total && rate > 0 ? ` · ${durationText(left / rate)} left` : '';
    progress.report({
      increment,
      message: `${finished.toLocaleString('en-US')}${total ? `/${total.toLocaleString('en-US')}` : ''} done (${p.generated} new, ${p.failed} failed), ${p.inFlight} in flight, ${p.tokensPerSecond.toFixed(0)} tok/s${eta}`,
    });
  };
}
