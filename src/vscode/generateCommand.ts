/**
 * "Generate answers with the target model…" (`eagle3prep.generate`): runs
 * `generate` (src/core/generate) on a `prompts_to_generate.jsonl` (or any
 * dataset file) against the configured OpenAI-compatible servers, with a
 * cancellable progress notification (done / failed / in flight, tokens per
 * second); running it again on the same file resumes (keyed by row id).
 * "Set generation server API key…" (`eagle3prep.setGenerateApiKey`) stores the
 * key in VS Code SecretStorage; it is never read from settings nor logged.
 * In an untrusted workspace, servers named by workspace settings are ignored (trust.ts).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { countRows, DATASET_FILE_RE } from '../core/read/readers';
import { defaultGenerateOut, formatGenerateSummary, generate } from '../core/generate/run';
import { readGenerateSettings } from './config';
import { API_KEY_SECRET, COMMANDS } from './ids';
import { urisFromCommandArgs } from './prepareCommand';

/** Runs in progress, by output file. */
const running = new Set<string>();

/** Registers both commands; returns their disposables. */
export function registerGenerateCommand(context: vscode.ExtensionContext, output: vscode.OutputChannel): vscode.Disposable {
  const log = (l: string) => output.appendLine(l);
  const setKey = vscode.commands.registerCommand(COMMANDS.setGenerateApiKey, async () => {
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
  });
  const gen = vscode.commands.registerCommand(COMMANDS.generate, async (arg?: unknown, multi?: unknown) => {
    const uri = urisFromCommandArgs(arg, multi).find((u) => u.scheme === 'file' && DATASET_FILE_RE.test(u.fsPath));
    if (!uri) {
      void vscode.window.showErrorMessage(
        'Generate: pick a prompts_to_generate.jsonl (or a .jsonl / .ndjson / .json / .traj / .parquet dataset, optionally .gz / .zst) in the explorer or open it in an editor.',
      );
      return;
    }
    const { settings: opts, servers: configured, ignored } = readGenerateSettings(uri);
    if (ignored.length) log(`Restricted Mode: ignoring the servers named by this workspace's settings (${ignored.join(', ')}); only your user settings apply.`);
    let servers = configured;
    if (servers.length === 0) {
      const typed = await vscode.window.showInputBox({
        title: 'OpenAI-compatible server (SGLang, vLLM)',
        prompt: 'Server root, e.g. http://127.0.0.1:30000 (several: comma-separated). Set eagle3prep.generate.servers in your user settings to skip this.',
        ignoreFocusOut: true,
        validateInput: (v) => (v.split(',').every((s) => /^https?:\/\/\S+$/.test(s.trim())) ? undefined : 'http:// or https:// URL(s)'),
      });
      if (!typed) return;
      servers = typed.split(',').map((s) => s.trim());
    }
    const input = uri.fsPath;
    const out = defaultGenerateOut(input);
    if (running.has(out)) {
      void vscode.window.showWarningMessage(`Generation into ${path.basename(out)} is already running.`);
      return;
    }
    running.add(out);
    const apiKey = (await context.secrets.get(API_KEY_SECRET)) || undefined;
    output.show(true);
    log(`generate ${input} → ${out} on ${servers.join(', ')}`);
    try {
      const total = await countRows(input).catch(() => 0);
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Generating ${path.basename(input)}`, cancellable: true },
        async (progress, token) => {
          const ac = new AbortController();
          token.onCancellationRequested(() => ac.abort(new Error('cancelled')));
          let lastDone = 0;
          return generate(
            { ...opts, input, out, servers, apiKey },
            {
              signal: ac.signal,
              log,
              onProgress: (p) => {
                const done = p.generated + p.alreadyDone + p.failed + p.notWritten;
                const increment = total ? ((done - lastDone) / total) * 100 : undefined;
                lastDone = done;
                progress.report({
                  increment,
                  message: `${done}${total ? `/${total}` : ''} done (${p.generated} new, ${p.failed} failed), ${p.inFlight} in flight, ${p.tokensPerSecond.toFixed(0)} tok/s`,
                });
              },
            },
          );
        },
      );
      log(formatGenerateSummary(result));
      const msg = `${result.cancelled ? 'Generation cancelled' : result.ok ? 'Generation done' : 'Generation finished with failures'}: ${result.generated} generated, ${result.alreadyDone} already done, ${result.truncated} truncated, ${result.failedTotal} failed.`;
      const open = 'Open output';
      const pick = await (result.ok ? vscode.window.showInformationMessage(msg, open) : vscode.window.showWarningMessage(`${msg} Run again to resume.`, open));
      if (pick === open) await vscode.window.showTextDocument(vscode.Uri.file(out), { preview: true });
    } catch (e) {
      const m = e instanceof Error ? e.message : String(e);
      log(`generate failed: ${m}`);
      void vscode.window.showErrorMessage(`Generate: ${m}`);
    } finally {
      running.delete(out);
    }
  });
  return vscode.Disposable.from(gen, setKey);
}
