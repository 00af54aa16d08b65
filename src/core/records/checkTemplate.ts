/**
 * `check-template`: what a target model's chat template does to training
 * records, found by rendering a few probe conversations through the same code
 * the pipeline uses ({@link buildRecords}, `docs/loss-mask-rules.md`),
 * and every template-dependent decision of the rules with its evidence
 * ({@link ProbeDecisions}, from `templates/probes.ts`).
 *
 * Everything here is derived from renders; nothing is keyed on model names.
 * The result is plain data (JSON-serializable, no `undefined` values) so that it
 * can go into `report.json` as is; `formatTemplateCheck` (checkTemplateFormat.ts)
 * renders it for a terminal.
 */
import { buildRecords } from './mask';
import type { ConversationRecords, Grouping, Span, TextRecord } from './maskTypes';
import { selectTargets } from './turns';
import { SpecialTokenFinder } from './specialTokens';
import type { RenderBudget } from '../templates/renderBudget';
import { ChatTemplate, pickTemplate } from '../templates/template';
import { TemplateBudgetError, TemplateRenderError } from '../templates/errors';
import type { TargetTokenizer } from '../tokenizers/types';
import { codeMeaning } from '../codes';
import type { Conversation, MaskPolicy, Message } from '../types';
import { PROBES, type ProbeName } from '../templates/probeConversations';
import {
  breakOffset,
  byFrequency,
  decisionsOf,
  detectDefaultSystemPrompt,
  detectGenerationPrompt,
  EMPTY_THINK,
  excerpt,
  type ProbeDecisions,
} from './templateFindings';

/**
 * Where a conversation stops being one growing text (docs/loss-mask-rules.md "One conversation,
 * how many records" and the three cases of "One target").
 * - `record_split`: the record's text so far (through an earlier target) is not a
 *   prefix of this target's prompt `P_i`, so a new record starts here — the
 *   template renders an earlier turn differently once later turns follow
 *   (Qwen3 drops the think block of earlier answers).
 * - `template_rewrites_history`: case 3 — `P_i` is not a prefix of `F_i` and the
 *   history changed when turn `i` was added.
 * - `generation_prompt_mismatch`: case 2 — the history is intact but the template
 *   writes no assistant header for this turn (DeepSeek-V3 before a second
 *   consecutive tool-call turn).
 * - `template_unsupported`: none of the cases locates the completion (the target
 *   is errored, see `warnings`); the excerpts compare `P_i` with `F_i` (Qwen3
 *   with `enable_thinking: false` and reasoning in the data).
 */
export interface PrefixBreak {
  probe: ProbeName;
  /** Message index (0-based, into the probe's messages) of the assistant turn where the break shows. */
  turn: number;
  kind: 'record_split' | 'template_rewrites_history' | 'generation_prompt_mismatch' | 'template_unsupported';
  /**
   * Character offset (JS string index, the same in both source texts) where the excerpts start: the first
   * difference, moved back to the start of its line or tag (after the last `\n` or `>` within
   * {@link EXCERPT_BACKUP} characters) so the excerpts read from a boundary.
   */
  at: number;
  /** Up to {@link EXCERPT_CHARS} characters from `at` of the text that a prefix-stable template would continue with (the record so far, or `P_i`). */
  expected: string;
  /** Up to {@link EXCERPT_CHARS} characters from `at` of what the template rendered instead (`P_i`, or `F_i`). */
  actual: string;
}

/** One trained assistant turn of a probe: how its trainable span ends. */
export interface TurnFinding {
  probe: ProbeName;
  /** Message index of the assistant turn. */
  turn: number;
  /** The special token that ends the trainable span (docs/loss-mask-rules.md "Trainable span"), or null when the completion has none (then the span runs to its end). */
  endOfTurn: string | null;
  /** Text the template writes after that token inside the turn's completion `C_i` (not trainable); `""` when none. */
  textAfter: string;
  /** The trainable text of the turn (the span's characters). */
  trained: string;
}

