/**
 * `check-template` for a terminal: {@link formatTemplateCheck} renders a {@link TemplateCheck} (checkTemplate.ts) as
 * findings and highlighted record texts.
 */
import type { Span } from './maskTypes';
import type { TemplateCheck } from './checkTemplateTypes';

const ANSI = {
  reset: '\x1b[0m',
  bold: '\x1b[1m',
  dim: '\x1b[2m',
  underline: '\x1b[4m',
  green: '\x1b[32m',
  yellow: '\x1b[33m',
  red: '\x1b[31m',
  trainBg: '\x1b[42m\x1b[30m',
};

/** Options of {@link formatTemplateCheck}. */
export interface FormatOptions {
  /** ANSI colors (trainable spans on a green background, special tokens bold/dim); false: spans marked with `⟦` `⟧`. */
  color: boolean;
}

/**
 * Renders a {@link TemplateCheck} for a terminal: the findings as lines, then
 * each probe's record texts (every line behind a `│` gutter) with the trainable
 * spans highlighted — green background when `color`, else wrapped in `⟦` `⟧`.
 * Special tokens are bold inside spans and dim outside them when `color`.
 * @returns text ending with a newline
 */
export function formatTemplateCheck(check: TemplateCheck, opts: FormatOptions): string {
  const c: Paint = (code, s) => (opts.color ? `${code}${s}${ANSI.reset}` : s);
  const lines = [...findingLines(check, c), ...decisionLines(check.probeDecisions, c)];
  lines.push(`  prefix stability:           ${check.prefixStability.evidence}`);
  const amp = check.amplification;
  if (amp.exact !== null && amp.merged !== null) {
    const ex = `${amp.exact.toFixed(2)}×`;
    lines.push(
      `  amplification (probes):     exact ${amp.exact > 2 ? c(ANSI.yellow, ex) : ex} (${amp.exactTokens} record tokens for ${amp.renderedTokens} tokens rendered once), merged ${amp.merged.toFixed(2)}×` +
        (amp.exact > 2 ? ' — --grouping merged writes one record per conversation' : ''),
    );
  }
  lines.push(`  records shown:              grouping ${check.grouping}`);
  if (check.warnings.length) {
    lines.push(`  warnings:`);
    for (const w of check.warnings)
      lines.push(
        `    - ${w.probe ? `${w.probe}: ` : ''}${c(w.code === 'template_error' || w.code === 'template_budget_exceeded' ? ANSI.red : ANSI.yellow, w.code)}: ${w.message.split('\n')[0]}`,
      );
  }
  lines.push('');
  lines.push(
    opts.color
      ? `Trainable text: ${c(ANSI.trainBg, 'like this')}; special tokens ${c(ANSI.dim, 'dim')} / ${c(ANSI.bold, 'bold')} when trained.`
      : 'Trainable text: ⟦like this⟧.',
  );
  for (const p of check.records) lines.push(...probeLines(p, check.specialTokensSeen, opts.color, c));
  return lines.join('\n') + '\n';
}

/** Wraps text in an ANSI code (and a reset) when colors are on; the text alone otherwise. */
type Paint = (code: string, s: string) => string;

const q = (s: string) => JSON.stringify(s);

/** The check's header and the template's findings: prefix stability with each break, end of turn, system and generation prompts, stop tokens. */
function findingLines(check: TemplateCheck, c: Paint): string[] {
  const lines: string[] = [];
  const kw = Object.keys(check.templateKwargs).length ? ` kwargs ${JSON.stringify(check.templateKwargs)}` : '';
  lines.push(c(ANSI.bold, `Chat template check: ${check.tokenizer.name}`) + ` (${check.tokenizer.dir}, hash ${check.tokenizer.hash})${kw}`);
  lines.push(`  prefix-stable:              ${check.prefixStable ? c(ANSI.green, 'yes') : c(ANSI.yellow, 'no')}`);
  for (const b of check.prefixBreaks) {
    const what =
      b.kind === 'record_split'
        ? 'record split: the earlier turn is rendered differently in this prompt'
        : b.kind === 'template_rewrites_history'
          ? 'template_rewrites_history: the history changes when this turn is added'
          : b.kind === 'generation_prompt_mismatch'
            ? 'generation_prompt_mismatch: the template writes no assistant header for this turn'
            : 'template_unsupported: the completion cannot be located (prompt vs. rendered turn)';
    lines.push(`    ${b.probe}, turn ${b.turn}: ${what}`);
    lines.push(`      at char ${b.at}: expected ${q(b.expected)}`);
    lines.push(`      ${' '.repeat(String(b.at).length + 9)}rendered ${q(b.actual)}`);
  }
  lines.push(
    `  end of turn trained:        ${check.endOfTurnTrained.length ? check.endOfTurnTrained.map(q).join(', ') : c(ANSI.yellow, 'none (spans end without a special token)')}`,
  );
  lines.push(`  text after it (not trained): ${check.textAfterEndOfTurn.length ? check.textAfterEndOfTurn.map(q).join(', ') : '-'}`);
  lines.push(`  default system prompt:      ${check.defaultSystemPrompt === null ? 'none' : c(ANSI.yellow, q(check.defaultSystemPrompt))}`);
  lines.push(`  generation prompt:          ${check.generationPrompt === null ? '-' : q(check.generationPrompt)}`);
  lines.push(`  scaffold beyond header:     ${check.generationPromptScaffold === null ? 'none' : c(ANSI.yellow, q(check.generationPromptScaffold))}`);
  const st = check.stopTokens;
  lines.push(`  stop tokens:                ${st.tokens.length ? st.tokens.map(q).join(', ') : c(ANSI.yellow, 'none')} (${st.evidence})`);
  return lines;
}

