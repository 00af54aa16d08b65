/**
 * `check-template --json` read back: the CLI prints the {@link TemplateCheck} as snake_case JSON
 * with a `schema_version` (`run/jsonCase.ts`, docs/outputs.md "report.json"); whoever runs the CLI
 * and shows the findings (the VS Code command) turns it back into the in-memory shape here.
 */
import { fromSnakeJson } from '../run/jsonCase';
import type { TemplateCheck } from './checkTemplate';

/**
 * The TemplateCheck of a `check-template --json` output.
 * @throws Error when the text is not JSON, or not a check-template document
 */
export function parseCheckTemplateJson(text: string): TemplateCheck {
  const data: unknown = JSON.parse(text);
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('not a JSON object');
  const check = fromSnakeJson<TemplateCheck>(data as Record<string, unknown>);
  if (typeof check.prefixStable !== 'boolean' || !Array.isArray(check.warnings) || !check.tokenizer || !check.templateKwargs)
    throw new Error('not a check-template document (no prefix_stable, warnings, tokenizer or template_kwargs)');
  return check;
}
