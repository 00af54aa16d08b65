/**
 * `check-template`: what a target model's chat template does to training
 * records, found by rendering a few probe conversations through the same code
 * the pipeline uses ({@link buildRecords}, `docs/loss-mask-rules.md`),
 * and every template-dependent decision of the rules with its evidence
 * (`ProbeDecisions`, from `templates/probes.ts`; the result's types are in checkTemplateTypes.ts).
 *
 * Everything here is derived from renders; nothing is keyed on model names.
 * The result is plain data (JSON-serializable, no `undefined` values) so that it
 * can go into `report.json` as is; `formatTemplateCheck` (checkTemplateFormat.ts)
 * renders it for a terminal.
 */
import { buildRecords } from './mask';
import type { ConversationRecords, Grouping, Span } from './maskTypes';
import { selectTargets } from './turns';
import { SpecialTokenFinder } from './specialTokens';
import { ChatTemplate, pickTemplate } from '../templates/template';
import { TemplateBudgetError, TemplateRenderError } from '../templates/errors';
import type { TargetTokenizer } from '../tokenizers/types';
import { codeMeaning } from '../codes';
import type { Conversation, MaskPolicy, Message } from '../types';
import { PROBES } from '../templates/probeConversations';
import { breakOffset, byFrequency, decisionsOf, detectDefaultSystemPrompt, detectGenerationPrompt, EMPTY_THINK, excerpt } from './templateFindings';
import type { CheckTemplateOptions, PrefixBreak, ProbeRecords, TemplateCheck } from './checkTemplateTypes';

/**
 * Renders the probe conversations with the tokenizer's chat template and
 * reports what the template does to training records: prefix stability (and
 * where it breaks), the end-of-turn token that ends each trainable span, text
 * after it, a default system prompt, the generation-prompt scaffold, notes and
 * template errors. `docs/loss-mask-rules.md` sections "One target", "Trainable span",
 * "One conversation, how many records", "Policy non-system".
 *
 * A template that raises on a probe does not fail the check: the probe gets
 * `error` and a `template_error` warning (Gemma-3 raises on `tool` turns), or a
 * `template_budget_exceeded` warning when the render ran past its render budget.
 *
 * @throws TemplateRenderError when the tokenizer has no chat template or the template does not parse
 */
export function checkTemplate(tok: TargetTokenizer, opts: CheckTemplateOptions = {}): TemplateCheck {
  const { check, texts } = checkTemplateUncounted(tok, opts);
  const distinct = distinctTexts(texts);
  return withAmplification(
    check,
    texts,
    distinct,
    distinct.map((t) => tok.encode(t).ids.length),
  );
}

/**
 * {@link checkTemplate} with the amplification's texts encoded by the tokenizer's `encodeBatch` when it has one (the
 * Rust backend, whose synchronous `encode` would load the JavaScript tokenizer for these few texts); the same result.
 * @throws TemplateRenderError as checkTemplate does
 */
export async function checkTemplateAsync(tok: TargetTokenizer, opts: CheckTemplateOptions = {}): Promise<TemplateCheck> {
  if (!tok.encodeBatch) return checkTemplate(tok, opts);
  const { check, texts } = checkTemplateUncounted(tok, opts);
  const distinct = distinctTexts(texts);
  return withAmplification(
    check,
    texts,
    distinct,
    (await tok.encodeBatch(distinct)).map((e) => e.ids.length),
  );
}

/**
 * The amplification's texts, each once: a prefix-stable template's exact and merged records and whole renders are
 * mostly the same texts, encoded once each.
 */
function distinctTexts(texts: AmplificationTexts): string[] {
  return [...new Set([...texts.exact, ...texts.merged, ...texts.rendered])];
}

/**
 * The check's amplification from the token counts of its texts (`lengths[k]`: tokens of `distinct[k]`): record tokens
 * of each grouping, and of the conversations rendered once.
 */
function withAmplification(out: TemplateCheck, texts: AmplificationTexts, distinct: readonly string[], lengths: readonly number[]): TemplateCheck {
  const tokensOf = new Map(distinct.map((t, k) => [t, lengths[k]]));
  const count = (list: readonly string[]) => list.reduce((a, t) => a + tokensOf.get(t)!, 0);
  const a = out.amplification;
  a.exactTokens = count(texts.exact);
  a.mergedTokens = count(texts.merged);
  a.renderedTokens = count(texts.rendered);
  if (a.renderedTokens > 0) {
    a.exact = a.exactTokens / a.renderedTokens;
    a.merged = a.mergedTokens / a.renderedTokens;
  }
  return out;
}