/** A finding that is not a property of the template as a whole. */
export interface CheckWarning {
  /** The probe it came from, or null for a template-wide finding. */
  probe: ProbeName | null;
  /**
   * - `reasoning_not_rendered`: a record note from {@link buildRecords};
   * - `tool_calls_not_rendered`: a target whose tool calls the template does not write (errored, not trained);
   * - `template_error`: the template raised on the probe (`message` is the template's own message);
   * - `template_unsupported`: a target whose completion cannot be located (docs/loss-mask-rules.md "One target", case 3);
   * - `prompt_not_renderable`: the template renders the probe but raises on the prompt before a target;
   * - `content_not_rendered`, `stop_token_inside_turn`: record notes from {@link buildRecords} (a turn's text
   *   missing from its completion; a stop / end-of-turn token inside a trained turn);
   * - `span_without_special_token`: a trainable span ends without a special token (it runs to the end of the completion);
   * - `empty_think_trained`: a turn without `reasoning_content` has an empty `<think>…</think>` block in its
   *   trainable text — the template writes it there, so it is trained (docs/loss-mask-rules.md "One target", case 1); right when the
   *   data was generated with thinking on, wrong when it was generated with thinking off (then set the kwarg);
   * - `probe_render_failed`: a render needed for a template-wide finding raised (the finding is then null);
   * - `reasoning_with_thinking_off`: the probe has reasoning and the template's thinking is off (the row is an error in a run);
   * - `reasoning_missing_after_prefill`, `no_end_of_turn_token`: record notes from {@link buildRecords} (spec v1.4).
   * - `generation_blocks_disagree`: the template's `{% generation %}` blocks mark other text than the rules train on
   *   this probe (a training template); `message` is the first difference (docs/loss-mask-rules.md "Generation blocks").
   * - `template_budget_exceeded`: a render ran past the render budget (templates/renderBudget.ts): the template
   *   loops, recurses or grows its output without bound on this probe (a broken or hostile template); in
   *   `prepare` its rows would be errored with that reason.
   */
  code:
    | 'reasoning_with_thinking_off'
    | 'reasoning_missing_after_prefill'
    | 'no_end_of_turn_token'
    | 'generation_blocks_disagree'
    | 'reasoning_not_rendered'
    | 'tool_calls_not_rendered'
    | 'template_error'
    | 'template_unsupported'
    | 'prompt_not_renderable'
    | 'content_not_rendered'
    | 'stop_token_inside_turn'
    | 'span_without_special_token'
    | 'empty_think_trained'
    | 'probe_render_failed'
    | 'template_budget_exceeded';
  message: string;
}

/** The records of one probe conversation, as the pipeline would build them under the check's mask policy. */
export interface ProbeRecords {
  probe: ProbeName;
  /** One line saying what the probe holds. */
  title: string;
  /** Template used (`default`, `tool_use`, …; see {@link pickTemplate}). */
  template: string;
  /** The template's own message when it raised on this probe (then `records` is empty), else null. */
  error: string | null;
  /** Whether every target of this probe joined one record and had its completion found by case 1 (no `prefixBreaks` for it); null when the template raised. */
  prefixStable: boolean | null;
  /** Records with their trainable spans (`[start, end)` character offsets into `text`) and target message indices. */
  records: TextRecord[];
  /**
   * The distinct prefix renders the probe's records needed, and how many came from the probe's one traced render
   * (proven equal, templates/prefixRenderer.ts) rather than a render of their own; null when the template raised.
   */
  prefixRenders: { fromOnePass: number; total: number } | null;
}

/** The model's stop tokens and how turns end (docs/loss-mask-rules.md "A turn that ends at the next role marker"). */
export interface StopTokenFindings {
  /** The stop tokens (`generation_config.json` `eos_token_id`, else `eos_token`). */
  tokens: string[];
  source: 'generation_config' | 'eos_token' | 'none';
  /** The stop tokens the probes' turns end with because the next turn's render starts with them (GLM-4.x `<|user|>`, `<|observation|>`), trained; empty when turns hold their own end-of-turn token. */
  fromNextTurn: string[];
  evidence: string;
}

/** Result of {@link checkTemplate}. JSON-serializable. */
export interface TemplateCheck {
  tokenizer: { name: string; dir: string; hash: string };
  templateKwargs: Record<string, unknown>;
  /** Mask policy the displayed `records` were built with. */
  mask: MaskPolicy;
  /**
   * True when every probe the template rendered gives one record per
   * conversation with every completion found by case 1 (docs/loss-mask-rules.md "One target");
   * `prefixBreaks` says where not. Probes on which the template raised are not
   * counted (they are in `warnings` as `template_error`).
   */
  prefixStable: boolean;
  prefixBreaks: PrefixBreak[];
  /** Distinct special tokens that end trainable spans across the probes, most frequent first (e.g. `["<|im_end|>"]`); spans without one are in `warnings`. */
  endOfTurnTrained: string[];
  /** Distinct texts written after the end-of-turn token inside a turn (never trained), most frequent first (e.g. `["\n"]`, or `[""]`). */
  textAfterEndOfTurn: string[];
  /** Per trained assistant turn of every probe (targets under policy `assistant`, whatever `mask` is): end token, text after it, trained text. */
  turns: TurnFinding[];
  /**
   * Text the template writes before the user's turn when the conversation has
   * no system message, minus a leading `bos_token` (e.g. Kimi-K2 instruct's
   * `<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>`,
   * Llama-3.1's date header block); null when it writes nothing. Under policy
   * `non-system` this text is trainable (docs/loss-mask-rules.md "Policy non-system").
   */
  defaultSystemPrompt: string | null;
  /** `G` of the first assistant turn: `R([user], gen=True)` minus `R([user])` (docs/loss-mask-rules.md "One target"); null when it could not be rendered. */
  generationPrompt: string | null;
  /** The header the template writes before an assistant turn that is in the history (not the last turn); null when it could not be rendered. */
  assistantHeader: string | null;
  /**
   * What the generation prompt pre-fills beyond the assistant header — the
   * part of `generationPrompt` after its common prefix with `assistantHeader`
   * (Qwen3 with `enable_thinking: false`: `<think>\n\n</think>\n\n`); null when
   * there is none. Part of the prompt, never trained.
   */
  generationPromptScaffold: string | null;
  /** The template-dependent decisions of the rules, per template the probes used (spec v1.4), with their evidence. */
  probeDecisions: ProbeDecisions[];
  /** The model's stop tokens and which of them end turns from the next turn's render. */
  stopTokens: StopTokenFindings;
  /** Prefix stability with its evidence: where records split, by probe (the same as `prefixStable` / `prefixBreaks`). */
  prefixStability: { stable: boolean; evidence: string };
  warnings: CheckWarning[];
  /** Per probe, the records as built (for display). */
  records: ProbeRecords[];
  /** Special tokens that occur in the probe renders (longest first), for highlighting. */
  specialTokensSeen: string[];
  /** Grouping the displayed `records` were built with (docs/loss-mask-rules.md "Record grouping"). */
  grouping: Grouping;
  /**
   * What the records of the probes cost (probes the template renders, under the check's mask policy):
   * tokens of the records under each grouping and of the probe conversations rendered once (`T`),
   * and the amplification of each grouping (record tokens ÷ `renderedTokens`; null when nothing is trained).
   */
  amplification: { exactTokens: number; mergedTokens: number; renderedTokens: number; exact: number | null; merged: number | null };
}

