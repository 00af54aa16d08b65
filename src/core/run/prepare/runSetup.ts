/** Starting a `prepare` run (docs/scale.md): the row executor (this thread or a worker pool), the tokenizer and the chat-template check. */
import { availableParallelism } from 'node:os';
import type { CheckTemplateOptions } from '../../records/checkTemplateTypes';
import { cachedCheckTemplate } from '../../records/templateCheckCache';
import { backendLine } from '../reports/report';
import { InlineExecutor, WorkerPool, type RowExecutor } from './pool';
import { SharedRowExecutor, sharedRows } from './sharedExecutor';
import { RowProcessor } from '../../records/rowProcessor';
import { TokenizerLoadError, type TargetTokenizer } from '../../tokenizers/types';
import type { PrepareHooks, PrepareOptions, RunSetup } from '../contract';
import type { RowSettings } from '../../records/rowResult';
import { runSettingOptionsOf } from '../runSettings';

/**
 * Starts the run's row executor and logs what it loaded (tokenizer, chat template, workers).
 * @throws TokenizerLoadError when the tokenizer has no chat template (the executor is closed first).
 */
export async function startExecutor(opts: PrepareOptions, hooks: PrepareHooks): Promise<{ executor: RowExecutor; setup: RunSetup; workers: number }> {
  // More row workers than cores only adds tokenizer copies (~100 MB each) and start-up time: capped at the cores.
  const requested = Math.max(1, Math.floor(opts.workers ?? 1));
  const workers = Math.min(requested, availableParallelism());
  if (workers < requested) hooks.log?.(`  workers: ${requested} requested, ${workers} used (the available cores)`);
  let executor: RowExecutor;
  let setup: RunSetup;
  if (workers > 1 && !sharedRows()) {
    // N pool workers; this thread reads and writes, and loads no tokenizer: the first worker reports it and runs the template check.
    const pool = new WorkerPool(workers, settingsOf(opts), { script: opts.workerScript, lowPriority: opts.lowPriority });
    executor = pool;
    try {
      setup = await pool.setup;
    } catch (e) {
      await pool.close();
      throw e;
    }
  } else {
    // N threads of row work: this one and, with N > 1, a pool of N − 1 workers started first, so that they load their
    // tokenizers while this thread loads its own and runs the template check (sharedExecutor.ts).
    const pool =
      workers > 1
        ? new WorkerPool(workers - 1, settingsOf(opts), { script: opts.workerScript, lowPriority: opts.lowPriority, reportSetup: false, takeBack: true })
        : null;
    let processor: RowProcessor;
    try {
      processor = new RowProcessor(settingsOf(opts));
      setup = await runSetup(processor.tok, opts, processor.backendFallback, processor.builder);
    } catch (e) {
      await pool?.close();
      throw e;
    }
    executor = pool ? new SharedRowExecutor(processor, pool, undefined, hooks.log) : new InlineExecutor(processor);
  }
  const tok = setup.tokenizer;
  if (!setup.hasTemplates) {
    await executor.close();
    throw new TokenizerLoadError(
      `${tok.dir}: no chat template (tokenizer_config.json "chat_template", chat_template.jinja or chat_template.json); records cannot be rendered as the target model serves them`,
    );
  }
  hooks.log?.(`tokenizer: ${tok.name} (${tok.dir}, sha256 ${tok.hash})`);
  hooks.log?.(`tokenizer backend: ${backendLine(tok)}`);
  const templateCheck = setup.templateCheck;
  if (templateCheck) {
    hooks.log?.(
      `chat template: ${templateCheck.prefixStable ? 'prefix-stable' : 'rewrites history'}; end of turn trained ${JSON.stringify(templateCheck.endOfTurnTrained)}` +
        (templateCheck.defaultSystemPrompt ? `; injects a default system prompt` : '') +
        (templateCheck.generationPromptScaffold ? `; generation prompt pre-fills ${JSON.stringify(templateCheck.generationPromptScaffold)}` : ''),
    );
  } else if (setup.checkError) hooks.log?.(`chat template check failed: ${setup.checkError}`);
  if (workers > 1)
    hooks.log?.(
      executor instanceof SharedRowExecutor
        ? `workers: ${workers} threads (this one and ${workers - 1} pool worker${workers > 2 ? 's' : ''})`
        : `workers: ${workers} threads`,
    );
  return { executor, setup, workers };
}

/**
 * Runs the chat-template check once for a run (`eagle3-prep check-template`, without the probe renders; from the on-disk
 * cache of its results when the same tokenizer, options and code were checked before: records/templateCheckCache.ts) and says which
 * tokenizer backend runs (`fallback`: why `auto` fell back to the JavaScript one).
 * @param templates the compiled templates of this thread's row processor (`RowProcessor.builder`): the check uses them
 *   instead of compiling the templates a second time
 */
export async function runSetup(
  tok: TargetTokenizer,
  opts: Pick<PrepareOptions, 'templateKwargs' | 'mask' | 'grouping'>,
  fallback?: string,
  templates?: CheckTemplateOptions['templates'],
): Promise<RunSetup> {
  const setup: RunSetup = {
    tokenizer: {
      dir: tok.dir,
      name: tok.name,
      hash: tok.hash,
      embeddedDefault: tok.embeddedDefault,
      backend: tok.backend ?? 'js',
      ...(fallback === undefined ? {} : { backendFallback: fallback }),
    },
    hasTemplates: tok.templates.length > 0,
    templateCheck: null,
    ...(tok.size !== undefined ? { tokenizerSize: tok.size } : {}),
  };
  if (!setup.hasTemplates) return setup;
  try {
    // From the on-disk cache when this tokenizer, these options and this code were checked before (templateCheckCache.ts).
    const { check } = await cachedCheckTemplate(tok, { templateKwargs: opts.templateKwargs, mask: opts.mask, grouping: opts.grouping, templates });
    const { records: _r, turns: _t, ...findings } = check;
    setup.templateCheck = findings;
  } catch (e) {
    setup.checkError = (e as Error).message;
  }
  return setup;
}

/** The row settings of a run, as every row processor (inline or in a worker) gets them: its run settings (runSettings.ts) and the row options beside them. */
export function settingsOf(o: PrepareOptions): RowSettings {
  return {
    tokenizerDir: o.tokenizerDir,
    ...runSettingOptionsOf(o),
    tokenizerBackend: o.tokenizerBackend,
    truncate: o.truncate,
    dedup: o.dedup,
    trainer: o.trainer,
    format: o.format,
  };
}
