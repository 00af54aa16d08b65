/**
 * What a chat template is given and how it writes reasoning, decided once per
 * template by rendering small probe conversations — never by the template's or
 * the model's name (docs/loss-mask-rules.md "What the template is
 * given", case 2b, "Reasoning the template drops from its own turn").
 *
 * Every decision keeps its evidence (a short, human-readable fact taken from the
 * probe renders) so `check-template` can show why it was made.
 */
import type { Message } from '../types';

/** Renders probe messages without the generation prompt (`gen` false) or with it; throws when the template raises. */
export type ProbeRender = (messages: Message[], gen: boolean) => string;

/** A reasoning block's wrapper as the template writes it around the reasoning text. */
export interface ReasoningWrapper {
  /** Text right before the reasoning: the opening tag and the whitespace between it and the reasoning (Qwen3 `<think>\n`, Kimi-K2 `<think>`). */
  open: string;
  /** Text right after the reasoning: the whitespace before the closing tag, the tag, and the whitespace after it (Qwen3 `\n</think>\n\n`, Kimi-K2 `</think>`). */
  close: string;
  /** Whether the template strips newlines at the ends of the reasoning text (Qwen3 `reasoning_content.strip('\n')`). */
  trimsNewlines: boolean;
}

/** The decisions, each with its evidence. Plain JSON data. */
export interface TemplateProbes {
  /** An assistant turn with tool calls and no text gets `null` (the template renders the calls only then: DeepSeek-V3) or `""`. */
  nullContent: { form: 'null' | 'empty'; evidence: string };
  /**
   * Tool-call arguments reach the template as objects (`object`, as vLLM and SGLang pass them) or, when the
   * template cannot render an object (it raises, or shows a language-level form such as Python's `{'q': 'x'}`),
   * as JSON strings written as Python's `json.dumps(obj, ensure_ascii=False)` (`string`).
   */
  toolArguments: {
    form: 'object' | 'string';
    /** With `object`: the template also writes a string `arguments` verbatim (an `is string` branch): such strings are re-dumped, not parsed (numbers stay as written). */
    verbatimStrings: boolean;
    evidence: string;
  };
  /** Whether the template renders `reasoning_content` anywhere (a final answer and a tool-call turn, each with reasoning, every prefix rendered). */
  reasoning: { rendered: boolean; wrapper: ReasoningWrapper | null; evidence: string };
  /** The generation prompt of a one-user-turn conversation and what it pre-fills beyond the assistant header. */
  generationPrompt: {
    /** `R([user], gen=True)` minus `R([user])`; null when it could not be rendered. */
    text: string | null;
    /** The header the template writes before an assistant turn in the history; null when it could not be found. */
    header: string | null;
    /** The part of `text` after its common prefix with `header` (`<think>\n`, `<think>\n\n</think>\n\n`); null when none. */
    prefill: string | null;
    /** The prefill ends inside an open reasoning block (`<think>` and newlines): the model writes its reasoning first. */
    opensReasoning: boolean;
    /** The prefill closes a reasoning block with nothing in it (thinking is off): the model answers without reasoning. */
    thinkingOff: boolean;
    evidence: string;
  };
}

const NAME = 'probe_tool_name_7f3a';
/** A tool-call id of 9 alphanumeric characters (Mistral's templates refuse others). */
const PROBE_ID = 'pr0be7f3a';
const VALUE = 'x7f3a';
const REASON_CALL = 'Probe reasoning before the call 7f3a.';
const REASON_FINAL = 'Probe reasoning before the answer 7f3a.';
/** Reasoning tags assumed when the template shows none of its own (spec case 2b: "`<think>` and optional newlines"). */
export const DEFAULT_REASONING_TAGS = { open: '<think>', close: '</think>' } as const;
/** The closing form written after restored reasoning when the template shows none of its own (spec case 2b). */
export const DEFAULT_REASONING_CLOSE = '\n</think>\n\n';