/** Options of {@link checkTemplate}. */
export interface CheckTemplateOptions {
  /** Template kwargs of the run (`enable_thinking`, …), passed to every render. */
  templateKwargs?: Record<string, unknown>;
  /** Policy for the displayed records (default `assistant`); the per-turn findings do not depend on it. */
  mask?: MaskPolicy;
  /** Grouping of the displayed records (default `exact`); the amplification is given for both. */
  grouping?: Grouping;
  /** Render budget of every probe render (templates/renderBudget.ts; default: its defaults). */
  budget?: Partial<RenderBudget>;
}

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
  const count = (list: readonly string[]) => list.reduce((a, t) => a + tok.encode(t).ids.length, 0);
  return withAmplification(check, count(texts.exact), count(texts.merged), count(texts.rendered));
}

/**
 * {@link checkTemplate} with the amplification's texts encoded by the tokenizer's `encodeBatch` when it has one (the
 * Rust backend, whose synchronous `encode` would load the JavaScript tokenizer for these few texts); the same result.
 * @throws TemplateRenderError as checkTemplate does
 */
export async function checkTemplateAsync(tok: TargetTokenizer, opts: CheckTemplateOptions = {}): Promise<TemplateCheck> {
  if (!tok.encodeBatch) return checkTemplate(tok, opts);
  const { check, texts } = checkTemplateUncounted(tok, opts);
  const all = [...texts.exact, ...texts.merged, ...texts.rendered];
  const lengths = (await tok.encodeBatch(all)).map((e) => e.ids.length);
  const sum = (from: number, n: number) => lengths.slice(from, from + n).reduce((a, b) => a + b, 0);
  const e = texts.exact.length;
  const m = texts.merged.length;
  return withAmplification(check, sum(0, e), sum(e, m), sum(e + m, texts.rendered.length));
}

/** The check's amplification from its token counts (record tokens of each grouping, and of the conversations rendered once). */
function withAmplification(out: TemplateCheck, exactTokens: number, mergedTokens: number, renderedTokens: number): TemplateCheck {
  const a = out.amplification;
  a.exactTokens = exactTokens;
  a.mergedTokens = mergedTokens;
  a.renderedTokens = renderedTokens;
  if (a.renderedTokens > 0) {
    a.exact = a.exactTokens / a.renderedTokens;
    a.merged = a.mergedTokens / a.renderedTokens;
  }
  return out;
}

/** The check without its amplification's token counts, and the texts they count (records of each grouping, whole renders). */
function checkTemplateUncounted(
  tok: TargetTokenizer,
  opts: CheckTemplateOptions,
): { check: TemplateCheck; texts: { exact: string[]; merged: string[]; rendered: string[] } } {
  const kwargs = opts.templateKwargs ?? {};
  const mask = opts.mask ?? 'assistant';
  const compiled = new Map<string, ChatTemplate>();
  const templateFor = (hasTools: boolean): ChatTemplate => {
    const named = pickTemplate(tok.templates, hasTools);
    if (!named) throw new TemplateRenderError(`tokenizer ${tok.dir} has no chat template (tokenizer_config.json "chat_template" or chat_template.jinja)`);
    let t = compiled.get(named.name);
    if (!t) {
      t = new ChatTemplate(named, tok.specialTokenVars, kwargs, { budget: opts.budget });
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
  /** The texts the amplification counts: the records of each grouping and the conversations rendered once. */
  texts: { exact: string[]; merged: string[]; rendered: string[] };
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
