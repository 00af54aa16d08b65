/** `eagle3-prep check-template`: what the chat template does to training records, on probe conversations. */
import { GROUPINGS, type Grouping } from '../core/records/maskTypes';
import { checkTemplate } from '../core/records/checkTemplate';
import { formatTemplateCheck } from '../core/records/checkTemplateFormat';
import { toSnakeJson } from '../core/run/reports/jsonCase';
import { loadTokenizer } from '../core/tokenizers/tokenizer';

/** Version of the `check-template --json` document (snake_case; docs/outputs.md "report.json"). */
export const CHECK_TEMPLATE_SCHEMA_VERSION = 1;
import { addOptions, Command, EXIT, json, jsonObject, out, setUsageHint, type OptionSpec } from './command';

const OPTIONS: readonly OptionSpec[] = [
  {
    flags: '--tokenizer <dir>',
    help: 'Local Hugging Face model folder of the target model (tokenizer files and chat template; generation_config.json for its stop tokens).',
    defaultText: 'the embedded Qwen3 tokenizer and template',
  },
  {
    flags: '--template-kwargs <json>',
    help: 'Variables for the chat template, e.g. \'{"enable_thinking": false}\'.',
    defaultText: '{}',
    parse: jsonObject,
  },
  {
    flags: '--grouping <grouping>',
    help: 'Grouping of the records shown (exact or merged, as prepare --grouping); the amplification of both is reported.',
    choices: GROUPINGS,
    default: 'exact',
  },
  { flags: '--json', help: 'Print the findings as one JSON object instead of the readable check.' },
];

/** Declares `check-template` on the program. */
export function registerCheckTemplate(program: Command, done: (code: number) => void): void {
  const cmd = program
    .command('check-template')
    .summary("check what the target model's chat template trains, on probe conversations")
    .description(
      'Renders probe conversations (single turn, multi-turn, tool call and result, reasoning, trailing tool result) with the chat template and reports: ' +
        'prefix-stable or where not, the end-of-turn token trained, text after it, a default system prompt, a generation-prompt scaffold; ' +
        'every template-dependent decision of the loss-mask rules with its evidence (tool-call argument form, no-text form, reasoning rendered and its wrapper, ' +
        "generation-prompt prefill or thinking off, the model's stop tokens; --json: probe_decisions, stop_tokens, prefix_stability); " +
        'then the records with trainable spans highlighted (⟦…⟧ without color).',
    );
  addOptions(cmd, OPTIONS);
  cmd.addHelpText('after', '\nExit codes: 0 checked; 1 the tokenizer or template cannot be loaded; 2 usage error.');
  setUsageHint(cmd);
  cmd.action(async (v: { tokenizer?: string; templateKwargs?: Record<string, unknown>; grouping?: Grouping; json?: boolean }) => {
    const check = checkTemplate(loadTokenizer(v.tokenizer), { templateKwargs: v.templateKwargs ?? {}, grouping: v.grouping ?? 'exact' });
    out(
      v.json
        ? json(toSnakeJson(check, CHECK_TEMPLATE_SCHEMA_VERSION))
        : formatTemplateCheck(check, { color: Boolean(process.stdout.isTTY) && !process.env.NO_COLOR }),
    );
    done(EXIT.ok);
  });
}