/** The check without its amplification's token counts, and the texts they count (records of each grouping, whole renders). */
function checkTemplateUncounted(tok: TargetTokenizer, opts: CheckTemplateOptions): { check: TemplateCheck; texts: AmplificationTexts } {
  const kwargs = opts.templateKwargs ?? {};
  const mask = opts.mask ?? 'assistant';
  const compiled = new Map<string, ChatTemplate>();
  const templateFor = (hasTools: boolean): ChatTemplate => {
    const named = pickTemplate(tok.templates, hasTools);
    if (!named) throw new TemplateRenderError(`tokenizer ${tok.dir} has no chat template (tokenizer_config.json "chat_template" or chat_template.jinja)`);
    let t = compiled.get(named.name);
    if (!t) {
      // The run's own compiled template when it gives them (same tokenizer, kwargs and default budget: the same template).
      t =
        opts.templates && opts.budget === undefined
          ? opts.templates.template(hasTools, kwargs)
          : new ChatTemplate(named, tok.specialTokenVars, kwargs, { budget: opts.budget });
      compiled.set(named.name, t);
    }
    return t;
  };
  const specialList = [...new Set(tok.specialTokens.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  const scope: ProbeScope = {
    tok,
    mask,
    specials: new SpecialTokenFinder(tok.specialTokens),
    endToken: (text, end) => specialList.find((s) => end >= s.length && text.startsWith(s, end - s.length)) ?? null,
    out: emptyCheck(tok, kwargs, mask, opts.grouping ?? 'exact'),
    fromNextTurn: [],
    rendered: [],
    texts: { exact: [], merged: [], rendered: [] },
  };
  const out = scope.out;
  for (const probe of PROBES) {
    const template = templateFor((probe.tools?.length ?? 0) > 0);
    const pr: ProbeRecords = {
      probe: probe.name,
      title: probe.title,
      template: template.named.name,
      error: null,
      prefixStable: null,
      records: [],
      prefixRenders: null,
    };
    out.records.push(pr);
    try {
      const built = probeRecords(probe, template, pr, scope);
      pr.prefixStable = probeTurns(probe, template, built, scope);
      if (!pr.prefixStable) out.prefixStable = false;
    } catch (e) {
      if (!(e instanceof TemplateRenderError)) throw e;
      pr.error = e.message;
      out.warnings.push({ probe: probe.name, code: e instanceof TemplateBudgetError ? e.code : 'template_error', message: e.message });
    }
  }
  summarizeProbes(out, scope.fromNextTurn);
  for (const t of compiled.values()) out.probeDecisions.push(decisionsOf(t.named.name, t.probes));
  findPromptScaffold(out, templateFor(false), tok);
  out.specialTokensSeen = specialList.filter((s) => scope.rendered.some((t) => t.includes(s)));
  return { check: out, texts: scope.texts };
}

/** A check with nothing found yet: prefix-stable until a probe shows otherwise. */
function emptyCheck(tok: TargetTokenizer, templateKwargs: Record<string, unknown>, mask: MaskPolicy, grouping: Grouping): TemplateCheck {
  return {
    tokenizer: { name: tok.name, dir: tok.dir, hash: tok.hash },
    templateKwargs,
    mask,
    prefixStable: true,
    prefixBreaks: [],
    endOfTurnTrained: [],
    textAfterEndOfTurn: [],
    turns: [],
    defaultSystemPrompt: null,
    generationPrompt: null,
    assistantHeader: null,
    generationPromptScaffold: null,
    probeDecisions: [],
    stopTokens: { tokens: tok.stopTokens, source: tok.stopTokensSource, fromNextTurn: [], evidence: '' },
    prefixStability: { stable: true, evidence: '' },
    warnings: [],
    records: [],
    specialTokensSeen: [],
    grouping,
    amplification: { exactTokens: 0, mergedTokens: 0, renderedTokens: 0, exact: null, merged: null },
  };
}

/** What every probe of one check is built with, and what the probes add to. */
interface ProbeScope {
  tok: TargetTokenizer;
  mask: MaskPolicy;
  specials: SpecialTokenFinder;
  /** The special token (longest first) that ends exactly at `end` in `text`, or null. */
  endToken: (text: string, end: number) => string | null;
  out: TemplateCheck;
  /** Stop tokens taken from the next turn's render (`stop_token_from_next_turn`), one per turn. */
  fromNextTurn: string[];
  /** Every record text of the probes (for the special tokens seen). */
  rendered: string[];
  /** The texts the amplification counts. */
  texts: AmplificationTexts;
}

/** The texts the amplification counts: the records of each grouping and the conversations rendered once. */
interface AmplificationTexts {
  exact: string[];
  merged: string[];
  rendered: string[];
}

/** One of the probe conversations (`templates/probeConversations.ts`). */
type ProbeConversation = (typeof PROBES)[number];

/** The probe conversation, as `buildRecords` takes it. */
function probeConversation(probe: ProbeConversation, messages: Message[]): Conversation {
  return { id: `probe:${probe.name}`, source: { file: '<check-template>', line: 0 }, messages, tools: probe.tools };
}

/**
 * The probe's records under the check's mask, as `prepare` builds them (exact, and merged for the amplification
 * figures; `pr.records` in the check's grouping), and the warnings they carry: the row error, `{% generation %}` blocks
 * that disagree, the notes that change what is trained, the target errors.
 * @throws TemplateRenderError when the template raises on the probe
 */
function probeRecords(probe: ProbeConversation, template: ChatTemplate, pr: ProbeRecords, s: ProbeScope): ConversationRecords {
  const { out, tok } = s;
  const built = buildRecords(probeConversation(probe, probe.messages), template, s.specials, s.mask, { stopTokens: tok.stopTokens });
  const merged = buildRecords(probeConversation(probe, probe.messages), template, s.specials, s.mask, { grouping: 'merged', stopTokens: tok.stopTokens });
  if (built.rendered !== null) {
    s.texts.exact.push(...built.records.map((r) => r.text));
    s.texts.merged.push(...merged.records.map((r) => r.text));
    s.texts.rendered.push(built.rendered);
  }
  pr.records = out.grouping === 'merged' ? merged.records : built.records;
  if (built.prefixRenders) pr.prefixRenders = { fromOnePass: built.prefixRenders.proven, total: built.prefixRenders.proven + built.prefixRenders.fallback };
  s.rendered.push(...built.records.map((r) => r.text));
  if (built.rowError) out.warnings.push({ probe: probe.name, code: built.rowError.code, message: built.rowError.message });
  // What a training template's blocks would have trained instead: the first difference on this probe.
  if (built.generationBlocks !== undefined)
    out.warnings.push({ probe: probe.name, code: 'generation_blocks_disagree', message: `${built.generationBlocks} (the records follow the rules)` });
  for (const n of built.notes) {
    if (n === 'reasoning_missing_after_prefill' || n === 'no_end_of_turn_token' || n === 'content_not_rendered' || n === 'stop_token_inside_turn')
      out.warnings.push({ probe: probe.name, code: n, message: codeMeaning(n) });
    if (n === 'reasoning_not_rendered')
      out.warnings.push({
        probe: probe.name,
        code: n,
        message: "an assistant turn's reasoning_content is not in its rendered completion (template kwargs such as preserve_thinking can change that)",
      });
  }
  for (const e of built.targetErrors) out.warnings.push({ probe: probe.name, code: e.reason, message: e.message });
  return built;
}

/**
 * Per assistant turn of the probe, its own prompt and completion, found by building the prefix up to it alone
 * (policy `last-assistant`): the turn's end-of-turn token and text after it (`out.turns`), where the prefix breaks
 * (`template_unsupported`, `template_rewrites_history`, `generation_prompt_mismatch`, `record_split`), and the empty
 * think blocks trained for turns without reasoning. Returns whether the probe is prefix-stable.
 * @throws TemplateRenderError when the template raises on the probe
 */
function probeTurns(probe: ProbeConversation, template: ChatTemplate, built: ConversationRecords, s: ProbeScope): boolean {
  const { out, tok } = s;
  const unsupported = new Set(built.targetErrors.filter((e) => e.reason === 'template_unsupported').map((e) => e.index));
  const noPrompt = new Set(built.targetErrors.filter((e) => e.reason === 'prompt_not_renderable').map((e) => e.index));
  const adapted = template.adaptMessages(probe.messages);
  const R = (n: number, gen: boolean) => template.render(adapted.slice(0, n), probe.tools, { addGenerationPrompt: gen });
  const breakAt = (turn: number, kind: PrefixBreak['kind'], expected: string, actual: string) => {
    const at = breakOffset(expected, actual);
    out.prefixBreaks.push({ probe: probe.name, turn, kind, at, expected: excerpt(expected, at), actual: excerpt(actual, at) });
  };
  let stable = true;
  let prevText: string | null = null;
  const emptyThink: number[] = [];
  for (const i of selectTargets(adapted, 'assistant')) {
    if (noPrompt.has(i)) continue;
    const P = R(i, true);
    if (unsupported.has(i)) {
      breakAt(i, 'template_unsupported', P, R(i + 1, false));
      stable = false;
      continue;
    }
    const one = buildRecords(probeConversation(probe, probe.messages.slice(0, i + 1)), template, s.specials, 'last-assistant', { stopTokens: tok.stopTokens });
    const rec = one.records[0];
    if (!rec) continue;
    const [start, end]: Span = rec.spans[0];
    const tokenAtEnd = s.endToken(rec.text, end);
    if (one.notes.includes('stop_token_from_next_turn') && tokenAtEnd) s.fromNextTurn.push(tokenAtEnd);
    out.turns.push({ probe: probe.name, turn: i, endOfTurn: tokenAtEnd, textAfter: rec.text.slice(end), trained: rec.text.slice(start, end) });
    if (!tokenAtEnd)
      out.warnings.push({
        probe: probe.name,
        code: 'span_without_special_token',
        message: `assistant turn ${i}: the trainable span ends without a special token (trained to the end of its completion)`,
      });
    if (!(probe.messages[i].reasoning_content ?? '').trim() && EMPTY_THINK.test(rec.text.slice(start, end))) emptyThink.push(i);
    const kind = one.notes.includes('template_rewrites_history')
      ? 'template_rewrites_history'
      : one.notes.includes('generation_prompt_mismatch')
        ? 'generation_prompt_mismatch'
        : null;
    if (kind) {
      breakAt(i, kind, P, R(i + 1, false));
      stable = false;
    }
    if (prevText !== null && !P.startsWith(prevText)) {
      breakAt(i, 'record_split', prevText, P);
      stable = false;
    }
    prevText = rec.text;
  }
  if (emptyThink.length) {
    const turns = `assistant turn${emptyThink.length > 1 ? 's' : ''} ${emptyThink.join(', ')}`;
    out.warnings.push({
      probe: probe.name,
      code: 'empty_think_trained',
      message: `${turns}: no reasoning in the data; the trainable text holds the empty think block the template writes for such a turn (trained: case 1 of the loss-mask rules, docs/loss-mask-rules.md); if the data was generated with thinking off, set the template kwargs that turn it off`,
    });
  }
  return stable;
}

/** What the probes add up to (the amplification apart, {@link withAmplification}): the end-of-turn tokens and text after them by frequency, the stop tokens' evidence, prefix stability with its evidence. */
function summarizeProbes(out: TemplateCheck, fromNextTurn: string[]): void {
  out.endOfTurnTrained = byFrequency(out.turns.flatMap((t) => (t.endOfTurn ? [t.endOfTurn] : [])));
  out.stopTokens.fromNextTurn = byFrequency(fromNextTurn);
  out.stopTokens.evidence =
    out.stopTokens.source === 'none'
      ? 'the model folder names no stop token (no generation_config.json eos_token_id, no eos_token)'
      : `stop tokens from ${out.stopTokens.source === 'generation_config' ? 'generation_config.json eos_token_id' : "the tokenizer's eos_token"}` +
        (out.stopTokens.fromNextTurn.length
          ? `; turns hold no end-of-turn token and end at the next turn's ${out.stopTokens.fromNextTurn.map((x) => JSON.stringify(x)).join(', ')} (trained)`
          : '');
  const splits = out.prefixBreaks.map((b) => `${b.probe} turn ${b.turn}: ${b.kind}`);
  out.prefixStability = {
    stable: out.prefixStable,
    evidence: splits.length ? splits.join('; ') : 'every probe gives one record per conversation, every completion found after its prompt (case 1)',
  };
  out.textAfterEndOfTurn = byFrequency(out.turns.filter((t) => t.endOfTurn).map((t) => t.textAfter));
}

/**
 * With the template for conversations without tools: its default system prompt and its generation prompt with the
 * assistant header and scaffold ({@link detectGenerationPrompt}). A finding the template raises on becomes a warning.
 */
function findPromptScaffold(out: TemplateCheck, plain: ChatTemplate, tok: TargetTokenizer): void {
  const R = (messages: Message[], gen = false) => plain.render(plain.adaptMessages(messages), undefined, { addGenerationPrompt: gen });
  const tryFinding = (what: string, f: () => void) => {
    try {
      f();
    } catch (e) {
      if (!(e instanceof TemplateRenderError)) throw e;
      out.warnings.push({ probe: null, code: e instanceof TemplateBudgetError ? e.code : 'probe_render_failed', message: `${what}: ${e.message}` });
    }
  };
  tryFinding('default system prompt', () => {
    out.defaultSystemPrompt = detectDefaultSystemPrompt(R, tok.specialTokenVars.bos_token);
  });
  tryFinding('generation prompt scaffold', () => detectGenerationPrompt(R, out));
}
