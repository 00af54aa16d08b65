/**
 * `@huggingface/jinja`'s AST read structurally, and the checks jinja2 makes when it compiles a template.
 */
import { FILTERS } from './filters';
import { NOT_TEST_PREFIX, TEST_PREFIX, TUPLE_END } from './syntax';
import { TESTS } from './tests';
import { PyError } from './values';

// ---------------------------------------------------------------------------------------------------------------
// The library's AST, structurally (its node classes are not exported; `type` names the node).

export interface Tok {
  value: string;
}
/* eslint-disable @typescript-eslint/no-explicit-any -- AST nodes are read structurally by their `type` */
export type N = { type: string } & Record<string, any>;

// ---------------------------------------------------------------------------------------------------------------
// Compilation

/** Names that macro argument binding treats specially when the body reads them. */
export interface MacroRefs {
  varargs: boolean;
  kwargs: boolean;
  caller: boolean;
}

export function findRefs(body: N[]): MacroRefs {
  const refs: MacroRefs = { varargs: false, kwargs: false, caller: false };
  const seen = new Set<unknown>();
  const visit = (x: unknown): void => {
    if (!x || typeof x !== 'object' || seen.has(x)) return;
    seen.add(x);
    if (Array.isArray(x)) return x.forEach(visit);
    if (x instanceof Map) {
      for (const [k, v] of x) {
        visit(k);
        visit(v);
      }
      return;
    }
    const n = x as N;
    if (n.type === 'Identifier' && (n.value === 'varargs' || n.value === 'kwargs' || n.value === 'caller')) refs[n.value as keyof MacroRefs] = true;
    for (const v of Object.values(n)) visit(v);
  };
  visit(body);
  return refs;
}

/**
 * jinja2 resolves filters and tests when it compiles: an unknown one is a compile error, except inside an `if`
 * or a conditional expression (a "soft" frame), where it raises only when reached.
 */
export function checkNames(node: unknown, soft: boolean): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) checkNames(x, soft);
    return;
  }
  if (node instanceof Map) {
    for (const [k, v] of node) {
      checkNames(k, soft);
      checkNames(v, soft);
    }
    return;
  }
  const n = node as N;
  switch (n.type) {
    case 'If':
    case 'Ternary':
    case 'SelectExpression':
      for (const v of Object.values(n)) checkNames(v, true);
      return;
    case 'For':
      if (n.iterable.type === 'SelectExpression') {
        checkNames(n.iterable.lhs, soft);
        checkNames(n.iterable.test, false);
      } else checkNames(n.iterable, soft);
      checkNames(n.body, false);
      checkNames(n.defaultBlock, false);
      return;
    case 'Macro':
      checkNames(n.args, false);
      checkNames(n.body, false);
      return;
    case 'CallStatement':
      checkNames(n.call, soft);
      checkNames(n.callerArgs, false);
      checkNames(n.body, false);
      return;
    case 'Set':
      checkNames(n.assignee, soft);
      checkNames(n.value, soft);
      checkNames(n.body, false);
      return;
    case 'FilterStatement':
      checkFilter(n.filter, false);
      checkNames(n.body, false);
      return;
    case 'FilterExpression':
      checkFilter(n.filter, soft);
      checkNames(n.operand, soft);
      return;
    case 'TestExpression':
      if (!soft && !Object.hasOwn(TESTS, n.test.value)) throw new PyError('TemplateAssertionError', `No test named '${n.test.value}'.`);
      checkNames(n.operand, soft);
      return;
  }
  for (const v of Object.values(n)) checkNames(v, soft);
}

function checkFilter(f: N, soft: boolean): void {
  const name: string = f.type === 'Identifier' ? f.value : f.callee.value;
  const test = testOf(name);
  if (test) {
    if (!soft && !Object.hasOwn(TESTS, test.name)) throw new PyError('TemplateAssertionError', `No test named '${test.name}'.`);
  } else if (!soft && !Object.hasOwn(FILTERS, name)) throw new PyError('TemplateAssertionError', `No filter named '${name}'.`);
  if (f.type === 'CallExpression') checkNames(f.args, soft);
}

/** The test a rewritten filter name stands for (syntax.ts `rewriteTests`), or null for a real filter. */
export function testOf(name: string): { name: string; negate: boolean } | null {
  if (name.startsWith(NOT_TEST_PREFIX)) return { name: name.slice(NOT_TEST_PREFIX.length), negate: true };
  if (name.startsWith(TEST_PREFIX)) return { name: name.slice(TEST_PREFIX.length), negate: false };
  return null;
}

/** The elements of a tuple literal, without the placeholder of a trailing comma (syntax.ts `rewriteTuples`). */
export function tupleItems(n: N): N[] {
  return (n.value as N[]).filter((x) => !(x.type === 'Identifier' && x.value === TUPLE_END));
}
