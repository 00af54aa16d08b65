/**
 * Errors of chat-template compilation and rendering.
 *
 * A template that raises (its own `raise_exception`, a Python `TypeError` the renderer mirrors, a sandbox
 * `SecurityError`) gives a {@link TemplateRenderError}; the row it was rendering is errored with the message.
 * A template that runs past its {@link RenderBudget} gives a {@link TemplateBudgetError}, a subclass, so every
 * caller that handles render errors handles it too and can single it out by `code`.
 */

/** Raised when the template itself raises or fails; `message` is the template's own message. */
export class TemplateRenderError extends Error {
  /**
   * @param message the template's message (`raise_exception`'s text as is; other errors as `Type: message`, the
   *   Python exception type the renderer mirrors first)
   * @param pythonType the Python exception class jinja2 would raise (`TemplateError`, `TypeError`,
   *   `UndefinedError`, `SecurityError`, …), when known
   */
  constructor(
    message: string,
    readonly pythonType?: string,
  ) {
    super(message);
  }
}

/** Which limit of a {@link RenderBudget} a render ran past. */
export type BudgetLimit = 'range' | 'loopIterations' | 'outputLength' | 'callDepth' | 'wallTime';

/**
 * Raised when a render runs past its render budget (a hostile or broken template: a huge `range`, an endless
 * loop or recursion, a gigantic string). The process stays up; the row is errored with reason
 * `template_budget_exceeded`.
 */
export class TemplateBudgetError extends TemplateRenderError {
  /** Reason code rows and reports use. */
  readonly code = 'template_budget_exceeded' as const;

  /**
   * @param limit the limit that was passed
   * @param detail what passed it, e.g. `loop iterations > 1,000,000`
   */
  constructor(
    readonly limit: BudgetLimit,
    detail: string,
  ) {
    super(`chat template exceeded the render budget: ${detail}`, 'TemplateBudgetError');
  }
}
