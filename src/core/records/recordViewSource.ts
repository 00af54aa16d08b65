/** Where a row's turns and their fields lie inside its JSON line (jsonc-parser's syntax tree), for the hover and "reveal in source". */
import { type Node as JsonNode, parseTree } from 'jsonc-parser';
import type { Message } from '../types';
import type { TurnView } from './recordViewTypes';

/**
 * Source ranges of the normalized messages inside the line, from the jsonc-parser tree.
 * @param fieldSource a field the shape reads → the field of the line it came from (renamed by `eagle3prep.jsonc`).
 */
export function turnRanges(
  text: string,
  description: string | undefined,
  messages: readonly Message[],
  row: Record<string, unknown>,
  fieldSource: Record<string, string> = {},
): ([number, number] | undefined)[] {
  const out: ([number, number] | undefined)[] = messages.map(() => undefined);
  if (!description) return out;
  const root: JsonNode | undefined = parseTree(text);
  if (!root || root.type !== 'object') return out;
  const find = (name: string): JsonNode | undefined => root.children?.find((p) => p.children?.[0]?.value === name);
  // A field read from another one of the line (renamed by eagle3prep.jsonc) is that one, even when the line also has the name.
  const prop = (name: string): JsonNode | undefined => (Object.hasOwn(fieldSource, name) ? (find(fieldSource[name]) ?? find(name)) : find(name));
  const range = (n: JsonNode | undefined): [number, number] | undefined => (n ? [n.offset, n.offset + n.length] : undefined);
  const fields = [...description.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  const list = fields.length ? prop(fields[0])?.children?.[1] : undefined;
  if (list?.type === 'array') {
    const items = list.children ?? [];
    // A top-level system_prompt / system field prepended as message 0 (normalize.ts applySystemField).
    const shift = messages.length === items.length + 1 && messages[0]?.role === 'system' ? 1 : 0;
    if (shift) {
      const sys = ['system_prompt', 'system'].find((k) => typeof row[k] === 'string');
      out[0] = sys ? range(prop(sys)) : undefined;
    }
    items.forEach((item, i) => {
      if (i + shift < out.length) out[i + shift] = range(item);
    });
    return out;
  }
  // prompt(-response) rows: the user turn is the prompt field, the assistant turn the response field.
  const userField = fields[0] ? prop(fields[0]) : undefined;
  const respField = fields.length > 1 ? prop(fields[fields.length - 1]) : undefined;
  messages.forEach((m, i) => {
    if (m.role === 'user') out[i] = range(userField);
    else if (m.role === 'assistant') out[i] = range(respField);
    else if (m.role === 'system') {
      const sys = ['system_prompt', 'system'].find((k) => typeof row[k] === 'string');
      out[i] = sys ? range(prop(sys)) : undefined;
    }
  });
  return out;
}

/** The string value of a property node, or undefined. */
function stringValue(n: JsonNode | undefined): string | undefined {
  return n?.type === 'string' && typeof n.value === 'string' ? n.value : undefined;
}

/**
 * Where each field of a normalized turn lies in the JSON line: the property of the turn's source
 * object whose string value is (or holds) the field's text; tool calls: the first property holding
 * a list or object named like a tool-call field.
 */
export function fieldRanges(root: JsonNode | undefined, range: [number, number] | undefined, m: Message): TurnView['fields'] {
  if (!range || !root) return undefined;
  let node: JsonNode | undefined = root;
  // The node spanning exactly `range`.
  while (node && !(node.offset === range[0] && node.length === range[1] - range[0])) {
    node = node.children?.find((c) => c.offset <= range[0] && c.offset + c.length >= range[1]);
  }
  if (!node) return undefined;
  const out: NonNullable<TurnView['fields']> = [];
  const at = (n: JsonNode): [number, number] => [n.offset, n.offset + n.length];
  if (node.type === 'string') {
    // A prompt / response field: the turn is the field.
    out.push({ field: 'content', range: at(node) });
    return out;
  }
  const props = node.type === 'object' ? (node.children ?? []).map((p) => ({ key: String(p.children?.[0]?.value ?? ''), value: p.children?.[1] })) : [];
  const find = (want: string | null | undefined): JsonNode | undefined => {
    if (!want) return undefined;
    const exact = props.find((p) => stringValue(p.value) === want)?.value;
    return exact ?? props.find((p) => (stringValue(p.value) ?? '').includes(want))?.value;
  };
  const c = find(m.content);
  if (c) out.push({ field: 'content', range: at(c) });
  const r = find(m.reasoning_content);
  if (r) out.push({ field: 'reasoning_content', range: at(r) });
  if (m.tool_calls?.length) {
    const t = props.find(
      (p) => /^(tool_calls|function_call|functionCall|tool_use|calls|actions?)$/i.test(p.key) && p.value && p.value.type !== 'string',
    )?.value;
    if (t) out.push({ field: 'tool_calls', range: at(t) });
  }
  return out;
}