/** Each compiled template's decisions (tool-call arguments, no-text tool-call turns, reasoning, generation-prompt prefill) with their evidence. */
function decisionLines(decisions: TemplateCheck['probeDecisions'], c: Paint): string[] {
  const lines: string[] = [];
  for (const d of decisions) {
    lines.push(`  decisions of template "${d.template}":`);
    lines.push(`    tool-call arguments:      ${d.toolArguments.form === 'object' ? 'objects' : 'JSON strings'} — ${d.toolArguments.evidence}`);
    lines.push(`    no-text tool-call turn:   ${d.nullContent.form === 'null' ? 'content null' : 'content ""'} — ${d.nullContent.evidence}`);
    lines.push(
      `    reasoning rendered:       ${d.reasoningRendered.rendered ? 'yes' : 'no (inline <think> kept as written)'} — ${d.reasoningRendered.evidence}`,
    );
    lines.push(
      `    reasoning wrapper:        ${d.reasoningWrapper ? `${q(d.reasoningWrapper.open)} … ${q(d.reasoningWrapper.close)}${d.reasoningWrapper.trimsNewlines ? ' (newlines at its ends trimmed)' : ''}` : 'none'}`,
    );
    const gp = d.generationPrompt;
    const gpWhat = gp.opensReasoning ? c(ANSI.yellow, 'opens reasoning (case 2b)') : gp.thinkingOff ? c(ANSI.yellow, 'thinking off') : 'no reasoning prefill';
    lines.push(`    generation-prompt prefill: ${gp.prefill === null ? 'none' : q(gp.prefill)}, ${gpWhat} — ${gp.evidence}`);
  }
  return lines;
}

/** One probe: its title and template, then each record's text behind a `│` gutter with the trainable spans highlighted ({@link highlight}), or the template's error. */
function probeLines(p: TemplateCheck['records'][number], specialTokensSeen: string[], color: boolean, c: Paint): string[] {
  const lines = ['', c(ANSI.bold, `probe ${p.probe}`) + ` — ${p.title} (template "${p.template}")`];
  if (p.error !== null) {
    lines.push(`  ${c(ANSI.red, 'template error')}: ${p.error}`);
    return lines;
  }
  if (p.prefixRenders) lines.push(`  prefix renders from one pass: ${p.prefixRenders.fromOnePass}/${p.prefixRenders.total}`);
  if (p.records.length === 0) lines.push('  (no records)');
  p.records.forEach((r, k) => {
    lines.push(`  record ${k + 1}/${p.records.length}, targets: turn${r.targets.length > 1 ? 's' : ''} ${r.targets.join(', ')}`);
    for (const l of highlight(r.text, r.spans, specialTokensSeen, color).split('\n')) lines.push(`  │ ${l}`);
  });
  return lines;
}

/** A piece of a record's text: trained or not, a special token or not (for drawing a record). */
export interface TextSegment {
  text: string;
  trained: boolean;
  special: boolean;
}

/**
 * Cuts a record's text at its span boundaries and special-token boundaries (the longest token
 * first at each place): the pieces the terminal report and the editor's template check colour.
 */
export function recordSegments(text: string, spans: readonly Span[], specialTokens: readonly string[]): TextSegment[] {
  const cuts = new Set<number>([0, text.length]);
  for (const [a, b] of spans) cuts.add(a).add(b);
  const specialAt = new Map<number, number>();
  if (specialTokens.length) {
    const re = new RegExp(specialTokens.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      specialAt.set(m.index, m.index + m[0].length);
      cuts.add(m.index).add(m.index + m[0].length);
    }
  }
  const points = [...cuts].sort((x, y) => x - y);
  const inSpan = (p: number) => spans.some(([a, b]) => p >= a && p < b);
  const out: TextSegment[] = [];
  let specialEnd = -1;
  for (let k = 0; k + 1 < points.length; k++) {
    const [a, b] = [points[k], points[k + 1]];
    if (specialAt.has(a)) specialEnd = specialAt.get(a)!;
    out.push({ text: text.slice(a, b), trained: inSpan(a), special: a < specialEnd });
  }
  return out;
}

/**
 * A record's text with its spans marked. With color every line's styles are
 * closed before the newline and reopened after it, so a background never
 * bleeds to the end of the terminal line; a trained line break shows as `↵`.
 */
function highlight(text: string, spans: readonly Span[], specialTokens: readonly string[], color: boolean): string {
  const segments = recordSegments(text, spans, specialTokens);
  let out = '';
  segments.forEach(({ text: piece, trained, special }, k) => {
    if (!color) {
      const opens = trained && !segments[k - 1]?.trained;
      const closes = trained && !segments[k + 1]?.trained;
      out += (opens ? '⟦' : '') + piece + (closes ? '⟧' : '');
      return;
    }
    const style = (trained ? ANSI.trainBg : '') + (special ? (trained ? ANSI.bold : ANSI.dim) : '');
    // A trained line break is shown as a highlighted `↵` so that trained blank lines stay visible.
    const lines = piece.split('\n').map((s) => (s && style ? style + s + ANSI.reset : s));
    out += lines.join(trained ? `${ANSI.trainBg}${ANSI.dim}↵${ANSI.reset}\n` : '\n');
  });
  return out;
}