const q = (s: string) => JSON.stringify(s);
const short = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n)}…` : s);

function tryRender(render: ProbeRender, messages: Message[], gen = false): { text?: string; error?: string } {
  try {
    return { text: render(messages, gen) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const call = (args: string | Record<string, unknown>) => ({ id: PROBE_ID, type: 'function' as const, function: { name: NAME, arguments: args } });

/** Spec "No text": render a tool-call turn with `content: null` and with `""`; `null` only when the call shows with `null` and not with `""`. */
function probeNullContent(render: ProbeRender): TemplateProbes['nullContent'] {
  const turn = (content: string | null): Message[] => [
    { role: 'user', content: 'probe' },
    { role: 'assistant', content, tool_calls: [call('{"q": "x"}')] },
  ];
  const withNull = tryRender(render, turn(null));
  const withEmpty = tryRender(render, turn(''));
  // The call is rendered when its name or its id shows (Kimi-K2-Thinking writes the id, not the name).
  const shows = (r: { text?: string }) => r.text !== undefined && (r.text.includes(NAME) || r.text.includes(PROBE_ID));
  if (shows(withNull) && !shows(withEmpty))
    return {
      form: 'null',
      evidence: `the tool call is rendered with content null and not with "" (${withEmpty.error ? `"" raises: ${short(withEmpty.error)}` : '"" drops it'})`,
    };
  return {
    form: 'empty',
    evidence: shows(withEmpty) ? 'the tool call is rendered with content ""' : 'the tool call is rendered neither way: "" is given (no text is "")',
  };
}

/** A language-level form of the probe object `{q: "x7f3a"}` instead of JSON or its keys and values: Python's repr, or a JS object's string. */
const LANGUAGE_FORM = /\{\s*'q'\s*:\s*'x7f3a'\s*\}|\[object (?:Object|Map)\]/;

/** Spec "Tool-call arguments": objects unless the template cannot render one. */
function probeArguments(render: ProbeRender, content: string | null): TemplateProbes['toolArguments'] {
  const turn = (args: string | Record<string, unknown>): Message[] => [
    { role: 'user', content: 'probe' },
    { role: 'assistant', content, tool_calls: [call(args)] },
  ];
  const obj = tryRender(render, turn({ q: VALUE }));
  if (obj.error !== undefined) return { form: 'string', verbatimStrings: false, evidence: `an object raises: ${short(obj.error)}` };
  const text = obj.text!;
  const lang = LANGUAGE_FORM.exec(text);
  if (lang) return { form: 'string', verbatimStrings: false, evidence: `an object shows as ${q(lang[0])}, not as JSON or keys and values` };
  const json = /\{\s*"q"\s*:\s*"x7f3a"\s*\}/.exec(text);
  let evidence: string;
  if (json) evidence = `an object shows as JSON ${q(json[0])}`;
  else if (text.includes(VALUE)) evidence = 'an object shows as its keys and values';
  else if (text.includes(NAME) || text.includes(PROBE_ID)) evidence = 'the arguments are not rendered (the call is): objects, as servers pass them';
  else evidence = 'tool calls are not rendered: objects, as servers pass them';
  // Templates with an `is string` branch write a string verbatim (Qwen3, Kimi-K2): unusual spacing survives. Such a
  // template gets the string re-dumped only when it writes the object's Python json.dumps string exactly as it writes
  // the object itself (Gemma-4 writes a string in braces, an object in its own form: it gets objects).
  const spaced = '{"q":  "x7f3a"}';
  const str = tryRender(render, turn(spaced));
  const dumped = tryRender(render, turn('{"q": "x7f3a"}'));
  // And with a non-ASCII value: a template that writes objects with `tojson(ensure_ascii=True)` (Reka-Edge) writes
  // `"\u00e9"` for the object a server passes, where the re-dumped string would keep `"é"`.
  const wide = tryRender(render, turn({ q: `${VALUE}\u00e9` }));
  const wideDumped = tryRender(render, turn(`{"q": "${VALUE}\u00e9"}`));
  const verbatimStrings =
    str.text !== undefined && str.text.includes(spaced) && dumped.text === text && wide.text !== undefined && wideDumped.text === wide.text;
  if (verbatimStrings) evidence += '; a JSON string is written verbatim (re-dumped as Python json.dumps writes it)';
  return { form: 'object', verbatimStrings, evidence };
}

/** Tag-like text: `<…>`, `[…]` (a control token spelled as a tag). */
const TAG = String.raw`(?:<[^<>\n]{1,64}>|\[[^[\]\n]{1,64}\])`;
/** The opener: the last tag before the reasoning, any word on its line after it (Gemma-4's `<|channel>thought`), then whitespace. */
const OPEN_AT_END = new RegExp(`${TAG}[^<>[\\]\\n]{0,32}[ \\t\\n]*$`);
const CLOSE_AT_START = new RegExp(`^[ \\t\\n]*${TAG}[ \\t\\n]*`);

/** Whether the tool-call turn is rendered with its reasoning in a one-call prefix, the final answer's in the whole conversation, … */
function probeReasoning(render: ProbeRender, content: string | null, args: string | Record<string, unknown>): TemplateProbes['reasoning'] {
  const convo = (rCall: string, rFinal: string): Message[] => [
    { role: 'user', content: 'probe question' },
    { role: 'assistant', content, reasoning_content: rCall, tool_calls: [call(args)] },
    { role: 'tool', tool_call_id: PROBE_ID, content: 'probe result' },
    { role: 'assistant', content: 'probe answer', reasoning_content: rFinal },
  ];
  const finalOnly = (r: string): Message[] => [
    { role: 'user', content: 'probe question' },
    { role: 'assistant', content: 'probe answer', reasoning_content: r },
  ];
  // The answer alone, the whole conversation, the tool-call turn as the last message (templates that keep reasoning only after the last answer).
  const cases: { what: string; messages: (rc: string, rf: string) => Message[]; reasoning: 'call' | 'final' }[] = [
    { what: 'a final answer', messages: (_c, f) => finalOnly(f), reasoning: 'final' },
    { what: 'a final answer after a tool call', messages: convo, reasoning: 'final' },
    { what: 'a tool-call turn after a tool call', messages: convo, reasoning: 'call' },
    { what: 'a tool-call turn as the last message', messages: (c, f) => convo(c, f).slice(0, 2), reasoning: 'call' },
  ];
  const errors: string[] = [];
  for (const c of cases) {
    const r = tryRender(render, c.messages(REASON_CALL, REASON_FINAL));
    if (r.error !== undefined) {
      errors.push(r.error);
      continue;
    }
    const reasoning = c.reasoning === 'call' ? REASON_CALL : REASON_FINAL;
    const at = r.text!.indexOf(reasoning);
    if (at < 0) continue;
    const before = r.text!.slice(0, at);
    const after = r.text!.slice(at + reasoning.length);
    const open = OPEN_AT_END.exec(before)?.[0];
    const close = CLOSE_AT_START.exec(after)?.[0];
    let wrapper: ReasoningWrapper | null = null;
    if (open && close) {
      // The same render with the reasoning between newlines: unchanged when the template strips them.
      const nl = tryRender(
        render,
        c.messages(c.reasoning === 'call' ? `\n${REASON_CALL}\n` : REASON_CALL, c.reasoning === 'final' ? `\n${REASON_FINAL}\n` : REASON_FINAL),
      );
      wrapper = { open, close, trimsNewlines: nl.text === r.text };
    }
    return {
      rendered: true,
      wrapper,
      evidence: `reasoning rendered in ${c.what}${wrapper ? ` as ${q(wrapper.open)} + reasoning + ${q(wrapper.close)}` : ' (no tag around it)'}`,
    };
  }
  return {
    rendered: false,
    wrapper: null,
    evidence: `reasoning_content rendered in no probe (a final answer, a tool-call turn, every prefix)${errors.length ? `; ${errors.length} probe render(s) raised: ${short(errors[0])}` : ''}`,
  };
}

/** The reasoning tags of a template: its own (from the wrapper), else {@link DEFAULT_REASONING_TAGS}. */
export function reasoningTags(wrapper: ReasoningWrapper | null): { open: string; close: string } {
  return wrapper ? { open: wrapper.open.trim(), close: wrapper.close.trim() } : DEFAULT_REASONING_TAGS;
}

/** Whether `text` ends inside an open reasoning block: its last reasoning tag is the opener, followed by nothing but newlines/spaces. */
export function endsWithReasoningOpener(text: string, tags: { open: string; close: string }): boolean {
  const t = text.replace(/[ \t\n]+$/, '');
  return t.endsWith(tags.open);
}

/** Whether `text` closes a reasoning block with nothing in it after its last opener (`<think>\n\n</think>`, DeepSeek-V3.1's lone `</think>`). */
export function closesEmptyReasoning(text: string, tags: { open: string; close: string }): boolean {
  const c = text.lastIndexOf(tags.close);
  if (c < 0) return false;
  const o = text.lastIndexOf(tags.open, c);
  return o < 0 || text.slice(o + tags.open.length, c).trim() === '';
}

/** Spec "One target" `G`, and case 2b's pre-filled text. */
function probeGenerationPrompt(render: ProbeRender, tags: { open: string; close: string }): TemplateProbes['generationPrompt'] {
  const user: Message = { role: 'user', content: 'Probe question one.' };
  const out: TemplateProbes['generationPrompt'] = { text: null, header: null, prefill: null, opensReasoning: false, thinkingOff: false, evidence: '' };
  const H = tryRender(render, [user]);
  const P = tryRender(render, [user], true);
  if (H.text === undefined || P.text === undefined) {
    out.evidence = `the generation prompt could not be rendered: ${short(H.error ?? P.error ?? '')}`;
    return out;
  }
  let k = 0;
  while (k < H.text.length && H.text[k] === P.text[k]) k++;
  out.text = P.text.slice(P.text.startsWith(H.text) ? H.text.length : k);
  const marker = 'Probe answer one.';
  const F = tryRender(render, [user, { role: 'assistant', content: marker }, { role: 'user', content: 'Probe question two.' }]);
  if (F.text !== undefined) {
    let from = 0;
    while (from < H.text.length && H.text[from] === F.text[from]) from++;
    const at = F.text.indexOf(marker, from);
    if (at >= 0) out.header = F.text.slice(from, at);
  }
  if (out.header !== null) {
    let c = 0;
    while (c < out.text.length && c < out.header.length && out.text[c] === out.header[c]) c++;
    const prefill = out.text.slice(c);
    out.prefill = prefill.length ? prefill : null;
  }
  out.opensReasoning = endsWithReasoningOpener(out.text, tags);
  out.thinkingOff = !out.opensReasoning && closesEmptyReasoning(out.text, tags);
  out.evidence =
    out.prefill === null ? 'the generation prompt is the assistant header alone' : `the generation prompt pre-fills ${q(out.prefill)} beyond the header`;
  if (out.opensReasoning) out.evidence += `; it ends in an open ${q(tags.open)} block (the model writes its reasoning first)`;
  if (out.thinkingOff) out.evidence += `; it closes an empty ${q(tags.open)} block (thinking is off: the model answers without reasoning)`;
  return out;
}

/**
 * Runs every probe. Never throws: a probe on which the template raises decides
 * the safe way and says so in its evidence.
 * @param render renders probe messages as given (no adaptation)
 */
export function probeTemplate(render: ProbeRender): TemplateProbes {
  const nullContent = probeNullContent(render);
  const content = nullContent.form === 'null' ? null : '';
  const toolArguments = probeArguments(render, content);
  const reasoning = probeReasoning(render, content, toolArguments.form === 'object' ? { q: 'x' } : '{"q": "x"}');
  const generationPrompt = probeGenerationPrompt(render, reasoningTags(reasoning.wrapper));
  return { nullContent, toolArguments, reasoning, generationPrompt };
}
