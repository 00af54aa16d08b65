/**
 * One conversation → its text records (render → mask spans), with the chat template chosen, compiled
 * and cached in one place, and a failure turned into the row's error in one place. The one row path
 * (records/rowTrace.ts) builds through it for `prepare` and the record view (records/recordViewer.ts, the
 * hover and the mask view, which keeps recent builds), so a conversation gets the same records, notes and
 * errors in both.
 */
import type { Code } from '../codes';
import { TemplateBudgetError, TemplateRenderError } from '../templates/errors';
import { ChatTemplate, pickTemplate } from '../templates/template';
import type { TargetTokenizer } from '../tokenizers/types';
import type { Conversation, MaskPolicy, ReasoningPolicy } from '../types';
import { buildRecords } from './mask';
import type { ConversationRecords, Grouping } from './maskTypes';
import { SpecialTokenFinder } from './specialTokens';

/** Thrown when the tokenizer has no chat template (a {@link TemplateRenderError}: `prepare` errors the row with it, the record view rethrows it). */
export class NoChatTemplateError extends TemplateRenderError {}

/** The run settings that decide a conversation's records. */
export interface BuildSettings {
  /** Default `assistant`. */
  mask?: MaskPolicy;
  /** Default `exact`. */
  grouping?: Grouping;
  /** Default `keep`. */
  reasoning?: ReasoningPolicy;
  /** `--template-kwargs`, passed to the chat template. */
  templateKwargs?: Record<string, unknown>;
}

/**
 * What building one conversation gave: its records (`built`, with the template that rendered them; `built.prompt`
 * set when it is a prompt to generate), or the row's error: `template_error` / `template_budget_exceeded` when the
 * template raised or ran past its budget (message `chat template error: …`), or a rule's row error (message
 * `code: …`, with the notes the records had gathered).
 */
export type BuildOutcome =
  | { kind: 'built'; built: ConversationRecords; template: ChatTemplate }
  | { kind: 'errored'; from: 'template' | 'rules'; code: Code; message: string; notes: readonly Code[]; template?: ChatTemplate };

/**
 * Builds the records of conversations for one tokenizer; keeps the compiled chat templates (per template and
 * template kwargs), so create one per tokenizer and reuse it.
 */
export class RecordBuilder {
  readonly specials: SpecialTokenFinder;
  private readonly templates = new Map<string, ChatTemplate>();

  constructor(readonly tokenizer: TargetTokenizer) {
    this.specials = new SpecialTokenFinder(tokenizer.specialTokens);
  }

  /**
   * The chat template for a conversation with or without tools (`pickTemplate`), compiled once per kwargs.
   * @throws NoChatTemplateError when the tokenizer has none; TemplateRenderError when it does not compile
   */
  template(hasTools: boolean, kwargs: Record<string, unknown> = {}): ChatTemplate {
    const named = pickTemplate(this.tokenizer.templates, hasTools);
    if (!named)
      throw new NoChatTemplateError(`tokenizer ${this.tokenizer.dir} has no chat template (tokenizer_config.json "chat_template" or chat_template.jinja)`);
    const key = `${named.name}\0${JSON.stringify(kwargs)}`;
    let t = this.templates.get(key);
    if (!t) {
      t = new ChatTemplate(named, this.tokenizer.specialTokenVars, kwargs);
      this.templates.set(key, t);
    }
    return t;
  }

  /** The template a conversation renders with (by its tools) under `settings`. @throws as {@link template} */
  templateOf(conv: Conversation, settings: BuildSettings): ChatTemplate {
    return this.template((conv.tools?.length ?? 0) > 0, settings.templateKwargs ?? {});
  }

  /**
   * The text records of `conv` under `settings` (records/mask.ts `buildRecords`), rendered with `template`
   * (default: {@link templateOf} the conversation). Never throws for data: a template that raises or a
   * conversation the rules refuse give `errored`.
   * @throws NoChatTemplateError when `rethrowNoTemplate` and the tokenizer has no chat template; anything not a template error
   */
  build(conv: Conversation, settings: BuildSettings, opts: { template?: ChatTemplate; rethrowNoTemplate?: boolean } = {}): BuildOutcome {
    let template: ChatTemplate | undefined = opts.template;
    let built: ConversationRecords;
    try {
      template ??= this.templateOf(conv, settings);
      built = buildRecords(conv, template, this.specials, settings.mask ?? 'assistant', {
        grouping: settings.grouping ?? 'exact',
        reasoning: settings.reasoning ?? 'keep',
        stopTokens: this.tokenizer.stopTokens,
      });
    } catch (e) {
      if (e instanceof NoChatTemplateError && opts.rethrowNoTemplate) throw e;
      if (e instanceof TemplateRenderError)
        return {
          kind: 'errored',
          from: 'template',
          code: e instanceof TemplateBudgetError ? e.code : 'template_error',
          message: `chat template error: ${e.message}`,
          notes: [],
          ...(template ? { template } : {}),
        };
      throw e;
    }
    // A trailing generation placeholder with no target left makes a prompt (the caller's), before any rule's error.
    if (built.rowError && !built.prompt)
      return {
        kind: 'errored',
        from: 'rules',
        code: built.rowError.code,
        message: `${built.rowError.code}: ${built.rowError.message}`,
        notes: built.notes,
        template,
      };
    return { kind: 'built', built, template };
  }
}
